/* Go-compatible checks for values.schema.json, each giving the text Go gives: regexp/syntax's
 * parse errors (what regexp.Compile rejects), net/netip.ParseAddr, net/url.Parse as the JSON
 * Schema library uses it for its uri formats, and its JSON-pointer formats. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "helm/values/schema_int.h"
#include "helm/template/tpl.h"

/* ---- regexp/syntax ------------------------------------------------------------------ */

typedef struct {
  bool real;      /* the stack's top (in this group) is something a repetition can apply to */
  uint64_t top_p; /* the top's repetition product (see rx_group_t) */
  uint64_t max_p; /* the largest product of anything in this group */
} rx_group_t;

/* Go checks nested counted repetitions so that no path multiplies past 1000 copies
 * (repeatIsValid); the product along the worst path of each subexpression is enough for that. */
#define RX_P_CAP 1000000ull

static bool rx_err(buf_t *why, const char *code, const char *expr, size_t n) {
  buf_printf(why, "error parsing regexp: %s: `%.*s`", code, (int)n, expr);
  return false;
}

static size_t rx_rune_len(const char *s) {
  unsigned char c = (unsigned char)*s;
  size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
  for (size_t i = 1; i < n; i++)
    if (!s[i]) return i;
  return n;
}

static uint32_t rx_decode(const char *t, size_t n) {
  const unsigned char *b = (const unsigned char *)t;
  if (n == 2) return ((b[0] & 0x1fu) << 6) | (b[1] & 0x3fu);
  if (n == 3) return ((b[0] & 0x0fu) << 12) | ((b[1] & 0x3fu) << 6) | (b[2] & 0x3fu);
  if (n == 4) return ((b[0] & 0x07u) << 18) | ((b[1] & 0x3fu) << 12) | ((b[2] & 0x3fu) << 6) | (b[3] & 0x3fu);
  return b[0];
}

static bool rx_isalnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int rx_unhex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* parseEscape at s ('\\' first): the length consumed, or 0 after writing the error. */
static size_t rx_escape(const char *s, buf_t *why, uint32_t *rune) {
  const char *t = s + 1;
  if (!*t) return rx_err(why, "trailing backslash at end of expression", "", 0), 0;
  char c = *t;
  size_t cl = rx_rune_len(t);
  t += cl;
  *rune = (unsigned char)c;
  if ((unsigned char)c < 0x80 && !rx_isalnum(c)) return (size_t)(t - s);
  switch (c) {
  case '1': case '2': case '3': case '4': case '5': case '6': case '7':
    if (!(*t >= '0' && *t <= '7')) break;
    /* fall through */
  case '0': {
    uint32_t r = (uint32_t)(c - '0');
    for (int i = 1; i < 3 && *t >= '0' && *t <= '7'; i++) r = r * 8 + (uint32_t)(*t++ - '0');
    *rune = r;
    return (size_t)(t - s);
  }
  case 'x': {
    if (!*t) break;
    char d = *t;
    t += rx_rune_len(t);
    if (d == '{') {
      int nhex = 0;
      uint32_t r = 0;
      for (;;) {
        if (!*t) goto bad;
        char e = *t;
        t += rx_rune_len(t);
        if (e == '}') break;
        int v = rx_unhex(e);
        if (v < 0) goto bad;
        r = r * 16 + (uint32_t)v;
        if (r > 0x10ffff) goto bad;
        nhex++;
      }
      if (!nhex) goto bad;
      *rune = r;
      return (size_t)(t - s);
    }
    int x = rx_unhex(d), y = *t ? rx_unhex(*t) : -1;
    if (*t) t += rx_rune_len(t);
    if (x < 0 || y < 0) goto bad;
    *rune = (uint32_t)(x * 16 + y);
    return (size_t)(t - s);
  }
  case 'a': *rune = 7; return (size_t)(t - s);
  case 'f': *rune = 12; return (size_t)(t - s);
  case 'n': *rune = 10; return (size_t)(t - s);
  case 'r': *rune = 13; return (size_t)(t - s);
  case 't': *rune = 9; return (size_t)(t - s);
  case 'v': *rune = 11; return (size_t)(t - s);
  }
bad:
  rx_err(why, "invalid escape sequence", s, (size_t)(t - s));
  return 0;
}

/* A Unicode class name Go knows: its special names (compared as canonicalName does: case and
 * '_', '-', ' ' ignored), else what PCRE2 knows by that name (categories and scripts; the two
 * libraries' alias lists differ slightly). */
