#include "base/yaml.h"
#include "base/gofloat.h"
#include "base/b64.h"
#include "base/buf.h"
#include "base/strset.h"
#include <errno.h>
#include <stdbool.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define YAML__DEFAULT_ALIAS_NODES 1000000
#define YAML__DEFAULT_ALIAS_BYTES ((size_t)64 << 20)
#define YAML__DEFAULT_DEPTH 500
#define YAML__TAG_PREFIX "tag:yaml.org,2002:"

/* ---------- UTF-8 and Unicode space (Go's utf8.DecodeRune and unicode.IsSpace) ---------- */

static uint32_t yaml__decode_rune(const unsigned char *s, size_t n, size_t *size) {
  unsigned char c = s[0];
  if (c < 0x80) {
    *size = 1;
    return c;
  }
  *size = 1;
  if (c < 0xC2 || c > 0xF4) return 0xFFFD;
  size_t need = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
  if (n < need) return 0xFFFD;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c == 0xE0) lo = 0xA0;
  else if (c == 0xED) hi = 0x9F;
  else if (c == 0xF0) lo = 0x90;
  else if (c == 0xF4) hi = 0x8F;
  if (s[1] < lo || s[1] > hi) return 0xFFFD;
  for (size_t i = 2; i < need; i++)
    if (s[i] < 0x80 || s[i] > 0xBF) return 0xFFFD;
  *size = need;
  if (need == 2) return (uint32_t)(c & 0x1F) << 6 | (s[1] & 0x3F);
  if (need == 3) return (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F);
  return (uint32_t)(c & 0x07) << 18 | (uint32_t)(s[1] & 0x3F) << 12 | (uint32_t)(s[2] & 0x3F) << 6 | (s[3] & 0x3F);
}

int yaml_utf8_is_space(const char *s, size_t n, size_t *size) {
  uint32_t r = yaml__decode_rune((const unsigned char *)s, n, size);
  switch (r) {
  case '\t': case '\n': case '\v': case '\f': case '\r': case ' ': case 0x85: case 0xA0:
  case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
    return 1;
  default:
    return r >= 0x2000 && r <= 0x200A;
  }
}

/* ---------- Helm's SplitManifests ---------- */

static size_t yaml__skip_space(const char *s, size_t i, size_t len) {
  while (i < len) {
    size_t sz;
    if (!yaml_utf8_is_space(s + i, len - i, &sz)) break;
    i += sz;
  }
  return i;
}

static int yaml__push_piece(const char *text, size_t b, size_t e, yaml_span_t **spans, size_t *n, size_t *cap) {
  size_t s = yaml__skip_space(text, b, e);
  if (s == e) return 0; /* only space: dropped */
  if (*n == *cap) {
    size_t nc = *cap ? *cap * 2 : 8;
    yaml_span_t *p = realloc(*spans, nc * sizeof *p);
    if (!p) return -ENOMEM;
    *spans = p;
    *cap = nc;
  }
  (*spans)[*n].offset = s;
  (*spans)[*n].len = e - s;
  (*n)++;
  return 0;
}

int yaml_split_manifests(const char *text, size_t len, yaml_span_t **spans, size_t *nspans) {
  *spans = NULL;
  *nspans = 0;
  size_t cap = 0;
  size_t start = yaml__skip_space(text, 0, len);
  size_t beg = start; /* start of the current piece */
  /* (?m)^ matches at the start of the (trimmed) text or after '\n': each line start is looked at */
  for (size_t i = start; i + 3 <= len;) {
    if (memcmp(text + i, "---", 3) == 0) {
      size_t e = i + 3;
      while (e < len && (text[e] == ' ' || text[e] == '\t')) e++;
      if (yaml__push_piece(text, beg, i, spans, nspans, &cap)) goto nomem;
      beg = e;
      i = e; /* text[e - 1] is '-', ' ' or '\t': the next line start is after a '\n' from here */
    }
    const char *nl = i < len ? memchr(text + i, '\n', len - i) : NULL;
    if (!nl) break;
    i = (size_t)(nl - text) + 1;
  }
  if (yaml__push_piece(text, beg, len, spans, nspans, &cap)) goto nomem;
  return 0;
nomem:
  free(*spans);
  *spans = NULL;
  *nspans = 0;
  return -ENOMEM;
}

/* ---------- Go number formatting ---------- */

/* Go's %e-style with the shortest digits: d[.ddd]e±XX (at least two exponent digits). */
static void yaml__fmt_e(const char *d, int nd, int dp, int neg, char *out, size_t outlen) {
  char mant[40];
  size_t m = 0;
  mant[m++] = d[0];
  if (nd > 1) {
    mant[m++] = '.';
    for (int i = 1; i < nd && m + 1 < sizeof mant; i++) mant[m++] = d[i];
  }
  mant[m] = 0;
  int exp = dp - 1;
  snprintf(out, outlen, "%s%se%c%02d", neg ? "-" : "", mant, exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
}

static void yaml__fmt_f(const char *d, int nd, int dp, int neg, char *out, size_t outlen) {
  size_t o = 0;
  if (neg && o + 1 < outlen) out[o++] = '-';
  if (dp <= 0) {
    if (o + 2 < outlen) { out[o++] = '0'; out[o++] = '.'; }
    for (int i = 0; i < -dp && o + 1 < outlen; i++) out[o++] = '0';
    for (int i = 0; i < nd && o + 1 < outlen; i++) out[o++] = d[i];
  } else {
    for (int i = 0; i < dp && o + 1 < outlen; i++) out[o++] = i < nd ? d[i] : '0';
    if (nd > dp) {
      if (o + 1 < outlen) out[o++] = '.';
      for (int i = dp; i < nd && o + 1 < outlen; i++) out[o++] = d[i];
    }
  }
  out[o] = 0;
}

void yaml_format_float32(double v, char *out, size_t outlen) {
  if (isnan(v)) { snprintf(out, outlen, "NaN"); return; }
  float f = (float)v;
  if (isinf(f)) { snprintf(out, outlen, f > 0 ? "+Inf" : "-Inf"); return; }
  if (f == 0) { snprintf(out, outlen, signbit(f) ? "-0" : "0"); return; }
  char d[32];
  int dp, nd = gofloat_shortest((double)f, 1, d, sizeof d, &dp);
  int exp = dp - 1;
  /* 'g' with the shortest digits decides by precision 6: %e when exp < -4 || exp >= 6. */
  if (exp < -4 || exp >= 6)
    yaml__fmt_e(d, nd, dp, f < 0, out, outlen);
  else
    yaml__fmt_f(d, nd, dp, f < 0, out, outlen);
}

/* ---------- scalar resolution (go-yaml v2 resolve.go) ---------- */

typedef enum { YAML__STR, YAML__NULL, YAML__BOOL, YAML__INT, YAML__UINT, YAML__FLOAT, YAML__MERGE } yaml__kind_t;

typedef struct yaml__scalar_s {
  yaml__kind_t kind;
  int b;
  int64_t i;
  uint64_t u;
  double f;
} yaml__scalar_t;

static int yaml__in(const char *s, const char *const *list) {
  for (; *list; list++)
    if ((*list)[0] == s[0] && strcmp(s, *list) == 0) return 1;
  return 0;
}

/* Go's strconv.ParseUint(s, base0 rules) for an unsigned magnitude; 0 ok, -1 syntax, -2 range. */
static int yaml__parse_mag(const char *s, uint64_t *out) {
  int base = 10;
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) { base = 16; s += 2; }
  else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) { base = 8; s += 2; }
  else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) { base = 2; s += 2; }
  else if (s[0] == '0' && s[1]) { base = 8; s += 1; }
  if (!*s) return -1;
  uint64_t v = 0;
  int overflow = 0;
  for (; *s; s++) {
    int dv;
    char c = *s;
    if (c >= '0' && c <= '9') dv = c - '0';
    else if (c >= 'a' && c <= 'z') dv = c - 'a' + 10;
    else if (c >= 'A' && c <= 'Z') dv = c - 'A' + 10;
    else return -1;
    if (dv >= base) return -1;
    if (v > (UINT64_MAX - (uint64_t)dv) / (uint64_t)base) overflow = 1;
    else v = v * (uint64_t)base + (uint64_t)dv;
  }
  *out = v;
  return overflow ? -2 : 0;
}

/* ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static int yaml__is_yaml_float(const char *s) {
  if (*s == '-' || *s == '+') s++;
  if (*s == '.') {
    s++;
    if (!(*s >= '0' && *s <= '9')) return 0;
    while (*s >= '0' && *s <= '9') s++;
  } else {
    if (!(*s >= '0' && *s <= '9')) return 0;
    while (*s >= '0' && *s <= '9') s++;
    if (*s == '.') {
      s++;
      while (*s >= '0' && *s <= '9') s++;
    }
  }
  if (*s == 'e' || *s == 'E') {
    s++;
    if (*s == '-' || *s == '+') s++;
    if (!(*s >= '0' && *s <= '9')) return 0;
    while (*s >= '0' && *s <= '9') s++;
  }
  return *s == 0;
}

/* strtod for text already validated as a decimal float; overflow (Go's ErrRange) fails. */
static int yaml__parse_float(const char *s, double *out) {
  double v = strtod(s, NULL);
  if (isinf(v)) return -1;
  *out = v;
  return 0;
}

