/* Sprig's regex functions on PCRE2 with Go's regexp semantics: RE2 syntax
 * (what RE2 rejects is rejected: backreferences, lookaround, atomic and
 * possessive forms), `$` only at the end of text, Go's empty-match rules in
 * FindAll/ReplaceAll/Split, Go's `$1`/`${name}` expansion, and match limits
 * because templates are untrusted input. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <string.h>

#include "helm/template/sprig_internal.h"

typedef struct {
  pcre2_code *re;
  pcre2_match_data *md;
  pcre2_match_context *mc;
  uint32_t ncap;
  tpl_call_t *call; /* whose budget each match looks at */
} rx_t;

static void rx_free(rx_t *r) {
  if (r->md) pcre2_match_data_free(r->md);
  if (r->mc) pcre2_match_context_free(r->mc);
  if (r->re) pcre2_code_free(r->re);
}

/* Rejects what Go's regexp/syntax rejects but PCRE2 accepts; fills err with Go's text. */
static int re2_check(const char *p, size_t n, buf_t *err) {
  for (size_t i = 0; i < n; i++) {
    char ch = p[i];
    if (ch == '\\') {
      if (i + 1 >= n) {
        buf_puts(err, "error parsing regexp: trailing backslash at end of expression: ``");
        return -1;
      }
      char e = p[i + 1];
      if ((e >= '1' && e <= '9') || e == 'k' || e == 'g' || e == 'K' || e == 'R' || e == 'X' || e == 'h' || e == 'H' ||
          e == 'V' || e == 'N' || e == 'G' || e == 'Z' || e == 'o' || e == 'c' || e == 'e' || e == 'E' || e == 'u' ||
          e == 'U' || e == 'l' || e == 'L') {
        buf_printf(err, "error parsing regexp: invalid escape sequence: `\\%c`", e);
        return -1;
      }
      if (e == 'Q') {
        const char *q = NULL;
        for (size_t k = i + 2; k + 1 < n; k++)
          if (p[k] == '\\' && p[k + 1] == 'E') {
            q = p + k;
            break;
          }
        if (!q) return 0;
        i = (size_t)(q - p) + 1;
        continue;
      }
      i++;
      continue;
    }
    if (ch == '(' && i + 1 < n && p[i + 1] == '?') {
      size_t b = 0;
      if (i + 2 < n && p[i + 2] == '<') b = 3;
      else if (i + 3 < n && p[i + 2] == 'P' && p[i + 3] == '<') b = 4;
      if (b) {
        const char *gt = memchr(p + i, '>', n - i);
        if (!gt) {
          buf_printf(err, "error parsing regexp: invalid named capture: `%.*s`", (int)(n - i), p + i);
          return -1;
        }
        size_t end = (size_t)(gt - p);
        bool ok = end > i + b;
        for (size_t k = i + b; k < end && ok; k++)
          ok = (p[k] >= 'a' && p[k] <= 'z') || (p[k] >= 'A' && p[k] <= 'Z') || (p[k] >= '0' && p[k] <= '9') || p[k] == '_';
        if (!ok) {
          buf_printf(err, "error parsing regexp: invalid named capture: `%.*s`", (int)(end + 1 - i), p + i);
          return -1;
        }
      } else if (i + 2 < n && (p[i + 2] == '=' || p[i + 2] == '!' || p[i + 2] == '>' || p[i + 2] == '#' || p[i + 2] == '|')) {
        buf_printf(err, "error parsing regexp: invalid or unsupported Perl syntax: `%.*s`", 3, p + i);
        return -1;
      }
    }
    if (ch == '*' || ch == '+' || ch == '?' || (ch == '{' && i + 1 < n && p[i + 1] >= '0' && p[i + 1] <= '9')) {
      /* a repetition operator: another one right after it (the lazy '?' aside) is nested repetition */
      size_t st = i, k = i;
      if (ch == '{') {
        while (k < n && p[k] != '}') k++;
        if (k >= n) continue;
      }
      k++;
      if (k < n && p[k] == '?') k++;
      if (k < n && (p[k] == '*' || p[k] == '+' || p[k] == '?' || (p[k] == '{' && k + 1 < n && p[k + 1] >= '0' && p[k + 1] <= '9'))) {
        size_t e = k;
        if (p[k] == '{') {
          while (e < n && p[e] != '}') e++;
        }
        if (i > 0 || ch == '{') {
          buf_printf(err, "error parsing regexp: invalid nested repetition operator: `%.*s`", (int)(e + 1 - st), p + st);
          return -1;
        }
      }
      i = k - 1;
      continue;
    }
    if ((ch == '+' || ch == '*' || ch == '?' || ch == '}') && i + 1 < n && p[i + 1] == '+') {
      buf_printf(err, "error parsing regexp: invalid nested repetition operator: `%c+`", ch);
      return -1;
    }
    if (ch == '[') {
      /* skip a class: ']' first is literal */
      size_t k = i + 1;
      if (k < n && p[k] == '^') k++;
      if (k < n && p[k] == ']') k++;
      for (; k < n && p[k] != ']'; k++) {
        if (p[k] == '\\') k++;
        else if (p[k] == '[' && k + 1 < n && p[k + 1] == ':') {
          const char *e = strstr(p + k, ":]");
          if (e && (size_t)(e - p) < n) k = (size_t)(e - p) + 1;
        }
      }
      if (k >= n) {
        buf_printf(err, "error parsing regexp: missing closing ]: `%.*s`", (int)(n - i), p + i);
        return -1;
      }
      i = k;
    }
  }
  return 0;
}

