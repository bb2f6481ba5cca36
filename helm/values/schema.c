/* JSON Schema validation with the error tree of santhosh-tekuri/jsonschema v6.0.3 (validator.go,
 * kind/kind.go, output.go), the library Helm 4.3.1 uses for values.schema.json. The schema is
 * interpreted straight from its cJSON tree. Go iterates the value's maps in random order; object
 * properties are visited here in sorted key order so that the output is stable. */
#include "helm/values/schema.h"

#include <arpa/inet.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "base/gofloat.h"
#include "helm/values/schema_int.h"
#include "helm/template/tpl.h"

#define SCHEMA_MAX_DEPTH 256

typedef enum { E_MSG, E_GROUP, E_REF } ekind_t;

typedef struct verr_s verr_t;
struct verr_s {
  ekind_t kind;
  char *loc; /* JSON pointer of the instance, tokens escaped */
  char *msg; /* E_MSG only */
  verr_t **causes;
  size_t ncauses;
};

typedef struct rx_s {
  const cJSON *key; /* the schema node the pattern came from */
  bool prop;        /* a patternProperties key (pattern text in key->string) */
  pcre2_code *re;
  struct rx_s *next;
} rx_t;

typedef struct frame_s {
  const cJSON *sch;
  int vid;
  const char *refkw; /* "$ref" when this scope was entered through a reference */
  const struct frame_s *parent;
  const char *base; /* the base URL references here resolve against (NULL: no documents loaded) */
} frame_t;

/* Documents and their resources, for $ref to other documents: every resource (a document, a
 * subschema with an $id) by its absolute URL; the loaded documents are owned here. */
typedef struct sres_s {
  char *url;
  const cJSON *node;
  struct sres_s *next;
} sres_t;

typedef struct sdoc_s {
  cJSON *root;
  struct sdoc_s *next;
} sdoc_t;

typedef struct srefs_s {
  const schema_loader_t *ld;
  sres_t *res;
  sdoc_t *docs;
  size_t ndocs;
  const char *base0; /* values.schema.json's own base */
  buf_t warned;      /* URNs warned about, each followed by '\n' */
  int draft;         /* values.schema.json's, for the keywords that name an $id */
} srefs_t;

typedef struct sctx_s {
  const cJSON *root;
  int draft;
  bool oom;
  buf_t fatal; /* a problem with the schema itself */
  rx_t *rx;
  cJSON urn_true; /* a cJSON_True node */
  pcre2_match_data *md;
  pcre2_match_context *mc;
  int depth;
  int next_vid;
  bool assert_fmt; /* formats asserted in every draft (the metaschemas are checked that way) */
  int max_depth;
  srefs_t *refs;        /* NULL: references stay inside root */
  const char *ref_base; /* the base of the reference target validate() enters next */
} sctx_t;

/* ---- error values ---------------------------------------------------------------- */

static void verr_free(verr_t *e) {
  if (!e) return;
  for (size_t i = 0; i < e->ncauses; i++) verr_free(e->causes[i]);
  free(e->causes);
  free(e->loc);
  free(e->msg);
  free(e);
}

static verr_t *verr_new(sctx_t *x, ekind_t k, const char *loc, const char *msg) {
  verr_t *e = calloc(1, sizeof *e);
  if (!e || !(e->loc = strdup(loc)) || (msg && !(e->msg = strdup(msg)))) {
    if (e) {
      free(e->loc);
      free(e);
    }
    x->oom = true;
    return NULL;
  }
  e->kind = k;
  return e;
}

static verr_t *verr_msgf(sctx_t *x, const char *loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static verr_t *verr_msgf(sctx_t *x, const char *loc, const char *fmt, ...) {
  buf_t b = BUF_INIT;
  va_list ap;
  va_start(ap, fmt);
  int rc = buf_vprintf(&b, fmt, ap);
  va_end(ap);
  verr_t *e = rc ? NULL : verr_new(x, E_MSG, loc, b.data ? b.data : "");
  if (rc) x->oom = true;
  buf_free(&b);
  return e;
}

typedef struct {
  verr_t **v;
  size_t n, cap;
} elist_t;

static void elist_add(sctx_t *x, elist_t *l, verr_t *e) {
  if (!e) return;
  if (l->n == l->cap) {
    size_t nc = l->cap ? l->cap * 2 : 4;
    verr_t **nv = realloc(l->v, nc * sizeof *nv);
    if (!nv) {
      x->oom = true;
      verr_free(e);
      return;
    }
    l->v = nv;
    l->cap = nc;
  }
  l->v[l->n++] = e;
}

static void elist_free(elist_t *l) {
  for (size_t i = 0; i < l->n; i++) verr_free(l->v[i]);
  free(l->v);
  l->v = NULL;
  l->n = l->cap = 0;
}

/* An error of kind k at loc whose causes are the list (taken). */
static verr_t *verr_with(sctx_t *x, ekind_t k, const char *loc, const char *msg, elist_t *l) {
  verr_t *e = verr_new(x, k, loc, msg);
  if (!e) {
    elist_free(l);
    return NULL;
  }
  e->causes = l->v;
  e->ncauses = l->n;
  l->v = NULL;
  l->n = l->cap = 0;
  return e;
}

/* ---- Go formatting helpers --------------------------------------------------------- */

/* kind.quote: strconv.Quote, then every \" -> " and ' -> \' (strings.ReplaceAll over the quoted
 * text, outer quotes included, so a trailing backslash swallows its escape), then the outer
 * quotes become single quotes. */
static void go_squote(buf_t *o, const char *s, size_t n) {
  buf_t q = BUF_INIT, r = BUF_INIT;
  tpl_fmt_quote(&q, s, n);
  for (size_t i = 0; i < q.len; i++) {
    if (q.data[i] == '\\' && i + 1 < q.len && q.data[i + 1] == '"') {
      buf_putc(&r, '"');
      i++;
    } else buf_putc(&r, q.data[i]);
  }
  buf_putc(o, '\'');
  for (size_t i = 1; i + 1 < r.len; i++) {
    if (r.data[i] == '\'') buf_puts(o, "\\'");
    else buf_putc(o, r.data[i]);
  }
  buf_putc(o, '\'');
  buf_free(&q);
  buf_free(&r);
}

/* message.NewPrinter(language.English): %d with digit grouping ("1,500"). */
static void p_int(buf_t *o, long long n) {
  char d[32];
  snprintf(d, sizeof d, "%lld", n < 0 ? -n : n);
  size_t len = strlen(d);
  if (n < 0) buf_putc(o, '-');
  for (size_t i = 0; i < len; i++) {
    if (i && (len - i) % 3 == 0) buf_putc(o, ',');
    buf_putc(o, d[i]);
  }
}

/* p_int into a caller's 32-byte buffer, for use as a %s argument. */
static const char *grp(long long n, char *b) {
  buf_t t = BUF_INIT;
  p_int(&t, n);
  snprintf(b, 32, "%s", t.data ? t.data : "0");
  buf_free(&t);
  return b;
}
#define G(n) grp((long long)(n), (char[32]){0})

/* The same printer's %v of a float64: Go's %g, the integer part grouped, an exponent written
 * as "×10" and superscript digits ("1×10⁰⁶"). */
static void p_float(buf_t *o, double f) {
  static const char *const sup[] = {"\u2070", "\u00b9", "\u00b2", "\u00b3", "\u2074",
                                    "\u2075", "\u2076", "\u2077", "\u2078", "\u2079"};
  buf_t g = BUF_INIT;
  tpl_fmt_float(&g, f, 'g', -1);
  const char *s = g.data ? g.data : "0";
  const char *e = strchr(s, 'e');
  if (e) {
    buf_append(o, s, (size_t)(e - s));
    buf_puts(o, "\u00d710");
    const char *p = e + 1;
    if (*p == '-') buf_puts(o, "\u207b");
    if (*p == '-' || *p == '+') p++;
    for (; *p; p++) buf_puts(o, sup[*p - '0']);
  } else {
    const char *q = s;
    if (*q == '-') buf_putc(o, *q++);
    size_t il = strcspn(q, ".");
    for (size_t i = 0; i < il; i++) {
      if (i && (il - i) % 3 == 0) buf_putc(o, ',');
      buf_putc(o, q[i]);
    }
    buf_puts(o, q + il);
  }
  buf_free(&g);
}

static bool is_num(const cJSON *v) { return cJSON_IsNumber(v) || cJSON_IsRaw(v); }

static double num_of(const cJSON *v) { return cJSON_IsRaw(v) ? strtod(v->valuestring, NULL) : v->valuedouble; }

/* fmt's %v of a value's number: int64 (cJSON_Raw) as decimal, float64 as 'g' shortest. */
static void go_num(buf_t *o, const cJSON *v) {
  if (cJSON_IsRaw(v)) buf_puts(o, v->valuestring);
  else tpl_fmt_float(o, v->valuedouble, 'g', -1);
}

/* kind.display: strings quoted, composites "value", others %v. */
static void go_display(buf_t *o, const cJSON *v) {
  if (cJSON_IsString(v)) go_squote(o, v->valuestring, strlen(v->valuestring));
  else if (cJSON_IsArray(v) || cJSON_IsObject(v)) buf_puts(o, "value");
  else if (is_num(v)) go_num(o, v);
  else if (cJSON_IsBool(v)) buf_puts(o, cJSON_IsTrue(v) ? "true" : "false");
  else buf_puts(o, "<nil>");
}

/* ---- JSON types ------------------------------------------------------------------- */

enum { T_NULL = 1, T_BOOL = 2, T_NUMBER = 4, T_INTEGER = 8, T_STRING = 16, T_ARRAY = 32, T_OBJECT = 64 };
static const char *const type_names[] = {"null", "boolean", "number", "integer", "string", "array", "object"};

static int type_of(const cJSON *v) {
  if (cJSON_IsNull(v)) return T_NULL;
  if (cJSON_IsBool(v)) return T_BOOL;
  if (is_num(v)) return T_NUMBER;
  if (cJSON_IsString(v)) return T_STRING;
  if (cJSON_IsArray(v)) return T_ARRAY;
  if (cJSON_IsObject(v)) return T_OBJECT;
  return 0;
}

static int type_from(const char *s) {
  for (int i = 0; i < 7; i++)
    if (!strcmp(s, type_names[i])) return 1 << i;
  return 0;
}

/* A decimal m * 10^e read from Go's shortest formatting (what big.Rat.SetString(fmt.Sprint(v)) sees). */
typedef struct {
  bool neg, inexact;
  unsigned __int128 m;
  int e;
} dec_t;

static dec_t dec_of(const cJSON *v) {
  dec_t d = {0};
  if (cJSON_IsRaw(v)) { /* an int64, or a schema number's literal text (json.Number) */
    const char *s = v->valuestring;
    if (*s == '-') d.neg = true, s++;
    bool frac = false;
    for (; (*s >= '0' && *s <= '9') || (*s == '.' && !frac); s++) {
      if (*s == '.') {
        frac = true;
        continue;
      }
      if (d.m > ((unsigned __int128)-1) / 10 - 10) {
        d.inexact = true; /* more digits than 128 bits: compare as float64 */
        if (!frac) d.e++;
        continue;
      }
      d.m = d.m * 10 + (unsigned)(*s - '0');
      if (frac) d.e--;
    }
    if (*s == 'e' || *s == 'E') d.e += atoi(s + 1);
    return d;
  }
  double f = v->valuedouble;
  if (f == 0 || !isfinite(f)) return d;
  if (f < 0) d.neg = true, f = -f;
  char digs[32];
  int dp = 0;
  int n = gofloat_shortest(f, 0, digs, sizeof digs, &dp);
  for (int i = 0; i < n; i++) d.m = d.m * 10 + (unsigned)(digs[i] - '0');
  d.e = dp - n;
  return d;
}

static bool is_integer(const cJSON *v) {
  if (cJSON_IsRaw(v)) {
    dec_t d = dec_of(v);
    if (d.inexact) return floor(num_of(v)) == num_of(v);
    while (d.m && d.m % 10 == 0) d.m /= 10, d.e++;
    return d.m == 0 || d.e >= 0;
  }
  double d = v->valuedouble;
  return isfinite(d) && d == floor(d);
}

static unsigned __int128 mulmod(unsigned __int128 a, unsigned __int128 b, unsigned __int128 m) {
  unsigned __int128 r = 0;
  a %= m;
  while (b) {
    if (b & 1) r = (r + a) % m;
    a = (a * 2) % m;
    b >>= 1;
  }
  return r;
}

/* Is a / b an integer (b non-zero)? Exact on the decimal forms. */
static bool dec_multiple(dec_t a, dec_t b) {
  if (a.m == 0) return true;
  if (b.m == 0) return false;
  int e = a.e < b.e ? a.e : b.e;
  unsigned __int128 B = b.m;
  for (int i = 0; i < b.e - e; i++) {
    if (B > ((unsigned __int128)-1) / 10) return false; /* B > A: A % B == A != 0 */
    B *= 10;
  }
  unsigned __int128 r = a.m % B;
  for (int i = 0; i < a.e - e; i++) r = mulmod(r, 10, B);
  return r == 0;
}

/* equals(): deep equality, numbers by value. */
static bool json_equal(const cJSON *a, const cJSON *b) {
  int ta = type_of(a), tb = type_of(b);
  if (ta != tb) return false;
  switch (ta) {
  case T_NULL: return true;
  case T_BOOL: return cJSON_IsTrue(a) == cJSON_IsTrue(b);
  case T_STRING: return !strcmp(a->valuestring, b->valuestring);
  case T_NUMBER: {
    if (!cJSON_IsRaw(a) && !cJSON_IsRaw(b)) return a->valuedouble == b->valuedouble;
    if (cJSON_IsRaw(a) && cJSON_IsRaw(b) && !strcmp(a->valuestring, b->valuestring)) return true;
    /* exact, as big.Rat compares them */
    dec_t x = dec_of(a), y = dec_of(b);
    if (x.inexact || y.inexact) return num_of(a) == num_of(b);
    if (x.m == 0 || y.m == 0) return x.m == y.m;
    while (x.m % 10 == 0) x.m /= 10, x.e++;
    while (y.m % 10 == 0) y.m /= 10, y.e++;
    return x.neg == y.neg && x.m == y.m && x.e == y.e;
  }
  case T_ARRAY: {
    if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b)) return false;
    const cJSON *y = b->child;
    for (const cJSON *x = a->child; x; x = x->next, y = y->next)
      if (!json_equal(x, y)) return false;
    return true;
  }
  case T_OBJECT: {
    if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b)) return false;
    for (const cJSON *x = a->child; x; x = x->next) {
      const cJSON *y = cJSON_GetObjectItemCaseSensitive(b, x->string);
      if (!y || !json_equal(x, y)) return false;
    }
    return true;
  }
  }
  return false;
}

