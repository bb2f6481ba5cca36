/* Per-render budgets (render_limits_t): each bomb fails alone, promptly, with a message naming the
 * limit and where it was hit; charts within the budgets render as before. */
#include <stdlib.h>
#include <string.h>

#include "helm/chart/chart.h"
#include "helm/render/render.h"
#include "helm/values/values.h"
#include "t.h"

/* Renders a chart "c" with one template (templates/x.yaml) and the given limits: the render's
 * return code, and its error text or output in *msg (caller frees). */
static int render_one(const char *text, render_limits_t lim, char **msg) {
  chart_file_t files[] = {
      {"Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n", 0},
      {"templates/x.yaml", (char *)text, 0},
  };
  for (size_t i = 0; i < 2; i++) files[i].len = strlen(files[i].data);
  chart_t *c = NULL;
  chart_error_t cerr;
  *msg = NULL;
  if (chart_load_files(files, 2, NULL, &c, &cerr)) {
    *msg = strdup(cerr.message);
    return -1;
  }
  render_opts_t o = {.limits = lim};
  render_output_t out;
  buf_t err = BUF_INIT;
  int rc = render_template(c, NULL, &o, &out, &err);
  if (rc) {
    *msg = strdup(err.data ? err.data : "");
  } else {
    buf_t all = BUF_INIT;
    for (size_t i = 0; i < out.nmanifests; i++) buf_puts(&all, out.manifests[i].content);
    *msg = buf_steal(&all);
    render_output_free(&out);
  }
  buf_free(&err);
  chart_free(c);
  return rc;
}

static void expect_limit(const char *text, render_limits_t lim, const char *want) {
  char *msg;
  int rc = render_one(text, lim, &msg);
  CHECK_EQ_INT(rc, RENDER_ELIMIT);
  if (!msg || strcmp(msg, want)) fprintf(stderr, "for %.80s\n", text);
  CHECK_EQ_STR(msg, want);
  free(msg);
}

#define MiB ((size_t)1 << 20)