static bool rx_uname_ok(const char *name, size_t n) {
  char canon[64];
  size_t k = 0;
  for (size_t i = 0; i < n && k + 1 < sizeof canon; i++) {
    char c = name[i];
    if (c == '_' || c == '-' || c == ' ') continue;
    canon[k++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
  }
  canon[k] = 0;
  static const char *const special[] = {"any", "assigned", "ascii", "lc"};
  for (size_t i = 0; i < sizeof special / sizeof *special; i++)
    if (!strcmp(canon, special[i])) return true;
  for (size_t i = 0; i < n; i++)
    if (name[i] == '\\' || name[i] == '}' || name[i] == ':' || name[i] == '=') return false;
  buf_t p = BUF_INIT;
  buf_printf(&p, "\\p{%.*s}", (int)n, name);
  int ec;
  PCRE2_SIZE eo;
  pcre2_code *re = p.data ? pcre2_compile((PCRE2_SPTR)p.data, p.len, PCRE2_UTF, &ec, &eo, NULL) : NULL;
  buf_free(&p);
  if (!re) return false;
  pcre2_code_free(re);
  return true;
}

/* A Unicode class \pX, \p{Name}, \PX at s: consumed length (0 when s is not one), or -1 on error. */
static long rx_uclass(const char *s, buf_t *why) {
  if (s[0] != '\\' || (s[1] != 'p' && s[1] != 'P')) return 0;
  const char *t = s + 2;
  if (*t != '{') {
    size_t n = *t ? rx_rune_len(t) : 0;
    size_t seq = 2 + n;
    /* single-letter names Go knows: the general categories */
    if (n != 1 || !strchr("CLMNPSZclmnpsz", *t)) return rx_err(why, "invalid character class range", s, seq), -1;
    return (long)seq;
  }
  const char *end = strchr(s, '}');
  if (!end) return rx_err(why, "invalid character class range", s, strlen(s)), -1;
  const char *name = s + 3;
  if (*name == '^') name++;
  if (name == end || !rx_uname_ok(name, (size_t)(end - name)))
    return rx_err(why, "invalid character class range", s, (size_t)(end - s + 1)), -1;
  return (long)(end - s + 1);
}

static const char *const rx_posix[] = {"alnum", "alpha", "ascii", "blank", "cntrl",  "digit", "graph",
                                       "lower", "print", "punct", "space", "upper", "word", "xdigit"};

/* parseClass at s ('['): consumed length, or 0 after writing the error. */
static size_t rx_class(const char *s, buf_t *why) {
  const char *t = s + 1;
  if (*t == '^') t++;
  bool first = true;
  while (!*t || *t != ']' || first) {
    first = false;
    if (t[0] == '[' && t[1] == ':' && t[2]) {
      const char *e = strstr(t + 2, ":]");
      if (e) {
        const char *nm = t + 2;
        if (*nm == '^') nm++;
        bool ok = false;
        for (size_t i = 0; i < sizeof rx_posix / sizeof *rx_posix; i++)
          if (strlen(rx_posix[i]) == (size_t)(e - nm) && !strncmp(rx_posix[i], nm, (size_t)(e - nm))) ok = true;
        if (!ok) return rx_err(why, "invalid character class range", t, (size_t)(e + 2 - t)), 0;
        t = e + 2;
        continue;
      }
    }
    long u = rx_uclass(t, why);
    if (u < 0) return 0;
    if (u > 0) {
      t += u;
      continue;
    }
    if (t[0] == '\\' && t[1] && strchr("dDsSwW", t[1])) {
      t += 2;
      continue;
    }
    const char *rng = t;
    uint32_t lo, hi;
    if (!*t) return rx_err(why, "missing closing ]", s, strlen(s)), 0;
    if (*t == '\\') {
      size_t n = rx_escape(t, why, &lo);
      if (!n) return 0;
      t += n;
    } else {
      size_t n = rx_rune_len(t);
      lo = rx_decode(t, n);
      t += n;
    }
    hi = lo;
    if (t[0] == '-' && t[1] && t[1] != ']') {
      t++;
      if (!*t) return rx_err(why, "missing closing ]", s, strlen(s)), 0;
      if (*t == '\\') {
        size_t n = rx_escape(t, why, &hi);
        if (!n) return 0;
        t += n;
      } else {
        size_t n = rx_rune_len(t);
        hi = rx_decode(t, n);
        t += n;
      }
      if (hi < lo) return rx_err(why, "invalid character class range", rng, (size_t)(t - rng)), 0;
    }
  }
  return (size_t)(t + 1 - s);
}

/* parseInt: digits without a leading zero; -1 when too big; false when not a number. */
static bool rx_int(const char **sp, long *out) {
  const char *s = *sp;
  if (!(*s >= '0' && *s <= '9')) return false;
  if (s[0] == '0' && s[1] >= '0' && s[1] <= '9') return false;
  long n = 0;
  for (; *s >= '0' && *s <= '9'; s++) {
    if (n >= 100000000) n = -1;
    if (n >= 0) n = n * 10 + (*s - '0');
  }
  *out = n;
  *sp = s;
  return true;
}

/* parseRepeat at s ('{'): the length of "{min,max}" or 0 when it is not one (then a literal). */
static size_t rx_repeat_spec(const char *s, long *min, long *max) {
  const char *t = s + 1;
  if (!rx_int(&t, min)) return 0;
  if (!*t) return 0;
  if (*t != ',') *max = *min;
  else {
    t++;
    if (!*t) return 0;
    if (*t == '}') *max = -1;
    else if (!rx_int(&t, max)) return 0;
    else if (*max < 0) *min = -1;
  }
  if (*t != '}') return 0;
  return (size_t)(t + 1 - s);
}

bool schema_go_regexp_ok(const char *s, buf_t *why) {
  size_t cap = 8, n = 1;
  rx_group_t *g = malloc(cap * sizeof *g);
  if (!g) return true; /* out of memory: leave it to the compiler */
  g[0] = (rx_group_t){false, 1, 1};
  const char *t = s, *last_repeat = NULL;
  bool ok = true;
#define ATOM(P)                                              \
  do {                                                       \
    g[n - 1].real = true;                                    \
    g[n - 1].top_p = (P);                                    \
    if ((P) > g[n - 1].max_p) g[n - 1].max_p = (P);          \
  } while (0)
  while (*t && ok) {
    const char *repeat = NULL;
    char c = *t;
    if (c == '(') {
      if (t[1] == '?') {
        bool with_p = t[2] == 'P' && t[3] == '<' && t[4], with_name = t[2] == '<' && t[3];
        if (with_p || with_name) {
          const char *end = strchr(t, '>');
          if (!end) {
            ok = rx_err(why, "invalid named capture", t, strlen(t));
            break;
          }
          const char *nm = t + (with_p ? 4 : 3);
          bool valid = nm < end;
          for (const char *q = nm; q < end; q++)
            if (*q != '_' && !rx_isalnum(*q)) valid = false;
          if (!valid) {
            ok = rx_err(why, "invalid named capture", t, (size_t)(end + 1 - t));
            break;
          }
          t = end + 1;
          goto open;
        }
        const char *q = t + 2;
        int sign = 1;
        bool saw = false, done = false, group = false;
        while (*q) {
          char f = *q;
          q += rx_rune_len(q);
          if (f == 'i' || f == 'm' || f == 's' || f == 'U') saw = true;
          else if (f == '-') {
            if (sign < 0) break;
            sign = -1;
            saw = false;
          } else if (f == ':' || f == ')') {
            if (sign < 0 && !saw) break;
            done = true;
            group = f == ':';
            break;
          } else break;
        }
        if (!done) {
          ok = rx_err(why, "invalid or unsupported Perl syntax", t, (size_t)(q - t));
          break;
        }
        t = q;
        if (!group) {
          last_repeat = NULL;
          continue;
        }
      } else t++;
    open:
      if (n == cap) {
        rx_group_t *ng = realloc(g, cap * 2 * sizeof *g);
        if (!ng) break;
        g = ng;
        cap *= 2;
      }
      g[n++] = (rx_group_t){false, 1, 1};
    } else if (c == '|') {
      g[n - 1].real = false;
      t++;
    } else if (c == ')') {
      if (n < 2) {
        ok = rx_err(why, "unexpected )", s, strlen(s));
        break;
      }
      uint64_t p = g[n - 1].max_p;
      n--;
      ATOM(p);
      t++;
    } else if (c == '[') {
      size_t k = rx_class(t, why);
      if (!k) {
        ok = false;
        break;
      }
      ATOM(1);
      t += k;
    } else if (c == '*' || c == '+' || c == '?' || c == '{') {
      const char *before = t;
      long min = 0, max = 0;
      size_t k = 1;
      bool counted = c == '{';
      if (counted) {
        k = rx_repeat_spec(t, &min, &max);
        if (!k) { /* a literal { */
          ATOM(1);
          t++;
          last_repeat = NULL;
          continue;
        }
        if (min < 0 || min > 1000 || max > 1000 || (max >= 0 && min > max)) {
          ok = rx_err(why, "invalid repeat count", before, k);
          break;
        }
      }
      const char *after = t + k;
      if (*after == '?') after++;
      if (last_repeat) {
        ok = rx_err(why, "invalid nested repetition operator", last_repeat, (size_t)(after - last_repeat));
        break;
      }
      if (!g[n - 1].real) {
        ok = rx_err(why, "missing argument to repetition operator", before, (size_t)(after - before));
        break;
      }
      uint64_t p = g[n - 1].top_p;
      if (counted) {
        long m = max >= 0 ? max : min;
        p = m == 0 ? 1 : p * (uint64_t)m;
        if (p > RX_P_CAP) p = RX_P_CAP;
        if ((min >= 2 || max >= 2) && p > 1000) {
          ok = rx_err(why, "invalid repeat count", before, (size_t)(after - before));
          break;
        }
      }
      ATOM(p);
      repeat = before;
      t = after;
    } else if (c == '\\') {
      char e = t[1];
      if (e == 'A' || e == 'b' || e == 'B' || e == 'z') {
        ATOM(1);
        t += 2;
      } else if (e == 'C') {
        ok = rx_err(why, "invalid escape sequence", t, 2);
        break;
      } else if (e == 'Q') {
        const char *end = strstr(t + 2, "\\E");
        if (end != t + 2 && (end || t[2])) ATOM(1);
        t = end ? end + 2 : t + strlen(t);
      } else if (e == 'p' || e == 'P') {
        long u = rx_uclass(t, why);
        if (u < 0) {
          ok = false;
          break;
        }
        ATOM(1);
        t += u;
      } else if (e && strchr("dDsSwW", e)) {
        ATOM(1);
        t += 2;
      } else {
        uint32_t r;
        size_t k = rx_escape(t, why, &r);
        if (!k) {
          ok = false;
          break;
        }
        ATOM(1);
        t += k;
      }
    } else {
      ATOM(1);
      t += rx_rune_len(t);
    }
    last_repeat = repeat;
  }
#undef ATOM
  if (ok && n != 1) ok = rx_err(why, "missing closing )", s, strlen(s));
  free(g);
  return ok;
}

/* ---- net/netip ------------------------------------------------------------------------ */

static bool addr_err(buf_t *why, const char *in, size_t n, const char *msg, const char *at, size_t atn) {
  buf_puts(why, "ParseAddr(");
  tpl_fmt_quote(why, in, n);
  buf_printf(why, "): %s", msg);
  if (at && atn) {
    buf_puts(why, " (at ");
    tpl_fmt_quote(why, at, atn);
    buf_putc(why, ')');
  }
  return false;
}

/* parseIPv4Fields over in[off:end] (errors name the whole in). */
static bool addr_v4(const char *in, size_t inlen, size_t off, size_t end, buf_t *why) {
  const char *s = in + off;
  size_t n = end - off;
  int val = 0, pos = 0, dig = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] >= '0' && s[i] <= '9') {
      if (dig == 1 && val == 0) return addr_err(why, in, inlen, "IPv4 field has octet with leading zero", NULL, 0);
      val = val * 10 + (s[i] - '0');
      dig++;
      if (val > 255) return addr_err(why, in, inlen, "IPv4 field has value >255", NULL, 0);
    } else if (s[i] == '.') {
      if (i == 0 || i == n - 1 || s[i - 1] == '.')
        return addr_err(why, in, inlen, "IPv4 field must have at least one digit", s + i, n - i);
      if (pos == 3) return addr_err(why, in, inlen, "IPv4 address too long", NULL, 0);
      pos++;
      val = 0;
      dig = 0;
    } else return addr_err(why, in, inlen, "unexpected character", s + i, n - i);
  }
  if (pos < 3) return addr_err(why, in, inlen, "IPv4 address too short", NULL, 0);
  return true;
}