/* ---- regular expressions ------------------------------------------------------------ */

/* Go's \s is [\t\n\f\r ] (PCRE2's adds \v); \d and \w are ASCII in both. */
static void rx_translate(const char *p, buf_t *o) {
  bool in_class = false;
  for (size_t i = 0; p[i]; i++) {
    char ch = p[i];
    if (ch == '\\' && p[i + 1]) {
      char e = p[++i];
      if (e == 's') buf_puts(o, in_class ? "\\t\\n\\f\\r " : "[\\t\\n\\f\\r ]");
      else if (e == 'S' && !in_class) buf_puts(o, "[^\\t\\n\\f\\r ]");
      else {
        buf_putc(o, ch);
        buf_putc(o, e);
      }
      continue;
    }
    if (ch == '[' && !in_class) {
      in_class = true;
      buf_putc(o, ch);
      if (p[i + 1] == '^') buf_putc(o, p[++i]);
      if (p[i + 1] == ']') buf_putc(o, p[++i]);
      continue;
    }
    if (ch == ']' && in_class) in_class = false;
    buf_putc(o, ch);
  }
}

static pcre2_code *rx_get(sctx_t *x, const cJSON *node, bool prop) {
  for (rx_t *r = x->rx; r; r = r->next)
    if (r->key == node && r->prop == prop) return r->re;
  const char *pat = prop ? node->string : node->valuestring;
  buf_t t = BUF_INIT;
  rx_translate(pat, &t);
  int ec;
  PCRE2_SIZE eo;
  pcre2_code *re = pcre2_compile((PCRE2_SPTR)(t.data ? t.data : ""), t.len, PCRE2_UTF | PCRE2_MATCH_INVALID_UTF |
                                 PCRE2_DOLLAR_ENDONLY, &ec, &eo, NULL);
  buf_free(&t);
  if (!re) {
    if (!x->fatal.len) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(ec, msg, sizeof msg);
      buf_printf(&x->fatal, "jsonschema: invalid regexp %s: error parsing regexp: %s", pat, (const char *)msg);
    }
    return NULL;
  }
  rx_t *r = malloc(sizeof *r);
  if (!r) {
    pcre2_code_free(re);
    x->oom = true;
    return NULL;
  }
  r->key = node;
  r->prop = prop;
  r->re = re;
  r->next = x->rx;
  x->rx = r;
  return re;
}

/* 1 match, 0 no match, -1 error (recorded). */
static int rx_match(sctx_t *x, const cJSON *node, bool prop, const char *s) {
  pcre2_code *re = rx_get(x, node, prop);
  if (!re) return -1;
  int rc = pcre2_match(re, (PCRE2_SPTR)s, strlen(s), 0, 0, x->md, x->mc);
  if (rc >= 0) return 1;
  if (rc == PCRE2_ERROR_NOMATCH) return 0;
  if (!x->fatal.len) buf_printf(&x->fatal, "jsonschema: regexp match failed for %s (match limit exceeded)", s);
  return -1;
}

/* ---- $ref ---------------------------------------------------------------------------- */

static sres_t *res_by_url(const srefs_t *r, const char *url) {
  for (sres_t *e = r ? r->res : NULL; e; e = e->next)
    if (!strcmp(e->url, url)) return e;
  return NULL;
}

static sres_t *res_by_node(const srefs_t *r, const cJSON *node) {
  for (sres_t *e = r ? r->res : NULL; e; e = e->next)
    if (e->node == node) return e;
  return NULL;
}

/* The $id of a schema object (draft-04 names it "id"), when it names a resource (not an anchor). */
static const char *node_id(const cJSON *s, int draft) {
  const cJSON *id = cJSON_IsObject(s) ? cJSON_GetObjectItemCaseSensitive(s, draft == 4 ? "id" : "$id") : NULL;
  return cJSON_IsString(id) && id->valuestring[0] != '#' ? id->valuestring : NULL;
}

static bool refs_load(sctx_t *x, const char *url);

/* A JSON pointer (the fragment after '#') from cur; *base follows the $ids passed on the way. */
static const cJSON *ptr_walk(sctx_t *x, const cJSON *cur, const char *p, const char **base) {
  while (cur && *p == '/') {
    p++;
    buf_t tok = BUF_INIT;
    while (*p && *p != '/') {
      if (p[0] == '~' && p[1] == '0') buf_putc(&tok, '~'), p += 2;
      else if (p[0] == '~' && p[1] == '1') buf_putc(&tok, '/'), p += 2;
      else if (p[0] == '%' && p[1] && p[2]) {
        char h[3] = {p[1], p[2], 0};
        buf_putc(&tok, (char)strtol(h, NULL, 16));
        p += 3;
      } else buf_putc(&tok, *p++);
    }
    const char *t = tok.data ? tok.data : "";
    if (cJSON_IsArray(cur)) {
      char *end;
      long i = strtol(t, &end, 10);
      cur = *t && !*end && i >= 0 ? cJSON_GetArrayItem(cur, (int)i) : NULL;
    } else if (cJSON_IsObject(cur)) cur = cJSON_GetObjectItemCaseSensitive(cur, t);
    else cur = NULL;
    buf_free(&tok);
    const sres_t *r = cur && x->refs && node_id(cur, x->refs->draft) ? res_by_node(x->refs, cur) : NULL;
    if (r) *base = r->url;
  }
  return cur;
}

/* The schema ref names from base (NULL: the root document's); *tbase gets the target's base.
 * Documents not yet loaded are loaded (x->refs set); NULL with x->fatal set when none is found. */
/* Helm's urn loader: an unresolved urn: reference is the permissive schema true, with a warning. */
static const cJSON *urn_true(sctx_t *x, const char *urn) {
  srefs_t *R = x->refs;
  size_t n = strcspn(urn, "#");
  if (R && R->ld && R->ld->warn) {
    int seen = 0;
    for (const char *p = R->warned.data; p && *p && !seen; p = strchr(p, '\n') + 1)
      seen = !strncmp(p, urn, n) && p[n] == '\n';
    if (!seen && !buf_printf(&R->warned, "%.*s\n", (int)n, urn)) {
      char *u = strndup(urn, n);
      if (u) R->ld->warn(R->ld->ctx, "unresolved URN reference ignored; using permissive schema", "urn", u);
      free(u);
    }
  }
  return &x->urn_true;
}

static const cJSON *resolve_ref(sctx_t *x, const char *base, const char *ref, const char **tbase) {
  *tbase = NULL;
  if (!strncmp(ref, "urn:", 4)) return urn_true(x, ref);
  srefs_t *R = x->refs;
  if (!R && ref[0] != '#') {
    if (!x->fatal.len)
      buf_printf(&x->fatal, "jsonschema: cannot resolve $ref %s: only references inside values.schema.json are supported",
                 ref);
    return NULL;
  }
  char *abs = R ? schema_uri_resolve(base ? base : R->base0, ref) : strdup("file:///values.schema.json");
  if (!abs) {
    x->oom = true;
    return NULL;
  }
  const char *frag = R ? strchr(abs, '#') : ref;
  frag = frag ? frag + 1 : "";
  if (R) abs[strcspn(abs, "#")] = 0;
  const cJSON *cur = x->root;
  if (R) {
    const sres_t *r = res_by_url(R, abs);
    if (!r && !strncmp(abs, "urn:", 4)) {
      const cJSON *t = urn_true(x, abs);
      free(abs);
      return t;
    }
    if (!r && refs_load(x, abs)) r = res_by_url(R, abs);
    if (!r) {
      free(abs);
      return NULL;
    }
    cur = r->node;
    *tbase = r->url;
  }
  if (*frag && *frag != '/') { /* an anchor: look for $anchor / $id "#name" */
    if (!x->fatal.len) buf_printf(&x->fatal, "jsonschema: cannot resolve $ref %s: anchors are not supported", ref);
    free(abs);
    return NULL;
  }
  cur = ptr_walk(x, cur, frag, tbase);
  if (!cur && !x->fatal.len) buf_printf(&x->fatal, "json-pointer in \"%s#%s\" not found", abs, frag);
  free(abs);
  return cur;
}

/* ---- formats (asserted for drafts before 2019-09) ------------------------------------- */

