/* Helm's toToml and mustToToml: BurntSushi/toml v1.6.0's Encoder (two-space
 * Indent) on template values, byte for byte: key/value pairs before
 * sub-tables, keys sorted bytewise, [table] headers with a blank line before
 * top-level ones, [[array of tables]], inline tables for maps inside mixed
 * arrays (with the library's trailing ", " after a skipped nil), quoting of
 * non-bare keys, its string escaping, floats with ".0" added, and its error
 * texts. (fromToml, the decoder, is not here yet.) */
#include <math.h>
#include <string.h>

#include "helm/template/sprig_internal.h"

typedef struct {
  buf_t *out;
  bool written;
  int err; /* 0, 1 (message in msg) or TPL_ENOMEM */
  buf_t msg;
  bool panic; /* a Go runtime/reflect panic rather than a toml error */
} te_t;

typedef struct {
  const char **k;
  size_t *n;
  size_t len;
} tkey_t;

static void w(te_t *e, const char *s, size_t n) {
  if (!e->err && buf_append(e->out, s, n)) e->err = TPL_ENOMEM;
  e->written = true;
}
static void ws(te_t *e, const char *s) { w(e, s, strlen(s)); }
static void newline(te_t *e) {
  if (e->written) ws(e, "\n");
}
static void fail(te_t *e, const char *m, bool panic) {
  if (e->err) return;
  e->err = 1;
  e->panic = panic;
  buf_puts(&e->msg, m);
}

static void quoted(te_t *e, const char *s, size_t n) {
  ws(e, "\"");
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    char t[8];
    switch (c) {
    case '"': ws(e, "\\\""); break;
    case '\\': ws(e, "\\\\"); break;
    case '\b': ws(e, "\\b"); break;
    case '\t': ws(e, "\\t"); break;
    case '\n': ws(e, "\\n"); break;
    case '\f': ws(e, "\\f"); break;
    case '\r': ws(e, "\\r"); break;
    default:
      if (c < 0x20 || c == 0x7f) {
        snprintf(t, sizeof t, "\\u%04x", c);
        ws(e, t);
      } else {
        w(e, (const char *)&s[i], 1);
      }
    }
  }
  ws(e, "\"");
}

static bool bare(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
      return false;
  }
  return true;
}

static void key_piece(te_t *e, const char *s, size_t n) {
  if (n == 0) ws(e, "\"\"");
  else if (bare(s, n)) w(e, s, n);
  else quoted(e, s, n);
}

static void key_string(te_t *e, const tkey_t *k) {
  for (size_t i = 0; i < k->len; i++) {
    if (i) ws(e, ".");
    key_piece(e, k->k[i], k->n[i]);
  }
}

static void indent(te_t *e, const tkey_t *k) {
  for (size_t i = 1; i < k->len; i++) ws(e, "  ");
}

/* Kinds of tomlTypeOfGo. */
enum { TT_NIL, TT_SCALAR, TT_ARRAY, TT_HASH, TT_ARRAY_HASH };

static bool is_marshaler_obj(const tpl_value_t *v, bool *is_time, bool *is_dur) {
  buf_t t = BUF_INIT;
  tpl_value_type_name(v, &t);
  *is_time = t.len == 9 && memcmp(t.data, "time.Time", 9) == 0;
  *is_dur = t.len == 13 && memcmp(t.data, "time.Duration", 13) == 0;
  buf_free(&t);
  return !*is_dur;
}

