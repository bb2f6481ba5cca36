/* Go's fmt package for the value model: Sprint, Sprintln, Sprintf with every
 * verb, flag, width and precision, and strconv's float formatting and quoting. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gofloat.h"
#include "helm/template/tpl.h"
#include "helm/template/tpl_internal.h"

typedef struct tpl__flags_s {
  bool sharp, zero, plus, minus, space, sharpv, plusv, widp, precp;
  int wid, prec;
} tpl__flags_t;

typedef struct tpl__pp_s {
  buf_t *b;
  tpl__flags_t f;
  bool erroring;
  int rc;
  size_t max; /* the buffer may not grow past this (rc TPL_ELIMIT, and nothing more is printed); 0: no limit */
} tpl__pp_t;

static void pp_write(tpl__pp_t *p, const char *s, size_t n) {
  if (!p->rc && n) p->rc = p->max && p->b->len + n > p->max ? TPL_ELIMIT : buf_append(p->b, s, n);
}
static void pp_puts(tpl__pp_t *p, const char *s) { pp_write(p, s, strlen(s)); }
static void pp_putc(tpl__pp_t *p, char c) { pp_write(p, &c, 1); }

/* ---- UTF-8 helpers ---- */

size_t tpl__utf8_decode(const char *s, size_t n, int32_t *r) {
  const unsigned char *u = (const unsigned char *)s;
  if (n == 0) { *r = 0xFFFD; return 0; }
  if (u[0] < 0x80) { *r = u[0]; return 1; }
  if (u[0] >= 0xC2 && u[0] <= 0xDF && n >= 2 && (u[1] & 0xC0) == 0x80) {
    *r = ((u[0] & 0x1F) << 6) | (u[1] & 0x3F);
    return 2;
  }
  if (u[0] >= 0xE0 && u[0] <= 0xEF && n >= 3 && (u[1] & 0xC0) == 0x80 && (u[2] & 0xC0) == 0x80) {
    int32_t c = ((u[0] & 0x0F) << 12) | ((u[1] & 0x3F) << 6) | (u[2] & 0x3F);
    if (c >= 0x800 && (c < 0xD800 || c > 0xDFFF)) { *r = c; return 3; }
  }
  if (u[0] >= 0xF0 && u[0] <= 0xF4 && n >= 4 && (u[1] & 0xC0) == 0x80 && (u[2] & 0xC0) == 0x80 &&
      (u[3] & 0xC0) == 0x80) {
    int32_t c = ((u[0] & 0x07) << 18) | ((u[1] & 0x3F) << 12) | ((u[2] & 0x3F) << 6) | (u[3] & 0x3F);
    if (c >= 0x10000 && c <= 0x10FFFF) { *r = c; return 4; }
  }
  *r = 0xFFFD;
  return 1; /* invalid: one byte, RuneError */
}

