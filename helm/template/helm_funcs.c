/* Helm's engine-bound template functions that the language core needs to be
 * tested as Helm runs it: include, required and fail (Helm v4 engine.go). */
#include <string.h>

#include "helm/template/helm_funcs.h"

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