static int type_of(te_t *e, const tpl_value_t *v) {
  switch (v->kind) {
  case TPL_INVALID:
  case TPL_NIL: return TT_NIL;
  case TPL_LIST: {
    if (!v->u.list) return TT_NIL;
    if (v->u.list->len == 0) return TT_ARRAY;
    bool all = true;
    for (size_t i = 0; i < v->u.list->len; i++) {
      tpl_value_t it = tpl_list_at(v->u.list, i);
      it = sprig__elem(v, &it);
      int t = type_of(e, &it);
      if (t == TT_NIL) {
        fail(e, "toml: cannot encode array with nil element", false);
        return TT_ARRAY;
      }
      if (t != TT_HASH) all = false;
    }
    return all ? TT_ARRAY_HASH : TT_ARRAY;
  }
  case TPL_MAP: return v->u.map ? TT_HASH : TT_NIL;
  case TPL_OBJECT: {
    bool ti, du;
    if (is_marshaler_obj(v, &ti, &du) || du) return TT_SCALAR;
    return TT_HASH;
  }
  default: return TT_SCALAR;
  }
}

static void element(te_t *e, const tpl_value_t *v);

static void map_body(te_t *e, const tkey_t *key, const tpl_map_t *m, bool inline_);

static void array_elem(te_t *e, const tpl_value_t *v) {
  ws(e, "[");
  const tpl_list_t *l = v->u.list;
  for (size_t i = 0; l && i < l->len && !e->err; i++) {
    tpl_value_t it = tpl_list_at(l, i);
    it = sprig__elem(v, &it);
    element(e, &it);
    if (i != l->len - 1) ws(e, ", ");
  }
  ws(e, "]");
}

static void element(te_t *e, const tpl_value_t *v) {
  char b[64];
  switch (v->kind) {
  case TPL_INVALID:
  case TPL_NIL: fail(e, "reflect: call of reflect.Value.Type on zero Value", true); return;
  case TPL_STRING: quoted(e, v->u.s.p, v->u.s.n); return;
  case TPL_BOOL: ws(e, v->u.b ? "true" : "false"); return;
  case TPL_INT:
  case TPL_INT64:
    snprintf(b, sizeof b, "%lld", (long long)v->u.i);
    ws(e, b);
    return;
  case TPL_UINT64:
    snprintf(b, sizeof b, "%llu", (unsigned long long)v->u.u);
    ws(e, b);
    return;
  case TPL_FLOAT64: {
    double f = v->u.f;
    if (isnan(f) || isinf(f)) {
      if (signbit(f)) ws(e, "-");
      ws(e, isnan(f) ? "nan" : "inf");
      return;
    }
    buf_t t = BUF_INIT;
    tpl_fmt_float(&t, f, 'g', -1);
    bool dec = t.data && (memchr(t.data, 'e', t.len) || memchr(t.data, '.', t.len));
    if (!dec) buf_puts(&t, ".0");
    w(e, t.data, t.len);
    buf_free(&t);
    return;
  }
  case TPL_LIST: array_elem(e, v); return;
  case TPL_MAP:
    if (!v->u.map) {
      ws(e, "{}");
      return;
    }
    map_body(e, NULL, v->u.map, true);
    return;
  case TPL_OBJECT: {
    bool ti, du;
    buf_t t = BUF_INIT;
    bool num;
    is_marshaler_obj(v, &ti, &du);
    if (du) {
      tpl_fmt_value(&t, v);
      quoted(e, t.data ? t.data : "", t.len);
    } else if (sprig__object_marshal(v, &t, &num)) {
      if (ti) w(e, t.data ? t.data : "", t.len);
      else quoted(e, t.data ? t.data : "", t.len);
    } else {
      ws(e, "{}");
    }
    buf_free(&t);
    return;
  }
  default: {
    buf_t m = BUF_INIT;
    buf_puts(&m, "unexpected type: ");
    tpl_value_type_name(v, &m);
    fail(e, m.data, false);
    buf_free(&m);
  }
  }
}

static void key_value(te_t *e, const tkey_t *key, const tpl_value_t *v, bool inline_) {
  if (key->len == 0) {
    element(e, v);
    return;
  }
  indent(e, key);
  key_piece(e, key->k[key->len - 1], key->n[key->len - 1]);
  ws(e, " = ");
  element(e, v);
  if (!inline_) newline(e);
}

static void encode(te_t *e, const tkey_t *key, const tpl_value_t *v, int depth);

