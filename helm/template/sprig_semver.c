/* Sprig's semver and semverCompare on a port of Masterminds/semver v3.5.0
 * (the version Helm v4.3.1 pins): NewVersion in its default coercing mode,
 * NewConstraint (hyphen ranges, ||, comma/space conjunctions, = != > < >= =>
 * <= =< ~ ~> ^, x, X and * wildcards), Check with its prerelease rule, and the
 * *semver.Version methods templates call. The versions and constraints
 * themselves are in helm/semver (shared with chart code). */
#include <string.h>

#include "helm/semver/semver.h"
#include "helm/template/sprig_internal.h"

/* ---- template functions --------------------------------------------------- */

static const tpl_type_t sv_ptr_type, sv_val_type;

static int sv_new_obj(tpl_call_t *c, const semver_t *v, bool ptr, tpl_value_t *out) {
  tpl_arena_t *a = tpl_call_arena(c);
  semver_t *nv = tpl_arena_alloc(a, sizeof *nv);
  tpl_object_t *o = tpl_arena_alloc(a, sizeof *o);
  if (!nv || !o) return TPL_ENOMEM;
  *nv = *v;
  o->type = ptr ? &sv_ptr_type : &sv_val_type;
  o->self = nv;
  out->kind = TPL_OBJECT;
  out->elem = 0;
  out->iface = 0;
  out->u.obj = o;
  return 0;
}

bool sprig__semver_string(const tpl_value_t *v, buf_t *out);

/* For the JSON/YAML encoders: a *semver.Version marshals as its String(). */
bool sprig__semver_string(const tpl_value_t *v, buf_t *out) {
  if (v->kind != TPL_OBJECT || !v->u.obj || (v->u.obj->type != &sv_ptr_type && v->u.obj->type != &sv_val_type))
    return false;
  semver_format(out, v->u.obj->self);
  return true;
}

SPRIG_FN(f_semver) {
  (void)n;
  semver_t v;
  buf_t err = BUF_INIT;
  if (semver_parse(args[0].u.s.p, args[0].u.s.n, &v, &err)) {
    int rc = tpl_call_errorf(c, "%.*s", (int)err.len, err.data ? err.data : "");
    buf_free(&err);
    return rc;
  }
  buf_free(&err);
  return sv_new_obj(c, &v, true, out);
}

SPRIG_FN(f_semver_compare) {
  (void)n;
  buf_t err = BUF_INIT, verr = BUF_INIT;
  semver_t v;
  bool vok = semver_parse(args[1].u.s.p, args[1].u.s.n, &v, &verr) == 0;
  semver_constraint_t *sc = NULL;
  int rc = semver_constraint_new(args[0].u.s.p, args[0].u.s.n, &sc, &err);
  if (rc == 0 && vok) rc = semver_constraint_check(sc, &v);
  semver_constraint_free(sc);
  if (rc >= 0 && !vok) {
    buf_free(&err);
    err = verr;
    verr = (buf_t)BUF_INIT;
    rc = -1;
  }
  if (rc == -1) rc = tpl_call_errorf(c, "%.*s", (int)err.len, err.data ? err.data : "");
  buf_free(&err);
  buf_free(&verr);
  if (rc < 0) return rc;
  *out = tpl_value_bool(rc == 1);
  return 0;
}

/* ---- *semver.Version methods ---------------------------------------------- */

#define SELF ((semver_t *)tpl_call_self(c))

SPRIG_FN(m_major) { (void)args, (void)n; *out = tpl_value_uint64(SELF->major); return 0; }
SPRIG_FN(m_minor) { (void)args, (void)n; *out = tpl_value_uint64(SELF->minor); return 0; }
SPRIG_FN(m_patch) { (void)args, (void)n; *out = tpl_value_uint64(SELF->patch); return 0; }
SPRIG_FN(m_pre) { (void)args, (void)n; *out = tpl_value_strn(SELF->pre, SELF->npre); return 0; }
SPRIG_FN(m_meta) { (void)args, (void)n; *out = tpl_value_strn(SELF->meta, SELF->nmeta); return 0; }
SPRIG_FN(m_orig) { (void)args, (void)n; *out = tpl_value_strn(SELF->orig, SELF->norig); return 0; }
SPRIG_FN(m_string) {
  (void)args, (void)n;
  buf_t b = BUF_INIT;
  if (semver_format(&b, SELF)) return buf_free(&b), TPL_ENOMEM;
  return sprig__ret_buf(c, &b, out);
}

static int other(tpl_call_t *c, const tpl_value_t *a, const semver_t **o) {
  if (a->kind == TPL_OBJECT && a->u.obj->type == &sv_ptr_type) {
    *o = a->u.obj->self;
    return 0;
  }
  if (a->kind == TPL_INVALID || a->kind == TPL_NIL) return tpl_call_errorf(c, SPRIG_NIL_DEREF);
  /* (Go rejects other types before the call, in the executor's argument check.) */
  buf_t t = BUF_INIT;
  tpl_value_type_name(a, &t);
  int rc = tpl_call_errorf(c, "wrong type for value; expected *semver.Version; got %.*s", (int)t.len,
                           t.data ? t.data : "");
  buf_free(&t);
  return rc;
}