bool schema_go_parse_addr(const char *in, size_t inlen, buf_t *why, bool *is4, bool *zone) {
  if (is4) *is4 = false;
  if (zone) *zone = false;
  size_t k = 0;
  for (; k < inlen; k++) {
    if (in[k] == '.') {
      if (is4) *is4 = true;
      return addr_v4(in, inlen, 0, inlen, why);
    }
    if (in[k] == ':') break;
    if (in[k] == '%') return addr_err(why, in, inlen, "missing IPv6 address", NULL, 0);
  }
  if (k == inlen) return addr_err(why, in, inlen, "unable to parse IP", NULL, 0);
  const char *s = in;
  size_t n = inlen, zl = 0;
  const char *pct = memchr(in, '%', inlen);
  if (pct) {
    n = (size_t)(pct - in);
    zl = inlen - n - 1;
    if (!zl) return addr_err(why, in, inlen, "zone must be a non-empty string", NULL, 0);
    if (zone) *zone = true;
  }
  int ellipsis = -1, i = 0;
  if (n >= 2 && s[0] == ':' && s[1] == ':') {
    ellipsis = 0;
    s += 2;
    n -= 2;
    if (!n) return true;
  }
  while (i < 16) {
    size_t off = 0;
    uint32_t acc = 0;
    for (; off < n; off++) {
      int v = rx_unhex(s[off]);
      if (v < 0) break;
      acc = (acc << 4) + (uint32_t)v;
      if (off > 3) return addr_err(why, in, inlen, "each group must have 4 or less digits", s, n);
      if (acc > 0xffff) return addr_err(why, in, inlen, "IPv6 field has value >=2^16", s, n);
    }
    if (!off) return addr_err(why, in, inlen, "each colon-separated field must have at least one digit", s, n);
    if (off < n && s[off] == '.') {
      if (ellipsis < 0 && i != 12)
        return addr_err(why, in, inlen, "embedded IPv4 address must replace the final 2 fields of the address", s, n);
      if (i + 4 > 16)
        return addr_err(why, in, inlen, "too many hex fields to fit an embedded IPv4 at the end of the address", s, n);
      size_t end = inlen - (zl ? zl + 1 : 0);
      if (!addr_v4(in, inlen, end - n, end, why)) return false;
      n = 0;
      i += 4;
      break;
    }
    i += 2;
    s += off;
    n -= off;
    if (!n) break;
    if (s[0] != ':') return addr_err(why, in, inlen, "unexpected character, want colon", s, n);
    if (n == 1) return addr_err(why, in, inlen, "colon must be followed by more characters", s, n);
    s++;
    n--;
    if (s[0] == ':') {
      if (ellipsis >= 0) return addr_err(why, in, inlen, "multiple :: in address", s, n);
      ellipsis = i;
      s++;
      n--;
      if (!n) break;
    }
  }
  if (n) return addr_err(why, in, inlen, "trailing garbage after address", s, n);
  if (i < 16 && ellipsis < 0) return addr_err(why, in, inlen, "address string too short", NULL, 0);
  if (i >= 16 && ellipsis >= 0) return addr_err(why, in, inlen, "the :: must expand to at least one field of zeros", NULL, 0);
  return true;
}

