/* Go's regexp syntax to PCRE2. The parser follows the rules of Go's
 * regexp/syntax (Perl flags, as regexp.Compile uses) one by one, so that the
 * same patterns are accepted and the same error texts come out; it builds a
 * tree, and the tree is written as a PCRE2 pattern that leaves nothing to
 * PCRE2's own reading of classes, case or line ends: every class becomes its
 * explicit code point ranges (Go's sets, from regex_tables.c), (?i) becomes
 * the case-folding orbit of each character, ^ $ . become explicit assertions
 * and classes, (?U) swaps each repetition's greediness. What is left to PCRE2
 * is backtracking, whose leftmost-first preference is Go's too. */
#include "helm/template/regex_go.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "helm/template/regex_tables.h"
#include "helm/template/tpl_internal.h"

#define RX_MAX_RUNE 0x10FFFFu
#define RX_MAX_REPEAT 1000 /* Go's limit on a repeat count */
#define RX_MAX_HEIGHT 1000 /* Go's limit on the depth of the tree */

/* Go's flags, as its parser keeps them. */
enum { RX_FOLD = 1, RX_ONELINE = 2, RX_DOTNL = 4, RX_NONGREEDY = 8 };

enum {
  RX_EMPTY, RX_LIT, RX_CLASS, RX_ANYNL, RX_ANY, RX_BOL, RX_EOL, RX_BOT, RX_EOT, RX_WB, RX_NWB,
  RX_CAP, RX_REP, RX_CAT, RX_ALT,
  RX_PSEUDO, /* markers on the parse stack only, from here on */
  RX_LPAREN = RX_PSEUDO, RX_VBAR
};

typedef struct rx_set_s {
  uint32_t *r; /* pairs lo, hi */
  size_t n, cap; /* in pairs */
} rx_set_t;

typedef struct rx_node_s rx_node_t;
struct rx_node_s {
  int op;
  int height;
  int32_t rune; /* RX_LIT */
  bool fold;    /* RX_LIT */
  bool greedy;  /* RX_REP */
  int min, max; /* RX_REP; max -1: no upper bound */
  unsigned cap; /* RX_CAP, RX_LPAREN (0: not capturing) */
  unsigned flags; /* RX_LPAREN: the flags to restore at its ')' */
  rx_set_t set;   /* RX_CLASS */
  rx_node_t **sub;
  size_t nsub;
  rx_node_t *next_alloc; /* every node, for freeing */
};

typedef struct rx_parser_s {
  const char *whole;
  size_t whole_n;
  unsigned flags;
  unsigned ncap;
  rx_node_t **stack;
  size_t n, cap;
  rx_node_t *nodes;
  buf_t *err;
  tpl_regex_info_t *info;
  bool oom;
} rx_parser_t;

#define RX_OOM (-12)
#define RX_ERR (-1)

/* Go's Error.Error(): the code and the part of the pattern it is about. */
static int rx__fail(rx_parser_t *p, const char *code, const char *expr, size_t n) {
  buf_reset(p->err);
  if (buf_printf(p->err, "error parsing regexp: %s: `", code) || buf_append(p->err, expr, n) || buf_putc(p->err, '`'))
    return RX_OOM;
  return RX_ERR;
}

/* ---- rune sets ---- */

static int rx__set_add(rx_set_t *s, uint32_t lo, uint32_t hi) {
  if (s->n && s->r[2 * s->n - 1] + 1 >= lo && s->r[2 * s->n - 2] <= lo) {
    /* common case: touching the last pair (appended in order) */
    if (hi > s->r[2 * s->n - 1]) s->r[2 * s->n - 1] = hi;
    return 0;
  }
  if (s->n == s->cap) {
    size_t nc = s->cap ? s->cap * 2 : 8;
    uint32_t *nr = realloc(s->r, nc * 2 * sizeof *nr);
    if (!nr) return RX_OOM;
    s->r = nr;
    s->cap = nc;
  }
  s->r[2 * s->n] = lo;
  s->r[2 * s->n + 1] = hi;
  s->n++;
  return 0;
}

static int rx__pair_cmp(const void *a, const void *b) {
  const uint32_t *x = a, *y = b;
  return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0;
}

/* Sorts and merges overlapping or adjacent pairs. */
static void rx__set_clean(rx_set_t *s) {
  if (s->n < 2) return;
  qsort(s->r, s->n, 2 * sizeof *s->r, rx__pair_cmp);
  size_t w = 0;
  for (size_t i = 1; i < s->n; i++) {
    if (s->r[2 * i] <= s->r[2 * w + 1] + 1) {
      if (s->r[2 * i + 1] > s->r[2 * w + 1]) s->r[2 * w + 1] = s->r[2 * i + 1];
    } else {
      w++;
      s->r[2 * w] = s->r[2 * i];
      s->r[2 * w + 1] = s->r[2 * i + 1];
    }
  }
  s->n = w + 1;
}

/* Adds the complement of the clean pairs r[0..n) (within 0..MaxRune). */
static int rx__set_add_negated(rx_set_t *s, const uint32_t *r, size_t n) {
  uint32_t next = 0;
  for (size_t i = 0; i < n; i++) {
    if (r[2 * i] > next && rx__set_add(s, next, r[2 * i] - 1)) return RX_OOM;
    next = r[2 * i + 1] + 1;
  }
  if (next <= RX_MAX_RUNE && rx__set_add(s, next, RX_MAX_RUNE)) return RX_OOM;
  return 0;
}

