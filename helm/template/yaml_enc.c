/* sigs.k8s.io/yaml.Marshal for template values, byte for byte: the value
 * goes through Go's JSON encoding (so numbers become JSON text, invalid
 * UTF-8 becomes U+FFFD and NaN is an error), yaml.v2 decodes that (numbers
 * resolve to int, uint64 or float64) and yaml.v2's emitter (a port of
 * libyaml's) writes it: keys in yaml.v2's natural order, strings quoted when
 * they would read back as another type, literal block scalars, 80-column
 * folding. The emitter below follows emitterc.go function by function. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "base/worker.h"
#include "helm/template/sprig_internal.h"
#include "helm/template/unicode.h"

int sprig__json_float(buf_t *o, double f);

enum { ST_PLAIN = 1, ST_SINGLE, ST_DOUBLE, ST_LITERAL };

struct ykey_s;
#define YE_SCRATCH_DEPTH 64
typedef struct {
  struct ykey_s *ks;
  size_t kcap;
  int32_t *runes;
  size_t rcap;
  /* the last map emitted at this depth: its keys (interned keys of values maps share pointers) and
   * their sorted order, reused for the next map with the very same keys (list items alike) */
  const char **lk;
  size_t *lkl, *perm;
  size_t ln, lcap;
} ye_scratch_t;

typedef struct {
  buf_t *out;
  buf_t *err;
  int rc;
  int column, indent;
  int *indents;
  size_t nind, capind;
  bool whitespace, indention, open_ended;
  int flow_level;
  bool root_ctx, seq_ctx, map_ctx, simple_key_ctx;
  int best_width, best_indent;
  /* analysis of the current scalar */
  const unsigned char *v;
  size_t n;
  bool multiline, flow_plain, block_plain, single_ok, block_ok;
  int style;
  bool v3; /* yaml.v3's Encoder (toYamlPretty): no JSON step, no folding, indented sequences, tabs quoted */
  ye_scratch_t scratch[YE_SCRATCH_DEPTH]; /* emit_map's key arrays, per nesting depth */
  worker_t *helper; /* may take half of a big sequence (ypart_*) */
  bool part;        /* emitting that half on the helper */
  size_t max;       /* the output may not grow past this (rc TPL_ELIMIT); 0: no limit */
  tpl_call_t *call; /* whose budget is looked at every few thousand nodes (never on the helper) */
  unsigned tick;
} ye_t;

#define YPART_BAIL 2 /* the helper's half holds something it leaves to the main thread */

static unsigned char at(const ye_t *e, size_t i) { return i < e->n ? e->v[i] : 0; }

static int width_of(unsigned char b) {
  if ((b & 0x80) == 0) return 1;
  if ((b & 0xE0) == 0xC0) return 2;
  if ((b & 0xF0) == 0xE0) return 3;
  if ((b & 0xF8) == 0xF0) return 4;
  return 1;
}

static bool is_space(const ye_t *e, size_t i) { return at(e, i) == ' '; }
static bool is_break(const ye_t *e, size_t i) {
  unsigned char b = at(e, i);
  return b == '\r' || b == '\n' || (b == 0xC2 && at(e, i + 1) == 0x85) ||
         (b == 0xE2 && at(e, i + 1) == 0x80 && (at(e, i + 2) == 0xA8 || at(e, i + 2) == 0xA9));
}
static bool is_blank(const ye_t *e, size_t i) { return at(e, i) == ' ' || at(e, i) == '\t'; }
static bool is_blankz(const ye_t *e, size_t i) { return is_blank(e, i) || is_break(e, i) || at(e, i) == 0; }
static bool is_printable(const ye_t *e, size_t i) {
  unsigned char b = at(e, i), b1 = at(e, i + 1), b2 = at(e, i + 2);
  return b == 0x0A || (b >= 0x20 && b <= 0x7E) || (b == 0xC2 && b1 >= 0xA0) || (b > 0xC2 && b < 0xED) ||
         (b == 0xED && b1 < 0xA0) || b == 0xEE ||
         (b == 0xEF && !(b1 == 0xBB && b2 == 0xBF) && !(b1 == 0xBF && (b2 == 0xBE || b2 == 0xBF)));
}
static bool is_bom(const ye_t *e) { return at(e, 0) == 0xEF && at(e, 1) == 0xBB && at(e, 2) == 0xBF; }

static void put(ye_t *e, char c) {
  if (!e->rc && buf_putc(e->out, c)) e->rc = TPL_ENOMEM;
  e->column++;
}
static void put_break(ye_t *e) {
  if (!e->rc && buf_putc(e->out, '\n')) e->rc = TPL_ENOMEM;
  e->column = 0;
  if (e->v3) e->indention = true;
}
static void write1(ye_t *e, size_t *i) {
  int w = width_of(at(e, *i));
  if (*i + (size_t)w > e->n) w = (int)(e->n - *i);
  if (!e->rc && buf_append(e->out, e->v + *i, (size_t)w)) e->rc = TPL_ENOMEM;
  e->column++;
  *i += (size_t)w;
}
static void write_break(ye_t *e, size_t *i) {
  if (at(e, *i) == '\n') {
    put_break(e);
    (*i)++;
  } else {
    write1(e, i);
    e->column = 0;
    if (e->v3) e->indention = true;
  }
}
/* Writes the characters from *i up to the next one that ends a run, in one append: what write1
 * per character would write (a column per character). RUN_PLAIN stops at a space or a break,
 * RUN_SINGLE also at a quote, RUN_LITERAL at a break, RUN_DOUBLE at anything but printable ASCII other than space, '"' and '\\'
 * (the callers' loops handle those characters one at a time). Writes at least one character. */
enum { RUN_PLAIN, RUN_SINGLE, RUN_LITERAL, RUN_DOUBLE };
/* run_stop[mode][b]: an ASCII byte b that ends a run (bytes >= 0x80 are looked at one by one). */
static const unsigned char run_stop[4][128] = {
    [RUN_PLAIN] = {[' '] = 1, ['\n'] = 1, ['\r'] = 1},
    [RUN_SINGLE] = {[' '] = 1, ['\n'] = 1, ['\r'] = 1, ['\''] = 1},
    [RUN_LITERAL] = {['\n'] = 1, ['\r'] = 1},
    [RUN_DOUBLE] = {[0 ... 0x20] = 1, ['"'] = 1, ['\\'] = 1, [0x7F] = 1},
};
/* The end of the stretch of ASCII bytes from k that do not end a run of mode (16 at a time with
 * SSE2, then byte by byte). */
static inline size_t run_ascii_end(const unsigned char *v, size_t k, size_t n, int mode) {
  const unsigned char *stop = run_stop[mode];
#ifdef __SSE2__
  const __m128i sp = _mm_set1_epi8(' '), nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
  const __m128i sq = _mm_set1_epi8('\''), dq = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'), del = _mm_set1_epi8(0x7F);
  const __m128i low = _mm_set1_epi8(0x21);
  for (; k + 16 <= n; k += 16) {
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(v + k)), bad;
    if (mode == RUN_DOUBLE) /* signed: below 0x21 also catches the bytes from 0x80 */
      bad = _mm_or_si128(_mm_or_si128(_mm_cmplt_epi8(x, low), _mm_cmpeq_epi8(x, del)),
                         _mm_or_si128(_mm_cmpeq_epi8(x, dq), _mm_cmpeq_epi8(x, bs)));
    else {
      bad = _mm_or_si128(_mm_cmpeq_epi8(x, nl), _mm_cmpeq_epi8(x, cr));
      if (mode != RUN_LITERAL) bad = _mm_or_si128(bad, _mm_cmpeq_epi8(x, sp));
      if (mode == RUN_SINGLE) bad = _mm_or_si128(bad, _mm_cmpeq_epi8(x, sq));
    }
    if (_mm_movemask_epi8(bad) | _mm_movemask_epi8(x)) break;
  }
#endif
  while (k < n && v[k] < 0x80 && !stop[v[k]]) k++;
  return k;
}

static void write_run(ye_t *e, size_t *i, int mode) {
  size_t j = *i;
  int cols = 0;
  const unsigned char *v = e->v, *stop = run_stop[mode];
  do {
    unsigned char b = v[j];
    if (b < 0x80) {
      if (j > *i && stop[b]) break;
      j++;
      cols++;
      /* the ASCII stretch that follows */
      size_t k = run_ascii_end(v, j, e->n, mode);
      cols += (int)(k - j);
      j = k;
      continue;
    }
    if (j > *i && (mode == RUN_DOUBLE || ((b == 0xC2 || b == 0xE2) && is_break(e, j)))) break;
    size_t w = (size_t)width_of(b);
    if (j + w > e->n) w = e->n - j;
    j += w;
    cols++;
  } while (j < e->n);
  if (!e->rc && buf_append(e->out, e->v + *i, j - *i)) e->rc = TPL_ENOMEM;
  e->column += cols;
  *i = j;
}

