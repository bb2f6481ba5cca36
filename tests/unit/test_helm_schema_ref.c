/* $ref to other documents in values.schema.json (helm/values/schema.c, values.c): file:// URLs
 * are the chart's own files, http(s) go to the loader given; relative references resolve
 * against the $id in effect; each document loads once, is checked against its metaschema, and
 * a failure says which URL and why in Helm's form. The texts Helm prints for the same schemas
 * (with the documents where Helm finds them) are in tests/charts/schema-ref and
 * tests/e2e/test_schema_ref.sh; these cases are the ones Helm cannot show (chart files,
 * counting loads, hostile loaders). */
#include <stdlib.h>
#include <string.h>

#include "helm/chart/chart.h"
#include "helm/values/schema.h"
#include "helm/values/values.h"
#include "t.h"

/* A loader serving fixed documents by URL, counting requests. */
typedef struct {
  const char *const *urls, *const *docs;
  int n, calls;
  buf_t asked; /* every URL asked for, one a line */
} fake_t;

static int fake_load(void *ctx, const char *url, buf_t *doc, buf_t *err) {
  fake_t *f = ctx;
  f->calls++;
  buf_printf(&f->asked, "%s\n", url);
  for (int i = 0; i < f->n; i++)
    if (!strcmp(f->urls[i], url)) return buf_puts(doc, f->docs[i]) ? SCHEMA_ENOMEM : 0;
  buf_printf(err, "HTTP request to %s returned status 404 (Not Found)", url);
  return SCHEMA_EINVAL;
}

static char *run_with(const char *schema, const char *values, fake_t *f, int *rc) {
  cJSON *v = cJSON_Parse(values);
  buf_t out = BUF_INIT;
  schema_loader_t ld = {fake_load, f, NULL};
  *rc = schema_validate_with(schema, strlen(schema), v, f ? &ld : NULL, &out);
  cJSON_Delete(v);
  buf_putc(&out, 0);
  return out.data;
}

/* Validates values against a chart of the given files (name, text pairs; NULL-terminated). */
static char *run_chart(const char *const *files, const char *values, int *rc) {
  chart_file_t fs[8];
  size_t n = 0;
  for (; files[2 * n]; n++) fs[n] = (chart_file_t){(char *)files[2 * n], (char *)files[2 * n + 1], strlen(files[2 * n + 1])};
  chart_t *c = NULL;
  chart_error_t ce;
  buf_t out = BUF_INIT;
  *rc = chart_load_files(fs, n, NULL, &c, &ce);
  if (*rc) {
    buf_printf(&out, "chart: %s", ce.message);
  } else {
    cJSON *v = cJSON_Parse(values);
    *rc = values_validate_schema_with(c, v, NULL, &out);
    cJSON_Delete(v);
    chart_free(c);
  }
  buf_putc(&out, 0);
  return out.data;
}