/* ---- net/url -------------------------------------------------------------------------- */

enum { ENC_PATH, ENC_HOST, ENC_ZONE, ENC_USER, ENC_FRAG };

static bool url_should_escape(unsigned char c, int mode) {
  if (rx_isalnum((char)c)) return false;
  if ((mode == ENC_HOST || mode == ENC_ZONE) && c && strchr("!$&'()*+,;=:[]<>\"", c)) return false;
  if (c && strchr("-_.~", c)) return false;
  if (c && strchr("$&+,/:;=?@", c)) {
    if (mode == ENC_PATH) return c == '?';
    if (mode == ENC_USER) return c == '@' || c == '/' || c == '?' || c == ':';
    if (mode == ENC_FRAG) return false;
  }
  if (mode == ENC_FRAG && c && strchr("!()*", c)) return false;
  return true;
}

/* unescape()'s checks; false with the error text (EscapeError / InvalidHostError). */
static bool url_unescape_ok(const char *s, size_t n, int mode, buf_t *err) {
  for (size_t i = 0; i < n;) {
    if (s[i] == '%') {
      if (i + 2 >= n || rx_unhex(s[i + 1]) < 0 || rx_unhex(s[i + 2]) < 0) {
        size_t l = n - i > 3 ? 3 : n - i;
        buf_puts(err, "invalid URL escape ");
        tpl_fmt_quote(err, s + i, l);
        return false;
      }
      int v = rx_unhex(s[i + 1]) << 4 | rx_unhex(s[i + 2]);
      if (mode == ENC_HOST && rx_unhex(s[i + 1]) < 8 && strncmp(s + i, "%25", 3)) {
        buf_puts(err, "invalid URL escape ");
        tpl_fmt_quote(err, s + i, 3);
        return false;
      }
      if (mode == ENC_ZONE && strncmp(s + i, "%25", 3) && v != ' ' && url_should_escape((unsigned char)v, ENC_HOST)) {
        buf_puts(err, "invalid URL escape ");
        tpl_fmt_quote(err, s + i, 3);
        return false;
      }
      i += 3;
    } else {
      unsigned char c = (unsigned char)s[i];
      if ((mode == ENC_HOST || mode == ENC_ZONE) && c < 0x80 && url_should_escape(c, mode)) {
        buf_puts(err, "invalid character ");
        tpl_fmt_quote(err, s + i, 1);
        buf_puts(err, " in host name");
        return false;
      }
      i++;
    }
  }
  return true;
}