static inline void write_all(ye_t *e, const char *s) {
  size_t n = strlen(s);
  if (!e->rc && buf_append(e->out, s, n)) e->rc = TPL_ENOMEM;
  e->column += (int)n;
}

static void push_indent(ye_t *e) {
  if (e->nind == e->capind) {
    size_t nc = e->capind ? e->capind * 2 : 16;
    int *ni = realloc(e->indents, nc * sizeof(int));
    if (!ni) {
      e->rc = TPL_ENOMEM;
      return;
    }
    e->indents = ni;
    e->capind = nc;
  }
  e->indents[e->nind++] = e->indent;
}
static void pop_indent(ye_t *e) {
  if (e->nind) e->indent = e->indents[--e->nind];
}

static void increase_indent(ye_t *e, bool flow, bool indentless) {
  push_indent(e);
  if (e->indent < 0) e->indent = flow ? e->best_indent : 0;
  else if (!indentless) e->indent += e->best_indent;
}

static void write_indent(ye_t *e) {
  int indent = e->indent < 0 ? 0 : e->indent;
  if (!e->indention || e->column > indent || (e->column == indent && !e->whitespace)) put_break(e);
  if (e->column < indent) {
    size_t k = (size_t)(indent - e->column);
    if (!e->rc && buf_reserve(e->out, k)) e->rc = TPL_ENOMEM;
    if (!e->rc) {
      memset(e->out->data + e->out->len, ' ', k);
      e->out->len += k;
      e->out->data[e->out->len] = 0;
    }
    e->column = indent;
  }
  e->whitespace = true;
  e->indention = true;
}

static inline void write_indicator(ye_t *e, const char *ind, bool need_ws, bool is_ws, bool is_indention) {
  if (need_ws && !e->whitespace) put(e, ' ');
  write_all(e, ind);
  e->whitespace = is_ws;
  e->indention = e->indention && is_indention;
  e->open_ended = false;
}

/* The end of the run of printable ASCII bytes from i (16 at a time with SSE2: a signed compare
 * below 0x20 also catches the bytes from 0x80). */
static inline size_t printable_ascii_run(const unsigned char *p, size_t i, size_t n) {
#ifdef __SSE2__
  const __m128i sp = _mm_set1_epi8(0x20), del = _mm_set1_epi8(0x7F);
  for (; i + 16 <= n; i += 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
    if (_mm_movemask_epi8(_mm_or_si128(_mm_cmplt_epi8(v, sp), _mm_cmpeq_epi8(v, del)))) break;
  }
#endif
  while (i < n && p[i] >= 0x20 && p[i] < 0x7F) i++;
  return i;
}

/* A byte that the loop of analyze only notes as "not a space or a break" when it is not the first:
 * printable ASCII but the space and the indicators it looks for, and those too once what they
 * would tell is known (flow_ind: a flow indicator was seen; both: any indicator). */
static const unsigned char analyze_ind[128] = {[','] = 1, ['?'] = 1, ['['] = 1, [']'] = 1, ['{'] = 1, ['}'] = 1,
                                               [':'] = 2, ['#'] = 2};
/* The mask of analyze_ind for is_plain_byte: what is still to be learnt. */
static inline unsigned analyze_mask(bool flow_ind, bool block_ind) { return flow_ind ? (block_ind ? 0 : 2) : 3; }
static inline bool is_plain_byte(unsigned char c, unsigned mask) {
  return (unsigned)(c - 0x21) < 0x5E && !(analyze_ind[c] & mask);
}
/* The end of the run of printable ASCII bytes and line feeds from i (16 at a time with SSE2). */
static inline size_t printable_nl_run(const unsigned char *p, size_t i, size_t n) {
#ifdef __SSE2__
  const __m128i sp = _mm_set1_epi8(0x20), nl = _mm_set1_epi8('\n'), del = _mm_set1_epi8(0x7F);
  for (; i + 16 <= n; i += 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
    __m128i bad = _mm_or_si128(_mm_andnot_si128(_mm_cmpeq_epi8(v, nl), _mm_cmplt_epi8(v, sp)), _mm_cmpeq_epi8(v, del));
    if (_mm_movemask_epi8(bad)) break;
  }
#endif
  while (i < n && ((p[i] >= 0x20 && p[i] < 0x7F) || p[i] == '\n')) i++;
  return i;
}

/* The end of the stretch of is_plain_byte bytes from j (16 at a time with SSE2). */
static inline size_t plain_bytes_end(const unsigned char *s, size_t j, size_t n, unsigned mask) {
#ifdef __SSE2__
  const __m128i low = _mm_set1_epi8(0x21), del = _mm_set1_epi8(0x7F);
  static const char flow[6] = {',', '?', '[', ']', '{', '}'};
  for (; j + 16 <= n; j += 16) {
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + j));
    __m128i bad = _mm_or_si128(_mm_cmplt_epi8(x, low), _mm_cmpeq_epi8(x, del)); /* signed: also >= 0x80 */
    if (mask & 1)
      for (int k = 0; k < 6; k++) bad = _mm_or_si128(bad, _mm_cmpeq_epi8(x, _mm_set1_epi8(flow[k])));
    if (mask & 2)
      bad = _mm_or_si128(bad, _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(':')), _mm_cmpeq_epi8(x, _mm_set1_epi8('#'))));
    if (_mm_movemask_epi8(bad)) break;
  }
#endif
  while (j < n && is_plain_byte(s[j], mask)) j++;
  return j;
}

/* The end of the run of ASCII bytes other than DEL from i (16 at a time with SSE2). */
static inline size_t ascii_run(const unsigned char *p, size_t i, size_t n) {
#ifdef __SSE2__
  const __m128i del = _mm_set1_epi8(0x7F);
  for (; i + 16 <= n; i += 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
    if (_mm_movemask_epi8(v) | _mm_movemask_epi8(_mm_cmpeq_epi8(v, del))) break;
  }
#endif
  while (i < n && p[i] < 0x7F) i++;
  return i;
}

/* A character of a word (analyze's fast case) ([A-Za-z0-9_./], '-' after the first). */
static inline bool is_word_char(unsigned char c, size_t at) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '/' || (c == '-' && at > 0);
}

static void analyze(ye_t *e, const char *s, size_t n) {
  e->v = (const unsigned char *)s;
  e->n = n;
  bool block_ind = false, flow_ind = false, line_breaks = false, special = false;
  bool leading_space = false, leading_break = false, trailing_space = false, trailing_break = false;
  bool break_space = false, space_break = false, prev_space = false, prev_break = false, tabs = false;
  if (n == 0) {
    e->multiline = false;
    e->flow_plain = false;
    e->block_plain = true;
    e->single_ok = true;
    e->block_ok = false;
    return;
  }
  if (n >= 3 && ((s[0] == '-' && s[1] == '-' && s[2] == '-') || (s[0] == '.' && s[1] == '.' && s[2] == '.'))) {
    block_ind = true;
    flow_ind = true;
  }
  /* Most keys and values are words ([A-Za-z0-9_./], '-' after the first byte): no indicator, space,
   * break or special character, so every style is allowed; the loop below would find just that. */
  size_t k = 0;
  while (k < n && is_word_char((unsigned char)s[k], k)) k++;
  if (k == n && !block_ind) {
    e->multiline = false;
    e->flow_plain = e->block_plain = e->single_ok = e->block_ok = true;
    return;
  }
  bool preceded_ws = true;
  for (size_t i = 0, w; i < n; i += w) {
    unsigned mask = analyze_mask(flow_ind, block_ind);
    size_t j;
    if (i > 0 && !mask && (j = printable_nl_run((const unsigned char *)s, i, n)) > i) {
      /* Every indicator is known: in a run of printable ASCII and line feeds only the line feeds,
       * the spaces next to them and the run's ends still tell something. */
      if (s[i] == ' ' && prev_break) break_space = true;
      for (const char *q = memchr(s + i, '\n', j - i); q; q = memchr(q + 1, '\n', (size_t)(s + j - q - 1))) {
        size_t at = (size_t)(q - s);
        line_breaks = true;
        if (at > i ? s[at - 1] == ' ' : prev_space) space_break = true;
        if (at + 1 < j && s[at + 1] == ' ') break_space = true;
      }
      prev_space = s[j - 1] == ' ';
      prev_break = s[j - 1] == '\n';
      preceded_ws = prev_space || prev_break;
      if (j == n) trailing_space = prev_space, trailing_break = prev_break;
      w = j - i;
      continue;
    }
    if (i > 0 && is_plain_byte((unsigned char)s[i], mask)) {
      /* a stretch of such bytes changes nothing but the state of the last one */
      j = plain_bytes_end((const unsigned char *)s, i + 1, n, mask);
      w = j - i;
      prev_space = prev_break = preceded_ws = false;
      continue;
    }
    if (i > 0 && s[i] == ' ') { /* what the general case below finds for spaces after the first byte */
      j = i + 1;
      while (j < n && s[j] == ' ') j++;
      if (j == n) trailing_space = true;
      if (prev_break) break_space = true;
      prev_space = preceded_ws = true;
      prev_break = false;
      w = j - i;
      continue;
    }
    if (i > 0 && s[i] == '\n') { /* and for a line feed */
      line_breaks = true;
      if (i + 1 == n) trailing_break = true;
      if (prev_space) space_break = true;
      prev_space = false;
      prev_break = preceded_ws = true;
      w = 1;
      continue;
    }
    w = (size_t)width_of(at(e, i));
    bool followed_ws = i + w >= n || is_blank(e, i + w);
    unsigned char ch = at(e, i);
    if (i == 0) {
      switch (ch) {
      case '#': case ',': case '[': case ']': case '{': case '}': case '&': case '*': case '!': case '|':
      case '>': case '\'': case '"': case '%': case '@': case '`':
        flow_ind = true;
        block_ind = true;
        break;
      case '?': case ':':
        flow_ind = true;
        if (followed_ws) block_ind = true;
        break;
      case '-':
        if (followed_ws) {
          flow_ind = true;
          block_ind = true;
        }
        break;
      }
    } else {
      switch (ch) {
      case ',': case '?': case '[': case ']': case '{': case '}': flow_ind = true; break;
      case ':':
        flow_ind = true;
        if (followed_ws) block_ind = true;
        break;
      case '#':
        if (preceded_ws) {
          flow_ind = true;
          block_ind = true;
        }
        break;
      }
    }
    if (e->v3 && ch == '\t') tabs = true;
    else if (!is_printable(e, i)) special = true;
    if (is_space(e, i)) {
      if (i == 0) leading_space = true;
      if (i + w == n) trailing_space = true;
      if (prev_break) break_space = true;
      prev_space = true;
      prev_break = false;
    } else if (is_break(e, i)) {
      line_breaks = true;
      if (i == 0) leading_break = true;
      if (i + w == n) trailing_break = true;
      if (prev_space) space_break = true;
      prev_space = false;
      prev_break = true;
    } else {
      prev_space = false;
      prev_break = false;
    }
    preceded_ws = is_blankz(e, i);
  }
  e->multiline = line_breaks;
  e->flow_plain = e->block_plain = e->single_ok = e->block_ok = true;
  if (leading_space || leading_break || trailing_space || trailing_break) e->flow_plain = e->block_plain = false;
  if (trailing_space) e->block_ok = false;
  if (break_space) e->flow_plain = e->block_plain = e->single_ok = false;
  if (space_break || tabs || special) e->flow_plain = e->block_plain = e->single_ok = false;
  if (space_break || special) e->block_ok = false;
  if (line_breaks) e->flow_plain = e->block_plain = false;
  if (flow_ind) e->flow_plain = false;
  if (block_ind) e->block_plain = false;
}