static bool go_atoi(const char *s, size_t n, long *out) {
  size_t i = 0;
  bool neg = false;
  if (n && (s[0] == '+' || s[0] == '-')) neg = s[0] == '-', i++;
  if (i == n) return false;
  long v = 0;
  for (; i < n; i++) {
    if (s[i] < '0' || s[i] > '9' || v > 1000000000L) return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = neg ? -v : v;
  return true;
}

static void go_qrune(buf_t *o, const char *s) {
  /* %q of a rune: the (possibly multi-byte) character in single quotes */
  size_t n = 1;
  unsigned char c = (unsigned char)*s;
  if (c >= 0xf0) n = 4;
  else if (c >= 0xe0) n = 3;
  else if (c >= 0xc0) n = 2;
  if (c == '\'') buf_puts(o, "'\\''");
  else if (c == '\\') buf_puts(o, "'\\\\'");
  else if (c < 0x20 || c == 0x7f) buf_printf(o, "'\\x%02x'", c);
  else {
    buf_putc(o, '\'');
    buf_append(o, s, n);
    buf_putc(o, '\'');
  }
}

static bool is_digits(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

/* time.Parse("2006-01-02", s) as Go reports it (ParseError wording). */
static bool check_date(const char *s, size_t n, buf_t *o) {
  static const char *const elems[] = {"2006", "-", "01", "-", "02"};
  static const size_t widths[] = {4, 1, 2, 1, 2};
  size_t pos = 0;
  long year = 0, month = 0, day = 0;
  for (int e = 0; e < 5; e++) {
    const char *v = s + pos;
    size_t left = n - pos;
    bool ok;
    if (e == 1 || e == 3) ok = left >= 1 && v[0] == '-';
    else ok = left >= widths[e] && is_digits(v, widths[e]);
    if (!ok) {
      buf_printf(o, "parsing time \"%.*s\" as \"2006-01-02\": cannot parse \"%.*s\" as \"%s\"", (int)n, s, (int)left, v,
                 elems[e]);
      return false;
    }
    long num = 0;
    for (size_t i = 0; e % 2 == 0 && i < widths[e]; i++) num = num * 10 + (v[i] - '0');
    if (e == 0) year = num;
    if (e == 2) {
      month = num;
      if (month < 1 || month > 12) {
        buf_printf(o, "parsing time \"%.*s\": month out of range", (int)n, s);
        return false;
      }
    }
    if (e == 4) day = num;
    pos += widths[e];
  }
  if (pos < n) {
    buf_printf(o, "parsing time \"%.*s\": extra text: \"%.*s\"", (int)n, s, (int)(n - pos), s + pos);
    return false;
  }
  static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int dim = mdays[month - 1] + (month == 2 && year % 4 == 0 && (year % 100 != 0 || year % 400 == 0));
  if (day < 1 || day > dim) {
    buf_printf(o, "parsing time \"%.*s\": day out of range", (int)n, s);
    return false;
  }
  return true;
}

/* validateTime (RFC 3339 full-time with leap-second rule). */
static bool check_time(const char *str, buf_t *o) {
  size_t n = strlen(str);
  if (n < 9) return buf_puts(o, "less than 9 characters long"), false;
  if (str[2] != ':' || str[5] != ':') return buf_puts(o, "missing colon in correct place"), false;
  long hms[3];
  for (int i = 0; i < 3; i++) {
    if (!go_atoi(str + i * 3, 2, &hms[i])) return buf_puts(o, "invalid hour/min/sec"), false;
    if (hms[i] < 0) return buf_puts(o, "non-positive hour/min/sec"), false;
  }
  long h = hms[0], m = hms[1], sec = hms[2];
  if (h > 23 || m > 59 || sec > 60) return buf_puts(o, "hour/min/sec out of range"), false;
  const char *p = str + 8;
  if (*p == '.') {
    p++;
    size_t d = 0;
    while (p[d] >= '0' && p[d] <= '9') d++;
    if (!d) return buf_puts(o, "no digits in second fraction"), false;
    p += d;
  }
  if (strcmp(p, "z") && strcmp(p, "Z")) {
    if (strlen(p) != 6) return buf_puts(o, "offset must be 6 characters long"), false;
    int sign;
    if (p[0] == '+') sign = -1;
    else if (p[0] == '-') sign = 1;
    else return buf_puts(o, "offset must begin with plus/minus"), false;
    p++;
    if (p[2] != ':') return buf_puts(o, "missing colon in offset in correct place"), false;
    long zh, zm;
    if (!go_atoi(p, 2, &zh) || !go_atoi(p + 3, 2, &zm)) return buf_puts(o, "invalid hour/min in offset"), false;
    if (zh < 0 || zm < 0) return buf_puts(o, "non-positive hour/min in offset"), false;
    if (zh > 23 || zm > 59) return buf_puts(o, "hour/min in offset out of range"), false;
    long hm = (h * 60 + m) + sign * (zh * 60 + zm);
    if (hm < 0) hm += 24 * 60;
    h = hm / 60;
    m = hm % 60;
  }
  if (sec >= 60 && (h != 23 || m != 59)) return buf_puts(o, "invalid leap second"), false;
  return true;
}

static bool check_date_time(const char *s, buf_t *o) {
  size_t n = strlen(s);
  if (n < 20) return buf_puts(o, "less than 20 characters long"), false;
  if (s[10] != 't' && s[10] != 'T') return buf_puts(o, "11th character must be t or T"), false;
  buf_t e = BUF_INIT;
  bool ok = true;
  if (!check_date(s, 10, &e)) {
    buf_printf(o, "invalid date element: %s", e.data ? e.data : "");
    ok = false;
  } else if (!check_time(s + 11, &e)) {
    buf_printf(o, "invalid time element: %s", e.data ? e.data : "");
    ok = false;
  }
  buf_free(&e);
  return ok;
}

static bool check_duration(const char *s, buf_t *o) {
  if (*s != 'P') return buf_puts(o, "must start with P"), false;
  s++;
  if (!*s) return buf_puts(o, "nothing after P"), false;
  size_t n = strlen(s);
  if (s[n - 1] == 'W') {
    if (n == 1) return buf_puts(o, "no number in week"), false;
    if (!is_digits(s, n - 1)) return buf_puts(o, "invalid week"), false;
    return true;
  }
  static const char *const all[] = {"YMD", "HMS"};
  const char *part = s;
  for (int i = 0;; i++) {
    const char *t = strchr(part, 'T');
    size_t pl = t ? (size_t)(t - part) : strlen(part);
    if (i != 0 && pl == 0) return buf_puts(o, "no time elements"), false;
    if (i >= 2) return buf_puts(o, "more than one T"), false;
    const char *units = all[i];
    size_t k = 0;
    while (k < pl) {
      size_t d = 0;
      while (k + d < pl && part[k + d] >= '0' && part[k + d] <= '9') d++;
      if (!d) return buf_puts(o, "missing number"), false;
      k += d;
      if (k >= pl) return buf_puts(o, "missing unit"), false;
      char u = part[k];
      const char *j = strchr(units, u);
      if (!j || !u) {
        if (u && strchr(all[i], u)) buf_puts(o, "unit ");
        else buf_puts(o, "invalid unit ");
        go_qrune(o, part + k);
        if (u && strchr(all[i], u)) buf_puts(o, " out of order");
        return false;
      }
      units = j + 1;
      k++;
    }
    if (!t) break;
    part = t + 1;
  }
  return true;
}

static bool check_semver(const char *s0, buf_t *o) {
  char *s = strdup(s0);
  if (!s) return true;
  bool ok = false;
  char *plus = strchr(s, '+');
  if (plus) {
    *plus = 0;
    const char *b = plus + 1;
    if (!*b) {
      buf_puts(o, "build is empty");
      goto out;
    }
    for (const char *id = b;;) {
      size_t l = strcspn(id, ".");
      if (!l) {
        buf_puts(o, "build identifier is empty");
        goto out;
      }
      for (size_t i = 0; i < l; i++) {
        char c = id[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-')) {
          buf_puts(o, "invalid character ");
          go_qrune(o, id + i);
          buf_puts(o, " in build identifier");
          goto out;
        }
      }
      if (!id[l]) break;
      id += l + 1;
    }
  }
  char *dash = strchr(s, '-');
  if (dash) {
    *dash = 0;
    for (const char *id = dash + 1;;) {
      size_t l = strcspn(id, ".");
      if (!l) {
        buf_puts(o, "pre-release identifier is empty");
        goto out;
      }
      bool digits = true;
      for (size_t i = 0; i < l; i++) {
        char c = id[i];
        if (c >= '0' && c <= '9') continue;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-') digits = false;
        else {
          buf_puts(o, "invalid character ");
          go_qrune(o, id + i);
          buf_puts(o, " in pre-release identifier");
          goto out;
        }
      }
      if (digits && l > 1 && id[0] == '0') {
        buf_puts(o, "pre-release numeric identifier starts with zero");
        goto out;
      }
      if (!id[l]) break;
      id += l + 1;
    }
  }
  {
    int dots = 0;
    for (const char *q = s; *q; q++) dots += *q == '.';
    if (dots != 2) {
      buf_puts(o, "versionCore must have 3 numbers separated by dot");
      goto out;
    }
    static const char *const names[] = {"major", "minor", "patch"};
    const char *q = s;
    for (int i = 0; i < 3; i++) {
      size_t l = strcspn(q, ".");
      if (!l) {
        buf_printf(o, "%s is empty", names[i]);
        goto out;
      }
      if (l > 1 && q[0] == '0') {
        buf_printf(o, "%s starts with zero", names[i]);
        goto out;
      }
      if (!is_digits(q, l)) {
        buf_printf(o, "%s contains non-digit", names[i]);
        goto out;
      }
      q += l + 1;
    }
  }
  ok = true;
out:
  free(s);
  return ok;
}

static bool format_check(const char *fmt, const char *s, buf_t *o);

/* validatePeriod: start/end, each a date-time or a duration (not both durations) */
static bool check_period(const char *s, buf_t *o) {
  const char *slash = strchr(s, '/');
  if (!slash) return buf_puts(o, "missing slash"), false;
  char *start = strndup(s, (size_t)(slash - s));
  if (!start) return true;
  const char *end = slash + 1;
  buf_t e = BUF_INIT;
  bool ok = true;
  if (start[0] == 'P') {
    if (!check_duration(start, &e)) buf_printf(o, "invalid start duration: %s", e.data ? e.data : ""), ok = false;
    else if (!check_date_time(end, &e)) buf_printf(o, "invalid end date-time: %s", e.data ? e.data : ""), ok = false;
  } else if (!check_date_time(start, &e)) buf_printf(o, "invalid start date-time: %s", e.data ? e.data : ""), ok = false;
  else if (end[0] == 'P') {
    if (!check_duration(end, &e)) buf_printf(o, "invalid end duration: %s", e.data ? e.data : ""), ok = false;
  } else if (!check_date_time(end, &e)) buf_printf(o, "invalid end date-time: %s", e.data ? e.data : ""), ok = false;
  buf_free(&e);
  free(start);
  return ok;
}

static bool check_email(const char *s, buf_t *o) {
  size_t n = strlen(s);
  if (n > 254) return buf_puts(o, "more than 255 characters long"), false;
  const char *at = strrchr(s, '@');
  if (!at) return buf_puts(o, "missing @"), false;
  size_t ll = (size_t)(at - s);
  const char *domain = at + 1;
  if (ll > 64) return buf_puts(o, "local part more than 64 characters long"), false;
  if (ll > 1 && s[0] == '"' && s[ll - 1] == '"') {
    for (size_t i = 1; i + 1 < ll; i++)
      if (s[i] == '\\' || s[i] == '"')
        return buf_puts(o, "backslash and quote are not allowed within quoted local part"), false;
  } else {
    if (ll && s[0] == '.') return buf_puts(o, "starts with dot"), false;
    if (ll && s[ll - 1] == '.') return buf_puts(o, "ends with dot"), false;
    for (size_t i = 0; i + 1 < ll; i++)
      if (s[i] == '.' && s[i + 1] == '.') return buf_puts(o, "consecutive dots"), false;
    for (size_t i = 0; i < ll; i++) {
      char c = s[i];
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          (c && strchr(".!#$%&'*+-/=?^_`{|}~", c)))
        continue;
      buf_puts(o, "invalid character ");
      go_qrune(o, s + i);
      return false;
    }
  }
  size_t dl = strlen(domain);
  buf_t e = BUF_INIT;
  bool ok = true;
  if (dl >= 2 && domain[0] == '[' && domain[dl - 1] == ']') {
    char *in = strndup(domain + 1, dl - 2);
    if (!in) return true;
    if (!strncmp(in, "IPv6:", 5)) {
      if (!format_check("ipv6", in + 5, &e)) buf_printf(o, "invalid ipv6 address: %s", e.data ? e.data : ""), ok = false;
    } else if (!format_check("ipv4", in, &e)) buf_printf(o, "invalid ipv4 address: %s", e.data ? e.data : ""), ok = false;
    free(in);
  } else if (!format_check("hostname", domain, &e)) buf_printf(o, "invalid domain: %s", e.data ? e.data : ""), ok = false;
  buf_free(&e);
  return ok;
}

/* Returns true when valid; otherwise the reason in o. Unknown formats are not asserted. */
static bool format_check(const char *fmt, const char *s, buf_t *o) {
  if (!strcmp(fmt, "ipv4")) {
    const char *p = s;
    int groups = 1;
    for (const char *q = s; *q; q++) groups += *q == '.';
    if (groups != 4) return buf_puts(o, "expected four decimals"), false;
    for (int g = 0; g < 4; g++) {
      const char *e = strchr(p, '.');
      size_t n = e ? (size_t)(e - p) : strlen(p);
      if (n > 1 && p[0] == '0') return buf_puts(o, "leading zeros"), false;
      long v;
      if (!go_atoi(p, n, &v)) return buf_printf(o, "strconv.Atoi: parsing \"%.*s\": invalid syntax", (int)n, p), false;
      if (v < 0 || v > 255) return buf_puts(o, "decimal must be between 0 and 255"), false;
      p += n + 1;
    }
    return true;
  }
  if (!strcmp(fmt, "hostname")) {
    size_t n = strlen(s);
    if (n && s[n - 1] == '.') n--;
    if (n > 253) return buf_puts(o, "more than 253 characters long"), false;
    size_t i = 0;
    for (;;) {
      size_t j = i;
      while (j < n && s[j] != '.') j++;
      size_t l = j - i;
      if (l < 1 || l > 63) return buf_puts(o, "label must be 1 to 63 characters long"), false;
      if (s[i] == '-') return buf_puts(o, "label starts with hyphen"), false;
      if (s[j - 1] == '-') return buf_puts(o, "label ends with hyphen"), false;
      for (size_t k = i; k < j; k++) {
        char c = s[k];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-')) {
          buf_puts(o, "invalid character ");
          go_qrune(o, s + k);
          return false;
        }
      }
      if (j >= n) break;
      i = j + 1;
    }
    return true;
  }
  if (!strcmp(fmt, "uuid")) {
    static const int hg[] = {8, 4, 4, 4, 12};
    int groups = 1;
    for (const char *q = s; *q; q++) groups += *q == '-';
    if (groups != 5) return buf_puts(o, "must have 5 elements"), false;
    const char *p = s;
    for (int g = 0; g < 5; g++) {
      const char *e = strchr(p, '-');
      size_t n = e ? (size_t)(e - p) : strlen(p);
      if ((int)n != hg[g]) return buf_printf(o, "element %d must be %d characters long", g + 1, hg[g]), false;
      for (size_t k = 0; k < n; k++) {
        char c = p[k];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
          buf_puts(o, "non-hex character ");
          go_qrune(o, p + k);
          return false;
        }
      }
      p += n + 1;
    }
    return true;
  }
  if (!strcmp(fmt, "date")) return check_date(s, strlen(s), o);
  if (!strcmp(fmt, "time")) return check_time(s, o);
  if (!strcmp(fmt, "date-time")) return check_date_time(s, o);
  if (!strcmp(fmt, "duration")) return check_duration(s, o);
  if (!strcmp(fmt, "semver")) return check_semver(s, o);
  if (!strcmp(fmt, "email")) return check_email(s, o);
  if (!strcmp(fmt, "regex")) return schema_go_regexp_ok(s, o);
  if (!strcmp(fmt, "period")) return check_period(s, o);
  return schema_go_format(fmt, s, o) != 0;
  return true;
}