/* Go's \s is [\t\n\f\r ] (PCRE2's adds \v): rewrite it outside \Q...\E. */
static void translate(const char *p, size_t n, buf_t *o) {
  bool in_class = false, quoted = false;
  for (size_t i = 0; i < n; i++) {
    char ch = p[i];
    if (quoted) {
      if (ch == '\\' && i + 1 < n && p[i + 1] == 'E') quoted = false;
      buf_putc(o, ch);
      continue;
    }
    if (ch == '\\' && i + 1 < n) {
      char e = p[i + 1];
      if (e == 'Q') quoted = true;
      if (e == 's') {
        buf_puts(o, in_class ? "\\t\\n\\f\\r " : "[\\t\\n\\f\\r ]");
        i++;
        continue;
      }
      if (e == 'S' && !in_class) {
        buf_puts(o, "[^\\t\\n\\f\\r ]");
        i++;
        continue;
      }
      buf_putc(o, ch);
      buf_putc(o, e);
      i++;
      continue;
    }
    if (ch == '[' && !in_class) {
      in_class = true;
      buf_putc(o, ch);
      if (i + 1 < n && p[i + 1] == '^') buf_putc(o, p[++i]);
      if (i + 1 < n && p[i + 1] == ']') buf_putc(o, p[++i]);
      continue;
    }
    if (ch == '[' && in_class && i + 1 < n && p[i + 1] == ':') {
      const char *e = strstr(p + i, ":]");
      if (e && (size_t)(e - p) < n) {
        buf_append(o, p + i, (size_t)(e - p) + 2 - i);
        i = (size_t)(e - p) + 1;
        continue;
      }
    }
    if (ch == ']' && in_class) in_class = false;
    buf_putc(o, ch);
  }
}