static bool url_valid_port(const char *p, size_t n) {
  if (!n) return true;
  if (p[0] != ':') return false;
  for (size_t i = 1; i < n; i++)
    if (p[i] < '0' || p[i] > '9') return false;
  return true;
}

static const char *mem_rchr(const char *s, size_t n, char c) {
  while (n--)
    if (s[n] == c) return s + n;
  return NULL;
}

typedef struct {
  bool has_scheme;
  const char *host; /* inside the caller's string; not unescaped (only ':' and brackets are read) */
  size_t host_len;
  bool host_set;
  const char *path; /* the raw path */
  size_t path_len;
} gourl_t;

static bool url_host(const char *scheme, size_t sl, const char *h, size_t n, buf_t *err) {
  const char *ob = mem_rchr(h, n, '[');
  if (ob && ob > h) return buf_puts(err, "invalid IP-literal"), false;
  if (ob == h) {
    const char *cb = mem_rchr(h, n, ']');
    if (!cb) return buf_puts(err, "missing ']' in host"), false;
    const char *cp = cb + 1;
    size_t cpl = n - (size_t)(cp - h);
    if (!url_valid_port(cp, cpl)) {
      buf_puts(err, "invalid port ");
      tpl_fmt_quote(err, cp, cpl);
      buf_puts(err, " after host");
      return false;
    }
    if (!url_unescape_ok(cp, cpl, ENC_HOST, err)) return false;
    const char *hn = h + 1;
    size_t hl = (size_t)(cb - hn);
    buf_t un = BUF_INIT;
    const char *z = NULL;
    for (size_t i = 0; i + 3 <= hl; i++)
      if (!strncmp(hn + i, "%25", 3)) {
        z = hn + i;
        break;
      }
    bool ok = z ? url_unescape_ok(hn, (size_t)(z - hn), ENC_HOST, err) &&
                    url_unescape_ok(z, hl - (size_t)(z - hn), ENC_ZONE, err)
                : url_unescape_ok(hn, hl, ENC_HOST, err);
    if (!ok) return false;
    for (size_t i = 0; i < hl; i++) {
      if (hn[i] == '%') {
        buf_putc(&un, (char)(rx_unhex(hn[i + 1]) << 4 | rx_unhex(hn[i + 2])));
        i += 2;
      } else buf_putc(&un, hn[i]);
    }
    buf_t ae = BUF_INIT;
    bool is4;
    ok = schema_go_parse_addr(un.data ? un.data : "", un.len, &ae, &is4, NULL);
    if (!ok) buf_printf(err, "invalid host: %s", ae.data ? ae.data : "");
    else if (is4) buf_puts(err, "invalid IP-literal"), ok = false;
    buf_free(&ae);
    buf_free(&un);
    return ok;
  }
  const char *colon = memchr(h, ':', n);
  if (colon) {
    const char *last = mem_rchr(h, n, ':');
    bool web = (sl == 4 && !strncasecmp(scheme, "http", 4)) || (sl == 5 && !strncasecmp(scheme, "https", 5));
    if (last != colon && !web) colon = last;
    size_t cpl = n - (size_t)(colon - h);
    if (!url_valid_port(colon, cpl)) {
      buf_puts(err, "invalid port ");
      tpl_fmt_quote(err, colon, cpl);
      buf_puts(err, " after host");
      return false;
    }
  }
  return url_unescape_ok(h, n, ENC_HOST, err);
}