/* ---- schema locations (only for the reference-cycle message) ------------------------------ */

static void ptr_tok(buf_t *b, const char *t) {
  buf_putc(b, '/');
  for (; *t; t++) {
    if (*t == '~') buf_puts(b, "~0");
    else if (*t == '/') buf_puts(b, "~1");
    else buf_putc(b, *t);
  }
}

/* The JSON pointer of node inside cur (appended to b); false when not found. */
static bool node_path(const cJSON *cur, const cJSON *node, buf_t *b) {
  if (cur == node) return true;
  int i = 0;
  for (const cJSON *c = cur->child; c; c = c->next, i++) {
    size_t mark = b->len;
    if (cJSON_IsObject(cur)) ptr_tok(b, c->string);
    else buf_printf(b, "/%d", i);
    if (node_path(c, node, b)) return true;
    b->len = mark;
    if (b->data) b->data[mark] = 0;
  }
  return false;
}

/* scope.kwLoc(): the keyword path from the root scope to f. */
static void kw_loc(sctx_t *x, const frame_t *f, buf_t *out) {
  buf_t acc = BUF_INIT;
  for (; f && f->parent; f = f->parent) {
    buf_t part = BUF_INIT;
    if (f->refkw) ptr_tok(&part, f->refkw);
    else {
      buf_t a = BUF_INIT, b = BUF_INIT;
      node_path(x->root, f->sch, &a);
      node_path(x->root, f->parent->sch, &b);
      if (a.len >= b.len) buf_append(&part, a.data + b.len, a.len - b.len);
      buf_free(&a);
      buf_free(&b);
    }
    buf_append(&part, acc.data ? acc.data : "", acc.len);
    buf_free(&acc);
    acc = part;
  }
  buf_append(out, acc.data ? acc.data : "", acc.len);
  buf_free(&acc);
}

/* ---- unevaluated properties and items (the library's uneval) -------------------------- */

/* Which of an object's properties (by child position) or an array's items are still
 * unevaluated; n == 0 is the empty set. */
typedef struct {
  bool *props;
  int np, nprops; /* set size, bits */
  bool *items;
  int ni, nitems;
} uneval_t;

static bool ue_empty(const uneval_t *u) { return !u || (u->np == 0 && u->ni == 0); }

static void ue_free(uneval_t *u) {
  free(u->props);
  free(u->items);
  *u = (uneval_t){0};
}

/* unevalFrom: what schema s leaves for unevaluated* (its own or its caller's). */
static void ue_from(sctx_t *x, uneval_t *u, const cJSON *v, const cJSON *s, bool caller_needs) {
  *u = (uneval_t){0};
  if (!cJSON_IsObject(s)) return;
  if (cJSON_IsObject(v)) {
    bool all = cJSON_GetObjectItemCaseSensitive(s, "additionalProperties") != NULL;
    if (all || !(caller_needs || cJSON_GetObjectItemCaseSensitive(s, "unevaluatedProperties"))) return;
    int n = cJSON_GetArraySize(v);
    if (!n) return;
    if (!(u->props = malloc((size_t)n * sizeof *u->props))) {
      x->oom = true;
      return;
    }
    for (int i = 0; i < n; i++) u->props[i] = true;
    u->np = u->nprops = n;
  } else if (cJSON_IsArray(v)) {
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(s, "items");
    bool all;
    int first;
    if (x->draft < 2020) {
      all = items && !cJSON_IsArray(items);
      if (cJSON_IsArray(items) && cJSON_GetObjectItemCaseSensitive(s, "additionalItems")) all = true;
      first = cJSON_IsArray(items) ? cJSON_GetArraySize(items) : 0;
    } else {
      all = items != NULL;
      const cJSON *pre = cJSON_GetObjectItemCaseSensitive(s, "prefixItems");
      first = cJSON_IsArray(pre) ? cJSON_GetArraySize(pre) : 0;
    }
    int n = cJSON_GetArraySize(v);
    if (all || !(caller_needs || cJSON_GetObjectItemCaseSensitive(s, "unevaluatedItems")) || first >= n) return;
    if (!(u->items = calloc((size_t)n, sizeof *u->items))) {
      x->oom = true;
      return;
    }
    for (int i = first; i < n; i++) u->items[i] = true;
    u->nitems = n;
    u->ni = n - first;
  }
}

/* merge: keep only what other also left unevaluated */
static void ue_merge(uneval_t *u, const uneval_t *o) {
  for (int i = 0; i < u->nprops; i++)
    if (u->props[i] && !(i < o->nprops && o->props[i])) u->props[i] = false, u->np--;
  for (int i = 0; i < u->nitems; i++)
    if (u->items[i] && !(i < o->nitems && o->items[i])) u->items[i] = false, u->ni--;
}

static void ue_prop_done(uneval_t *u, int i) {
  if (u && i < u->nprops && u->props[i]) u->props[i] = false, u->np--;
}

static void ue_item_done(uneval_t *u, int i) {
  if (u && i < u->nitems && u->items[i]) u->items[i] = false, u->ni--;
}

/* ---- the validator --------------------------------------------------------------------- */

static verr_t *validate(sctx_t *x, const cJSON *sch, const cJSON *v, const char *loc, int vid, const frame_t *up,
                        const char *refkw, uneval_t *parent);

typedef struct {
  const cJSON *c;
  int pos; /* position among the object's children */
} kent_t;

static int cmp_kent(const void *a, const void *b) {
  return strcmp(((const kent_t *)a)->c->string, ((const kent_t *)b)->c->string);
}