static void add_key(tkey_t *out, const tkey_t *k, const char *s, size_t n, const char **kb, size_t *nb) {
  for (size_t i = 0; i < k->len; i++) kb[i] = k->k[i], nb[i] = k->n[i];
  kb[k->len] = s;
  nb[k->len] = n;
  out->k = kb;
  out->n = nb;
  out->len = k->len + 1;
}

static void map_body(te_t *e, const tkey_t *key, const tpl_map_t *m, bool inline_) {
  const tpl_map_entry_t **ents = calloc(m->len + 1, sizeof *ents);
  bool *sub = calloc(m->len + 1, sizeof *sub);
  if (!ents || !sub) {
    free(ents);
    free(sub);
    e->err = TPL_ENOMEM;
    return;
  }
  tpl_value_t mv = {.kind = TPL_MAP};
  mv.u.map = (tpl_map_t *)m;
  size_t nsub = 0;
  for (size_t i = 0; i < m->len; i++) {
    ents[i] = &m->ents[i];
    tpl_value_t it = sprig__elem(&mv, &m->ents[i].val);
    int t = type_of(e, &it);
    sub[i] = t == TT_HASH || t == TT_ARRAY_HASH;
    nsub += sub[i];
  }
  /* sort.Slice by key (bytewise); keys are unique. */
  for (size_t i = 1; i < m->len; i++) {
    const tpl_map_entry_t *x = ents[i];
    bool xs = sub[i];
    size_t j = i;
    while (j > 0) {
      const tpl_map_entry_t *y = ents[j - 1];
      size_t mn = x->klen < y->klen ? x->klen : y->klen;
      int c = memcmp(x->key, y->key, mn);
      if (c > 0 || (c == 0 && x->klen >= y->klen)) break;
      ents[j] = ents[j - 1];
      sub[j] = sub[j - 1];
      j--;
    }
    ents[j] = x;
    sub[j] = xs;
  }
  if (inline_) ws(e, "{");
  tkey_t empty = {0};
  if (!key) key = &empty;
  const char **kb = malloc((key->len + 1) * sizeof *kb);
  size_t *nb = malloc((key->len + 1) * sizeof *nb);
  if (!kb || !nb) e->err = TPL_ENOMEM;
  for (int pass = 0; pass < 2 && !e->err; pass++) {
    size_t total = pass == 0 ? m->len - nsub : nsub, idx = 0;
    bool trail = pass == 0 && nsub > 0;
    for (size_t i = 0; i < m->len && !e->err; i++) {
      if (sub[i] != (pass == 1)) continue;
      size_t my = idx++;
      tpl_value_t it = sprig__elem(&mv, &ents[i]->val);
      if (it.kind == TPL_NIL || it.kind == TPL_INVALID || (it.kind == TPL_LIST && !it.u.list) ||
          (it.kind == TPL_MAP && !it.u.map))
        continue;
      tkey_t k;
      if (inline_) {
        tkey_t one = {0};
        add_key(&k, &one, ents[i]->key, ents[i]->klen, kb, nb);
        key_value(e, &k, &it, true);
        if (trail || my != total - 1) ws(e, ", ");
      } else {
        add_key(&k, key, ents[i]->key, ents[i]->klen, kb, nb);
        encode(e, &k, &it, 0);
      }
    }
  }
  if (inline_) ws(e, "}");
  free(kb);
  free(nb);
  free(ents);
  free(sub);
}

