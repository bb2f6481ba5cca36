/* Masterminds semver v3.5.0 (see semver.h); moved here from helm/template/sprig_semver.c so that
 * chart sources share it with the template functions. The library's own regular expressions run
 * on PCRE2 (same leftmost-first submatches as Go's RE2 for these patterns; Go's \s written out as
 * [\t\n\f\r ]). */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "helm/semver/semver.h"
#include "helm/template/tpl.h"

#define WS "[\\t\\n\\f\\r ]"
#define OPS "=||!=|>|<|>=|=>|<=|=<|~|~>|\\^"
#define CV                                                                                                            \
  "v?([0-9|x|X|\\*]+)(\\.[0-9|x|X|\\*]+)?(\\.[0-9|x|X|\\*]+)?(-([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?(\\+([0-9A-Za-" \
  "z\\-]+(\\.[0-9A-Za-z\\-]+)*))?"
#define LOOSE                                                                                                         \
  "v?([0-9]+)(\\.[0-9]+)?(\\.[0-9]+)?(-([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?(\\+([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]" \
  "+)*))?"

enum { RE_LOOSE, RE_CONSTRAINT, RE_RANGE, RE_FIND, RE_VALID, RE_N };
static const char *const re_src[RE_N] = {
    "^" LOOSE "$",
    "^" WS "*(" OPS ")" WS "*(" CV ")" WS "*$",
    WS "*(" CV ")" WS "+-" WS "+(" CV ")" WS "*",
    "(" OPS ")" WS "*(" CV ")",
    "^(" WS "*(" OPS ")" WS "*(" CV ")" WS "*)((?:" WS "+|," WS "*)(" OPS ")" WS "*(" CV ")" WS "*)*$",
};
static pcre2_code *re_code[RE_N];
static pthread_once_t re_once = PTHREAD_ONCE_INIT;

static void re_init(void) {
  for (int i = 0; i < RE_N; i++) {
    int ec;
    PCRE2_SIZE eo;
    re_code[i] = pcre2_compile((PCRE2_SPTR)re_src[i], PCRE2_ZERO_TERMINATED, PCRE2_DOLLAR_ENDONLY, &ec, &eo, NULL);
  }
}

/* A match with up to 32 groups; unset groups have so == -1. */
typedef struct {
  int ok;
  PCRE2_SIZE so[32], eo[32];
} re_m_t;

static int re_match(int which, const char *s, size_t n, size_t start, re_m_t *m) {
  pthread_once(&re_once, re_init);
  m->ok = 0;
  if (!re_code[which]) return -1;
  pcre2_match_data *md = pcre2_match_data_create(32, NULL);
  if (!md) return -1;
  int rc = pcre2_match(re_code[which], (PCRE2_SPTR)s, n, start, 0, md, NULL);
  if (rc > 0) {
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    uint32_t np = pcre2_get_ovector_count(md);
    /* pairs from rc on are not written by the match (not even as PCRE2_UNSET) */
    for (uint32_t i = 0; i < 32; i++) {
      if (i < np && i < (uint32_t)rc && ov[2 * i] != PCRE2_UNSET) {
        m->so[i] = ov[2 * i];
        m->eo[i] = ov[2 * i + 1];
      } else {
        m->so[i] = (PCRE2_SIZE)-1;
        m->eo[i] = 0;
      }
    }
    m->ok = 1;
  }
  pcre2_match_data_free(md);
  return rc > 0 || rc == PCRE2_ERROR_NOMATCH ? 0 : -1;
}
#define GLEN(m, i) ((m)->so[i] == (PCRE2_SIZE)-1 ? 0 : (m)->eo[i] - (m)->so[i])
#define GPTR(s, m, i) ((m)->so[i] == (PCRE2_SIZE)-1 ? (s) : (s) + (m)->so[i])

/* ---- versions ---------------------------------------------------------- */

static bool only(const char *s, size_t n, bool alnum) {
  for (size_t i = 0; i < n; i++) {
    char ch = s[i];
    bool d = ch >= '0' && ch <= '9';
    bool a = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '-';
    if (!(d || (alnum && a))) return false;
  }
  return true;
}