static bool url_userinfo_ok(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x80) return false; /* only ASCII runes pass Go's switch */
    if (rx_isalnum((char)c) || strchr("-._:~!$&'()*+,;=%@", c)) continue;
    return false;
  }
  return true;
}

/* url.parse(raw) (viaRequest false): false with the bare error text. */
static bool url_parse_part(const char *raw, size_t n, gourl_t *u, buf_t *err) {
  memset(u, 0, sizeof *u);
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)raw[i] < ' ' || raw[i] == 0x7f) return buf_puts(err, "net/url: invalid control character in URL"), false;
  if (n == 1 && raw[0] == '*') return true;
  const char *scheme = raw;
  size_t sl = 0;
  const char *rest = raw;
  size_t rl = n;
  for (size_t i = 0; i < n; i++) {
    char c = raw[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) continue;
    if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.') {
      if (i == 0) break;
      continue;
    }
    if (c == ':') {
      if (i == 0) return buf_puts(err, "missing protocol scheme"), false;
      sl = i;
      rest = raw + i + 1;
      rl = n - i - 1;
    }
    break;
  }
  u->has_scheme = sl > 0;
  /* the query */
  size_t q = 0, nq = 0;
  for (size_t i = 0; i < rl; i++)
    if (rest[i] == '?') {
      if (!nq) q = i;
      nq++;
    }
  if (nq == 1 && q == rl - 1) rl--;
  else if (nq) rl = q;
  if (!(rl && rest[0] == '/')) {
    if (sl) return true; /* opaque */
    size_t seg = 0;
    while (seg < rl && rest[seg] != '/') seg++;
    if (memchr(rest, ':', seg)) return buf_puts(err, "first path segment in URL cannot contain colon"), false;
  }
  if ((sl || !(rl >= 3 && !strncmp(rest, "///", 3))) && rl >= 2 && !strncmp(rest, "//", 2)) {
    const char *auth = rest + 2;
    size_t al = rl - 2;
    const char *slash = memchr(auth, '/', al);
    if (slash) {
      rest = slash;
      rl = al - (size_t)(slash - auth);
      al = (size_t)(slash - auth);
    } else {
      rest = auth + al;
      rl = 0;
    }
    const char *at = mem_rchr(auth, al, '@');
    const char *h = at ? at + 1 : auth;
    size_t hl = al - (size_t)(h - auth);
    if (!url_host(scheme, sl, h, hl, err)) return false;
    if (at) {
      size_t ul = (size_t)(at - auth);
      if (!url_userinfo_ok(auth, ul)) return buf_puts(err, "net/url: invalid userinfo"), false;
      const char *colon = memchr(auth, ':', ul);
      if (!colon) {
        if (!url_unescape_ok(auth, ul, ENC_USER, err)) return false;
      } else if (!url_unescape_ok(auth, (size_t)(colon - auth), ENC_USER, err) ||
                 !url_unescape_ok(colon + 1, ul - (size_t)(colon + 1 - auth), ENC_USER, err))
        return false;
    }
    u->host = h;
    u->host_len = hl;
    u->host_set = true;
  }
  if (!url_unescape_ok(rest, rl, ENC_PATH, err)) return false;
  u->path = rest;
  u->path_len = rl;
  return true;
}