static int rx_compile(const char *p0, size_t n0, rx_t *r, buf_t *err) {
  memset(r, 0, sizeof *r);
  if (re2_check(p0, n0, err)) return -1;
  buf_t tb = BUF_INIT;
  translate(p0, n0, &tb);
  const char *p = tb.data ? tb.data : "";
  size_t n = tb.len;
  int ec;
  PCRE2_SIZE eo;
  r->re = pcre2_compile((PCRE2_SPTR)p, n, PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_DOLLAR_ENDONLY,
                        &ec, &eo, NULL);
  if (!r->re) {
    buf_free(&tb);
    p = p0;
    n = n0;
    /* Map PCRE2's reasons to Go's wording for the usual mistakes. */
    int depth = 0;
    for (size_t i = 0; i < n; i++) {
      if (p[i] == '\\') {
        i++;
        continue;
      }
      if (p[i] == '(') depth++;
      else if (p[i] == ')') {
        if (--depth < 0) {
          buf_printf(err, "error parsing regexp: unexpected ): `%.*s`", (int)n, p);
          return -1;
        }
      }
    }
    if (depth > 0) buf_printf(err, "error parsing regexp: missing closing ): `%.*s`", (int)n, p);
    else if (ec == PCRE2_ERROR_QUANTIFIER_INVALID || (n && (p[0] == '*' || p[0] == '+' || p[0] == '?')))
      buf_printf(err, "error parsing regexp: missing argument to repetition operator: `%c`", n ? p[eo ? eo - 1 : 0] : '*');
    else {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(ec, msg, sizeof msg);
      buf_printf(err, "error parsing regexp: %s: `%.*s`", (const char *)msg, (int)n, p);
    }
    return -1;
  }
  buf_free(&tb);
  pcre2_pattern_info(r->re, PCRE2_INFO_CAPTURECOUNT, &r->ncap);
  r->md = pcre2_match_data_create_from_pattern(r->re, NULL);
  r->mc = pcre2_match_context_create(NULL);
  if (!r->md || !r->mc) {
    rx_free(r);
    return TPL_ENOMEM;
  }
  pcre2_set_match_limit(r->mc, 10000000);
  pcre2_set_depth_limit(r->mc, 10000);
  return 0;
}

/* One match at or after pos: 1 found (ov set), 0 none, <0 error (limit). */
static int rx_exec(rx_t *r, const char *s, size_t n, size_t pos, PCRE2_SIZE **ov) {
  /* Each match is bounded by PCRE2's match limit; many of them by the render's time budget. */
  if (r->call && tpl_call_check(r->call)) return TPL_ELIMIT;
  int rc = pcre2_match(r->re, (PCRE2_SPTR)s, n, pos, 0, r->md, r->mc);
  if (rc == PCRE2_ERROR_NOMATCH) return 0;
  if (rc < 0) return -1;
  *ov = pcre2_get_ovector_pointer(r->md);
  return 1;
}

static size_t rune_width(const char *s, size_t n, size_t pos) {
  if (pos >= n) return 0;
  int32_t rr;
  return tpl__utf8_decode(s + pos, n - pos, &rr);
}

typedef int (*rx_deliver_t)(void *ud, const PCRE2_SIZE *ov);

/* Go's allMatches loop. */
static int rx_all(rx_t *r, const char *s, size_t n, int64_t max, rx_deliver_t cb, void *ud) {
  if (max < 0) max = (int64_t)n + 1;
  size_t pos = 0;
  long prev_end = -1;
  for (int64_t i = 0; i < max && pos <= n;) {
    PCRE2_SIZE *ov;
    int rc = rx_exec(r, s, n, pos, &ov);
    if (rc < 0) return rc;
    if (rc == 0) break;
    bool accept = true;
    size_t m0 = ov[0], m1 = ov[1];
    if (m1 == pos) {
      if ((long)m0 == prev_end) accept = false;
      size_t w = rune_width(s, n, pos);
      pos += w ? w : 1;
    } else {
      pos = m1;
    }
    prev_end = (long)m1;
    if (accept) {
      rc = cb(ud, ov);
      if (rc) return rc;
      i++;
    }
  }
  return 0;
}

static int limit_err(tpl_call_t *c) {
  int rc = tpl_call_check(c); /* the render's budget ran out (its error is set) */
  return rc ? rc : tpl_call_errorf(c, "regexp: match limit exceeded");
}

/* Compiles args[0]; for the non-must forms a bad pattern panics like regexp.MustCompile. */
static int compile_arg(tpl_call_t *c, const tpl_value_t *pat, bool must, rx_t *r) {
  buf_t err = BUF_INIT;
  int rc = rx_compile(pat->u.s.p, pat->u.s.n, r, &err);
  r->call = c;
  if (rc == TPL_ENOMEM) {
    buf_free(&err);
    return rc;
  }
  if (rc) {
    if (must) {
      rc = tpl_call_errorf(c, "%s", err.data);
    } else {
      /* regexp.MustCompile panics with quote(expr): backquoted when strconv.CanBackquote. */
      bool can = !memchr(pat->u.s.p, '`', pat->u.s.n);
      for (size_t i = 0; i < pat->u.s.n && can; i++) {
        unsigned char ch = (unsigned char)pat->u.s.p[i];
        if ((ch < ' ' && ch != '\t') || ch == 0x7F) can = false;
      }
      buf_t q = BUF_INIT;
      if (can) {
        buf_putc(&q, '`');
        buf_append(&q, pat->u.s.p, pat->u.s.n);
        buf_putc(&q, '`');
      } else {
        tpl_fmt_quote(&q, pat->u.s.p, pat->u.s.n);
      }
      rc = tpl_call_errorf(c, "regexp: Compile(%s): %s", q.data, err.data);
      buf_free(&q);
    }
  }
  buf_free(&err);
  return rc;
}

