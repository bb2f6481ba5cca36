/* Sprig's regex functions on PCRE2 with Go's regexp semantics: patterns read
 * as Go reads them and translated (regex_go.c), invalid UTF-8 in the text
 * read as Go reads it, Go's empty-match rules in FindAll/ReplaceAll/Split,
 * Go's `$1`/`${name}` expansion, and match limits because templates are
 * untrusted input. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <string.h>

#include "helm/template/regex_go.h"
#include "helm/template/sprig_internal.h"
#include "helm/template/unicode.h"

typedef struct {
  pcre2_code *re;
  pcre2_match_data *md;
  pcre2_match_context *mc;
  uint32_t ncap;
  tpl_regex_info_t info; /* Go's groups: their names, and where PCRE2 holds them */
  tpl_call_t *call; /* whose budget each match looks at */
} rx_t;

/* The text a pattern runs on. Go reads each byte of invalid UTF-8 as U+FFFD
 * (one byte wide); PCRE2 cannot match across such bytes, so a subject holding
 * them is matched as a copy with each one replaced by U+FFFD, and map takes
 * the copy's offsets back to the original's. */
typedef struct {
  const char *orig; /* the text given */
  size_t orig_n;
  const char *s; /* what PCRE2 sees: orig, or the copy */
  size_t n;
  char *copy;
  size_t *map; /* NULL when s is orig; else n + 1 entries */
} rx_subj_t;

static void rx_free(rx_t *r) {
  if (r->md) pcre2_match_data_free(r->md);
  if (r->mc) pcre2_match_context_free(r->mc);
  if (r->re) pcre2_code_free(r->re);
  tpl_regex_info_free(&r->info);
}

static int rx_subj_init(rx_subj_t *u, const char *s, size_t n) {
  *u = (rx_subj_t){s, n, s, n, NULL, NULL};
  size_t bad = 0;
  for (size_t i = 0; i < n;) {
    int32_t r;
    size_t w = tpl__utf8_decode(s + i, n - i, &r);
    if (w == 1 && r == 0xFFFD) bad++;
    i += w;
  }
  if (!bad) return 0;
  size_t cn = n + 2 * bad;
  u->copy = malloc(cn + 1);
  u->map = malloc((cn + 1) * sizeof *u->map);
  if (!u->copy || !u->map) {
    free(u->copy);
    free(u->map);
    return TPL_ENOMEM;
  }
  size_t o = 0;
  for (size_t i = 0; i < n;) {
    int32_t r;
    size_t w = tpl__utf8_decode(s + i, n - i, &r);
    if (w == 1 && r == 0xFFFD) {
      memcpy(u->copy + o, "\xEF\xBF\xBD", 3);
      u->map[o] = u->map[o + 1] = u->map[o + 2] = i;
      o += 3;
    } else {
      memcpy(u->copy + o, s + i, w);
      for (size_t k = 0; k < w; k++) u->map[o + k] = i;
      o += w;
    }
    i += w;
  }
  u->map[o] = n;
  u->copy[o] = 0;
  u->s = u->copy;
  u->n = o;
  return 0;
}

static void rx_subj_free(rx_subj_t *u) {
  free(u->copy);
  free(u->map);
}

/* The original offset of offset off of what PCRE2 saw (always a rune boundary). */
static size_t rx_at(const rx_subj_t *u, size_t off) { return u->map ? u->map[off] : off; }

static int rx_callout(pcre2_callout_block *cb, void *ud) {
  (void)ud;
  return cb->callout_string ? tpl_regex_callout((const char *)cb->callout_string, cb->current_position,
                                                cb->offset_vector, cb->capture_top)
                            : 0;
}

static int rx_compile(const char *p, size_t n, rx_t *r, buf_t *err) {
  memset(r, 0, sizeof *r);
  buf_t tb = BUF_INIT;
  int rc = tpl_regex_translate(p, n, &tb, &r->info, err);
  if (rc) {
    buf_free(&tb);
    return rc == -1 ? -1 : TPL_ENOMEM;
  }
  int ec;
  PCRE2_SIZE eo;
  pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
  if (!cc) {
    buf_free(&tb);
    rx_free(r);
    return TPL_ENOMEM;
  }
  /* Go allows 1000 levels; the translation adds a level per repeated group */
  pcre2_set_parens_nest_limit(cc, 2 * 1000 + 10);
  r->re = pcre2_compile((PCRE2_SPTR)(tb.data ? tb.data : ""), tb.len, PCRE2_UTF, &ec, &eo, cc);
  pcre2_compile_context_free(cc);
  buf_free(&tb);
  if (!r->re) {
    /* Go accepted it: only PCRE2's own limits (the size of the compiled pattern) are left */
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(ec, msg, sizeof msg);
    buf_reset(err);
    buf_printf(err, "error parsing regexp: expression too large (%s): `%.*s`", (const char *)msg, (int)n, p);
    rx_free(r);
    return -1;
  }
  r->ncap = r->info.ncap;
  r->md = pcre2_match_data_create_from_pattern(r->re, NULL);
  r->mc = pcre2_match_context_create(NULL);
  if (!r->md || !r->mc) {
    rx_free(r);
    return TPL_ENOMEM;
  }
  pcre2_set_callout(r->mc, rx_callout, NULL);
  pcre2_set_match_limit(r->mc, 10000000);
  pcre2_set_depth_limit(r->mc, 10000);
  return 0;
}

