/* Host values with Helm's named types, compared with the Go oracle: common.Values (.Values with
 * its methods AsMap/Encode/PathValue/Table/YAML, .Template), []byte (GetBytes), a
 * map[string][]byte (the shape of Helm's Files, for range/index), common.VersionSet (a named
 * []string with Has). The cases are tests/unit/test_template_obj.tcase; the expected results in
 * test_template_obj.jsonl come from the oracle (`--- dot helm`, see helmDot in
 * tests/oracle/template/main.go), and the data here mirrors helmDot. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helm/release/release.h"
#include "helm/template/helm_funcs.h"
#include "helm/template/sprig.h"
#include "helm/template/tpl.h"
#include "t.h"

/* common.VersionSet: a named []string with Has (as the render pipeline builds .Capabilities.APIVersions). */
static int vs_has(tpl_call_t *c, tpl_value_t *args, size_t n, tpl_value_t *out) {
  const tpl_list_t *l = tpl_call_self(c);
  bool has = false;
  for (size_t i = 0; l && i < l->len && !has; i++)
    has = l->items[i].u.s.n == args[0].u.s.n && !memcmp(l->items[i].u.s.p, args[0].u.s.p, args[0].u.s.n);
  *out = tpl_value_bool(has);
  return 0;
}
static const tpl_func_t vs_methods[] = {{"Has", "s", vs_has, NULL, "func(string) bool"}};
static const tpl_func_t *vs_method(void *self, const char *name) { return strcmp(name, "Has") ? NULL : &vs_methods[0]; }
static const tpl_type_t vs_type = {"common.VersionSet", NULL, vs_method, NULL};

/* common.KubeVersion / *common.KubeVersion / *common.Capabilities as host objects. Fields answer the
 * reserved names "%v", "%+v", "%#v" with Go's struct printing (see object_gofmt in fmt.c); the
 * render pipeline builds those texts from its data, here they are fixed (the oracle's helmDot). */
#define KV_V "{v1.20.0-gke.1 v1.20.0 1 20}"
#define KV_PLUS "{Version:v1.20.0-gke.1 normalizedVersion:v1.20.0 Major:1 Minor:20}"
#define KV_SHARP "common.KubeVersion{Version:\"v1.20.0-gke.1\", normalizedVersion:\"v1.20.0\", Major:\"1\", Minor:\"20\"}"
static int kv_field(void *self, const char *name, tpl_value_t *out) {
  const char *v = !strcmp(name, "Version") ? "v1.20.0-gke.1" : !strcmp(name, "Major") ? "1"
                  : !strcmp(name, "Minor") ? "20" : !strcmp(name, "%v") ? KV_V : !strcmp(name, "%+v") ? KV_PLUS
                  : !strcmp(name, "%#v") ? (self ? "&" KV_SHARP : KV_SHARP) : NULL;
  if (!v) return 0;
  *out = tpl_value_str(v);
  return 1;
}
static int kv_string(tpl_call_t *c, tpl_value_t *args, size_t n, tpl_value_t *out) {
  *out = tpl_value_str("v1.20.0");
  return 0;
}
static int kv_git(tpl_call_t *c, tpl_value_t *args, size_t n, tpl_value_t *out) {
  *out = tpl_value_str("v1.20.0-gke.1");
  return 0;
}
static const tpl_func_t kv_methods[] = {{"String", "", kv_string, NULL, "func() string"},
                                        {"GitVersion", "", kv_git, NULL, "func() string"}};
static const tpl_func_t *kvp_method(void *self, const char *name) {
  for (size_t i = 0; i < 2; i++)
    if (!strcmp(kv_methods[i].name, name)) return &kv_methods[i];
  return NULL;
}
static int kv_format(void *self, buf_t *out) { return buf_puts(out, "v1.20.0"); }
/* The value type has no methods (they are on the pointer) and so no String(). */
static const tpl_type_t kv_type = {"common.KubeVersion", kv_field, NULL, NULL};
static const tpl_type_t kvp_type = {"*common.KubeVersion", kv_field, kvp_method, kv_format};