int main(void) {
  const render_limits_t time200 = {.max_memory = 1024 * MiB, .max_time_ms = 200};
  const render_limits_t mem16 = {.max_memory = 16 * MiB};
  static const char time_msg[] = "render budget exceeded: time longer than 200 ms (limit --max-render-time) at c/templates/x.yaml:";
  char want[256];

  /* nested until: time, and output when it writes */
  snprintf(want, sizeof want, "%s2", time_msg);
  expect_limit("a: 1\n{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}\n", time200, want);
  expect_limit("a: |\n  {{ range until 100000 }}{{ range until 100000 }}x{{ end }}{{ end }}\n",
               (render_limits_t){.max_output = MiB},
               "render budget exceeded: output larger than 1 MiB (limit --max-render-output) at c/templates/x.yaml:2");
  /* the output limit counts all templates together: 600 KiB here, twice over in a second file is tested by
   * the same counter; one file above it suffices */

  /* repeat: an empty text costs nothing (Go's strings.Repeat), so only time stops a loop of them */
  {
    char *msg;
    CHECK_EQ_INT(render_one("a: '{{ repeat 1000000000000000000 \"\" }}'\n", mem16, &msg), 0);
    CHECK_EQ_STR(msg, "a: ''\n");
    free(msg);
  }
  snprintf(want, sizeof want, "%s1", time_msg);
  expect_limit("{{ range until 10000 }}{{ range until 10000 }}{{ repeat 1000000000000 \"\" }}{{ end }}{{ end }}\n", time200, want);
  expect_limit("a: {{ repeat 1000000000 \"ab\" | len }}\n", mem16,
               "render budget exceeded: memory larger than 16 MiB (limit --max-render-memory) at c/templates/x.yaml:1");

  /* include and tpl recursion that doubles a text at every level */
  expect_limit("{{- define \"x\" }}{{ if lt (int .) 60 }}{{ $s := include \"x\" (add1 .) }}{{ $s }}{{ $s }}"
               "{{ else }}y{{ end }}{{ end -}}\n"
               "a: {{ include \"x\" 0 | len }}\n",
               mem16, "render budget exceeded: memory larger than 16 MiB (limit --max-render-memory) at c/templates/x.yaml:1");
  expect_limit("{{- define \"x\" }}{{ if lt (int .) 60 }}{{ $s := tpl \"{{ include \\\"x\\\" . }}\" (add1 .) }}{{ $s }}{{ $s }}"
               "{{ else }}y{{ end }}{{ end -}}\n"
               "a: {{ include \"x\" 0 | len }}\n",
               mem16, "render budget exceeded: memory larger than 16 MiB (limit --max-render-memory) at c/templates/x.yaml:1");

  /* catastrophic regular expressions, each call within PCRE2's match limit, many calls */
  snprintf(want, sizeof want, "%s3", time_msg);
  expect_limit("a: 1\nb: 2\n{{ range until 1000000 }}{{ regexMatch \"(a|a)*b\" \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaac\" }}{{ end }}\n",
               time200, want);

  /* toYaml / toJson of a structure that shares its maps: 2^40 nodes */
  expect_limit("{{ $d := dict }}{{ range until 40 }}{{ $d = dict \"a\" $d \"b\" $d }}{{ end }}\na: {{ toYaml $d | len }}\n",
               mem16, "render budget exceeded: memory larger than 16 MiB (limit --max-render-memory) at c/templates/x.yaml:2");
  snprintf(want, sizeof want, "%s2", time_msg);
  expect_limit("{{ $d := dict }}{{ range until 40 }}{{ $d = dict \"a\" $d \"b\" $d }}{{ end }}\na: {{ toJson $d | len }}\n",
               time200, want);

  /* printing a structure that shares its lists: the output, or (print/printf) the memory budget */
  expect_limit("{{ $d := list }}{{ range until 40 }}{{ $d = list $d $d }}{{ end }}\na: {{ $d }}\n",
               (render_limits_t){.max_output = MiB},
               "render budget exceeded: output larger than 1 MiB (limit --max-render-output) at c/templates/x.yaml:2");
  expect_limit("{{ $d := list }}{{ range until 40 }}{{ $d = list $d $d }}{{ end }}\na: {{ printf \"%v\" $d | len }}\n",
               mem16, "render budget exceeded: memory larger than 16 MiB (limit --max-render-memory) at c/templates/x.yaml:2");

  /* big lists: the memory budget */
  expect_limit("a: {{ until 10000000 | len }}\n", mem16,
               "render budget exceeded: memory larger than 16 MiB (limit --max-render-memory) at c/templates/x.yaml:1");

  /* within the budgets nothing changes */
  {
    char *msg;
    CHECK_EQ_INT(render_one("a: {{ repeat 3 \"ab\" }}\nb: {{ until 3 | toJson }}\nc: {{ regexMatch \"^a+$\" \"aaa\" }}\n",
                            (render_limits_t){0}, &msg),
                 0);
    CHECK_EQ_STR(msg, "a: ababab\nb: [0,1,2]\nc: true\n");
    free(msg);
  }

  /* an alias bomb of long texts in a values file: few nodes, many bytes */
  {
    buf_t y = BUF_INIT;
    buf_puts(&y, "a: &a \"");
    for (int i = 0; i < 100000; i++) buf_putc(&y, 'x');
    buf_puts(&y, "\"\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
                 "d: [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n");
    cJSON *v = NULL;
    char msg[512] = "";
    CHECK(values_parse_yaml(y.data, y.len, &v, msg, sizeof msg) != 0);
    CHECK(strstr(msg, "document expands aliases to more than 67108864 bytes (an alias bomb?)") != NULL);
    if (!strstr(msg, "bytes")) fprintf(stderr, "alias bomb: %s\n", msg);
    cJSON_Delete(v);
    buf_free(&y);
  }

  /* defaults */
  render_limits_t d = render_limits_resolve(NULL);
  CHECK_EQ_INT(d.max_memory, 256 * MiB);
  CHECK_EQ_INT(d.max_output, 64 * MiB);
  CHECK_EQ_INT(d.max_time_ms, 30000);
  buf_t b = BUF_INIT;
  render_size_text(&b, 256 * MiB);
  CHECK_EQ_STR(b.data, "256 MiB");
  buf_free(&b);
  return t_done();
}