/* url.Parse: errors as `parse "<url>": <reason>`. */
static bool go_url_parse(const char *raw, gourl_t *u, buf_t *why) {
  size_t n = strlen(raw);
  const char *hash = memchr(raw, '#', n);
  size_t un = hash ? (size_t)(hash - raw) : n;
  buf_t e = BUF_INIT;
  bool ok = url_parse_part(raw, un, u, &e);
  const char *quoted = raw;
  size_t ql = un;
  if (ok && hash && hash[1]) {
    ok = url_unescape_ok(hash + 1, n - un - 1, ENC_FRAG, &e);
    ql = n;
  }
  if (!ok) {
    buf_puts(why, "parse ");
    tpl_fmt_quote(why, quoted, ql);
    buf_printf(why, ": %s", e.data ? e.data : "");
  }
  buf_free(&e);
  return ok;
}

/* The library's parseURL: url.Parse plus a check of an IPv6 host. */
static bool lib_parse_url(const char *s, gourl_t *u, buf_t *why) {
  if (!go_url_parse(s, u, why)) return false;
  if (!u->host_set) return true;
  /* Hostname(): strip a valid :port, then the brackets */
  const char *h = u->host;
  size_t hl = u->host_len;
  const char *colon = mem_rchr(h, hl, ':');
  if (colon && url_valid_port(colon, hl - (size_t)(colon - h))) hl = (size_t)(colon - h);
  if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') h++, hl -= 2;
  if (!memchr(h, ':', hl)) return true;
  if (!memchr(u->host, '[', u->host_len) || !memchr(u->host, ']', u->host_len))
    return buf_puts(why, "ipv6 address not enclosed in brackets"), false;
  /* the host was unescaped by Go; brackets only hold what url_host accepted */
  buf_t un = BUF_INIT, e = BUF_INIT;
  for (size_t i = 0; i < hl; i++) {
    if (h[i] == '%' && i + 2 < hl + 0 && rx_unhex(h[i + 1]) >= 0 && rx_unhex(h[i + 2]) >= 0) {
      buf_putc(&un, (char)(rx_unhex(h[i + 1]) << 4 | rx_unhex(h[i + 2])));
      i += 2;
    } else buf_putc(&un, h[i]);
  }
  bool zone = false, ok = schema_go_parse_addr(un.data ? un.data : "", un.len, &e, NULL, &zone);
  if (!ok) buf_printf(why, "invalid ipv6 address: %s", e.data ? e.data : "");
  else if (zone) buf_puts(why, "invalid ipv6 address: zone id is not a part of ipv6 address"), ok = false;
  buf_free(&un);
  buf_free(&e);
  return ok;
}