static int cmp_key(const void *a, const void *b) {
  return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

static size_t utf8_count(const char *s) {
  size_t n = 0;
  for (; *s; s++) n += ((unsigned char)*s & 0xc0) != 0x80;
  return n;
}

static char *loc_child(sctx_t *x, const char *loc, const char *tok) {
  buf_t b = BUF_INIT;
  buf_puts(&b, loc);
  buf_putc(&b, '/');
  for (const char *p = tok; *p; p++) {
    if (*p == '~') buf_puts(&b, "~0");
    else if (*p == '/') buf_puts(&b, "~1");
    else buf_putc(&b, *p);
  }
  if (!b.data) {
    x->oom = true;
    return NULL;
  }
  return b.data;
}

static verr_t *validate_val(sctx_t *x, const cJSON *sch, const cJSON *v, const char *loc, const char *tok,
                            const frame_t *fr) {
  char *cl = loc_child(x, loc, tok);
  if (!cl) return NULL;
  verr_t *e = validate(x, sch, v, cl, ++x->next_vid, fr, NULL, NULL);
  free(cl);
  return e;
}

static verr_t *validate_idx(sctx_t *x, const cJSON *sch, const cJSON *v, const char *loc, int i, const frame_t *fr) {
  char t[24];
  snprintf(t, sizeof t, "%d", i);
  return validate_val(x, sch, v, loc, t, fr);
}

static verr_t *validate_ref(sctx_t *x, const cJSON *target, const cJSON *v, const char *loc, int vid, const frame_t *fr,
                            const char *kw, uneval_t *ue) {
  verr_t *e = validate(x, target, v, loc, vid, fr, kw, ue);
  if (!e) return NULL;
  elist_t l = {0};
  if (e->kind == E_GROUP) {
    l.v = e->causes;
    l.n = l.cap = e->ncauses;
    e->causes = NULL;
    e->ncauses = 0;
    verr_free(e);
  } else elist_add(x, &l, e);
  return verr_with(x, E_REF, loc, NULL, &l);
}

static bool kw_num(const cJSON *s, const char *k, const cJSON **out) {
  const cJSON *n = cJSON_GetObjectItemCaseSensitive(s, k);
  if (n && cJSON_IsNumber(n)) {
    *out = n;
    return true;
  }
  return false;
}

static void missing_props(const cJSON *obj, const cJSON *reqd, buf_t *out, int *count, const char **first) {
  *count = 0;
  for (const cJSON *r = reqd ? reqd->child : NULL; r; r = r->next) {
    if (!cJSON_IsString(r) || cJSON_GetObjectItemCaseSensitive(obj, r->valuestring)) continue;
    if (*count) buf_puts(out, ", ");
    go_squote(out, r->valuestring, strlen(r->valuestring));
    if (!*count) *first = r->valuestring;
    (*count)++;
  }
}

static void obj_validate(sctx_t *x, const cJSON *s, const cJSON *obj, const char *loc, int vid, const frame_t *fr,
                         elist_t *errs, uneval_t *ue) {
  const cJSON *n;
  int nprops = cJSON_GetArraySize(obj);
  if (kw_num(s, "minProperties", &n) && nprops < (int)n->valuedouble)
    elist_add(x, errs, verr_msgf(x, loc, "minProperties: got %s, want %s", G(nprops), G(n->valuedouble)));
  if (kw_num(s, "maxProperties", &n) && nprops > (int)n->valuedouble)
    elist_add(x, errs, verr_msgf(x, loc, "maxProperties: got %s, want %s", G(nprops), G(n->valuedouble)));
  const cJSON *req = cJSON_GetObjectItemCaseSensitive(s, "required");
  if (cJSON_IsArray(req)) {
    buf_t m = BUF_INIT;
    int cnt;
    const char *first = NULL;
    missing_props(obj, req, &m, &cnt, &first);
    if (cnt == 1) elist_add(x, errs, verr_msgf(x, loc, "missing property %s", m.data));
    else if (cnt > 1) elist_add(x, errs, verr_msgf(x, loc, "missing properties %s", m.data));
    buf_free(&m);
  }
  {
    const cJSON *deps = cJSON_GetObjectItemCaseSensitive(s, "dependencies");
    for (const cJSON *d = cJSON_IsObject(deps) ? deps->child : NULL; d; d = d->next) {
      if (!cJSON_GetObjectItemCaseSensitive(obj, d->string)) continue;
      if (cJSON_IsArray(d)) {
        buf_t m = BUF_INIT;
        int cnt;
        const char *first = NULL;
        missing_props(obj, d, &m, &cnt, &first);
        if (cnt) {
          buf_t q = BUF_INIT;
          go_squote(&q, d->string, strlen(d->string));
          elist_add(x, errs, verr_msgf(x, loc, "properties %s required, if %s exists", m.data, q.data));
          buf_free(&q);
        }
        buf_free(&m);
      } else elist_add(x, errs, validate(x, d, obj, loc, vid, fr, NULL, ue));
    }
  }
  /* properties, patternProperties, additionalProperties: keys in sorted order */
  const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
  const cJSON *pats = cJSON_GetObjectItemCaseSensitive(s, "patternProperties");
  const cJSON *addl = cJSON_GetObjectItemCaseSensitive(s, "additionalProperties");
  kent_t *keys = nprops ? malloc((size_t)nprops * sizeof *keys) : NULL;
  if (nprops && !keys) {
    x->oom = true;
    return;
  }
  int k = 0;
  for (const cJSON *c = obj->child; c; c = c->next, k++) keys[k] = (kent_t){c, k};
  if (nprops) qsort(keys, (size_t)nprops, sizeof *keys, cmp_kent);
  buf_t extra = BUF_INIT;
  for (int i = 0; i < nprops && !x->oom; i++) {
    const cJSON *pv = keys[i].c;
    bool evaluated = false;
    const cJSON *ps = cJSON_IsObject(props) ? cJSON_GetObjectItemCaseSensitive(props, pv->string) : NULL;
    if (ps) {
      evaluated = true;
      elist_add(x, errs, validate_val(x, ps, pv, loc, pv->string, fr));
    }
    for (const cJSON *pp = cJSON_IsObject(pats) ? pats->child : NULL; pp; pp = pp->next) {
      int m = rx_match(x, pp, true, pv->string);
      if (m < 0) break;
      if (m) {
        evaluated = true;
        elist_add(x, errs, validate_val(x, pp, pv, loc, pv->string, fr));
      }
    }
    if (!evaluated && addl) {
      evaluated = true;
      if (cJSON_IsFalse(addl)) {
        if (extra.len) buf_puts(&extra, ", ");
        go_squote(&extra, pv->string, strlen(pv->string));
      } else if (cJSON_IsObject(addl)) elist_add(x, errs, validate_val(x, addl, pv, loc, pv->string, fr));
    }
    if (evaluated) ue_prop_done(ue, keys[i].pos);
  }
  free(keys);
  if (extra.len) elist_add(x, errs, verr_msgf(x, loc, "additional properties %s not allowed", extra.data));
  buf_free(&extra);
  if (x->draft == 4) return;
  const cJSON *pn = cJSON_GetObjectItemCaseSensitive(s, "propertyNames");
  if (pn) {
    for (const cJSON *c = obj->child; c; c = c->next) {
      cJSON *name = cJSON_CreateString(c->string);
      if (!name) {
        x->oom = true;
        return;
      }
      verr_t *e = validate(x, pn, name, "", ++x->next_vid, NULL, NULL, NULL);
      cJSON_Delete(name);
      if (e) {
        /* Go keeps the name's own errors (instance '') as causes */
        elist_t l = {0};
        if (e->kind == E_GROUP) {
          l.v = e->causes;
          l.n = l.cap = e->ncauses;
          e->causes = NULL;
          e->ncauses = 0;
          verr_free(e);
        } else elist_add(x, &l, e);
        buf_t q = BUF_INIT;
        buf_puts(&q, "invalid propertyName ");
        go_squote(&q, c->string, strlen(c->string));
        elist_add(x, errs, verr_with(x, E_MSG, loc, q.data, &l));
        buf_free(&q);
      }
    }
  }
  if (x->draft < 2019) return;
  const cJSON *ds = cJSON_GetObjectItemCaseSensitive(s, "dependentSchemas");
  for (const cJSON *d = cJSON_IsObject(ds) ? ds->child : NULL; d; d = d->next)
    if (cJSON_GetObjectItemCaseSensitive(obj, d->string)) elist_add(x, errs, validate(x, d, obj, loc, vid, fr, NULL, ue));
  const cJSON *dr = cJSON_GetObjectItemCaseSensitive(s, "dependentRequired");
  for (const cJSON *d = cJSON_IsObject(dr) ? dr->child : NULL; d; d = d->next) {
    if (!cJSON_GetObjectItemCaseSensitive(obj, d->string) || !cJSON_IsArray(d)) continue;
    buf_t m = BUF_INIT;
    int cnt;
    const char *first = NULL;
    missing_props(obj, d, &m, &cnt, &first);
    if (cnt) {
      buf_t q = BUF_INIT;
      go_squote(&q, d->string, strlen(d->string));
      elist_add(x, errs, verr_msgf(x, loc, "properties %s required, if %s exists", m.data, q.data));
      buf_free(&q);
    }
    buf_free(&m);
  }
}

static void arr_validate(sctx_t *x, const cJSON *s, const cJSON *arr, const char *loc, const frame_t *fr, elist_t *errs,
                         uneval_t *ue) {
  const cJSON *n;
  int len = cJSON_GetArraySize(arr);
  if (kw_num(s, "minItems", &n) && len < (int)n->valuedouble)
    elist_add(x, errs, verr_msgf(x, loc, "minItems: got %s, want %s", G(len), G(n->valuedouble)));
  if (kw_num(s, "maxItems", &n) && len > (int)n->valuedouble)
    elist_add(x, errs, verr_msgf(x, loc, "maxItems: got %s, want %s", G(len), G(n->valuedouble)));
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "uniqueItems")) && len > 1) {
    int i = 1, j = 0;
    bool dup = false;
    for (const cJSON *a = arr->child ? arr->child->next : NULL; a && !dup; a = a->next, i++) {
      j = 0;
      for (const cJSON *b = arr->child; b != a; b = b->next, j++)
        if (json_equal(a, b)) {
          dup = true;
          break;
        }
    }
    if (dup) elist_add(x, errs, verr_msgf(x, loc, "items at %s and %s are equal", G(j), G(i - 1)));
  }
  const cJSON *items = cJSON_GetObjectItemCaseSensitive(s, "items");
  if (x->draft < 2020) {
    int evaluated = 0;
    if (cJSON_IsArray(items)) {
      const cJSON *is = items->child;
      const cJSON *a = arr->child;
      for (; is && a; is = is->next, a = a->next, evaluated++)
        elist_add(x, errs, validate_idx(x, is, a, loc, evaluated, fr));
      const cJSON *ai = cJSON_GetObjectItemCaseSensitive(s, "additionalItems");
      if (cJSON_IsFalse(ai) && evaluated != len)
        elist_add(x, errs, verr_msgf(x, loc, "last %s additionalItem(s) not allowed", G(len - evaluated)));
      else if (cJSON_IsObject(ai))
        for (int i = evaluated; a; a = a->next, i++) elist_add(x, errs, validate_idx(x, ai, a, loc, i, fr));
    } else if (items) {
      int i = 0;
      for (const cJSON *a = arr->child; a; a = a->next, i++) elist_add(x, errs, validate_idx(x, items, a, loc, i, fr));
    }
  } else {
    const cJSON *pre = cJSON_GetObjectItemCaseSensitive(s, "prefixItems");
    const cJSON *a = arr->child;
    int i = 0;
    for (const cJSON *ps = cJSON_IsArray(pre) ? pre->child : NULL; ps && a; ps = ps->next, a = a->next, i++)
      elist_add(x, errs, validate_idx(x, ps, a, loc, i, fr));
    if (items)
      for (; a; a = a->next, i++) elist_add(x, errs, validate_idx(x, items, a, loc, i, fr));
  }
  const cJSON *contains = x->draft >= 6 ? cJSON_GetObjectItemCaseSensitive(s, "contains") : NULL;
  if (contains) {
    elist_t ce = {0};
    buf_t matched = BUF_INIT;
    int nm = 0, i = 0;
    for (const cJSON *a = arr->child; a; a = a->next, i++) {
      verr_t *e = validate_idx(x, contains, a, loc, i, fr);
      if (e) elist_add(x, &ce, e);
      else {
        if (x->draft >= 2020) ue_item_done(ue, i);
        buf_printf(&matched, nm ? " %d" : "%d", i);
        nm++;
      }
    }
    const cJSON *minc = x->draft >= 2019 ? cJSON_GetObjectItemCaseSensitive(s, "minContains") : NULL;
    const cJSON *maxc = x->draft >= 2019 ? cJSON_GetObjectItemCaseSensitive(s, "maxContains") : NULL;
    if (cJSON_IsNumber(minc)) {
      if (nm < (int)minc->valuedouble) {
        char msg[256];
        if (!nm) snprintf(msg, sizeof msg, "min %s items required to match contains schema, but none matched",
                          G(minc->valuedouble));
        else snprintf(msg, sizeof msg, "min %s items required to match contains schema, but matched %s items at %s",
                      G(minc->valuedouble), G(nm), matched.data);
        elist_add(x, errs, verr_with(x, E_MSG, loc, msg, &ce));
      }
    } else if (!nm) elist_add(x, errs, verr_with(x, E_MSG, loc, "no items match contains schema", &ce));
    elist_free(&ce);
    if (cJSON_IsNumber(maxc) && nm > (int)maxc->valuedouble)
      elist_add(x, errs, verr_msgf(x, loc, "max %s items required to match contains schema, but matched %s items at %s",
                                   G(maxc->valuedouble), G(nm), matched.data ? matched.data : ""));
    buf_free(&matched);
  }
}

static void str_validate(sctx_t *x, const cJSON *s, const cJSON *str, const char *loc, elist_t *errs) {
  const cJSON *n;
  const cJSON *minl = kw_num(s, "minLength", &n) ? n : NULL;
  const cJSON *maxl = kw_num(s, "maxLength", &n) ? n : NULL;
  size_t len = minl || maxl ? utf8_count(str->valuestring) : 0;
  if (minl && (double)len < minl->valuedouble)
    elist_add(x, errs, verr_msgf(x, loc, "minLength: got %s, want %s", G(len), G(minl->valuedouble)));
  if (maxl && (double)len > maxl->valuedouble)
    elist_add(x, errs, verr_msgf(x, loc, "maxLength: got %s, want %s", G(len), G(maxl->valuedouble)));
  const cJSON *pat = cJSON_GetObjectItemCaseSensitive(s, "pattern");
  if (cJSON_IsString(pat) && rx_match(x, pat, false, str->valuestring) == 0) {
    buf_t m = BUF_INIT;
    go_squote(&m, str->valuestring, strlen(str->valuestring));
    buf_puts(&m, " does not match pattern ");
    go_squote(&m, pat->valuestring, strlen(pat->valuestring));
    elist_add(x, errs, verr_new(x, E_MSG, loc, m.data ? m.data : ""));
    buf_free(&m);
  }
}

static void num_msg(sctx_t *x, elist_t *errs, const char *loc, const char *kw, const cJSON *got, const cJSON *want) {
  buf_t m = BUF_INIT;
  buf_printf(&m, "%s: got ", kw);
  p_float(&m, num_of(got));
  buf_puts(&m, ", want ");
  p_float(&m, want->valuedouble);
  elist_add(x, errs, verr_new(x, E_MSG, loc, m.data ? m.data : ""));
  buf_free(&m);
}

static void num_validate(sctx_t *x, const cJSON *s, const cJSON *v, const char *loc, elist_t *errs) {
  double d = num_of(v);
  const cJSON *mn = NULL, *mx = NULL, *emn = NULL, *emx = NULL, *mo = NULL;
  kw_num(s, "minimum", &mn);
  kw_num(s, "maximum", &mx);
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "exclusiveMaximum"))) emx = mx, mx = NULL;
  else kw_num(s, "exclusiveMaximum", &emx);
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "exclusiveMinimum"))) emn = mn, mn = NULL;
  else kw_num(s, "exclusiveMinimum", &emn);
  kw_num(s, "multipleOf", &mo);
  if (mn && d < mn->valuedouble) num_msg(x, errs, loc, "minimum", v, mn);
  if (mx && d > mx->valuedouble) num_msg(x, errs, loc, "maximum", v, mx);
  if (emn && d <= emn->valuedouble) num_msg(x, errs, loc, "exclusiveMinimum", v, emn);
  if (emx && d >= emx->valuedouble) num_msg(x, errs, loc, "exclusiveMaximum", v, emx);
  if (mo && !dec_multiple(dec_of(v), dec_of(mo))) num_msg(x, errs, loc, "multipleOf", v, mo);
}