static void select_style(ye_t *e, int style) {
  if (e->simple_key_ctx && e->multiline) style = ST_DOUBLE;
  if (style == ST_PLAIN) {
    if ((e->flow_level > 0 && !e->flow_plain) || (e->flow_level == 0 && !e->block_plain)) style = ST_SINGLE;
    if (e->n == 0 && (e->flow_level > 0 || e->simple_key_ctx)) style = ST_SINGLE;
  }
  if (style == ST_SINGLE && !e->single_ok) style = ST_DOUBLE;
  if (style == ST_LITERAL && (!e->block_ok || e->flow_level > 0 || e->simple_key_ctx)) style = ST_DOUBLE;
  e->style = style;
}

static void write_plain(ye_t *e, bool allow_breaks) {
  if ((e->n > 0 || !e->v3) && !e->whitespace) put(e, ' ');
  bool spaces = false, breaks = false;
  for (size_t i = 0; i < e->n && !e->rc;) {
    if (is_space(e, i)) {
      if (allow_breaks && !spaces && e->column > e->best_width && !is_space(e, i + 1)) {
        write_indent(e);
        i += (size_t)width_of(at(e, i));
      } else {
        write1(e, &i);
      }
      spaces = true;
    } else if (is_break(e, i)) {
      if (!breaks && at(e, i) == '\n') put_break(e);
      write_break(e, &i);
      e->indention = true;
      breaks = true;
    } else {
      if (breaks) write_indent(e);
      write_run(e, &i, RUN_PLAIN);
      e->indention = false;
      spaces = false;
      breaks = false;
    }
  }
  if (e->n > 0 || !e->v3) e->whitespace = false;
  e->indention = false;
  if (e->root_ctx) e->open_ended = true;
}

static void write_single(ye_t *e, bool allow_breaks) {
  write_indicator(e, "'", true, false, false);
  bool spaces = false, breaks = false;
  for (size_t i = 0; i < e->n && !e->rc;) {
    if (is_space(e, i)) {
      if (allow_breaks && !spaces && e->column > e->best_width && i > 0 && i < e->n - 1 && !is_space(e, i + 1)) {
        write_indent(e);
        i += (size_t)width_of(at(e, i));
      } else {
        write1(e, &i);
      }
      spaces = true;
    } else if (is_break(e, i)) {
      if (!breaks && at(e, i) == '\n') put_break(e);
      write_break(e, &i);
      e->indention = true;
      breaks = true;
    } else {
      if (breaks) write_indent(e);
      if (at(e, i) == '\'') {
        put(e, '\'');
        write1(e, &i);
      } else {
        write_run(e, &i, RUN_SINGLE);
      }
      e->indention = false;
      spaces = false;
      breaks = false;
    }
  }
  write_indicator(e, "'", false, false, false);
  e->whitespace = false;
  e->indention = false;
}

static void write_double(ye_t *e, bool allow_breaks) {
  static const char hx[] = "0123456789ABCDEF";
  bool spaces = false;
  write_indicator(e, "\"", true, false, false);
  for (size_t i = 0; i < e->n && !e->rc;) {
    unsigned char ch = at(e, i);
    if (!is_printable(e, i) || is_bom(e) || is_break(e, i) || ch == '"' || ch == '\\') {
      int w = 1;
      int32_t v = ch & 0x7F;
      if ((ch & 0x80) == 0) w = 1, v = ch & 0x7F;
      else if ((ch & 0xE0) == 0xC0) w = 2, v = ch & 0x1F;
      else if ((ch & 0xF0) == 0xE0) w = 3, v = ch & 0x0F;
      else if ((ch & 0xF8) == 0xF0) w = 4, v = ch & 0x07;
      for (int k = 1; k < w; k++) v = (v << 6) + (at(e, i + (size_t)k) & 0x3F);
      i += (size_t)w;
      put(e, '\\');
      switch (v) {
      case 0x00: put(e, '0'); break;
      case 0x07: put(e, 'a'); break;
      case 0x08: put(e, 'b'); break;
      case 0x09: put(e, 't'); break;
      case 0x0A: put(e, 'n'); break;
      case 0x0B: put(e, 'v'); break;
      case 0x0C: put(e, 'f'); break;
      case 0x0D: put(e, 'r'); break;
      case 0x1B: put(e, 'e'); break;
      case 0x22: put(e, '"'); break;
      case 0x5C: put(e, '\\'); break;
      case 0x85: put(e, 'N'); break;
      case 0xA0: put(e, '_'); break;
      case 0x2028: put(e, 'L'); break;
      case 0x2029: put(e, 'P'); break;
      default: {
        int digits;
        if (v <= 0xFF) put(e, 'x'), digits = 2;
        else if (v <= 0xFFFF) put(e, 'u'), digits = 4;
        else put(e, 'U'), digits = 8;
        for (int k = (digits - 1) * 4; k >= 0; k -= 4) put(e, hx[(v >> k) & 0x0F]);
      }
      }
      spaces = false;
    } else if (is_space(e, i)) {
      if (allow_breaks && !spaces && e->column > e->best_width && i > 0 && i < e->n - 1) {
        write_indent(e);
        if (is_space(e, i + 1)) put(e, '\\');
        i += (size_t)width_of(at(e, i));
      } else {
        write1(e, &i);
      }
      spaces = true;
    } else {
      if (ch < 0x80 && !is_bom(e)) write_run(e, &i, RUN_DOUBLE);
      else write1(e, &i);
      spaces = false;
    }
  }
  write_indicator(e, "\"", false, false, false);
  e->whitespace = false;
  e->indention = false;
}

static void write_block_hints(ye_t *e) {
  if (is_space(e, 0) || is_break(e, 0)) {
    char h[2] = {(char)('0' + e->best_indent), 0};
    write_indicator(e, h, false, false, false);
  }
  e->open_ended = false;
  char chomp = 0;
  if (e->n == 0) {
    chomp = '-';
  } else {
    size_t i = e->n - 1;
    while (i > 0 && (e->v[i] & 0xC0) == 0x80) i--;
    if (!is_break(e, i)) {
      chomp = '-';
    } else if (i == 0) {
      chomp = '+';
      e->open_ended = true;
    } else {
      i--;
      while (i > 0 && (e->v[i] & 0xC0) == 0x80) i--;
      if (is_break(e, i)) {
        chomp = '+';
        e->open_ended = true;
      }
    }
  }
  if (chomp) {
    char h[2] = {chomp, 0};
    write_indicator(e, h, false, false, false);
  }
}

