/* Helm's and Sprig's serialisation functions: toYaml/mustToYaml (sigs.k8s.io
 * yaml), fromYaml/fromYamlArray, toJson/mustToJson/toPrettyJson/toRawJson,
 * fromJson/fromJsonArray (Helm's map forms) and mustFromJson (Sprig's). */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <string.h>

#include "base/yaml.h"
#include "helm/template/sprig_internal.h"
#include "helm/template/helm_funcs.h"

int sprig__json_decode(tpl_arena_t *a, const char *s, size_t n, tpl_value_t *out, buf_t *err);

static int trim_nl_ret(tpl_call_t *c, buf_t *b, tpl_value_t *out) {
  if (b->len && b->data[b->len - 1] == '\n') b->len--;
  return sprig__ret_buf(c, b, out);
}

/* Encodings of the same unchanged values (`toJson .Values | sha256sum` in every template of a
 * chart) are remembered in the arena (tpl_arena_memo_*): fn is the encoder, the rest what decides
 * the text besides the contents. */
enum { MEMO_TOYAML = 1, MEMO_TOJSON, MEMO_TOPRETTYJSON, MEMO_TORAWJSON };
#define MEMO_MAX_TEXT ((size_t)4 << 20)
static int memo_what(int fn, const tpl_value_t *v) { return fn | (v->view << 4) | (v->elem << 12); }

static bool memo_hit(tpl_call_t *c, const tpl_value_t *v, int fn, tpl_value_t *out) {
  size_t len;
  const char *t = tpl_memo_get(tpl_call_arena(c), v, memo_what(fn, v), &len);
  if (!t) return false;
  *out = tpl_value_strn(t, len);
  return true;
}

/* Returns the text in b (freed) as the result, remembering it when it may be. */
static int memo_ret(tpl_call_t *c, const tpl_value_t *v, int fn, buf_t *b, tpl_value_t *out) {
  if (b->len <= MEMO_MAX_TEXT && (v->kind == TPL_MAP || v->kind == TPL_LIST)) {
    const char *t = tpl_memo_put(tpl_call_arena(c), v, memo_what(fn, v), b->data ? b->data : "", b->len);
    if (t) {
      *out = tpl_value_strn(t, b->len);
      buf_free(b);
      return 0;
    }
  }
  return sprig__ret_buf(c, b, out);
}

SPRIG_FN(f_toyaml) {
  buf_t b = BUF_INIT;
  tpl_value_t v = sprig__arg(&args[0]);
  if (memo_hit(c, &v, MEMO_TOYAML, out)) return 0;
  int rc = sprig__yaml_encode_max(&b, &v, NULL, tpl_call_helper(c), sprig__enc_max(c), c);
  if (rc == TPL_ENOMEM || rc == TPL_ELIMIT) {
    buf_free(&b);
    return rc == TPL_ELIMIT ? tpl_call_reserve(c, SIZE_MAX) : rc;
  }
  if (rc) {
    buf_free(&b);
    return sprig__ret_str(c, "", 0, out);
  }
  if (b.len && b.data[b.len - 1] == '\n') b.len--;
  return memo_ret(c, &v, MEMO_TOYAML, &b, out);
}

/* Helm's toYAMLPretty: yaml.v3 Encoder with SetIndent(2); errors give "". */
SPRIG_FN(f_toyamlpretty) {
  buf_t b = BUF_INIT;
  tpl_value_t v = sprig__arg(&args[0]);
  int rc = sprig__yaml_encode_v3_max(&b, &v, NULL, sprig__enc_max(c), c);
  if (rc == TPL_ENOMEM || rc == TPL_ELIMIT) {
    buf_free(&b);
    return rc == TPL_ELIMIT ? tpl_call_reserve(c, SIZE_MAX) : rc;
  }
  if (rc) buf_reset(&b);
  return trim_nl_ret(c, &b, out);
}