static void cond_validate(sctx_t *x, const cJSON *s, const cJSON *v, const char *loc, int vid, const frame_t *fr,
                          elist_t *errs, uneval_t *ue) {
  const cJSON *not = cJSON_GetObjectItemCaseSensitive(s, "not");
  if (not) {
    verr_t *e = validate(x, not, v, loc, vid, fr, NULL, ue);
    if (e) verr_free(e);
    else elist_add(x, errs, verr_new(x, E_MSG, loc, "'not' failed"));
  }
  const cJSON *allof = cJSON_GetObjectItemCaseSensitive(s, "allOf");
  if (cJSON_IsArray(allof) && allof->child) {
    elist_t l = {0};
    for (const cJSON *c = allof->child; c; c = c->next) elist_add(x, &l, validate(x, c, v, loc, vid, fr, NULL, ue));
    if (l.n) elist_add(x, errs, verr_with(x, E_MSG, loc, "'allOf' failed", &l));
  }
  const cJSON *anyof = cJSON_GetObjectItemCaseSensitive(s, "anyOf");
  if (cJSON_IsArray(anyof) && anyof->child) {
    elist_t l = {0};
    bool matched = false;
    for (const cJSON *c = anyof->child; c; c = c->next) {
      verr_t *e = validate(x, c, v, loc, vid, fr, NULL, ue);
      if (e) elist_add(x, &l, e);
      else {
        matched = true;
        if (ue_empty(ue)) break; /* the rest only matter for unevaluated* */
      }
    }
    if (!matched) elist_add(x, errs, verr_with(x, E_MSG, loc, "'anyOf' failed", &l));
    elist_free(&l);
  }
  const cJSON *oneof = cJSON_GetObjectItemCaseSensitive(s, "oneOf");
  if (cJSON_IsArray(oneof) && oneof->child) {
    elist_t l = {0};
    int matched = -1, i = 0;
    for (const cJSON *c = oneof->child; c; c = c->next, i++) {
      verr_t *e = validate(x, c, v, loc, vid, fr, NULL, ue);
      if (e) {
        if (matched == -1) elist_add(x, &l, e);
        else verr_free(e);
      } else if (matched == -1) matched = i;
      else {
        elist_add(x, errs, verr_msgf(x, loc, "'oneOf' failed, subschemas %s, %s matched", G(matched), G(i)));
        break;
      }
    }
    if (matched == -1) elist_add(x, errs, verr_with(x, E_MSG, loc, "'oneOf' failed, none matched", &l));
    elist_free(&l);
  }
  const cJSON *iff = x->draft >= 7 ? cJSON_GetObjectItemCaseSensitive(s, "if") : NULL;
  if (iff) {
    const cJSON *then = cJSON_IsFalse(iff) ? NULL : cJSON_GetObjectItemCaseSensitive(s, "then");
    const cJSON *els = cJSON_IsTrue(iff) ? NULL : cJSON_GetObjectItemCaseSensitive(s, "else");
    verr_t *e = validate(x, iff, v, loc, vid, fr, NULL, ue);
    if (!e) {
      if (then) elist_add(x, errs, validate(x, then, v, loc, vid, fr, NULL, ue));
    } else {
      verr_free(e);
      if (els) elist_add(x, errs, validate(x, els, v, loc, vid, fr, NULL, ue));
    }
  }
}

/* unevaluatedProperties / unevaluatedItems over what nothing else evaluated (keys in sorted order,
 * as elsewhere; Go's map order is random) */
static void uneval_validate(sctx_t *x, const cJSON *s, const cJSON *v, const char *loc, const frame_t *fr, elist_t *errs,
                            uneval_t *ue) {
  const cJSON *up = cJSON_GetObjectItemCaseSensitive(s, "unevaluatedProperties");
  if (up && cJSON_IsObject(v)) {
    int n = ue->np ? ue->nprops : 0, k = 0, i = 0;
    const cJSON **keys = n ? malloc((size_t)n * sizeof *keys) : NULL;
    if (n && !keys) {
      x->oom = true;
      return;
    }
    for (const cJSON *c = v->child; c && n; c = c->next, i++)
      if (i < ue->nprops && ue->props[i]) keys[k++] = c;
    if (k > 1) qsort(keys, (size_t)k, sizeof *keys, cmp_key);
    for (i = 0; i < k; i++) elist_add(x, errs, validate_val(x, up, keys[i], loc, keys[i]->string, fr));
    free(keys);
    for (i = 0; i < ue->nprops; i++) ue->props[i] = false;
    ue->np = 0;
  }
  const cJSON *ui = cJSON_GetObjectItemCaseSensitive(s, "unevaluatedItems");
  if (ui && cJSON_IsArray(v)) {
    int i = 0;
    for (const cJSON *c = v->child; c && ue->ni; c = c->next, i++)
      if (i < ue->nitems && ue->items[i]) elist_add(x, errs, validate_idx(x, ui, c, loc, i, fr));
    for (i = 0; i < ue->nitems; i++) ue->items[i] = false;
    ue->ni = 0;
  }
}

static verr_t *validate(sctx_t *x, const cJSON *s, const cJSON *v, const char *loc, int vid, const frame_t *up,
                        const char *refkw, uneval_t *parent) {
  /* the base URL here: a reference target's, else the one in effect, moved by this schema's $id */
  const char *base = x->ref_base ? x->ref_base : up ? up->base : x->refs ? x->refs->base0 : NULL;
  if (!x->ref_base && x->refs && node_id(s, x->refs->draft)) {
    const sres_t *r = res_by_node(x->refs, s);
    if (r) base = r->url;
  }
  x->ref_base = NULL;
  if (x->oom || x->fatal.len) return NULL;
  if (cJSON_IsTrue(s)) return NULL;
  if (cJSON_IsFalse(s)) return verr_new(x, E_MSG, loc, "false schema");
  if (!cJSON_IsObject(s)) return NULL;
  /* the same schema applied again to the same value without moving: a $ref cycle */
  frame_t fr = {s, vid, refkw, up, base};
  for (const frame_t *f = up; f && f->vid == vid; f = f->parent)
    if (f->sch == s) {
      buf_t k1 = BUF_INIT, k2 = BUF_INIT, m = BUF_INIT, u = BUF_INIT;
      kw_loc(x, &fr, &k1);
      kw_loc(x, f, &k2);
      buf_puts(&u, "file:///values.schema.json#");
      node_path(x->root, s, &u);
      buf_printf(&m, "both %s and %s resolve to ", k1.data ? k1.data : "", k2.data ? k2.data : "");
      tpl_fmt_quote(&m, u.data, u.len);
      buf_puts(&m, " causing reference cycle");
      verr_t *e = verr_new(x, E_MSG, loc, m.data ? m.data : "");
      buf_free(&k1);
      buf_free(&k2);
      buf_free(&m);
      buf_free(&u);
      return e;
    }
  if (x->depth >= x->max_depth) {
    if (!x->fatal.len) buf_puts(&x->fatal, "jsonschema: schema or values nested too deeply");
    return NULL;
  }
  x->depth++;
  elist_t errs = {0};
  verr_t *ret = NULL;
  uneval_t ue;
  ue_from(x, &ue, v, s, !ue_empty(parent));

  const cJSON *ref = cJSON_GetObjectItemCaseSensitive(s, "$ref");
  if (cJSON_IsString(ref) && x->draft < 2019) { /* all other keywords ignored */
    const char *tb;
    const cJSON *t = resolve_ref(x, base, ref->valuestring, &tb);
    x->ref_base = tb;
    ret = t ? validate_ref(x, t, v, loc, vid, &fr, "$ref", NULL) : NULL;
    x->ref_base = NULL;
    goto out;
  }

  const cJSON *type = cJSON_GetObjectItemCaseSensitive(s, "type");
  int types = 0;
  if (cJSON_IsString(type)) types = type_from(type->valuestring);
  else if (cJSON_IsArray(type))
    for (const cJSON *t = type->child; t; t = t->next)
      if (cJSON_IsString(t)) types |= type_from(t->valuestring);
  int t = type_of(v);
  if (types && !(types & t) && !((types & T_INTEGER) && t == T_NUMBER && is_integer(v))) {
    buf_t m = BUF_INIT;
    buf_printf(&m, "got %s, want ", type_names[__builtin_ctz((unsigned)t)]);
    bool first = true;
    for (int i = 0; i < 7; i++)
      if (types & (1 << i)) {
        buf_printf(&m, "%s%s", first ? "" : " or ", type_names[i]);
        first = false;
      }
    ret = verr_new(x, E_MSG, loc, m.data);
    buf_free(&m);
    goto out;
  }
  const cJSON *cnst = x->draft >= 6 ? cJSON_GetObjectItemCaseSensitive(s, "const") : NULL;
  if (cnst && !json_equal(v, cnst)) {
    buf_t m = BUF_INIT;
    if (cJSON_IsArray(cnst) || cJSON_IsObject(cnst)) buf_puts(&m, "'const' failed");
    else {
      buf_puts(&m, "value must be ");
      go_display(&m, cnst);
    }
    ret = verr_new(x, E_MSG, loc, m.data);
    buf_free(&m);
    goto out;
  }
  const cJSON *en = cJSON_GetObjectItemCaseSensitive(s, "enum");
  if (cJSON_IsArray(en)) {
    bool matched = false, prim = true;
    for (const cJSON *c = en->child; c; c = c->next) {
      if (!matched && json_equal(v, c)) matched = true;
      if (cJSON_IsArray(c) || cJSON_IsObject(c)) prim = false;
    }
    if (!matched) {
      buf_t m = BUF_INIT;
      if (!prim) buf_puts(&m, "'enum' failed");
      else if (cJSON_GetArraySize(en) == 1) {
        buf_puts(&m, "value must be ");
        go_display(&m, en->child);
      } else {
        buf_puts(&m, "value must be one of ");
        for (const cJSON *c = en->child; c; c = c->next) {
          if (c != en->child) buf_puts(&m, ", ");
          go_display(&m, c);
        }
      }
      ret = verr_new(x, E_MSG, loc, m.data ? m.data : "'enum' failed");
      buf_free(&m);
      goto out;
    }
  }
  const cJSON *fmt = x->draft < 2019 || x->assert_fmt ? cJSON_GetObjectItemCaseSensitive(s, "format") : NULL;
  if (cJSON_IsString(fmt) && cJSON_IsString(v)) {
    buf_t why = BUF_INIT;
    if (!format_check(fmt->valuestring, v->valuestring, &why)) {
      buf_t m = BUF_INIT;
      go_display(&m, v);
      buf_printf(&m, " is not valid %s: %s", fmt->valuestring, why.data ? why.data : "");
      ret = verr_new(x, E_MSG, loc, m.data);
      buf_free(&m);
      buf_free(&why);
      goto out;
    }
    buf_free(&why);
  }
  if (cJSON_IsString(ref)) {
    const char *tb;
    const cJSON *tg = resolve_ref(x, base, ref->valuestring, &tb);
    x->ref_base = tb;
    if (tg) elist_add(x, &errs, validate_ref(x, tg, v, loc, vid, &fr, "$ref", &ue));
    x->ref_base = NULL;
  }
  if (t == T_OBJECT) obj_validate(x, s, v, loc, vid, &fr, &errs, &ue);
  else if (t == T_ARRAY) arr_validate(x, s, v, loc, &fr, &errs, &ue);
  else if (t == T_STRING) str_validate(x, s, v, loc, &errs);
  else if (t == T_NUMBER) num_validate(x, s, v, loc, &errs);
  cond_validate(x, s, v, loc, vid, &fr, &errs, &ue);
  if (x->draft >= 2019) uneval_validate(x, s, v, loc, &fr, &errs, &ue);

  if (errs.n == 1) {
    ret = errs.v[0];
    free(errs.v);
    errs = (elist_t){0};
  } else if (errs.n > 1) ret = verr_with(x, E_GROUP, loc, NULL, &errs);
out:
  x->depth--;
  if (!ret && parent && !ue_empty(parent)) ue_merge(parent, &ue);
  ue_free(&ue);
  if (x->oom || x->fatal.len) {
    elist_free(&errs);
    verr_free(ret);
    return NULL;
  }
  return ret;
}

/* ValidationError.display without the verbose schema locations. */
static void display(buf_t *o, const verr_t *e, int indent) {
  if (!(e->kind == E_REF && e->ncauses == 1)) {
    if (indent > 0) {
      buf_putc(o, '\n');
      for (int i = 0; i < indent - 1; i++) buf_puts(o, "  ");
      buf_puts(o, "- ");
    }
    indent++;
    buf_puts(o, "at ");
    go_squote(o, e->loc, strlen(e->loc));
    buf_puts(o, ": ");
    buf_puts(o, e->kind == E_MSG ? e->msg : "validation failed");
  }
  for (size_t i = 0; i < e->ncauses; i++) display(o, e->causes[i], indent);
}

static int draft_of(const cJSON *root) {
  const cJSON *s = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "$schema") : NULL;
  if (!cJSON_IsString(s)) return 2020;
  const char *u = s->valuestring;
  if (strstr(u, "draft-04")) return 4;
  if (strstr(u, "draft-06")) return 6;
  if (strstr(u, "draft-07")) return 7;
  if (strstr(u, "2019-09")) return 2019;
  return 2020;
}