static void write_literal(ye_t *e) {
  write_indicator(e, "|", true, false, false);
  write_block_hints(e);
  put_break(e);
  e->indention = true;
  e->whitespace = true;
  bool breaks = true;
  for (size_t i = 0; i < e->n && !e->rc;) {
    if (is_break(e, i)) {
      write_break(e, &i);
      e->indention = true;
      breaks = true;
    } else {
      if (breaks) write_indent(e);
      write_run(e, &i, RUN_LITERAL);
      e->indention = false;
      breaks = false;
    }
  }
}

static void set_ctx(ye_t *e, bool root, bool seq, bool map, bool simple) {
  e->root_ctx = root;
  e->seq_ctx = seq;
  e->map_ctx = map;
  e->simple_key_ctx = simple;
}

/* Emits an analysed scalar with the requested style. */
static void emit_scalar(ye_t *e, int style) {
  select_style(e, style);
  increase_indent(e, true, false);
  switch (e->style) {
  case ST_PLAIN: write_plain(e, !e->simple_key_ctx); break;
  case ST_SINGLE: write_single(e, !e->simple_key_ctx); break;
  case ST_DOUBLE: write_double(e, !e->simple_key_ctx); break;
  case ST_LITERAL: write_literal(e); break;
  }
  pop_indent(e);
}

/* ---- yaml.v2's resolve(): would this plain text read back as a non-string? ---- */

static bool all_digits(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] < '0' || s[i] > '9') return false;
  return n > 0;
}

/* getnum(s, false): one or two digits. Returns digits consumed (0: error). */
static size_t getnum(const char *s, size_t n, int *v) {
  if (n < 1 || s[0] < '0' || s[0] > '9') return 0;
  if (n < 2 || s[1] < '0' || s[1] > '9') {
    *v = s[0] - '0';
    return 1;
  }
  *v = (s[0] - '0') * 10 + (s[1] - '0');
  return 2;
}

static int days_in(int m, int y) {
  static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) return 29;
  return d[m - 1];
}

/* time.Parse with yaml.v2's allowedTimestampFormats. */
static bool parse_timestamp(const char *s, size_t n) {
  size_t i = 0;
  while (i < n && s[i] >= '0' && s[i] <= '9') i++;
  if (i != 4 || i == n || s[i] != '-') return false;
  int year = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
  for (int fmt = 0; fmt < 4; fmt++) {
    size_t p = 5, k;
    int mon, day, h, mi, sec;
    if (!(k = getnum(s + p, n - p, &mon))) continue;
    p += k;
    if (mon < 1 || mon > 12) continue;
    if (p >= n || s[p] != '-') continue;
    p++;
    if (!(k = getnum(s + p, n - p, &day))) continue;
    p += k;
    if (fmt == 3) {
      if (p != n) continue;
    } else {
      char sep = fmt == 0 ? 'T' : fmt == 1 ? 't' : ' ';
      if (p >= n || s[p] != sep) continue;
      p++;
      if (!(k = getnum(s + p, n - p, &h))) continue;
      p += k;
      if (h >= 24) continue;
      if (p >= n || s[p] != ':') continue;
      p++;
      if (!(k = getnum(s + p, n - p, &mi))) continue;
      p += k;
      if (mi >= 60) continue;
      if (p >= n || s[p] != ':') continue;
      p++;
      if (!(k = getnum(s + p, n - p, &sec))) continue;
      p += k;
      if (sec >= 60) continue;
      if (n - p >= 2 && (s[p] == '.' || s[p] == ',') && s[p + 1] >= '0' && s[p + 1] <= '9') {
        p++;
        while (p < n && s[p] >= '0' && s[p] <= '9') p++;
      }
      if (fmt < 2) {
        if (p < n && s[p] == 'Z') {
          p++;
        } else {
          if (n - p < 6 || s[p + 3] != ':' || (s[p] != '+' && s[p] != '-')) continue;
          if (!all_digits(s + p + 1, 2) || !all_digits(s + p + 4, 2)) continue;
          int hr = (s[p + 1] - '0') * 10 + (s[p + 2] - '0');
          int mm = (s[p + 4] - '0') * 10 + (s[p + 5] - '0');
          if (hr > 24 || mm > 60) continue;
          p += 6;
        }
      }
      if (p != n) continue;
    }
    if (day < 1 || day > days_in(mon, year)) continue;
    return true;
  }
  return false;
}

/* ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$ */
static bool is_base60_float(const char *s, size_t n) {
  if (n == 0) return false;
  char c = s[0];
  if (!(c == '+' || c == '-' || (c >= '0' && c <= '9')) || !memchr(s, ':', n)) return false;
  size_t i = 0;
  if (s[i] == '+' || s[i] == '-') i++;
  if (i >= n || s[i] < '0' || s[i] > '9') return false;
  i++;
  while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '_')) i++;
  int groups = 0;
  while (i < n && s[i] == ':') {
    i++;
    /* [0-5]?[0-9] */
    size_t st = i;
    while (i < n && s[i] >= '0' && s[i] <= '9' && i - st < 2) i++;
    size_t d = i - st;
    if (d == 0) return false;
    if (d == 2 && s[st] > '5') {
      /* regexp backtracks: take one digit, then the next must be ':' or '.' or end. */
      i = st + 1;
    }
    groups++;
  }
  if (!groups) return false;
  if (i < n && s[i] == '.') {
    i++;
    while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '_')) i++;
  }
  return i == n;
}

/* ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static bool yaml_style_float(const char *s, size_t n) {
  size_t i = 0;
  if (i < n && (s[i] == '+' || s[i] == '-')) i++;
  if (i < n && s[i] == '.') {
    i++;
    size_t st = i;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    if (i == st) return false;
  } else {
    size_t st = i;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    if (i == st) return false;
    if (i < n && s[i] == '.') {
      i++;
      while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    }
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    size_t st = i;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    if (i == st) return false;
  }
  return i == n;
}

/* True when yaml.v2 would resolve the plain scalar s to !!str (and it is no base 60 float). */
bool sprig__yaml_plain_is_str(const char *s, size_t n);
bool sprig__yaml_plain_is_str(const char *s, size_t n) {
  static const char *const special[] = {
      "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", "n", "N", "no", "No", "NO",
      "false", "False", "FALSE", "off", "Off", "OFF", "", "~", "null", "Null", "NULL", ".nan", ".NaN", ".NAN",
      ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", "<<"};
  char c = n ? s[0] : 0;
  char hint;
  if (n == 0) hint = 'N';
  else if (c == '+' || c == '-') hint = 'S';
  else if (c >= '0' && c <= '9') hint = 'D';
  else if (c == 'y' || c == 'Y' || c == 'n' || c == 'N' || c == 't' || c == 'T' || c == 'f' || c == 'F' || c == 'o' ||
           c == 'O' || c == '~' || c == 0)
    hint = 'M';
  else if (c == '.') hint = '.';
  else if (c == '<') hint = 'M'; /* "<<" is in the map; resolveTable has no hint for '<' but the map is consulted... */
  else hint = 0;
  if (c == '<') hint = 0; /* resolveTable['<'] is 0: "<<" stays a string when marshalled */
  if (hint) {
    if (n <= 6)
      for (size_t k = 0; k < sizeof special / sizeof special[0]; k++)
        if (special[k][0] == c && strlen(special[k]) == n && memcmp(special[k], s, n) == 0) return false;
    if (hint == '.') {
      double f;
      if (sprig__parse_float(s, n, &f) == 0) return false;
    } else if (hint == 'D' || hint == 'S') {
      if (parse_timestamp(s, n)) return false;
      char small[64] = {0};
      char *plain = n < sizeof small ? small : malloc(n + 1);
      if (!plain) return true;
      size_t m = 0;
      for (size_t i = 0; i < n; i++)
        if (s[i] != '_') plain[m++] = s[i];
      int64_t iv;
      uint64_t uv;
      double f;
      bool nonstr = false;
      if (sprig__parse_int(plain, m, 0, &iv) == 0 || sprig__parse_uint(plain, m, 0, &uv) == 0) nonstr = true;
      else if (yaml_style_float(plain, m) && sprig__parse_float(plain, m, &f) == 0) nonstr = true;
      else if (m > 2 && plain[0] == '0' && plain[1] == 'b') {
        if (sprig__parse_int(plain + 2, m - 2, 2, &iv) == 0 || sprig__parse_uint(plain + 2, m - 2, 2, &uv) == 0)
          nonstr = true;
      } else if (m > 3 && plain[0] == '-' && plain[1] == '0' && plain[2] == 'b') {
        plain[2] = '-';
        if (sprig__parse_int(plain + 2, m - 2, 2, &iv) == 0) nonstr = true;
      }
      if (plain != small) free(plain);
      if (nonstr) return false;
    }
  }
  return !is_base60_float(s, n);
}

/* ---- yaml.v2's key order ---- */

/* unicode.IsLetter, from the core's Go unicode tables. */
static bool is_letter(int32_t r) { return tpl_unicode_is_letter(r); }
static bool is_digit(int32_t r) { return tpl_unicode_is_digit(r); }

typedef struct {
  int32_t *r;
  size_t n;
} runes_t;

/* yaml.v2's keyList.Less; v3: yaml.v3's, which after a common run ending in a
 * digit puts letters first ("0b" < "07"). */
static bool key_less(const runes_t *a, const runes_t *b, bool v3) {
  const int32_t *ar = a->r, *br = b->r;
  bool digits = false;
  for (size_t i = 0; i < a->n && i < b->n; i++) {
    if (ar[i] == br[i]) {
      digits = is_digit(ar[i]);
      continue;
    }
    bool al = is_letter(ar[i]), bl = is_letter(br[i]);
    if (al && bl) return ar[i] < br[i];
    if (al || bl) return v3 && digits ? al : bl;
    int64_t an = 0, bn = 0;
    size_t ai, bi;
    if (ar[i] == '0' || br[i] == '0') {
      for (size_t j = i; j-- > 0 && is_digit(ar[j]);) {
        if (ar[j] != '0') {
          an = 1;
          bn = 1;
          break;
        }
      }
    }
    for (ai = i; ai < a->n && is_digit(ar[ai]); ai++) an = an * 10 + (ar[ai] - '0');
    for (bi = i; bi < b->n && is_digit(br[bi]); bi++) bn = bn * 10 + (br[bi] - '0');
    if (an != bn) return an < bn;
    if (ai != bi) return ai < bi;
    return ar[i] < br[i];
  }
  return a->n < b->n;
}

typedef struct ykey_s {
  runes_t k;
  const char *key; /* sanitized UTF-8 */
  size_t klen;
  const tpl_value_t *val;
} ykey_t;

static void sort_keys(ykey_t *ks, size_t n, ykey_t *tmp, bool v3) {
  if (n <= 12) {
    for (size_t i = 1; i < n; i++)
      for (size_t j = i; j > 0 && key_less(&ks[j].k, &ks[j - 1].k, v3); j--) {
        ykey_t t = ks[j];
        ks[j] = ks[j - 1];
        ks[j - 1] = t;
      }
    return;
  }
  size_t h = n / 2;
  sort_keys(ks, h, tmp, v3);
  sort_keys(ks + h, n - h, tmp, v3);
  size_t i = 0, j = h, o = 0;
  while (i < h && j < n) tmp[o++] = key_less(&ks[j].k, &ks[i].k, v3) ? ks[j++] : ks[i++];
  while (i < h) tmp[o++] = ks[i++];
  while (j < n) tmp[o++] = ks[j++];
  memcpy(ks, tmp, n * sizeof(*ks));
}

/* ---- the value walk ---- */

/* Copies s replacing invalid UTF-8 by U+FFFD (what the JSON step does). */
static int sanitize(buf_t *b, const char *s, size_t n) {
  for (size_t i = 0; i < n;) {
    int32_t r;
    size_t w = tpl__utf8_decode(s + i, n - i, &r);
    if (r == 0xFFFD && w == 1) {
      if (buf_puts(b, "\xEF\xBF\xBD")) return TPL_ENOMEM;
    } else if (buf_append(b, s + i, w)) {
      return TPL_ENOMEM;
    }
    i += w;
  }
  return 0;
}

static bool valid_utf8(const char *s, size_t n) {
  for (size_t i = 0; i < n;) {
    if ((unsigned char)s[i] < 0x80) {
      i++;
      continue;
    }
    int32_t r;
    size_t w = tpl__utf8_decode(s + i, n - i, &r);
    if (r == 0xFFFD && w == 1) return false;
    i += w;
  }
  return true;
}

/* What yaml.v2's reader and scanner make of the JSON string literal json.Marshal wrote for s
 * (valid UTF-8): raw DEL, C1 controls (but NEL) and U+FFFE/U+FFFF are "control characters",
 * and a raw NEL is a line break that the double-quoted scalar scanner folds with the spaces
 * around it. 0, 1 (out holds the changed text) or -1 (control character). */
static int json_yaml_roundtrip(const char *s, size_t n, buf_t *out) {
  bool nel = false;
  for (size_t i = 0; i < n;) {
    int32_t r;
    size_t w = tpl__utf8_decode(s + i, n - i, &r);
    if (r == 0x7F || (r >= 0x80 && r <= 0x9F && r != 0x85) || r == 0xFFFE || r == 0xFFFF) return -1;
    if (r == 0x85) nel = true;
    i += w;
  }
  if (!nel) return 0;
  buf_t ws = BUF_INIT, trailing = BUF_INIT;
  size_t i = 0;
  for (;;) {
    while (i < n && s[i] != ' ' && !((unsigned char)s[i] == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] == 0x85))
      buf_putc(out, s[i++]);
    if (i >= n) break;
    bool leading_blanks = false;
    buf_reset(&ws);
    buf_reset(&trailing);
    while (i < n && (s[i] == ' ' || ((unsigned char)s[i] == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] == 0x85))) {
      if (s[i] == ' ') {
        if (!leading_blanks) buf_putc(&ws, ' ');
        i++;
      } else {
        if (!leading_blanks) {
          buf_reset(&ws);
          leading_blanks = true;
        } else {
          buf_putc(&trailing, '\n');
        }
        i += 2;
      }
    }
    if (leading_blanks) {
      if (trailing.len == 0) buf_putc(out, ' ');
      else buf_append(out, trailing.data, trailing.len);
    } else {
      buf_append(out, ws.data ? ws.data : "", ws.len);
    }
  }
  buf_free(&ws);
  buf_free(&trailing);
  if (!out->data) buf_puts(out, "");
  return 1;
}

/* yaml.v3's encoder.stringv: invalid UTF-8 as !!binary base64 (70-column
 * lines), multi-line as literal, plain when resolve() says !!str and it is no
 * base 60 float or YAML 1.1 bool (the plain check is yaml.v2's, which agrees
 * with v3's for these), else double-quoted. */
