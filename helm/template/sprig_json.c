/* Go's encoding/json for template values: Marshal (sorted keys, HTML
 * escaping, ES6 float formatting, MarshalIndent) and Unmarshal into
 * interface{} with Go's syntax error texts. */
#include <math.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "base/worker.h"
#include "helm/template/sprig_internal.h"

/* ---- encoding ---- */

typedef struct {
  buf_t *o;
  bool html;
  const char *indent;
  buf_t *err;
  int rc;
  worker_t *helper; /* may take half of a big list (jpart_*) */
  bool part;        /* encoding that half on the helper */
  size_t max;       /* the output may not grow past this (rc TPL_ELIMIT); 0: no limit */
  tpl_call_t *call; /* whose budget is looked at every few thousand values (never on the helper) */
  unsigned tick;
} jenc_t;

#define JPART_BAIL 2 /* the helper's half holds something it leaves to the main thread */

static const char hexd[] = "0123456789abcdef";

/* Appends n bytes (nothing once an error is set); most appends are a few bytes, so the room check
 * is inline. */
static inline void jput(jenc_t *e, const char *s, size_t n) {
  buf_t *o = e->o;
  if (e->rc) return;
  if (o->len + n + 1 > o->cap && buf_reserve(o, n)) {
    e->rc = TPL_ENOMEM;
    return;
  }
  memcpy(o->data + o->len, s, n);
  o->len += n;
  o->data[o->len] = 0;
}

static inline void jputc(jenc_t *e, char c) { jput(e, &c, 1); }

/* Per byte: 0 copied as it is; 1 escaped; 2 escaped when HTML-escaping (<, >, &); 3 the start of
 * a multi-byte sequence (copied unless invalid or U+2028/U+2029). */
static const unsigned char json_class[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
};

/* The length of the run from i of bytes that need no escape (json_class & mask zero): 16 bytes
 * at a time with SSE2 while none of them is a control byte, '"', '\\', a byte from 0x80 (UTF-8,
 * looked at one by one) or, with html, '<', '>' or '&'; then byte by byte. */
static inline size_t json_clean_run(const unsigned char *p, size_t i, size_t n, unsigned mask) {
#ifdef __SSE2__
  const __m128i sp = _mm_set1_epi8(0x20), qu = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\');
  const __m128i lt = _mm_set1_epi8('<'), gt = _mm_set1_epi8('>'), am = _mm_set1_epi8('&');
  while (i + 16 <= n) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
    __m128i bad = _mm_or_si128(_mm_cmplt_epi8(v, sp), _mm_or_si128(_mm_cmpeq_epi8(v, qu), _mm_cmpeq_epi8(v, bs)));
    if (mask & 2) bad = _mm_or_si128(bad, _mm_or_si128(_mm_cmpeq_epi8(v, lt), _mm_or_si128(_mm_cmpeq_epi8(v, gt), _mm_cmpeq_epi8(v, am))));
    if (_mm_movemask_epi8(bad)) break;
    i += 16;
  }
#endif
  while (i < n && !(json_class[p[i]] & mask)) i++;
  return i;
}

void sprig__json_string(buf_t *o, const char *s, size_t n, bool html);
void sprig__json_string(buf_t *o, const char *s, size_t n, bool html) {
  const unsigned char *p = (const unsigned char *)s;
  const unsigned mask = html ? 3 : 1;
  /* Room for the text, both quotes and the NUL; each escape reserves its own growth, so runs of
   * plain bytes are copied without checks. */
  if (buf_reserve(o, n + 2)) return;
  o->data[o->len++] = '"';
  size_t start = 0, i = 0;
  for (;;) {
    i = json_clean_run(p, i, n, mask);
    if (i >= n) break;
    unsigned char b = p[i];
    char esc[8];
    size_t el;
    size_t w = 1;
    if (b >= 0x80) {
      int32_t r;
      w = tpl__utf8_decode(s + i, n - i, &r);
      if (r == 0xFFFD && w == 1) memcpy(esc, "\\ufffd", el = 6);
      else if (r == 0x2028 || r == 0x2029) memcpy(esc, r == 0x2028 ? "\\u2028" : "\\u2029", el = 6);
      else {
        i += w;
        continue;
      }
    } else {
      switch (b) {
      case '\\': case '"': esc[0] = '\\', esc[1] = (char)b, el = 2; break;
      case '\b': memcpy(esc, "\\b", el = 2); break;
      case '\f': memcpy(esc, "\\f", el = 2); break;
      case '\n': memcpy(esc, "\\n", el = 2); break;
      case '\r': memcpy(esc, "\\r", el = 2); break;
      case '\t': memcpy(esc, "\\t", el = 2); break;
      default: {
        char u[6] = {'\\', 'u', '0', '0', hexd[b >> 4], hexd[b & 15]};
        memcpy(esc, u, el = 6);
      }
      }
    }
    memcpy(o->data + o->len, s + start, i - start);
    o->len += i - start;
    /* the escape, the rest of the text, the closing quote and the NUL */
    if (buf_reserve(o, el + (n - i - w) + 1)) {
      o->data[o->len] = 0;
      return;
    }
    memcpy(o->data + o->len, esc, el);
    o->len += el;
    i += w;
    start = i;
  }
  memcpy(o->data + o->len, s + start, n - start);
  o->len += n - start;
  o->data[o->len++] = '"';
  o->data[o->len] = 0;
}