static tpl_value_t caps_kv, caps_apis;
static int caps_field(void *self, const char *name, tpl_value_t *out) {
  if (!strcmp(name, "KubeVersion")) *out = caps_kv; /* addressable through the pointer: String() applies */
  else if (!strcmp(name, "APIVersions")) *out = caps_apis;
  else if (!strcmp(name, "%v")) *out = tpl_value_str("&{" KV_V " [apps/v1 v1] {    }}");
  else if (!strcmp(name, "%+v"))
    *out = tpl_value_str("&{KubeVersion:" KV_PLUS " APIVersions:[apps/v1 v1] HelmVersion:{Version: GitCommit: "
                         "GitTreeState: GoVersion: KubeClientVersion:}}");
  else if (!strcmp(name, "%#v"))
    *out = tpl_value_str("&common.Capabilities{KubeVersion:" KV_SHARP
                         ", APIVersions:common.VersionSet{\"apps/v1\", \"v1\"}, HelmVersion:version.BuildInfo{Version:\"\", "
                         "GitCommit:\"\", GitTreeState:\"\", GoVersion:\"\", KubeClientVersion:\"\"}}");
  else return 0;
  return 1;
}
static const tpl_type_t caps_type = {"*common.Capabilities", caps_field, NULL, NULL};

static tpl_value_t obj(tpl_arena_t *a, const tpl_type_t *t, void *self) {
  tpl_object_t *o = tpl_arena_alloc(a, sizeof *o);
  tpl_value_t v = {0};
  if (!o) return v;
  o->type = t;
  o->self = self;
  v.kind = TPL_OBJECT;
  v.u.obj = o;
  return v;
}

static int set(tpl_arena_t *a, tpl_value_t m, const char *k, tpl_value_t v) {
  v.iface = 1;
  return tpl_map_set(a, m.u.map, k, strlen(k), v);
}

static int helm_dot(tpl_arena_t *a, tpl_value_t values, tpl_value_t *out) {
  tpl_value_t dot = tpl_value_map_new(a, TPL_ELEM_ANY), tp = tpl_value_map_new(a, TPL_ELEM_ANY);
  tpl_value_t fm = tpl_value_map_new(a, TPL_ELEM_BYTES), apis = tpl_value_list_new(a, TPL_ELEM_STRING, 2);
  tpl_value_t nob = {0};
  nob.kind = TPL_LIST;
  nob.elem = TPL_ELEM_UINT8;
  if (dot.kind != TPL_MAP || tp.kind != TPL_MAP || fm.kind != TPL_MAP || apis.kind != TPL_LIST) return -1;
  int bad = tpl_helm_values_mark(&values) || tpl_helm_values_mark(&tp);
  bad |= set(a, tp, "Name", tpl_value_str("chart/templates/x.yaml")) | set(a, tp, "BasePath", tpl_value_str("chart/templates"));
  bad |= tpl_map_set(a, fm.u.map, "a.txt", 5, tpl_value_bytes(a, "A\n", 2)) |
         tpl_map_set(a, fm.u.map, "b/c.txt", 7, tpl_value_bytes(a, "hi", 2));
  bad |= tpl_list_push(a, apis.u.list, tpl_value_str("apps/v1")) | tpl_list_push(a, apis.u.list, tpl_value_str("v1"));
  apis.u.list->type = &vs_type;
  static int pointer_marker;
  caps_kv = obj(a, &kvp_type, &pointer_marker);
  caps_apis = apis;
  bad |= set(a, dot, "KV", obj(a, &kv_type, NULL)) | set(a, dot, "KVp", obj(a, &kvp_type, &pointer_marker)) |
         set(a, dot, "Caps", obj(a, &caps_type, &pointer_marker));
  bad |= set(a, dot, "Values", values) | set(a, dot, "Template", tp) | set(a, dot, "Bytes", tpl_value_bytes(a, "hi", 2)) |
         set(a, dot, "NoBytes", nob) | set(a, dot, "FileMap", fm) | set(a, dot, "APIs", apis);
  *out = dot;
  return bad ? -1 : 0;
}