/* ---- encoding/json's syntax errors (what jsonschema.UnmarshalJSON reports) -------------- */

typedef struct {
  const char *s;
  size_t n, i;
  buf_t *o;
  size_t *nums; /* start and end of each number literal, in document order */
  size_t nnums, capnums;
  bool oom;
} jscan_t;

static void js_qchar(buf_t *o, char c) {
  if (c == '\'') buf_puts(o, "'\\''");
  else if (c == '"') buf_puts(o, "'\"'");
  else {
    buf_t q = BUF_INIT;
    tpl_fmt_quote(&q, &c, 1);
    buf_putc(o, '\'');
    if (q.len >= 2) buf_append(o, q.data + 1, q.len - 2);
    buf_putc(o, '\'');
    buf_free(&q);
  }
}

static int js_err(jscan_t *j, const char *ctx) {
  if (j->i >= j->n) return buf_puts(j->o, "unexpected EOF"), -1;
  buf_puts(j->o, "invalid character ");
  js_qchar(j->o, j->s[j->i]);
  buf_printf(j->o, " %s", ctx);
  return -1;
}

static void js_ws(jscan_t *j) {
  while (j->i < j->n && (j->s[j->i] == ' ' || j->s[j->i] == '\t' || j->s[j->i] == '\n' || j->s[j->i] == '\r')) j->i++;
}

static bool js_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

static int js_value(jscan_t *j, int depth);

static int js_string(jscan_t *j) {
  j->i++; /* opening quote */
  while (j->i < j->n) {
    unsigned char c = (unsigned char)j->s[j->i];
    if (c == '"') {
      j->i++;
      return 0;
    }
    if (c < 0x20) return js_err(j, "in string literal");
    if (c == '\\') {
      j->i++;
      if (j->i >= j->n) return js_err(j, "");
      char e = j->s[j->i];
      if (e == 'u') {
        for (int k = 0; k < 4; k++) {
          j->i++;
          if (j->i >= j->n) return js_err(j, "");
          if (!js_hex(j->s[j->i])) return js_err(j, "in \\u hexadecimal character escape");
        }
      } else if (!strchr("\"\\/bfnrt", e) || !e) return js_err(j, "in string escape code");
    }
    j->i++;
  }
  return js_err(j, "");
}

static int js_number_scan(jscan_t *j);

static int js_number(jscan_t *j) {
  size_t start = j->i;
  int rc = js_number_scan(j);
  if (!rc) {
    if (j->nnums + 2 > j->capnums) {
      size_t nc = j->capnums ? j->capnums * 2 : 32;
      size_t *nn = realloc(j->nums, nc * sizeof *nn);
      if (!nn) {
        j->oom = true;
        return 0;
      }
      j->nums = nn;
      j->capnums = nc;
    }
    j->nums[j->nnums++] = start;
    j->nums[j->nnums++] = j->i;
  }
  return rc;
}

static int js_number_scan(jscan_t *j) {
  if (j->s[j->i] == '-') {
    j->i++;
    if (j->i >= j->n) return js_err(j, "");
    if (!(j->s[j->i] >= '0' && j->s[j->i] <= '9')) return js_err(j, "in numeric literal");
  }
  if (j->s[j->i] == '0') j->i++;
  else
    while (j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9') j->i++;
  if (j->i < j->n && j->s[j->i] == '.') {
    j->i++;
    if (j->i >= j->n) return js_err(j, "");
    if (!(j->s[j->i] >= '0' && j->s[j->i] <= '9')) return js_err(j, "after decimal point in numeric literal");
    while (j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9') j->i++;
  }
  if (j->i < j->n && (j->s[j->i] == 'e' || j->s[j->i] == 'E')) {
    j->i++;
    if (j->i < j->n && (j->s[j->i] == '+' || j->s[j->i] == '-')) j->i++;
    if (j->i >= j->n) return js_err(j, "");
    if (!(j->s[j->i] >= '0' && j->s[j->i] <= '9')) return js_err(j, "in exponent of numeric literal");
    while (j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9') j->i++;
  }
  return 0;
}

static int js_value(jscan_t *j, int depth) {
  js_ws(j);
  if (j->i >= j->n) return js_err(j, "");
  if (depth > 10000) return buf_puts(j->o, "exceeded max depth"), -1;
  char c = j->s[j->i];
  if (c == '{') {
    j->i++;
    js_ws(j);
    if (j->i < j->n && j->s[j->i] == '}') return j->i++, 0;
    for (;;) {
      js_ws(j);
      if (j->i >= j->n || j->s[j->i] != '"') return js_err(j, "looking for beginning of object key string");
      if (js_string(j)) return -1;
      js_ws(j);
      if (j->i >= j->n || j->s[j->i] != ':') return js_err(j, "after object key");
      j->i++;
      if (js_value(j, depth + 1)) return -1;
      js_ws(j);
      if (j->i < j->n && j->s[j->i] == '}') return j->i++, 0;
      if (j->i >= j->n || j->s[j->i] != ',') return js_err(j, "after object key:value pair");
      j->i++;
    }
  }
  if (c == '[') {
    j->i++;
    js_ws(j);
    if (j->i < j->n && j->s[j->i] == ']') return j->i++, 0;
    for (;;) {
      if (js_value(j, depth + 1)) return -1;
      js_ws(j);
      if (j->i < j->n && j->s[j->i] == ']') return j->i++, 0;
      if (j->i >= j->n || j->s[j->i] != ',') return js_err(j, "after array element");
      j->i++;
    }
  }
  if (c == '"') return js_string(j);
  if (c == '-' || (c >= '0' && c <= '9')) return js_number(j);
  const char *lit = c == 't' ? "true" : c == 'f' ? "false" : c == 'n' ? "null" : NULL;
  if (!lit) return js_err(j, "looking for beginning of value");
  for (size_t k = 1; lit[k]; k++) {
    j->i++;
    if (j->i >= j->n) return js_err(j, "");
    if (j->s[j->i] != lit[k]) {
      char ctx[64];
      snprintf(ctx, sizeof ctx, "in literal %s (expecting '%c')", lit, lit[k]);
      return js_err(j, ctx);
    }
  }
  j->i++;
  return 0;
}

/* Go's message for text that is not one JSON value; false when the text is fine by Go. The
 * number literals' spans are left in j (the caller frees j->nums). */
static bool json_syntax_error(jscan_t *j) {
  js_ws(j);
  if (j->i >= j->n) return buf_puts(j->o, "EOF"), true;
  if (js_value(j, 0)) return true;
  js_ws(j);
  if (j->i < j->n) return buf_puts(j->o, "invalid character after top-level value"), true;
  return false;
}

static size_t count_nums(const cJSON *n) {
  size_t c = cJSON_IsNumber(n) ? 1 : 0;
  for (const cJSON *k = n->child; k; k = k->next) c += count_nums(k);
  return c;
}

/* Numbers in enum and const keep their literal text (Go displays a json.Number as written,
 * "2.50"): they become raw nodes holding it. */
static bool keep_literals(cJSON *n, bool lit, const jscan_t *j, size_t *idx) {
  if (cJSON_IsNumber(n)) {
    size_t k = (*idx)++;
    if (!lit) return true;
    char *t = strndup(j->s + j->nums[2 * k], j->nums[2 * k + 1] - j->nums[2 * k]);
    if (!t) return false;
    n->type = cJSON_Raw;
    n->valuestring = t;
    return true;
  }
  for (cJSON *c = n->child; c; c = c->next)
    if (!keep_literals(c, lit || (cJSON_IsObject(n) && (!strcmp(c->string, "enum") || !strcmp(c->string, "const"))), j,
                       idx))
      return false;
  return true;
}

/* One validation run of schema tree root (draft) over instance v: 0 valid, SCHEMA_EINVAL with
 * *err set (the library's error tree) or a fatal text in fatal, SCHEMA_ENOMEM. */
static int run(const cJSON *root, int draft, bool assert_fmt, srefs_t *refs, const cJSON *v, verr_t **err, buf_t *fatal) {
  /* a metaschema spends about four levels on each level of the schema it checks */
  sctx_t x = {.root = root, .draft = draft, .assert_fmt = assert_fmt, .refs = refs,
              .max_depth = assert_fmt ? 4 * SCHEMA_MAX_DEPTH : SCHEMA_MAX_DEPTH};
  x.urn_true.type = cJSON_True;
  x.md = pcre2_match_data_create(8, NULL);
  x.mc = pcre2_match_context_create(NULL);
  int rc = 0;
  *err = NULL;
  if (!x.md || !x.mc) {
    rc = SCHEMA_ENOMEM;
    goto done;
  }
  pcre2_set_match_limit(x.mc, 10000000);
  pcre2_set_depth_limit(x.mc, 10000);
  verr_t *e = validate(&x, root, v, "", 0, NULL, NULL, NULL);
  if (x.oom) rc = SCHEMA_ENOMEM;
  else if (x.fatal.len) {
    buf_append(fatal, x.fatal.data, x.fatal.len);
    rc = SCHEMA_EINVAL;
  } else if (e) {
    *err = e;
    e = NULL;
    rc = SCHEMA_EINVAL;
  }
  verr_free(e);
done:
  while (x.rx) {
    rx_t *n = x.rx->next;
    pcre2_code_free(x.rx->re);
    free(x.rx);
    x.rx = n;
  }
  pcre2_match_data_free(x.md);
  pcre2_match_context_free(x.mc);
  buf_free(&x.fatal);
  return rc;
}

/* Validate()'s causes: a group's, else the error itself, each as "\n- at ..." lines. */
static void display_causes(buf_t *b, const verr_t *e) {
  if (e->kind == E_GROUP)
    for (size_t i = 0; i < e->ncauses; i++) display(b, e->causes[i], 1);
  else display(b, e, 1);
}

/* Draft-04/06 metaschemas do not check patternProperties names; the library's compiler then
 * rejects a name Go cannot compile, in every subschema it compiles (not unreferenced
 * definitions). Returns false with the compiler's message in out. */
typedef struct seen_s {
  const cJSON *node;
  struct seen_s *next;
} seen_t;

static bool compile_walk(const cJSON *root, const cJSON *s, int draft, seen_t **seen, int depth, buf_t *out) {
  if (!cJSON_IsObject(s) || depth > SCHEMA_MAX_DEPTH) return true;
  for (seen_t *q = *seen; q; q = q->next)
    if (q->node == s) return true;
  seen_t *n = malloc(sizeof *n);
  if (!n) return true;
  n->node = s;
  n->next = *seen;
  *seen = n;
  const cJSON *ref = cJSON_GetObjectItemCaseSensitive(s, "$ref");
  if (cJSON_IsString(ref)) {
    if (ref->valuestring[0] != '#') return true;
    sctx_t tmp = {.root = root};
    const char *tb;
    const cJSON *t = resolve_ref(&tmp, NULL, ref->valuestring, &tb);
    buf_free(&tmp.fatal);
    return !t || compile_walk(root, t, draft, seen, depth + 1, out);
  }
  const cJSON *pp = cJSON_GetObjectItemCaseSensitive(s, "patternProperties");
  for (const cJSON *c = cJSON_IsObject(pp) ? pp->child : NULL; c; c = c->next) {
    buf_t why = BUF_INIT;
    if (!schema_go_regexp_ok(c->string, &why)) {
      buf_puts(out, "invalid regex ");
      tpl_fmt_quote(out, c->string, strlen(c->string));
      buf_puts(out, " at \"file:///values.schema.json#");
      node_path(root, s, out);
      buf_printf(out, "/patternProperties\": %s", why.data ? why.data : "");
      buf_free(&why);
      return false;
    }
    buf_free(&why);
  }
  static const char *const one[] = {"not", "additionalProperties", "additionalItems", "items", "propertyNames", "contains"};
  static const char *const arr[] = {"allOf", "anyOf", "oneOf", "items"};
  static const char *const map[] = {"properties", "patternProperties", "dependencies"};
  for (size_t i = 0; i < sizeof one / sizeof *one; i++) {
    if (draft == 4 && i >= 4) break;
    if (!compile_walk(root, cJSON_GetObjectItemCaseSensitive(s, one[i]), draft, seen, depth + 1, out)) return false;
  }
  for (size_t i = 0; i < sizeof arr / sizeof *arr; i++) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(s, arr[i]);
    for (const cJSON *c = cJSON_IsArray(a) ? a->child : NULL; c; c = c->next)
      if (!compile_walk(root, c, draft, seen, depth + 1, out)) return false;
  }
  for (size_t i = 0; i < sizeof map / sizeof *map; i++) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(s, map[i]);
    for (const cJSON *c = cJSON_IsObject(m) ? m->child : NULL; c; c = c->next)
      if (!compile_walk(root, c, draft, seen, depth + 1, out)) return false;
  }
  return true;
}

/* encoding/json keeps the last of repeated keys in an object; cJSON finds the first: drop the
 * earlier ones. */
static void drop_repeated_keys(cJSON *n) {
  for (cJSON *c = n->child; c; c = c->next) drop_repeated_keys(c);
  if (!cJSON_IsObject(n)) return;
  for (cJSON *c = n->child; c;) {
    cJSON *next = c->next;
    for (const cJSON *d = next; d; d = d->next)
      if (!strcmp(c->string, d->string)) {
        cJSON_Delete(cJSON_DetachItemViaPointer(n, c));
        break;
      }
    c = next;
  }
}

/* Parses a schema document as jsonschema.UnmarshalJSON does (encoding/json's syntax errors,
 * number literals of enum and const kept, the last of repeated keys kept); NULL with the reason
 * in out (what names the document in the nesting message), or with *oom set. */
static cJSON *doc_parse(const char *text, size_t len, const char *what, buf_t *out, bool *oom) {
  jscan_t js = {.s = text, .n = len, .o = out};
  *oom = false;
  if (json_syntax_error(&js)) {
    free(js.nums);
    *oom = js.oom;
    return NULL;
  }
  cJSON *root = cJSON_ParseWithLength(text, len);
  if (!root) { /* valid for Go but not for cJSON (nesting past its limit) */
    free(js.nums);
    buf_printf(out, "%s: JSON nested too deeply", what);
    return NULL;
  }
  size_t idx = 0;
  bool lit_ok = js.oom || count_nums(root) != js.nnums / 2 || keep_literals(root, false, &js, &idx);
  free(js.nums);
  if (!lit_ok) {
    cJSON_Delete(root);
    *oom = true;
    return NULL;
  }
  drop_repeated_keys(root);
  return root;
}

static bool res_add(srefs_t *R, const char *url, const cJSON *node) {
  if (res_by_url(R, url)) return true; /* the first resource of a URL wins */
  sres_t *e = malloc(sizeof *e);
  if (!e || !(e->url = strdup(url))) {
    free(e);
    return false;
  }
  e->node = node;
  e->next = R->res;
  R->res = e;
  return true;
}

/* Registers the resources of a document: its root under url, every schema with an $id under
 * the URL it resolves to (enum, const, default and examples hold values, not schemas). */
static bool refs_index(srefs_t *R, const cJSON *n, const char *base, int depth) {
  if (depth > SCHEMA_MAX_DEPTH || !(cJSON_IsObject(n) || cJSON_IsArray(n))) return true;
  char *own = NULL;
  const char *id = node_id(n, R->draft);
  if (id) {
    if (!(own = schema_uri_resolve(base, id))) return false;
    own[strcspn(own, "#")] = 0;
    if (!res_add(R, own, n)) return free(own), false;
    base = own;
  }
  bool ok = true;
  for (const cJSON *c = n->child; c && ok; c = c->next) {
    if (cJSON_IsObject(n) && (!strcmp(c->string, "enum") || !strcmp(c->string, "const") ||
                              !strcmp(c->string, "default") || !strcmp(c->string, "examples")))
      continue;
    ok = refs_index(R, c, base, depth + 1);
  }
  free(own);
  return ok;
}

static void display_causes(buf_t *b, const verr_t *e);

/* Loads the document at url (no fragment) through the loader, checks it against its
 * metaschema and registers its resources; false with x->fatal (or x->oom) set. */
static bool refs_load(sctx_t *x, const char *url) {
  srefs_t *R = x->refs;
  buf_t doc = BUF_INIT, why = BUF_INIT;
  int rc = SCHEMA_EINVAL;
  bool known = !strncmp(url, "file:", 5) || !strncmp(url, "http:", 5) || !strncmp(url, "https:", 6);
  if (!known || !R->ld) {
    buf_puts(&why, "no URLLoader registered for ");
    tpl_fmt_quote(&why, url, strlen(url));
  } else if (R->ndocs >= SCHEMA_MAX_DOCS) {
    buf_printf(&why, "more than %d documents referenced", SCHEMA_MAX_DOCS);
  } else {
    rc = R->ld->load(R->ld->ctx, url, &doc, &why);
    if (!rc && doc.len > SCHEMA_MAX_DOC_BYTES) {
      buf_reset(&why);
      buf_printf(&why, "document larger than %zu MiB", SCHEMA_MAX_DOC_BYTES >> 20);
      rc = SCHEMA_EINVAL;
    }
  }
  cJSON *root = NULL;
  bool oom = rc == SCHEMA_ENOMEM;
  if (!rc) root = doc_parse(doc.data ? doc.data : "", doc.len, url, &why, &oom);
  if (!root && !oom && !x->fatal.len) {
    buf_puts(&x->fatal, "failing loading ");
    tpl_fmt_quote(&x->fatal, url, strlen(url));
    buf_puts(&x->fatal, ": ");
    buf_append(&x->fatal, why.data ? why.data : "", why.len);
  }
  buf_free(&doc);
  buf_free(&why);
  if (oom) x->oom = true;
  if (!root) return false;
  int d = draft_of(root);
  verr_t *e = NULL;
  buf_t mo = BUF_INIT;
  cJSON *meta = schema_meta_build(d);
  rc = meta ? run(meta, d, true, NULL, root, &e, &mo) : SCHEMA_ENOMEM;
  cJSON_Delete(meta);
  sdoc_t *sd = rc ? NULL : malloc(sizeof *sd);
  if (rc == SCHEMA_EINVAL && !x->fatal.len) {
    if (e) {
      buf_t u = BUF_INIT;
      buf_printf(&u, "%s#", url);
      tpl_fmt_quote(&x->fatal, u.data ? u.data : "", u.len);
      buf_printf(&x->fatal, " is not valid against metaschema: jsonschema validation failed with '%s'", schema_meta_url(d));
      display_causes(&x->fatal, e);
      buf_free(&u);
    } else buf_append(&x->fatal, mo.data ? mo.data : "", mo.len);
  }
  verr_free(e);
  buf_free(&mo);
  if (!sd) {
    if (rc != SCHEMA_EINVAL) x->oom = true;
    cJSON_Delete(root);
    return false;
  }
  sd->root = root;
  sd->next = R->docs;
  R->docs = sd;
  R->ndocs++;
  if (!res_add(R, url, root) || !refs_index(R, root, url, 0)) {
    x->oom = true;
    return false;
  }
  return true;
}

/* Compile(): every schema reachable from s (through the keywords that hold schemas and through
 * $ref) has its references resolved, so that a document that cannot be loaded fails before
 * any value is looked at, wherever its reference is, as the library's compiler fails. */
static void refs_walk(sctx_t *x, const cJSON *s, const char *base, seen_t **seen, int depth) {
  if (!cJSON_IsObject(s) || depth > SCHEMA_MAX_DEPTH || x->fatal.len || x->oom) return;
  for (seen_t *q = *seen; q; q = q->next)
    if (q->node == s) return;
  seen_t *n = malloc(sizeof *n);
  if (!n) {
    x->oom = true;
    return;
  }
  n->node = s;
  n->next = *seen;
  *seen = n;
  if (node_id(s, x->refs->draft)) {
    const sres_t *r = res_by_node(x->refs, s);
    if (r) base = r->url;
  }
  const cJSON *ref = cJSON_GetObjectItemCaseSensitive(s, "$ref");
  if (cJSON_IsString(ref)) {
    const char *tb;
    const cJSON *t = resolve_ref(x, base, ref->valuestring, &tb);
    if (t) refs_walk(x, t, tb, seen, depth + 1);
  }
  static const char *const one[] = {"not", "additionalProperties", "additionalItems", "items", "propertyNames", "contains",
                                    "if", "then", "else", "unevaluatedProperties", "unevaluatedItems", "contentSchema"};
  static const char *const arr[] = {"allOf", "anyOf", "oneOf", "items", "prefixItems"};
  static const char *const map[] = {"properties", "patternProperties", "dependencies", "dependentSchemas"};
  for (size_t i = 0; i < sizeof one / sizeof *one; i++)
    refs_walk(x, cJSON_GetObjectItemCaseSensitive(s, one[i]), base, seen, depth + 1);
  for (size_t i = 0; i < sizeof arr / sizeof *arr; i++) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(s, arr[i]);
    for (const cJSON *c = cJSON_IsArray(a) ? a->child : NULL; c; c = c->next) refs_walk(x, c, base, seen, depth + 1);
  }
  for (size_t i = 0; i < sizeof map / sizeof *map; i++) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(s, map[i]);
    for (const cJSON *c = cJSON_IsObject(m) ? m->child : NULL; c; c = c->next) refs_walk(x, c, base, seen, depth + 1);
  }
}