static int rx__set_add_pairs(rx_set_t *s, const uint32_t *r, size_t n, bool negate) {
  if (negate) return rx__set_add_negated(s, r, n);
  for (size_t i = 0; i < n; i++)
    if (rx__set_add(s, r[2 * i], r[2 * i + 1])) return RX_OOM;
  return 0;
}

/* unicode.SimpleFold: the next rune of r's case-folding orbit (r itself when it has none). */
static uint32_t rx__simple_fold(uint32_t r) {
  size_t lo = 0, hi = rx_folds_n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (r < rx_folds[mid].lo) hi = mid;
    else if (r > rx_folds[mid].hi) lo = mid + 1;
    else return (uint32_t)((int64_t)r + rx_folds[mid].delta);
  }
  return r;
}

/* Adds [lo, hi] and, under (?i), every rune that folds to one of them. */
static int rx__set_add_range(rx_set_t *s, uint32_t lo, uint32_t hi, bool fold) {
  if (rx__set_add(s, lo, hi)) return RX_OOM;
  if (!fold) return 0;
  for (size_t i = 0; i < rx_folds_n; i++) {
    if (rx_folds[i].hi < lo || rx_folds[i].lo > hi) continue;
    uint32_t a = rx_folds[i].lo > lo ? rx_folds[i].lo : lo, b = rx_folds[i].hi < hi ? rx_folds[i].hi : hi;
    for (uint32_t c = a; c <= b; c++)
      for (uint32_t f = rx__simple_fold(c); f != c; f = rx__simple_fold(f))
        if (rx__set_add(s, f, f)) return RX_OOM;
  }
  return 0;
}

/* ---- nodes and the parse stack ---- */

static rx_node_t *rx__node(rx_parser_t *p, int op) {
  rx_node_t *nd = calloc(1, sizeof *nd);
  if (!nd) {
    p->oom = true;
    return NULL;
  }
  nd->op = op;
  nd->height = 1;
  nd->next_alloc = p->nodes;
  p->nodes = nd;
  return nd;
}

static void rx__free_nodes(rx_parser_t *p) {
  for (rx_node_t *nd = p->nodes, *nx; nd; nd = nx) {
    nx = nd->next_alloc;
    free(nd->set.r);
    free(nd->sub);
    free(nd);
  }
  p->nodes = NULL;
  free(p->stack);
  p->stack = NULL;
}

static int rx__push(rx_parser_t *p, rx_node_t *nd) {
  if (!nd) return RX_OOM;
  if (p->n == p->cap) {
    size_t nc = p->cap ? p->cap * 2 : 16;
    rx_node_t **ns = realloc(p->stack, nc * sizeof *ns);
    if (!ns) return RX_OOM;
    p->stack = ns;
    p->cap = nc;
  }
  p->stack[p->n++] = nd;
  return 0;
}

static int rx__op(rx_parser_t *p, int op) { return rx__push(p, rx__node(p, op)); }

/* Gives nd the children stack[from..n) and pops them; Go refuses a tree
 * deeper than 1000 with the whole pattern as the expression. */
static int rx__adopt(rx_parser_t *p, rx_node_t *nd, size_t from) {
  size_t k = p->n - from;
  nd->sub = malloc((k ? k : 1) * sizeof *nd->sub);
  if (!nd->sub) return RX_OOM;
  for (size_t i = 0; i < k; i++) {
    nd->sub[i] = p->stack[from + i];
    if (nd->sub[i]->height + 1 > nd->height) nd->height = nd->sub[i]->height + 1;
  }
  nd->nsub = k;
  p->n = from;
  if (nd->height > RX_MAX_HEIGHT) return rx__fail(p, "expression nests too deeply", p->whole, p->whole_n);
  return 0;
}

static int rx__literal(rx_parser_t *p, int32_t r) {
  rx_node_t *nd = rx__node(p, RX_LIT);
  if (!nd) return RX_OOM;
  nd->rune = r;
  nd->fold = (p->flags & RX_FOLD) != 0;
  return rx__push(p, nd);
}

/* Replaces the items above the last marker with their concatenation. */
static int rx__concat(rx_parser_t *p) {
  size_t from = p->n;
  while (from > 0 && p->stack[from - 1]->op < RX_PSEUDO) from--;
  if (p->n - from == 1) return 0;
  rx_node_t *nd = rx__node(p, p->n == from ? RX_EMPTY : RX_CAT);
  if (!nd) return RX_OOM;
  int rc = p->n == from ? 0 : rx__adopt(p, nd, from);
  return rc ? rc : rx__push(p, nd);
}

/* After rx__concat: replaces alt | alt | ... above the last '(' (or the
 * bottom) with one alternation; returns the index of that '(' or -1. */