/* One match at or after pos of u->s: 1 found (ov set, offsets into u->s), 0 none, <0 error (limit). */
static int rx_exec(rx_t *r, const rx_subj_t *u, size_t pos, PCRE2_SIZE **ov) {
  /* Each match is bounded by PCRE2's match limit; many of them by the render's time budget. */
  if (r->call && tpl_call_check(r->call)) return TPL_ELIMIT;
  int rc = pcre2_match(r->re, (PCRE2_SPTR)u->s, u->n, pos, PCRE2_NO_UTF_CHECK, r->md, r->mc);
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

/* Receives one match: ov holds offsets into what PCRE2 saw (u->s). */
typedef int (*rx_deliver_t)(void *ud, const rx_subj_t *u, const PCRE2_SIZE *ov);

/* Go's allMatches loop. */
static int rx_all(rx_t *r, const rx_subj_t *u, int64_t max, rx_deliver_t cb, void *ud) {
  if (max < 0) max = (int64_t)u->orig_n + 1;
  size_t pos = 0;
  long prev_end = -1;
  for (int64_t i = 0; i < max && pos <= u->n;) {
    PCRE2_SIZE *ov;
    int rc = rx_exec(r, u, pos, &ov);
    if (rc < 0) return rc;
    if (rc == 0) break;
    bool accept = true;
    size_t m0 = ov[0], m1 = ov[1];
    if (m1 == pos) {
      if ((long)m0 == prev_end) accept = false;
      size_t w = rune_width(u->s, u->n, pos);
      pos += w ? w : 1;
    } else {
      pos = m1;
    }
    prev_end = (long)m1;
    if (accept) {
      rc = cb(ud, u, ov);
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

/* strconv.CanBackquote: no backquote, no control character but tab, valid UTF-8, no BOM. */
static bool can_backquote(const char *s, size_t n) {
  for (size_t i = 0; i < n;) {
    int32_t r;
    size_t w = tpl__utf8_decode(s + i, n - i, &r);
    if ((w == 1 && r == 0xFFFD) || r == '`' || r == 0xFEFF || (r < ' ' && r != '\t') || r == 0x7F) return false;
    i += w;
  }
  return true;
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
      buf_t q = BUF_INIT;
      if (can_backquote(pat->u.s.p, pat->u.s.n)) {
        buf_putc(&q, '`');
        buf_append(&q, pat->u.s.p, pat->u.s.n);
        buf_putc(&q, '`');
      } else {
        tpl_fmt_quote(&q, pat->u.s.p, pat->u.s.n);
      }
      rc = q.data ? tpl_call_errorf(c, "regexp: Compile(%s): %s", q.data, err.data) : TPL_ENOMEM;
      buf_free(&q);
    }
  }
  buf_free(&err);
  return rc;
}

/* Compiles args[0] and prepares args[1] as the subject. */
static int rx_open(tpl_call_t *c, tpl_value_t *args, bool must, rx_t *r, rx_subj_t *u) {
  int rc = compile_arg(c, &args[0], must, r);
  if (rc) return rc;
  if (rx_subj_init(u, args[1].u.s.p, args[1].u.s.n)) {
    rx_free(r);
    return TPL_ENOMEM;
  }
  return 0;
}

static void rx_close(rx_t *r, rx_subj_t *u) {
  rx_free(r);
  rx_subj_free(u);
}

static int do_match(tpl_call_t *c, tpl_value_t *args, bool must, tpl_value_t *out) {
  rx_t r;
  rx_subj_t u;
  buf_t err = BUF_INIT;
  int rc = rx_compile(args[0].u.s.p, args[0].u.s.n, &r, &err);
  r.call = c;
  if (rc == TPL_ENOMEM) {
    buf_free(&err);
    return rc;
  }
  if (rc) {
    /* regexp.MatchString's error: mustRegexMatch returns it, regexMatch drops it */
    rc = must ? tpl_call_errorf(c, "%s", err.data) : 0;
    buf_free(&err);
    *out = tpl_value_bool(false);
    return rc;
  }
  buf_free(&err);
  if (rx_subj_init(&u, args[1].u.s.p, args[1].u.s.n)) {
    rx_free(&r);
    return TPL_ENOMEM;
  }
  PCRE2_SIZE *ov;
  int m = rx_exec(&r, &u, 0, &ov);
  rx_close(&r, &u);
  if (m < 0) return limit_err(c);
  *out = tpl_value_bool(m == 1);
  return 0;
}

SPRIG_FN(f_regexmatch) { return do_match(c, args, false, out); }
SPRIG_FN(f_mustregexmatch) { return do_match(c, args, true, out); }

static int do_find(tpl_call_t *c, tpl_value_t *args, bool must, tpl_value_t *out) {
  rx_t r;
  rx_subj_t u;
  int rc = rx_open(c, args, must, &r, &u);
  if (rc) return rc;
  PCRE2_SIZE *ov;
  int m = rx_exec(&r, &u, 0, &ov);
  if (m < 0) {
    rx_close(&r, &u);
    return limit_err(c);
  }
  if (m) {
    size_t a = rx_at(&u, ov[0]), b = rx_at(&u, ov[1]);
    *out = tpl_value_strn(u.orig + a, b - a);
  } else {
    *out = tpl_value_str("");
  }
  rx_close(&r, &u);
  return 0;
}
SPRIG_FN(f_regexfind) { return do_find(c, args, false, out); }
SPRIG_FN(f_mustregexfind) { return do_find(c, args, true, out); }

typedef struct {
  tpl_call_t *c;
  tpl_value_t *list;
} findall_t;

static int findall_cb(void *ud, const rx_subj_t *u, const PCRE2_SIZE *ov) {
  findall_t *f = ud;
  size_t a = rx_at(u, ov[0]), b = rx_at(u, ov[1]);
  return tpl_list_push(tpl_call_arena(f->c), f->list->u.list, tpl_value_strn(u->orig + a, b - a));
}

static int do_findall(tpl_call_t *c, tpl_value_t *args, bool must, tpl_value_t *out) {
  rx_t r;
  rx_subj_t u;
  int rc = rx_open(c, args, must, &r, &u);
  if (rc) return rc;
  *out = tpl_value_list_new(tpl_call_arena(c), TPL_ELEM_STRING, 0);
  if (out->kind == TPL_INVALID) {
    rx_close(&r, &u);
    return TPL_ENOMEM;
  }
  findall_t f = {c, out};
  rc = args[2].u.i == 0 ? 0 : rx_all(&r, &u, args[2].u.i, findall_cb, &f);
  rx_close(&r, &u);
  if (rc == -1) return limit_err(c);
  if (rc) return rc;
  if (out->u.list->len == 0) out->u.list = NULL; /* FindAllString returns nil */
  return 0;
}
SPRIG_FN(f_regexfindall) { return do_findall(c, args, false, out); }
SPRIG_FN(f_mustregexfindall) { return do_findall(c, args, true, out); }

/* Appends group g of the match (nothing when it did not take part). */
static int put_group(buf_t *o, const rx_t *r, const rx_subj_t *u, const PCRE2_SIZE *ov, uint32_t g) {
  if (g > r->ncap) return 0;
  if (g) g = r->info.groups[g];
  if (ov[2 * g] == PCRE2_UNSET) return 0;
  size_t a = rx_at(u, ov[2 * g]), b = rx_at(u, ov[2 * g + 1]);
  return buf_append(o, u->orig + a, b - a);
}

/* Go's Regexp.expand for ReplaceAllString. */
static int expand(buf_t *o, const rx_t *r, const char *tpl, size_t tn, const rx_subj_t *u, const PCRE2_SIZE *ov) {
  size_t i = 0;
  while (i < tn) {
    const char *d = memchr(tpl + i, '$', tn - i);
    if (!d) break;
    size_t at = (size_t)(d - tpl);
    if (buf_append(o, tpl + i, at - i)) return TPL_ENOMEM;
    i = at + 1;
    if (i < tn && tpl[i] == '$') {
      if (buf_putc(o, '$')) return TPL_ENOMEM;
      i++;
      continue;
    }
    /* a name: letters, digits and '_' (Go's extract), bare or in braces */
    size_t k = i;
    bool brace = false;
    if (k < tn && tpl[k] == '{') brace = true, k++;
    size_t ns = k;
    while (k < tn) {
      int32_t rr;
      size_t w = tpl__utf8_decode(tpl + k, tn - k, &rr);
      bool ok = rr == '_' || (rr < 0x80 ? ((rr >= 'a' && rr <= 'z') || (rr >= 'A' && rr <= 'Z') || (rr >= '0' && rr <= '9'))
                                        : (tpl_unicode_is_letter(rr) || tpl_unicode_is_digit(rr)));
      if (!ok || (w == 1 && rr == 0xFFFD)) break;
      k += w;
    }
    size_t nl = k - ns;
    if (nl == 0 || (brace && (k >= tn || tpl[k] != '}'))) {
      if (buf_putc(o, '$')) return TPL_ENOMEM;
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
    if (name[0] == '0' && nl > 1) num = -1; /* $01 is a name, not a number */
    int rc = 0;
    if (num >= 0) {
      rc = put_group(o, r, u, ov, (uint32_t)num);
    } else {
      /* the first group of that name that took part in the match */
      const char *nm = r->info.names.data;
      for (uint32_t g = 1; nm && g <= r->ncap; g++) {
        size_t len = strlen(nm);
        if (len == nl && memcmp(nm, name, nl) == 0 && ov[2 * r->info.groups[g]] != PCRE2_UNSET) {
          rc = put_group(o, r, u, ov, g);
          break;
        }
        nm += len + 1;
      }
    }
    if (rc) return TPL_ENOMEM;
  }
  return buf_append(o, tpl + i, tn - i) ? TPL_ENOMEM : 0;
}

static int do_replace(tpl_call_t *c, tpl_value_t *args, bool must, bool literal, tpl_value_t *out) {
  rx_t r;
  rx_subj_t u;
  int rc = rx_open(c, args, must, &r, &u);
  if (rc) return rc;
  const char *repl = args[2].u.s.p;
  size_t rn = args[2].u.s.n;
  buf_t b = BUF_INIT;
  size_t last = 0, search = 0; /* offsets into u.s */
  while (search <= u.n && rc == 0) {
    PCRE2_SIZE *ov;
    int m = rx_exec(&r, &u, search, &ov);
    if (m < 0) {
      rx_close(&r, &u);
      buf_free(&b);
      return limit_err(c);
    }
    if (!m) break;
    if (buf_append(&b, u.orig + rx_at(&u, last), rx_at(&u, ov[0]) - rx_at(&u, last))) rc = TPL_ENOMEM;
    if (!rc && (ov[1] > last || ov[0] == 0)) {
      if (literal) rc = buf_append(&b, repl, rn) ? TPL_ENOMEM : 0;
      else rc = expand(&b, &r, repl, rn, &u, ov);
    }
    last = ov[1];
    size_t w = rune_width(u.s, u.n, search);
    if (search + w > ov[1]) search += w;
    else if (search + 1 > ov[1]) search++;
    else search = ov[1];
  }
  if (!rc && buf_append(&b, u.orig + rx_at(&u, last), u.orig_n - rx_at(&u, last))) rc = TPL_ENOMEM;
  rx_close(&r, &u);
  if (rc) {
    buf_free(&b);
    return rc;
  }
  return sprig__ret_buf(c, &b, out);
}
SPRIG_FN(f_regexreplaceall) { return do_replace(c, args, false, false, out); }
SPRIG_FN(f_mustregexreplaceall) { return do_replace(c, args, true, false, out); }
SPRIG_FN(f_regexreplaceallliteral) { return do_replace(c, args, false, true, out); }
SPRIG_FN(f_mustregexreplaceallliteral) { return do_replace(c, args, true, true, out); }

typedef struct {
  size_t *v; /* match start and end, in original offsets */
  size_t n, cap;
} idx_t;

static int idx_cb(void *ud, const rx_subj_t *u, const PCRE2_SIZE *ov) {
  idx_t *x = ud;
  if (x->n + 2 > x->cap) {
    size_t nc = x->cap ? x->cap * 2 : 32;
    size_t *nv = realloc(x->v, nc * sizeof(*nv));
    if (!nv) return TPL_ENOMEM;
    x->v = nv;
    x->cap = nc;
  }
  x->v[x->n++] = rx_at(u, ov[0]);
  x->v[x->n++] = rx_at(u, ov[1]);
  return 0;
}

static int do_split(tpl_call_t *c, tpl_value_t *args, bool must, tpl_value_t *out) {
  rx_t r;
  rx_subj_t u;
  int rc = rx_open(c, args, must, &r, &u);
  if (rc) return rc;
  tpl_arena_t *a = tpl_call_arena(c);
  const char *s = args[1].u.s.p;
  size_t n = args[1].u.s.n;
  int64_t lim = args[2].u.i;
  *out = tpl_value_list_new(a, TPL_ELEM_STRING, 0);
  if (out->kind == TPL_INVALID) {
    rx_close(&r, &u);
    return TPL_ENOMEM;
  }
  if (lim == 0) {
    rx_close(&r, &u);
    out->u.list = NULL;
    return 0;
  }
  if (args[0].u.s.n > 0 && n == 0) {
    rx_close(&r, &u);
    return tpl_list_push(a, out->u.list, tpl_value_str(""));
  }
  idx_t x = {0};
  rc = rx_all(&r, &u, lim, idx_cb, &x);
  rx_close(&r, &u);
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