static int do_match(tpl_call_t *c, tpl_value_t *args, bool must, tpl_value_t *out) {
  rx_t r;
  buf_t err = BUF_INIT;
  int rc = rx_compile(args[0].u.s.p, args[0].u.s.n, &r, &err);
  r.call = c;
  if (rc == TPL_ENOMEM) {
    buf_free(&err);
    return rc;
  }
  if (rc) {
    rc = must ? tpl_call_errorf(c, "%s", err.data) : 0;
    buf_free(&err);
    *out = tpl_value_bool(false);
    return rc;
  }
  buf_free(&err);
  PCRE2_SIZE *ov;
  int m = rx_exec(&r, args[1].u.s.p, args[1].u.s.n, 0, &ov);
  rx_free(&r);
  if (m < 0) return limit_err(c);
  *out = tpl_value_bool(m == 1);
  return 0;
}

SPRIG_FN(f_regexmatch) { return do_match(c, args, false, out); }
SPRIG_FN(f_mustregexmatch) { return do_match(c, args, true, out); }

static int do_find(tpl_call_t *c, tpl_value_t *args, bool must, tpl_value_t *out) {
  rx_t r;
  int rc = compile_arg(c, &args[0], must, &r);
  if (rc) return rc;
  PCRE2_SIZE *ov;
  int m = rx_exec(&r, args[1].u.s.p, args[1].u.s.n, 0, &ov);
  if (m < 0) {
    rx_free(&r);
    return limit_err(c);
  }
  *out = m ? tpl_value_strn(args[1].u.s.p + ov[0], ov[1] - ov[0]) : tpl_value_str("");
  rx_free(&r);
  return 0;
}
SPRIG_FN(f_regexfind) { return do_find(c, args, false, out); }
SPRIG_FN(f_mustregexfind) { return do_find(c, args, true, out); }

typedef struct {
  tpl_call_t *c;
  const char *s;
  tpl_value_t *list;
} findall_t;

static int findall_cb(void *ud, const PCRE2_SIZE *ov) {
  findall_t *f = ud;
  return tpl_list_push(tpl_call_arena(f->c), f->list->u.list, tpl_value_strn(f->s + ov[0], ov[1] - ov[0]));
}

static int do_findall(tpl_call_t *c, tpl_value_t *args, bool must, tpl_value_t *out) {
  rx_t r;
  int rc = compile_arg(c, &args[0], must, &r);
  if (rc) return rc;
  *out = tpl_value_list_new(tpl_call_arena(c), TPL_ELEM_STRING, 0);
  if (out->kind == TPL_INVALID) {
    rx_free(&r);
    return TPL_ENOMEM;
  }
  findall_t f = {c, args[1].u.s.p, out};
  rc = args[2].u.i == 0 ? 0 : rx_all(&r, args[1].u.s.p, args[1].u.s.n, args[2].u.i, findall_cb, &f);
  rx_free(&r);
  if (rc == -1) return limit_err(c);
  if (rc) return rc;
  if (out->u.list->len == 0) out->u.list = NULL; /* FindAllString returns nil */
  return 0;
}
SPRIG_FN(f_regexfindall) { return do_findall(c, args, false, out); }
SPRIG_FN(f_mustregexfindall) { return do_findall(c, args, true, out); }