/* ---- the library's formats -------------------------------------------------------------- */

static bool json_pointer_ok(const char *s, buf_t *why) {
  if (!*s) return true;
  if (*s != '/') return buf_puts(why, "not starting with /"), false;
  bool esc = false;
  for (const char *p = s + 1;; p++) {
    if (!*p || *p == '/') {
      if (esc) return buf_puts(why, "~ must be followed by 0 or 1"), false;
      if (!*p) return true;
      continue;
    }
    if (esc) {
      esc = false;
      if (*p != '0' && *p != '1') return buf_puts(why, "~ must be followed by 0 or 1"), false;
      continue;
    }
    if (*p == '~') esc = true;
  }
}

static bool uri_template_ok(const gourl_t *u, buf_t *why) {
  /* RawPath: the path as written when Go's own escaping of the decoded path differs from it */
  const char *p = u->path;
  size_t n = u->path_len;
  buf_t dec = BUF_INIT, enc = BUF_INIT;
  for (size_t i = 0; i < n; i++) {
    if (p[i] == '%') {
      buf_putc(&dec, (char)(rx_unhex(p[i + 1]) << 4 | rx_unhex(p[i + 2])));
      i += 2;
    } else buf_putc(&dec, p[i]);
  }
  for (size_t i = 0; i < dec.len; i++) {
    unsigned char c = (unsigned char)dec.data[i];
    if (url_should_escape(c, ENC_PATH)) buf_printf(&enc, "%%%02X", c);
    else buf_putc(&enc, (char)c);
  }
  bool raw = enc.len != n || (n && memcmp(enc.data, p, n));
  buf_free(&dec);
  buf_free(&enc);
  if (!raw) return true;
  for (size_t i = 0; i <= n;) {
    size_t j = i;
    while (j < n && p[j] != '/') j++;
    /* PathUnescape of the token */
    buf_t tok = BUF_INIT, e = BUF_INIT;
    if (!url_unescape_ok(p + i, j - i, ENC_PATH, &e)) {
      buf_printf(why, "percent decode failed: %s", e.data);
      buf_free(&tok);
      buf_free(&e);
      return false;
    }
    for (size_t k = i; k < j; k++) {
      if (p[k] == '%') {
        buf_putc(&tok, (char)(rx_unhex(p[k + 1]) << 4 | rx_unhex(p[k + 2])));
        k += 2;
      } else buf_putc(&tok, p[k]);
    }
    bool want = true, ok = true;
    for (size_t k = 0; k < tok.len && ok; k++) {
      if (tok.data[k] != '{' && tok.data[k] != '}') continue;
      bool got = tok.data[k] == '{';
      if (got != want) buf_puts(why, "nested curly braces"), ok = false;
      want = !want;
    }
    if (ok && !want) buf_puts(why, "no matching closing brace"), ok = false;
    buf_free(&tok);
    buf_free(&e);
    if (!ok) return false;
    i = j + 1;
  }
  return true;
}

int schema_go_format(const char *fmt, const char *s, buf_t *why) {
  gourl_t u;
  if (!strcmp(fmt, "uri") || !strcmp(fmt, "iri")) {
    if (!lib_parse_url(s, &u, why)) return 0;
    if (!u.has_scheme) return buf_puts(why, "relative url"), 0;
    return 1;
  }
  if (!strcmp(fmt, "uri-reference") || !strcmp(fmt, "iri-reference")) {
    if (strchr(s, '\\')) return buf_puts(why, "contains \\"), 0;
    return lib_parse_url(s, &u, why);
  }
  if (!strcmp(fmt, "uri-template")) {
    if (!lib_parse_url(s, &u, why)) return 0;
    return uri_template_ok(&u, why);
  }
  if (!strcmp(fmt, "json-pointer")) return json_pointer_ok(s, why);
  if (!strcmp(fmt, "relative-json-pointer")) {
    size_t d = 0;
    while (s[d] >= '0' && s[d] <= '9') d++;
    if (!d) return buf_puts(why, "must start with non-negative integer"), 0;
    if (d > 1 && s[0] == '0') return buf_puts(why, "starts with zero"), 0;
    if (!strcmp(s + d, "#")) return 1;
    return json_pointer_ok(s + d, why);
  }
  if (!strcmp(fmt, "ipv6")) {
    if (!strchr(s, ':')) return buf_puts(why, "missing colon"), 0;
    bool zone = false;
    if (!schema_go_parse_addr(s, strlen(s), why, NULL, &zone)) return 0;
    if (zone) return buf_puts(why, "zone id is not a part of ipv6 address"), 0;
    return 1;
  }
  return -1;
}