static void emit_str_v3(ye_t *e, const char *s, size_t n) {
  buf_t b64 = BUF_INIT;
  bool binary = !valid_utf8(s, n);
  if (binary) {
    static const char tb[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    buf_t enc = BUF_INIT;
    for (size_t i = 0; i < n; i += 3) {
      uint32_t v = (uint32_t)(unsigned char)s[i] << 16;
      if (i + 1 < n) v |= (uint32_t)(unsigned char)s[i + 1] << 8;
      if (i + 2 < n) v |= (unsigned char)s[i + 2];
      char q[4] = {tb[v >> 18], tb[(v >> 12) & 63], i + 1 < n ? tb[(v >> 6) & 63] : '=', i + 2 < n ? tb[v & 63] : '='};
      buf_append(&enc, q, 4);
    }
    bool lines = enc.len / 70 + 1 > 1;
    for (size_t i = 0; i < enc.len; i += 70) {
      buf_append(&b64, enc.data + i, enc.len - i < 70 ? enc.len - i : 70);
      if (lines) buf_putc(&b64, '\n');
    }
    buf_free(&enc);
    if (!b64.data) buf_puts(&b64, "");
    s = b64.data;
    n = b64.len;
  }
  bool plain_ok = binary || (sprig__yaml_plain_is_str(s, n) && !(n == 1 && strchr("yYnN", s[0])));
  int style = memchr(s, '\n', n) ? ST_LITERAL : plain_ok ? ST_PLAIN : ST_DOUBLE;
  analyze(e, s, n);
  if (binary) {
    /* process_tag: the "!!" handle and "binary" suffix, then the scalar. */
    select_style(e, style);
    write_indicator(e, "!!binary", true, false, false);
    increase_indent(e, true, false);
    if (e->style == ST_LITERAL) write_literal(e);
    else if (e->style == ST_DOUBLE) write_double(e, !e->simple_key_ctx);
    else if (e->style == ST_SINGLE) write_single(e, !e->simple_key_ctx);
    else write_plain(e, !e->simple_key_ctx);
    pop_indent(e);
  } else {
    emit_scalar(e, style);
  }
  buf_free(&b64);
}

/* emit_scalar(ST_PLAIN) of a word that resolves to a string (analyze: every style allowed, one
 * line; write_plain: no space or break to fold at): a space if needed, then the word. */
static void emit_word(ye_t *e, const char *s, size_t n) {
  if (!e->whitespace) put(e, ' ');
  if (!e->rc && buf_append(e->out, s, n)) e->rc = TPL_ENOMEM;
  e->column += (int)n;
  e->whitespace = false;
  e->indention = false;
  if (e->root_ctx) e->open_ended = true;
}

static void emit_str(ye_t *e, const char *s, size_t n) {
  if (e->v3) {
    emit_str_v3(e, s, n);
    return;
  }
  /* Printable ASCII (most keys and values) is valid UTF-8 that the JSON round trip keeps as it is. */
  size_t pa = 0;
  while (pa < n && is_word_char((unsigned char)s[pa], pa)) pa++;
  bool word = n > 0 && pa == n;
  pa = printable_ascii_run((const unsigned char *)s, pa, n);
  if (pa == n) {
    bool plain = sprig__yaml_plain_is_str(s, n);
    if (word && plain && !(n >= 3 && (!memcmp(s, "---", 3) || !memcmp(s, "...", 3)))) {
      emit_word(e, s, n);
      return;
    }
    analyze(e, s, n);
    emit_scalar(e, plain ? ST_PLAIN : ST_DOUBLE);
    return;
  }
  if (ascii_run((const unsigned char *)s, pa, n) == n) {
    /* ASCII without DEL: valid UTF-8 that the JSON round trip keeps as it is */
    bool plain_ok = sprig__yaml_plain_is_str(s, n);
    analyze(e, s, n);
    emit_scalar(e, memchr(s, '\n', n) ? ST_LITERAL : plain_ok ? ST_PLAIN : ST_DOUBLE);
    return;
  }
  buf_t tmp = BUF_INIT, rt = BUF_INIT;
  if (!valid_utf8(s, n)) {
    if (sanitize(&tmp, s, n)) {
      e->rc = TPL_ENOMEM;
      return;
    }
    s = tmp.data;
    n = tmp.len;
  }
  int k = json_yaml_roundtrip(s, n, &rt);
  if (k < 0) {
    buf_puts(e->err, "yaml: control characters are not allowed");
    e->rc = -1;
    buf_free(&tmp);
    buf_free(&rt);
    return;
  }
  if (k > 0) {
    s = rt.data;
    n = rt.len;
  }
  bool plain_ok = sprig__yaml_plain_is_str(s, n);
  int style = memchr(s, '\n', n) ? ST_LITERAL : plain_ok ? ST_PLAIN : ST_DOUBLE;
  analyze(e, s, n);
  emit_scalar(e, style);
  buf_free(&tmp);
  buf_free(&rt);
}

static void emit_plain_text(ye_t *e, const char *s, size_t n) {
  size_t k = 0;
  while (k < n && is_word_char((unsigned char)s[k], k)) k++;
  if (n > 0 && k == n && !(n >= 3 && (!memcmp(s, "---", 3) || !memcmp(s, "...", 3)))) {
    emit_word(e, s, n);
    return;
  }
  analyze(e, s, n);
  emit_scalar(e, ST_PLAIN);
}

/* A float64 as JSON writes it, then as yaml.v2 reads and writes it back. */
static void emit_number_text(ye_t *e, const char *j, size_t n) {
  int64_t iv;
  uint64_t uv;
  char buf[64];
  if (sprig__parse_int(j, n, 0, &iv) == 0) {
    snprintf(buf, sizeof buf, "%lld", (long long)iv);
    emit_plain_text(e, buf, strlen(buf));
    return;
  }
  if (sprig__parse_uint(j, n, 0, &uv) == 0) {
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)uv);
    emit_plain_text(e, buf, strlen(buf));
    return;
  }
  double f;
  sprig__parse_float(j, n, &f);
  buf_t b = BUF_INIT;
  if (isinf(f)) buf_puts(&b, f > 0 ? ".inf" : "-.inf");
  else tpl_fmt_float(&b, f, 'g', -1);
  emit_plain_text(e, b.data, b.len);
  buf_free(&b);
}

static void emit_node(ye_t *e, const tpl_value_t *v, bool root, bool seq, bool map, bool simple, int depth);

static void ye_fini(ye_t *e) {
  free(e->indents);
  for (int d = 0; d < YE_SCRATCH_DEPTH; d++) {
    free(e->scratch[d].ks);
    free(e->scratch[d].runes);
    free(e->scratch[d].lk);
    free(e->scratch[d].lkl);
    free(e->scratch[d].perm);
  }
}

/* ---- big sequences in two halves ----
 * Between two items of a block sequence the emitter's state is only where the last item ended:
 * the next one starts with write_indent, which breaks the line unless the last item ended at the
 * sequence's indentation (a literal block at the root's). The second half of a big sequence is
 * emitted on the helper thread as if the line had to be broken, into a buffer of its own, while
 * this thread emits the first half; its text is appended when this thread's state would break
 * the line too (and then this thread takes the helper's final state), else this thread emits the
 * second half itself. An error in the first half wins, as when emitting in order; host objects
 * are left to this thread. */
typedef struct {
  ye_t pe;
  buf_t out, err;
  const tpl_list_t *l;
  size_t from;
  int depth;
  long ticket;
} ypart_t;

static void ye_fini(ye_t *e);

static void seq_items(ye_t *e, const tpl_list_t *l, size_t from, size_t to, int depth) {
  for (size_t i = from; i < to && !e->rc; i++) {
    write_indent(e);
    write_indicator(e, "-", true, false, true);
    tpl_value_t it = tpl_list_at(l, i);
    emit_node(e, &it, false, true, false, false, depth + 1);
  }
}

static void ypart_run(void *p) {
  ypart_t *pt = p;
  seq_items(&pt->pe, pt->l, pt->from, pt->l->len, pt->depth);
}

static ypart_t *ypart_start(const ye_t *e, const tpl_list_t *l, size_t from, int depth) {
  ypart_t *pt = calloc(1, sizeof *pt);
  if (!pt) return NULL;
  ye_t *pe = &pt->pe;
  pe->out = &pt->out;
  pe->err = &pt->err;
  pe->best_width = e->best_width;
  pe->best_indent = e->best_indent;
  pe->v3 = e->v3;
  pe->flow_level = e->flow_level;
  pe->indent = e->indent;
  pe->column = (e->indent < 0 ? 0 : e->indent) + 1; /* as after an item: the line is broken */
  pe->whitespace = false;
  pe->indention = false;
  pe->part = true;
  pe->max = e->max;
  pt->l = l;
  pt->from = from;
  pt->depth = depth;
  pt->ticket = worker_post(e->helper, ypart_run, pt);
  if (pt->ticket < 0) {
    free(pt);
    return NULL;
  }
  return pt;
}

static void ypart_join(ye_t *e, ypart_t *pt) {
  worker_wait_for(e->helper, pt->ticket);
  if (!e->rc) {
    int indent = e->indent < 0 ? 0 : e->indent;
    bool brk = !e->indention || e->column > indent || (e->column == indent && !e->whitespace);
    if (pt->pe.rc == YPART_BAIL || !brk) {
      seq_items(e, pt->l, pt->from, pt->l->len, pt->depth);
    } else if (pt->pe.rc) {
      e->rc = pt->pe.rc;
      if (pt->err.len) buf_append(e->err, pt->err.data, pt->err.len);
    } else {
      if (pt->out.len && buf_append(e->out, pt->out.data, pt->out.len)) e->rc = TPL_ENOMEM;
      e->column = pt->pe.column;
      e->whitespace = pt->pe.whitespace;
      e->indention = pt->pe.indention;
      e->open_ended = pt->pe.open_ended;
    }
  }
  ye_fini(&pt->pe);
  buf_free(&pt->out);
  buf_free(&pt->err);
  free(pt);
}

static void emit_seq(ye_t *e, const tpl_list_t *l, int depth) {
  if (l->len == 0) {
    write_indicator(e, "[", true, true, false);
    increase_indent(e, true, false);
    e->flow_level++;
    e->flow_level--;
    pop_indent(e);
    write_indicator(e, "]", false, false, false);
    return;
  }
  increase_indent(e, false, !e->v3 && e->map_ctx && !e->indention);
  ypart_t *pt = e->helper && sprig__split_worth(l) ? ypart_start(e, l, l->len / 2, depth) : NULL;
  if (pt) {
    worker_t *h = e->helper;
    e->helper = NULL; /* one split at a time */
    seq_items(e, l, 0, pt->from, depth);
    e->helper = h;
    ypart_join(e, pt);
  } else {
    seq_items(e, l, 0, l->len, depth);
  }
  pop_indent(e);
}