/* Go's Regexp.expand for ReplaceAllString. */
static void expand(buf_t *o, rx_t *r, const char *tpl, size_t tn, const char *src, const PCRE2_SIZE *ov) {
  size_t i = 0;
  while (i < tn) {
    const char *d = memchr(tpl + i, '$', tn - i);
    if (!d) break;
    size_t at = (size_t)(d - tpl);
    buf_append(o, tpl + i, at - i);
    i = at + 1;
    if (i < tn && tpl[i] == '$') {
      buf_putc(o, '$');
      i++;
      continue;
    }
    /* extract */
    size_t k = i;
    bool brace = false;
    if (k < tn && tpl[k] == '{') brace = true, k++;
    size_t ns = k;
    while (k < tn) {
      int32_t rr;
      size_t w = tpl__utf8_decode(tpl + k, tn - k, &rr);
      bool ok = (rr >= 'a' && rr <= 'z') || (rr >= 'A' && rr <= 'Z') || (rr >= '0' && rr <= '9') || rr == '_' ||
                (rr >= 0xC0 && rr != 0xD7 && rr != 0xF7 && rr != 0xFFFD);
      if (!ok) break;
      k += w;
    }
    size_t nl = k - ns;
    if (nl == 0 || (brace && (k >= tn || tpl[k] != '}'))) {
      buf_putc(o, '$');
      continue;
    }
    const char *name = tpl + ns;
    if (brace) k++;
    i = k;
    long num = 0;
    for (size_t q = 0; q < nl; q++) {
      if (name[q] < '0' || name[q] > '9' || num >= 100000000) {
        num = -1;
        break;
      }
      num = num * 10 + (name[q] - '0');
    }
    if (name[0] == '0' && nl > 1) num = -1;
    if (num >= 0) {
      if ((uint32_t)num <= r->ncap && ov[2 * num] != PCRE2_UNSET)
        buf_append(o, src + ov[2 * num], ov[2 * num + 1] - ov[2 * num]);
    } else {
      char nm[256];
      if (nl < sizeof nm) {
        memcpy(nm, name, nl);
        nm[nl] = 0;
        int g = pcre2_substring_number_from_name(r->re, (PCRE2_SPTR)nm);
        if (g > 0 && ov[2 * g] != PCRE2_UNSET) buf_append(o, src + ov[2 * g], ov[2 * g + 1] - ov[2 * g]);
      }
    }
  }
  buf_append(o, tpl + i, tn - i);
}

static int do_replace(tpl_call_t *c, tpl_value_t *args, bool must, bool literal, tpl_value_t *out) {
  rx_t r;
  int rc = compile_arg(c, &args[0], must, &r);
  if (rc) return rc;
  const char *s = args[1].u.s.p, *repl = args[2].u.s.p;
  size_t n = args[1].u.s.n, rn = args[2].u.s.n;
  buf_t b = BUF_INIT;
  size_t last = 0, search = 0;
  while (search <= n) {
    PCRE2_SIZE *ov;
    int m = rx_exec(&r, s, n, search, &ov);
    if (m < 0) {
      rx_free(&r);
      buf_free(&b);
      return limit_err(c);
    }
    if (!m) break;
    buf_append(&b, s + last, ov[0] - last);
    if (ov[1] > last || ov[0] == 0) {
      if (literal) buf_append(&b, repl, rn);
      else expand(&b, &r, repl, rn, s, ov);
    }
    last = ov[1];
    size_t w = rune_width(s, n, search);
    if (search + w > ov[1]) search += w;
    else if (search + 1 > ov[1]) search++;
    else search = ov[1];
  }
  buf_append(&b, s + last, n - last);
  rx_free(&r);
  return sprig__ret_buf(c, &b, out);
}
SPRIG_FN(f_regexreplaceall) { return do_replace(c, args, false, false, out); }
SPRIG_FN(f_mustregexreplaceall) { return do_replace(c, args, true, false, out); }
SPRIG_FN(f_regexreplaceallliteral) { return do_replace(c, args, false, true, out); }
SPRIG_FN(f_mustregexreplaceallliteral) { return do_replace(c, args, true, true, out); }

typedef struct {
  PCRE2_SIZE *v;
  size_t n, cap;
} idx_t;

static int idx_cb(void *ud, const PCRE2_SIZE *ov) {
  idx_t *x = ud;
  if (x->n + 2 > x->cap) {
    size_t nc = x->cap ? x->cap * 2 : 32;
    PCRE2_SIZE *nv = realloc(x->v, nc * sizeof(*nv));
    if (!nv) return TPL_ENOMEM;
    x->v = nv;
    x->cap = nc;
  }
  x->v[x->n++] = ov[0];
  x->v[x->n++] = ov[1];
  return 0;
}