static int rx__alternate(rx_parser_t *p, long *lparen) {
  size_t from = p->n;
  while (from > 0 && p->stack[from - 1]->op != RX_LPAREN) from--;
  *lparen = (long)from - 1;
  size_t w = from;
  for (size_t i = from; i < p->n; i++)
    if (p->stack[i]->op != RX_VBAR) p->stack[w++] = p->stack[i];
  p->n = w;
  if (p->n - from == 1) return 0;
  rx_node_t *nd = rx__node(p, RX_ALT);
  if (!nd) return RX_OOM;
  int rc = rx__adopt(p, nd, from);
  return rc ? rc : rx__push(p, nd);
}

/* ---- pieces of the pattern ---- */

/* Go's nextRune: the rune at s, refusing invalid UTF-8 (the rest of the pattern as the expression). */
static int rx__next_rune(rx_parser_t *p, const char *s, size_t n, int32_t *r, size_t *w) {
  *w = tpl__utf8_decode(s, n, r);
  if (*w == 1 && *r == 0xFFFD && (unsigned char)s[0] >= 0x80) return rx__fail(p, "invalid UTF-8", s, n);
  return 0;
}

static int rx__check_utf8(rx_parser_t *p, const char *s, size_t n) {
  for (size_t i = 0; i < n;) {
    int32_t r;
    size_t w;
    int rc = rx__next_rune(p, s + i, n - i, &r, &w);
    if (rc) return rc;
    i += w;
  }
  return 0;
}

