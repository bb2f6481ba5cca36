/* Shared pieces of the Sprig functions: Go's strconv parsing, spf13/cast's
 * conversions, Sprig's strval/empty, reflect.DeepEqual, kinds, deep copies. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/b64.h"
#include "helm/template/sprig_internal.h"

int sprig__ret_str(tpl_call_t *c, const char *p, size_t n, tpl_value_t *out) {
  *out = tpl_value_str_copy(tpl_call_arena(c), p ? p : "", n);
  return out->kind == TPL_INVALID ? TPL_ENOMEM : 0;
}

size_t sprig__enc_max(tpl_call_t *c) {
  /* half the room: the encoder's buffer doubles as it grows, so its capacity may be twice its length */
  size_t room = tpl_call_room(c);
  return room == SIZE_MAX ? 0 : room > 2 ? room / 2 : 1;
}

int sprig__ret_buf(tpl_call_t *c, buf_t *b, tpl_value_t *out) {
  if (b->len >= 4096) {
    /* A big result (toJson/toYaml of the values, ...) is handed to the arena, cut to its length,
     * instead of copied. */
    char *p = realloc(b->data, b->len + 1);
    if (p) b->data = p, b->cap = b->len + 1;
    if (tpl_arena_adopt(tpl_call_arena(c), b->data, b->len + 1) == 0) {
      *out = tpl_value_strn(b->data, b->len);
      b->data = NULL;
      b->len = b->cap = 0;
      return 0;
    }
  }
  int rc = sprig__ret_str(c, b->data, b->len, out);
  buf_free(b);
  return rc;
}

int sprig__strval(buf_t *out, const tpl_value_t *v) {
  if (v->kind == TPL_STRING) return buf_append(out, v->u.s.p, v->u.s.n);
  if (tpl_value_is_bytes(v)) { /* []byte: its bytes as text */
    const tpl_list_t *l = v->u.list;
    if (l && l->bytes) return buf_append(out, l->bytes, l->len);
    for (size_t i = 0; l && i < l->len; i++)
      if (buf_putc(out, (char)l->items[i].u.u)) return TPL_ENOMEM;
    return 0;
  }
  if (v->kind == TPL_INVALID || v->kind == TPL_NIL) return buf_puts(out, "<nil>");
  return tpl_fmt_value(out, v);
}

int sprig__bytes_b64(const tpl_value_t *v, buf_t *out) {
  const tpl_list_t *l = v->u.list;
  size_t n = l ? l->len : 0;
  bool compact = l && l->bytes;
  char *raw = compact ? NULL : malloc(n ? n : 1), *enc = malloc(b64_encoded_len(n) + 1);
  int rc = (compact || raw) && enc ? 0 : TPL_ENOMEM;
  if (!rc) {
    for (size_t i = 0; !compact && i < n; i++) raw[i] = (char)l->items[i].u.u;
    size_t el = b64_encode(compact ? (const char *)l->bytes : raw, n, enc);
    rc = buf_putc(out, '"') || buf_append(out, enc, el) || buf_putc(out, '"') ? TPL_ENOMEM : 0;
  }
  free(raw);
  free(enc);
  return rc;
}

/* ---- strconv ---- */

static int lower(int c) { return c | 0x20; }

static bool underscore_ok(const char *s, size_t n) {
  char saw = '^';
  size_t i = 0;
  if (n >= 1 && (s[0] == '-' || s[0] == '+')) s++, n--;
  bool hex = false;
  if (n >= 2 && s[0] == '0' && (lower(s[1]) == 'b' || lower(s[1]) == 'o' || lower(s[1]) == 'x')) {
    i = 2;
    saw = '0';
    hex = lower(s[1]) == 'x';
  }
  for (; i < n; i++) {
    if ((s[i] >= '0' && s[i] <= '9') || (hex && lower(s[i]) >= 'a' && lower(s[i]) <= 'f')) {
      saw = '0';
      continue;
    }
    if (s[i] == '_') {
      if (saw != '0') return false;
      saw = '_';
      continue;
    }
    if (saw == '_') return false;
    saw = '!';
  }
  return saw != '_';
}

