/* Helm's engine-bound template functions that the language core needs to be
 * tested as Helm runs it: include, required and fail (Helm v4 engine.go). */
#include <string.h>

#include "helm/template/helm_funcs.h"
#include "helm/template/tpl_internal.h"

/* include NAME DATA: renders a named template to a string; Helm allows 1000 nested uses of one name. */
static int hf_include(tpl_call_t *c, tpl_value_t *args, size_t n, tpl_value_t *out) {
  tpl_helm_state_t *st = tpl_call_exec_udata(c);
  const char *name = args[0].u.s.p;
  size_t nlen = args[0].u.s.n;
  char *nm = tpl_arena_strndup(tpl_call_arena(c), name, nlen);
  if (!nm) return TPL_ENOMEM;
  /* Count nesting per name, as Helm's includedNames map does. */
  size_t i;
  for (i = 0; st && i < st->ninc; i++)
    if (st->inc[i].len == nlen && memcmp(st->inc[i].name, name, nlen) == 0) break;
  if (st && i == st->ninc) {
    if (st->ninc == sizeof st->inc / sizeof st->inc[0]) return tpl_call_errorf(c, "too many distinct included templates");
    st->inc[i].name = nm;
    st->inc[i].len = nlen;
    st->inc[i].count = 0;
    st->ninc++;
  }
  if (st) {
    if (st->inc[i].count > 1000)
      return tpl_call_errorf(c, "rendering template has a nested reference name: %s: unable to execute template", nm);
    st->inc[i].count++;
  }
  buf_t b = BUF_INIT;
  int rc = tpl_call_execute(c, nm, args[1], &b);
  if (st) st->inc[i].count--;
  if (rc) {
    buf_free(&b);
    return rc;
  }
  *out = tpl_value_str_copy(tpl_call_arena(c), b.data ? b.data : "", b.len);
  buf_free(&b);
  return out->kind == TPL_INVALID ? TPL_ENOMEM : 0;
}

static int hf_required(tpl_call_t *c, tpl_value_t *args, size_t n, tpl_value_t *out) {
  tpl_value_t v = args[1];
  if (v.kind == TPL_NIL || v.kind == TPL_INVALID || (v.kind == TPL_STRING && v.u.s.n == 0))
    return tpl_call_errorf(c, "HELM_ERR_START%.*sHELM_ERR_END", (int)args[0].u.s.n, args[0].u.s.p);
  *out = v;
  return 0;
}

static int hf_fail(tpl_call_t *c, tpl_value_t *args, size_t n, tpl_value_t *out) {
  return tpl_call_errorf(c, "HELM_ERR_START%.*sHELM_ERR_END", (int)args[0].u.s.n, args[0].u.s.p);
}

static const tpl_func_t hf_table[] = {
    {"include", "sa", hf_include, NULL, "func(string, interface {}) (string, error)"},
    {"required", "sa", hf_required, NULL, "func(string, interface {}) (interface {}, error)"},
    {"fail", "s", hf_fail, NULL, "func(string) (string, error)"},
};

int tpl_helm_funcs_add(tpl_funcs_t *t) { return tpl_funcs_add(t, hf_table, sizeof hf_table / sizeof hf_table[0]); }

/* ---- common.Values: Helm's named map type (pkg/chart/common/values.go) ---- */

static const tpl_type_t hv_values_type;

/* The same map seen as common.Values or as map[string]interface{} (Go converts without copying:
 * both share the map); a NULL map gives a new empty one. */
static tpl_value_t hv_view(tpl_arena_t *a, const tpl_map_t *m, tpl_view_t view) {
  tpl_value_t v = {0};
  if (m) {
    v.kind = TPL_MAP;
    v.elem = TPL_ELEM_ANY;
    v.u.map = (tpl_map_t *)m;
  } else {
    v = tpl_value_map_new(a, TPL_ELEM_ANY);
    if (v.kind != TPL_MAP) return v;
  }
  v.view = (uint8_t)view;
  return v;
}

static int hv_quoted_err(tpl_call_t *c, const char *what, const char *key, size_t n) {
  buf_t q = BUF_INIT;
  if (tpl_fmt_quote(&q, key, n)) {
    buf_free(&q);
    return TPL_ENOMEM;
  }
  int rc = tpl_call_errorf(c, "%s is not a %s", q.data, what);
  buf_free(&q);
  return rc;
}

/* A table-valued entry (map[string]interface{} or Values), or NULL. */
static const tpl_map_t *hv_as_table(const tpl_value_t *v) {
  if (!v || v->kind != TPL_MAP || v->elem != TPL_ELEM_ANY || !v->u.map) return NULL;
  const tpl_type_t *t = tpl_value_named(v);
  if (t && t != &hv_values_type) return NULL;
  return v->u.map;
}

/* Values.Table(name): walks dot-separated keys; ErrNoTable ("%q is not a table") when one is missing
 * or not a map. bad_key and bad_len get the failing key. */