SPRIG_FN(f_musttoyaml) {
  buf_t b = BUF_INIT, err = BUF_INIT;
  tpl_value_t v = sprig__arg(&args[0]);
  int rc = sprig__yaml_encode_max(&b, &v, &err, tpl_call_helper(c), sprig__enc_max(c), c);
  if (rc) {
    buf_free(&b);
    if (rc == TPL_ELIMIT) rc = tpl_call_reserve(c, SIZE_MAX);
    else if (rc != TPL_ENOMEM) rc = tpl_call_errorf(c, "%s", err.data ? err.data : "");
    buf_free(&err);
    return rc;
  }
  buf_free(&err);
  return trim_nl_ret(c, &b, out);
}

static int to_json(tpl_call_t *c, tpl_value_t *args, bool html, const char *indent, bool must, tpl_value_t *out) {
  buf_t b = BUF_INIT, err = BUF_INIT;
  tpl_value_t v = sprig__arg(&args[0]);
  int fn = indent ? MEMO_TOPRETTYJSON : html ? MEMO_TOJSON : MEMO_TORAWJSON;
  if (memo_hit(c, &v, fn, out)) return 0;
  int rc = sprig__json_encode_max(&b, &v, html, indent, &err, tpl_call_helper(c), sprig__enc_max(c), c);
  if (rc == TPL_ENOMEM || rc == TPL_ELIMIT) {
    buf_free(&b);
    buf_free(&err);
    return rc == TPL_ELIMIT ? tpl_call_reserve(c, SIZE_MAX) : rc;
  }
  if (rc) {
    buf_reset(&b);
    if (must) {
      rc = tpl_call_errorf(c, "%s", err.data ? err.data : "");
      buf_free(&b);
      buf_free(&err);
      return rc;
    }
  }
  buf_free(&err);
  if (rc) return sprig__ret_buf(c, &b, out);
  return memo_ret(c, &v, fn, &b, out);
}

SPRIG_FN(f_tojson) { return to_json(c, args, true, NULL, false, out); }
SPRIG_FN(f_musttojson) { return to_json(c, args, true, NULL, true, out); }
SPRIG_FN(f_toprettyjson) { return to_json(c, args, true, "  ", false, out); }
SPRIG_FN(f_musttoprettyjson) { return to_json(c, args, true, "  ", true, out); }
SPRIG_FN(f_torawjson) { return to_json(c, args, false, NULL, true, out); }
SPRIG_FN(f_musttorawjson) { return to_json(c, args, false, NULL, true, out); }

static const char *json_kind(const tpl_value_t *v) {
  switch (v->kind) {
  case TPL_MAP: return "object";
  case TPL_LIST: return "array";
  case TPL_STRING: return "string";
  case TPL_FLOAT64: return "number";
  case TPL_BOOL: return "bool";
  default: return "null";
  }
}

/* Helm's fromJson: a map, with the error under "Error". */
SPRIG_FN(f_fromjson) {
  tpl_arena_t *a = tpl_call_arena(c);
  buf_t err = BUF_INIT;
  tpl_value_t v;
  int rc = sprig__json_decode(a, args[0].u.s.p, args[0].u.s.n, &v, &err);
  if (rc == TPL_ENOMEM) {
    buf_free(&err);
    return rc;
  }
  if (rc == -2 && v.kind == TPL_MAP) {
    *out = v;
    tpl_value_t e = tpl_value_str_copy(a, err.data ? err.data : "", err.len);
    buf_free(&err);
    if (e.kind == TPL_INVALID) return TPL_ENOMEM;
    return tpl_map_set(a, out->u.map, "Error", 5, e);
  }
  if (rc == -2) rc = -1;
  if (!rc && v.kind == TPL_MAP) {
    buf_free(&err);
    *out = v;
    return 0;
  }
  if (!rc && v.kind == TPL_NIL) {
    buf_free(&err);
    *out = tpl_value_map_new(a, TPL_ELEM_ANY);
    out->u.map = NULL; /* null sets the map to nil */
    return 0;
  }
  if (!rc) buf_printf(&err, "json: cannot unmarshal %s into Go value of type map[string]interface {}", json_kind(&v));
  *out = tpl_value_map_new(a, TPL_ELEM_ANY);
  if (out->kind == TPL_INVALID) return TPL_ENOMEM;
  tpl_value_t e = tpl_value_str_copy(a, err.data ? err.data : "", err.len);
  buf_free(&err);
  if (e.kind == TPL_INVALID) return TPL_ENOMEM;
  return tpl_map_set(a, out->u.map, "Error", 5, e);
}