int sprig__parse_uint(const char *s, size_t n, int base, uint64_t *out) {
  *out = 0;
  if (n == 0) return -1;
  const char *s0 = s;
  size_t n0 = n;
  bool base0 = base == 0;
  if (base == 0) {
    base = 10;
    if (s[0] == '0') {
      if (n >= 3 && lower(s[1]) == 'b') base = 2, s += 2, n -= 2;
      else if (n >= 3 && lower(s[1]) == 'o') base = 8, s += 2, n -= 2;
      else if (n >= 3 && lower(s[1]) == 'x') base = 16, s += 2, n -= 2;
      else base = 8, s += 1, n -= 1;
    }
  }
  uint64_t v = 0;
  bool us = false, range = false;
  for (size_t i = 0; i < n; i++) {
    int c = (unsigned char)s[i], d;
    if (c == '_' && base0) {
      us = true;
      continue;
    } else if (c >= '0' && c <= '9') d = c - '0';
    else if (lower(c) >= 'a' && lower(c) <= 'z') d = lower(c) - 'a' + 10;
    else return -1;
    if (d >= base) return -1;
    if (range) continue;
    if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) {
      range = true;
      v = UINT64_MAX;
      continue;
    }
    v = v * (uint64_t)base + (uint64_t)d;
  }
  if (us && !underscore_ok(s0, n0)) return -1;
  *out = v;
  return range ? -2 : 0;
}

int sprig__parse_int(const char *s, size_t n, int base, int64_t *out) {
  *out = 0;
  if (n == 0) return -1;
  bool neg = false;
  const char *p = s;
  size_t m = n;
  if (p[0] == '+' || p[0] == '-') {
    neg = p[0] == '-';
    p++, m--;
  }
  uint64_t u;
  int rc = sprig__parse_uint(p, m, base, &u);
  if (rc == -1) return -1;
  if (rc == -2) {
    *out = neg ? INT64_MIN : INT64_MAX;
    return -2;
  }
  if (!neg && u > (uint64_t)INT64_MAX) {
    *out = INT64_MAX;
    return -2;
  }
  if (neg && u > (uint64_t)INT64_MAX + 1) {
    *out = INT64_MIN;
    return -2;
  }
  *out = neg ? (int64_t)(0 - u) : (int64_t)u;
  return 0;
}

static bool ieq(const char *s, size_t n, const char *w) {
  size_t m = strlen(w);
  if (n != m) return false;
  for (size_t i = 0; i < n; i++)
    if (lower((unsigned char)s[i]) != w[i]) return false;
  return true;
}

int sprig__parse_float(const char *s, size_t n, double *out) {
  *out = 0;
  if (n == 0) return -1;
  size_t i = 0;
  bool neg = false;
  if (s[0] == '+' || s[0] == '-') {
    neg = s[0] == '-';
    i = 1;
  }
  if (ieq(s + i, n - i, "inf") || ieq(s + i, n - i, "infinity")) {
    *out = neg ? -INFINITY : INFINITY;
    return 0;
  }
  if (i == 0 && ieq(s, n, "nan")) {
    *out = NAN;
    return 0;
  }
  /* Validate Go's syntax, copying without underscores for strtod. */
  char small[128];
  char *buf = n < sizeof small ? small : malloc(n + 1);
  if (!buf) return -1;
  size_t w = 0;
  if (neg) buf[w++] = '-';
  bool hex = false, us = false, digits = false, dot = false;
  if (n - i >= 2 && s[i] == '0' && lower(s[i + 1]) == 'x') {
    hex = true;
    buf[w++] = '0';
    buf[w++] = 'x';
    i += 2;
  }
  int rc = 0;
  for (; i < n; i++) {
    char ch = s[i];
    if (ch == '_') {
      us = true;
      continue;
    }
    if (ch == '.') {
      if (dot) break;
      dot = true;
      buf[w++] = ch;
      continue;
    }
    if ((ch >= '0' && ch <= '9') || (hex && lower(ch) >= 'a' && lower(ch) <= 'f')) {
      digits = true;
      buf[w++] = ch;
      continue;
    }
    break;
  }
  if (!digits) rc = -1;
  if (!rc && i < n && ((!hex && lower(s[i]) == 'e') || (hex && lower(s[i]) == 'p'))) {
    buf[w++] = s[i++];
    if (i < n && (s[i] == '+' || s[i] == '-')) buf[w++] = s[i++];
    bool ed = false;
    for (; i < n; i++) {
      if (s[i] == '_') {
        us = true;
        continue;
      }
      if (s[i] < '0' || s[i] > '9') break;
      ed = true;
      buf[w++] = s[i];
    }
    if (!ed) rc = -1;
  } else if (!rc && hex) {
    rc = -1; /* hexadecimal mantissa requires a 'p' exponent */
  }
  if (!rc && i != n) rc = -1;
  if (!rc && us && !underscore_ok(s, n)) rc = -1;
  if (!rc) {
    buf[w] = 0;
    errno = 0;
    double f = strtod(buf, NULL);
    *out = f;
    if (isinf(f)) rc = -2;
  }
  if (buf != small) free(buf);
  return rc;
}