static void encode(te_t *e, const tkey_t *key, const tpl_value_t *v, int depth) {
  if (e->err) return;
  if (depth > 10000) {
    fail(e, "runtime: goroutine stack exceeds 1000000000-byte limit", true);
    return;
  }
  switch (v->kind) {
  case TPL_INVALID:
  case TPL_NIL: fail(e, "reflect: call of reflect.Value.Type on zero Value", true); return;
  case TPL_LIST: {
    if (!v->u.list) return;
    int t = type_of(e, v);
    if (e->err) return;
    if (t != TT_ARRAY_HASH) {
      key_value(e, key, v, false);
      return;
    }
    if (key->len == 0) {
      fail(e, "toml: top-level values must be Go maps or structs", false);
      return;
    }
    for (size_t i = 0; i < v->u.list->len && !e->err; i++) {
      tpl_value_t it = tpl_list_at(v->u.list, i);
      it = sprig__elem(v, &it);
      newline(e);
      indent(e, key);
      ws(e, "[[");
      key_string(e, key);
      ws(e, "]]");
      newline(e);
      map_body(e, key, it.u.map, false);
    }
    return;
  }
  case TPL_MAP:
    if (!v->u.map) return;
    if (key->len == 1) newline(e);
    if (key->len > 0) {
      indent(e, key);
      ws(e, "[");
      key_string(e, key);
      ws(e, "]");
      newline(e);
    }
    map_body(e, key, v->u.map, false);
    return;
  case TPL_OBJECT: {
    bool ti, du;
    if (!is_marshaler_obj(v, &ti, &du) && !du) {
      tpl_map_t empty = {0};
      map_body(e, key, &empty, false);
      return;
    }
    key_value(e, key, v, false);
    return;
  }
  case TPL_FUNC:
  case TPL_COMPLEX128: {
    buf_t m = BUF_INIT;
    buf_puts(&m, "toml: unsupported type for key '");
    te_t tmp = {.out = &m};
    key_string(&tmp, key);
    buf_puts(&m, "'");
    fail(e, m.data, false);
    buf_free(&m);
    return;
  }
  default: key_value(e, key, v, false); return;
  }
}

/* 0 (out holds the TOML), 1 (err holds the toml error text), 2 (a Go panic
 * that is not a toml error; err holds its text) or TPL_ENOMEM. */
static int toml_encode(const tpl_value_t *v, buf_t *out, buf_t *err) {
  te_t e = {.out = out};
  tkey_t root = {0};
  encode(&e, &root, v, 0);
  int rc = e.err == TPL_ENOMEM ? TPL_ENOMEM : e.err ? (e.panic ? 2 : 1) : 0;
  if (rc == 1 || rc == 2) buf_append(err, e.msg.data, e.msg.len);
  buf_free(&e.msg);
  return rc;
}

SPRIG_FN(f_totoml) {
  (void)n;
  buf_t b = BUF_INIT, err = BUF_INIT;
  tpl_value_t v = sprig__arg(&args[0]);
  int rc = toml_encode(&v, &b, &err);
  if (rc == TPL_ENOMEM) {
    buf_free(&b);
    buf_free(&err);
    return rc;
  }
  if (rc == 2) {
    rc = tpl_call_errorf(c, "%.*s", (int)err.len, err.data ? err.data : "");
    buf_free(&b);
    buf_free(&err);
    return rc;
  }
  if (rc == 1) {
    buf_free(&b);
    return sprig__ret_buf(c, &err, out);
  }
  buf_free(&err);
  return sprig__ret_buf(c, &b, out);
}

SPRIG_FN(f_musttotoml) {
  (void)n;
  buf_t b = BUF_INIT, err = BUF_INIT;
  tpl_value_t v = sprig__arg(&args[0]);
  int rc = toml_encode(&v, &b, &err);
  if (rc == TPL_ENOMEM) {
    buf_free(&b);
    buf_free(&err);
    return rc;
  }
  if (rc) {
    rc = tpl_call_errorf(c, "%.*s", (int)err.len, err.data ? err.data : "");
    buf_free(&b);
    buf_free(&err);
    return rc;
  }
  buf_free(&err);
  return sprig__ret_buf(c, &b, out);
}

const tpl_func_t sprig__toml_fns[] = {
    {"toToml", "a", f_totoml, NULL, "func(interface {}) string"},
    {"mustToToml", "a", f_musttotoml, NULL, "func(interface {}) string"},
};
const size_t sprig__toml_nfns = sizeof sprig__toml_fns / sizeof sprig__toml_fns[0];