static void remove_no_value(buf_t *b) {
  size_t w = 0;
  for (size_t r = 0; r < b->len;) {
    if (b->len - r >= 10 && !memcmp(b->data + r, "<no value>", 10)) r += 10;
    else b->data[w++] = b->data[r++];
  }
  b->len = w;
}

static void run_case(cJSON *c, tpl_funcs_t *funcs) {
  const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(c, "name"));
  const char *mode = cJSON_GetStringValue(cJSON_GetObjectItem(c, "mode"));
  const char *entry = cJSON_GetStringValue(cJSON_GetObjectItem(c, "entry"));
  const char *want_out = cJSON_GetStringValue(cJSON_GetObjectItem(c, "output"));
  const char *want_err = cJSON_GetStringValue(cJSON_GetObjectItem(c, "error"));
  tpl_arena_t *a = tpl_arena_new(0);
  tpl_set_t *set = tpl_set_new(strcmp(mode, "go") ? funcs : NULL);
  buf_t vj = BUF_INIT, out = BUF_INIT, err = BUF_INIT;
  tpl_value_t values, data;
  int rc = release_go_json_append(&vj, cJSON_GetObjectItem(c, "values"));
  if (!rc) rc = tpl_value_from_json(a, vj.data, vj.len, &values, &err);
  if (!rc) rc = helm_dot(a, values, &data);
  cJSON *t;
  cJSON_ArrayForEach(t, cJSON_GetObjectItem(c, "templates")) {
    const char *tt = cJSON_GetStringValue(cJSON_GetArrayItem(t, 1));
    if (!rc) rc = tpl_set_parse(set, cJSON_GetStringValue(cJSON_GetArrayItem(t, 0)), tt, strlen(tt), &err);
  }
  if (!rc) {
    tpl_helm_state_t *hs = calloc(1, sizeof *hs);
    tpl_exec_opts_t o = {0};
    o.udata = hs;
    o.missingkey = !strcmp(mode, "helm") ? TPL_MISSINGKEY_ZERO : !strcmp(mode, "strict") ? TPL_MISSINGKEY_ERROR : 0;
    rc = tpl_set_execute(set, entry, data, a, &o, &out, &err);
    free(hs);
    if (!rc && !strcmp(mode, "helm")) remove_no_value(&out);
  }
  buf_putc(&out, 0);
  buf_putc(&err, 0);
  const char *got = rc ? err.data : out.data, *want = want_err ? want_err : want_out;
  bool ok = (rc != 0) == (want_err != NULL) && want && !strcmp(got, want);
  if (!ok) fprintf(stderr, "%s:\n", name);
  CHECK(ok);
  if (!ok) fprintf(stderr, "  got:  %s\n  want: %s\n", got, want ? want : "(none)");
  buf_free(&vj);
  buf_free(&out);
  buf_free(&err);
  tpl_set_free(set);
  tpl_arena_free(a);
}

int main(void) {
  const char *src = getenv("RUDDER_SOURCE_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/unit/test_template_obj.jsonl", src ? src : ".");
  FILE *f = fopen(path, "rb");
  CHECK(f != NULL);
  if (!f) return t_done();
  tpl_funcs_t *funcs = tpl_funcs_new();
  CHECK(funcs && !tpl_helm_funcs_add(funcs) && !sprig_funcs_add(funcs));
  char *line = NULL;
  size_t cap = 0;
  int n = 0;
  while (getline(&line, &cap, f) > 0) {
    cJSON *c = cJSON_Parse(line);
    CHECK(c != NULL);
    if (!c) continue;
    run_case(c, funcs);
    cJSON_Delete(c);
    n++;
  }
  free(line);
  fclose(f);
  CHECK(n >= 100);
  fprintf(stderr, "%d cases\n", n);
  tpl_funcs_free(funcs);
  return t_done();
}