/* validatePrerelease / validateMetadata: NULL or the error text. */
static const char *validate_parts(const char *p, size_t n, bool pre) {
  size_t i = 0;
  for (;;) {
    size_t j = i;
    while (j < n && p[j] != '.') j++;
    size_t len = j - i;
    if (len == 0) return pre ? "invalid prerelease string" : "invalid metadata string";
    if (pre && only(p + i, len, false)) {
      if (len > 1 && p[i] == '0') return "version segment starts with 0";
    } else if (!only(p + i, len, true)) {
      return pre ? "invalid prerelease string" : "invalid metadata string";
    }
    if (j >= n) break;
    i = j + 1;
  }
  return NULL;
}

static int parse_seg(const char *s, size_t n, uint64_t *out, buf_t *err) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t d = (uint64_t)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) {
      buf_puts(err, "error parsing version segment: strconv.ParseUint: parsing ");
      tpl_fmt_quote(err, s, n);
      buf_puts(err, ": value out of range");
      return -1;
    }
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

/* semver.NewVersion (CoerceNewVersion = true). 0 or -1 with Go's error text in err. */
int semver_parse(const char *s, size_t n, semver_t *v, buf_t *err) {
  memset(v, 0, sizeof *v);
  if (n > 256) return buf_puts(err, "version string is too long (max 256 bytes)"), -1;
  re_m_t m;
  if (re_match(RE_LOOSE, s, n, 0, &m)) return buf_puts(err, "regex failure"), -1;
  if (!m.ok) return buf_puts(err, "invalid semantic version"), -1;
  v->orig = s;
  v->norig = n;
  v->pre = GPTR(s, &m, 5);
  v->npre = GLEN(&m, 5);
  v->meta = GPTR(s, &m, 8);
  v->nmeta = GLEN(&m, 8);
  if (parse_seg(s + m.so[1], GLEN(&m, 1), &v->major, err)) return -1;
  if (GLEN(&m, 2) && parse_seg(s + m.so[2] + 1, GLEN(&m, 2) - 1, &v->minor, err)) return -1;
  if (GLEN(&m, 3) && parse_seg(s + m.so[3] + 1, GLEN(&m, 3) - 1, &v->patch, err)) return -1;
  const char *e;
  if (v->npre && (e = validate_parts(v->pre, v->npre, true))) return buf_puts(err, e), -1;
  if (v->nmeta && (e = validate_parts(v->meta, v->nmeta, false))) return buf_puts(err, e), -1;
  return 0;
}

static int cmp_u(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }

static bool parse_u(const char *s, size_t n, uint64_t *out) {
  if (!n) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    uint64_t d = (uint64_t)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

static int strcmp_n(const char *a, size_t na, const char *b, size_t nb) {
  size_t k = na < nb ? na : nb;
  int c = memcmp(a, b, k);
  if (c) return c < 0 ? -1 : 1;
  return na < nb ? -1 : na > nb;
}

static int cmp_pre_part(const char *s, size_t ns, const char *o, size_t no) {
  if (ns == no && !memcmp(s, o, ns)) return 0;
  if (!ns) return -1;
  if (!no) return 1;
  uint64_t oi = 0, si = 0;
  bool n1 = !parse_u(o, no, &oi), n2 = !parse_u(s, ns, &si);
  if (n1 && n2) return strcmp_n(s, ns, o, no) > 0 ? 1 : -1;
  if (n1) return -1;
  if (n2) return 1;
  return si > oi ? 1 : -1;
}

/* comparePrerelease: split on "." and compare part by part ("" past the end). */
static int cmp_pre(const char *s, size_t ns, const char *o, size_t no) {
  size_t i = 0, j = 0;
  bool send = false, oend = false;
  while (!(send && oend)) {
    const char *sp = "", *op = "";
    size_t sl = 0, ol = 0;
    if (!send) {
      size_t k = i;
      while (k < ns && s[k] != '.') k++;
      sp = s + i;
      sl = k - i;
      if (k >= ns) send = true;
      i = k + 1;
    }
    if (!oend) {
      size_t k = j;
      while (k < no && o[k] != '.') k++;
      op = o + j;
      ol = k - j;
      if (k >= no) oend = true;
      j = k + 1;
    }
    int d = cmp_pre_part(sp, sl, op, ol);
    if (d) return d;
  }
  return 0;
}

int semver_compare(const semver_t *v, const semver_t *o) {
  int d;
  if ((d = cmp_u(v->major, o->major))) return d;
  if ((d = cmp_u(v->minor, o->minor))) return d;
  if ((d = cmp_u(v->patch, o->patch))) return d;
  if (!v->npre && !o->npre) return 0;
  if (!v->npre) return 1;
  if (!o->npre) return -1;
  return cmp_pre(v->pre, v->npre, o->pre, o->npre);
}

int semver_format(buf_t *b, const semver_t *v) {
  int rc = buf_printf(b, "%llu.%llu.%llu", (unsigned long long)v->major, (unsigned long long)v->minor,
                      (unsigned long long)v->patch);
  if (!rc && v->npre) rc = buf_putc(b, '-') || buf_append(b, v->pre, v->npre);
  if (!rc && v->nmeta) rc = buf_putc(b, '+') || buf_append(b, v->meta, v->nmeta);
  return rc ? TPL_ENOMEM : 0;
}

/* ---- constraints -------------------------------------------------------- */

typedef enum { OP_TILDE_EQ, OP_NE, OP_GT, OP_LT, OP_GE, OP_LE, OP_TILDE, OP_CARET } op_t;

typedef struct {
  op_t op;
  semver_t con;
  bool minor_dirty, dirty, patch_dirty;
} cons_t;

static bool is_x(const char *s, size_t n) { return n == 1 && (s[0] == 'x' || s[0] == 'X' || s[0] == '*'); }

static op_t op_of(const char *s, size_t n) {
  if (n == 0 || (n == 1 && s[0] == '=')) return OP_TILDE_EQ;
  if (n == 1) return s[0] == '>' ? OP_GT : s[0] == '<' ? OP_LT : s[0] == '~' ? OP_TILDE : OP_CARET;
  if (s[0] == '!') return OP_NE;
  if (s[0] == '~') return OP_TILDE;
  if ((s[0] == '>' && s[1] == '=') || (s[0] == '=' && s[1] == '>')) return OP_GE;
  return OP_LE;
}

static void improper(buf_t *err, const char *s, size_t n) {
  buf_puts(err, "improper constraint: ");
  tpl_fmt_quote(err, s, n);
}

/* parseConstraint(s) for a non-empty s; strings live in the arena. */
static int parse_constraint(tpl_arena_t *a, const char *s, size_t n, cons_t *c, buf_t *err) {
  re_m_t m;
  if (re_match(RE_CONSTRAINT, s, n, 0, &m)) return buf_puts(err, "regex failure"), -1;
  if (!m.ok) return improper(err, s, n), -1;
  memset(c, 0, sizeof *c);
  c->op = op_of(GPTR(s, &m, 1), GLEN(&m, 1));
  const char *g3 = GPTR(s, &m, 3), *g4 = GPTR(s, &m, 4), *g5 = GPTR(s, &m, 5), *g6 = GPTR(s, &m, 6);
  size_t l3 = GLEN(&m, 3), l4 = GLEN(&m, 4), l5 = GLEN(&m, 5), l6 = GLEN(&m, 6);
  buf_t ver = BUF_INIT;
  int rc = 0;
  if (is_x(g3, l3) || l3 == 0) {
    rc = buf_puts(&ver, "0.0.0") || buf_append(&ver, g6, l6);
    c->dirty = true;
  } else if (l4 == 0 || is_x(g4 + 1, l4 - 1)) {
    rc = buf_append(&ver, g3, l3) || buf_puts(&ver, ".0.0") || buf_append(&ver, g6, l6);
    c->minor_dirty = c->dirty = true;
  } else if (l5 == 0 || is_x(g5 + 1, l5 - 1)) {
    rc = buf_append(&ver, g3, l3) || buf_append(&ver, g4, l4) || buf_puts(&ver, ".0") || buf_append(&ver, g6, l6);
    c->dirty = c->patch_dirty = true;
  } else {
    rc = buf_append(&ver, GPTR(s, &m, 2), GLEN(&m, 2));
  }
  if (rc) {
    buf_free(&ver);
    return TPL_ENOMEM;
  }
  char *vs = tpl_arena_strndup(a, ver.data ? ver.data : "", ver.len);
  size_t vn = ver.len;
  buf_free(&ver);
  if (!vs) return TPL_ENOMEM;
  buf_t e2 = BUF_INIT;
  rc = semver_parse(vs, vn, &c->con, &e2);
  buf_free(&e2);
  if (rc) return buf_puts(err, "constraint parser error"), -1;
  return 0;
}

static bool check_tilde(const semver_t *v, const cons_t *c) {
  if (semver_compare(v, &c->con) < 0) return false;
  if (c->con.major == 0 && c->con.minor == 0 && c->con.patch == 0 && !c->minor_dirty && !c->patch_dirty) return true;
  if (v->major != c->con.major) return false;
  if (v->minor != c->con.minor && !c->minor_dirty) return false;
  return true;
}

static bool check_one(const semver_t *v, const cons_t *c, bool include_pre) {
  if (v->npre && !include_pre) return false;
  const semver_t *k = &c->con;
  switch (c->op) {
  case OP_NE:
    if (c->dirty) {
      if (k->major != v->major) return true;
      if (k->minor != v->minor && !c->minor_dirty) return true;
      if (c->minor_dirty) return false;
      if (k->patch != v->patch && !c->patch_dirty) return true;
      if (c->patch_dirty) {
        if (v->npre || k->npre) return cmp_pre(v->pre, v->npre, k->pre, k->npre) != 0;
        return false;
      }
    }
    return semver_compare(v, k) != 0;
  case OP_GT:
    if (!c->dirty) return semver_compare(v, k) == 1;
    if (v->major > k->major) return true;
    if (v->major < k->major) return false;
    if (c->minor_dirty) return false;
    if (c->patch_dirty) return v->minor > k->minor;
    return semver_compare(v, k) == 1;
  case OP_LT: return semver_compare(v, k) < 0;
  case OP_GE: return semver_compare(v, k) >= 0;
  case OP_LE:
    if (!c->dirty) return semver_compare(v, k) <= 0;
    if (v->major > k->major) return false;
    if (v->major == k->major && v->minor > k->minor && !c->minor_dirty) return false;
    return true;
  case OP_TILDE: return check_tilde(v, c);
  case OP_TILDE_EQ:
    if (c->dirty) return check_tilde(v, c);
    return semver_compare(v, k) == 0;
  case OP_CARET:
    if (semver_compare(v, k) < 0) return false;
    if (k->major > 0 || c->minor_dirty) return v->major == k->major;
    if (k->major == 0 && v->major > 0) return false;
    if (k->minor > 0 || c->patch_dirty) return v->minor == k->minor;
    if (k->minor == 0 && v->minor > 0) return false;
    return k->patch == v->patch;
  }
  return false;
}

/* rewriteRange: each "A - B" becomes ">= A, <= B " (first occurrence of the matched text each time). */
static int rewrite_range(const char *s, size_t n, buf_t *out) {
  /* Collect the matches on the original string first, as Go does. */
  struct {
    size_t so, eo, a0, a1, b0, b1;
  } ms[64];
  size_t nm = 0, pos = 0;
  while (pos <= n && nm < 64) {
    re_m_t m;
    if (re_match(RE_RANGE, s, n, pos, &m)) return -1;
    if (!m.ok) break;
    ms[nm].so = m.so[0];
    ms[nm].eo = m.eo[0];
    ms[nm].a0 = m.so[1];
    ms[nm].a1 = m.eo[1];
    ms[nm].b0 = m.so[11];
    ms[nm].b1 = m.eo[11];
    nm++;
    pos = m.eo[0] > m.so[0] ? m.eo[0] : m.eo[0] + 1;
  }
  buf_t cur = BUF_INIT, nxt = BUF_INIT;
  if (buf_append(&cur, s, n)) return TPL_ENOMEM;
  for (size_t i = 0; i < nm; i++) {
    const char *pat = s + ms[i].so;
    size_t pl = ms[i].eo - ms[i].so;
    buf_reset(&nxt);
    const char *hit = NULL;
    for (size_t k = 0; k + pl <= cur.len; k++)
      if (!memcmp(cur.data + k, pat, pl)) {
        hit = cur.data + k;
        break;
      }
    if (!hit) continue;
    size_t off = (size_t)(hit - cur.data);
    if (buf_append(&nxt, cur.data, off) || buf_puts(&nxt, ">= ") || buf_append(&nxt, s + ms[i].a0, ms[i].a1 - ms[i].a0) ||
        buf_puts(&nxt, ", <= ") || buf_append(&nxt, s + ms[i].b0, ms[i].b1 - ms[i].b0) || buf_puts(&nxt, " ") ||
        buf_append(&nxt, cur.data + off + pl, cur.len - off - pl)) {
      buf_free(&cur);
      buf_free(&nxt);
      return TPL_ENOMEM;
    }
    buf_t t = cur;
    cur = nxt;
    nxt = t;
  }
  buf_free(&nxt);
  *out = cur;
  return 0;
}

struct semver_constraint_s {
  tpl_arena_t *arena; /* the constraints' version texts */
  cons_t *all;        /* every constraint, group after group */
  size_t nall, ngroups;
  size_t gstart[33], gend[33];
  bool gpre[33]; /* the group names a prerelease: prereleases may match it */
};

void semver_constraint_free(semver_constraint_t *c) {
  if (!c) return;
  tpl_arena_free(c->arena);
  free(c->all);
  free(c);
}

/* NewConstraint(c): every group is parsed first, so that errors win over results as in Go. */
int semver_constraint_new(const char *cs, size_t cn, semver_constraint_t **out, buf_t *err) {
  *out = NULL;
  if (cn > 512) return buf_puts(err, "constraint string is too long (max 512 bytes)"), -1;
  semver_constraint_t *c = calloc(1, sizeof *c);
  if (!c || !(c->arena = tpl_arena_new(0))) {
    free(c);
    return TPL_ENOMEM;
  }
  buf_t rw = BUF_INIT;
  int rc = rewrite_range(cs, cn, &rw);
  if (rc) {
    semver_constraint_free(c);
    return rc == -1 ? (buf_puts(err, "regex failure"), -1) : rc;
  }
  const char *s = rw.data ? rw.data : "";
  size_t n = rw.len;
  /* strings.Split(c, "||") */
  size_t ngroups = 1;
  for (size_t i = 0; i + 1 < n; i++)
    if (s[i] == '|' && s[i + 1] == '|') ngroups++, i++;
  if (ngroups > 32) {
    rc = -1;
    buf_puts(err, "too many constraint groups (max 32)");
    goto out;
  }
  size_t capall = 0, gi = 0, i = 0;
  for (;;) {
    size_t j = i;
    while (j < n && !(j + 1 < n && s[j] == '|' && s[j + 1] == '|')) j++;
    if (j + 1 >= n) j = n;
    const char *g = s + i;
    size_t gl = j - i;
    re_m_t m;
    if ((rc = re_match(RE_VALID, g, gl, 0, &m))) goto fail_re;
    if (!m.ok) {
      improper(err, g, gl);
      rc = -1;
      goto out;
    }
    c->gstart[gi] = c->nall;
    c->gpre[gi] = false;
    size_t pos = 0;
    while (pos < gl) {
      if ((rc = re_match(RE_FIND, g, gl, pos, &m))) goto fail_re;
      if (!m.ok) break;
      if (c->nall == capall) {
        capall = capall ? capall * 2 : 8;
        cons_t *na = realloc(c->all, capall * sizeof *c->all);
        if (!na) {
          rc = TPL_ENOMEM;
          goto out;
        }
        c->all = na;
      }
      rc = parse_constraint(c->arena, g + m.so[0], m.eo[0] - m.so[0], &c->all[c->nall], err);
      if (rc) goto out;
      if (c->all[c->nall].con.npre) c->gpre[gi] = true;
      c->nall++;
      pos = m.eo[0] > m.so[0] ? m.eo[0] : m.eo[0] + 1;
    }
    c->gend[gi] = c->nall;
    gi++;
    if (j >= n) break;
    i = j + 2;
  }
  c->ngroups = gi;
  rc = 0;
  goto out;
fail_re:
  if (rc == -1) buf_puts(err, "regex failure");
out:
  buf_free(&rw);
  if (rc) semver_constraint_free(c);
  else *out = c;
  return rc;
}

int semver_constraint_check(const semver_constraint_t *c, const semver_t *v) {
  for (size_t k = 0; k < c->ngroups; k++) {
    bool joy = true;
    for (size_t q = c->gstart[k]; q < c->gend[k] && joy; q++) joy = check_one(v, &c->all[q], c->gpre[k]);
    if (joy) return 1;
  }
  return 0;
}

/* StrictNewVersion: MAJOR.MINOR.PATCH[-pre][+meta], no "v", no leading zeros, no regex. */
int semver_parse_strict(const char *s, size_t n, semver_t *v) {
  memset(v, 0, sizeof *v);
  if (n == 0 || n > 256) return -1;
  const char *d1 = memchr(s, '.', n);
  if (!d1) return -1;
  const char *d2 = memchr(d1 + 1, '.', n - (size_t)(d1 + 1 - s));
  if (!d2) return -1;
  const char *p = d2 + 1, *end = s + n;
  const char *plus = memchr(p, '+', (size_t)(end - p));
  const char *pend = end;
  buf_t e = BUF_INIT;
  int bad = 0;
  if (plus) {
    v->meta = plus + 1;
    v->nmeta = (size_t)(end - plus - 1);
    if (validate_parts(v->meta, v->nmeta, false)) bad = 1;
    pend = plus;
  }
  const char *dash = bad ? NULL : memchr(p, '-', (size_t)(pend - p));
  if (dash) {
    v->pre = dash + 1;
    v->npre = (size_t)(pend - dash - 1);
    if (validate_parts(v->pre, v->npre, true)) bad = 1;
    pend = dash;
  }
  const char *seg[3] = {s, d1 + 1, p};
  size_t len[3] = {(size_t)(d1 - s), (size_t)(d2 - d1 - 1), (size_t)(pend - p)};
  uint64_t *dst[3] = {&v->major, &v->minor, &v->patch};
  for (int k = 0; k < 3 && !bad; k++) {
    if (!only(seg[k], len[k], false) || (len[k] > 1 && seg[k][0] == '0')) bad = 1;
    else if (!parse_u(seg[k], len[k], dst[k])) bad = 1; /* empty or out of range */
  }
  buf_free(&e);
  if (bad) {
    memset(v, 0, sizeof *v);
    return -1;
  }
  v->orig = s;
  v->norig = n;
  return 0;
}

int semver_valid(const char *s, size_t n) {
  buf_t err = BUF_INIT;
  semver_t v;
  int rc = semver_parse(s, n, &v, &err);
  buf_free(&err);
  return rc == 0;
}

int semver_check(const char *cs, size_t cn, const char *vs, size_t vn) {
  buf_t err = BUF_INIT;
  semver_t v;
  semver_constraint_t *c = NULL;
  int rc = semver_parse(vs, vn, &v, &err);
  if (rc == 0) rc = semver_constraint_new(cs, cn, &c, &err);
  else rc = -1;
  if (rc == 0) rc = semver_constraint_check(c, &v);
  semver_constraint_free(c);
  buf_free(&err);
  return rc == TPL_ENOMEM ? -12 : rc < 0 ? -1 : rc;
}