SPRIG_FN(f_fromjsonarray) {
  tpl_arena_t *a = tpl_call_arena(c);
  buf_t err = BUF_INIT;
  tpl_value_t v;
  int rc = sprig__json_decode(a, args[0].u.s.p, args[0].u.s.n, &v, &err);
  if (rc == TPL_ENOMEM) {
    buf_free(&err);
    return rc;
  }
  if (rc == -2) rc = -1;
  if (!rc && v.kind == TPL_LIST) {
    buf_free(&err);
    *out = v;
    return 0;
  }
  if (!rc && v.kind == TPL_NIL) {
    buf_free(&err);
    *out = tpl_value_list_new(a, TPL_ELEM_ANY, 0);
    out->u.list = NULL;
    return 0;
  }
  if (!rc) buf_printf(&err, "json: cannot unmarshal %s into Go value of type []interface {}", json_kind(&v));
  *out = tpl_value_list_new(a, TPL_ELEM_ANY, 1);
  if (out->kind == TPL_INVALID) return TPL_ENOMEM;
  tpl_value_t e = tpl_value_str_copy(a, err.data ? err.data : "", err.len);
  buf_free(&err);
  if (e.kind == TPL_INVALID) return TPL_ENOMEM;
  return tpl_list_push(a, out->u.list, e);
}

/* Sprig's fromJson/mustFromJson: interface{} (nil on error for the non-must form). */
SPRIG_FN(f_mustfromjson) {
  buf_t err = BUF_INIT;
  int rc = sprig__json_decode(tpl_call_arena(c), args[0].u.s.p, args[0].u.s.n, out, &err);
  if (rc == -2 || (rc && rc != TPL_ENOMEM)) rc = tpl_call_errorf(c, "%s", err.data ? err.data : "");
  buf_free(&err);
  return rc;
}

/* ---- YAML ---- */

/* ints: integral numbers become int64, as the Kubernetes client's unstructured decoding gives them
 * (lookup); otherwise every number is a float64, as sigs.k8s.io/yaml gives them. */
static int from_cjson_x(tpl_arena_t *a, const cJSON *j, tpl_value_t *out, bool ints) {
  if (cJSON_IsNull(j)) *out = tpl_value_nil();
  else if (cJSON_IsBool(j)) *out = tpl_value_bool(cJSON_IsTrue(j));
  else if (cJSON_IsNumber(j) && ints && j->valuedouble == (double)(int64_t)j->valuedouble &&
           j->valuedouble > -9.2e18 && j->valuedouble < 9.2e18)
    *out = tpl_value_int((int64_t)j->valuedouble);
  else if (cJSON_IsNumber(j)) *out = tpl_value_float(j->valuedouble);
  else if (cJSON_IsRaw(j)) {
    double f;
    sprig__parse_float(j->valuestring, strlen(j->valuestring), &f);
    *out = tpl_value_float(f);
  } else if (cJSON_IsString(j)) {
    *out = tpl_value_str_copy(a, j->valuestring, strlen(j->valuestring));
    if (out->kind == TPL_INVALID) return TPL_ENOMEM;
  } else if (cJSON_IsArray(j)) {
    *out = tpl_value_list_new(a, TPL_ELEM_ANY, (size_t)cJSON_GetArraySize(j));
    if (out->kind == TPL_INVALID) return TPL_ENOMEM;
    for (const cJSON *k = j->child; k; k = k->next) {
      tpl_value_t v;
      int rc = from_cjson_x(a, k, &v, ints);
      if (rc) return rc;
      if (tpl_list_push(a, out->u.list, v)) return TPL_ENOMEM;
    }
  } else if (cJSON_IsObject(j)) {
    *out = tpl_value_map_new(a, TPL_ELEM_ANY);
    if (out->kind == TPL_INVALID) return TPL_ENOMEM;
    for (const cJSON *k = j->child; k; k = k->next) {
      tpl_value_t v;
      int rc = from_cjson_x(a, k, &v, ints);
      if (rc) return rc;
      if (tpl_map_set(a, out->u.map, k->string, strlen(k->string), v)) return TPL_ENOMEM;
    }
  } else {
    *out = tpl_value_nil();
  }
  return 0;
}