/* sprig__json_string inline for the common string that needs no escape (one scan, one copy). */
static inline void jstr(jenc_t *e, const char *s, size_t n) {
  buf_t *o = e->o;
  if (e->rc) return;
  if (o->len + n + 3 > o->cap && buf_reserve(o, n + 2)) {
    e->rc = TPL_ENOMEM;
    return;
  }
  const unsigned char *p = (const unsigned char *)s;
  const unsigned mask = e->html ? 3 : 1;
  size_t i = json_clean_run(p, 0, n, mask);
  if (i < n) {
    sprig__json_string(o, s, n, e->html);
    return;
  }
  char *d = o->data + o->len;
  d[0] = '"';
  memcpy(d + 1, s, n);
  d[n + 1] = '"';
  d[n + 2] = 0;
  o->len += n + 2;
}

/* Appends a Go int64/uint64 in decimal. */
static void jint(jenc_t *e, uint64_t u, bool neg) {
  char t[24];
  size_t k = sizeof t;
  do {
    t[--k] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (neg) t[--k] = '-';
  jput(e, t + k, sizeof t - k);
}

/* Appends a float64 as encoding/json does; -1 for NaN/Inf. */
int sprig__json_float(buf_t *o, double f);
int sprig__json_float(buf_t *o, double f) {
  if (isnan(f) || isinf(f)) return -1;
  double a = fabs(f);
  if (a < 1e15 && f == (double)(int64_t)f && !(f == 0 && signbit(f))) {
    /* an integral value (ports, counts): its digits, as 'f' with the shortest precision prints it */
    char t[24];
    size_t k = sizeof t;
    uint64_t u = (uint64_t)a;
    do {
      t[--k] = (char)('0' + u % 10);
      u /= 10;
    } while (u);
    if (f < 0) t[--k] = '-';
    buf_append(o, t + k, sizeof t - k);
    return 0;
  }
  char fmtc = 'f';
  if (a != 0 && (a < 1e-6 || a >= 1e21)) fmtc = 'e';
  size_t before = o->len;
  tpl_fmt_float(o, f, fmtc, -1);
  if (fmtc == 'e') {
    size_t n = o->len - before;
    char *b = o->data + before;
    if (n >= 4 && b[n - 4] == 'e' && b[n - 3] == '-' && b[n - 2] == '0') {
      b[n - 2] = b[n - 1];
      o->len--;
      o->data[o->len] = 0;
    }
  }
  return 0;
}

static void newline(jenc_t *e, int depth) {
  if (!e->indent) return;
  jput(e, "\n", 1);
  for (int i = 0; i < depth; i++) jput(e, e->indent, strlen(e->indent));
}

static void jenc(jenc_t *e, const tpl_value_t *v, int depth);

/* ---- big lists in two halves ----
 * The items of a list are encoded one after the other, each on its own: the second half of a big
 * one is encoded on the helper thread into a buffer of its own while this thread does the first,
 * and appended. An error in the first half wins, as when encoding in order; host objects
 * (sprig__object_marshal) are left to this thread. */
typedef struct {
  jenc_t je;
  buf_t out, err;
  const tpl_list_t *l;
  size_t from;
  int depth;
  long ticket;
} jpart_t;

static void jpart_items(jenc_t *e, const tpl_list_t *l, size_t from, size_t to, int depth) {
  for (size_t i = from; i < to && !e->rc; i++) {
    if (i) jput(e, ",", 1);
    newline(e, depth + 1);
    tpl_value_t it = tpl_list_at(l, i);
    jenc(e, &it, depth + 1);
  }
}

static void jpart_run(void *p) {
  jpart_t *pt = p;
  jpart_items(&pt->je, pt->l, pt->from, pt->l->len, pt->depth);
}

static jpart_t *jpart_start(const jenc_t *e, const tpl_list_t *l, size_t from, int depth) {
  jpart_t *pt = calloc(1, sizeof *pt);
  if (!pt) return NULL;
  pt->je = (jenc_t){&pt->out, e->html, e->indent, e->err ? &pt->err : NULL, 0, NULL, true, e->max, NULL, 0};
  pt->l = l;
  pt->from = from;
  pt->depth = depth;
  pt->ticket = worker_post(e->helper, jpart_run, pt);
  if (pt->ticket < 0) {
    free(pt);
    return NULL;
  }
  return pt;
}

/* After the first half: the second half's text appended (or its error taken), or encoded here. */
static void jpart_join(jenc_t *e, jpart_t *pt) {
  worker_wait_for(e->helper, pt->ticket);
  if (!e->rc) {
    if (!pt->je.rc) jput(e, pt->out.data ? pt->out.data : "", pt->out.len);
    else if (pt->je.rc == JPART_BAIL) jpart_items(e, pt->l, pt->from, pt->l->len, pt->depth);
    else {
      e->rc = pt->je.rc;
      if (e->err && pt->err.len) buf_append(e->err, pt->err.data, pt->err.len);
    }
  }
  buf_free(&pt->out);
  buf_free(&pt->err);
  free(pt);
}

static void jenc(jenc_t *e, const tpl_value_t *v, int depth) {
  if (e->rc) return;
  if ((e->max && e->o->len > e->max) || (e->call && !(++e->tick & 4095) && tpl_call_check(e->call))) {
    e->rc = TPL_ELIMIT;
    return;
  }
  if (depth > 1000) {
    if (e->err) buf_printf(e->err, "json: unsupported value: encountered a cycle via %s",
                           v->kind == TPL_LIST ? "[]interface {}" : "map[string]interface {}");
    e->rc = -1;
    return;
  }
  switch (v->kind) {
  case TPL_INVALID:
  case TPL_NIL: jput(e, "null", 4); return;
  case TPL_BOOL: v->u.b ? jput(e, "true", 4) : jput(e, "false", 5); return;
  case TPL_INT:
  case TPL_INT64:
    jint(e, v->u.i < 0 ? -(uint64_t)v->u.i : (uint64_t)v->u.i, v->u.i < 0);
    return;
  case TPL_UINT64: jint(e, v->u.u, false); return;
  case TPL_FLOAT64:
    if (sprig__json_float(e->o, v->u.f)) {
      if (e->err) {
        buf_puts(e->err, "json: unsupported value: ");
        tpl_fmt_float(e->err, v->u.f, 'g', -1);
      }
      e->rc = -1;
    }
    return;
  case TPL_STRING: jstr(e, v->u.s.p, v->u.s.n); return;
  case TPL_LIST: {
    const tpl_list_t *l = v->u.list;
    if (!l) {
      jput(e, "null", 4);
      return;
    }
    if (tpl_value_is_bytes(v)) { /* encoding/json: a []byte is a base64 string */
      buf_t b = BUF_INIT;
      if (sprig__bytes_b64(v, &b)) e->rc = TPL_ENOMEM;
      else jput(e, b.data ? b.data : "\"\"", b.len ? b.len : 2);
      buf_free(&b);
      return;
    }
    jputc(e, '[');
    jpart_t *pt = e->helper && sprig__split_worth(l) ? jpart_start(e, l, l->len / 2, depth) : NULL;
    if (pt) {
      worker_t *h = e->helper;
      e->helper = NULL; /* one split at a time */
      jpart_items(e, l, 0, pt->from, depth);
      e->helper = h;
      jpart_join(e, pt);
    } else {
      jpart_items(e, l, 0, l->len, depth);
    }
    if (l->len) newline(e, depth);
    jputc(e, ']');
    return;
  }
  case TPL_MAP: {
    const tpl_map_t *m = v->u.map;
    if (!m) {
      jput(e, "null", 4);
      return;
    }
    jputc(e, '{');
    const tpl_map_entry_t *small[32], **es = small;
    if (m->len > sizeof small / sizeof *small) {
      es = malloc(m->len * sizeof(*es));
      if (!es) {
        e->rc = TPL_ENOMEM;
        return;
      }
    }
    if (m->len) {
      for (size_t i = 0; i < m->len; i++) es[i] = &m->ents[i];
      tpl__sort_entries(es, m->len);
    }
    for (size_t i = 0; i < m->len && !e->rc; i++) {
      if (i) jputc(e, ',');
      newline(e, depth + 1);
      jstr(e, es[i]->key, es[i]->klen);
      jput(e, e->indent ? ": " : ":", e->indent ? 2 : 1);
      jenc(e, &es[i]->val, depth + 1);
    }
    if (m->len) newline(e, depth);
    jputc(e, '}');
    if (es != small) free(es);
    return;
  }
  case TPL_OBJECT: {
    if (e->part) {
      e->rc = JPART_BAIL;
      return;
    }
    buf_t t = BUF_INIT;
    bool num = false;
    if (sprig__object_marshal(v, &t, &num)) {
      if (num) jput(e, t.data ? t.data : "", t.len);
      else sprig__json_string(e->o, t.data ? t.data : "", t.len, e->html);
      buf_free(&t);
      return;
    }
    jput(e, "{}", 2);
    return;
  }
  case TPL_FUNC:
    if (e->err) {
      buf_puts(e->err, "json: unsupported type: ");
      tpl_value_type_name(v, e->err);
    }
    e->rc = -1;
    return;
  }
}

int sprig_json_encode_with(buf_t *out, const tpl_value_t *v, bool html, const char *indent, buf_t *err,
                           worker_t *helper) {
  return sprig__json_encode_max(out, v, html, indent, err, helper, 0, NULL);
}

int sprig__json_encode_max(buf_t *out, const tpl_value_t *v, bool html, const char *indent, buf_t *err,
                           worker_t *helper, size_t max, tpl_call_t *call) {
  jenc_t e = {out, html, indent, err, 0, helper, false, max, call, 0};
  jenc(&e, v, 0);
  return e.rc;
}

int sprig_json_encode(buf_t *out, const tpl_value_t *v, bool html, const char *indent, buf_t *err) {
  return sprig_json_encode_with(out, v, html, indent, err, NULL);
}

/* ---- decoding ---- */

typedef struct {
  const char *s;
  size_t n, i;
  tpl_arena_t *a;
  buf_t *err;
  int depth;
  bool numerr; /* a number did not fit a float64: reported after the whole input */
} jdec_t;

/* Go's scanner error for the byte at the cursor; at the end of input, numbers and literals
 * see the space that scanner.eof() feeds them (eof_space), everything else "unexpected end". */
static int jerr_char2(jdec_t *d, const char *ctx, bool eof_space) {
  if (d->i >= d->n && !eof_space) {
    buf_reset(d->err);
    buf_puts(d->err, "unexpected end of JSON input");
    return -1;
  }
  buf_reset(d->err);
  unsigned char c = d->i >= d->n ? ' ' : (unsigned char)d->s[d->i];
  buf_puts(d->err, "invalid character ");
  if (c == '\'') buf_puts(d->err, "'\\''");
  else if (c == '"') buf_puts(d->err, "'\"'");
  else {
    char u[4];
    size_t w = tpl__utf8_encode(c, u);
    buf_t q = BUF_INIT;
    tpl_fmt_quote(&q, u, w);
    buf_putc(d->err, '\'');
    buf_append(d->err, q.data + 1, q.len - 2);
    buf_putc(d->err, '\'');
    buf_free(&q);
  }
  buf_printf(d->err, " %s", ctx);
  return -1;
}

static int jerr_char(jdec_t *d, const char *ctx) { return jerr_char2(d, ctx, false); }

static void ws(jdec_t *d) {
  while (d->i < d->n && (d->s[d->i] == ' ' || d->s[d->i] == '\t' || d->s[d->i] == '\n' || d->s[d->i] == '\r')) d->i++;
}

static int hexv(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static int jstring(jdec_t *d, buf_t *b) {
  d->i++; /* opening quote */
  for (;;) {
    if (d->i >= d->n) return jerr_char(d, "");
    unsigned char c = (unsigned char)d->s[d->i];
    if (c == '"') {
      d->i++;
      return 0;
    }
    if (c < 0x20) return jerr_char(d, "in string literal");
    if (c == '\\') {
      d->i++;
      if (d->i >= d->n) return jerr_char2(d, "in string escape code", true);
      char e = d->s[d->i];
      switch (e) {
      case '"': case '\\': case '/': buf_putc(b, e); d->i++; continue;
      case 'b': buf_putc(b, '\b'); d->i++; continue;
      case 'f': buf_putc(b, '\f'); d->i++; continue;
      case 'n': buf_putc(b, '\n'); d->i++; continue;
      case 'r': buf_putc(b, '\r'); d->i++; continue;
      case 't': buf_putc(b, '\t'); d->i++; continue;
      case 'u': {
        d->i++;
        int32_t r = 0;
        for (int k = 0; k < 4; k++) {
          if (d->i >= d->n) return jerr_char2(d, "in \\u hexadecimal character escape", true);
          int h = hexv((unsigned char)d->s[d->i]);
          if (h < 0) return jerr_char(d, "in \\u hexadecimal character escape");
          r = r * 16 + h;
          d->i++;
        }
        if (r >= 0xD800 && r < 0xDC00) {
          /* A surrogate pair when a low surrogate escape follows. */
          if (d->i + 6 <= d->n && d->s[d->i] == '\\' && d->s[d->i + 1] == 'u') {
            int32_t r2 = 0;
            bool ok = true;
            for (int k = 0; k < 4; k++) {
              int h = hexv((unsigned char)d->s[d->i + 2 + k]);
              if (h < 0) ok = false;
              r2 = r2 * 16 + (h < 0 ? 0 : h);
            }
            if (ok && r2 >= 0xDC00 && r2 < 0xE000) {
              r = 0x10000 + ((r - 0xD800) << 10) + (r2 - 0xDC00);
              d->i += 6;
            } else {
              r = 0xFFFD;
            }
          } else {
            r = 0xFFFD;
          }
        } else if (r >= 0xDC00 && r < 0xE000) {
          r = 0xFFFD;
        }
        char u[4];
        buf_append(b, u, tpl__utf8_encode(r, u));
        continue;
      }
      default: return jerr_char(d, "in string escape code");
      }
    }
    if (c < 0x80) {
      buf_putc(b, (char)c);
      d->i++;
      continue;
    }
    int32_t r;
    size_t w = tpl__utf8_decode(d->s + d->i, d->n - d->i, &r);
    if (r == 0xFFFD && w == 1) buf_puts(b, "\xEF\xBF\xBD");
    else buf_append(b, d->s + d->i, w);
    d->i += w;
  }
}

static int jvalue(jdec_t *d, tpl_value_t *out);

static int jnumber(jdec_t *d, tpl_value_t *out) {
  size_t st = d->i;
  if (d->s[d->i] == '-') {
    d->i++;
    if (d->i >= d->n || d->s[d->i] < '0' || d->s[d->i] > '9') return jerr_char2(d, "in numeric literal", true);
  }
  if (d->s[d->i] == '0') d->i++;
  else
    while (d->i < d->n && d->s[d->i] >= '0' && d->s[d->i] <= '9') d->i++;
  if (d->i < d->n && d->s[d->i] == '.') {
    d->i++;
    if (d->i >= d->n || d->s[d->i] < '0' || d->s[d->i] > '9') return jerr_char2(d, "after decimal point in numeric literal", true);
    while (d->i < d->n && d->s[d->i] >= '0' && d->s[d->i] <= '9') d->i++;
  }
  if (d->i < d->n && (d->s[d->i] == 'e' || d->s[d->i] == 'E')) {
    d->i++;
    if (d->i < d->n && (d->s[d->i] == '+' || d->s[d->i] == '-')) d->i++;
    if (d->i >= d->n || d->s[d->i] < '0' || d->s[d->i] > '9') return jerr_char2(d, "in exponent of numeric literal", true);
    while (d->i < d->n && d->s[d->i] >= '0' && d->s[d->i] <= '9') d->i++;
  }
  double f;
  int rc = sprig__parse_float(d->s + st, d->i - st, &f);
  if (rc) {
    if (!d->numerr)
      buf_printf(d->err, "json: cannot unmarshal number %.*s into Go value of type float64", (int)(d->i - st), d->s + st);
    d->numerr = true;
    *out = tpl_value_nil();
    return 0;
  }
  *out = tpl_value_float(f);
  return 0;
}

static int jliteral(jdec_t *d, const char *word, tpl_value_t v, tpl_value_t *out) {
  size_t m = strlen(word);
  d->i++;
  for (size_t k = 1; k < m; k++) {
    if (d->i >= d->n || d->s[d->i] != word[k]) {
      char ctx[64];
      snprintf(ctx, sizeof ctx, "in literal %s (expecting '%c')", word, word[k]);
      return jerr_char2(d, ctx, true);
    }
    d->i++;
  }
  *out = v;
  return 0;
}

static int jvalue(jdec_t *d, tpl_value_t *out) {
  ws(d);
  if (d->i >= d->n) return jerr_char(d, "");
  char c = d->s[d->i];
  if (c == '{' || c == '[') {
    if (++d->depth > 10000) {
      buf_puts(d->err, "exceeded max depth");
      return -1;
    }
  }
  if (c == '{') {
    d->i++;
    *out = tpl_value_map_new(d->a, TPL_ELEM_ANY);
    if (out->kind == TPL_INVALID) return TPL_ENOMEM;
    ws(d);
    if (d->i < d->n && d->s[d->i] == '}') {
      d->i++;
      d->depth--;
      return 0;
    }
    for (;;) {
      if (d->i >= d->n || d->s[d->i] != '"') return jerr_char(d, "looking for beginning of object key string");
      buf_t k = BUF_INIT;
      int rc = jstring(d, &k);
      if (rc) {
        buf_free(&k);
        return rc;
      }
      ws(d);
      if (d->i >= d->n || d->s[d->i] != ':') {
        buf_free(&k);
        return jerr_char(d, "after object key");
      }
      d->i++;
      tpl_value_t v;
      rc = jvalue(d, &v);
      if (rc) {
        buf_free(&k);
        return rc;
      }
      rc = tpl_map_set(d->a, out->u.map, k.data ? k.data : "", k.len, v);
      buf_free(&k);
      if (rc) return rc;
      ws(d);
      if (d->i < d->n && d->s[d->i] == ',') {
        d->i++;
        ws(d);
        continue;
      }
      if (d->i < d->n && d->s[d->i] == '}') {
        d->i++;
        d->depth--;
        return 0;
      }
      return jerr_char(d, "after object key:value pair");
    }
  }
  if (c == '[') {
    d->i++;
    *out = tpl_value_list_new(d->a, TPL_ELEM_ANY, 0);
    if (out->kind == TPL_INVALID) return TPL_ENOMEM;
    ws(d);
    if (d->i < d->n && d->s[d->i] == ']') {
      d->i++;
      d->depth--;
      return 0;
    }
    for (;;) {
      tpl_value_t v;
      int rc = jvalue(d, &v);
      if (rc) return rc;
      if (tpl_list_push(d->a, out->u.list, v)) return TPL_ENOMEM;
      ws(d);
      if (d->i < d->n && d->s[d->i] == ',') {
        d->i++;
        continue;
      }
      if (d->i < d->n && d->s[d->i] == ']') {
        d->i++;
        d->depth--;
        return 0;
      }
      return jerr_char(d, "after array element");
    }
  }
  if (c == '"') {
    buf_t b = BUF_INIT;
    int rc = jstring(d, &b);
    if (!rc) {
      *out = tpl_value_str_copy(d->a, b.data ? b.data : "", b.len);
      if (out->kind == TPL_INVALID) rc = TPL_ENOMEM;
    }
    buf_free(&b);
    return rc;
  }
  if (c == '-' || (c >= '0' && c <= '9')) return jnumber(d, out);
  if (c == 't') return jliteral(d, "true", tpl_value_bool(true), out);
  if (c == 'f') return jliteral(d, "false", tpl_value_bool(false), out);
  if (c == 'n') return jliteral(d, "null", tpl_value_nil(), out);
  return jerr_char(d, "looking for beginning of value");
}

/* json.Unmarshal into interface{}: 0, -1 (syntax error text in err), -2 (a number did not fit:
 * *out holds the value with nulls there, err says which), or TPL_ENOMEM. */
int sprig__json_decode(tpl_arena_t *a, const char *s, size_t n, tpl_value_t *out, buf_t *err);
int sprig__json_decode(tpl_arena_t *a, const char *s, size_t n, tpl_value_t *out, buf_t *err) {
  jdec_t d = {s, n, 0, a, err, 0, false};
  *out = tpl_value_nil();
  int rc = jvalue(&d, out);
  if (rc) return rc;
  ws(&d);
  if (d.i < d.n) return jerr_char(&d, "after top-level value");
  return d.numerr ? -2 : 0;
}