size_t tpl__utf8_encode(int32_t r, char *out) {
  if (r < 0 || r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) r = 0xFFFD;
  if (r < 0x80) { out[0] = (char)r; return 1; }
  if (r < 0x800) { out[0] = (char)(0xC0 | (r >> 6)); out[1] = (char)(0x80 | (r & 0x3F)); return 2; }
  if (r < 0x10000) {
    out[0] = (char)(0xE0 | (r >> 12)); out[1] = (char)(0x80 | ((r >> 6) & 0x3F)); out[2] = (char)(0x80 | (r & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | (r >> 18)); out[1] = (char)(0x80 | ((r >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((r >> 6) & 0x3F)); out[3] = (char)(0x80 | (r & 0x3F));
  return 4;
}

size_t tpl__utf8_count(const char *s, size_t n) {
  size_t c = 0;
  for (size_t i = 0; i < n;) {
    int32_t r;
    i += tpl__utf8_decode(s + i, n - i, &r);
    c++;
  }
  return c;
}

/* unicode.IsPrint (strconv.IsPrint is the same set), from Go's tables. */
bool tpl__is_print(int32_t r) { return tpl_unicode_is_print(r); }

/* ---- strconv.Quote ---- */

static int tpl__quote_with(buf_t *out, const char *s, size_t n, char q, bool ascii) {
  int rc = buf_reserve(out, n + 2);
  if (!rc) rc = buf_putc(out, q);
  for (size_t i = 0; i < n && !rc;) {
    /* a run of printable ASCII other than the quote and the backslash is copied as it is */
    size_t j = i;
    while (j < n && (unsigned char)s[j] >= 0x20 && (unsigned char)s[j] < 0x7F && s[j] != q && s[j] != '\\') j++;
    if (j > i) {
      rc = buf_append(out, s + i, j - i);
      i = j;
      continue;
    }
    int32_t r;
    size_t w = tpl__utf8_decode(s + i, n - i, &r);
    if (w == 1 && r == 0xFFFD && (unsigned char)s[i] >= 0x80) {
      rc = buf_printf(out, "\\x%02x", (unsigned char)s[i]);
      i++;
      continue;
    }
    i += w;
    rc = tpl__quote_rune(out, r, q, ascii);
  }
  if (!rc) rc = buf_putc(out, q);
  return rc;
}

int tpl__quote_rune(buf_t *out, int32_t r, char q, bool ascii) {
  if (r == q || r == '\\') {
    char t[2] = {'\\', (char)r};
    return buf_append(out, t, 2);
  }
  if (ascii ? (r < 0x80 && tpl__is_print(r)) : tpl__is_print(r)) {
    char t[4];
    return buf_append(out, t, tpl__utf8_encode(r, t));
  }
  switch (r) {
  case '\a': return buf_puts(out, "\\a");
  case '\b': return buf_puts(out, "\\b");
  case '\f': return buf_puts(out, "\\f");
  case '\n': return buf_puts(out, "\\n");
  case '\r': return buf_puts(out, "\\r");
  case '\t': return buf_puts(out, "\\t");
  case '\v': return buf_puts(out, "\\v");
  }
  if (r < ' ' || r == 0x7F) return buf_printf(out, "\\x%02x", (unsigned)r);
  if (r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) r = 0xFFFD;
  if (r < 0x10000) return buf_printf(out, "\\u%04x", (unsigned)r);
  return buf_printf(out, "\\U%08x", (unsigned)r);
}

int tpl_fmt_quote(buf_t *out, const char *s, size_t n) { return tpl__quote_with(out, s, n, '"', false); }

static bool tpl__can_backquote(const char *s, size_t n) {
  for (size_t i = 0; i < n;) {
    int32_t r;
    size_t w = tpl__utf8_decode(s + i, n - i, &r);
    if (w == 1 && r == 0xFFFD && (unsigned char)s[i] >= 0x80) return false;
    i += w;
    if (r == 0xFEFF) return false;
    if (w > 1) continue;
    if (r == '`') return false;
    if ((r < ' ' && r != '\t') || r == 0x7F) return false;
  }
  return true;
}

/* ---- padding ---- */

static void pp_padding(tpl__pp_t *p, long n) {
  char c = (p->f.zero && !p->f.minus) ? '0' : ' ';
  for (; n > 0; n--) pp_putc(p, c);
}

static void pp_pad(tpl__pp_t *p, const char *s, size_t n) {
  if (!p->f.widp || p->f.wid == 0) {
    pp_write(p, s, n);
    return;
  }
  long w = (long)p->f.wid - (long)tpl__utf8_count(s, n);
  if (!p->f.minus) {
    pp_padding(p, w);
    pp_write(p, s, n);
  } else {
    pp_write(p, s, n);
    pp_padding(p, w);
  }
}

/* ---- integers ---- */

static void fmt_integer(tpl__pp_t *p, uint64_t u, int base, bool is_signed, char verb, const char *digits) {
  bool neg = is_signed && (int64_t)u < 0;
  if (neg) u = -u;
  size_t cap = 68 + (size_t)(p->f.widp ? p->f.wid : 0) + (size_t)(p->f.precp ? p->f.prec : 0);
  char sbuf[128];
  char *buf = cap <= sizeof(sbuf) ? sbuf : malloc(cap);
  if (!buf) { p->rc = TPL_ENOMEM; return; }
  long prec = 0;
  if (p->f.precp) {
    prec = p->f.prec;
    if (prec == 0 && u == 0) {
      bool oz = p->f.zero;
      p->f.zero = false;
      pp_padding(p, p->f.wid);
      p->f.zero = oz;
      if (buf != sbuf) free(buf);
      return;
    }
  } else if (p->f.zero && !p->f.minus && p->f.widp) {
    prec = p->f.wid;
    if (neg || p->f.plus || p->f.space) prec--;
  }
  size_t i = cap;
  switch (base) {
  case 10: while (u >= 10) { buf[--i] = (char)('0' + u % 10); u /= 10; } break;
  case 16: while (u >= 16) { buf[--i] = digits[u & 0xF]; u >>= 4; } break;
  case 8: while (u >= 8) { buf[--i] = (char)('0' + (u & 7)); u >>= 3; } break;
  case 2: while (u >= 2) { buf[--i] = (char)('0' + (u & 1)); u >>= 1; } break;
  }
  buf[--i] = digits[u];
  while (i > 0 && prec > (long)(cap - i)) buf[--i] = '0';
  if (p->f.sharp) {
    switch (base) {
    case 2: buf[--i] = 'b'; buf[--i] = '0'; break;
    case 8: if (buf[i] != '0') buf[--i] = '0'; break;
    case 16: buf[--i] = digits[16]; buf[--i] = '0'; break;
    }
  }
  if (verb == 'O') { buf[--i] = 'o'; buf[--i] = '0'; }
  if (neg) buf[--i] = '-';
  else if (p->f.plus) buf[--i] = '+';
  else if (p->f.space) buf[--i] = ' ';
  bool oz = p->f.zero;
  p->f.zero = false;
  pp_pad(p, buf + i, cap - i);
  p->f.zero = oz;
  if (buf != sbuf) free(buf);
}

static const char ldigits[] = "0123456789abcdefx";
static const char udigits[] = "0123456789ABCDEFX";

static void fmt_unicode(tpl__pp_t *p, uint64_t u) {
  buf_t t = BUF_INIT;
  int prec = 4;
  if (p->f.precp && p->f.prec > 4) prec = p->f.prec;
  char hex[32];
  int hn = snprintf(hex, sizeof hex, "%llX", (unsigned long long)u);
  buf_puts(&t, "U+");
  for (int k = hn; k < prec; k++) buf_putc(&t, '0');
  buf_puts(&t, hex);
  if (p->f.sharp && u <= 0x10FFFF && tpl__is_print((int32_t)u)) {
    char e[4];
    buf_puts(&t, " '");
    buf_append(&t, e, tpl__utf8_encode((int32_t)u, e));
    buf_putc(&t, '\'');
  }
  if (!t.data) { p->rc = TPL_ENOMEM; return; }
  bool oz = p->f.zero;
  p->f.zero = false;
  pp_pad(p, t.data, t.len);
  p->f.zero = oz;
  buf_free(&t);
}

static void fmt_c(tpl__pp_t *p, uint64_t c) {
  int32_t r = c > 0x10FFFF ? 0xFFFD : (int32_t)c;
  char e[4];
  pp_pad(p, e, tpl__utf8_encode(r, e));
}

static void fmt_qc(tpl__pp_t *p, uint64_t c) {
  int32_t r = c > 0x10FFFF ? 0xFFFD : (int32_t)c;
  if (r >= 0xD800 && r <= 0xDFFF) r = 0xFFFD;
  buf_t t = BUF_INIT;
  buf_putc(&t, '\'');
  tpl__quote_rune(&t, r, '\'', p->f.plus);
  if (buf_putc(&t, '\'')) { p->rc = TPL_ENOMEM; return; }
  pp_pad(p, t.data, t.len);
  buf_free(&t);
}

/* ---- floats (strconv.FormatFloat) ---- */

typedef struct tpl__digits_s {
  char d[800];
  int nd, dp;
} tpl__digits_t;

/* Decimal digits of |f| (finite, nonzero) rounded to n significant digits. */
static void float_digits_n(double f, int n, tpl__digits_t *g) {
  char tmp[900];
  if (n > 767) n = 767;
  snprintf(tmp, sizeof tmp, "%.*e", n - 1, fabs(f));
  int k = 0;
  const char *s = tmp;
  for (; *s && *s != 'e'; s++)
    if (*s >= '0' && *s <= '9') g->d[k++] = *s;
  int e = atoi(s + 1);
  while (k > 1 && g->d[k - 1] == '0') k--;
  g->nd = k;
  g->dp = e + 1;
}

/* Shortest digits that read back as f. */
static void float_digits_shortest(double f, tpl__digits_t *g) {
  double a = fabs(f);
  /* short exact decimals (ports, 0.5, 12.25) without printf */
  int dp, nd = a != 0 ? gofloat_exact(a, 0, g->d, sizeof g->d, &dp) : 0;
  if (nd) {
    g->nd = nd;
    g->dp = dp;
    return;
  }
  if (a >= 1 && a < 9007199254740992.0 && a == (double)(uint64_t)a) {
    /* An integer below 2^53: every other integer is another double, so its
     * digits without trailing zeros are the shortest that read back. */
    char tmp[24];
    int k = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)a);
    g->dp = k;
    while (k > 1 && tmp[k - 1] == '0') k--;
    memcpy(g->d, tmp, (size_t)k);
    g->nd = k;
    return;
  }
  /* Reading back is monotonic in the number of digits: binary search 1..17. */
  int lo = 1, hi = 17;
  while (lo < hi) {
    int n = (lo + hi) / 2;
    char tmp[40];
    snprintf(tmp, sizeof tmp, "%.*e", n - 1, a);
    if (strtod(tmp, NULL) == a) hi = n;
    else lo = n + 1;
  }
  float_digits_n(f, lo, g);
}

static int fmt_e(buf_t *o, const tpl__digits_t *g, int prec, char fmtc) {
  int rc = buf_putc(o, g->nd ? g->d[0] : '0');
  if (prec > 0) {
    rc |= buf_putc(o, '.');
    int i = 1;
    int m = g->nd < prec + 1 ? g->nd : prec + 1;
    if (i < m) { rc |= buf_append(o, g->d + i, (size_t)(m - i)); i = m; }
    for (; i <= prec; i++) rc |= buf_putc(o, '0');
  }
  rc |= buf_putc(o, fmtc);
  int exp = g->dp - 1;
  if (g->nd == 0) exp = 0;
  char sign = '+';
  if (exp < 0) { sign = '-'; exp = -exp; }
  rc |= buf_printf(o, "%c%02d", sign, exp);
  return rc;
}

static int fmt_f(buf_t *o, const tpl__digits_t *g, int prec) {
  int rc = 0;
  if (g->dp > 0) {
    int m = g->nd < g->dp ? g->nd : g->dp;
    rc |= buf_append(o, g->d, (size_t)m);
    for (; m < g->dp; m++) rc |= buf_putc(o, '0');
  } else {
    rc |= buf_putc(o, '0');
  }
  if (prec > 0) {
    rc |= buf_putc(o, '.');
    for (int i = 1; i <= prec; i++) {
      int j = g->dp + i - 1;
      rc |= buf_putc(o, (j >= 0 && j < g->nd) ? g->d[j] : '0');
    }
  }
  return rc;
}

int tpl_fmt_float(buf_t *o, double f, char fmtc, int prec) {
  if (isnan(f)) return buf_puts(o, "NaN");
  if (isinf(f)) return buf_puts(o, f > 0 ? "+Inf" : "-Inf");
  int rc = 0;
  if (signbit(f)) rc |= buf_putc(o, '-');
  if (fmtc == 'b') {
    uint64_t bits;
    memcpy(&bits, &f, 8);
    int exp = (int)((bits >> 52) & 0x7FF);
    uint64_t mant = bits & ((1ULL << 52) - 1);
    if (exp == 0) exp++;
    else mant |= 1ULL << 52;
    exp += -1023 - 52;
    return rc | buf_printf(o, "%llup%c%d", (unsigned long long)mant, exp >= 0 ? '+' : '-', abs(exp));
  }
  if (fmtc == 'x' || fmtc == 'X') {
    char tmp[64];
    if (prec < 0) snprintf(tmp, sizeof tmp, "%a", fabs(f));
    else snprintf(tmp, sizeof tmp, "%.*a", prec > 30 ? 30 : prec, fabs(f));
    /* Go: exponent has at least two digits; zero is 0x0p+00. */
    char *pp = strchr(tmp, 'p');
    if (!pp) return rc | buf_puts(o, tmp);
    *pp = 0;
    int e = atoi(pp + 1);
    buf_t t = BUF_INIT;
    buf_puts(&t, tmp);
    if (prec > 30) {
      if (!strchr(tmp, '.')) buf_putc(&t, '.');
      size_t have = strlen(strchr(t.data, '.') + 1);
      for (size_t k = have; k < (size_t)prec; k++) buf_putc(&t, '0');
    }
    buf_printf(&t, "p%c%02d", e < 0 ? '-' : '+', abs(e));
    if (!t.data) return TPL_ENOMEM;
    if (fmtc == 'X')
      for (char *c = t.data; *c; c++)
        if (*c >= 'a' && *c <= 'z') *c = (char)(*c - 32);
    rc |= buf_append(o, t.data, t.len);
    buf_free(&t);
    return rc;
  }
  tpl__digits_t *g = malloc(sizeof(*g));
  if (!g) return TPL_ENOMEM;
  bool shortest = prec < 0;
  if (f == 0) {
    g->nd = 0;
    g->dp = 0;
  } else if (shortest) {
    float_digits_shortest(f, g);
  } else if (fmtc == 'e' || fmtc == 'E') {
    float_digits_n(f, prec + 1, g);
  } else if (fmtc == 'g' || fmtc == 'G') {
    float_digits_n(f, prec == 0 ? 1 : prec, g);
  }
  switch (fmtc) {
  case 'e':
  case 'E':
    rc |= fmt_e(o, g, shortest ? (g->nd ? g->nd - 1 : 0) : prec, fmtc);
    break;
  case 'f':
    if (shortest) {
      rc |= fmt_f(o, g, g->nd - g->dp > 0 ? g->nd - g->dp : 0);
    } else {
      char *tmp = malloc((size_t)prec + 400);
      if (!tmp) { free(g); return TPL_ENOMEM; }
      snprintf(tmp, (size_t)prec + 400, "%.*f", prec, fabs(f));
      rc |= buf_puts(o, tmp);
      free(tmp);
    }
    break;
  case 'g':
  case 'G': {
    if (prec == 0) prec = 1;
    int eprec = prec;
    if (eprec > g->nd && g->nd >= g->dp) eprec = g->nd;
    if (shortest) eprec = 6;
    int exp = g->dp - 1;
    if (shortest) prec = g->nd;
    if (exp < -4 || exp >= eprec) {
      if (prec > g->nd) prec = g->nd;
      rc |= fmt_e(o, g, prec - 1 < 0 ? 0 : prec - 1, fmtc == 'g' ? 'e' : 'E');
    } else {
      if (prec > g->dp) prec = g->nd;
      rc |= fmt_f(o, g, prec - g->dp > 0 ? prec - g->dp : 0);
    }
    break;
  }
  default:
    rc |= buf_putc(o, '%');
    rc |= buf_putc(o, fmtc);
  }
  free(g);
  return rc;
}

static void fmt_float(tpl__pp_t *p, double v, char verb, int prec) {
  if (p->f.precp) prec = p->f.prec;
  buf_t nb = BUF_INIT;
  int rc = buf_putc(&nb, '+');
  rc |= tpl_fmt_float(&nb, v, verb, prec);
  if (rc) { buf_free(&nb); p->rc = TPL_ENOMEM; return; }
  char *num = nb.data;
  size_t len = nb.len;
  if (num[1] == '-' || num[1] == '+') { num++; len--; }
  else num[0] = '+';
  if (p->f.space && num[0] == '+' && !p->f.plus) num[0] = ' ';
  if (num[1] == 'I' || num[1] == 'N') {
    bool oz = p->f.zero;
    p->f.zero = false;
    if (num[1] == 'N' && !p->f.space && !p->f.plus) { num++; len--; }
    pp_pad(p, num, len);
    p->f.zero = oz;
    buf_free(&nb);
    return;
  }
  buf_t sb = BUF_INIT; /* the sharp-flag rewrite */
  if (p->f.sharp && verb != 'b') {
    int digits = 0;
    if (verb == 'v' || verb == 'g' || verb == 'G' || verb == 'x') {
      digits = prec;
      if (digits == -1) digits = 6;
    }
    char tail[16] = {0};
    size_t tl = 0;
    bool has_dot = false, nonzero = false;
    size_t i;
    for (i = 1; i < len; i++) {
      char c = num[i];
      if (c == '.') { has_dot = true; continue; }
      if (c == 'p' || c == 'P' || ((c == 'e' || c == 'E') && verb != 'x' && verb != 'X')) {
        tl = len - i < sizeof tail ? len - i : sizeof tail - 1;
        memcpy(tail, num + i, tl);
        len = i;
        break;
      }
      if (c != '0') nonzero = true;
      if (nonzero) digits--;
    }
    buf_append(&sb, num, len);
    if (!has_dot) {
      if (len == 2 && num[1] == '0') digits--;
      buf_putc(&sb, '.');
    }
    for (; digits > 0; digits--) buf_putc(&sb, '0');
    if (buf_append(&sb, tail, tl)) { buf_free(&nb); buf_free(&sb); p->rc = TPL_ENOMEM; return; }
    num = sb.data;
    len = sb.len;
  }
  if (p->f.plus || num[0] != '+') {
    if (p->f.zero && !p->f.minus && p->f.widp && (size_t)p->f.wid > len) {
      pp_putc(p, num[0]);
      pp_padding(p, (long)(p->f.wid - (int)len));
      pp_write(p, num + 1, len - 1);
    } else {
      pp_pad(p, num, len);
    }
  } else {
    pp_pad(p, num + 1, len - 1);
  }
  buf_free(&nb);
  buf_free(&sb);
}

/* ---- strings ---- */

static size_t truncate_len(tpl__pp_t *p, const char *s, size_t n) {
  if (!p->f.precp) return n;
  long k = p->f.prec;
  for (size_t i = 0; i < n;) {
    if (--k < 0) return i;
    int32_t r;
    i += tpl__utf8_decode(s + i, n - i, &r);
  }
  return n;
}

static void fmt_s(tpl__pp_t *p, const char *s, size_t n) { pp_pad(p, s, truncate_len(p, s, n)); }

static void fmt_sx(tpl__pp_t *p, const char *s, size_t n, const char *digits) {
  long length = (long)n;
  if (p->f.precp && p->f.prec < length) length = p->f.prec;
  long width = 2 * length;
  if (width > 0) {
    if (p->f.space) {
      if (p->f.sharp) width *= 2;
      width += length - 1;
    } else if (p->f.sharp) {
      width += 2;
    }
  } else {
    if (p->f.widp) pp_padding(p, p->f.wid);
    return;
  }
  if (p->f.widp && p->f.wid > width && !p->f.minus) pp_padding(p, p->f.wid - width);
  if (p->f.sharp) { pp_putc(p, '0'); pp_putc(p, digits[16]); }
  for (long i = 0; i < length; i++) {
    if (p->f.space && i > 0) {
      pp_putc(p, ' ');
      if (p->f.sharp) { pp_putc(p, '0'); pp_putc(p, digits[16]); }
    }
    unsigned char c = (unsigned char)s[i];
    pp_putc(p, digits[c >> 4]);
    pp_putc(p, digits[c & 0xF]);
  }
  if (p->f.widp && p->f.wid > width && p->f.minus) pp_padding(p, p->f.wid - width);
}

static void fmt_q(tpl__pp_t *p, const char *s, size_t n) {
  n = truncate_len(p, s, n);
  buf_t t = BUF_INIT;
  int rc;
  if (p->f.sharp && tpl__can_backquote(s, n)) {
    rc = buf_putc(&t, '`');
    rc |= buf_append(&t, s, n);
    rc |= buf_putc(&t, '`');
  } else {
    rc = tpl__quote_with(&t, s, n, '"', p->f.plus);
  }
  if (rc) { buf_free(&t); p->rc = TPL_ENOMEM; return; }
  pp_pad(p, t.data, t.len);
  buf_free(&t);
}

static void fmt_string(tpl__pp_t *p, const char *s, size_t n, char verb);

/* ---- dispatch ---- */

static void print_value(tpl__pp_t *p, const tpl_value_t *v, int32_t verb, int depth);

static void pp_rune(tpl__pp_t *p, int32_t r) {
  char e[4];
  pp_write(p, e, tpl__utf8_encode(r, e));
}

static void bad_verb(tpl__pp_t *p, int32_t verb, const tpl_value_t *v) {
  p->erroring = true;
  pp_puts(p, "%!");
  pp_rune(p, verb);
  pp_putc(p, '(');
  if (v && v->kind != TPL_INVALID && v->kind != TPL_NIL) {
    buf_t t = BUF_INIT;
    tpl_value_type_name(v, &t);
    pp_write(p, t.data ? t.data : "", t.len);
    buf_free(&t);
    pp_putc(p, '=');
    tpl__flags_t of = p->f;
    print_value(p, v, 'v', 0);
    p->f = of;
  } else {
    pp_puts(p, "<nil>");
  }
  pp_putc(p, ')');
  p->erroring = false;
}

static void fmt_string(tpl__pp_t *p, const char *s, size_t n, char verb) {
  switch (verb) {
  case 'v':
    if (p->f.sharpv) fmt_q(p, s, n);
    else fmt_s(p, s, n);
    break;
  case 's': fmt_s(p, s, n); break;
  case 'x': fmt_sx(p, s, n, ldigits); break;
  case 'X': fmt_sx(p, s, n, udigits); break;
  case 'q': fmt_q(p, s, n); break;
  }
}

static void fmt_int_verb(tpl__pp_t *p, const tpl_value_t *v, uint64_t u, bool sgn, int32_t verb) {
  switch (verb) {
  case 'v':
    if (p->f.sharpv && !sgn) {
      bool sh = p->f.sharp;
      p->f.sharp = true;
      fmt_integer(p, u, 16, false, 'v', ldigits);
      p->f.sharp = sh;
    } else {
      fmt_integer(p, u, 10, sgn, 'v', ldigits);
    }
    break;
  case 'd': fmt_integer(p, u, 10, sgn, 'd', ldigits); break;
  case 'b': fmt_integer(p, u, 2, sgn, 'b', ldigits); break;
  case 'o':
  case 'O': fmt_integer(p, u, 8, sgn, (char)verb, ldigits); break;
  case 'x': fmt_integer(p, u, 16, sgn, 'x', ldigits); break;
  case 'X': fmt_integer(p, u, 16, sgn, 'X', udigits); break;
  case 'c': fmt_c(p, u); break;
  case 'q': fmt_qc(p, u); break;
  case 'U': fmt_unicode(p, u); break;
  default: bad_verb(p, verb, v);
  }
}

/* Calls a host object's String() for the verbs that use it; true when handled. */
static bool handle_methods(tpl__pp_t *p, const tpl_value_t *v, int32_t verb) {
  if (p->erroring || v->kind != TPL_OBJECT || !v->u.obj->type->format) return false;
  if (p->f.sharpv) return false;
  if (verb != 'v' && verb != 's' && verb != 'x' && verb != 'X' && verb != 'q') return false;
  buf_t t = BUF_INIT;
  if (v->u.obj->type->format(v->u.obj->self, &t)) { buf_free(&t); p->rc = TPL_ENOMEM; return true; }
  fmt_string(p, t.data ? t.data : "", t.len, (char)verb);
  buf_free(&t);
  return true;
}

/* Go's printValue of a struct for any verb: the type's field callback answers the reserved names
 * "*fields" with a list of the field values in declaration order and "*names" with their names.
 * Each field is printed with the same verb and flags ({%!d(string=v1) 30}, a width per field);
 * %+v adds the names, %#v the type and the names; a pointer type prints "&" at depth 0. False
 * when the type does not describe its fields that way. */
static bool object_struct(tpl__pp_t *p, const tpl_value_t *v, int32_t verb, int depth) {
  const tpl_type_t *t = v->u.obj->type;
  void *self = v->u.obj->self;
  tpl_value_t fields = {0}, names = {0};
  if (!t->field || t->field(self, "*fields", &fields) != 1 || fields.kind != TPL_LIST || !fields.u.list) return false;
  bool named = p->f.plusv || p->f.sharpv;
  if (named && (t->field(self, "*names", &names) != 1 || names.kind != TPL_LIST || !names.u.list ||
                names.u.list->len != fields.u.list->len))
    return false;
  bool ptr = t->name[0] == '*';
  if (ptr && depth == 0) pp_putc(p, '&');
  if (p->f.sharpv) pp_puts(p, ptr ? t->name + 1 : t->name);
  pp_putc(p, '{');
  for (size_t i = 0; i < fields.u.list->len; i++) {
    if (i) pp_puts(p, p->f.sharpv ? ", " : " ");
    if (named) {
      const tpl_value_t *n = &names.u.list->items[i];
      if (n->kind == TPL_STRING) pp_write(p, n->u.s.p, n->u.s.n);
      pp_putc(p, ':');
    }
    print_value(p, &fields.u.list->items[i], verb, depth + (ptr && depth == 0 ? 2 : 1));
  }
  pp_putc(p, '}');
  return true;
}

/* Go's struct printing of a host object without String() (or any object under %#v): the type's
 * field callback answers the reserved names "%v", "%+v" and "%#v" (never Go identifiers, so no
 * template can ask for them) with the text Go prints, e.g. `{v1.20.0 1 20}`,
 * `{Version:v1.20.0 Major:1 Minor:20}`, `common.KubeVersion{Version:"v1.20.0", ...}`. %s uses the
 * "%v" form (the same text when every field is a string, as in Helm's structs). */
static bool object_gofmt(tpl__pp_t *p, const tpl_value_t *v, int32_t verb) {
  const tpl_type_t *t = v->u.obj->type;
  const char *key = p->f.sharpv                 ? "%#v"
                    : verb == 'v' && p->f.plusv ? "%+v"
                    : verb == 'v' || verb == 's' ? "%v"
                                                 : NULL;
  if (!key || !t->field) return false;
  tpl_value_t r = {0};
  if (t->field(v->u.obj->self, key, &r) != 1 || r.kind != TPL_STRING) return false;
  pp_write(p, r.u.s.p, r.u.s.n);
  return true;
}

/* Go's pp.fmtFloat for a float64; false when the verb does not apply. */
static bool fmt_float_verb(tpl__pp_t *p, double f, int32_t verb) {
  switch (verb) {
  case 'v': fmt_float(p, f, 'g', -1); return true;
  case 'b':
  case 'g':
  case 'G':
  case 'x':
  case 'X': fmt_float(p, f, (char)verb, -1); return true;
  case 'f':
  case 'e':
  case 'E': fmt_float(p, f, (char)verb, 6); return true;
  case 'F': fmt_float(p, f, 'f', 6); return true;
  default: return false;
  }
}

static void print_value(tpl__pp_t *p, const tpl_value_t *v, int32_t verb, int depth) {
  if (p->rc) return;
  if (depth > 0 && handle_methods(p, v, verb)) return;
  switch (v->kind) {
  case TPL_INVALID:
  case TPL_NIL:
    if (depth == 0) {
      if (verb == 'v') pp_pad(p, "<nil>", 5);
      else bad_verb(p, verb, NULL);
    } else {
      pp_puts(p, p->f.sharpv ? "interface {}(nil)" : "<nil>");
    }
    break;
  case TPL_BOOL:
    if (verb == 't' || verb == 'v') {
      if (v->u.b) pp_pad(p, "true", 4);
      else pp_pad(p, "false", 5);
    } else {
      bad_verb(p, verb, v);
    }
    break;
  case TPL_INT:
  case TPL_INT64: fmt_int_verb(p, v, (uint64_t)v->u.i, true, verb); break;
  case TPL_UINT64: fmt_int_verb(p, v, v->u.u, false, verb); break;
  case TPL_FLOAT64:
    if (!fmt_float_verb(p, v->u.f, verb)) bad_verb(p, verb, v);
    break;
  case TPL_COMPLEX128:
    /* Go's fmtComplex: (re+imi), the imaginary part always signed. */
    if (!strchr("vbgGxXfFeE", (int)verb) || verb == 0) {
      bad_verb(p, verb, v);
      break;
    } else {
      bool oldplus = p->f.plus;
      pp_putc(p, '(');
      fmt_float_verb(p, v->u.c.re, verb);
      p->f.plus = true;
      fmt_float_verb(p, v->u.c.im, verb);
      pp_puts(p, "i)");
      p->f.plus = oldplus;
    }
    break;
  case TPL_STRING:
    if (verb == 'v' || verb == 's' || verb == 'x' || verb == 'X' || verb == 'q') fmt_string(p, v->u.s.p, v->u.s.n, (char)verb);
    else bad_verb(p, verb, v);
    break;
  case TPL_LIST: {
    if (v->elem == TPL_ELEM_UINT8 && (verb == 's' || verb == 'q' || verb == 'x' || verb == 'X' ||
                                      (depth == 0 && p->f.sharpv && !tpl_value_named(v)))) {
      /* Go's fmtBytes: a []byte prints as text for %s %q %x %X, and as []byte{0x68, ...} for a
       * top-level %#v (nested ones go through reflection: []uint8{0x68, ...}). */
      size_t n = v->u.list ? v->u.list->len : 0;
      if (p->f.sharpv) {
        pp_puts(p, v->u.list ? "[]byte{" : "[]byte(nil)");
        if (!v->u.list) break;
        for (size_t i = 0; i < n; i++) {
          if (i) pp_puts(p, ", ");
          tpl_value_t it = tpl_list_at(v->u.list, i);
          print_value(p, &it, verb, depth + 1);
        }
        pp_putc(p, '}');
        break;
      }
      if (v->u.list && v->u.list->bytes) { /* compact: the bytes themselves */
        fmt_string(p, (const char *)v->u.list->bytes, n, (char)verb);
        break;
      }
      char *b = malloc(n ? n : 1);
      if (!b) { p->rc = TPL_ENOMEM; return; }
      for (size_t i = 0; i < n; i++) b[i] = (char)v->u.list->items[i].u.u;
      fmt_string(p, b, n, (char)verb);
      free(b);
      break;
    }
    if (p->f.sharpv) {
      buf_t t = BUF_INIT;
      tpl_value_type_name(v, &t);
      pp_write(p, t.data ? t.data : "", t.len);
      buf_free(&t);
      if (!v->u.list) { pp_puts(p, "(nil)"); break; }
      pp_putc(p, '{');
    } else {
      pp_putc(p, '[');
    }
    size_t n = v->u.list ? v->u.list->len : 0;
    for (size_t i = 0; i < n; i++) {
      if (i > 0) pp_puts(p, p->f.sharpv ? ", " : " ");
      tpl_value_t it = tpl_list_at(v->u.list, i);
      print_value(p, &it, verb, depth + 1);
    }
    pp_putc(p, p->f.sharpv ? '}' : ']');
    break;
  }
  case TPL_MAP: {
    if (p->f.sharpv) {
      buf_t t = BUF_INIT;
      tpl_value_type_name(v, &t);
      pp_write(p, t.data ? t.data : "", t.len);
      buf_free(&t);
      if (!v->u.map) { pp_puts(p, "(nil)"); break; }
      pp_putc(p, '{');
    } else {
      pp_puts(p, "map[");
    }
    const tpl_map_t *m = v->u.map;
    size_t n = m ? m->len : 0;
    if (n) {
      const tpl_map_entry_t **es = malloc(n * sizeof(*es));
      if (!es) { p->rc = TPL_ENOMEM; return; }
      for (size_t i = 0; i < n; i++) es[i] = &m->ents[i];
      tpl__sort_entries(es, n);
      for (size_t i = 0; i < n; i++) {
        if (i > 0) pp_puts(p, p->f.sharpv ? ", " : " ");
        tpl_value_t k = tpl_value_strn(es[i]->key, es[i]->klen);
        print_value(p, &k, verb, depth + 1);
        pp_putc(p, ':');
        print_value(p, &es[i]->val, verb, depth + 1);
      }
      free(es);
    }
    pp_putc(p, p->f.sharpv ? '}' : ']');
    break;
  }
  case TPL_OBJECT:
    if (depth == 0 && handle_methods(p, v, verb)) break;
    if (object_struct(p, v, verb, depth) || object_gofmt(p, v, verb)) break;
    pp_puts(p, "{}");
    break;
  case TPL_FUNC:
    if (verb == 'v' || verb == 'p') pp_puts(p, "0x1");
    else bad_verb(p, verb, v);
    break;
  }
}

static void print_arg(tpl__pp_t *p, const tpl_value_t *v, int32_t verb) {
  if (v->kind == TPL_INVALID || v->kind == TPL_NIL) {
    if (verb == 'T' || verb == 'v') pp_pad(p, "<nil>", 5);
    else bad_verb(p, verb, NULL);
    return;
  }
  if (verb == 'T') {
    buf_t t = BUF_INIT;
    if (tpl_value_type_name(v, &t)) { p->rc = TPL_ENOMEM; return; }
    fmt_s(p, t.data, t.len);
    buf_free(&t);
    return;
  }
  if (verb == 'p') {
    if (v->kind == TPL_LIST || v->kind == TPL_MAP || v->kind == TPL_FUNC) pp_puts(p, "0xc000010000");
    else bad_verb(p, verb, v);
    return;
  }
  if (handle_methods(p, v, verb)) return;
  print_value(p, v, verb, 0);
}

int tpl_fmt_value(buf_t *out, const tpl_value_t *v) { return tpl__fmt_value_max(out, v, 0); }

int tpl__fmt_value_max(buf_t *out, const tpl_value_t *v, size_t max) {
  tpl__pp_t p = {.b = out, .max = max};
  print_arg(&p, v, 'v');
  return p.rc;
}

int tpl_fmt_sprint(buf_t *out, const tpl_value_t *args, size_t n) { return tpl__fmt_sprint_max(out, args, n, 0); }

int tpl__fmt_sprint_max(buf_t *out, const tpl_value_t *args, size_t n, size_t max) {
  tpl__pp_t p = {.b = out, .max = max};
  bool prev_string = false;
  for (size_t i = 0; i < n; i++) {
    bool is_string = args[i].kind == TPL_STRING;
    if (i > 0 && !is_string && !prev_string) pp_putc(&p, ' ');
    memset(&p.f, 0, sizeof p.f);
    print_arg(&p, &args[i], 'v');
    prev_string = is_string;
  }
  return p.rc;
}

int tpl_fmt_sprintln(buf_t *out, const tpl_value_t *args, size_t n) { return tpl__fmt_sprintln_max(out, args, n, 0); }

int tpl__fmt_sprintln_max(buf_t *out, const tpl_value_t *args, size_t n, size_t max) {
  tpl__pp_t p = {.b = out, .max = max};
  for (size_t i = 0; i < n; i++) {
    if (i > 0) pp_putc(&p, ' ');
    memset(&p.f, 0, sizeof p.f);
    print_arg(&p, &args[i], 'v');
  }
  pp_putc(&p, '\n');
  return p.rc;
}

static bool too_large(long x) { return x > 1000000 || x < -1000000; }

static long parsenum(const char *s, size_t start, size_t end, bool *isnum, size_t *newi) {
  long num = 0;
  *isnum = false;
  if (start >= end) { *newi = end; return 0; }
  size_t i;
  for (i = start; i < end && s[i] >= '0' && s[i] <= '9'; i++) {
    if (too_large(num)) { *isnum = false; *newi = end; return 0; }
    num = num * 10 + (s[i] - '0');
    *isnum = true;
  }
  *newi = i;
  return num;
}

static long int_from_arg(const tpl_value_t *a, size_t n, size_t *argnum, bool *isint) {
  long num = 0;
  *isint = false;
  if (*argnum < n) {
    const tpl_value_t *v = &a[*argnum];
    if (v->kind == TPL_INT || v->kind == TPL_INT64) { num = (long)v->u.i; *isint = true; }
    else if (v->kind == TPL_UINT64 && (int64_t)v->u.u >= 0) { num = (long)v->u.u; *isint = true; }
    (*argnum)++;
    if (too_large(num)) { num = 0; *isint = false; }
  }
  return num;
}

/* Parses "[n]" at format[i]; returns true when an index was present (found). */
static bool arg_number(tpl__pp_t *p, size_t *argnum, const char *fmt, size_t flen, size_t *i, size_t nargs,
                       bool *reordered, bool *good) {
  if (*i >= flen || fmt[*i] != '[') return false;
  *reordered = true;
  /* parseArgNumber */
  const char *s = fmt + *i;
  size_t len = flen - *i;
  long index = 0;
  size_t wid = 1;
  bool ok = false;
  if (len >= 3) {
    for (size_t k = 1; k < len; k++) {
      if (s[k] == ']') {
        bool isnum;
        size_t ni;
        long w = parsenum(s, 1, k, &isnum, &ni);
        if (!isnum || ni != k) { wid = k + 1; ok = false; }
        else { index = w - 1; wid = k + 1; ok = true; }
        break;
      }
    }
  }
  (void)p;
  if (ok && index >= 0 && (size_t)index < nargs) {
    *argnum = (size_t)index;
    *i += wid;
    return true;
  }
  *good = false;
  *i += wid;
  return ok;
}

int tpl_fmt_sprintf(buf_t *out, const char *format, size_t end, const tpl_value_t *a, size_t n) {
  return tpl__fmt_sprintf_max(out, format, end, a, n, 0);
}

int tpl__fmt_sprintf_max(buf_t *out, const char *format, size_t end, const tpl_value_t *a, size_t n, size_t max) {
  tpl__pp_t p = {.b = out, .max = max};
  size_t argnum = 0;
  bool after_index = false, reordered = false;
  for (size_t i = 0; i < end;) {
    bool good = true;
    size_t lasti = i;
    while (i < end && format[i] != '%') i++;
    if (i > lasti) pp_write(&p, format + lasti, i - lasti);
    if (i >= end) break;
    i++;
    memset(&p.f, 0, sizeof p.f);
    bool simple_done = false;
    for (; i < end; i++) {
      char c = format[i];
      if (c == '#') p.f.sharp = true;
      else if (c == '0') p.f.zero = true;
      else if (c == '+') p.f.plus = true;
      else if (c == '-') p.f.minus = true;
      else if (c == ' ') p.f.space = true;
      else {
        if (c >= 'a' && c <= 'z' && argnum < n) {
          if (c == 'v' || c == 'w') {
            p.f.sharpv = p.f.sharp;
            p.f.sharp = false;
            p.f.plusv = p.f.plus;
            p.f.plus = false;
          }
          print_arg(&p, &a[argnum], c);
          argnum++;
          i++;
          simple_done = true;
        }
        break;
      }
    }
    if (simple_done) continue;
    /* Go 1.26: "%-0" leaves zero set but padding checks minus. */
    after_index = arg_number(&p, &argnum, format, end, &i, n, &reordered, &good);
    if (i < end && format[i] == '*') {
      i++;
      bool isint;
      long w = int_from_arg(a, n, &argnum, &isint);
      p.f.wid = (int)w;
      p.f.widp = isint;
      if (!isint) pp_puts(&p, "%!(BADWIDTH)");
      if (p.f.wid < 0) {
        p.f.wid = -p.f.wid;
        p.f.minus = true;
        p.f.zero = false;
      }
      after_index = false;
    } else {
      bool isnum;
      size_t ni;
      p.f.wid = (int)parsenum(format, i, end, &isnum, &ni);
      p.f.widp = isnum;
      i = ni;
      if (after_index && p.f.widp) good = false;
    }
    if (i + 1 < end && format[i] == '.') {
      i++;
      if (after_index) good = false;
      after_index = arg_number(&p, &argnum, format, end, &i, n, &reordered, &good);
      if (i < end && format[i] == '*') {
        i++;
        bool isint;
        long pr = int_from_arg(a, n, &argnum, &isint);
        p.f.prec = (int)pr;
        p.f.precp = isint;
        if (p.f.prec < 0) {
          p.f.prec = 0;
          p.f.precp = false;
        }
        if (!p.f.precp) pp_puts(&p, "%!(BADPREC)");
        after_index = false;
      } else {
        bool isnum;
        size_t ni;
        p.f.prec = (int)parsenum(format, i, end, &isnum, &ni);
        p.f.precp = isnum;
        i = ni;
        if (!p.f.precp) {
          p.f.prec = 0;
          p.f.precp = true;
        }
      }
    }
    if (!after_index) after_index = arg_number(&p, &argnum, format, end, &i, n, &reordered, &good);
    if (i >= end) {
      pp_puts(&p, "%!(NOVERB)");
      break;
    }
    int32_t verb = (unsigned char)format[i];
    size_t size = 1;
    if (verb >= 0x80) size = tpl__utf8_decode(format + i, end - i, &verb);
    i += size;
    if (verb == '%') {
      pp_putc(&p, '%');
    } else if (!good) {
      pp_puts(&p, "%!");
      pp_rune(&p, verb);
      pp_puts(&p, "(BADINDEX)");
    } else if (argnum >= n) {
      pp_puts(&p, "%!");
      pp_rune(&p, verb);
      pp_puts(&p, "(MISSING)");
    } else {
      if (verb == 'v' || verb == 'w') {
        p.f.sharpv = p.f.sharp;
        p.f.sharp = false;
        p.f.plusv = p.f.plus;
        p.f.plus = false;
      }
      print_arg(&p, &a[argnum], verb);
      argnum++;
    }
  }
  if (!reordered && argnum < n) {
    memset(&p.f, 0, sizeof p.f);
    pp_puts(&p, "%!(EXTRA ");
    for (size_t k = argnum; k < n; k++) {
      if (k > argnum) pp_puts(&p, ", ");
      if (a[k].kind == TPL_INVALID || a[k].kind == TPL_NIL) {
        pp_puts(&p, "<nil>");
      } else {
        buf_t t = BUF_INIT;
        tpl_value_type_name(&a[k], &t);
        pp_write(&p, t.data ? t.data : "", t.len);
        buf_free(&t);
        pp_putc(&p, '=');
        print_arg(&p, &a[k], 'v');
      }
    }
    pp_putc(&p, ')');
  }
  return p.rc;
}

int tpl__fmt_sharp_u(buf_t *out, int32_t r) {
  tpl_value_t v = tpl_value_int(r);
  return tpl_fmt_sprintf(out, "%#U", 3, &v, 1);
}