static void emit_map(ye_t *e, const tpl_map_t *m, int depth) {
  if (m->len == 0) {
    write_indicator(e, "{", true, true, false);
    increase_indent(e, true, false);
    pop_indent(e);
    write_indicator(e, "}", false, false, false);
    return;
  }
  /* Keys as sanitized UTF-8 (valid keys are used in place) and their runes; small maps (most)
   * without heap allocations. */
  size_t total_runes = 0;
  bool clean = true;
  for (size_t i = 0; i < m->len; i++) {
    total_runes += m->ents[i].klen;
    if (clean && !valid_utf8(m->ents[i].key, m->ents[i].klen)) clean = false;
  }
  ykey_t *ks = NULL;
  int32_t *runes = NULL;
  ye_scratch_t *sc = depth < YE_SCRATCH_DEPTH ? &e->scratch[depth] : NULL;
  if (sc) {
    /* maps at one depth are emitted one after another: they share arrays */
    if (sc->kcap < m->len * 2) {
      free(sc->ks);
      sc->kcap = m->len * 2 < 32 ? 32 : m->len * 2;
      sc->ks = malloc(sc->kcap * sizeof(*ks));
      if (!sc->ks) sc->kcap = 0;
    }
    if (sc->rcap < total_runes + 1) {
      free(sc->runes);
      sc->rcap = total_runes + 1 < 512 ? 512 : total_runes + 1;
      sc->runes = malloc(sc->rcap * sizeof(int32_t));
      if (!sc->runes) sc->rcap = 0;
    }
    ks = sc->ks;
    runes = sc->runes;
  } else {
    ks = malloc(m->len * 2 * sizeof(*ks));
    runes = malloc((total_runes + 1) * sizeof(int32_t));
  }
  buf_t store = BUF_INIT;
  size_t *offs = NULL;
  if (!ks || !runes) goto oom;
  memset(ks, 0, m->len * 2 * sizeof(*ks));
  if (!clean) {
    if (!(offs = calloc(m->len * 2 + 1, sizeof(size_t)))) goto oom;
    if (buf_reserve(&store, 0)) goto oom; /* keys all empty: still a buffer to point into */
    for (size_t i = 0; i < m->len; i++) {
      offs[2 * i] = store.len;
      if (sanitize(&store, m->ents[i].key, m->ents[i].klen)) goto oom;
      offs[2 * i + 1] = store.len;
    }
  }
  bool reuse = sc && clean && sc->ln == m->len;
  for (size_t i = 0; reuse && i < m->len; i++)
    reuse = m->ents[i].key == sc->lk[i] && m->ents[i].klen == sc->lkl[i];
  if (reuse) {
    for (size_t k = 0; k < m->len; k++) {
      const tpl_map_entry_t *en = &m->ents[sc->perm[k]];
      ks[k].key = en->key;
      ks[k].klen = en->klen;
      ks[k].val = &en->val;
    }
    goto sorted;
  }
  size_t rp = 0;
  for (size_t i = 0; i < m->len; i++) {
    const char *s = clean ? m->ents[i].key : store.data + offs[2 * i];
    size_t n = clean ? m->ents[i].klen : offs[2 * i + 1] - offs[2 * i];
    ks[i].key = s;
    ks[i].klen = n;
    ks[i].val = &m->ents[i].val;
    ks[i].k.r = runes + rp;
    for (size_t j = 0; j < n;) {
      int32_t r = (unsigned char)s[j];
      if (r < 0x80) j++;
      else j += tpl__utf8_decode(s + j, n - j, &r);
      runes[rp++] = r;
      ks[i].k.n++;
    }
  }
  sort_keys(ks, m->len, ks + m->len, e->v3);
  if (sc) {
    sc->ln = 0;
    if (clean && sc->lcap < m->len) {
      free(sc->lk);
      free(sc->lkl);
      free(sc->perm);
      sc->lk = malloc(m->len * sizeof *sc->lk);
      sc->lkl = malloc(m->len * sizeof *sc->lkl);
      sc->perm = malloc(m->len * sizeof *sc->perm);
      sc->lcap = sc->lk && sc->lkl && sc->perm ? m->len : 0;
    }
    if (clean && sc->lcap >= m->len) {
      for (size_t i = 0; i < m->len; i++) {
        sc->lk[i] = m->ents[i].key;
        sc->lkl[i] = m->ents[i].klen;
        sc->perm[i] = (size_t)((const tpl_map_entry_t *)(const void *)((const char *)ks[i].val -
                                                                       offsetof(tpl_map_entry_t, val)) -
                               m->ents);
      }
      sc->ln = m->len;
    }
  }
sorted:
  /* Duplicate keys after sanitizing: the later one wins in Go's map. */
  increase_indent(e, false, false);
  for (size_t i = 0; i < m->len && !e->rc; i++) {
    if (i + 1 < m->len && ks[i].klen == ks[i + 1].klen && memcmp(ks[i].key, ks[i + 1].key, ks[i].klen) == 0) continue;
    write_indent(e);
    /* check_simple_key: analysed scalar, not multiline, at most 128 bytes (printable ASCII is one
     * line without analysing). */
    bool simple = ks[i].klen <= 128;
    if (simple) {
      size_t pa = 0;
      while (pa < ks[i].klen && (unsigned char)ks[i].key[pa] >= 0x20 && (unsigned char)ks[i].key[pa] < 0x7F) pa++;
      if (pa < ks[i].klen) {
        analyze(e, ks[i].key, ks[i].klen);
        simple = !e->multiline;
      }
    }
    if (simple) {
      set_ctx(e, false, false, true, true);
      emit_str(e, ks[i].key, ks[i].klen);
      write_indicator(e, ":", false, false, false);
      emit_node(e, ks[i].val, false, false, true, false, depth + 1);
    } else {
      write_indicator(e, "?", true, false, true);
      set_ctx(e, false, false, true, false);
      emit_str(e, ks[i].key, ks[i].klen);
      write_indent(e);
      write_indicator(e, ":", true, false, true);
      emit_node(e, ks[i].val, false, false, true, false, depth + 1);
    }
  }
  pop_indent(e);
  goto done;
oom:
  e->rc = TPL_ENOMEM;
done:
  if (!sc) {
    free(runes);
    free(ks);
  }
  free(offs);
  buf_free(&store);
}

static bool is_time_obj(const tpl_value_t *v) {
  buf_t t = BUF_INIT;
  tpl_value_type_name(v, &t);
  bool r = t.len == 9 && memcmp(t.data, "time.Time", 9) == 0;
  buf_free(&t);
  return r;
}

static void emit_node(ye_t *e, const tpl_value_t *v, bool root, bool seq, bool map, bool simple, int depth) {
  if (e->rc) return;
  if ((e->max && e->out->len > e->max) || (e->call && !(++e->tick & 4095) && tpl_call_check(e->call))) {
    e->rc = TPL_ELIMIT;
    return;
  }
  set_ctx(e, root, seq, map, simple);
  if (depth > 10000) {
    buf_puts(e->err, "exceeded max depth of 10000");
    e->rc = -1;
    return;
  }
  char buf[64];
  switch (v->kind) {
  case TPL_INVALID:
  case TPL_NIL: emit_plain_text(e, "null", 4); return;
  case TPL_BOOL: v->u.b ? emit_plain_text(e, "true", 4) : emit_plain_text(e, "false", 5); return;
  case TPL_INT:
  case TPL_INT64:
    snprintf(buf, sizeof buf, "%lld", (long long)v->u.i);
    emit_plain_text(e, buf, strlen(buf));
    return;
  case TPL_UINT64:
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v->u.u);
    emit_plain_text(e, buf, strlen(buf));
    return;
  case TPL_FLOAT64: {
    if (e->v3) { /* strconv.FormatFloat(f, 'g', -1, 64) with .inf/-.inf/.nan */
      buf_t f = BUF_INIT;
      if (isnan(v->u.f)) buf_puts(&f, ".nan");
      else if (isinf(v->u.f)) buf_puts(&f, v->u.f > 0 ? ".inf" : "-.inf");
      else tpl_fmt_float(&f, v->u.f, 'g', -1);
      emit_plain_text(e, f.data, f.len);
      buf_free(&f);
      return;
    }
    double f = v->u.f;
    if (f == (double)(int64_t)f && fabs(f) < 1e15) {
      /* integral: JSON writes its digits (-0 as "-0"), which yaml.v2 reads back as that int */
      size_t k = sizeof buf;
      uint64_t u = (uint64_t)fabs(f);
      do buf[--k] = (char)('0' + u % 10);
      while (u /= 10);
      if (f < 0) buf[--k] = '-';
      emit_plain_text(e, buf + k, sizeof buf - k);
      return;
    }
    if (isfinite(f) && f != trunc(f)) {
      /* not integral: yaml.v2 reads JSON's shortest text back as the same float64 and writes it
       * with FormatFloat 'g' -1 (what emit_number_text would end with) */
      buf_t g = BUF_INIT;
      tpl_fmt_float(&g, f, 'g', -1);
      if (!g.data) e->rc = TPL_ENOMEM;
      else emit_plain_text(e, g.data, g.len);
      buf_free(&g);
      return;
    }
    buf_t j = BUF_INIT;
    if (sprig__json_float(&j, v->u.f)) {
      buf_puts(e->err, "error marshaling into JSON: json: unsupported value: ");
      tpl_fmt_float(e->err, v->u.f, 'g', -1);
      e->rc = -1;
      buf_free(&j);
      return;
    }
    emit_number_text(e, j.data, j.len);
    buf_free(&j);
    return;
  }
  case TPL_STRING: emit_str(e, v->u.s.p, v->u.s.n); return;
  case TPL_LIST:
    if (!v->u.list) emit_plain_text(e, "null", 4);
    else if (!e->v3 && tpl_value_is_bytes(v)) { /* through encoding/json: a base64 string */
      buf_t b = BUF_INIT;
      if (sprig__bytes_b64(v, &b)) e->rc = TPL_ENOMEM;
      else emit_str(e, b.data + 1, b.len - 2); /* without the quotes */
      buf_free(&b);
    } else emit_seq(e, v->u.list, depth);
    return;
  case TPL_MAP:
    if (!v->u.map) emit_plain_text(e, "null", 4);
    else emit_map(e, v->u.map, depth);
    return;
  case TPL_OBJECT: {
    if (e->part) {
      e->rc = YPART_BAIL;
      return;
    }
    buf_t t = BUF_INIT;
    bool num = false;
    if (sprig__object_marshal(v, &t, &num)) {
      if (e->v3 && num) { /* time.Duration: its String() as a string */
        buf_reset(&t);
        tpl_fmt_value(&t, v);
        emit_str(e, t.data ? t.data : "", t.len);
      } else if (e->v3 && is_time_obj(v)) { /* time.Time: RFC 3339 nano, plain */
        emit_plain_text(e, t.data, t.len);
      } else if (num) emit_plain_text(e, t.data ? t.data : "", t.len);
      else emit_str(e, t.data ? t.data : "", t.len);
      buf_free(&t);
      return;
    }
    tpl_map_t empty = {0};
    emit_map(e, &empty, depth);
    return;
  }
  case TPL_FUNC:
    buf_puts(e->err, "error marshaling into JSON: json: unsupported type: ");
    tpl_value_type_name(v, e->err);
    e->rc = -1;
    return;
  }
}