static void refs_free(srefs_t *R) {
  buf_free(&R->warned);
  while (R->res) {
    sres_t *n = R->res->next;
    free(R->res->url);
    free(R->res);
    R->res = n;
  }
  while (R->docs) {
    sdoc_t *n = R->docs->next;
    cJSON_Delete(R->docs->root);
    free(R->docs);
    R->docs = n;
  }
}

/* Resolves every reference reachable from values.schema.json, loading what it needs; 0,
 * SCHEMA_EINVAL with the reason in out, SCHEMA_ENOMEM. */
static int refs_prepare(srefs_t *R, const cJSON *root, int draft, buf_t *out) {
  sctx_t x = {.root = root, .draft = draft, .refs = R, .max_depth = SCHEMA_MAX_DEPTH};
  x.urn_true.type = cJSON_True;
  seen_t *seen = NULL;
  if (!res_add(R, "file:///values.schema.json", root) || !refs_index(R, root, "file:///values.schema.json", 0)) x.oom = true;
  const sres_t *r = node_id(root, draft) ? res_by_node(R, root) : NULL;
  R->base0 = r ? r->url : "file:///values.schema.json";
  if (!x.oom) refs_walk(&x, root, R->base0, &seen, 0);
  while (seen) {
    seen_t *n = seen->next;
    free(seen);
    seen = n;
  }
  int rc = x.oom ? SCHEMA_ENOMEM : x.fatal.len ? SCHEMA_EINVAL : 0;
  if (rc == SCHEMA_EINVAL) buf_append(out, x.fatal.data, x.fatal.len);
  buf_free(&x.fatal);
  return rc;
}

int schema_validate(const char *schema_json, size_t len, const cJSON *values, buf_t *out) {
  return schema_validate_with(schema_json, len, values, NULL, out);
}

int schema_validate_with(const char *schema_json, size_t len, const cJSON *values, const schema_loader_t *ld,
                         buf_t *out) {
  bool oom;
  cJSON *root = doc_parse(schema_json, len, "values.schema.json", out, &oom);
  if (!root) return oom ? SCHEMA_ENOMEM : SCHEMA_EINVAL;
  int draft = draft_of(root);
  verr_t *e = NULL;
  /* Compile(): the schema against its draft's metaschema first */
  cJSON *meta = schema_meta_build(draft);
  int rc = meta ? run(meta, draft, true, NULL, root, &e, out) : SCHEMA_ENOMEM;
  cJSON_Delete(meta);
  if (rc == SCHEMA_EINVAL && e) {
    buf_printf(out, "\"file:///values.schema.json#\" is not valid against metaschema: jsonschema validation failed with '%s'",
               schema_meta_url(draft));
    display_causes(out, e);
  }
  if (!rc && draft < 7) {
    seen_t *seen = NULL;
    if (!compile_walk(root, root, draft, &seen, 0, out)) rc = SCHEMA_EINVAL;
    while (seen) {
      seen_t *n = seen->next;
      free(seen);
      seen = n;
    }
  }
  srefs_t refs = {.ld = ld, .draft = draft};
  if (!rc) rc = refs_prepare(&refs, root, draft, out);
  if (!rc) {
    rc = run(root, draft, false, &refs, values, &e, out);
    if (rc == SCHEMA_EINVAL && e) {
      /* under the schema's line, which Helm trims: the first cause's "\n" goes too */
      buf_t b = BUF_INIT;
      display_causes(&b, e);
      if (b.len && b.data[0] == '\n') buf_append(out, b.data + 1, b.len - 1);
      else if (b.len) buf_append(out, b.data, b.len);
      buf_putc(out, '\n');
      buf_free(&b);
    }
  }
  verr_free(e);
  refs_free(&refs);
  cJSON_Delete(root);
  return rc;
}