int main(void) {
  int rc;
  char *m;
  /* the chart's own files: found, found through a relative path and an $id base, missing */
  static const char *const ch[] = {
      "Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n",
      "values.schema.json", "{\"properties\":{\"a\":{\"$ref\":\"defs/d.json#/$defs/s\"},\"b\":{\"$ref\":\"file:///defs/d.json\"}}}",
      "defs/d.json", "{\"$defs\":{\"s\":{\"type\":\"string\",\"minLength\":3}},\"$ref\":\"other.json\"}",
      "defs/other.json", "{\"type\":\"object\"}",
      NULL};
  m = run_chart(ch, "{\"a\":\"x\",\"b\":{}}", &rc);
  CHECK_EQ_INT(rc, VALUES_EINVAL);
  CHECK_EQ_STR(m, "c:\n- at '/a': minLength: got 1, want 3\n");
  free(m);
  m = run_chart(ch, "{\"a\":\"xyz\",\"b\":1}", &rc);
  CHECK_EQ_STR(m, "c:\n- at '/b': got number, want object\n");
  free(m);
  m = run_chart(ch, "{\"a\":\"xyz\",\"b\":{}}", &rc);
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_STR(m, "");
  free(m);
  /* never the host's files: /etc/hostname is not a chart file */
  static const char *const host[] = {"Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n", "values.schema.json",
                                     "{\"$ref\":\"file:///etc/hostname\"}", NULL};
  m = run_chart(host, "{}", &rc);
  CHECK_EQ_STR(m, "c:\nfailing loading \"file:///etc/hostname\": open /etc/hostname: no such file or directory");
  free(m);

  /* http: relative to the $id, each document once however often referred to, cycles between documents */
  static const char *const urls[] = {"https://s.example/a/defs.json", "https://s.example/b/more.json",
                                     "https://s.example/bad.json", "https://s.example/meta-bad.json"};
  static const char *const docs[] = {
      "{\"$defs\":{\"port\":{\"type\":\"integer\",\"maximum\":65535},\"more\":{\"$ref\":\"../b/more.json\"}}}",
      "{\"type\":\"string\",\"pattern\":\"^x\",\"$defs\":{\"back\":{\"$ref\":\"../a/defs.json#/$defs/port\"}},"
      "\"not\":{\"$ref\":\"#/$defs/back\"}}",
      "{\"type\": tru}",
      "{\"type\":\"nothing\"}"};
  fake_t f = {urls, docs, 4, 0, BUF_INIT};
  const char *sch = "{\"$id\":\"https://s.example/a/root.json\",\"properties\":{\"p\":{\"$ref\":\"defs.json#/$defs/port\"},"
                    "\"q\":{\"$ref\":\"defs.json#/$defs/more\"},\"r\":{\"$ref\":\"/a/defs.json#/$defs/port\"}}}";
  m = run_with(sch, "{\"p\":70000,\"q\":\"y\",\"r\":1}", &f, &rc);
  CHECK_EQ_INT(rc, SCHEMA_EINVAL);
  CHECK_EQ_STR(m, "- at '/p': maximum: got 70,000, want 65,535\n- at '/q': 'y' does not match pattern '^x'\n");
  CHECK_EQ_INT(f.calls, 2);
  CHECK_EQ_STR(f.asked.data, "https://s.example/a/defs.json\nhttps://s.example/b/more.json\n");
  free(m);
  /* a document the loader cannot give, bad JSON, a document its metaschema refuses, a pointer not in it */
  f.calls = 0;
  buf_reset(&f.asked);
  m = run_with("{\"$ref\":\"https://s.example/none.json\"}", "{}", &f, &rc);
  CHECK_EQ_STR(m, "failing loading \"https://s.example/none.json\": HTTP request to https://s.example/none.json returned "
                  "status 404 (Not Found)");
  free(m);
  m = run_with("{\"$ref\":\"https://s.example/bad.json\"}", "{}", &f, &rc);
  CHECK_EQ_STR(m, "failing loading \"https://s.example/bad.json\": invalid character '}' in literal true (expecting 'e')");
  free(m);
  m = run_with("{\"$ref\":\"https://s.example/meta-bad.json\"}", "{}", &f, &rc);
  CHECK(strncmp(m, "\"https://s.example/meta-bad.json#\" is not valid against metaschema: ", 68) == 0);
  free(m);
  m = run_with("{\"$ref\":\"https://s.example/a/defs.json#/$defs/nope\"}", "{}", &f, &rc);
  CHECK_EQ_STR(m, "json-pointer in \"https://s.example/a/defs.json#/$defs/nope\" not found");
  free(m);
  /* a chain of documents longer than the limit stops */
  buf_t chain = BUF_INIT;
  static char *curls[SCHEMA_MAX_DOCS + 2], *cdocs[SCHEMA_MAX_DOCS + 2];
  for (int i = 0; i < SCHEMA_MAX_DOCS + 2; i++) {
    buf_reset(&chain);
    buf_printf(&chain, "https://s.example/c%d.json", i);
    curls[i] = strdup(chain.data);
    buf_reset(&chain);
    buf_printf(&chain, "{\"$ref\":\"c%d.json\"}", i + 1);
    cdocs[i] = strdup(chain.data);
  }
  buf_free(&chain);
  fake_t g = {(const char *const *)curls, (const char *const *)cdocs, SCHEMA_MAX_DOCS + 2, 0, BUF_INIT};
  m = run_with("{\"$ref\":\"https://s.example/c0.json\"}", "{}", &g, &rc);
  CHECK_EQ_INT(rc, SCHEMA_EINVAL);
  CHECK(strstr(m, "more than 64 documents referenced") != NULL);
  CHECK_EQ_INT(g.calls, SCHEMA_MAX_DOCS);
  free(m);
  for (int i = 0; i < SCHEMA_MAX_DOCS + 2; i++) free(curls[i]), free(cdocs[i]);
  buf_free(&f.asked);
  buf_free(&g.asked);
  return t_done();
}