/* Resolves a plain (or resolvable-tagged) scalar value; returns its kind. */
static yaml__kind_t yaml__resolve_plain(const char *in, yaml__scalar_t *sc) {
  static const char *const t_true[] = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", NULL};
  static const char *const t_false[] = {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", NULL};
  static const char *const t_null[] = {"", "~", "null", "Null", "NULL", NULL};
  static const char *const t_nan[] = {".nan", ".NaN", ".NAN", NULL};
  static const char *const t_inf[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", NULL};
  static const char *const t_ninf[] = {"-.inf", "-.Inf", "-.INF", NULL};
  memset(sc, 0, sizeof *sc);
  sc->kind = YAML__STR;
  unsigned char c0 = (unsigned char)in[0];
  char hint = 0;
  if (c0 == 0) hint = 'N';
  else if (c0 == '+' || c0 == '-') hint = 'S';
  else if (c0 >= '0' && c0 <= '9') hint = 'D';
  else if (strchr("yYnNtTfFoO~", c0)) hint = 'M';
  else if (c0 == '.') hint = '.';
  if (!hint) return sc->kind;
  /* the words below are at most 5 bytes long */
  if (strnlen(in, 6) <= 5) {
    if (yaml__in(in, t_true)) { sc->kind = YAML__BOOL; sc->b = 1; return sc->kind; }
    if (yaml__in(in, t_false)) { sc->kind = YAML__BOOL; sc->b = 0; return sc->kind; }
    if (yaml__in(in, t_null)) { sc->kind = YAML__NULL; return sc->kind; }
    if (yaml__in(in, t_nan)) { sc->kind = YAML__FLOAT; sc->f = NAN; return sc->kind; }
    if (yaml__in(in, t_inf)) { sc->kind = YAML__FLOAT; sc->f = INFINITY; return sc->kind; }
    if (yaml__in(in, t_ninf)) { sc->kind = YAML__FLOAT; sc->f = -INFINITY; return sc->kind; }
  }
  if (hint == '.') {
    double f;
    if (yaml__is_yaml_float(in) && yaml__parse_float(in, &f) == 0) { sc->kind = YAML__FLOAT; sc->f = f; }
    return sc->kind;
  }
  if (hint != 'D' && hint != 'S') return sc->kind;
  /* Underscores are dropped before number parsing. */
  size_t n = strlen(in);
  char small[64];
  char *plain = n < sizeof small ? small : malloc(n + 1);
  if (!plain) return sc->kind; /* treated as a string; only for absurdly long digit runs */
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (in[i] != '_') plain[k++] = in[i];
  plain[k] = 0;
  const char *m = plain;
  int neg = 0, sign = 0;
  if (*m == '+' || *m == '-') { neg = *m == '-'; sign = 1; m++; }
  uint64_t mag;
  int r = yaml__parse_mag(m, &mag);
  if (r == 0) {
    if (!neg && mag <= (uint64_t)INT64_MAX) { sc->kind = YAML__INT; sc->i = (int64_t)mag; }
    else if (neg && mag <= (uint64_t)INT64_MAX + 1) { sc->kind = YAML__INT; sc->i = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag; }
    else if (!neg && !sign) { sc->kind = YAML__UINT; sc->u = mag; } /* ParseUint takes no sign */
    else r = -2;
  }
  if (sc->kind == YAML__STR && yaml__is_yaml_float(plain)) {
    double f;
    if (yaml__parse_float(plain, &f) == 0) { sc->kind = YAML__FLOAT; sc->f = f; }
  }
  if (plain != small) free(plain);
  return sc->kind;
}

/* ---------- the converter ---------- */

typedef struct yaml__anchor_s {
  char *name;
  cJSON *node; /* a copy owned by the table: the tree's own node may be merged away or replaced */
  size_t nodes;
  size_t bytes; /* what a copy of it costs (yaml__tree_bytes) */
} yaml__anchor_t;

typedef struct yaml__ctx_s {
  yaml_parser_t parser;
  yaml__anchor_t *anchors;
  size_t nanchors, capanchors;
  size_t alias_nodes, max_alias_nodes, max_depth;
  size_t alias_bytes, max_alias_bytes;
  int flags;
  int filter_next; /* YAML__KEEP_* for the next node built (YAML_OPT_SIMPLE_HEAD) */
  yaml_error_t *err;
} yaml__ctx_t;

/* Which members of a mapping YAML_OPT_SIMPLE_HEAD builds (the others are only checked). */
enum { YAML__KEEP_ALL = 0, YAML__KEEP_ROOT, YAML__KEEP_META };

static int yaml__fail(yaml__ctx_t *c, int code, const yaml_mark_t *mark, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int yaml__fail(yaml__ctx_t *c, int code, const yaml_mark_t *mark, const char *fmt, ...) {
  if (!c->err) return code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->err->problem, sizeof c->err->problem, fmt, ap);
  va_end(ap);
  c->err->line = mark ? (int)mark->line + 1 : 0;
  c->err->column = mark ? (int)mark->column + 1 : 0;
  if (mark)
    snprintf(c->err->message, sizeof c->err->message, "line %d, column %d: %s", c->err->line, c->err->column,
             c->err->problem);
  else
    snprintf(c->err->message, sizeof c->err->message, "%s", c->err->problem);
  return code;
}

static int yaml__next(yaml__ctx_t *c, yaml_event_t *ev) {
  if (yaml_parser_parse(&c->parser, ev)) return 0;
  yaml_parser_t *p = &c->parser;
  if (p->error == YAML_MEMORY_ERROR) return yaml__fail(c, -ENOMEM, NULL, "out of memory while parsing YAML");
  int rc = yaml__fail(c, -EINVAL, &p->problem_mark, "%s", p->problem ? p->problem : "invalid YAML");
  if (p->context && c->err) {
    yaml_error_t *e = c->err;
    snprintf(e->context, sizeof e->context, "%s", p->context);
    e->context_line = (int)p->context_mark.line + 1;
    e->context_column = (int)p->context_mark.column + 1;
    size_t n = strlen(e->message);
    snprintf(e->message + n, sizeof e->message - n, " (%s that started at line %d, column %d)", e->context,
             e->context_line, e->context_column);
  }
  return rc;
}

/* The bytes a copy of a tree holds: its nodes and their texts. */
static size_t yaml__tree_bytes(const cJSON *n) {
  size_t b = 0;
  for (; n; n = n->next) {
    b += sizeof *n;
    if (n->string) b += strlen(n->string) + 1;
    if (n->valuestring) b += strlen(n->valuestring) + 1;
    if (n->child) b += yaml__tree_bytes(n->child);
  }
  return b;
}

static int yaml__add_anchor(yaml__ctx_t *c, const char *name, cJSON *node, size_t nodes, size_t bytes) {
  if (c->nanchors == c->capanchors) {
    size_t nc = c->capanchors ? c->capanchors * 2 : 8;
    yaml__anchor_t *p = realloc(c->anchors, nc * sizeof *p);
    if (!p) return -ENOMEM;
    c->anchors = p;
    c->capanchors = nc;
  }
  char *dup = strdup(name);
  cJSON *copy = cJSON_Duplicate(node, 1);
  if (!dup || !copy) {
    free(dup);
    cJSON_Delete(copy);
    return -ENOMEM;
  }
  c->anchors[c->nanchors].name = dup;
  c->anchors[c->nanchors].node = copy;
  c->anchors[c->nanchors].nodes = nodes;
  c->anchors[c->nanchors].bytes = bytes;
  c->nanchors++;
  return 0;
}

static const yaml__anchor_t *yaml__find_anchor(const yaml__ctx_t *c, const char *name) {
  for (size_t i = c->nanchors; i-- > 0;)
    if (strcmp(c->anchors[i].name, name) == 0) return &c->anchors[i];
  return NULL;
}

/* Node counts alone do not bound memory: an alias of a long text copies the text. */
static int yaml__charge(yaml__ctx_t *c, size_t nodes, size_t bytes, const yaml_mark_t *mark) {
  if (nodes > c->max_alias_nodes - c->alias_nodes)
    return yaml__fail(c, -E2BIG, mark, "document expands aliases to more than %zu nodes (an alias bomb?)",
                      c->max_alias_nodes);
  if (bytes > c->max_alias_bytes - c->alias_bytes)
    return yaml__fail(c, -E2BIG, mark, "document expands aliases to more than %zu bytes (an alias bomb?)",
                      c->max_alias_bytes);
  c->alias_nodes += nodes;
  c->alias_bytes += bytes;
  return 0;
}

static void yaml__format_int(yaml__scalar_t *sc, char *buf, size_t n) {
  if (sc->kind == YAML__INT) snprintf(buf, n, "%" PRId64, sc->i);
  else snprintf(buf, n, "%" PRIu64, sc->u);
}

/* Makes a number node carrying its string-field text in valuestring. */
static cJSON *yaml__number(double v, const char *text) {
  cJSON *n = cJSON_CreateNumber(v);
  if (!n || !text) return n;
  n->valuestring = strdup(text);
  if (!n->valuestring) {
    cJSON_Delete(n);
    return NULL;
  }
  return n;
}

static int yaml__is_tag(const char *tag, const char *name) {
  size_t pl = sizeof YAML__TAG_PREFIX - 1;
  return tag && strncmp(tag, YAML__TAG_PREFIX, pl) == 0 && strcmp(tag + pl, name) == 0;
}

/* Builds the node for a scalar event; with out NULL only checks it (the same errors), and *kind (when
 * not NULL) gets what it resolved to. */
static int yaml__scalar(yaml__ctx_t *c, const yaml_event_t *ev, cJSON **out, yaml__kind_t *kind) {
  const char *val = (const char *)ev->data.scalar.value;
  size_t vlen = ev->data.scalar.length;
  const char *tag = (const char *)ev->data.scalar.tag;
  if (out && memchr(val, 0, vlen)) /* Go strings hold NUL; C strings cannot (only checked: no matter) */
    return yaml__fail(c, -EINVAL, &ev->start_mark, "scalar contains a NUL character");
  yaml__scalar_t sc;
  memset(&sc, 0, sizeof sc);
  sc.kind = YAML__STR;
  int resolvable = !tag || yaml__is_tag(tag, "str") || yaml__is_tag(tag, "bool") || yaml__is_tag(tag, "int") ||
                   yaml__is_tag(tag, "float") || yaml__is_tag(tag, "null") || yaml__is_tag(tag, "timestamp");
  if (!tag && !ev->data.scalar.plain_implicit) {
    sc.kind = YAML__STR; /* quoted or block scalar */
  } else if (yaml__is_tag(tag, "binary")) {
    unsigned char *bin;
    size_t blen;
    int rc = b64_decode_alloc(val, vlen, &bin, &blen, NULL, 0);
    if (rc == -ENOMEM) return yaml__fail(c, rc, NULL, "out of memory");
    if (rc) return yaml__fail(c, -EINVAL, &ev->start_mark, "!!binary value contains invalid base64 data");
    if (memchr(bin, 0, blen)) {
      free(bin);
      return yaml__fail(c, -EINVAL, &ev->start_mark, "!!binary value contains a NUL byte");
    }
    if (!out) {
      free(bin);
      if (kind) *kind = YAML__STR;
      return 0;
    }
    *out = cJSON_CreateString((char *)bin);
    free(bin);
    return *out ? 0 : yaml__fail(c, -ENOMEM, NULL, "out of memory");
  } else if (resolvable && !yaml__is_tag(tag, "str")) {
    yaml__resolve_plain(val, &sc);
    if (tag && !yaml__is_tag(tag, "timestamp")) {
      int ok = (yaml__is_tag(tag, "bool") && sc.kind == YAML__BOOL) || (yaml__is_tag(tag, "null") && sc.kind == YAML__NULL) ||
               (yaml__is_tag(tag, "int") && (sc.kind == YAML__INT || sc.kind == YAML__UINT)) ||
               (yaml__is_tag(tag, "float") && (sc.kind == YAML__FLOAT || sc.kind == YAML__INT || sc.kind == YAML__UINT));
      if (!ok)
        return yaml__fail(c, -EINVAL, &ev->start_mark, "cannot decode `%.64s` as a !!%s", val,
                          tag + sizeof YAML__TAG_PREFIX - 1);
      if (yaml__is_tag(tag, "float") && sc.kind != YAML__FLOAT) {
        sc.f = sc.kind == YAML__INT ? (double)sc.i : (double)sc.u;
        sc.kind = YAML__FLOAT;
      }
    } else if (tag) {
      sc.kind = YAML__STR; /* timestamps stay strings */
    }
  }
  if (!out) {
    if (sc.kind == YAML__FLOAT && (isnan(sc.f) || isinf(sc.f)))
      return yaml__fail(c, -EINVAL, &ev->start_mark, "`%.32s` (%s) cannot be represented in JSON", val,
                        isnan(sc.f) ? "NaN" : "infinity");
    if (kind) *kind = sc.kind;
    return 0;
  }
  char buf[64];
  switch (sc.kind) {
  case YAML__NULL: *out = cJSON_CreateNull(); break;
  case YAML__BOOL: *out = cJSON_CreateBool(sc.b); break;
  case YAML__INT:
  case YAML__UINT: {
    double d = sc.kind == YAML__INT ? (double)sc.i : (double)sc.u;
    int big = sc.kind == YAML__UINT || sc.i > (INT64_C(1) << 53) || sc.i < -(INT64_C(1) << 53);
    int raw = big && (c->flags & YAML_OPT_BIGINT_RAW);
    if (raw || !(c->flags & YAML_OPT_NO_NUMBER_TEXT)) yaml__format_int(&sc, buf, sizeof buf);
    if (raw) *out = cJSON_CreateRaw(buf);
    else *out = yaml__number(d, c->flags & YAML_OPT_NO_NUMBER_TEXT ? NULL : buf);
    break;
  }
  case YAML__FLOAT:
    if (isnan(sc.f) || isinf(sc.f))
      return yaml__fail(c, -EINVAL, &ev->start_mark, "`%.32s` (%s) cannot be represented in JSON", val,
                        isnan(sc.f) ? "NaN" : "infinity");
    if (c->flags & YAML_OPT_NO_NUMBER_TEXT) {
      *out = yaml__number(sc.f, NULL);
      break;
    }
    yaml_format_float32(sc.f, buf, sizeof buf);
    *out = yaml__number(sc.f, buf);
    break;
  default: *out = cJSON_CreateString(val); break;
  }
  return *out ? 0 : yaml__fail(c, -ENOMEM, NULL, "out of memory");
}

/* Open-addressing set of the keys of one mapping, for O(1) duplicate checks. */
typedef struct yaml__keyset_s {
  struct { uint64_t h; cJSON *item; int explicit_key; } *slots;
  size_t cap, n;
} yaml__keyset_t;

static uint64_t yaml__hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static int yaml__keyset_grow(yaml__keyset_t *ks) {
  size_t nc = ks->cap ? ks->cap * 2 : 16;
  void *ns = calloc(nc, sizeof *ks->slots);
  if (!ns) return -ENOMEM;
  __typeof__(ks->slots) slots = ns;
  for (size_t i = 0; i < ks->cap; i++) {
    if (!ks->slots[i].item) continue;
    size_t j = ks->slots[i].h & (nc - 1);
    while (slots[j].item) j = (j + 1) & (nc - 1);
    slots[j] = ks->slots[i];
  }
  free(ks->slots);
  ks->slots = slots;
  ks->cap = nc;
  return 0;
}

/* Finds key's slot; returns its index (empty slot if absent). */
static size_t yaml__keyset_find(const yaml__keyset_t *ks, const char *key, uint64_t h) {
  size_t j = h & (ks->cap - 1);
  while (ks->slots[j].item && (ks->slots[j].h != h || strcmp(ks->slots[j].item->string, key) != 0))
    j = (j + 1) & (ks->cap - 1);
  return j;
}

/* Puts item (its ->string is the key) into obj: a merged key replaces anything earlier, an explicit key
 * replaces a merged one, and a second explicit key is an error. Takes ownership of item. */
static int yaml__put(yaml__ctx_t *c, cJSON *obj, yaml__keyset_t *ks, cJSON *item, int explicit_key,
                     const yaml_mark_t *mark) {
  if ((ks->n + 1) * 2 > ks->cap && yaml__keyset_grow(ks)) {
    cJSON_Delete(item);
    return yaml__fail(c, -ENOMEM, NULL, "out of memory");
  }
  uint64_t h = yaml__hash(item->string);
  size_t j = yaml__keyset_find(ks, item->string, h);
  if (ks->slots[j].item) {
    if (explicit_key && ks->slots[j].explicit_key && !(c->flags & YAML_OPT_DUP_LAST)) {
      int rc = yaml__fail(c, -EINVAL, mark, "mapping key \"%.100s\" already defined", item->string);
      cJSON_Delete(item);
      return rc;
    }
    cJSON_ReplaceItemViaPointer(obj, ks->slots[j].item, item);
    ks->slots[j].item = item;
    ks->slots[j].explicit_key |= explicit_key;
    return 0;
  }
  cJSON_AddItemToArray(obj, item); /* keeps item->string as the key */
  ks->slots[j].h = h;
  ks->slots[j].item = item;
  ks->slots[j].explicit_key = explicit_key;
  ks->n++;
  return 0;
}

/* Moves every member of src (an object) into obj as merged keys; src is deleted. */
static int yaml__merge_from(yaml__ctx_t *c, cJSON *obj, yaml__keyset_t *ks, cJSON *src, const yaml_mark_t *mark) {
  int rc = 0;
  while (src->child && !rc) {
    cJSON *it = cJSON_DetachItemViaPointer(src, src->child);
    rc = yaml__put(c, obj, ks, it, 0, mark);
  }
  cJSON_Delete(src);
  return rc;
}

static int yaml__node(yaml__ctx_t *c, yaml_event_t *ev, size_t depth, cJSON **out, size_t *count);

/* Converts a key node into its JSON key text (sigs.k8s.io/yaml's rules); sets *merge for `<<`. */
static int yaml__key(yaml__ctx_t *c, yaml_event_t *ev, char **key, int *merge, size_t depth) {
  *merge = 0;
  *key = NULL;
  if (ev->type == YAML_SCALAR_EVENT) {
    const char *v = (const char *)ev->data.scalar.value;
    const char *tag = (const char *)ev->data.scalar.tag;
    if (strcmp(v, "<<") == 0 && ((!tag && ev->data.scalar.plain_implicit) || yaml__is_tag(tag, "merge"))) {
      *merge = 1;
      return 0;
    }
  }
  yaml_mark_t mark = ev->start_mark;
  cJSON *k = NULL;
  size_t cnt = 0;
  int flags = c->flags;
  c->flags &= ~YAML_OPT_NO_NUMBER_TEXT; /* a number key becomes its text */
  int rc = yaml__node(c, ev, depth, &k, &cnt);
  c->flags = flags;
  if (rc) return rc;
  const char *text = NULL;
  if (cJSON_IsString(k)) text = k->valuestring;
  else if (cJSON_IsBool(k)) text = cJSON_IsTrue(k) ? "true" : "false";
  else if (cJSON_IsNumber(k) || cJSON_IsRaw(k)) text = k->valuestring; /* int: decimal; float: 'g' float32 */
  if (!text) {
    cJSON_Delete(k);
    return yaml__fail(c, -EINVAL, &mark, "unsupported map key (%s)",
                      cJSON_IsNull(k) ? "null" : cJSON_IsArray(k) ? "a sequence" : "a mapping");
  }
  *key = strdup(text);
  cJSON_Delete(k);
  if (!*key) return yaml__fail(c, -ENOMEM, NULL, "out of memory");
  return 0;
}

static int yaml__skip(yaml__ctx_t *c, yaml_event_t *ev, size_t depth);

/* Whether a YAML_OPT_SIMPLE_HEAD mapping builds the value of key (case-insensitively, as
 * encoding/json matches struct fields), and the filter for that value. */
static int yaml__head_keeps(int filter, const char *key, int *sub) {
  *sub = YAML__KEEP_ALL;
  if (filter == YAML__KEEP_ROOT) {
    if (!strcasecmp(key, "metadata")) *sub = YAML__KEEP_META;
    return !strcasecmp(key, "apiVersion") || !strcasecmp(key, "kind") || !strcasecmp(key, "metadata");
  }
  return !strcasecmp(key, "name") || !strcasecmp(key, "annotations");
}

static int yaml__mapping(yaml__ctx_t *c, const yaml_event_t *start, size_t depth, int filter, cJSON **out,
                         size_t *count) {
  cJSON *obj = cJSON_CreateObject();
  if (!obj) return yaml__fail(c, -ENOMEM, NULL, "out of memory");
  yaml__keyset_t ks = {0};
  size_t total = 1;
  int rc = 0;
  for (;;) {
    yaml_event_t kev;
    if ((rc = yaml__next(c, &kev))) break;
    if (kev.type == YAML_MAPPING_END_EVENT) {
      yaml_event_delete(&kev);
      break;
    }
    yaml_mark_t kmark = kev.start_mark;
    char *key;
    int merge;
    rc = yaml__key(c, &kev, &key, &merge, depth + 1);
    yaml_event_delete(&kev);
    if (rc) break;
    yaml_event_t vev;
    if ((rc = yaml__next(c, &vev))) {
      free(key);
      break;
    }
    yaml_mark_t vmark = vev.start_mark;
    cJSON *val = NULL;
    size_t vcount = 0;
    int sub = YAML__KEEP_ALL;
    if (filter && !merge && !yaml__head_keeps(filter, key, &sub)) {
      /* not part of the head: checked as the full conversion would, not built */
      free(key);
      rc = yaml__skip(c, &vev, depth + 1);
      yaml_event_delete(&vev);
      if (rc) break;
      continue;
    }
    c->filter_next = sub;
    rc = yaml__node(c, &vev, depth + 1, &val, &vcount);
    yaml_event_delete(&vev);
    if (rc) {
      free(key);
      break;
    }
    total += vcount;
    if (merge) {
      /* go-yaml v2: a mapping, or a sequence of mappings merged last-to-first. */
      if (cJSON_IsObject(val)) {
        rc = yaml__merge_from(c, obj, &ks, val, &vmark);
      } else if (cJSON_IsArray(val)) {
        for (cJSON *e = val->child; e; e = e->next)
          if (!cJSON_IsObject(e)) {
            rc = yaml__fail(c, -EINVAL, NULL, "map merge requires map or sequence of maps as the value");
            break;
          }
        while (!rc && val->child) {
          cJSON *last = val->child->prev; /* cJSON keeps the tail in child->prev */
          rc = yaml__merge_from(c, obj, &ks, cJSON_DetachItemViaPointer(val, last), &vmark);
        }
        cJSON_Delete(val);
      } else {
        cJSON_Delete(val);
        rc = yaml__fail(c, -EINVAL, NULL, "map merge requires map or sequence of maps as the value");
      }
      if (rc) break;
      continue;
    }
    val->string = key; /* owned by val from now on */
    if ((rc = yaml__put(c, obj, &ks, val, 1, &kmark))) break;
  }
  free(ks.slots);
  if (rc) {
    cJSON_Delete(obj);
    return rc;
  }
  (void)start;
  *out = obj;
  *count = total;
  return 0;
}

static int yaml__sequence(yaml__ctx_t *c, size_t depth, cJSON **out, size_t *count) {
  cJSON *arr = cJSON_CreateArray();
  if (!arr) return yaml__fail(c, -ENOMEM, NULL, "out of memory");
  size_t total = 1;
  int rc = 0;
  for (;;) {
    yaml_event_t ev;
    if ((rc = yaml__next(c, &ev))) break;
    if (ev.type == YAML_SEQUENCE_END_EVENT) {
      yaml_event_delete(&ev);
      break;
    }
    cJSON *item = NULL;
    size_t n = 0;
    rc = yaml__node(c, &ev, depth + 1, &item, &n);
    yaml_event_delete(&ev);
    if (rc) break;
    cJSON_AddItemToArray(arr, item);
    total += n;
  }
  if (rc) {
    cJSON_Delete(arr);
    return rc;
  }
  *out = arr;
  *count = total;
  return 0;
}

/* Builds the node that starts with ev (which the caller deletes). */
static int yaml__node(yaml__ctx_t *c, yaml_event_t *ev, size_t depth, cJSON **out, size_t *count) {
  const char *anchor = NULL;
  int rc;
  int filter = c->filter_next;
  c->filter_next = YAML__KEEP_ALL;
  *out = NULL;
  *count = 0;
  if (depth > c->max_depth)
    return yaml__fail(c, -E2BIG, &ev->start_mark, "nesting deeper than %zu levels", c->max_depth);
  switch (ev->type) {
  case YAML_ALIAS_EVENT: {
    const yaml__anchor_t *a = yaml__find_anchor(c, (const char *)ev->data.alias.anchor);
    if (!a)
      return yaml__fail(c, -EINVAL, &ev->start_mark, "unknown anchor '%.100s' referenced",
                        (const char *)ev->data.alias.anchor);
    if ((rc = yaml__charge(c, a->nodes, a->bytes, &ev->start_mark))) return rc;
    *out = cJSON_Duplicate(a->node, 1);
    if (!*out) return yaml__fail(c, -ENOMEM, NULL, "out of memory");
    *count = a->nodes;
    return 0;
  }
  case YAML_SCALAR_EVENT:
    anchor = (const char *)ev->data.scalar.anchor;
    rc = yaml__scalar(c, ev, out, NULL);
    *count = 1;
    break;
  case YAML_SEQUENCE_START_EVENT:
    anchor = (const char *)ev->data.sequence_start.anchor;
    rc = yaml__sequence(c, depth, out, count);
    break;
  case YAML_MAPPING_START_EVENT:
    anchor = (const char *)ev->data.mapping_start.anchor;
    rc = yaml__mapping(c, ev, depth, anchor ? YAML__KEEP_ALL : filter, out, count); /* anchored: whole */
    break;
  default:
    return yaml__fail(c, -EINVAL, &ev->start_mark, "unexpected YAML event %d", (int)ev->type);
  }
  if (rc) return rc;
  /* The anchor's copy is charged like an expansion, so that anchors cannot multiply memory either. */
  size_t bytes = anchor ? yaml__tree_bytes(*out) : 0;
  if (anchor && ((rc = yaml__charge(c, *count, bytes, &ev->start_mark)) ||
                 ((rc = yaml__add_anchor(c, anchor, *out, *count, bytes)) && yaml__fail(c, rc, NULL, "out of memory")))) {
    cJSON_Delete(*out);
    *out = NULL;
    return rc;
  }
  return 0;
}

static const char *yaml__anchor_of(const yaml_event_t *ev) {
  switch (ev->type) {
  case YAML_SCALAR_EVENT: return (const char *)ev->data.scalar.anchor;
  case YAML_SEQUENCE_START_EVENT: return (const char *)ev->data.sequence_start.anchor;
  case YAML_MAPPING_START_EVENT: return (const char *)ev->data.mapping_start.anchor;
  default: return NULL;
  }
}

/* Consumes the node that starts with ev (which the caller deletes) and reports exactly the errors
 * yaml__node would, in the same order, without building it. Anchored nodes, merge values and
 * non-scalar keys are built (and dropped) by yaml__node itself: later aliases need the anchors, and
 * those paths are rare. Only with YAML_OPT_DUP_LAST (repeated keys are then never an error). */
static int yaml__skip(yaml__ctx_t *c, yaml_event_t *ev, size_t depth) {
  int rc;
  if (depth > c->max_depth)
    return yaml__fail(c, -E2BIG, &ev->start_mark, "nesting deeper than %zu levels", c->max_depth);
  if (yaml__anchor_of(ev)) {
    cJSON *tmp = NULL;
    size_t cnt;
    rc = yaml__node(c, ev, depth, &tmp, &cnt);
    cJSON_Delete(tmp);
    return rc;
  }
  switch (ev->type) {
  case YAML_ALIAS_EVENT: {
    const yaml__anchor_t *a = yaml__find_anchor(c, (const char *)ev->data.alias.anchor);
    if (!a)
      return yaml__fail(c, -EINVAL, &ev->start_mark, "unknown anchor '%.100s' referenced",
                        (const char *)ev->data.alias.anchor);
    return yaml__charge(c, a->nodes, a->bytes, &ev->start_mark);
  }
  case YAML_SCALAR_EVENT: return yaml__scalar(c, ev, NULL, NULL);
  case YAML_SEQUENCE_START_EVENT:
    for (;;) {
      yaml_event_t e;
      if ((rc = yaml__next(c, &e))) return rc;
      if (e.type == YAML_SEQUENCE_END_EVENT) {
        yaml_event_delete(&e);
        return 0;
      }
      rc = yaml__skip(c, &e, depth + 1);
      yaml_event_delete(&e);
      if (rc) return rc;
    }
  case YAML_MAPPING_START_EVENT:
    for (;;) {
      yaml_event_t kev, vev;
      if ((rc = yaml__next(c, &kev))) return rc;
      if (kev.type == YAML_MAPPING_END_EVENT) {
        yaml_event_delete(&kev);
        return 0;
      }
      yaml_mark_t kmark = kev.start_mark;
      int merge = 0;
      if (kev.type == YAML_SCALAR_EVENT && !yaml__anchor_of(&kev) && depth + 1 <= c->max_depth) {
        const char *v = (const char *)kev.data.scalar.value;
        const char *tag = (const char *)kev.data.scalar.tag;
        if (strcmp(v, "<<") == 0 && ((!tag && kev.data.scalar.plain_implicit) || yaml__is_tag(tag, "merge"))) {
          merge = 1;
        } else {
          yaml__kind_t k = YAML__STR;
          rc = yaml__scalar(c, &kev, NULL, &k);
          if (!rc && k == YAML__NULL) rc = yaml__fail(c, -EINVAL, &kmark, "unsupported map key (null)");
        }
      } else {
        char *key = NULL;
        rc = yaml__key(c, &kev, &key, &merge, depth + 1);
        free(key);
      }
      yaml_event_delete(&kev);
      if (rc) return rc;
      if ((rc = yaml__next(c, &vev))) return rc;
      if (merge) {
        /* build the merge value to check it as yaml__mapping does */
        cJSON *val = NULL;
        size_t cnt;
        rc = yaml__node(c, &vev, depth + 1, &val, &cnt);
        yaml_event_delete(&vev);
        if (rc) return rc;
        int ok = cJSON_IsObject(val);
        if (cJSON_IsArray(val)) {
          ok = 1;
          for (cJSON *e = val->child; e; e = e->next) ok &= cJSON_IsObject(e);
        }
        cJSON_Delete(val);
        if (!ok) return yaml__fail(c, -EINVAL, NULL, "map merge requires map or sequence of maps as the value");
        continue;
      }
      rc = yaml__skip(c, &vev, depth + 1);
      yaml_event_delete(&vev);
      if (rc) return rc;
    }
  default: return yaml__fail(c, -EINVAL, &ev->start_mark, "unexpected YAML event %d", (int)ev->type);
  }
}

/* ---------- the SimpleHead fast path ----------
 * Most rendered manifests are plain block YAML: mappings and sequences by indentation, one-line
 * scalars, literal blocks. For those the head is read here without libyaml. The scanner accepts only
 * a subset that it can prove libyaml parses and the converter accepts (so the errors cannot differ):
 * printable ASCII without tabs or CR, keys of [A-Za-z0-9_./-] starting with a letter or digit, plain
 * scalars that cannot resolve to NaN/Inf and hold no ": " or " #", one-line quoted scalars with
 * simple escapes, `{}`/`[]`, `|`/`>` blocks, comments, and no anchors, tags, aliases, merges, flow
 * collections, explicit keys or document markers. Values it does not build may also be plain or
 * quoted scalars over several lines, as encoders fold long strings (CRD descriptions): every
 * further line indented past the collection holding the scalar (libyaml asks no more than that of
 * a plain one, and less of a quoted one), a plain one's lines free of what could end it (`: `, ` #`,
 * an indicator first), a quoted one's escapes those of one line or an escaped line break. The head's
 * values must be scalars that resolve to strings; repeated head keys also go to libyaml. Anything
 * else: 0, and the caller runs the full converter. */

enum { YF_MAP = 1, YF_SEQ = 2 };

typedef struct yf_level_s {
  int type, indent, filter; /* filter: YAML__KEEP_ROOT / _META, 3 = annotations, 0 = none */
  int indentless;           /* a sequence at its parent key's indentation */
  cJSON *obj;               /* built object (head levels only) */
  unsigned seen;            /* head keys seen (bits), to leave repeats to libyaml */
} yf_level_t;

#define YF_ANN 3
#define YF_MAX_DEPTH 64

static int yf_keych(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '/' || c == '-';
}

/* After a scalar or flow collection (both line scanners): only spaces, then the line end or a
 * ` #` comment. */
static int yaml__tail_ok(const char *q, const char *e) {
  const char *s = q;
  while (q < e && *q == ' ') q++;
  return q == e || (*q == '#' && q > s);
}

/* The header of a block scalar whose `|` or `>` is at p: an optional chomping indicator (*chomp:
 * '-', '+' or 0; chomp may be NULL), then the tail; indentation indicators are left to libyaml. */
static int yaml__block_header(const char *p, const char *e, int *chomp) {
  const char *q = p + 1;
  int c = 0;
  if (q < e && (*q == '-' || *q == '+')) c = *q++;
  if (chomp) *chomp = c;
  return yaml__tail_ok(q, e);
}

/* The code point of the 4 hex digits at h of a `\u` escape; 0 when not hex, or NUL or a surrogate
 * (which the line scanners leave to libyaml). */
static unsigned yf_hex4(const char *h) {
  unsigned v = 0;
  for (int k = 0; k < 4; k++) {
    char x = h[k];
    int d = x >= '0' && x <= '9' ? x - '0' : x >= 'a' && x <= 'f' ? x - 'a' + 10 : x >= 'A' && x <= 'F' ? x - 'A' + 10 : -1;
    if (d < 0) return 0;
    v = v * 16 + (unsigned)d;
  }
  return v >= 0xD800 && v <= 0xDFFF ? 0 : v;
}

/* A word of a one-line flow collection (yf_flow_words): [A-Za-z0-9_./-], a letter or digit first;
 * the end of it, or NULL. */
static const char *yf_flow_word(const char *q, const char *e) {
  const char *w = q;
  while (q < e && yf_keych((unsigned char)*q)) q++;
  unsigned char c0 = q > w ? (unsigned char)*w : 0;
  return (c0 >= 'a' && c0 <= 'z') || (c0 >= 'A' && c0 <= 'Z') || (c0 >= '0' && c0 <= '9') ? q : NULL;
}

/* A one-line flow sequence of words (`[Ingress, Egress]`) or mapping of `word: word` pairs at p,
 * with spaces around the commas: the end of it, or NULL. */
static const char *yf_flow_words(const char *p, const char *e) {
  char close = *p == '[' ? ']' : '}';
  const char *q = p + 1;
  for (;;) {
    while (q < e && *q == ' ') q++;
    if (!(q = yf_flow_word(q, e))) return NULL;
    if (close == '}') {
      if (e - q < 2 || q[0] != ':' || q[1] != ' ') return NULL;
      q += 2;
      while (q < e && *q == ' ') q++;
      if (!(q = yf_flow_word(q, e))) return NULL;
    }
    while (q < e && *q == ' ') q++;
    if (q < e && *q == close) return q + 1;
    if (q >= e || *q != ',') return NULL;
    q++;
  }
}

/* The text of a one-line scalar starting at p (line ends at e): sets *end past it (and past trailing
 * spaces and a comment). For quoted scalars with want, *val gets the unescaped text (malloc'd).
 * 1 = ok plain, 2 = ok quoted, 3 = `{}` or `[]`, 0 = not in the subset. */
static int yf_scalar(const char *p, const char *e, const char **vend, char **val, int want) {
  *val = NULL;
  const char *q = p;
  int kind;
  if (*p == '"' || *p == '\'') {
    char qc = *p;
    buf_t b = BUF_INIT;
    for (q = p + 1;; q++) {
      if (q >= e) goto bad;
      if (*q == qc) {
        if (qc == '\'' && q + 1 < e && q[1] == '\'') {
          if (want) buf_putc(&b, '\'');
          q++;
          continue;
        }
        break;
      }
      if (qc == '"' && *q == '\\') {
        q++;
        if (q >= e) goto bad;
        char c = *q;
        if (c == 'u') {
          unsigned v;
          if (e - q < 5 || !(v = yf_hex4(q + 1))) goto bad;
          if (want) {
            char u[4];
            size_t n;
            if (v < 0x80) u[0] = (char)v, n = 1;
            else if (v < 0x800) u[0] = (char)(0xC0 | (v >> 6)), u[1] = (char)(0x80 | (v & 0x3F)), n = 2;
            else u[0] = (char)(0xE0 | (v >> 12)), u[1] = (char)(0x80 | ((v >> 6) & 0x3F)), u[2] = (char)(0x80 | (v & 0x3F)), n = 3;
            buf_append(&b, u, n);
          }
          q += 4;
          continue;
        }
        const char *from = "\"\\nrtbf", *to = "\"\\\n\r\t\b\f";
        const char *f = strchr(from, c);
        if (!c || !f) goto bad;
        if (want) buf_putc(&b, to[f - from]);
        continue;
      }
      if (want) buf_putc(&b, *q);
    }
    q++;
    if (want) {
      if (buf_reserve(&b, 0)) goto bad;
      *val = buf_steal(&b);
    }
    buf_free(&b);
    kind = 2;
    goto tail;
  bad:
    buf_free(&b);
    return 0;
  }
  if ((*p == '{' && p + 1 < e && p[1] == '}') || (*p == '[' && p + 1 < e && p[1] == ']')) {
    q = p + 2;
    kind = 3;
    goto tail;
  }
  if (*p == '[' || *p == '{') {
    if (!(q = yf_flow_words(p, e))) return 0;
    kind = 3;
    goto tail;
  }
  /* plain: not an indicator, not something that may resolve to NaN/Inf */
  unsigned char c0 = (unsigned char)*p;
  if (!((c0 >= 'a' && c0 <= 'z') || (c0 >= 'A' && c0 <= 'Z') || (c0 >= '0' && c0 <= '9') || c0 == '/' || c0 == '_' ||
        c0 == '$' || c0 == '(' || c0 == ')' || c0 == '=' || c0 == '^' || c0 == '~' || c0 == ';' || c0 == '<' ||
        c0 == '\\' ||
        (c0 == '-' && p + 1 < e && p[1] != ' ' && p[1] != '.')))
    return 0;
  for (q = p; q < e; q++) {
    if (*q == ':' && (q + 1 >= e || q[1] == ' ')) return 0;
    if (*q == ' ' && q + 1 < e && q[1] == '#') break;
  }
  while (q > p && q[-1] == ' ') q--;
  if (want && !(*val = strndup(p, (size_t)(q - p)))) return 0;
  *vend = q;
  kind = 1;
  goto rest;
tail:
  *vend = q;
rest:
  if (!yaml__tail_ok(q, e)) {
    free(*val);
    *val = NULL;
    return 0;
  }
  return kind;
}

/* A plain text resolves to a string (go-yaml's resolve). */
static int yf_plain_is_str(const char *p, size_t n) {
  /* go-yaml resolves plain text to something else only when it starts with a sign, a digit, '.',
   * '~', '<' or one of the letters of y/yes/n/no/true/false/on/off/null */
  unsigned char c0 = n ? (unsigned char)p[0] : 0;
  if (((c0 >= 'a' && c0 <= 'z') || (c0 >= 'A' && c0 <= 'Z') || c0 == '_' || c0 == '/') && !strchr("yYnNtTfFoO", c0))
    return 1;
  char small[128];
  if (n >= sizeof small) return 0;
  memcpy(small, p, n);
  small[n] = 0;
  yaml__scalar_t sc;
  return yaml__resolve_plain(small, &sc) == YAML__STR;
}

static int yf_head_bit(int filter, const char *k, size_t n) {
  char key[16];
  if (n >= sizeof key) return 0;
  memcpy(key, k, n);
  key[n] = 0;
  if (filter == YAML__KEEP_ROOT)
    return !strcasecmp(key, "apiVersion") ? 1 : !strcasecmp(key, "kind") ? 2 : !strcasecmp(key, "metadata") ? 4 : 0;
  if (filter == YAML__KEEP_META) return !strcasecmp(key, "name") ? 1 : !strcasecmp(key, "annotations") ? 2 : 0;
  return 0;
}

/* Only printable ASCII and '\n' (16 bytes at a time with SSE2: a signed compare below 0x20 also
 * catches the bytes from 0x80). */
static int yf_printable(const char *text, size_t len) {
  size_t i = 0;
#ifdef __SSE2__
  const __m128i sp = _mm_set1_epi8(0x20), nl = _mm_set1_epi8('\n'), del = _mm_set1_epi8(0x7F);
  for (; i + 16 <= len; i += 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(text + i));
    __m128i bad = _mm_or_si128(_mm_andnot_si128(_mm_cmpeq_epi8(v, nl), _mm_cmplt_epi8(v, sp)), _mm_cmpeq_epi8(v, del));
    if (_mm_movemask_epi8(bad)) return 0;
  }
#endif
  for (; i < len; i++) {
    unsigned char c = (unsigned char)text[i];
    if ((c < 0x20 && c != '\n') || c >= 0x7F) return 0;
  }
  return 1;
}

/* A further line c..e of a multi-line plain scalar (indented past its collection): 1 when libyaml
 * reads all of it as more of the scalar. Stricter than libyaml: no indicator first, no `: ` or a
 * final `:` (which would make a key of it), no ` #` (a comment, after which the next line would be
 * an error). */
static int yf_plain_more(const char *c, const char *e) {
  if (strchr("-?:,[]{}#&*!|>'\"%@`", *c)) return 0;
  for (const char *q = c; q < e; q++) {
    if (*q == ':' && (q + 1 == e || q[1] == ' ')) return 0;
    if (*q == ' ' && q + 1 < e && q[1] == '#') return 0;
  }
  return 1;
}

/* A quoted scalar at p that the text goes on past its line (a value yaml_head_fast does not build),
 * in a collection at column parent: the start of the line after the one that closes it, or NULL
 * when outside the subset (a line not indented past parent, an escape the one-line reader refuses,
 * no closing quote, anything but a comment after it). */
static const char *yf_quoted_lines(const char *p, const char *end, int parent) {
  char qc = *p;
  for (const char *q = p + 1;; q++) {
    /* to the next byte that matters: the quote, a line break before it or (double-quoted) an escape */
    const char *nq = memchr(q, qc, (size_t)(end - q));
    const char *stop = memchr(q, '\n', (size_t)((nq ? nq : end) - q));
    if (!stop) stop = nq;
    if (qc == '"' && stop) {
      const char *bs = memchr(q, '\\', (size_t)(stop - q));
      if (bs) stop = bs;
    }
    if (!stop) return NULL;
    q = stop;
    if (*q == '\n') {
      /* blank lines, or lines indented past the collection (so no document marker either) */
      const char *l = q + 1;
      int ind = 0;
      while (l + ind < end && l[ind] == ' ') ind++;
      if (l + ind < end && l[ind] != '\n' && ind <= parent) return NULL;
      continue;
    }
    if (*q == qc) {
      if (qc == '\'' && q + 1 < end && q[1] == '\'') {
        q++;
        continue;
      }
      const char *e = memchr(q, '\n', (size_t)(end - q));
      if (!e) e = end;
      if (!yaml__tail_ok(q + 1, e)) return NULL;
      return e < end ? e + 1 : end;
    }
    /* a backslash in a double-quoted scalar */
    if (q + 1 >= end) return NULL;
    char c = q[1];
    if (c == '\n') continue; /* an escaped line break: the newline is checked next */
    if (c == 'u') {
      if (end - q < 6 || !yf_hex4(q + 2)) return NULL;
      q += 5;
      continue;
    }
    if (!c || !strchr("\"\\nrtbf", c)) return NULL;
    q++;
  }
}

int yaml_head_fast(const char *text, size_t len, cJSON **out) {
  if (!yf_printable(text, len)) return 0;
  yf_level_t st[YF_MAX_DEPTH];
  int n = 0, ok = 0;
  cJSON *root = NULL;
  /* pending: the last line ended in `key:` or `-` with nothing after it */
  int pending = 0, pend_indent = 0, pend_filter = 0, pend_from_map = 0;
  cJSON *pend_obj = NULL;
  /* block scalar: lines more indented than blk_parent belong to it */
  int in_block = 0, blk_parent = 0, blk_indent = 0;
  /* a plain scalar not built: lines indented past plain_parent go on with it */
  int in_plain = 0, plain_parent = 0;
  const char *p = text, *end = text + len;
  while (p < end) {
    const char *e = memchr(p, '\n', (size_t)(end - p));
    if (!e) e = end;
    const char *line = p;
    p = e < end ? e + 1 : end;
    int ind = 0;
    while (line + ind < e && line[ind] == ' ') ind++;
    const char *c = line + ind;
    if (in_plain) {
      if (c == e) continue; /* blank: part of the scalar, or nothing */
      if (*c != '#' && ind > plain_parent) {
        if (!yf_plain_more(c, e)) goto out;
        continue;
      }
      in_plain = 0; /* a comment ends the scalar too */
    }
    if (in_block) {
      if (c == e) {
        if (!blk_indent && ind > 0) goto out; /* leading blank lines with spaces: left to libyaml */
        continue;
      }
      if (!blk_indent) {
        if (ind > blk_parent) {
          blk_indent = ind;
          continue;
        }
      } else if (ind >= blk_indent) {
        continue;
      }
      in_block = 0;
    }
    if (c == e || *c == '#') continue; /* blank or comment */
    if (ind == 0 && e - c >= 3 && (!memcmp(c, "---", 3) || !memcmp(c, "...", 3))) goto out;
    int is_seq = *c == '-' && (c + 1 == e || c[1] == ' ');
    if (pending) {
      int nest = ind > pend_indent || (ind == pend_indent && pend_from_map && is_seq);
      if (nest) {
        if (n == YF_MAX_DEPTH) goto out;
        yf_level_t *l = &st[n++];
        memset(l, 0, sizeof *l);
        l->type = is_seq ? YF_SEQ : YF_MAP;
        l->indent = ind;
        l->indentless = ind == pend_indent;
        if (pend_filter) {
          if (is_seq) goto out;
          l->filter = pend_filter;
          l->obj = pend_obj;
        }
      } else if (pend_filter) {
        goto out; /* metadata / annotations without a mapping */
      }
      pending = 0;
    }
    /* close levels deeper than this line */
    while (n > 0 && (st[n - 1].indent > ind || (st[n - 1].indentless && st[n - 1].indent == ind && !is_seq))) n--;
    if (n == 0) {
      if (root || is_seq) goto out; /* a second root, or a sequence root: libyaml */
      root = cJSON_CreateObject();
      if (!root) goto out;
      yf_level_t *l = &st[n++];
      memset(l, 0, sizeof *l);
      l->type = YF_MAP;
      l->indent = ind;
      l->filter = YAML__KEEP_ROOT;
      l->obj = root;
    }
    yf_level_t *top = &st[n - 1];
    if (top->indent != ind) goto out;
    if (is_seq) {
      if (top->type != YF_SEQ) goto out;
      const char *r = c + 1;
      while (r < e && *r == ' ') r++;
      if (r == e || *r == '#') {
        if (r < e && r[-1] != ' ') goto out;
        pending = 1, pend_indent = ind, pend_filter = 0, pend_from_map = 0, pend_obj = NULL;
        continue;
      }
      if (*r == '-' && (r + 1 == e || r[1] == ' ')) goto out;
      /* `- key: ...` opens a mapping at the key's column; otherwise a scalar item */
      const char *k = r;
      while (k < e && yf_keych((unsigned char)*k)) k++;
      if (k > r && k < e && *k == ':' && (k + 1 == e || k[1] == ' ')) {
        if (n == YF_MAX_DEPTH) goto out;
        yf_level_t *l = &st[n++];
        memset(l, 0, sizeof *l);
        l->type = YF_MAP;
        l->indent = (int)(r - line);
        top = l;
        c = r;
        ind = l->indent;
      } else {
        if (*r == '|' || *r == '>') {
          if (!yaml__block_header(r, e, NULL)) goto out;
          in_block = 1, blk_parent = ind, blk_indent = 0;
          continue;
        }
        const char *ve;
        char *v;
        int sk = yf_scalar(r, e, &ve, &v, 0);
        if (!sk && (*r == '"' || *r == '\'')) {
          if (!(p = yf_quoted_lines(r, end, top->indent))) goto out;
          continue;
        }
        if (!sk) goto out;
        if (sk == 1 && !memchr(ve, '#', (size_t)(e - ve))) in_plain = 1, plain_parent = top->indent;
        continue;
      }
    }
    /* a mapping entry: key, `:`, then a value, a block scalar or nothing */
    if (top->type != YF_MAP) goto out;
    const char *k = c;
    while (k < e && yf_keych((unsigned char)*k)) k++;
    size_t kl = (size_t)(k - c);
    if (!kl || k >= e || *k != ':' || (k + 1 < e && k[1] != ' ')) goto out;
    unsigned char k0 = (unsigned char)c[0];
    if (!((k0 >= 'a' && k0 <= 'z') || (k0 >= 'A' && k0 <= 'Z') || (k0 >= '0' && k0 <= '9'))) goto out;
    if (!yf_plain_is_str(c, kl)) goto out; /* keys such as `true` or `null` */
    const char *r = k + 1;
    while (r < e && *r == ' ') r++;
    int bit = top->filter && top->filter != YF_ANN ? yf_head_bit(top->filter, c, kl) : 0;
    int build = bit || top->filter == YF_ANN;
    if (bit) {
      if (top->seen & (unsigned)bit) goto out; /* repeated: the last one wins, libyaml knows which */
      top->seen |= (unsigned)bit;
    }
    if (r == e || *r == '#') {
      if (r < e && r[-1] != ' ') goto out;
      int sub = top->filter == YAML__KEEP_ROOT && bit == 4 ? YAML__KEEP_META : top->filter == YAML__KEEP_META && bit == 2 ? YF_ANN : 0;
      if (build && !sub) goto out; /* a head string that is null */
      pending = 1, pend_indent = ind, pend_filter = sub, pend_from_map = 1, pend_obj = NULL;
      if (sub) {
        /* the object is made now so that its key keeps the document's spelling */
        if (n == YF_MAX_DEPTH) goto out;
        cJSON *o = cJSON_CreateObject();
        if (!o) goto out;
        char *key = strndup(c, kl);
        if (!key) {
          cJSON_Delete(o);
          goto out;
        }
        o->string = key;
        cJSON_AddItemToArray(top->obj, o);
        pend_obj = o;
      }
      continue;
    }
    if (*r == '|' || *r == '>') {
      if (build || !yaml__block_header(r, e, NULL)) goto out;
      in_block = 1, blk_parent = ind, blk_indent = 0;
      continue;
    }
    const char *ve;
    char *v = NULL;
    int sk = yf_scalar(r, e, &ve, &v, build);
    if (!sk && !build && (*r == '"' || *r == '\'')) {
      if (!(p = yf_quoted_lines(r, end, top->indent))) goto out;
      continue;
    }
    if (!sk) goto out;
    if (!build && sk == 1 && !memchr(ve, '#', (size_t)(e - ve))) in_plain = 1, plain_parent = top->indent;
    if (build) {
      if (sk == 3 || (sk == 1 && !yf_plain_is_str(r, (size_t)(ve - r)))) {
        free(v);
        goto out;
      }
      if (top->filter == YF_ANN) {
        /* annotation keys repeat rarely; a repeat goes to libyaml */
        for (cJSON *it = top->obj->child; it; it = it->next)
          if (strlen(it->string) == kl && !memcmp(it->string, c, kl)) {
            free(v);
            goto out;
          }
      }
      cJSON *s = cJSON_CreateString(v);
      free(v);
      char *key = strndup(c, kl);
      if (!s || !key) {
        cJSON_Delete(s);
        free(key);
        goto out;
      }
      s->string = key;
      cJSON_AddItemToArray(top->obj, s);
    }
  }
  if (pending && pend_filter) goto out; /* `metadata:` at the end: null, left to libyaml */
  if (!root) goto out;
  ok = 1;
out:
  if (!ok) {
    cJSON_Delete(root);
    return 0;
  }
  *out = root;
  return 1;
}

/* ---------- the full-tree fast path ----------
 * Values files (and most YAML that charts carry) are plain block YAML. yaml_tree_fast builds their
 * whole tree without libyaml, exactly as yaml_to_json with YAML_OPT_DUP_LAST would: the same nodes,
 * key order (a repeated key's last value at the first one's place), scalar resolution and number
 * texts. It reads only a subset that it can prove libyaml parses to the same events and the
 * converter accepts, and answers 0 ("not in the subset") for anything else, so that errors always
 * come from libyaml. The subset:
 * - the text: well-formed UTF-8 of characters libyaml allows, without NEL, U+2028/2029 (line breaks to
 *   libyaml), U+FEFF (skipped at line starts) or a CR that does not end a line (CRLF is read as LF);
 *   tabs only in comments, quoted scalars and block scalars past their indentation; no `---`/`...`
 *   line (document markers);
 * - block mappings and sequences by indentation, every line at the column of an open collection
 *   (indentless sequences under a key, `- key: v` opening a mapping at the key's column), comments,
 *   blank lines; `key:`/`-` with nothing after it is null or the collection on the next lines; the
 *   root is a block collection, or nothing (null);
 * - keys: one-line plain scalars (resolved to their JSON text: `on` -> "true", `0x10` -> "16"; not
 *   null, NaN/Inf or `<<`) and quoted scalars, followed by `:` and a space or the line end, under
 *   1000 bytes;
 * - values: one-line plain scalars (not NaN/Inf; no `: ` inside), single- and double-quoted scalars
 *   (no escape that makes NUL or is not libyaml's), one-line flow sequences and mappings, nested or
 *   not (plain items without '#' and with only the ':'s libyaml reads as text, `key: value` pairs in
 *   mappings only, at most a trailing comma), literal and folded block scalars (`|`, `>` and their
 *   `-`/`+` chomping, no indentation indicator), each followed only by spaces and a ` #comment`;
 * - no anchors, aliases, tags, explicit keys, directives, multi-line plain or quoted scalars, and a
 *   nesting depth within the limit. */

#define YT_LINEAR 16  /* mappings with more keys than this find repeats through a hash set */
#define YT_MAX_KEY 1000 /* libyaml forgets a simple key 1024 characters after its start */

typedef struct yt_level_s {
  int type;        /* YF_MAP or YF_SEQ */
  int indent;      /* column of its keys or dashes */
  int indentless;  /* a sequence at its parent key's column */
  size_t depth;    /* of the collection node (root: 0) */
  cJSON *node;
  size_t n;        /* distinct keys or items so far */
  yaml__keyset_t ks; /* mappings past YT_LINEAR keys */
} yt_level_t;

typedef struct yt_s {
  yt_level_t *lv;
  int n, cap;
  size_t max_depth;
  int number_text; /* numbers carry their text (no YAML_OPT_NO_NUMBER_TEXT) */
  /* the last entry was `key:` or `-` with nothing after it: its value is on the next lines */
  int pending, pend_from_map;
  char *pend_key;
  /* a block scalar being read into blk_node (a null node until it is complete) */
  cJSON *blk_node;
  int blk_literal, blk_chomp, blk_parent, blk_indent, blk_max;
  int blk_leading_break, blk_leading_blank;
  size_t blk_trailing;
  buf_t blk;
  /* a root flow collection over several lines (JSON written as YAML): the text's end, past the
   * line ends that yt_flow may cross; NULL: flow collections end on their line */
  const char *flow_end;
} yt_t;

/* Appends item to a cJSON array or object in O(1) (cJSON keeps the tail in child->prev). */
static void yt_append(cJSON *parent, cJSON *item) {
  cJSON *head = parent->child;
  item->next = NULL;
  if (!head) {
    parent->child = item;
    item->prev = item;
    return;
  }
  cJSON *tail = head->prev;
  tail->next = item;
  item->prev = tail;
  head->prev = item;
}

static int yt_keyset_add(yaml__keyset_t *ks, cJSON *item, uint64_t h) {
  if ((ks->n + 1) * 2 > ks->cap && yaml__keyset_grow(ks)) return -1;
  size_t j = yaml__keyset_find(ks, item->string, h);
  ks->slots[j].h = h;
  ks->slots[j].item = item;
  ks->slots[j].explicit_key = 1;
  ks->n++;
  return 0;
}

/* ---- keys shared between nodes (yaml_intern_keys) ----
 * A values file of 20,000 list items has 120,000 keys and a handful of distinct ones. When the
 * calling thread asked for it, the plain keys the tree scanner makes are kept once, in blocks that
 * live to the end of the process (one-shot commands only), and their nodes are marked
 * cJSON_StringIsConst so that cJSON does not free them. */
#define YT_INTERN_MAX 64 /* longer keys are malloc'd as before */
typedef struct yt_iblock_s {
  struct yt_iblock_s *next;
  size_t used;
  char data[16384];
} yt_iblock_t;

static _Thread_local bool yt_intern_on;
static struct {
  strset_t set;
  yt_iblock_t *blocks;
} yt_keys;

static void yt_intern_free(void) {
  strset_free(&yt_keys.set);
  for (yt_iblock_t *b = yt_keys.blocks, *n; b; b = n) {
    n = b->next;
    free(b);
  }
  memset(&yt_keys, 0, sizeof yt_keys);
}

void yaml_intern_keys(void) {
  static bool registered;
  if (!registered && atexit(yt_intern_free) == 0) registered = true;
  if (registered) yt_intern_on = true;
}

static bool yt_is_interned(const char *k) {
  for (const yt_iblock_t *b = yt_keys.blocks; b; b = b->next)
    if (k >= b->data && k < b->data + sizeof b->data) return true;
  return false;
}

static void yt_free_key(char *k) {
  if (k && !yt_is_interned(k)) free(k);
}

/* The shared copy of p[0..n) (n <= YT_INTERN_MAX), or NULL when memory is short. */
static char *yt_intern(const char *p, size_t n) {
  strset_entry_t *e = strset_get(&yt_keys.set, p, n);
  if (!e) return NULL;
  if (e->p) return (char *)e->p;
  yt_iblock_t *b = yt_keys.blocks;
  if (!b || sizeof b->data - b->used < n + 1) {
    if (!(b = malloc(sizeof *b))) return NULL;
    b->used = 0;
    b->next = yt_keys.blocks;
    yt_keys.blocks = b;
  }
  char *s = b->data + b->used;
  memcpy(s, p, n);
  s[n] = 0;
  b->used += n + 1;
  strset_fill(&yt_keys.set, e, s, n);
  return s;
}

/* Puts item (its ->string is the key) into the mapping of l as yaml__put does with
 * YAML_OPT_DUP_LAST: a repeated key's value replaces the earlier one at its place. Takes item. */
static int yt_put(yt_level_t *l, cJSON *item) {
  cJSON *obj = l->node;
  if (l->n < YT_LINEAR) {
    bool shared = item->type & cJSON_StringIsConst; /* kept once (yt_intern): equal only if the same */
    for (cJSON *it = obj->child; it; it = it->next)
      if (shared && (it->type & cJSON_StringIsConst) ? it->string == item->string
                                                     : it->string[0] == item->string[0] && !strcmp(it->string, item->string)) {
        cJSON_ReplaceItemViaPointer(obj, it, item);
        return 0;
      }
    yt_append(obj, item);
    if (++l->n == YT_LINEAR)
      for (cJSON *it = obj->child; it; it = it->next)
        if (yt_keyset_add(&l->ks, it, yaml__hash(it->string))) return -1;
    return 0;
  }
  yaml__keyset_t *ks = &l->ks;
  if ((ks->n + 1) * 2 > ks->cap && yaml__keyset_grow(ks)) {
    cJSON_Delete(item);
    return -1;
  }
  uint64_t h = yaml__hash(item->string);
  size_t j = yaml__keyset_find(ks, item->string, h);
  if (ks->slots[j].item) {
    cJSON_ReplaceItemViaPointer(obj, ks->slots[j].item, item);
    ks->slots[j].item = item;
    return 0;
  }
  yt_append(obj, item);
  ks->slots[j].h = h;
  ks->slots[j].item = item;
  ks->slots[j].explicit_key = 1;
  ks->n++;
  l->n++;
  return 0;
}

/* Adds v to level l: in a mapping under key (malloc'd; owned by v from now on), in a sequence as
 * the next item. Takes v and key; 0 or -1. */
static int yt_add(yt_level_t *l, char *key, cJSON *v) {
  if (!v) {
    yt_free_key(key);
    return -1;
  }
  if (l->type == YF_SEQ) {
    yt_append(l->node, v);
    l->n++;
    return 0;
  }
  v->string = key;
  if (yt_intern_on && yt_is_interned(key)) v->type |= cJSON_StringIsConst;
  return yt_put(l, v);
}

static yt_level_t *yt_push(yt_t *t, int type, int indent, int indentless, size_t depth, cJSON *node) {
  if (t->n == t->cap) {
    int nc = t->cap ? t->cap * 2 : 16;
    yt_level_t *p = realloc(t->lv, (size_t)nc * sizeof *p);
    if (!p) return NULL;
    t->lv = p;
    t->cap = nc;
  }
  yt_level_t *l = &t->lv[t->n++];
  memset(l, 0, sizeof *l);
  l->type = type;
  l->indent = indent;
  l->indentless = indentless;
  l->depth = depth;
  l->node = node;
  return l;
}

static void yt_pop(yt_t *t) {
  free(t->lv[--t->n].ks.slots);
}

/* Whether the text is well-formed UTF-8 of characters that libyaml reads as ordinary ones: printable
 * ASCII, '\n', '\t' (checked where it stands) and '\r' before '\n', and beyond ASCII the code points its reader allows except NEL, U+2028 and U+2029
 * (line breaks to its scanner) and U+FEFF (skipped at the start of a line). Eight bytes at a time
 * while they are printable ASCII. */
static int yt_text_ok(const char *s, size_t len) {
  const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
  size_t i = 0;
  while (i < len) {
    if (len - i >= 8) {
      uint64_t w;
      memcpy(&w, s + i, 8);
      uint64_t del = w ^ (ones * 0x7F);
      if (!((w | ((w - ones * 0x20) & ~w) | ((del - ones) & ~del)) & high)) {
        i += 8;
        continue;
      }
    }
    unsigned char c = (unsigned char)s[i];
    if (c < 0x80) {
      if ((c < 0x20 && c != '\n' && c != '\t' && !(c == '\r' && i + 1 < len && s[i + 1] == '\n')) || c == 0x7F) return 0;
      i++;
      continue;
    }
    size_t n;
    uint32_t r = yaml__decode_rune((const unsigned char *)s + i, len - i, &n);
    if (n == 1 || r < 0xA0 || r == 0x2028 || r == 0x2029 || r == 0xFEFF || r == 0xFFFE || r == 0xFFFF) return 0;
    i += n;
  }
  return 1;
}

/* go-yaml v2's special words (the bools, nulls and NaN/Inf spellings of yaml__resolve_plain) for
 * p[0..n): 1 and *sc set when p is one. */
static int yt_word(const char *p, size_t n, yaml__scalar_t *sc) {
  static const struct { const char *w; unsigned char n, kind, b; } words[] = {
      {"y", 1, YAML__BOOL, 1},     {"Y", 1, YAML__BOOL, 1},     {"yes", 3, YAML__BOOL, 1},   {"Yes", 3, YAML__BOOL, 1},
      {"YES", 3, YAML__BOOL, 1},   {"true", 4, YAML__BOOL, 1},  {"True", 4, YAML__BOOL, 1},  {"TRUE", 4, YAML__BOOL, 1},
      {"on", 2, YAML__BOOL, 1},    {"On", 2, YAML__BOOL, 1},    {"ON", 2, YAML__BOOL, 1},    {"n", 1, YAML__BOOL, 0},
      {"N", 1, YAML__BOOL, 0},     {"no", 2, YAML__BOOL, 0},    {"No", 2, YAML__BOOL, 0},    {"NO", 2, YAML__BOOL, 0},
      {"false", 5, YAML__BOOL, 0}, {"False", 5, YAML__BOOL, 0}, {"FALSE", 5, YAML__BOOL, 0}, {"off", 3, YAML__BOOL, 0},
      {"Off", 3, YAML__BOOL, 0},   {"OFF", 3, YAML__BOOL, 0},   {"~", 1, YAML__NULL, 0},     {"null", 4, YAML__NULL, 0},
      {"Null", 4, YAML__NULL, 0},  {"NULL", 4, YAML__NULL, 0},
  };
  if (n > 5) return 0;
  for (size_t i = 0; i < sizeof words / sizeof *words; i++)
    if (words[i].n == n && words[i].w[0] == p[0] && !memcmp(words[i].w, p, n)) {
      memset(sc, 0, sizeof *sc);
      sc->kind = (yaml__kind_t)words[i].kind;
      sc->b = words[i].b;
      return 1;
    }
  return 0;
}

/* Resolves the plain scalar p[0..n) (n > 0) exactly as yaml__resolve_plain does, without copying
 * it for the common cases: words, decimal integers, texts that cannot be anything but strings. */
static yaml__kind_t yt_resolve(const char *p, size_t n, yaml__scalar_t *sc) {
  unsigned char c0 = (unsigned char)p[0];
  if (c0 >= '0' && c0 <= '9') {
    /* [1-9][0-9]{0,17} or 0: a decimal int64 (a leading 0 is octal, and underscores are dropped:
     * those go the long way) */
    if (n <= 18 && (c0 != '0' || n == 1)) {
      int64_t v = 0;
      size_t i = 0;
      while (i < n && p[i] >= '0' && p[i] <= '9') v = v * 10 + (p[i++] - '0');
      if (i == n) {
        memset(sc, 0, sizeof *sc);
        sc->kind = YAML__INT;
        sc->i = v;
        return sc->kind;
      }
    }
  } else if (c0 == 'y' || c0 == 'Y' || c0 == 'n' || c0 == 'N' || c0 == 't' || c0 == 'T' || c0 == 'f' || c0 == 'F' ||
             c0 == 'o' || c0 == 'O' || c0 == '~') {
    if (!yt_word(p, n, sc)) {
      memset(sc, 0, sizeof *sc);
      sc->kind = YAML__STR;
    }
    return sc->kind;
  } else if (c0 != '+' && c0 != '-' && c0 != '.') {
    memset(sc, 0, sizeof *sc);
    sc->kind = YAML__STR;
    return sc->kind;
  }
  char small[64];
  if (n < sizeof small) {
    memcpy(small, p, n);
    small[n] = 0;
    return yaml__resolve_plain(small, sc);
  }
  char *big = malloc(n + 1);
  if (!big) {
    sc->kind = YAML__MERGE; /* "not a result": the caller gives up */
    return sc->kind;
  }
  memcpy(big, p, n);
  big[n] = 0;
  yaml__resolve_plain(big, sc);
  free(big);
  return sc->kind;
}

static char *yt_strndup(const char *p, size_t n) {
  char *s = malloc(n + 1);
  if (!s) return NULL;
  memcpy(s, p, n);
  s[n] = 0;
  return s;
}

/* A string node owning s (NULL when s is NULL or memory is short; s is freed then). */
static cJSON *yt_string(char *s) {
  if (!s) return NULL;
  cJSON *v = cJSON_CreateNull();
  if (!v) {
    free(s);
    return NULL;
  }
  v->type = cJSON_String;
  v->valuestring = s;
  return v;
}

/* The node of a resolved plain scalar as yaml__scalar builds it; *bad when it is outside the subset
 * (NaN/Inf, which the converter refuses). NULL with *bad unset: out of memory. */
static cJSON *yt_plain_node(const yt_t *t, const char *p, size_t n, int *bad) {
  yaml__scalar_t sc;
  char buf[64];
  switch (yt_resolve(p, n, &sc)) {
  case YAML__STR: return yt_string(yt_strndup(p, n));
  case YAML__NULL: return cJSON_CreateNull();
  case YAML__BOOL: return cJSON_CreateBool(sc.b);
  case YAML__INT:
  case YAML__UINT: {
    double d = sc.kind == YAML__INT ? (double)sc.i : (double)sc.u;
    if (!t->number_text) return cJSON_CreateNumber(d);
    yaml__format_int(&sc, buf, sizeof buf);
    return yaml__number(d, buf);
  }
  case YAML__FLOAT:
    if (isnan(sc.f) || isinf(sc.f)) break;
    if (!t->number_text) return cJSON_CreateNumber(sc.f);
    yaml_format_float32(sc.f, buf, sizeof buf);
    return yaml__number(sc.f, buf);
  default: break;
  }
  *bad = 1;
  return NULL;
}

/* The JSON key of plain key text p[0..n) as yaml__key makes it (a bool, number or string scalar
 * becomes its text); NULL when it is outside the subset (null, NaN/Inf, the merge key `<<`) or
 * memory is short. */
static char *yt_plain_key(const char *p, size_t n) {
  if (n == 2 && p[0] == '<' && p[1] == '<') return NULL;
  yaml__scalar_t sc;
  char buf[64];
  switch (yt_resolve(p, n, &sc)) {
  case YAML__STR: return yt_intern_on && n <= YT_INTERN_MAX ? yt_intern(p, n) : yt_strndup(p, n);
  case YAML__BOOL: return strdup(sc.b ? "true" : "false");
  case YAML__INT:
  case YAML__UINT: yaml__format_int(&sc, buf, sizeof buf); return strdup(buf);
  case YAML__FLOAT:
    if (isnan(sc.f) || isinf(sc.f)) return NULL;
    yaml_format_float32(sc.f, buf, sizeof buf);
    return strdup(buf);
  default: return NULL;
  }
}

/* Whether a plain scalar may start at p in the block context (libyaml's rule, without the `?`
 * and `:` starts, which are left to it). */
static int yt_plain_start(const char *p, const char *e) {
  switch (*p) {
  case '-': return p + 1 < e && p[1] != ' ';
  case '?': case ':': case ',': case '[': case ']': case '{': case '}': case '#': case '&': case '*': case '!':
  case '|': case '>': case '\'': case '"': case '%': case '@': case '`': case ' ': case '\t':
    return 0;
  default: return 1;
  }
}

/* Scans the block-context plain scalar at p (line end e): returns where it stops, which is e, the
 * ':' of a `: ` or line-ending `:` (*stop = ':'), the '#' of a ` #` comment (*stop = '#') or a tab
 * (*stop = '\t': left to libyaml, whose rules for tabs around plain scalars are its own). */
static const char *yt_plain_scan(const char *p, const char *e, int *stop) {
  *stop = 0;
  for (const char *q = p; q < e; q++) {
    if (*q == '\t') {
      *stop = '\t';
      return q;
    }
    if (*q == ':' && (q + 1 == e || q[1] == ' ')) {
      *stop = ':';
      return q;
    }
    if (*q == '#' && q > p && q[-1] == ' ') {
      *stop = '#';
      return q;
    }
  }
  return e;
}

static int yt_hex(char h) {
  return h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
}

/* Reads the one-line quoted scalar whose opening quote is at p (line end e) as libyaml's
 * scan_flow_scalar does: *val gets its text (malloc'd), *after the byte past the closing quote.
 * 1, 0 when outside the subset (no closing quote on the line, an escaped line break, an escape
 * libyaml refuses, a NUL, which the converter refuses), -1 when memory is short. */
static int yt_quoted(const char *p, const char *e, char **val, const char **after) {
  const char *q = p + 1;
  *val = NULL;
  if (*p == '\'') {
    size_t doubled = 0;
    const char *z = q;
    for (;;) {
      z = memchr(z, '\'', (size_t)(e - z));
      if (!z) return 0;
      if (z + 1 < e && z[1] == '\'') {
        doubled++;
        z += 2;
        continue;
      }
      break;
    }
    char *s = malloc((size_t)(z - q) - doubled + 1), *o = s;
    if (!s) return -1;
    if (!doubled) {
      memcpy(s, q, (size_t)(z - q));
      o += z - q;
    } else {
      for (const char *r = q; r < z; r++) {
        *o++ = *r;
        if (*r == '\'') r++;
      }
    }
    *o = 0;
    *val = s;
    *after = z + 1;
    return 1;
  }
  const char *dq = memchr(q, '"', (size_t)(e - q));
  if (!dq) return 0;
  if (!memchr(q, '\\', (size_t)(dq - q))) {
    if (!(*val = yt_strndup(q, (size_t)(dq - q)))) return -1;
    *after = dq + 1;
    return 1;
  }
  /* escapes: the text grows at most by half (\L and \P: 2 bytes to 3) */
  size_t cap = (size_t)(e - q) + (size_t)(e - q) / 2 + 1;
  char *s = malloc(cap), *o = s;
  if (!s) return -1;
  const char *r = q;
  for (;;) {
    if (r >= e) goto bad;
    char ch = *r;
    if (ch == '"') break;
    if (ch != '\\') {
      *o++ = ch;
      r++;
      continue;
    }
    if (r + 1 >= e) goto bad; /* an escaped line break: multi-line */
    int len = 0;
    switch (r[1]) {
    case 'a': *o++ = '\x07'; break;
    case 'b': *o++ = '\x08'; break;
    case 't': case '\t': *o++ = '\x09'; break;
    case 'n': *o++ = '\x0A'; break;
    case 'v': *o++ = '\x0B'; break;
    case 'f': *o++ = '\x0C'; break;
    case 'r': *o++ = '\x0D'; break;
    case 'e': *o++ = '\x1B'; break;
    case ' ': *o++ = ' '; break;
    case '"': *o++ = '"'; break;
    case '/': *o++ = '/'; break;
    case '\\': *o++ = '\\'; break;
    case 'N': *o++ = '\xC2'; *o++ = '\x85'; break;
    case '_': *o++ = '\xC2'; *o++ = '\xA0'; break;
    case 'L': *o++ = '\xE2'; *o++ = '\x80'; *o++ = '\xA8'; break;
    case 'P': *o++ = '\xE2'; *o++ = '\x80'; *o++ = '\xA9'; break;
    case 'x': len = 2; break;
    case 'u': len = 4; break;
    case 'U': len = 8; break;
    default: goto bad; /* \0 (a NUL) and what libyaml does not know */
    }
    r += 2;
    if (!len) continue;
    if (e - r < len) goto bad;
    uint32_t v = 0;
    for (int k = 0; k < len; k++) {
      int d = yt_hex(r[k]);
      if (d < 0) goto bad;
      v = v << 4 | (uint32_t)d;
    }
    r += len;
    if (v == 0 || (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF) goto bad;
    if (v < 0x80) {
      *o++ = (char)v;
    } else if (v < 0x800) {
      *o++ = (char)(0xC0 | v >> 6);
      *o++ = (char)(0x80 | (v & 0x3F));
    } else if (v < 0x10000) {
      *o++ = (char)(0xE0 | v >> 12);
      *o++ = (char)(0x80 | (v >> 6 & 0x3F));
      *o++ = (char)(0x80 | (v & 0x3F));
    } else {
      *o++ = (char)(0xF0 | v >> 18);
      *o++ = (char)(0x80 | (v >> 12 & 0x3F));
      *o++ = (char)(0x80 | (v >> 6 & 0x3F));
      *o++ = (char)(0x80 | (v & 0x3F));
    }
  }
  *o = 0;
  *val = s;
  *after = r + 1;
  return 1;
bad:
  free(s);
  return 0;
}


/* A key at p (line end e): 1 with *key (malloc'd JSON key text) and *after (past its ':'), 0 when
 * the line does not start with a key (it may be a scalar item), -1 when outside the subset or
 * memory is short. */
static int yt_key(const char *p, const char *e, char **key, const char **after) {
  *key = NULL;
  if (*p == '"' || *p == '\'') {
    const char *z;
    int rc = yt_quoted(p, e, key, &z);
    if (rc <= 0) return rc ? -1 : 0;
    if (z < e && *z == ':' && (z + 1 == e || z[1] == ' ') && z - p <= YT_MAX_KEY) {
      *after = z + 1;
      return 1;
    }
    yt_free_key(*key);
    *key = NULL;
    return 0;
  }
  if (!yt_plain_start(p, e)) return 0;
  int stop;
  const char *q = yt_plain_scan(p, e, &stop);
  if (stop != ':') return 0;
  if (q[-1] == ' ' || q - p > YT_MAX_KEY) return -1;
  if (!(*key = yt_plain_key(p, (size_t)(q - p)))) return -1;
  *after = q + 1;
  return 1;
}

/* A plain scalar inside a one-line flow collection, as libyaml scans it there: p at its start;
 * *end gets the end of its text (trailing spaces dropped), *next where the scan stopped: at ',',
 * '[', ']', '{', '}', a ':' followed by a space (a key's end) or e. 0 when outside the subset (a
 * start libyaml may read otherwise, a '#', or a ':' that libyaml refuses or that ends the line). */
static int yt_flow_plain(const char *p, const char *e, const char **end, const char **next) {
  unsigned char c0 = (unsigned char)*p;
  if (c0 == '-' || c0 == '+') {
    if (p + 1 >= e || strchr(" ,[]{}#:", p[1])) return 0;
  } else if (strchr("?:,[]{}#&*!|>'\"%@` ", c0)) {
    return 0;
  }
  const char *q = p;
  for (; q < e; q++) {
    char ch = *q;
    if (ch == ',' || ch == '[' || ch == ']' || ch == '{' || ch == '}') break;
    if (ch == '#' || ch == '\t') return 0;
    if (ch == ':') {
      if (q + 1 == e || strchr(",?[]{}", q[1])) return 0;
      if (q[1] == ' ') break;
    }
  }
  *next = q;
  while (q > p && q[-1] == ' ') q--;
  *end = q;
  return 1;
}

static int yt_flow(const yt_t *t, const char **pp, const char *e, size_t depth, cJSON **v);

/* One flow item or key at *pp: a quoted or plain scalar, or (not as a key) a nested flow
 * collection; as a key (as_key) its JSON text into *key, else its node (at depth) into *v. *pp moves
 * past it (for a plain key: to the spaces and ':' after it). 1, 0 outside the subset, -1 no memory. */
static int yt_flow_item(const yt_t *t, const char **pp, const char *e, size_t depth, int as_key, char **key,
                        cJSON **v) {
  const char *p = *pp;
  if (*p == '[' || *p == '{') return as_key ? 0 : yt_flow(t, pp, e, depth, v);
  if (*p == '"' || *p == '\'') {
    char *s;
    int rc = yt_quoted(p, e, &s, pp);
    if (rc <= 0) return rc;
    if (as_key) {
      if (*pp - p > YT_MAX_KEY) {
        free(s);
        return 0;
      }
      *key = s;
      return 1;
    }
    return (*v = yt_string(s)) ? 1 : -1;
  }
  const char *end, *next;
  if (!yt_flow_plain(p, e, &end, &next)) return 0;
  if (as_key) {
    if (next - p > YT_MAX_KEY) return 0;
    *pp = end;
    return (*key = yt_plain_key(p, (size_t)(end - p))) ? 1 : 0;
  }
  *pp = end;
  int bad = 0;
  *v = yt_plain_node(t, p, (size_t)(end - p), &bad);
  return *v ? 1 : bad ? 0 : -1;
}

/* Skips spaces; in a root flow collection over several lines (t->flow_end) also line breaks and the
 * spaces after them, *e becoming the end of the line reached. Only between the tokens where JSON
 * breaks lines (after an opening bracket or a comma, before a comma or a closing bracket): a key
 * and its ':' stay on one line, as libyaml's simple keys must, and so do scalars. */
static const char *yt_flow_ws(const yt_t *t, const char *p, const char **e) {
  for (;;) {
    while (p < *e && *p == ' ') p++;
    if (!t->flow_end || p != *e || *e >= t->flow_end) return p;
    p = *e + 1;
    const char *ne = memchr(p, '\n', (size_t)(t->flow_end - p));
    *e = ne ? ne : t->flow_end;
  }
}

/* A one-line flow sequence or mapping at *pp ('[' or '{'), the node at depth: *v and *pp past the
 * closing bracket. Entries are items (a sequence) or `key: value` pairs (a mapping), separated by
 * commas, with at most a trailing one. (With t->flow_end, lines may break between entries: see
 * yt_flow_ws.) 1, 0 outside the subset, -1 out of memory. */
static int yt_flow(const yt_t *t, const char **pp, const char *e, size_t depth, cJSON **v) {
  const char *p = *pp;
  int map = *p == '{';
  char close = map ? '}' : ']';
  yt_level_t l;
  memset(&l, 0, sizeof l);
  l.type = map ? YF_MAP : YF_SEQ;
  l.node = map ? cJSON_CreateObject() : cJSON_CreateArray();
  if (!l.node) return -1;
  int rc = 0;
  p++;
  p = yt_flow_ws(t, p, &e);
  if (p < e && *p == close) {
    p++;
    goto done;
  }
  if (depth + 1 > t->max_depth) goto out;
  for (;;) {
    if (p >= e) goto out;
    char *key = NULL;
    cJSON *item = NULL;
    if (map) {
      int quoted = *p == '"' || *p == '\'';
      if ((rc = yt_flow_item(t, &p, e, depth + 1, 1, &key, NULL)) <= 0) goto out;
      /* `key: value`; after a quoted key the ':' needs no space (JSON-like) */
      while (p < e && *p == ' ') p++;
      if (p >= e || *p != ':' || (!quoted && (p + 1 >= e || p[1] != ' '))) {
        yt_free_key(key);
        rc = 0;
        goto out;
      }
      p++;
      while (p < e && *p == ' ') p++;
      if (p >= e || *p == ',' || *p == '}') {
        yt_free_key(key);
        rc = 0;
        goto out;
      }
    }
    if ((rc = yt_flow_item(t, &p, e, depth + 1, 0, NULL, &item)) <= 0) {
      yt_free_key(key);
      goto out;
    }
    if (yt_add(&l, key, item)) {
      rc = -1;
      goto out;
    }
    if (t->flow_end && p > e) { /* a nested collection went on over lines: the line it ended on */
      const char *ne = memchr(p, '\n', (size_t)(t->flow_end - p));
      e = ne ? ne : t->flow_end;
    }
    p = yt_flow_ws(t, p, &e);
    if (p < e && *p == close) {
      p++;
      break;
    }
    if (p >= e || *p != ',') {
      rc = 0;
      goto out;
    }
    p++;
    p = yt_flow_ws(t, p, &e);
    if (p < e && *p == close) { /* one trailing comma */
      p++;
      break;
    }
  }
done:
  free(l.ks.slots);
  *v = l.node;
  *pp = p;
  return 1;
out:
  free(l.ks.slots);
  cJSON_Delete(l.node);
  return rc;
}

/* Starts a block scalar whose indicator is at p: the header must be `|` or `>`, an optional
 * chomping indicator, spaces and an optional ` #` comment. Its node (a placeholder until the
 * content is read) goes to *v. 1, 0 outside the subset, -1 out of memory. */
static int yt_block_start(yt_t *t, const char *p, const char *e, int parent, cJSON **v) {
  int literal = *p == '|';
  int chomp;
  if (!yaml__block_header(p, e, &chomp)) return 0;
  if (!(*v = cJSON_CreateNull())) return -1;
  t->blk_node = *v;
  t->blk_literal = literal;
  t->blk_chomp = chomp;
  t->blk_parent = parent;
  t->blk_indent = 0;
  t->blk_max = 0;
  t->blk_leading_break = 0;
  t->blk_leading_blank = 0;
  t->blk_trailing = 0;
  buf_reset(&t->blk);
  return 1;
}

/* Ends the block scalar: chomping, then the text goes into its node. 0 or -1. */
static int yt_block_end(yt_t *t) {
  buf_t *b = &t->blk;
  if (t->blk_chomp != '-' && t->blk_leading_break && buf_putc(b, '\n')) return -1;
  if (t->blk_chomp == '+')
    for (size_t i = 0; i < t->blk_trailing; i++)
      if (buf_putc(b, '\n')) return -1;
  if (buf_reserve(b, 0)) return -1;
  char *s = buf_steal(b);
  t->blk_node->type = cJSON_String | (t->blk_node->type & cJSON_StringIsConst); /* a shared key stays so */
  t->blk_node->valuestring = s;
  t->blk_node = NULL;
  return 0;
}

/* One line while a block scalar is open, as libyaml's scan_block_scalar(_breaks) reads it: 1 when
 * the line belongs to the scalar, 0 when the scalar has ended before it (the line is then read as
 * structure), -1 out of memory, -2 outside the subset. ind: its leading spaces; nl: it ends in '\n' (not the text end). */
static int yt_block_line(yt_t *t, const char *line, int ind, const char *e, int nl) {
  int blank = line + ind == e;
  /* a tab where libyaml still eats indentation is its error */
  if (!blank && line[ind] == '\t' && (!t->blk_indent || ind < t->blk_indent)) return -2;
  if (!t->blk_indent) {
    /* leading lines: the indentation is the largest column seen up to the first non-empty line */
    if (ind > t->blk_max) t->blk_max = ind;
    if (blank) {
      if (!nl) return yt_block_end(t) ? -1 : 1;
      t->blk_trailing++;
      return 1;
    }
    int indent = t->blk_max;
    if (indent < t->blk_parent + 1) indent = t->blk_parent + 1;
    if (indent < 1) indent = 1;
    t->blk_indent = indent;
    if (ind != indent) return yt_block_end(t) ? -1 : 0;
  } else if (ind < t->blk_indent || (ind == t->blk_indent && blank)) {
    if (!blank) return yt_block_end(t) ? -1 : 0;
    if (!nl) return yt_block_end(t) ? -1 : 1;
    t->blk_trailing++;
    return 1;
  }
  /* a content line: its text is everything past the indentation */
  buf_t *b = &t->blk;
  const char *s = line + t->blk_indent;
  int trailing_blank = *s == ' ' || *s == '\t';
  if (!t->blk_literal && t->blk_leading_break && !t->blk_leading_blank && !trailing_blank) {
    if (!t->blk_trailing && buf_putc(b, ' ')) return -1;
  } else if (t->blk_leading_break && buf_putc(b, '\n')) {
    return -1;
  }
  for (; t->blk_trailing; t->blk_trailing--)
    if (buf_putc(b, '\n')) return -1;
  t->blk_leading_blank = trailing_blank;
  if (buf_append(b, s, (size_t)(e - s))) return -1;
  t->blk_leading_break = nl;
  if (!nl) return yt_block_end(t) ? -1 : 1;
  return 1;
}

/* The value after `key:` or `- ` at r (not the line end or a comment), for a node at depth whose
 * enclosing block collection is at column parent: 1 and *v, 0 outside the subset, -1 no memory. */
static int yt_value(yt_t *t, const char *r, const char *e, size_t depth, int parent, cJSON **v) {
  *v = NULL;
  if (depth > t->max_depth) return 0;
  if (*r == '|' || *r == '>') return yt_block_start(t, r, e, parent, v);
  if (*r == '[' || *r == '{') {
    int rc = yt_flow(t, &r, e, depth, v);
    if (rc > 0 && !yaml__tail_ok(r, e)) {
      cJSON_Delete(*v);
      *v = NULL;
      return 0;
    }
    return rc;
  }
  if (*r == '"' || *r == '\'') {
    char *s;
    const char *z;
    int rc = yt_quoted(r, e, &s, &z);
    if (rc <= 0) return rc;
    if (!yaml__tail_ok(z, e)) {
      free(s);
      return 0;
    }
    return (*v = yt_string(s)) ? 1 : -1;
  }
  if (!yt_plain_start(r, e)) return 0;
  int stop;
  const char *q = yt_plain_scan(r, e, &stop);
  if (stop == ':' || stop == '\t') return 0; /* `a: b: c`: libyaml's error */
  while (q > r && q[-1] == ' ') q--;
  int bad = 0;
  *v = yt_plain_node(t, r, (size_t)(q - r), &bad);
  return *v ? 1 : bad ? 0 : -1;
}

/* The rest of a mapping entry of the top level whose key (malloc'd JSON text, taken) ended before
 * r: 1, 0, -1 as above. */
static int yt_entry(yt_t *t, char *key, const char *r, const char *e) {
  yt_level_t *top = &t->lv[t->n - 1];
  while (r < e && *r == ' ') r++;
  if (r == e || *r == '#') {
    t->pending = 1;
    t->pend_from_map = 1;
    t->pend_key = key;
    return 1;
  }
  cJSON *v;
  int rc = yt_value(t, r, e, top->depth + 1, top->indent, &v);
  if (rc <= 0) {
    yt_free_key(key);
    return rc;
  }
  return yt_add(top, key, v) ? -1 : 1;
}

static _Thread_local void (*yt_consumed_fn)(void *ctx, const char *upto);
static _Thread_local void *yt_consumed_ctx;

void yaml_set_consumed_hook(void (*fn)(void *ctx, const char *upto), void *ctx) {
  yt_consumed_fn = fn;
  yt_consumed_ctx = ctx;
}

int yaml_tree_fast(const char *text, size_t len, const yaml_opts_t *opts, cJSON **out) {
  *out = NULL;
  if (!yt_text_ok(text, len)) return 0;
  yt_t t;
  memset(&t, 0, sizeof t);
  t.max_depth = opts && opts->max_depth ? opts->max_depth : YAML__DEFAULT_DEPTH;
  t.number_text = !(opts && (opts->flags & YAML_OPT_NO_NUMBER_TEXT));
  buf_t blk = BUF_INIT;
  t.blk = blk;
  cJSON *root = NULL;
  int ok = 0;
  const char *p = text, *end = text + len, *told = text;
  while (p < end) {
    const char *e = memchr(p, '\n', (size_t)(end - p));
    if (!e) e = end;
    const char *line = p;
    if (yt_consumed_fn && line - told >= ((ptrdiff_t)1 << 20)) { /* what came before is copied into nodes */
      yt_consumed_fn(yt_consumed_ctx, line);
      told = line;
    }
    int nl = e < end;
    p = nl ? e + 1 : end;
    if (nl && e > line && e[-1] == '\r') e--; /* CRLF: one line break to libyaml (and '\n' in block scalars) */
    int ind = 0;
    while (line + ind < e && line[ind] == ' ') ind++;
    const char *c = line + ind;
    if (t.blk_node) {
      int r = yt_block_line(&t, line, ind, e, nl);
      if (r < 0) goto out;
      if (r) continue;
    }
    if (c == e || *c == '#') continue; /* blank or comment */
    if (*c == '\t') goto out;
    if (ind == 0 && e - c >= 3 && (!memcmp(c, "---", 3) || !memcmp(c, "...", 3))) goto out;
    if (!root && !t.n && !t.pending && (*c == '{' || *c == '[')) {
      /* the document is a flow collection (JSON written as YAML), perhaps over several lines:
       * without a CR (line breaks to fold), and nothing after it but blanks and comments */
      if (memchr(c, '\r', (size_t)(end - c))) goto out;
      t.flow_end = end;
      const char *q = c;
      if (yt_flow(&t, &q, e, 0, &root) <= 0) goto out;
      e = memchr(q, '\n', (size_t)(end - q));
      if (!yaml__tail_ok(q, e ? e : end)) goto out;
      p = e ? e + 1 : end;
      t.flow_end = NULL;
      continue;
    }
    int is_seq = *c == '-' && (c + 1 == e || c[1] == ' ');
    if (t.pending) {
      /* the value of the last `key:` or `-`: a collection on the following lines, or null */
      yt_level_t *top = &t.lv[t.n - 1];
      int nest = ind > top->indent || (ind == top->indent && t.pend_from_map && is_seq);
      size_t depth = top->depth + 1;
      if (depth > t.max_depth) goto out;
      cJSON *v = nest ? (is_seq ? cJSON_CreateArray() : cJSON_CreateObject()) : cJSON_CreateNull();
      int pindent = top->indent;
      if (yt_add(top, t.pend_key, v)) {
        t.pend_key = NULL;
        goto out;
      }
      t.pend_key = NULL;
      t.pending = 0;
      if (nest && !yt_push(&t, is_seq ? YF_SEQ : YF_MAP, ind, ind == pindent, depth, v)) goto out;
    }
    /* close the collections this line is not part of */
    while (t.n > 0 && (t.lv[t.n - 1].indent > ind || (t.lv[t.n - 1].indentless && t.lv[t.n - 1].indent == ind && !is_seq)))
      yt_pop(&t);
    if (t.n == 0) {
      if (root) goto out; /* more after the root collection: libyaml's error */
      root = is_seq ? cJSON_CreateArray() : cJSON_CreateObject();
      if (!root || !yt_push(&t, is_seq ? YF_SEQ : YF_MAP, ind, 0, 0, root)) goto out;
    }
    yt_level_t *top = &t.lv[t.n - 1];
    if (top->indent != ind) goto out;
    char *key;
    const char *after;
    if (!is_seq) {
      /* a key must be here (a scalar is libyaml's error) */
      if (top->type != YF_MAP || yt_key(c, e, &key, &after) <= 0 || yt_entry(&t, key, after, e) <= 0) goto out;
      continue;
    }
    if (top->type != YF_SEQ) goto out;
    const char *r = c + 1;
    while (r < e && *r == ' ') r++;
    if (r == e || *r == '#') {
      t.pending = 1;
      t.pend_from_map = 0;
      continue;
    }
    if (*r == '-' && (r + 1 == e || r[1] == ' ')) goto out; /* `- - x` */
    int rc = yt_key(r, e, &key, &after);
    if (rc < 0) goto out;
    if (rc > 0) {
      /* `- key: ...` opens a mapping at the key's column */
      size_t depth = top->depth + 1;
      cJSON *m = depth > t.max_depth ? NULL : cJSON_CreateObject();
      if (!m || yt_add(top, NULL, m) || !yt_push(&t, YF_MAP, (int)(r - line), 0, depth, m)) {
        yt_free_key(key);
        goto out;
      }
      if (yt_entry(&t, key, after, e) <= 0) goto out;
      continue;
    }
    cJSON *v;
    if (yt_value(&t, r, e, top->depth + 1, top->indent, &v) <= 0) goto out;
    if (yt_add(top, NULL, v)) goto out;
  }
  if (t.blk_node && yt_block_end(&t)) goto out;
  if (t.pending) {
    yt_level_t *top = &t.lv[t.n - 1];
    if (top->depth + 1 > t.max_depth) goto out;
    int rc = yt_add(top, t.pend_key, cJSON_CreateNull());
    t.pend_key = NULL;
    if (rc) goto out;
  }
  if (!root && !(root = cJSON_CreateNull())) goto out;
  ok = 1;
out:
  while (t.n) yt_pop(&t);
  free(t.lv);
  yt_free_key(t.pend_key);
  buf_free(&t.blk);
  if (!ok) {
    cJSON_Delete(root);
    return 0;
  }
  *out = root;
  return 1;
}

int yaml_to_json(const char *text, size_t len, const yaml_opts_t *opts, cJSON **out, yaml_error_t *err) {
  yaml__ctx_t c;
  memset(&c, 0, sizeof c);
  c.err = err;
  if (err) memset(err, 0, sizeof *err);
  c.max_alias_nodes = opts && opts->max_alias_nodes ? opts->max_alias_nodes : YAML__DEFAULT_ALIAS_NODES;
  c.max_alias_bytes = opts && opts->max_alias_bytes ? opts->max_alias_bytes : YAML__DEFAULT_ALIAS_BYTES;
  c.max_depth = opts && opts->max_depth ? opts->max_depth : YAML__DEFAULT_DEPTH;
  c.flags = opts ? opts->flags : 0;
  *out = NULL;
  if ((c.flags & YAML_OPT_SIMPLE_HEAD) && (c.flags & YAML_OPT_DUP_LAST) && !(c.flags & YAML_OPT_NO_FAST_HEAD) &&
      yaml_head_fast(text, len, out))
    return 0;
  if ((c.flags & YAML_OPT_DUP_LAST) && !(c.flags & (YAML_OPT_SIMPLE_HEAD | YAML_OPT_BIGINT_RAW | YAML_OPT_NO_FAST)) &&
      yaml_tree_fast(text, len, opts, out))
    return 0;
  if (!yaml_parser_initialize(&c.parser)) return yaml__fail(&c, -ENOMEM, NULL, "out of memory");
  yaml_parser_set_input_string(&c.parser, (const unsigned char *)text, len);
  int rc;
  cJSON *doc = NULL;
  yaml_event_t ev;
  if ((rc = yaml__next(&c, &ev))) goto done; /* STREAM-START */
  yaml_event_delete(&ev);
  if ((rc = yaml__next(&c, &ev))) goto done;
  if (ev.type == YAML_STREAM_END_EVENT) {
    yaml_event_delete(&ev);
    doc = cJSON_CreateNull();
    if (!doc) rc = yaml__fail(&c, -ENOMEM, NULL, "out of memory");
    goto done;
  }
  yaml_event_delete(&ev); /* DOCUMENT-START */
  if ((rc = yaml__next(&c, &ev))) goto done;
  if ((c.flags & YAML_OPT_SIMPLE_HEAD) && (c.flags & YAML_OPT_DUP_LAST)) c.filter_next = YAML__KEEP_ROOT;
  size_t count;
  rc = yaml__node(&c, &ev, 0, &doc, &count);
  yaml_event_delete(&ev);
  if (rc) goto done;
  /* Like go-yaml's Unmarshal, only the first document is read; its end must still parse. */
  if ((rc = yaml__next(&c, &ev))) goto done;
  yaml_event_delete(&ev);
done:
  for (size_t i = 0; i < c.nanchors; i++) {
    free(c.anchors[i].name);
    cJSON_Delete(c.anchors[i].node);
  }
  free(c.anchors);
  yaml_parser_delete(&c.parser);
  if (rc) {
    cJSON_Delete(doc);
    return rc;
  }
  *out = doc;
  return 0;
}

const char *yaml_json_kind(const cJSON *v) {
  if (cJSON_IsObject(v)) return "object";
  if (cJSON_IsArray(v)) return "array";
  if (cJSON_IsString(v)) return "string";
  if (cJSON_IsBool(v)) return "bool";
  if (cJSON_IsNumber(v) || cJSON_IsRaw(v)) return "number";
  return "null";
}