static int do_split(tpl_call_t *c, tpl_value_t *args, bool must, tpl_value_t *out) {
  rx_t r;
  int rc = compile_arg(c, &args[0], must, &r);
  if (rc) return rc;
  tpl_arena_t *a = tpl_call_arena(c);
  const char *s = args[1].u.s.p;
  size_t n = args[1].u.s.n;
  int64_t lim = args[2].u.i;
  *out = tpl_value_list_new(a, TPL_ELEM_STRING, 0);
  if (out->kind == TPL_INVALID) {
    rx_free(&r);
    return TPL_ENOMEM;
  }
  if (lim == 0) {
    rx_free(&r);
    out->u.list = NULL;
    return 0;
  }
  if (args[0].u.s.n > 0 && n == 0) {
    rx_free(&r);
    return tpl_list_push(a, out->u.list, tpl_value_str(""));
  }
  idx_t x = {0};
  rc = rx_all(&r, s, n, lim, idx_cb, &x);
  rx_free(&r);
  if (rc) {
    free(x.v);
    return rc == -1 ? limit_err(c) : rc;
  }
  size_t beg = 0, end = 0;
  for (size_t i = 0; i < x.n; i += 2) {
    if (lim > 0 && (int64_t)out->u.list->len == lim - 1) break;
    end = x.v[i];
    if (x.v[i + 1] != 0 && tpl_list_push(a, out->u.list, tpl_value_strn(s + beg, end - beg))) {
      free(x.v);
      return TPL_ENOMEM;
    }
    beg = x.v[i + 1];
  }
  free(x.v);
  if (end != n && tpl_list_push(a, out->u.list, tpl_value_strn(s + beg, n - beg))) return TPL_ENOMEM;
  return 0;
}
SPRIG_FN(f_regexsplit) { return do_split(c, args, false, out); }
SPRIG_FN(f_mustregexsplit) { return do_split(c, args, true, out); }

SPRIG_FN(f_regexquotemeta) {
  buf_t b = BUF_INIT;
  for (size_t i = 0; i < args[0].u.s.n; i++) {
    char ch = args[0].u.s.p[i];
    if (strchr("\\.+*?()|[]{}^$", ch) && ch) buf_putc(&b, '\\');
    buf_putc(&b, ch);
  }
  return sprig__ret_buf(c, &b, out);
}

const tpl_func_t sprig__regex_fns[] = {
    {"regexMatch", "ss", f_regexmatch, NULL, "func(string, string) bool"},
    {"mustRegexMatch", "ss", f_mustregexmatch, NULL, "func(string, string) (bool, error)"},
    {"regexFind", "ss", f_regexfind, NULL, "func(string, string) string"},
    {"mustRegexFind", "ss", f_mustregexfind, NULL, "func(string, string) (string, error)"},
    {"regexFindAll", "ssi", f_regexfindall, NULL, "func(string, string, int) []string"},
    {"mustRegexFindAll", "ssi", f_mustregexfindall, NULL, "func(string, string, int) ([]string, error)"},
    {"regexReplaceAll", "sss", f_regexreplaceall, NULL, "func(string, string, string) string"},
    {"mustRegexReplaceAll", "sss", f_mustregexreplaceall, NULL, "func(string, string, string) (string, error)"},
    {"regexReplaceAllLiteral", "sss", f_regexreplaceallliteral, NULL, "func(string, string, string) string"},
    {"mustRegexReplaceAllLiteral", "sss", f_mustregexreplaceallliteral, NULL, "func(string, string, string) (string, error)"},
    {"regexSplit", "ssi", f_regexsplit, NULL, "func(string, string, int) []string"},
    {"mustRegexSplit", "ssi", f_mustregexsplit, NULL, "func(string, string, int) ([]string, error)"},
    {"regexQuoteMeta", "s", f_regexquotemeta, NULL, "func(string) string"},
};
const size_t sprig__regex_nfns = sizeof sprig__regex_fns / sizeof sprig__regex_fns[0];