static bool rx__isalnum(int32_t c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

static int rx__unhex(int32_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* One escaped character (s[0] is '\'): Go's parseEscape. */
static int rx__escape(rx_parser_t *p, const char *s, size_t n, int32_t *out, size_t *used) {
  if (n < 2) return rx__fail(p, "trailing backslash at end of expression", "", 0);
  size_t i = 1, w;
  int32_t c;
  int rc = rx__next_rune(p, s + i, n - i, &c, &w);
  if (rc) return rc;
  i += w;
  if (c >= '1' && c <= '7' && !(i < n && s[i] >= '0' && s[i] <= '7')) {
    /* a lone digit is a backreference, which Go does not have */
  } else if (c >= '0' && c <= '7') {
    int32_t r = c - '0';
    for (int k = 1; k < 3 && i < n && s[i] >= '0' && s[i] <= '7'; k++) r = r * 8 + (s[i++] - '0');
    *out = r;
    *used = i;
    return 0;
  } else if (c == 'x') {
    if (i < n) {
      if ((rc = rx__next_rune(p, s + i, n - i, &c, &w))) return rc;
      i += w;
      if (c == '{') {
        int nhex = 0;
        int32_t r = 0;
        bool closed = false;
        while (i < n) {
          if ((rc = rx__next_rune(p, s + i, n - i, &c, &w))) return rc;
          i += w;
          if (c == '}') {
            closed = true;
            break;
          }
          int v = rx__unhex(c);
          if (v < 0) break;
          r = r * 16 + v;
          if (r > (int32_t)RX_MAX_RUNE) break;
          nhex++;
        }
        if (closed && nhex > 0) {
          *out = r;
          *used = i;
          return 0;
        }
      } else {
        int x = rx__unhex(c), y = -1;
        if (i < n) {
          if ((rc = rx__next_rune(p, s + i, n - i, &c, &w))) return rc;
          i += w;
          y = rx__unhex(c);
        }
        if (x >= 0 && y >= 0) {
          *out = x * 16 + y;
          *used = i;
          return 0;
        }
      }
    }
  } else {
    static const char cesc[] = "a\af\fn\nr\rt\tv\v";
    for (const char *e = cesc; *e; e += 2)
      if (c == *e) {
        *out = e[1];
        *used = i;
        return 0;
      }
    if (c < 0x80 && !rx__isalnum(c)) {
      *out = c;
      *used = i;
      return 0;
    }
  }
  return rx__fail(p, "invalid escape sequence", s, i);
}

static const rx_named_set_t *rx__find(const rx_named_set_t *t, size_t n, const char *name, size_t len, bool sorted) {
  if (!sorted) {
    for (size_t i = 0; i < n; i++)
      if (strlen(t[i].name) == len && memcmp(t[i].name, name, len) == 0) return &t[i];
    return NULL;
  }
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    size_t ml = strlen(t[mid].name);
    int c = memcmp(t[mid].name, name, ml < len ? ml : len);
    if (c == 0) c = ml < len ? -1 : ml > len ? 1 : 0;
    if (c == 0) return &t[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}

/* Adds a named set (Perl, POSIX or Unicode class) as Go's appendGroup/appendTable do. */
static int rx__set_add_named(rx_set_t *s, const rx_named_set_t *g, bool fold, bool negate) {
  return fold ? rx__set_add_pairs(s, g->fold, g->nfold, negate) : rx__set_add_pairs(s, g->plain, g->nplain, negate);
}

/* \d \D \s \S \w \W at s: 1 when one was added (2 bytes used), 0 when s is not one. */
static int rx__perl_class(rx_parser_t *p, const char *s, size_t n, rx_set_t *set) {
  if (n < 2 || s[0] != '\\') return 0;
  const rx_named_set_t *g = rx__find(rx_groups, rx_groups_n, s, 2, false);
  if (!g) return 0;
  return rx__set_add_named(set, g, p->flags & RX_FOLD, false) ? RX_OOM : 1;
}

/* \pX, \p{Name}, \PX, \P{^Name} at s: 1 (used set) when one was added, 0 when s is not one. */
static int rx__unicode_class(rx_parser_t *p, const char *s, size_t n, rx_set_t *set, size_t *used) {
  if (n < 2 || s[0] != '\\' || (s[1] != 'p' && s[1] != 'P')) return 0;
  bool negate = s[1] == 'P';
  int32_t c = 0xFFFD;
  size_t w = 0, seq, name_at, name_len;
  int rc;
  if (n > 2 && (rc = rx__next_rune(p, s + 2, n - 2, &c, &w))) return rc;
  if (c != '{') {
    seq = 2 + w;
    name_at = 2;
    name_len = w;
  } else {
    const char *e = memchr(s, '}', n);
    if (!e) {
      if ((rc = rx__check_utf8(p, s, n))) return rc;
      return rx__fail(p, "invalid character class range", s, n);
    }
    seq = (size_t)(e - s) + 1;
    name_at = 3;
    name_len = seq - 4;
    if ((rc = rx__check_utf8(p, s + name_at, name_len))) return rc;
  }
  if (name_len && s[name_at] == '^') {
    negate = !negate;
    name_at++;
    name_len--;
  }
  /* Go looks a name up spelled with its first letter upper case, the rest lower case, and no '_', '-' or ' '. */
  char canon[64];
  size_t cl = 0;
  bool first = true, fits = true;
  for (size_t i = 0; i < name_len; i++) {
    char ch = s[name_at + i];
    if (ch == '_' || ch == '-' || ch == ' ') continue;
    if (first) {
      if (ch >= 'a' && ch <= 'z') ch = (char)(ch - 'a' + 'A');
      first = false;
    } else if (ch >= 'A' && ch <= 'Z') {
      ch = (char)(ch - 'A' + 'a');
    }
    if (cl == sizeof canon) {
      fits = false;
      break;
    }
    canon[cl++] = ch;
  }
  const rx_named_set_t *g = fits ? rx__find(rx_props, rx_props_n, canon, cl, true) : NULL;
  if (!g) return rx__fail(p, "invalid character class range", s, seq);
  if (rx__set_add_named(set, g, p->flags & RX_FOLD, negate)) return RX_OOM;
  *used = seq;
  return 1;
}

/* [:name:] at s (inside a bracket): 1 (used set) when added, 0 when s is not one. */
static int rx__posix_class(rx_parser_t *p, const char *s, size_t n, rx_set_t *set, size_t *used) {
  if (n <= 2 || s[0] != '[' || s[1] != ':') return 0;
  const char *e = NULL;
  for (size_t i = 2; i + 1 < n; i++)
    if (s[i] == ':' && s[i + 1] == ']') {
      e = s + i;
      break;
    }
  if (!e) return 0;
  size_t len = (size_t)(e - s) + 2;
  const rx_named_set_t *g = rx__find(rx_groups, rx_groups_n, s, len, false);
  if (!g) return rx__fail(p, "invalid character class range", s, len);
  if (rx__set_add_named(set, g, p->flags & RX_FOLD, false)) return RX_OOM;
  *used = len;
  return 1;
}

/* One character of a bracket expression (Go's parseClassChar); whole is the class from its '['. */
static int rx__class_char(rx_parser_t *p, const char *s, size_t n, const char *whole, size_t whole_n, int32_t *r,
                          size_t *used) {
  if (n == 0) return rx__fail(p, "missing closing ]", whole, whole_n);
  if (s[0] == '\\') return rx__escape(p, s, n, r, used);
  return rx__next_rune(p, s, n, r, used);
}

/* A bracket expression at s ('['): Go's parseClass. */
static int rx__class(rx_parser_t *p, const char *s, size_t n, size_t *used) {
  rx_node_t *nd = rx__node(p, RX_CLASS);
  if (!nd) return RX_OOM;
  rx_set_t *set = &nd->set;
  bool fold = p->flags & RX_FOLD;
  size_t i = 1;
  bool negate = false;
  if (i < n && s[i] == '^') {
    negate = true;
    i++;
  }
  int rc;
  for (bool first = true; i >= n || s[i] != ']' || first; first = false) {
    size_t w = 0;
    if ((rc = rx__posix_class(p, s + i, n - i, set, &w)) < 0) return rc;
    if (rc == 0 && (rc = rx__unicode_class(p, s + i, n - i, set, &w)) < 0) return rc;
    if (rc == 0 && (rc = rx__perl_class(p, s + i, n - i, set)) < 0) return rc;
    if (rc == 1) {
      i += w ? w : 2;
      continue;
    }
    size_t at = i;
    int32_t lo, hi;
    if ((rc = rx__class_char(p, s + i, n - i, s, n, &lo, &w))) return rc;
    i += w;
    hi = lo;
    /* "a-" before the closing ']' is two characters */
    if (n - i >= 2 && s[i] == '-' && s[i + 1] != ']') {
      i++;
      if ((rc = rx__class_char(p, s + i, n - i, s, n, &hi, &w))) return rc;
      i += w;
      if (hi < lo) return rx__fail(p, "invalid character class range", s + at, i - at);
    }
    if (rx__set_add_range(set, (uint32_t)lo, (uint32_t)hi, fold)) return RX_OOM;
  }
  i++; /* ']' */
  rx__set_clean(set);
  if (negate) {
    rx_set_t neg = {0};
    if (rx__set_add_negated(&neg, set->r, set->n)) {
      free(neg.r);
      return RX_OOM;
    }
    free(set->r);
    *set = neg;
  }
  *used = i;
  return rx__push(p, nd);
}

/* A class node holding one named or Unicode class outside brackets. */
static int rx__class_node(rx_parser_t *p, rx_node_t **out) {
  *out = rx__node(p, RX_CLASS);
  return *out ? 0 : RX_OOM;
}

/* Whether the counts of the repetitions in nd multiply to at most limit
 * (recursion bounded by the tree's height, at most RX_MAX_HEIGHT). */
static bool rx__repeat_ok(const rx_node_t *nd, int limit) {
  if (nd->op == RX_REP && nd->max != 0) {
    int m = nd->max < 0 ? nd->min : nd->max;
    if (m > limit) return false;
    if (m > 0) limit /= m;
  }
  for (size_t k = 0; k < nd->nsub; k++)
    if (!rx__repeat_ok(nd->sub[k], limit)) return false;
  return true;
}

/* Go's repeat(): applies a repetition to the top of the stack. before is the
 * operator's text, op_len its length, last the previous operator's text (NULL when none). */
static int rx__repeat(rx_parser_t *p, int min, int max, const char *before, size_t op_len, size_t *used,
                      const char *last, size_t last_len_to_end, size_t rest_n) {
  unsigned flags = p->flags;
  size_t len = op_len;
  if (op_len < rest_n && before[op_len] == '?') {
    len++;
    flags ^= RX_NONGREEDY;
  }
  if (last) return rx__fail(p, "invalid nested repetition operator", last, last_len_to_end - (rest_n - len));
  if (p->n == 0 || p->stack[p->n - 1]->op >= RX_PSEUDO) return rx__fail(p, "missing argument to repetition operator", before, len);
  rx_node_t *nd = rx__node(p, RX_REP);
  if (!nd) return RX_OOM;
  nd->min = min;
  nd->max = max;
  nd->greedy = !(flags & RX_NONGREEDY);
  int rc = rx__adopt(p, nd, p->n - 1);
  if (rc) return rc;
  /* Go refuses nested counted repetitions whose counts multiply past 1000 */
  if ((min >= 2 || max >= 2) && !rx__repeat_ok(nd, RX_MAX_REPEAT)) return rx__fail(p, "invalid repeat count", before, len);
  *used = len;
  return rx__push(p, nd);
}

/* Go's parseInt: decimal digits without a leading zero; -1 when too big. */
static bool rx__int(const char *s, size_t n, size_t *i, int *v) {
  if (*i >= n || s[*i] < '0' || s[*i] > '9') return false;
  if (n - *i >= 2 && s[*i] == '0' && s[*i + 1] >= '0' && s[*i + 1] <= '9') return false;
  long x = 0;
  for (; *i < n && s[*i] >= '0' && s[*i] <= '9'; (*i)++)
    if (x >= 0) x = x >= 100000000 ? -1 : x * 10 + (s[*i] - '0');
  *v = (int)x;
  return true;
}

/* {n} {n,} {n,m} at s: true with the counts and its length, false when s is not one (then '{' is a literal). */
static bool rx__counts(const char *s, size_t n, int *min, int *max, size_t *len) {
  size_t i = 1;
  if (!rx__int(s, n, &i, min)) return false;
  if (i >= n) return false;
  if (s[i] != ',') {
    *max = *min;
  } else {
    i++;
    if (i >= n) return false;
    if (s[i] == '}') *max = -1;
    else if (!rx__int(s, n, &i, max)) return false;
    else if (*max < 0) *min = -1;
  }
  if (i >= n || s[i] != '}') return false;
  *len = i + 1;
  return true;
}

/* (?flags), (?flags:, (?P<name>, (?<name> at s: Go's parsePerlFlags. */
static int rx__perl_flags(rx_parser_t *p, const char *s, size_t n, size_t *used) {
  bool with_p = n > 4 && s[2] == 'P' && s[3] == '<', named = n > 3 && s[2] == '<';
  int rc;
  if (with_p || named) {
    size_t b = with_p ? 4 : 3;
    const char *gt = memchr(s, '>', n);
    if (!gt) {
      if ((rc = rx__check_utf8(p, s, n))) return rc;
      return rx__fail(p, "invalid named capture", s, n);
    }
    size_t end = (size_t)(gt - s);
    if ((rc = rx__check_utf8(p, s + b, end - b))) return rc;
    bool ok = end > b;
    for (size_t k = b; k < end && ok; k++) ok = s[k] == '_' || rx__isalnum((unsigned char)s[k]);
    if (!ok) return rx__fail(p, "invalid named capture", s, end + 1);
    rx_node_t *nd = rx__node(p, RX_LPAREN);
    if (!nd) return RX_OOM;
    nd->cap = ++p->ncap;
    nd->flags = p->flags;
    if (buf_append(&p->info->names, s + b, end - b) || buf_putc(&p->info->names, 0)) return RX_OOM;
    *used = end + 1;
    return rx__push(p, nd);
  }
  unsigned flags = p->flags;
  bool neg = false, saw = false;
  size_t i = 2;
  while (i < n) {
    int32_t c;
    size_t w;
    if ((rc = rx__next_rune(p, s + i, n - i, &c, &w))) return rc;
    i += w;
    unsigned f = c == 'i' ? RX_FOLD : c == 'm' ? RX_ONELINE : c == 's' ? RX_DOTNL : c == 'U' ? RX_NONGREEDY : 0;
    if (f) {
      /* (?m) clears Go's OneLine; everything else sets its flag; after '-' the reverse */
      bool set = (c == 'm') == neg;
      flags = set ? flags | f : flags & ~f;
      saw = true;
      continue;
    }
    if (c == '-') {
      if (neg) break;
      neg = true;
      saw = false;
      continue;
    }
    if (c == ':' || c == ')') {
      if (neg && !saw) break;
      if (c == ':') {
        rx_node_t *nd = rx__node(p, RX_LPAREN);
        if (!nd) return RX_OOM;
        nd->flags = p->flags;
        if ((rc = rx__push(p, nd))) return rc;
      }
      p->flags = flags;
      *used = i;
      return 0;
    }
    break;
  }
  return rx__fail(p, "invalid or unsupported Perl syntax", s, i);
}

static int rx__right_paren(rx_parser_t *p) {
  int rc;
  long lp;
  if ((rc = rx__concat(p)) || (rc = rx__alternate(p, &lp))) return rc;
  if (lp < 0 || p->n != (size_t)lp + 2) return rx__fail(p, "unexpected )", p->whole, p->whole_n);
  rx_node_t *open = p->stack[lp], *body = p->stack[lp + 1];
  p->flags = open->flags;
  if (!open->cap) {
    p->stack[lp] = body;
    p->n = (size_t)lp + 1;
    return 0;
  }
  open->op = RX_CAP;
  return rx__adopt(p, open, (size_t)lp + 1);
}

static int rx__parse(rx_parser_t *p, const char *s, size_t n) {
  const char *last = NULL; /* the previous repetition operator and what follows it */
  size_t last_n = 0;
  int rc = 0;
  size_t i = 0;
  while (i < n && rc == 0) {
    const char *t = s + i, *rep = NULL;
    size_t tn = n - i, w = 1, rep_n = 0; /* w: bytes used, one unless a case says */
    int32_t c;
    switch (*t) {
    case '(':
      if (tn >= 2 && t[1] == '?') {
        rc = rx__perl_flags(p, t, tn, &w);
        break;
      }
      {
        rx_node_t *nd = rx__node(p, RX_LPAREN);
        if (!nd) return RX_OOM;
        nd->cap = ++p->ncap;
        nd->flags = p->flags;
        if (buf_putc(&p->info->names, 0)) return RX_OOM;
        rc = rx__push(p, nd);
      }
      break;
    case '|':
      if (!(rc = rx__concat(p))) rc = rx__op(p, RX_VBAR);
      break;
    case ')':
      rc = rx__right_paren(p);
      break;
    case '^':
      rc = rx__op(p, p->flags & RX_ONELINE ? RX_BOT : RX_BOL);
      break;
    case '$':
      rc = rx__op(p, p->flags & RX_ONELINE ? RX_EOT : RX_EOL);
      break;
    case '.':
      rc = rx__op(p, p->flags & RX_DOTNL ? RX_ANY : RX_ANYNL);
      break;
    case '[':
      rc = rx__class(p, t, tn, &w);
      break;
    case '*':
    case '+':
    case '?':
      rc = rx__repeat(p, *t == '+', *t == '?' ? 1 : -1, t, 1, &w, last, last_n, tn);
      rep = t, rep_n = tn;
      break;
    case '{': {
      int min, max;
      size_t len;
      if (!rx__counts(t, tn, &min, &max, &len)) {
        rc = rx__literal(p, '{');
        break;
      }
      if (min < 0 || min > RX_MAX_REPEAT || max > RX_MAX_REPEAT || (max >= 0 && min > max)) {
        rc = rx__fail(p, "invalid repeat count", t, len);
        break;
      }
      rc = rx__repeat(p, min, max, t, len, &w, last, last_n, tn);
      rep = t, rep_n = tn;
      break;
    }
    case '\\':
      if (tn >= 2) {
        char e = t[1];
        if (e == 'A' || e == 'b' || e == 'B' || e == 'z') {
          rc = rx__op(p, e == 'A' ? RX_BOT : e == 'b' ? RX_WB : e == 'B' ? RX_NWB : RX_EOT);
          w = 2;
          break;
        }
        if (e == 'C') {
          rc = rx__fail(p, "invalid escape sequence", t, 2);
          break;
        }
        if (e == 'Q') {
          /* \Q...\E: literals up to \E or the end */
          size_t k = 2, end = tn;
          for (size_t q = 2; q + 1 < tn; q++)
            if (t[q] == '\\' && t[q + 1] == 'E') {
              end = q;
              break;
            }
          while (k < end && rc == 0) {
            size_t rw;
            if ((rc = rx__next_rune(p, t + k, end - k, &c, &rw))) break;
            rc = rx__literal(p, c);
            k += rw;
          }
          w = end == tn ? tn : end + 2;
          break;
        }
        rx_node_t *nd;
        if ((rc = rx__class_node(p, &nd))) break;
        if (e == 'p' || e == 'P') {
          rc = rx__unicode_class(p, t, tn, &nd->set, &w);
          if (rc < 0) break;
          rc = rx__push(p, nd);
          break;
        }
        if ((rc = rx__perl_class(p, t, tn, &nd->set)) < 0) break;
        if (rc == 1) {
          w = 2;
          rc = rx__push(p, nd);
          break;
        }
        nd->op = RX_EMPTY; /* not a class: left unused */
      }
      if (!(rc = rx__escape(p, t, tn, &c, &w))) rc = rx__literal(p, c);
      break;
    default:
      if (!(rc = rx__next_rune(p, t, tn, &c, &w))) rc = rx__literal(p, c);
      break;
    }
    if (rc) break;
    last = rep;
    last_n = rep_n;
    i += w;
  }
  if (rc) return rc;
  long lp;
  if ((rc = rx__concat(p)) || (rc = rx__alternate(p, &lp))) return rc;
  if (lp >= 0 || p->n != 1) return rx__fail(p, "missing closing )", p->whole, p->whole_n);
  return 0;
}

/* ---- writing PCRE2 ---- */

static int rx__put_rune(buf_t *o, uint32_t r) {
  if (r < 0x80 && rx__isalnum((int32_t)r)) return buf_putc(o, (char)r);
  return buf_printf(o, "\\x{%X}", r);
}

/* A set as a PCRE2 class; surrogates (which valid UTF-8 never holds, and PCRE2 refuses) left out. */
static int rx__put_set(buf_t *o, const uint32_t *r, size_t n) {
  size_t mark = o->len;
  bool any = false;
  if (buf_putc(o, '[')) return RX_OOM;
  for (size_t i = 0; i < n; i++) {
    uint32_t lo = r[2 * i], hi = r[2 * i + 1];
    for (int part = 0; part < 2; part++) {
      uint32_t a = lo, b = hi;
      if (part == 0 && b >= 0xD800) b = a < 0xD800 ? 0xD7FF : 0; /* below the surrogates */
      if (part == 0 && a >= 0xD800) continue;
      if (part == 1) {
        if (hi <= 0xDFFF) continue;
        a = lo > 0xDFFF ? lo : 0xE000;
      }
      if (part == 0 && b < a) continue;
      any = true;
      if (rx__put_rune(o, a)) return RX_OOM;
      if (b != a && (buf_putc(o, '-') || rx__put_rune(o, b))) return RX_OOM;
    }
  }
  if (!any) {
    o->len = mark;
    return buf_puts(o, "(?!)") ? RX_OOM : 0;
  }
  return buf_putc(o, ']') ? RX_OOM : 0;
}

/* True when PCRE2 can repeat what nd writes as it is. */
static bool rx__atom(const rx_node_t *nd) {
  return nd->op == RX_LIT || nd->op == RX_ANYNL || nd->op == RX_ANY || nd->op == RX_CAP ||
         (nd->op == RX_CLASS && nd->set.n > 0);
}

/* Whether nd can match the empty string. */
static bool rx__nullable(const rx_node_t *nd) {
  switch (nd->op) {
  case RX_LIT:
  case RX_CLASS:
  case RX_ANY:
  case RX_ANYNL:
    return false;
  case RX_CAP:
    return rx__nullable(nd->sub[0]);
  case RX_REP:
    return nd->min == 0 || rx__nullable(nd->sub[0]);
  case RX_CAT:
    for (size_t i = 0; i < nd->nsub; i++)
      if (!rx__nullable(nd->sub[i])) return false;
    return true;
  case RX_ALT:
    for (size_t i = 0; i < nd->nsub; i++)
      if (rx__nullable(nd->sub[i])) return true;
    return false;
  }
  return true;
}

static bool rx__has_cap(const rx_node_t *nd) {
  if (nd->op == RX_CAP) return true;
  for (size_t i = 0; i < nd->nsub; i++)
    if (rx__has_cap(nd->sub[i])) return true;
  return false;
}

typedef struct rx_emit_s {
  buf_t *o;
  unsigned pgroups; /* PCRE2 groups written so far */
  unsigned *groups; /* Go group -> PCRE2 group */
} rx_emit_t;

/* What the nodes without parts are written as. ^ and $ under (?m) are explicit about \n (^ also
 * after a final \n, as in Go); outside (?m) they are the text's ends. */
static const char *const rx__fixed[RX_PSEUDO] = {
    [RX_ANYNL] = "[^\\n]", [RX_ANY] = "(?s:.)", [RX_BOL] = "(?<![^\\n])", [RX_EOL] = "(?![^\\n])",
    [RX_BOT] = "\\A",     [RX_EOT] = "\\z",     [RX_WB] = "\\b",          [RX_NWB] = "\\B",
};

static int rx__emit(rx_emit_t *e, const rx_node_t *nd) {
  buf_t *o = e->o;
  int rc = 0;
  switch (nd->op) {
  case RX_EMPTY:
    return 0;
  case RX_LIT: {
    if (!nd->fold || rx__simple_fold((uint32_t)nd->rune) == (uint32_t)nd->rune) return rx__put_rune(o, (uint32_t)nd->rune) ? RX_OOM : 0;
    rx_set_t s = {0};
    if (rx__set_add_range(&s, (uint32_t)nd->rune, (uint32_t)nd->rune, true)) rc = RX_OOM;
    rx__set_clean(&s);
    if (!rc) rc = rx__put_set(o, s.r, s.n);
    free(s.r);
    return rc;
  }
  case RX_CLASS:
    return rx__put_set(o, nd->set.r, nd->set.n);
  case RX_ANYNL:
  case RX_ANY:
  case RX_BOL:
  case RX_EOL:
  case RX_BOT:
  case RX_EOT:
  case RX_WB:
  case RX_NWB:
    return buf_puts(o, rx__fixed[nd->op]) ? RX_OOM : 0;
  case RX_CAP:
    if (buf_putc(o, '(')) return RX_OOM;
    e->groups[nd->cap] = ++e->pgroups;
    if ((rc = rx__emit(e, nd->sub[0]))) return rc;
    return buf_putc(o, ')') ? RX_OOM : 0;
  case RX_REP: {
    /* Go's loops (x+, and x* as (x+)?) never take an empty iteration after
     * the first; PCRE2 takes one and keeps its captures. Where that shows (a
     * body with groups that can match empty), empty groups mark where the
     * loop and each iteration begin, and a callout at the end of an iteration
     * fails an empty one that is not the first. */
    bool guard = nd->max == -1 && nd->min <= 1 && rx__has_cap(nd->sub[0]) && rx__nullable(nd->sub[0]);
    bool wrap = guard || !rx__atom(nd->sub[0]);
    unsigned mark = 0, loop = 0;
    if (guard) {
      loop = ++e->pgroups; /* where the loop begins: its first iteration may be empty */
      if (buf_puts(o, "()")) return RX_OOM;
    }
    if (wrap && buf_puts(o, "(?:")) return RX_OOM;
    if (guard) {
      mark = ++e->pgroups;
      if (buf_puts(o, "()")) return RX_OOM;
    }
    if ((rc = rx__emit(e, nd->sub[0]))) return rc;
    if (guard && buf_printf(o, "(?C\"%u,%u\")", mark, loop)) return RX_OOM;
    if (wrap && buf_putc(o, ')')) return RX_OOM;
    if (nd->min == 0 && nd->max == -1) rc = buf_putc(o, '*');
    else if (nd->min == 1 && nd->max == -1) rc = buf_putc(o, '+');
    else if (nd->min == 0 && nd->max == 1) rc = buf_putc(o, '?');
    else if (nd->max == -1) rc = buf_printf(o, "{%d,}", nd->min);
    else if (nd->min == nd->max) rc = buf_printf(o, "{%d}", nd->min);
    else rc = buf_printf(o, "{%d,%d}", nd->min, nd->max);
    if (!rc && !nd->greedy) rc = buf_putc(o, '?');
    return rc ? RX_OOM : 0;
  }
  case RX_CAT:
    for (size_t i = 0; i < nd->nsub; i++)
      if ((rc = rx__emit(e, nd->sub[i]))) return rc;
    return 0;
  case RX_ALT:
    if (buf_puts(o, "(?:")) return RX_OOM;
    for (size_t i = 0; i < nd->nsub; i++) {
      if (i && buf_putc(o, '|')) return RX_OOM;
      if ((rc = rx__emit(e, nd->sub[i]))) return rc;
    }
    return buf_putc(o, ')') ? RX_OOM : 0;
  }
  return 0;
}

int tpl_regex_translate(const char *s, size_t n, buf_t *out, tpl_regex_info_t *info, buf_t *err) {
  rx_parser_t p = {.whole = s, .whole_n = n, .flags = RX_ONELINE, .err = err, .info = info};
  info->ncap = 0;
  info->names = (buf_t)BUF_INIT;
  info->groups = NULL;
  int rc = rx__parse(&p, s, n);
  if (rc == 0 && p.oom) rc = RX_OOM;
  if (rc == 0) {
    info->ncap = p.ncap;
    info->groups = calloc(p.ncap + 1, sizeof *info->groups);
    rx_emit_t e = {out, 0, info->groups};
    rc = info->groups ? rx__emit(&e, p.stack[0]) : RX_OOM;
  }
  if (p.oom) rc = RX_OOM;
  rx__free_nodes(&p);
  if (rc) tpl_regex_info_free(info);
  return rc;
}

void tpl_regex_info_free(tpl_regex_info_t *info) {
  buf_free(&info->names);
  free(info->groups);
  info->groups = NULL;
}

int tpl_regex_callout(const char *text, size_t cur, const size_t *ov, unsigned top) {
  char *end;
  unsigned long mark = strtoul(text, &end, 10), loop = *end == ',' ? strtoul(end + 1, NULL, 10) : 0;
  if (mark >= top || ov[2 * mark] != cur) return 0; /* the iteration moved on */
  if (loop < top && ov[2 * loop] == cur) return 0; /* the first iteration */
  return 1;
}