static int hv_table(const tpl_map_t *m, const char *name, size_t n, const tpl_map_t **out, const char **bad_key,
                    size_t *bad_len) {
  const tpl_map_t *t = m;
  size_t i = 0;
  for (;;) {
    size_t j = i;
    while (j < n && name[j] != '.') j++;
    const tpl_value_t *v = t ? tpl_map_get(t, name + i, j - i) : NULL;
    const tpl_map_t *sub = hv_as_table(v);
    if (!sub) {
      *bad_key = name + i;
      *bad_len = j - i;
      return -1;
    }
    t = sub;
    if (j >= n) break;
    i = j + 1;
  }
  *out = t;
  return 0;
}

static int hv_m_table(tpl_call_t *c, tpl_value_t *args, size_t n, tpl_value_t *out) {
  const tpl_map_t *m = tpl_call_self(c), *t = NULL;
  const char *bk;
  size_t bl;
  if (hv_table(m, args[0].u.s.p, args[0].u.s.n, &t, &bk, &bl)) return hv_quoted_err(c, "table", bk, bl);
  *out = hv_view(tpl_call_arena(c), t, TPL_VIEW_VALUES);
  return out->kind == TPL_MAP ? 0 : TPL_ENOMEM;
}

static int hv_m_asmap(tpl_call_t *c, tpl_value_t *args, size_t n, tpl_value_t *out) {
  const tpl_map_t *m = tpl_call_self(c);
  *out = hv_view(tpl_call_arena(c), m && m->len ? m : NULL, TPL_VIEW_PLAIN);
  return out->kind == TPL_MAP ? 0 : TPL_ENOMEM;
}

static int hv_m_pathvalue(tpl_call_t *c, tpl_value_t *args, size_t n, tpl_value_t *out) {
  const tpl_map_t *m = tpl_call_self(c);
  const char *p = args[0].u.s.p;
  size_t pn = args[0].u.s.n;
  if (!pn) return tpl_call_errorf(c, "YAML path cannot be empty");
  size_t k = pn;
  while (k > 0 && p[k - 1] != '.') k--;
  const char *key = p + k;
  size_t klen = pn - k;
  const tpl_map_t *t = m;
  if (k > 0) {
    const char *bk;
    size_t bl;
    if (hv_table(m, p, k - 1, &t, &bk, &bl)) return hv_quoted_err(c, "value", key, klen);
  }
  const tpl_value_t *v = t ? tpl_map_get(t, key, klen) : NULL;
  if (!v || hv_as_table(v)) return hv_quoted_err(c, "value", key, klen);
  *out = *v;
  out->iface = 1;
  return 0;
}

static int hv_m_yaml(tpl_call_t *c, tpl_value_t *args, size_t n, tpl_value_t *out) {
  const tpl_funcs_t *fs = tpl__call_funcs(c);
  const tpl_func_t *ty = fs ? tpl_funcs_find(fs, "toYaml", 6) : NULL;
  if (!ty) return tpl_call_errorf(c, "YAML: no YAML encoder in the function table");
  tpl_value_t arg = hv_view(tpl_call_arena(c), tpl_call_self(c), TPL_VIEW_VALUES), s;
  if (arg.kind != TPL_MAP) return TPL_ENOMEM;
  int rc = ty->fn(c, &arg, 1, &s);
  if (rc) return rc;
  if (s.kind != TPL_STRING) return tpl_call_errorf(c, "YAML: encoder returned no string");
  char *p = tpl_arena_alloc(tpl_call_arena(c), s.u.s.n + 1);
  if (!p) return TPL_ENOMEM;
  memcpy(p, s.u.s.p, s.u.s.n);
  p[s.u.s.n] = '\n';
  *out = tpl_value_strn(p, s.u.s.n + 1);
  return 0;
}

static int hv_m_encode(tpl_call_t *c, tpl_value_t *args, size_t n, tpl_value_t *out) {
  /* Only a nil io.Writer can reach it from a template: Go panics writing to it. */
  return tpl_call_errorf(c, "runtime error: invalid memory address or nil pointer dereference");
}

static const tpl_func_t hv_methods[] = {
    {"AsMap", "", hv_m_asmap, NULL, "func() map[string]interface {}"},
    {"Encode", "w", hv_m_encode, NULL, "func(io.Writer) error"},
    {"PathValue", "s", hv_m_pathvalue, NULL, "func(string) (interface {}, error)"},
    {"Table", "s", hv_m_table, NULL, "func(string) (common.Values, error)"},
    {"YAML", "", hv_m_yaml, NULL, "func() (string, error)"},
};

static const tpl_func_t *hv_method(void *self, const char *name) {
  for (size_t i = 0; i < sizeof hv_methods / sizeof hv_methods[0]; i++)
    if (!strcmp(hv_methods[i].name, name)) return &hv_methods[i];
  return NULL;
}

static const tpl_type_t hv_values_type = {"common.Values", NULL, hv_method, NULL};

const tpl_type_t *tpl_helm_values_type(void) { return &hv_values_type; }

int tpl_helm_values_mark(tpl_value_t *v) {
  if (v->kind != TPL_MAP || v->elem != TPL_ELEM_ANY || !v->u.map) return TPL_EINVAL;
  v->view = TPL_VIEW_VALUES;
  return 0;
}