#define CMP_METHOD(name, expr)                                                                                        \
  SPRIG_FN(name) {                                                                                                    \
    (void)n;                                                                                                          \
    const semver_t *o;                                                                                                    \
    int rc = other(c, &args[0], &o);                                                                                  \
    if (rc) return rc;                                                                                                \
    int d = semver_compare(SELF, o);                                                                                      \
    *out = expr;                                                                                                      \
    return 0;                                                                                                         \
  }
CMP_METHOD(m_compare, tpl_value_int(d))
CMP_METHOD(m_lt, tpl_value_bool(d < 0))
CMP_METHOD(m_le, tpl_value_bool(d <= 0))
CMP_METHOD(m_gt, tpl_value_bool(d > 0))
CMP_METHOD(m_ge, tpl_value_bool(d >= 0))
CMP_METHOD(m_eq, tpl_value_bool(d == 0))

/* IncPatch/IncMinor/IncMajor return a semver.Version (not a pointer). */
static int inc(tpl_call_t *c, int which, tpl_value_t *out) {
  semver_t v = *SELF;
  bool had_pre = v.npre != 0;
  v.npre = v.nmeta = 0;
  v.pre = v.meta = "";
  if (which == 0) {
    if (!had_pre) {
      if (v.patch == UINT64_MAX) return tpl_call_errorf(c, "patch version increment would overflow uint64");
      v.patch++;
    }
  } else if (which == 1) {
    if (v.minor == UINT64_MAX) return tpl_call_errorf(c, "minor version increment would overflow uint64");
    v.minor++;
    v.patch = 0;
  } else {
    if (v.major == UINT64_MAX) return tpl_call_errorf(c, "major version increment would overflow uint64");
    v.major++;
    v.minor = v.patch = 0;
  }
  buf_t b = BUF_INIT;
  if (SELF->norig && SELF->orig[0] == 'v' && buf_putc(&b, 'v')) return TPL_ENOMEM;
  if (semver_format(&b, &v)) return buf_free(&b), TPL_ENOMEM;
  tpl_value_t s;
  int rc = sprig__ret_buf(c, &b, &s);
  if (rc) return rc;
  v.orig = s.u.s.p;
  v.norig = s.u.s.n;
  return sv_new_obj(c, &v, false, out);
}
SPRIG_FN(m_incpatch) { (void)args, (void)n; return inc(c, 0, out); }
SPRIG_FN(m_incminor) { (void)args, (void)n; return inc(c, 1, out); }
SPRIG_FN(m_incmajor) { (void)args, (void)n; return inc(c, 2, out); }

static const tpl_func_t sv_methods[] = {
    {"Major", "", m_major, NULL, "func() uint64"},
    {"Minor", "", m_minor, NULL, "func() uint64"},
    {"Patch", "", m_patch, NULL, "func() uint64"},
    {"Prerelease", "", m_pre, NULL, "func() string"},
    {"Metadata", "", m_meta, NULL, "func() string"},
    {"String", "", m_string, NULL, "func() string"},
    {"IncPatch", "", m_incpatch, NULL, "func() semver.Version"},
    {"IncMinor", "", m_incminor, NULL, "func() semver.Version"},
    {"IncMajor", "", m_incmajor, NULL, "func() semver.Version"},
    /* pointer-receiver methods: only on *semver.Version */
    {"Original", "", m_orig, NULL, "func() string"},
    {"Compare", "a", m_compare, NULL, "func(*semver.Version) int"},
    {"LessThan", "a", m_lt, NULL, "func(*semver.Version) bool"},
    {"LessThanEqual", "a", m_le, NULL, "func(*semver.Version) bool"},
    {"GreaterThan", "a", m_gt, NULL, "func(*semver.Version) bool"},
    {"GreaterThanEqual", "a", m_ge, NULL, "func(*semver.Version) bool"},
    {"Equal", "a", m_eq, NULL, "func(*semver.Version) bool"},
};
#define SV_NVAL 9

static const tpl_func_t *sv_method_ptr(void *self, const char *name) {
  (void)self;
  for (size_t i = 0; i < sizeof sv_methods / sizeof sv_methods[0]; i++)
    if (!strcmp(sv_methods[i].name, name)) return &sv_methods[i];
  return NULL;
}
static const tpl_func_t *sv_method_val(void *self, const char *name) {
  (void)self;
  for (size_t i = 0; i < SV_NVAL; i++)
    if (!strcmp(sv_methods[i].name, name)) return &sv_methods[i];
  return NULL;
}
static int sv_format(void *self, buf_t *out) { return semver_format(out, self); }

static const tpl_type_t sv_ptr_type = {"*semver.Version", NULL, sv_method_ptr, sv_format};
static const tpl_type_t sv_val_type = {"semver.Version", NULL, sv_method_val, sv_format};

const tpl_func_t sprig__semver_fns[] = {
    {"semver", "s", f_semver, NULL, "func(string) (*semver.Version, error)"},
    {"semverCompare", "ss", f_semver_compare, NULL, "func(string, string) (bool, error)"},
};
const size_t sprig__semver_nfns = sizeof sprig__semver_fns / sizeof sprig__semver_fns[0];