static int from_cjson(tpl_arena_t *a, const cJSON *j, tpl_value_t *out) { return from_cjson_x(a, j, out, false); }

/* sigs.k8s.io/yaml.Unmarshal into interface{}: 0, -1 (Go's error text in err) or TPL_ENOMEM. */
static int yaml_decode(tpl_arena_t *a, const char *s, size_t n, tpl_value_t *out, buf_t *err) {
  cJSON *j = NULL;
  yaml_error_t ye;
  yaml_opts_t yo = {.flags = YAML_OPT_DUP_LAST};
  int rc = yaml_to_json(s, n, &yo, &j, &ye);
  if (rc) {
    if (j) cJSON_Delete(j);
    if (rc == -12) return TPL_ENOMEM;
    /* go-yaml v2 reports parser errors at the 0-based line of the problem mark (or of the
     * context mark when that is 0) and scanner errors at the 1-based line; line 0 is omitted. */
    static const char *const parser_problems[] = {
        "did not find expected node content", "did not find expected key", "did not find expected '-' indicator",
        "did not find expected ',' or ']'", "did not find expected ',' or '}'", "did not find expected <document start>",
        "did not find expected <stream-start>", "found duplicate %YAML directive", "found incompatible YAML document",
        "found duplicate %TAG directive", "found undefined tag handle", "did not find expected <document end>"};
    bool parser_err = false;
    for (size_t k = 0; k < sizeof parser_problems / sizeof parser_problems[0]; k++)
      if (!strcmp(ye.problem, parser_problems[k])) parser_err = true;
    int line = 0;
    if (ye.line > 1) line = parser_err ? ye.line - 1 : ye.line;
    else if (ye.context[0] && ye.context_line > 1) line = ye.context_line - 1;
    buf_puts(err, "error converting YAML to JSON: yaml: ");
    if (line > 0) buf_printf(err, "line %d: ", line);
    buf_puts(err, ye.problem);
    return -1;
  }
  rc = from_cjson(a, j, out);
  cJSON_Delete(j);
  return rc;
}

/* fromYaml (a map) and fromYamlArray (a list): the document as that type; an empty document as an
 * empty one; any error as Helm reports it, in the result ({"Error": msg} or [msg]). */
static int from_yaml(tpl_call_t *c, const tpl_value_t *text, bool want_list, tpl_value_t *out) {
  tpl_arena_t *a = tpl_call_arena(c);
  buf_t err = BUF_INIT;
  tpl_value_t v;
  int rc = yaml_decode(a, text->u.s.p, text->u.s.n, &v, &err);
  if (rc == TPL_ENOMEM) {
    buf_free(&err);
    return rc;
  }
  if (!rc && v.kind == (want_list ? TPL_LIST : TPL_MAP)) {
    buf_free(&err);
    *out = v;
    return 0;
  }
  if (!rc && v.kind == TPL_NIL) {
    buf_free(&err);
    *out = want_list ? tpl_value_list_new(a, TPL_ELEM_ANY, 0) : tpl_value_map_new(a, TPL_ELEM_ANY);
    return out->kind == TPL_INVALID ? TPL_ENOMEM : 0;
  }
  if (!rc)
    buf_printf(&err, "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal %s into Go value of type %s",
               json_kind(&v), want_list ? "[]interface {}" : "map[string]interface {}");
  *out = want_list ? tpl_value_list_new(a, TPL_ELEM_ANY, 1) : tpl_value_map_new(a, TPL_ELEM_ANY);
  if (out->kind == TPL_INVALID) {
    buf_free(&err);
    return TPL_ENOMEM;
  }
  tpl_value_t e = tpl_value_str_copy(a, err.data ? err.data : "", err.len);
  buf_free(&err);
  if (e.kind == TPL_INVALID) return TPL_ENOMEM;
  return want_list ? tpl_list_push(a, out->u.list, e) : tpl_map_set(a, out->u.map, "Error", 5, e);
}

