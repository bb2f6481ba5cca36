/* Unit tests of the template engine's API: values, fmt, parse and execute. */
#include <math.h>
#include <string.h>

#include "helm/template/helm_funcs.h"
#include "helm/template/tpl.h"
#include "t.h"

static char *render(const char *text, const char *json, tpl_missingkey_t mk, buf_t *err) {
  static buf_t out;
  buf_reset(&out);
  buf_reset(err);
  tpl_funcs_t *f = tpl_funcs_new();
  tpl_helm_funcs_add(f);
  tpl_set_t *s = tpl_set_new(f);
  tpl_arena_t *a = tpl_arena_new(0);
  tpl_value_t data;
  int rc = tpl_value_from_json(a, json, strlen(json), &data, err);
  if (!rc) rc = tpl_set_parse(s, "t", text, strlen(text), err);
  tpl_exec_opts_t o = {.missingkey = mk};
  tpl_helm_state_t hs = {0};
  o.udata = &hs;
  if (!rc) rc = tpl_set_execute(s, "t", data, a, &o, &out, err);
  tpl_arena_free(a);
  tpl_set_free(s);
  tpl_funcs_free(f);
  if (rc) return NULL;
  return out.data ? out.data : "";
}

static void test_float_format(void) {
  buf_t b = BUF_INIT;
  tpl_fmt_float(&b, 1000000, 'g', -1);
  CHECK_EQ_STR(b.data, "1e+06");
  buf_reset(&b);
  tpl_fmt_float(&b, 0.00001, 'g', -1);
  CHECK_EQ_STR(b.data, "1e-05");
  buf_reset(&b);
  tpl_fmt_float(&b, 100000, 'g', -1);
  CHECK_EQ_STR(b.data, "100000");
  buf_reset(&b);
  tpl_fmt_float(&b, 0.1, 'g', -1);
  CHECK_EQ_STR(b.data, "0.1");
  buf_reset(&b);
  tpl_fmt_float(&b, 3.14159, 'f', 2);
  CHECK_EQ_STR(b.data, "3.14");
  buf_reset(&b);
  tpl_fmt_float(&b, -INFINITY, 'g', -1);
  CHECK_EQ_STR(b.data, "-Inf");
  buf_free(&b);
}

static void test_sprintf(void) {
  buf_t b = BUF_INIT;
  tpl_value_t args[2] = {tpl_value_str("x"), tpl_value_int(3)};
  tpl_fmt_sprintf(&b, "%d|%5s|%!", 9, args, 2);
  CHECK_EQ_STR(b.data, "%!d(string=x)|%!s(int=    3)|%!!(MISSING)");
  buf_reset(&b);
  tpl_fmt_sprintf(&b, "%d %d", 5, args + 1, 1);
  CHECK_EQ_STR(b.data, "3 %!d(MISSING)");
  buf_free(&b);
}

static void test_render(void) {
  buf_t err = BUF_INIT;
  CHECK_EQ_STR(render("{{ .a }} {{ .b }} {{ .c }}", "{\"a\":1000000,\"b\":[1,\"x\",null],\"c\":{\"k\":true}}",
                      TPL_MISSINGKEY_ZERO, &err),
               "1e+06 [1 x <nil>] map[k:true]");
  CHECK_EQ_STR(render("{{ .missing }}", "{}", TPL_MISSINGKEY_ZERO, &err), "<no value>");
  CHECK(render("{{ .a.b }}", "{}", TPL_MISSINGKEY_ZERO, &err) == NULL);
  CHECK_EQ_STR(err.data, "template: t:1:5: executing \"t\" at <.a.b>: nil pointer evaluating interface {}.b");
  CHECK(render("{{ if }}", "{}", TPL_MISSINGKEY_ZERO, &err) == NULL);
  CHECK_EQ_STR(err.data, "template: t:1: missing value for if");
  CHECK(render("{{ .x }}", "{}", TPL_MISSINGKEY_ERROR, &err) == NULL);
  CHECK_EQ_STR(err.data, "template: t:1:3: executing \"t\" at <.x>: map has no entry for key \"x\"");
  CHECK_EQ_STR(render("{{ define \"h\" }}[{{ . }}]{{ end }}{{ include \"h\" 2 | printf \"%q\" }}", "{}", TPL_MISSINGKEY_ZERO,
                      &err),
               "\"[2]\"");
  CHECK_EQ_STR(render("{{ range $i, $e := .l }}{{ if eq $e 2.0 }}{{ continue }}{{ end }}{{ $i }}{{ end }}",
                      "{\"l\":[1,2,3]}", TPL_MISSINGKEY_ZERO, &err),
               "02");
  CHECK(render("{{ eq 1 1.0 }}", "{}", TPL_MISSINGKEY_ZERO, &err) == NULL);
  CHECK(strstr(err.data, "incompatible types for comparison: int and float64") != NULL);
  buf_free(&err);
}

static void test_limits(void) {
  buf_t err = BUF_INIT;
  /* Unbounded template recursion ends with an error, not a crash. */
  CHECK(render("{{ define \"r\" }}{{ template \"r\" . }}{{ end }}{{ template \"r\" . }}", "{}", TPL_MISSINGKEY_ZERO, &err) ==
        NULL);
  /* Runaway include recursion hits Helm's limit of 1000 per name (or the stack budget). */
  CHECK(render("{{ define \"r\" }}{{ include \"r\" . }}{{ end }}{{ include \"r\" . }}", "{}", TPL_MISSINGKEY_ZERO, &err) ==
        NULL);
  buf_free(&err);
}

int main(void) {
  test_float_format();
  test_sprintf();
  test_render();
  test_limits();
  return t_done();
}