int sprig_yaml_encode_v3(buf_t *out, const tpl_value_t *v, buf_t *err) {
  return sprig__yaml_encode_v3_max(out, v, err, 0, NULL);
}

int sprig__yaml_encode_v3_max(buf_t *out, const tpl_value_t *v, buf_t *err, size_t max, tpl_call_t *call) {
  buf_t scratch = BUF_INIT;
  ye_t e = {0};
  e.max = max;
  e.call = call;
  e.out = out;
  e.err = err ? err : &scratch;
  e.best_width = INT32_MAX;
  e.best_indent = 2;
  e.indent = -1;
  e.whitespace = true;
  e.indention = true;
  e.v3 = true;
  emit_node(&e, v, true, false, false, false, 0);
  if (!e.rc) {
    e.indent = -1;
    write_indent(&e);
  }
  ye_fini(&e);
  buf_free(&scratch);
  return e.rc;
}

/* ---- yaml.v2 reading the JSON text back: stale simple keys ----
 * sigs.k8s.io/yaml.Marshal hands json.Marshal's text (one line, flow style) to
 * yaml.v2. A mapping key there is a "possible simple key" that goes stale when
 * a line break (a raw NEL: json.Marshal escapes \n, \r, U+2028 and U+2029)
 * lies inside it or when it spans more than 1024 characters (the literal with
 * its quotes, escapes counted as written); the parser then fails at the ':'
 * with "did not find expected ',' or '}'", naming the (0-based) line of the
 * ':' unless it is 0. Control characters anywhere are the reader's error
 * instead when the reader decodes it first. Returns 0, or -1 with err set. */
/* *left counts the nodes that may still be looked at: a tree that shares containers (a list of the
 * same map twice, again and again) can have far more nodes than memory; each one is at least a
 * byte of the encoding, so past the encoder's bound it is not looked at further (and the encoder
 * stops at its bound). */
static bool key_may_go_stale(const tpl_value_t *v, int depth, size_t *left) {
  if (depth > 10000 || !*left) return false;
  --*left;
  if (v->kind == TPL_LIST && v->u.list) {
    for (size_t i = 0; !v->u.list->bytes && i < v->u.list->len; i++)
      if (key_may_go_stale(&v->u.list->items[i], depth + 1, left)) return true;
  } else if (v->kind == TPL_MAP && v->u.map) {
    const tpl_map_t *m = v->u.map;
    for (size_t i = 0; i < m->len; i++) {
      const char *k = m->ents[i].key;
      size_t kn = m->ents[i].klen;
      if (kn > 170) return true;
      for (size_t j = 0; j + 1 < kn; j++)
        if ((unsigned char)k[j] == 0xC2 && (unsigned char)k[j + 1] == 0x85) return true;
      if (key_may_go_stale(&m->ents[i].val, depth + 1, left)) return true;
    }
  }
  return false;
}

static int stale_key_check(const tpl_value_t *v, buf_t *err, size_t max) {
  size_t left = max ? max : SIZE_MAX;
  if (!key_may_go_stale(v, 0, &left)) return 0;
  buf_t j = BUF_INIT, jerr = BUF_INIT;
  int rc = 0;
  if (sprig__json_encode_max(&j, v, true, NULL, &jerr, NULL, max, NULL) == 0 && j.data) {
    const unsigned char *s = (const unsigned char *)j.data;
    /* The first control character's offset: yaml.v2's reader decodes the input
     * in raw chunks of 512 bytes (a chunk ends before a cut character), and
     * fails as soon as it decodes the chunk holding one. */
    size_t ctl_at = (size_t)-1;
    for (size_t i = 0; i < j.len;) {
      int32_t r;
      size_t w = tpl__utf8_decode(j.data + i, j.len - i, &r);
      if (r == 0x7F || (r >= 0x80 && r <= 0x9F && r != 0x85) || r == 0xFFFE || r == 0xFFFF) {
        ctl_at = i;
        break;
      }
      i += w;
    }
    size_t n = j.len, line = 0;
    for (size_t i = 0; i < n;) {
      if (s[i] != '"') {
        i++;
        continue;
      }
      size_t chars = 1, nels = 0, k = i + 1;
      bool ctl = false;
      while (k < n && s[k] != '"') {
        if (s[k] == '\\') {
          k += 2;
          chars += 2;
          continue;
        }
        int32_t r;
        size_t w = tpl__utf8_decode((const char *)s + k, n - k, &r);
        if (r == 0x85) nels++;
        if (r == 0x7F || (r >= 0x80 && r <= 0x9F && r != 0x85) || r == 0xFFFE || r == 0xFFFF) ctl = true;
        k += w;
        chars++;
      }
      chars++;
      (void)ctl;
      line += nels;
      k++;
      if (k < n && s[k] == ':' && (nels || chars > 1024)) {
        if (ctl_at != (size_t)-1) {
          /* Before the parser sees the ':' the scanner has cached 4 characters from it. */
          size_t end = k;
          for (int c = 0; c < 3 && end < n; c++) {
            int32_t r;
            end += tpl__utf8_decode(j.data + end, n - end, &r);
          }
          if (end >= n) end = n - 1;
          size_t start = 0;
          bool ctl_first = false;
          while (start < n) {
            size_t stop = start + 512 >= n ? n : start + 512;
            while (stop < n && stop > start && (s[stop] & 0xC0) == 0x80) stop--;
            if (ctl_at < stop) {
              ctl_first = true;
              break;
            }
            if (end < stop) break;
            start = stop;
          }
          if (ctl_first) break; /* the emitter reports the control character */
        }
        if (err) {
          buf_puts(err, "yaml: ");
          if (line) buf_printf(err, "line %zu: ", line);
          buf_puts(err, "did not find expected ',' or '}'");
        }
        rc = -1;
        break;
      }
      i = k;
    }
  }

  buf_free(&j);
  buf_free(&jerr);
  return rc;
}

int sprig_yaml_encode(buf_t *out, const tpl_value_t *v, buf_t *err) { return sprig_yaml_encode_with(out, v, err, NULL); }

int sprig_yaml_encode_with(buf_t *out, const tpl_value_t *v, buf_t *err, worker_t *helper) {
  return sprig__yaml_encode_max(out, v, err, helper, 0, NULL);
}

int sprig__yaml_encode_max(buf_t *out, const tpl_value_t *v, buf_t *err, worker_t *helper, size_t max,
                           tpl_call_t *call) {
  buf_t scratch = BUF_INIT;
  ye_t e = {0};
  e.max = max;
  e.call = call;
  e.helper = helper;
  e.out = out;
  e.err = err ? err : &scratch;
  e.best_width = 80;
  e.best_indent = 2;
  e.indent = -1;
  e.whitespace = true;
  e.indention = true;
  if (stale_key_check(v, e.err, max)) e.rc = -1;
  else emit_node(&e, v, true, false, false, false, 0);
  if (!e.rc) {
    /* DOCUMENT-END (implicit): write_indent with indent -1. */
    e.indent = -1;
    write_indent(&e);
  }
  ye_fini(&e);
  buf_free(&scratch);
  return e.rc;
}