SPRIG_FN(f_fromyaml) { return from_yaml(c, &args[0], false, out); }
SPRIG_FN(f_fromyamlarray) { return from_yaml(c, &args[0], true, out); }

/* Helm's lookup: without a cluster (rudder template) an empty map, as `helm template` gives; in the
 * controller the host's callback fetches the object (or the list, when name is empty) from the API
 * server. Not found is an empty map; any other failure fails the template. */
SPRIG_FN(f_lookup) {
  tpl_helm_state_t *st = tpl_call_exec_udata(c);
  if (!st || !st->lookup) {
    *out = tpl_value_map_new(tpl_call_arena(c), TPL_ELEM_ANY);
    return out->kind == TPL_INVALID ? TPL_ENOMEM : 0;
  }
  char *a[4];
  for (int i = 0; i < 4; i++) a[i] = strndup(args[i].u.s.p, args[i].u.s.n);
  char *json = NULL, err[512] = "";
  int rc = a[0] && a[1] && a[2] && a[3] ? st->lookup(st->lookup_ctx, a[0], a[1], a[2], a[3], &json, err, sizeof err) : -12;
  for (int i = 0; i < 4; i++) free(a[i]);
  if (rc == -12) return TPL_ENOMEM;
  if (rc) return tpl_call_errorf(c, "%s", err);
  cJSON *j = json ? cJSON_Parse(json) : NULL;
  free(json);
  if (!j) {
    *out = tpl_value_map_new(tpl_call_arena(c), TPL_ELEM_ANY);
    return out->kind == TPL_INVALID ? TPL_ENOMEM : 0;
  }
  rc = from_cjson_x(tpl_call_arena(c), j, out, true);
  cJSON_Delete(j);
  return rc;
}

SPRIG_FN(f_gethostbyname) {
  *out = tpl_value_str("");
  return 0;
}

const tpl_func_t sprig__enc_fns[] = {
    {"toYaml", "a", f_toyaml, NULL, "func(interface {}) string"},
    {"mustToYaml", "a", f_musttoyaml, NULL, "func(interface {}) string"},
    {"toYamlPretty", "a", f_toyamlpretty, NULL, "func(interface {}) string"},
    {"toJson", "a", f_tojson, NULL, "func(interface {}) string"},
    {"mustToJson", "a", f_musttojson, NULL, "func(interface {}) string"},
    {"toPrettyJson", "a", f_toprettyjson, NULL, "func(interface {}) string"},
    {"mustToPrettyJson", "a", f_musttoprettyjson, NULL, "func(interface {}) (string, error)"},
    {"toRawJson", "a", f_torawjson, NULL, "func(interface {}) string"},
    {"mustToRawJson", "a", f_musttorawjson, NULL, "func(interface {}) (string, error)"},
    {"fromJson", "s", f_fromjson, NULL, "func(string) map[string]interface {}"},
    {"fromJsonArray", "s", f_fromjsonarray, NULL, "func(string) []interface {}"},
    {"mustFromJson", "s", f_mustfromjson, NULL, "func(string) (interface {}, error)"},
    {"fromYaml", "s", f_fromyaml, NULL, "func(string) map[string]interface {}"},
    {"fromYamlArray", "s", f_fromyamlarray, NULL, "func(string) []interface {}"},
    {"lookup", "ssss", f_lookup, NULL, "func(string, string, string, string) (map[string]interface {}, error)"},
    {"getHostByName", "s", f_gethostbyname, NULL, "func(string) string"},
};
const size_t sprig__enc_nfns = sizeof sprig__enc_fns / sizeof sprig__enc_fns[0];