/* ---- cast v1.7.0 ---- */

int64_t sprig__f2i(double f) {
  if (isnan(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0) return INT64_MIN;
  return (int64_t)f;
}

static size_t trim_zero_decimal(const char *s, size_t n) {
  bool found_zero = false;
  for (size_t i = n; i > 0; i--) {
    switch (s[i - 1]) {
    case '.':
      if (found_zero) return i - 1;
      break;
    case '0': found_zero = true; break;
    default: return n;
    }
  }
  return n;
}

int sprig__to_int64(const tpl_value_t *v, int64_t *out) {
  *out = 0;
  switch (v->kind) {
  case TPL_INVALID:
  case TPL_NIL: return 0;
  case TPL_BOOL: *out = v->u.b; return 0;
  case TPL_INT:
  case TPL_INT64: *out = v->u.i; return 0;
  case TPL_UINT64: *out = (int64_t)v->u.u; return 0;
  case TPL_FLOAT64: *out = sprig__f2i(v->u.f); return 0;
  case TPL_STRING: {
    int64_t r;
    if (sprig__parse_int(v->u.s.p, trim_zero_decimal(v->u.s.p, v->u.s.n), 0, &r)) return -1;
    *out = r;
    return 0;
  }
  default: return -1;
  }
}

int sprig__to_float64(const tpl_value_t *v, double *out) {
  *out = 0;
  switch (v->kind) {
  case TPL_INVALID:
  case TPL_NIL: return 0;
  case TPL_BOOL: *out = v->u.b; return 0;
  case TPL_INT:
  case TPL_INT64: *out = (double)v->u.i; return 0;
  case TPL_UINT64: *out = (double)v->u.u; return 0;
  case TPL_FLOAT64: *out = v->u.f; return 0;
  case TPL_STRING: {
    double f;
    if (sprig__parse_float(v->u.s.p, v->u.s.n, &f)) return -1;
    *out = f;
    return 0;
  }
  default: return -1;
  }
}

/* ---- reflection ---- */

bool sprig__empty(const tpl_value_t *v) {
  switch (v->kind) {
  case TPL_INVALID:
  case TPL_NIL: return true;
  case TPL_BOOL: return !v->u.b;
  case TPL_INT:
  case TPL_INT64: return v->u.i == 0;
  case TPL_UINT64: return v->u.u == 0;
  case TPL_FLOAT64: return v->u.f == 0;
  case TPL_STRING: return v->u.s.n == 0;
  case TPL_LIST: return !v->u.list || v->u.list->len == 0;
  case TPL_MAP: return !v->u.map || v->u.map->len == 0;
  case TPL_OBJECT: return false;
  case TPL_FUNC: return false;
  }
  return true;
}

const char *sprig__kind_name(const tpl_value_t *v) {
  switch (v->kind) {
  case TPL_INVALID:
  case TPL_NIL: return "invalid";
  case TPL_BOOL: return "bool";
  case TPL_INT: return "int";
  case TPL_INT64: return "int64";
  case TPL_UINT64: return v->elem == 1 ? "uint8" : "uint64";
  case TPL_FLOAT64: return "float64";
  case TPL_COMPLEX128: return "complex128";
  case TPL_STRING: return "string";
  case TPL_LIST: return "slice";
  case TPL_MAP: return "map";
  case TPL_OBJECT: return "ptr";
  case TPL_FUNC: return "func";
  }
  return "invalid";
}

tpl_value_t sprig__elem(const tpl_value_t *container, const tpl_value_t *item) {
  tpl_value_t r = *item;
  if (r.kind == TPL_INVALID) r.kind = TPL_NIL;
  r.iface = 0;
  (void)container;
  return r;
}

static bool same_type(const tpl_value_t *a, const tpl_value_t *b) {
  if (a->kind != b->kind) return false;
  if (a->kind == TPL_LIST || a->kind == TPL_MAP) {
    if (a->elem != b->elem) return false;
    if (tpl_value_named(a) != tpl_value_named(b)) return false;
  }
  if (a->kind == TPL_UINT64 && a->elem != b->elem) return false;
  return true;
}

static bool deep_eq(const tpl_value_t *a, const tpl_value_t *b, int depth) {
  if (depth > 10000) return false;
  bool an = a->kind == TPL_INVALID || a->kind == TPL_NIL, bn = b->kind == TPL_INVALID || b->kind == TPL_NIL;
  if (an || bn) return an && bn;
  if (!same_type(a, b)) return false;
  switch (a->kind) {
  case TPL_BOOL: return a->u.b == b->u.b;
  case TPL_INT:
  case TPL_INT64: return a->u.i == b->u.i;
  case TPL_UINT64: return a->u.u == b->u.u;
  case TPL_FLOAT64: return a->u.f == b->u.f;
  case TPL_STRING: return a->u.s.n == b->u.s.n && memcmp(a->u.s.p, b->u.s.p, a->u.s.n) == 0;
  case TPL_LIST: {
    const tpl_list_t *x = a->u.list, *y = b->u.list;
    if ((x == NULL) != (y == NULL)) return false;
    if (!x) return true;
    if (x->len != y->len) return false;
    if (x == y) return true;
    if (x->bytes && y->bytes) return !memcmp(x->bytes, y->bytes, x->len);
    for (size_t i = 0; i < x->len; i++) {
      tpl_value_t xi = tpl_list_at(x, i), yi = tpl_list_at(y, i);
      if (!deep_eq(&xi, &yi, depth + 1)) return false;
    }
    return true;
  }
  case TPL_MAP: {
    const tpl_map_t *x = a->u.map, *y = b->u.map;
    if ((x == NULL) != (y == NULL)) return false;
    if (!x) return true;
    if (x->len != y->len) return false;
    if (x == y) return true;
    for (size_t i = 0; i < x->len; i++) {
      const tpl_value_t *o = tpl_map_get(y, x->ents[i].key, x->ents[i].klen);
      if (!o || !deep_eq(&x->ents[i].val, o, depth + 1)) return false;
    }
    return true;
  }
  case TPL_OBJECT: return a->u.obj == b->u.obj || (a->u.obj && b->u.obj && a->u.obj->self == b->u.obj->self);
  case TPL_FUNC: return false;
  }
  return false;
}

bool sprig__deep_equal(const tpl_value_t *a, const tpl_value_t *b) { return deep_eq(a, b, 0); }

static int deep_copy(tpl_arena_t *a, const tpl_value_t *in, tpl_value_t *out, int depth) {
  if (depth > 10000) return TPL_ELIMIT;
  *out = *in;
  if (in->kind == TPL_LIST && in->u.list) {
    const tpl_list_t *l = in->u.list;
    /* a compact []byte is never written in place, so its copy may share the bytes */
    *out = l->bytes ? tpl_value_bytes_ref(a, (const char *)l->bytes, l->len) : tpl_value_list_new(a, (tpl_elem_t)in->elem, l->len);
    if (out->kind == TPL_INVALID) return TPL_ENOMEM;
    out->iface = in->iface;
    out->u.list->type = l->type;
    out->view = in->view;
    for (size_t i = 0; !l->bytes && i < l->len; i++) {
      tpl_value_t c;
      int rc = deep_copy(a, &l->items[i], &c, depth + 1);
      if (rc) return rc;
      if (tpl_list_push(a, out->u.list, c)) return TPL_ENOMEM;
    }
  } else if (in->kind == TPL_MAP && in->u.map) {
    const tpl_map_t *m = in->u.map;
    *out = tpl_value_map_new(a, (tpl_elem_t)in->elem);
    if (out->kind == TPL_INVALID) return TPL_ENOMEM;
    out->iface = in->iface;
    out->u.map->type = m->type; /* copystructure keeps the named type */
    out->view = in->view;
    for (size_t i = 0; i < m->len; i++) {
      tpl_value_t c;
      int rc = deep_copy(a, &m->ents[i].val, &c, depth + 1);
      if (rc) return rc;
      if (tpl_map_set(a, out->u.map, m->ents[i].key, m->ents[i].klen, c)) return TPL_ENOMEM;
    }
  }
  return 0;
}

int sprig__deep_copy(tpl_arena_t *a, const tpl_value_t *in, tpl_value_t *out) { return deep_copy(a, in, out, 0); }
