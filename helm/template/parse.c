/* Lexer and parser for Go's text/template syntax, with Go's error messages,
 * and template sets with Go's (and so Helm's) definition rules. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "helm/template/tpl_internal.h"

/* ---- items ---- */

typedef enum {
  IT_ERROR, IT_BOOL, IT_CHAR, IT_CHAR_CONSTANT, IT_COMMENT, IT_COMPLEX, IT_ASSIGN, IT_DECLARE, IT_EOF,
  IT_FIELD, IT_IDENTIFIER, IT_LEFT_DELIM, IT_LEFT_PAREN, IT_NUMBER, IT_PIPE, IT_RAW_STRING,
  IT_RIGHT_DELIM, IT_RIGHT_PAREN, IT_SPACE, IT_STRING, IT_TEXT, IT_VARIABLE,
  IT_KEYWORD, IT_BLOCK, IT_BREAK, IT_CONTINUE, IT_DOT, IT_DEFINE, IT_ELSE, IT_END, IT_IF, IT_NIL,
  IT_RANGE, IT_TEMPLATE, IT_WITH,
} item_type_t;

typedef struct item_s {
  item_type_t typ;
  uint32_t pos;
  const char *val;
  uint32_t len; /* texts are at most UINT32_MAX bytes (tpl_set_parse) */
  int line;
} item_t;

typedef enum { S_NONE, S_TEXT, S_LEFT_DELIM, S_COMMENT, S_RIGHT_DELIM, S_INSIDE, S_SPACE, S_IDENT,
               S_FIELD, S_VARIABLE, S_CHAR, S_NUMBER, S_QUOTE, S_RAW_QUOTE } lstate_t;

typedef struct lexer_s {
  const char *input;
  size_t len, pos, start;
  size_t lastw;
  bool at_eof;
  int paren_depth;
  int line, start_line;
  item_t *item; /* where the next item goes (the parser's token slot) */
  bool inside_action;
  bool break_ok, continue_ok;
  tpl_arena_t *arena;
} lexer_t;

#define LEFT_DELIM "{{"
#define RIGHT_DELIM "}}"
#define EOF_RUNE (-1)

static inline bool is_space(int32_t r) { return r == ' ' || r == '\t' || r == '\r' || r == '\n'; }

/* 1 for the ASCII bytes Go's isAlphaNumeric accepts: '_', letters, digits. */
static const uint8_t ascii_alnum_tab[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0,
    0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1,
    0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

static inline bool ascii_alnum(unsigned char c) { return ascii_alnum_tab[c]; }

/* Go's isAlphaNumeric: '_', unicode.IsLetter or unicode.IsDigit. */
static inline bool is_alnum(int32_t r) {
  if (r >= 0 && r < 0x80) return ascii_alnum((unsigned char)r);
  return tpl_unicode_is_letter(r) || tpl_unicode_is_digit(r);
}

/* The rune at pos (not ASCII) and its width. */
static int32_t lx_decode(const lexer_t *l, size_t *w) {
  int32_t r;
  *w = tpl__utf8_decode(l->input + l->pos, l->len - l->pos, &r);
  return r;
}

static inline int32_t lx_next(lexer_t *l) {
  if (l->pos >= l->len) {
    l->at_eof = true;
    l->lastw = 0;
    return EOF_RUNE;
  }
  unsigned char c = (unsigned char)l->input[l->pos];
  if (c >= 0x80) {
    size_t w;
    int32_t r = lx_decode(l, &w);
    l->pos += w;
    l->lastw = w;
    return r;
  }
  l->pos++;
  l->lastw = 1;
  if (c == '\n') l->line++;
  return c;
}

static inline void lx_backup(lexer_t *l) {
  if (!l->at_eof && l->pos > 0) {
    l->pos -= l->lastw;
    if (l->input[l->pos] == '\n') l->line--;
  }
}

/* next then backup: the rune at pos, leaving lastw as next left it. */
static inline int32_t lx_peek(lexer_t *l) {
  if (l->pos >= l->len) {
    l->at_eof = true;
    l->lastw = 0;
    return EOF_RUNE;
  }
  unsigned char c = (unsigned char)l->input[l->pos];
  if (c >= 0x80) return lx_decode(l, &l->lastw);
  l->lastw = 1;
  return c;
}

/* Consumes a run of ASCII letters, digits and '_' (what a loop of lx_next
 * over them would do: none of them is a newline). */
static inline void lx_skip_ascii_alnum(lexer_t *l) {
  size_t p = l->pos;
  while (p < l->len && ascii_alnum((unsigned char)l->input[p])) p++;
  if (p != l->pos) {
    l->pos = p;
    l->lastw = 1;
  }
}

static inline item_t lx_this(lexer_t *l, item_type_t t) {
  item_t i = {t, (uint32_t)l->start, l->input + l->start, (uint32_t)(l->pos - l->start), l->start_line};
  l->start = l->pos;
  l->start_line = l->line;
  return i;
}

static lstate_t lx_emit(lexer_t *l, item_type_t t) {
  *l->item = lx_this(l, t);
  return S_NONE;
}

static int count_nl(const char *s, size_t n) {
  int c = 0;
  size_t i = 0;
  /* Eight bytes at a time: a byte of x is zero exactly where s holds '\n'. */
  const uint64_t ones = 0x0101010101010101u, low7 = 0x7f7f7f7f7f7f7f7fu;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    uint64_t x = w ^ (ones * '\n');
    uint64_t nonzero = (((x & low7) + low7) | x) & ~low7; /* high bit set where the byte is not zero */
    c += __builtin_popcountll(~nonzero & ~low7);
  }
  for (; i < n; i++) c += s[i] == '\n';
  return c;
}

/* The first "{{" in [p, e), or NULL. */
static const char *find_left_delim(const char *p, const char *e) {
  while (e - p >= 2) {
    const char *q = memchr(p, '{', (size_t)(e - p - 1));
    if (!q) return NULL;
    if (q[1] == '{') return q;
    p = q + 1;
  }
  return NULL;
}

static void lx_ignore(lexer_t *l) {
  l->line += count_nl(l->input + l->start, l->pos - l->start);
  l->start = l->pos;
  l->start_line = l->line;
}

static bool lx_accept(lexer_t *l, const char *valid) {
  int32_t r = lx_next(l);
  if (r > 0 && r < 0x80 && strchr(valid, (int)r)) return true;
  lx_backup(l);
  return false;
}

static void lx_accept_run(lexer_t *l, const char *valid) {
  for (;;) {
    int32_t r = lx_next(l);
    if (!(r > 0 && r < 0x80 && strchr(valid, (int)r))) break;
  }
  lx_backup(l);
}

static lstate_t lx_errorf(lexer_t *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static lstate_t lx_errorf(lexer_t *l, const char *fmt, ...) {
  buf_t b = BUF_INIT;
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(&b, fmt, ap);
  va_end(ap);
  char *m = tpl_arena_strndup(l->arena, b.data ? b.data : "out of memory", b.data ? b.len : 13);
  buf_free(&b);
  const char *v = m ? m : "out of memory";
  *l->item = (item_t){IT_ERROR, (uint32_t)l->start, v, (uint32_t)strlen(v), l->start_line};
  l->start = 0;
  l->pos = 0;
  l->len = 0;
  return S_NONE;
}

static bool starts_with(const lexer_t *l, size_t at, const char *p) {
  size_t n = strlen(p);
  return at <= l->len && l->len - at >= n && memcmp(l->input + at, p, n) == 0;
}

static bool has_left_trim(const lexer_t *l, size_t at) {
  return l->len >= at + 2 && l->input[at] == '-' && is_space((unsigned char)l->input[at + 1]);
}

static bool has_right_trim(const lexer_t *l, size_t at) {
  return l->len >= at + 2 && is_space((unsigned char)l->input[at]) && l->input[at + 1] == '-';
}

/* " -}}" (trim set) or "}}" at pos. */
static inline bool at_right_delim(const lexer_t *l, bool *trim) {
  const char *in = l->input + l->pos;
  size_t n = l->len - l->pos;
  if (n >= 4 && is_space((unsigned char)in[0]) && in[1] == '-' && in[2] == '}' && in[3] == '}') {
    *trim = true;
    return true;
  }
  *trim = false;
  return n >= 2 && in[0] == '}' && in[1] == '}';
}

static inline bool at_terminator(lexer_t *l) {
  int32_t r = lx_peek(l);
  if (is_space(r)) return true;
  switch (r) {
  case EOF_RUNE: case '.': case ',': case '|': case ':': case ')': case '(': return true;
  }
  return l->len - l->pos >= 2 && l->input[l->pos] == '}' && l->input[l->pos + 1] == '}';
}

/* The keyword item of an identifier, or IT_ERROR when it is none ("." is
 * lexed elsewhere). */
static item_type_t keyword(const char *w, size_t n) {
  switch (n) {
  case 2: if (w[0] == 'i' && w[1] == 'f') return IT_IF; break;
  case 3:
    if (memcmp(w, "end", 3) == 0) return IT_END;
    if (memcmp(w, "nil", 3) == 0) return IT_NIL;
    break;
  case 4:
    if (memcmp(w, "else", 4) == 0) return IT_ELSE;
    if (memcmp(w, "with", 4) == 0) return IT_WITH;
    break;
  case 5:
    if (memcmp(w, "range", 5) == 0) return IT_RANGE;
    if (memcmp(w, "block", 5) == 0) return IT_BLOCK;
    if (memcmp(w, "break", 5) == 0) return IT_BREAK;
    break;
  case 6: if (memcmp(w, "define", 6) == 0) return IT_DEFINE; break;
  case 8:
    if (memcmp(w, "template", 8) == 0) return IT_TEMPLATE;
    if (memcmp(w, "continue", 8) == 0) return IT_CONTINUE;
    break;
  }
  return IT_ERROR;
}

/* One state of the lexer; inlined into lx_next_item, whose loop then jumps
 * from state to state directly. */
static inline __attribute__((always_inline)) lstate_t lx_run(lexer_t *l, lstate_t st) {
  switch (st) {
  case S_NONE: return S_NONE;
  case S_TEXT: {
    const char *hit = find_left_delim(l->input + l->pos, l->input + l->len);
    if (hit) {
      size_t x = (size_t)(hit - (l->input + l->pos));
      if (x > 0) {
        l->pos += x;
        size_t trim = 0;
        if (has_left_trim(l, l->pos + 2)) {
          size_t e = l->pos;
          while (e > l->start && is_space((unsigned char)l->input[e - 1])) e--;
          trim = l->pos - e;
        }
        l->pos -= trim;
        l->line += count_nl(l->input + l->start, l->pos - l->start);
        item_t i = lx_this(l, IT_TEXT);
        l->pos += trim;
        lx_ignore(l);
        if (i.len > 0) {
          *l->item = i;
          return S_NONE;
        }
      }
      return S_LEFT_DELIM;
    }
    l->pos = l->len;
    if (l->pos > l->start) {
      l->line += count_nl(l->input + l->start, l->pos - l->start);
      return lx_emit(l, IT_TEXT);
    }
    return lx_emit(l, IT_EOF);
  }
  case S_LEFT_DELIM: {
    l->pos += 2;
    bool trim = has_left_trim(l, l->pos);
    size_t after = trim ? 2 : 0;
    if (starts_with(l, l->pos + after, "/*")) {
      l->pos += after;
      lx_ignore(l);
      return S_COMMENT;
    }
    item_t i = lx_this(l, IT_LEFT_DELIM);
    l->inside_action = true;
    l->pos += after;
    lx_ignore(l);
    l->paren_depth = 0;
    *l->item = i;
    return S_NONE;
  }
  case S_COMMENT: {
    l->pos += 2;
    const char *e = l->pos <= l->len ? memmem(l->input + l->pos, l->len - l->pos, "*/", 2) : NULL;
    if (!e) return lx_errorf(l, "unclosed comment");
    l->pos = (size_t)(e - l->input) + 2;
    bool trim;
    if (!at_right_delim(l, &trim)) return lx_errorf(l, "comment ends before closing delimiter");
    l->line += count_nl(l->input + l->start, l->pos - l->start);
    (void)lx_this(l, IT_COMMENT);
    if (trim) l->pos += 2;
    l->pos += 2;
    if (trim)
      while (l->pos < l->len && is_space((unsigned char)l->input[l->pos])) l->pos++;
    lx_ignore(l);
    return S_TEXT;
  }
  case S_RIGHT_DELIM: {
    bool trim;
    at_right_delim(l, &trim);
    if (trim) {
      l->pos += 2;
      lx_ignore(l);
    }
    l->pos += 2;
    item_t i = lx_this(l, IT_RIGHT_DELIM);
    if (trim) {
      while (l->pos < l->len && is_space((unsigned char)l->input[l->pos])) l->pos++;
      lx_ignore(l);
    }
    l->inside_action = false;
    *l->item = i;
    return S_NONE;
  }
  case S_INSIDE: {
    bool trim;
    if (at_right_delim(l, &trim)) {
      if (l->paren_depth == 0) return S_RIGHT_DELIM;
      return lx_errorf(l, "unclosed left paren");
    }
    int32_t r = lx_next(l);
    if (r == EOF_RUNE) return lx_errorf(l, "unclosed action");
    if (is_space(r)) {
      lx_backup(l);
      return S_SPACE;
    }
    switch (r) {
    case '=': return lx_emit(l, IT_ASSIGN);
    case ':':
      if (lx_next(l) != '=') return lx_errorf(l, "expected :=");
      return lx_emit(l, IT_DECLARE);
    case '|': return lx_emit(l, IT_PIPE);
    case '"': return S_QUOTE;
    case '`': return S_RAW_QUOTE;
    case '$': return S_VARIABLE;
    case '\'': return S_CHAR;
    case '(':
      l->paren_depth++;
      return lx_emit(l, IT_LEFT_PAREN);
    case ')':
      l->paren_depth--;
      if (l->paren_depth < 0) return lx_errorf(l, "unexpected right paren");
      return lx_emit(l, IT_RIGHT_PAREN);
    }
    if (r == '.') {
      if (l->pos < l->len) {
        char c = l->input[l->pos];
        if (c < '0' || c > '9') return S_FIELD;
      }
      lx_backup(l);
      return S_NUMBER;
    }
    if (r == '+' || r == '-' || (r >= '0' && r <= '9')) {
      lx_backup(l);
      return S_NUMBER;
    }
    if (is_alnum(r)) {
      lx_backup(l);
      return S_IDENT;
    }
    if (r < 0x7F && r >= 0x20) return lx_emit(l, IT_CHAR);
    buf_t b = BUF_INIT;
    tpl__fmt_sharp_u(&b, r);
    lstate_t s = lx_errorf(l, "unrecognized character in action: %s", b.data ? b.data : "");
    buf_free(&b);
    return s;
  }
  case S_SPACE: {
    int n = 0;
    while (l->pos < l->len && is_space((unsigned char)l->input[l->pos])) {
      if (l->input[l->pos] == '\n') l->line++;
      l->pos++;
      n++;
    }
    (void)lx_peek(l); /* the loop's last peek: sets at_eof or lastw */
    if (has_right_trim(l, l->pos - 1) && starts_with(l, l->pos - 1 + 2, RIGHT_DELIM)) {
      lx_backup(l);
      if (n == 1) return S_RIGHT_DELIM;
    }
    return lx_emit(l, IT_SPACE);
  }
  case S_IDENT: {
    for (;;) {
      lx_skip_ascii_alnum(l);
      int32_t r = lx_next(l);
      if (is_alnum(r)) continue;
      lx_backup(l);
      const char *w = l->input + l->start;
      size_t wn = l->pos - l->start;
      if (!at_terminator(l)) {
        buf_t b = BUF_INIT;
        tpl__fmt_sharp_u(&b, r);
        lstate_t s = lx_errorf(l, "bad character %s", b.data ? b.data : "");
        buf_free(&b);
        return s;
      }
      item_type_t t = keyword(w, wn);
      if (t != IT_ERROR) {
        if ((t == IT_BREAK && !l->break_ok) || (t == IT_CONTINUE && !l->continue_ok)) return lx_emit(l, IT_IDENTIFIER);
        return lx_emit(l, t);
      }
      if (w[0] == '.') return lx_emit(l, IT_FIELD);
      if ((wn == 4 && memcmp(w, "true", 4) == 0) || (wn == 5 && memcmp(w, "false", 5) == 0)) return lx_emit(l, IT_BOOL);
      return lx_emit(l, IT_IDENTIFIER);
    }
  }
  case S_FIELD:
  case S_VARIABLE: {
    item_type_t typ = st == S_FIELD ? IT_FIELD : IT_VARIABLE;
    if (at_terminator(l)) return lx_emit(l, typ == IT_VARIABLE ? IT_VARIABLE : IT_DOT);
    int32_t r;
    for (;;) {
      lx_skip_ascii_alnum(l);
      r = lx_next(l);
      if (!is_alnum(r)) {
        lx_backup(l);
        break;
      }
    }
    if (!at_terminator(l)) {
      buf_t b = BUF_INIT;
      tpl__fmt_sharp_u(&b, r);
      lstate_t s = lx_errorf(l, "bad character %s", b.data ? b.data : "");
      buf_free(&b);
      return s;
    }
    return lx_emit(l, typ);
  }
  case S_CHAR:
    for (;;) {
      int32_t r = lx_next(l);
      if (r == '\\') {
        r = lx_next(l);
        if (r != EOF_RUNE && r != '\n') continue;
        return lx_errorf(l, "unterminated character constant");
      }
      if (r == EOF_RUNE || r == '\n') return lx_errorf(l, "unterminated character constant");
      if (r == '\'') break;
    }
    return lx_emit(l, IT_CHAR_CONSTANT);
  case S_NUMBER: {
    /* scanNumber, once or twice (complex) */
    for (int pass = 0; pass < 2; pass++) {
      bool ok = true;
      lx_accept(l, "+-");
      const char *digits = "0123456789_";
      if (lx_accept(l, "0")) {
        if (lx_accept(l, "xX")) digits = "0123456789abcdefABCDEF_";
        else if (lx_accept(l, "oO")) digits = "01234567_";
        else if (lx_accept(l, "bB")) digits = "01_";
      }
      lx_accept_run(l, digits);
      if (lx_accept(l, ".")) lx_accept_run(l, digits);
      size_t dl = strlen(digits);
      if (dl == 11 && lx_accept(l, "eE")) {
        lx_accept(l, "+-");
        lx_accept_run(l, "0123456789_");
      }
      if (dl == 23 && lx_accept(l, "pP")) {
        lx_accept(l, "+-");
        lx_accept_run(l, "0123456789_");
      }
      lx_accept(l, "i");
      if (is_alnum(lx_peek(l))) {
        lx_next(l);
        ok = false;
      }
      if (pass == 1) {
        if (!ok || l->input[l->pos - 1] != 'i')
          break;
        return lx_emit(l, IT_COMPLEX);
      }
      if (!ok) break;
      int32_t sign = lx_peek(l);
      if (sign != '+' && sign != '-') return lx_emit(l, IT_NUMBER);
    }
    /* bad number: quote the text seen so far */
    buf_t b = BUF_INIT;
    tpl_fmt_quote(&b, l->input + l->start, l->pos - l->start);
    lstate_t s = lx_errorf(l, "bad number syntax: %s", b.data ? b.data : "");
    buf_free(&b);
    return s;
  }
  case S_QUOTE:
    for (;;) {
      /* Bytes other than '\\', '"' and newline: skipped whole (no multi-byte rune holds them). */
      while (l->pos < l->len) {
        char c = l->input[l->pos];
        if (c == '\\' || c == '"' || c == '\n') break;
        l->pos++;
      }
      int32_t r = lx_next(l);
      if (r == '\\') {
        r = lx_next(l);
        if (r != EOF_RUNE && r != '\n') continue;
        return lx_errorf(l, "unterminated quoted string");
      }
      if (r == EOF_RUNE || r == '\n') return lx_errorf(l, "unterminated quoted string");
      if (r == '"') break;
    }
    return lx_emit(l, IT_STRING);
  case S_RAW_QUOTE: {
    const char *q = l->pos < l->len ? memchr(l->input + l->pos, '`', l->len - l->pos) : NULL;
    if (!q) return lx_errorf(l, "unterminated raw quoted string");
    size_t e = (size_t)(q - l->input) + 1;
    l->line += count_nl(l->input + l->pos, e - l->pos);
    l->pos = e;
    l->lastw = 1;
    return lx_emit(l, IT_RAW_STRING);
  }
  }
  return S_NONE;
}

/* Lexes the next item into *out. */
static __attribute__((noinline)) void lx_next_item(lexer_t *l, item_t *out) {
  *out = (item_t){IT_EOF, (uint32_t)l->pos, "EOF", 3, l->start_line};
  l->item = out;
  lstate_t st = l->inside_action ? S_INSIDE : S_TEXT;
  while ((st = lx_run(l, st)) != S_NONE) {}
}

/* ---- sets ---- */

/* A text parsed into the set, kept so that the same bytes parsed again under another name (every
 * subchart's copy of a library chart) share its nodes: what the parse made, in the order it was
 * added, the top tree at index top. */
typedef struct tpl__parsed_s {
  const char *text;
  size_t len;
  uint64_t hash;
  size_t n, top;
  const char **keys;
  size_t *klens;
  const tpl_tree_t **trees;
  struct tpl__parsed_s *next;
} tpl__parsed_t;

struct tpl_set_s {
  tpl_arena_t *arena;
  const tpl_funcs_t *funcs;
  tpl_map_t trees; /* name -> tree (kept in val.u.obj as an opaque pointer) */
  const tpl_set_t *parent; /* an overlay's base set (tpl_set_overlay), looked in after trees */
  tpl__parsed_t *parsed;   /* the texts parsed so far (tpl_set_parse) */
};

tpl_set_t *tpl_set_new(const tpl_funcs_t *funcs) {
  tpl_set_t *s = calloc(1, sizeof(*s));
  if (!s) return NULL;
  s->arena = tpl_arena_new(0);
  if (!s->arena) {
    free(s);
    return NULL;
  }
  s->funcs = funcs;
  return s;
}

void tpl_set_free(tpl_set_t *s) {
  if (!s) return;
  tpl_arena_free(s->arena);
  free(s);
}

tpl_set_t *tpl_set_overlay(const tpl_set_t *base) {
  tpl_set_t *s = tpl_set_new(base->funcs);
  if (s) s->parent = base;
  return s;
}

void tpl_set_attach(tpl_set_t *set, const tpl_set_t *base) { set->parent = base; }

const tpl_tree_t *tpl__set_lookup(const tpl_set_t *set, const char *name, size_t len) {
  for (; set; set = set->parent) {
    tpl_value_t *v = tpl_map_get(&set->trees, name, len);
    if (v) return (const tpl_tree_t *)(void *)v->u.obj;
  }
  return NULL;
}

size_t tpl_set_count(const tpl_set_t *set) { return set->trees.len; }

bool tpl_set_has(const tpl_set_t *set, const char *name) { return tpl__set_lookup(set, name, strlen(name)) != NULL; }

const tpl_funcs_t *tpl__set_funcs(const tpl_set_t *set) { return set->funcs; }

size_t tpl__set_arena_used(const tpl_set_t *set) { return tpl_arena_used(set->arena); }

/* ---- parser ---- */

typedef struct ptree_s {
  tpl_tree_t *t;
  item_t token[3];
  int peek_count;
  size_t vbase, nvars; /* this tree's variables: parser_t.vars[vbase..nvars) */
  int action_line, range_depth, stack_depth;
} ptree_t;

typedef struct pvar_s {
  const char *name;
  size_t len;
} pvar_t;

typedef struct parser_s {
  tpl_set_t *set;
  tpl_arena_t *a;
  lexer_t lex;
  ptree_t p; /* the tree being parsed */
  /* Scratch stacks (malloc'd, reused through the parse). Node lists being
   * built are pushed here and copied to the arena at their exact size once
   * complete; nested lists push above and pop back first. */
  tpl_node_t **stk;
  size_t nstk, stkcap;
  pvar_t *vars; /* declared variables in scope, of every tree being parsed */
  size_t varcap;
  pvar_t *ids; /* field names of the chain being read (p_operand) */
  size_t idcap;
  tpl_map_t pending; /* trees defined by this parse: name -> tree */
  jmp_buf jb;
  buf_t *err;
  int rc;
  tpl__stack_t stack; /* deep nesting continues on mmap'd segments */
  uint64_t text_hash; /* parsed_hash of the text, for parsed_keep */
} parser_t;

static void p_fail(parser_t *P, int rc) {
  P->rc = rc;
  longjmp(P->jb, 1);
}

static void *p_alloc(parser_t *P, size_t n) {
  void *p = tpl_arena_alloc(P->a, n);
  if (!p) p_fail(P, TPL_ENOMEM);
  return p;
}

static void p_errorf(parser_t *P, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void p_errorf(parser_t *P, const char *fmt, ...) {
  buf_reset(P->err);
  buf_printf(P->err, "template: %s:%d: ", P->p.t->parse_name, P->p.token[0].line);
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(P->err, fmt, ap);
  va_end(ap);
  p_fail(P, TPL_EPARSE);
  __builtin_unreachable();
}

/* Token access as in Go's parser (three tokens of lookahead). The items
 * returned live in P->p.token: valid until the next p_next/p_peek call, so
 * callers copy an item they need longer. */
static inline const item_t *p_next(parser_t *P) {
  if (P->p.peek_count > 0) P->p.peek_count--;
  else lx_next_item(&P->lex, &P->p.token[0]);
  return &P->p.token[P->p.peek_count];
}
static inline void p_backup(parser_t *P) { P->p.peek_count++; }
static void p_backup2(parser_t *P, item_t t1) {
  P->p.token[1] = t1;
  P->p.peek_count = 2;
}
static void p_backup3(parser_t *P, item_t t2, item_t t1) {
  P->p.token[1] = t1;
  P->p.token[2] = t2;
  P->p.peek_count = 3;
}
static inline const item_t *p_peek(parser_t *P) {
  if (P->p.peek_count > 0) return &P->p.token[P->p.peek_count - 1];
  P->p.peek_count = 1;
  lx_next_item(&P->lex, &P->p.token[0]);
  return &P->p.token[0];
}
static const item_t *p_next_nonspace(parser_t *P) {
  const item_t *t;
  do t = p_next(P);
  while (t->typ == IT_SPACE);
  return t;
}
static const item_t *p_peek_nonspace(parser_t *P) {
  const item_t *t = p_next_nonspace(P);
  p_backup(P);
  return t;
}

/* item.String() as Go prints it in "unexpected X in Y". */
static void item_string(const item_t *i, buf_t *b) {
  if (i->typ == IT_EOF) buf_puts(b, "EOF");
  else if (i->typ == IT_ERROR) buf_append(b, i->val, i->len);
  else if (i->typ > IT_KEYWORD) { buf_putc(b, '<'); buf_append(b, i->val, i->len); buf_putc(b, '>'); }
  else if (tpl__utf8_count(i->val, i->len) > 10) {
    /* %.10q: the first 10 runes, quoted */
    size_t k = 0;
    for (int r = 0; r < 10; r++) { int32_t c; k += tpl__utf8_decode(i->val + k, i->len - k, &c); }
    tpl_fmt_quote(b, i->val, k);
    buf_puts(b, "...");
  } else tpl_fmt_quote(b, i->val, i->len);
}

static void p_unexpected(parser_t *P, item_t tok, const char *context) __attribute__((noreturn));
static void p_unexpected(parser_t *P, item_t tok, const char *context) {
  buf_t b = BUF_INIT;
  item_string(&tok, &b);
  if (tok.typ == IT_ERROR) {
    buf_t extra = BUF_INIT;
    if (P->p.action_line != 0 && P->p.action_line != tok.line) {
      bool action_suffix = tok.len >= 7 && memcmp(tok.val + tok.len - 7, " action", 7) == 0;
      buf_printf(&extra, "%s %s:%d", action_suffix ? "" : " in action", "started at", P->p.action_line);
      /* Go: " in action started at NAME:LINE" or " started at NAME:LINE" */
      buf_reset(&extra);
      if (action_suffix) buf_printf(&extra, " started at %s:%d", P->p.t->parse_name, P->p.action_line);
      else buf_printf(&extra, " in action started at %s:%d", P->p.t->parse_name, P->p.action_line);
    }
    char *m = tpl_arena_strndup(P->a, b.data ? b.data : "", b.len);
    char *x = tpl_arena_strndup(P->a, extra.data ? extra.data : "", extra.len);
    buf_free(&b);
    buf_free(&extra);
    if (!m || !x) p_fail(P, TPL_ENOMEM);
    p_errorf(P, "%s%s", m, x);
  }
  char *m = tpl_arena_strndup(P->a, b.data ? b.data : "", b.len);
  buf_free(&b);
  if (!m) p_fail(P, TPL_ENOMEM);
  p_errorf(P, "unexpected %s in %s", m, context);
}

static item_t p_expect(parser_t *P, item_type_t t, const char *context) {
  item_t tok = *p_next_nonspace(P);
  if (tok.typ != t) p_unexpected(P, tok, context);
  return tok;
}

static tpl_node_t *p_node(parser_t *P, tpl_node_type_t type, uint32_t pos) {
  tpl_node_t *n = p_alloc(P, sizeof(*n));
  n->type = (uint8_t)type;
  n->pos = pos;
  n->tree = P->p.t;
  return n;
}

/* Pushes a node of the list being built onto the scratch stack. */
static void stk_push(parser_t *P, tpl_node_t *n) {
  if (P->nstk == P->stkcap) {
    size_t nc = P->stkcap ? P->stkcap * 2 : 64;
    tpl_node_t **v = realloc(P->stk, nc * sizeof(*v));
    if (!v) p_fail(P, TPL_ENOMEM);
    P->stk = v;
    P->stkcap = nc;
  }
  P->stk[P->nstk++] = n;
}

/* A LIST, COMMAND or PIPE node whose kids (and a pipe's declarations
 * before them) are the nodes pushed since mark: one arena block holds the
 * node and its arrays, at their exact size. */
static tpl_node_t *stk_pop_node(parser_t *P, tpl_node_type_t type, uint32_t pos, size_t mark, size_t ndecl) {
  size_t n = P->nstk - mark;
  tpl_node_t *node = p_alloc(P, sizeof(*node) + n * sizeof(tpl_node_t *));
  tpl_node_t **v = (tpl_node_t **)(void *)(node + 1);
  node->type = (uint8_t)type;
  node->pos = pos;
  node->tree = P->p.t;
  if (n) memcpy(v, P->stk + mark, n * sizeof(*v));
  if (ndecl) {
    node->decl.v = v;
    node->decl.n = node->decl.cap = ndecl;
  }
  if (n > ndecl) node->kids.v = v + ndecl;
  node->kids.n = node->kids.cap = n - ndecl;
  P->nstk = mark;
  return node;
}

/* A list (or else list) of one node. */
static tpl_node_t *p_list_of(parser_t *P, uint32_t pos, tpl_node_t *item) {
  size_t mark = P->nstk;
  stk_push(P, item);
  return stk_pop_node(P, TPL_N_LIST, pos, mark, 0);
}

static bool has_function(parser_t *P, const char *name, size_t len) {
  if (P->set->funcs && tpl_funcs_find(P->set->funcs, name, len)) return true;
  return tpl__builtin_find(name, len) >= 0;
}

static void vars_push(parser_t *P, const char *name, size_t len) {
  if (P->p.nvars == P->varcap) {
    size_t nc = P->varcap ? P->varcap * 2 : 16;
    pvar_t *nv = realloc(P->vars, nc * sizeof(*nv));
    if (!nv) p_fail(P, TPL_ENOMEM);
    P->vars = nv;
    P->varcap = nc;
  }
  P->vars[P->p.nvars].name = name;
  P->vars[P->p.nvars++].len = len;
}

/* A FIELD or VARIABLE node of the identifiers of "a.b.c" (one arena block
 * holds the node and both arrays). */
static tpl_node_t *split_idents(parser_t *P, tpl_node_type_t type, uint32_t pos, const char *s, size_t len) {
  size_t cnt = 1;
  for (size_t i = 0; i < len; i++) cnt += s[i] == '.';
  tpl_node_t *n = p_alloc(P, sizeof(*n) + cnt * (sizeof(char *) + sizeof(size_t)));
  char *mem = (char *)(void *)(n + 1);
  n->type = (uint8_t)type;
  n->pos = pos;
  n->tree = P->p.t;
  n->idents = (const char **)(void *)mem;
  n->ilens = (size_t *)(void *)(mem + cnt * sizeof(char *));
  size_t k = 0, st = 0;
  for (size_t i = 0; i <= len; i++) {
    if (i == len || s[i] == '.') {
      n->idents[k] = s + st;
      n->ilens[k++] = i - st;
      st = i + 1;
    }
  }
  n->nidents = k;
  return n;
}

static tpl_node_t *new_variable(parser_t *P, uint32_t pos, const char *s, size_t len) {
  return split_idents(P, TPL_N_VARIABLE, pos, s, len);
}

static tpl_node_t *new_field(parser_t *P, uint32_t pos, const char *s, size_t len) {
  return split_idents(P, TPL_N_FIELD, pos, s + 1, len - 1);
}

/* ---- strconv.Unquote / UnquoteChar ---- */

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Decodes one (possibly escaped) character of a quoted literal at s; returns bytes consumed or 0 on syntax error. */
static size_t unquote_char(const char *s, size_t n, char quote, int32_t *value, bool *multibyte) {
  *multibyte = false;
  if (n == 0) return 0;
  unsigned char c = (unsigned char)s[0];
  if (c == (unsigned char)quote && (quote == '\'' || quote == '"')) return 0;
  if (c >= 0x80) {
    size_t w = tpl__utf8_decode(s, n, value);
    *multibyte = true;
    return w;
  }
  if (c != '\\') {
    *value = c;
    return 1;
  }
  if (n <= 1) return 0;
  char e = s[1];
  switch (e) {
  case 'a': *value = 7; return 2;
  case 'b': *value = 8; return 2;
  case 'f': *value = 12; return 2;
  case 'n': *value = 10; return 2;
  case 'r': *value = 13; return 2;
  case 't': *value = 9; return 2;
  case 'v': *value = 11; return 2;
  case 'x':
  case 'u':
  case 'U': {
    int k = e == 'x' ? 2 : e == 'u' ? 4 : 8;
    if (n < (size_t)(2 + k)) return 0;
    int32_t v = 0;
    for (int j = 0; j < k; j++) {
      int h = hexval(s[2 + j]);
      if (h < 0) return 0;
      v = (v << 4) | h;
    }
    if (e == 'x') {
      *value = v; /* a byte */
      return 4;
    }
    if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *value = v;
    *multibyte = true;
    return (size_t)(2 + k);
  }
  case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
    if (n < 4) return 0;
    int32_t v = 0;
    for (int j = 0; j < 3; j++) {
      char d = s[1 + j];
      if (d < '0' || d > '7') return 0;
      v = v * 8 + (d - '0');
    }
    if (v > 255) return 0;
    *value = v;
    return 4;
  }
  case '\\': *value = '\\'; return 2;
  case '\'':
  case '"':
    if (e != quote) return 0;
    *value = e;
    return 2;
  }
  return 0;
}

/* strconv.Unquote of a "..." or `...` literal into the arena; false on syntax error. */
static bool unquote(parser_t *P, const char *s, size_t n, const char **out, size_t *olen) {
  if (n < 2 || s[0] != s[n - 1]) return false;
  if (s[0] == '`') {
    char *o = p_alloc(P, n);
    size_t k = 0;
    for (size_t i = 1; i < n - 1; i++) {
      if (s[i] == '`') return false;
      if (s[i] != '\r') o[k++] = s[i];
    }
    o[k] = 0;
    *out = o;
    *olen = k;
    return true;
  }
  if (s[0] != '"') return false;
  char *o = p_alloc(P, n * 4 + 1);
  size_t k = 0;
  for (size_t i = 1; i < n - 1;) {
    if (s[i] == '\n') return false;
    int32_t v;
    bool mb;
    size_t w = unquote_char(s + i, n - 1 - i, '"', &v, &mb);
    if (w == 0) return false;
    if (s[i] != '\\' && mb) {
      memcpy(o + k, s + i, w); /* copy the bytes as they are (even invalid UTF-8) */
      k += w;
    } else if (mb) {
      k += tpl__utf8_encode(v, o + k);
    } else {
      o[k++] = (char)v;
    }
    i += w;
  }
  o[k] = 0;
  *out = o;
  *olen = k;
  return true;
}

/* ---- numbers (strconv.ParseInt/ParseUint/ParseFloat with base 0) ---- */

static bool underscore_ok(const char *s, size_t n) {
  char saw = '^';
  size_t i = 0;
  if (n >= 1 && (s[0] == '-' || s[0] == '+')) { s++; n--; }
  bool hex = false;
  if (n >= 2 && s[0] == '0') {
    char c = (char)(s[1] | 0x20);
    if (c == 'b' || c == 'o' || c == 'x') {
      i = 2;
      saw = '0';
      hex = c == 'x';
    }
  }
  for (; i < n; i++) {
    char c = s[i], lc = (char)(c | 0x20);
    if ((c >= '0' && c <= '9') || (hex && lc >= 'a' && lc <= 'f')) { saw = '0'; continue; }
    if (c == '_') {
      if (saw != '0') return false;
      saw = '_';
      continue;
    }
    if (saw == '_') return false;
    saw = '!';
  }
  return saw != '_';
}

/* ParseUint(s, 0, 64): false on any error. */
static bool parse_uint(const char *s, size_t n, uint64_t *out) {
  if (n == 0) return false;
  int base = 10;
  size_t i = 0;
  bool prefixed = false;
  if (s[0] == '0') {
    if (n >= 3 && (s[1] | 0x20) == 'b') { base = 2; i = 2; prefixed = true; }
    else if (n >= 3 && (s[1] | 0x20) == 'o') { base = 8; i = 2; prefixed = true; }
    else if (n >= 3 && (s[1] | 0x20) == 'x') { base = 16; i = 2; prefixed = true; }
    else { base = 8; i = 1; prefixed = true; }
  }
  (void)prefixed;
  bool us = false;
  uint64_t v = 0;
  for (; i < n; i++) {
    char c = s[i];
    int d;
    if (c == '_') { us = true; continue; }
    d = hexval(c);
    if (d < 0 || d >= base) return false;
    if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) return false;
    v = v * (uint64_t)base + (uint64_t)d;
  }
  if (us && !underscore_ok(s, n)) return false;
  *out = v;
  return true;
}

static bool parse_int(const char *s, size_t n, int64_t *out) {
  if (n == 0) return false;
  bool neg = false;
  if (s[0] == '+' || s[0] == '-') { neg = s[0] == '-'; s++; n--; }
  uint64_t u;
  if (!parse_uint(s, n, &u)) return false;
  if (!neg && u > (uint64_t)INT64_MAX) return false;
  if (neg && u > (uint64_t)INT64_MAX + 1) return false;
  *out = neg ? (int64_t)(0 - u) : (int64_t)u;
  return true;
}

static bool parse_float(const char *s, size_t n, double *out) {
  char tmp[512];
  size_t k = 0;
  bool us = false;
  if (n == 0 || n >= sizeof tmp) return false;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '_') { us = true; continue; }
    tmp[k++] = s[i];
  }
  tmp[k] = 0;
  if (us && !underscore_ok(s, n)) return false;
  const char *b = tmp;
  if (*b == '+' || *b == '-') b++;
  bool hex = b[0] == '0' && (b[1] | 0x20) == 'x';
  if (b[0] == '0' && ((b[1] | 0x20) == 'o' || (b[1] | 0x20) == 'b')) return false;
  if (hex && !strpbrk(b, "pP")) return false;
  if (!hex && strpbrk(b, "pP")) return false;
  /* Only digits, '.', exponent parts. */
  for (const char *c = b; *c; c++) {
    if (!((*c >= '0' && *c <= '9') || *c == '.' || *c == 'e' || *c == 'E' || *c == '+' || *c == '-' ||
          (hex && ((*c | 0x20) == 'x' || ((*c | 0x20) >= 'a' && (*c | 0x20) <= 'f') || (*c | 0x20) == 'p'))))
      return false;
  }
  char *end;
  errno = 0;
  double d = strtod(tmp, &end);
  if (*end != 0 || end == tmp) return false;
  if (isinf(d)) return false;
  *out = d;
  return true;
}

/* Go's NumberNode.simplifyComplex: a complex constant with no imaginary part
 * is also a float, and an integer when integral. */
static void simplify_complex(tpl_node_t *n) {
  n->num = TPL_NUM_COMPLEX;
  if (n->cim != 0) return;
  double f = n->cre;
  n->num |= TPL_NUM_FLOAT;
  n->f = f;
  if (f >= -9223372036854775808.0 && f < 9223372036854775808.0 && (double)(int64_t)f == f) {
    n->num |= TPL_NUM_INT;
    n->i = (int64_t)f;
  }
  if (f >= 0 && f < 18446744073709551616.0 && (double)(uint64_t)f == f) {
    n->num |= TPL_NUM_UINT;
    n->u = (uint64_t)f;
  }
}

static tpl_node_t *new_number(parser_t *P, item_t tok) {
  tpl_node_t *n = p_node(P, TPL_N_NUMBER, tok.pos);
  const char *text = tok.val;
  size_t len = tok.len;
  n->str = text;
  n->slen = len;
  if (tok.typ == IT_CHAR_CONSTANT) {
    int32_t v;
    bool mb;
    size_t w = unquote_char(text + 1, len - 1, '\'', &v, &mb);
    if (w == 0) p_errorf(P, "invalid syntax");
    if (!(len - 1 - w == 1 && text[len - 1] == '\'')) p_errorf(P, "malformed character constant: %.*s", (int)len, text);
    n->i = v;
    n->u = (uint64_t)v;
    n->f = v;
    n->num = TPL_NUM_INT | TPL_NUM_UINT | TPL_NUM_FLOAT;
    return n;
  }
  if (tok.typ == IT_COMPLEX) {
    /* fmt.Sscan of "re+imi" (or "re-imi"): split at the sign between the parts. */
    size_t k = 0;
    for (size_t j = len - 1; j > 0; j--) {
      char c = text[j], pc = text[j - 1];
      bool hex = len > 2 && text[0] == '0' && (text[1] | 0x20) == 'x';
      if ((c == '+' || c == '-') && !((pc | 0x20) == 'p' || (!hex && (pc | 0x20) == 'e'))) {
        k = j;
        break;
      }
    }
    double re = 0, im = 0;
    if (k == 0 || text[len - 1] != 'i') p_errorf(P, "illegal number syntax: %.*s", (int)len, text);
    for (int part = 0; part < 2; part++) {
      const char *ps = part ? text + k : text;
      size_t pn = part ? len - 1 - k : k;
      if (parse_float(ps, pn, part ? &im : &re)) continue;
      char tmp[512];
      if (pn < sizeof tmp) {
        memcpy(tmp, ps, pn);
        tmp[pn] = 0;
        char *end;
        double d = strtod(tmp, &end);
        if (*end == 0 && isinf(d)) /* fmt.Sscan reports strconv's range error */
          p_errorf(P, "strconv.ParseFloat: parsing \"%s\": value out of range", tmp);
      }
      p_errorf(P, "illegal number syntax: %.*s", (int)len, text);
    }
    n->cre = re;
    n->cim = im;
    simplify_complex(n);
    return n;
  }
  if (len > 0 && text[len - 1] == 'i') {
    /* Imaginary constants are complex (zero ones are also float and integer). */
    double f;
    if (parse_float(text, len - 1, &f)) {
      n->cre = 0;
      n->cim = f;
      simplify_complex(n);
      return n;
    }
  }
  uint64_t u = 0; /* Go: 0 when ParseUint fails (the -0 case below) */
  int64_t i;
  if (parse_uint(text, len, &u)) {
    n->num |= TPL_NUM_UINT;
    n->u = u;
  }
  if (parse_int(text, len, &i)) {
    n->num |= TPL_NUM_INT;
    n->i = i;
    if (i == 0) {
      n->num |= TPL_NUM_UINT;
      n->u = u;
    }
  }
  if (n->num & TPL_NUM_INT) {
    n->num |= TPL_NUM_FLOAT;
    n->f = (double)n->i;
  } else if (n->num & TPL_NUM_UINT) {
    n->num |= TPL_NUM_FLOAT;
    n->f = (double)n->u;
  } else {
    double f;
    if (parse_float(text, len, &f)) {
      if (!memchr(text, '.', len) && !memchr(text, 'e', len) && !memchr(text, 'E', len) && !memchr(text, 'p', len) &&
          !memchr(text, 'P', len)) {
        buf_t b = BUF_INIT;
        tpl_fmt_quote(&b, text, len);
        char *m = tpl_arena_strndup(P->a, b.data ? b.data : "", b.len);
        buf_free(&b);
        if (!m) p_fail(P, TPL_ENOMEM);
        p_errorf(P, "integer overflow: %s", m);
      }
      n->num |= TPL_NUM_FLOAT;
      n->f = f;
      if (f >= -9223372036854775808.0 && f < 9223372036854775808.0 && (double)(int64_t)f == f) {
        n->num |= TPL_NUM_INT;
        n->i = (int64_t)f;
      }
      if (f >= 0 && f < 18446744073709551616.0 && (double)(uint64_t)f == f) {
        n->num |= TPL_NUM_UINT;
        n->u = (uint64_t)f;
      }
    }
  }
  if (!n->num) {
    buf_t b = BUF_INIT;
    tpl_fmt_quote(&b, text, len);
    char *m = tpl_arena_strndup(P->a, b.data ? b.data : "", b.len);
    buf_free(&b);
    if (!m) p_fail(P, TPL_ENOMEM);
    p_errorf(P, "illegal number syntax: %s", m);
  }
  return n;
}

/* ---- grammar ---- */

static tpl_node_t *p_pipeline(parser_t *P, const char *context, item_type_t end);
static tpl_node_t *p_item_list(parser_t *P, tpl_node_t **next);
static tpl_node_t *p_text_or_action(parser_t *P);
static tpl_node_t *p_if(parser_t *P);
static tpl_node_t *p_with(parser_t *P);

static tpl_node_t *p_term(parser_t *P) {
  item_t tok = *p_next_nonspace(P);
  switch (tok.typ) {
  case IT_IDENTIFIER: {
    const tpl_func_t *fn = P->set->funcs ? tpl_funcs_find(P->set->funcs, tok.val, tok.len) : NULL;
    int builtin = fn ? -1 : tpl__builtin_find(tok.val, tok.len);
    if (!fn && builtin < 0) p_errorf(P, "function \"%.*s\" not defined", (int)tok.len, tok.val);
    tpl_node_t *n = p_node(P, TPL_N_IDENT, tok.pos);
    n->str = tok.val;
    n->slen = tok.len;
    n->fn = fn;
    n->builtin = builtin;
    return n;
  }
  case IT_DOT: return p_node(P, TPL_N_DOT, tok.pos);
  case IT_NIL: return p_node(P, TPL_N_NIL, tok.pos);
  case IT_VARIABLE: {
    tpl_node_t *v = new_variable(P, tok.pos, tok.val, tok.len);
    for (size_t i = P->p.vbase; i < P->p.nvars; i++)
      if (P->vars[i].len == v->ilens[0] && memcmp(P->vars[i].name, v->idents[0], v->ilens[0]) == 0) return v;
    p_errorf(P, "undefined variable \"%.*s\"", (int)v->ilens[0], v->idents[0]);
  }
  case IT_FIELD: return new_field(P, tok.pos, tok.val, tok.len);
  case IT_BOOL: {
    tpl_node_t *n = p_node(P, TPL_N_BOOL, tok.pos);
    n->flag = tok.len == 4;
    return n;
  }
  case IT_CHAR_CONSTANT:
  case IT_COMPLEX:
  case IT_NUMBER: return new_number(P, tok);
  case IT_LEFT_PAREN: {
    if (P->p.stack_depth >= 10000) p_errorf(P, "max expression depth exceeded");
    P->p.stack_depth++;
    tpl_node_t *n = p_pipeline(P, "parenthesized pipeline", IT_RIGHT_PAREN);
    P->p.stack_depth--;
    return n;
  }
  case IT_STRING:
  case IT_RAW_STRING: {
    tpl_node_t *n = p_node(P, TPL_N_STRING, tok.pos);
    if (!unquote(P, tok.val, tok.len, &n->str, &n->slen)) p_errorf(P, "invalid syntax");
    n->quoted = tok.val;
    n->qlen = tok.len;
    return n;
  }
  default: break;
  }
  p_backup(P);
  return NULL;
}

static tpl_node_t *p_operand(parser_t *P) {
  tpl_node_t *node = p_term(P);
  if (!node) return NULL;
  if (p_peek(P)->typ != IT_FIELD) return node;
  /* Go builds a Chain of the field names that follow, then turns a field or
   * variable chain back into a field or variable of the joined names
   * (Go: newField(chain.Position(), chain.String())); we join the names
   * directly. */
  uint32_t cpos = p_peek(P)->pos;
  size_t k = 0;
  while (p_peek(P)->typ == IT_FIELD) {
    const item_t *f = p_next(P);
    if (k == P->idcap) {
      size_t nc = P->idcap ? P->idcap * 2 : 16;
      pvar_t *ni = realloc(P->ids, nc * sizeof(*ni));
      if (!ni) p_fail(P, TPL_ENOMEM);
      P->ids = ni;
      P->idcap = nc;
    }
    P->ids[k].name = f->val + 1;
    P->ids[k++].len = f->len - 1;
  }
  size_t base = 0;
  tpl_node_t *out;
  switch (node->type) {
  case TPL_N_FIELD:
  case TPL_N_VARIABLE:
    base = node->nidents;
    out = p_alloc(P, sizeof(*out) + (base + k) * (sizeof(char *) + sizeof(size_t)));
    out->type = node->type;
    break;
  case TPL_N_BOOL:
  case TPL_N_STRING:
  case TPL_N_NUMBER:
  case TPL_N_NIL:
  case TPL_N_DOT: {
    buf_t b = BUF_INIT, q = BUF_INIT;
    tpl__node_string(node, &b);
    tpl_fmt_quote(&q, b.data ? b.data : "", b.len);
    char *m = tpl_arena_strndup(P->a, q.data ? q.data : "", q.len);
    buf_free(&b);
    buf_free(&q);
    if (!m) p_fail(P, TPL_ENOMEM);
    p_errorf(P, "unexpected . after term %s", m);
  }
  default:
    out = p_alloc(P, sizeof(*out) + k * (sizeof(char *) + sizeof(size_t)));
    out->type = TPL_N_CHAIN;
    out->node = node;
  }
  out->pos = cpos;
  out->tree = P->p.t;
  out->idents = (const char **)(void *)(out + 1);
  out->ilens = (size_t *)(void *)(out->idents + base + k);
  for (size_t i = 0; i < base; i++) {
    out->idents[i] = node->idents[i];
    out->ilens[i] = node->ilens[i];
  }
  for (size_t i = 0; i < k; i++) {
    out->idents[base + i] = P->ids[i].name;
    out->ilens[base + i] = P->ids[i].len;
  }
  out->nidents = base + k;
  return out;
}

static tpl_node_t *p_command(parser_t *P) {
  uint32_t pos = p_peek_nonspace(P)->pos;
  size_t mark = P->nstk;
  for (;;) {
    p_peek_nonspace(P);
    tpl_node_t *op = p_operand(P);
    if (op) stk_push(P, op);
    const item_t *tok = p_next(P);
    if (tok->typ == IT_SPACE) continue;
    if (tok->typ == IT_RIGHT_DELIM || tok->typ == IT_RIGHT_PAREN) p_backup(P);
    else if (tok->typ != IT_PIPE) p_unexpected(P, *tok, "operand");
    break;
  }
  if (P->nstk == mark) p_errorf(P, "empty command");
  return stk_pop_node(P, TPL_N_COMMAND, pos, mark, 0);
}

static void check_pipeline(parser_t *P, tpl_node_t *pipe, const char *context) {
  if (pipe->kids.n == 0) p_errorf(P, "missing value for %s", context);
  for (size_t i = 1; i < pipe->kids.n; i++) {
    switch (pipe->kids.v[i]->kids.v[0]->type) {
    case TPL_N_BOOL: case TPL_N_DOT: case TPL_N_NIL: case TPL_N_NUMBER: case TPL_N_STRING:
      p_errorf(P, "non executable command in pipeline stage %zu", i + 1);
    }
  }
}

/* Continues p_item_list or p_pipeline on a new stack segment. An error
 * longjmps only within that segment, then again from the caller's side. */
typedef struct p_jump_s {
  parser_t *P;
  bool pipeline, failed;
  const char *context;
  item_type_t end;
  tpl_node_t **next;
  tpl_node_t *result;
} p_jump_t;

static int p_jump_tramp(void *arg) {
  p_jump_t *j = arg;
  parser_t *P = j->P;
  jmp_buf saved;
  memcpy(saved, P->jb, sizeof saved);
  if (setjmp(P->jb) == 0) j->result = j->pipeline ? p_pipeline(P, j->context, j->end) : p_item_list(P, j->next);
  else j->failed = true;
  memcpy(P->jb, saved, sizeof saved);
  return 0;
}

static tpl_node_t *p_on_new_stack(parser_t *P, p_jump_t *j) {
  int rc;
  int r = tpl__stack_call(&P->stack, p_jump_tramp, j, &rc);
  if (r == TPL_ELIMIT) p_errorf(P, "template nesting too deep (stack limit of %zu bytes exhausted)", P->stack.max);
  if (r) p_fail(P, TPL_ENOMEM);
  if (j->failed) longjmp(P->jb, 1);
  return j->result;
}

static tpl_node_t *p_pipeline(parser_t *P, const char *context, item_type_t end) {
  if (tpl__stack_low(&P->stack)) {
    p_jump_t j = {.P = P, .pipeline = true, .context = context, .end = end};
    return p_on_new_stack(P, &j);
  }
  uint32_t pos = p_peek_nonspace(P)->pos;
  bool is_range = strcmp(context, "range") == 0, assign = false;
  size_t mark = P->nstk;
decls:;
  item_t v = *p_peek_nonspace(P);
  if (v.typ == IT_VARIABLE) {
    p_next(P);
    item_t after = *p_peek(P);
    item_t next = *p_peek_nonspace(P);
    if (next.typ == IT_ASSIGN || next.typ == IT_DECLARE) {
      assign = next.typ == IT_ASSIGN;
      p_next_nonspace(P);
      stk_push(P, new_variable(P, v.pos, v.val, v.len));
      vars_push(P, v.val, v.len);
    } else if (next.typ == IT_CHAR && next.len == 1 && next.val[0] == ',') {
      p_next_nonspace(P);
      stk_push(P, new_variable(P, v.pos, v.val, v.len));
      vars_push(P, v.val, v.len);
      if (is_range && P->nstk - mark < 2) {
        item_type_t pt = p_peek_nonspace(P)->typ;
        if (pt == IT_VARIABLE || pt == IT_RIGHT_DELIM || pt == IT_RIGHT_PAREN) goto decls;
        p_errorf(P, "range can only initialize variables");
      }
      p_errorf(P, "too many declarations in %s", context);
    } else if (after.typ == IT_SPACE) {
      p_backup3(P, v, after);
    } else {
      p_backup2(P, v);
    }
  }
  size_t ndecl = P->nstk - mark; /* the declarations stay below the commands */
  for (;;) {
    const item_t *t = p_next_nonspace(P);
    if (t->typ == end) {
      tpl_node_t *pipe = stk_pop_node(P, TPL_N_PIPE, pos, mark, ndecl);
      pipe->flag = assign;
      check_pipeline(P, pipe, context);
      return pipe;
    }
    switch (t->typ) {
    case IT_BOOL: case IT_CHAR_CONSTANT: case IT_COMPLEX: case IT_DOT: case IT_FIELD: case IT_IDENTIFIER:
    case IT_NUMBER: case IT_NIL: case IT_RAW_STRING: case IT_STRING: case IT_VARIABLE: case IT_LEFT_PAREN:
      p_backup(P);
      stk_push(P, p_command(P));
      break;
    default: p_unexpected(P, *t, context);
    }
  }
}

static tpl_node_t *p_item_list(parser_t *P, tpl_node_t **next) {
  if (tpl__stack_low(&P->stack)) {
    p_jump_t j = {.P = P, .next = next};
    return p_on_new_stack(P, &j);
  }
  uint32_t pos = p_peek_nonspace(P)->pos;
  size_t mark = P->nstk;
  while (p_peek_nonspace(P)->typ != IT_EOF) {
    tpl_node_t *n = p_text_or_action(P);
    if (n->type == TPL_N_END || n->type == TPL_N_ELSE) {
      *next = n;
      return stk_pop_node(P, TPL_N_LIST, pos, mark, 0);
    }
    stk_push(P, n);
  }
  p_errorf(P, "unexpected EOF");
}

static void p_control(parser_t *P, const char *context, tpl_node_t *n) {
  size_t mark = P->p.nvars;
  tpl_node_t *pipe = p_pipeline(P, context, IT_RIGHT_DELIM);
  bool is_range = strcmp(context, "range") == 0;
  if (is_range) P->p.range_depth++;
  tpl_node_t *next = NULL;
  tpl_node_t *list = p_item_list(P, &next);
  if (is_range) P->p.range_depth--;
  tpl_node_t *else_list = NULL;
  if (next->type == TPL_N_ELSE) {
    if (strcmp(context, "if") == 0 && p_peek(P)->typ == IT_IF) {
      p_next(P);
      else_list = p_list_of(P, next->pos, p_if(P));
    } else if (strcmp(context, "with") == 0 && p_peek(P)->typ == IT_WITH) {
      p_next(P);
      else_list = p_list_of(P, next->pos, p_with(P));
    } else {
      else_list = p_item_list(P, &next);
      if (next->type != TPL_N_END) p_errorf(P, "expected end; found %s", next->type == TPL_N_ELSE ? "{{else}}" : "{{end}}");
    }
  }
  P->p.nvars = mark;
  n->pos = pipe->pos;
  n->pipe = pipe;
  n->list = list;
  n->else_list = else_list;
}

static tpl_node_t *p_if(parser_t *P) {
  tpl_node_t *n = p_node(P, TPL_N_IF, 0);
  p_control(P, "if", n);
  return n;
}
static tpl_node_t *p_with(parser_t *P) {
  tpl_node_t *n = p_node(P, TPL_N_WITH, 0);
  p_control(P, "with", n);
  return n;
}
static tpl_node_t *p_range(parser_t *P) {
  tpl_node_t *n = p_node(P, TPL_N_RANGE, 0);
  p_control(P, "range", n);
  return n;
}

static bool is_empty_tree(const tpl_node_t *n) {
  if (!n) return true;
  switch (n->type) {
  case TPL_N_COMMENT: return true;
  case TPL_N_LIST:
    for (size_t i = 0; i < n->kids.n; i++)
      if (!is_empty_tree(n->kids.v[i])) return false;
    return true;
  case TPL_N_TEXT:
    for (size_t i = 0; i < n->slen; i++) {
      unsigned char c = (unsigned char)n->str[i];
      if (!(c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == 0x85 || c == 0xA0)) return false;
    }
    return true;
  default: return false;
  }
}

/* parse.Tree.add: register the tree in this parse's set. */
static void p_add(parser_t *P) {
  tpl_tree_t *t = P->p.t;
  size_t nl = strlen(t->name);
  tpl_value_t *old = tpl_map_get(&P->pending, t->name, nl);
  if (!old || is_empty_tree(((tpl_tree_t *)(void *)old->u.obj)->root)) {
    tpl_value_t v = {0};
    v.kind = TPL_OBJECT;
    v.u.obj = (tpl_object_t *)(void *)t;
    if (tpl_map_set(P->a, &P->pending, t->name, nl, v)) p_fail(P, TPL_ENOMEM);
    return;
  }
  if (!is_empty_tree(t->root)) {
    buf_t q = BUF_INIT;
    tpl_fmt_quote(&q, t->name, nl);
    char *m = tpl_arena_strndup(P->a, q.data ? q.data : "", q.len);
    buf_free(&q);
    if (!m) p_fail(P, TPL_ENOMEM);
    p_errorf(P, "template: multiple definition of template %s", m);
  }
}

static tpl_tree_t *new_tree(parser_t *P, const char *name, size_t nlen) {
  tpl_tree_t *t = p_alloc(P, sizeof(*t));
  t->name = tpl_arena_strndup(P->a, name, nlen);
  if (!t->name) p_fail(P, TPL_ENOMEM);
  t->parse_name = P->p.t ? P->p.t->parse_name : t->name;
  t->text = P->lex.input;
  t->text_len = P->lex.len;
  return t;
}

/* Starts a nested tree (define/block), saving the current one. */
static ptree_t p_start_tree(parser_t *P, tpl_tree_t *t) {
  ptree_t saved = P->p;
  memset(&P->p, 0, sizeof P->p);
  P->p.t = t;
  P->p.vbase = P->p.nvars = saved.nvars;
  vars_push(P, "$", 1);
  return saved;
}

static char *p_template_name(parser_t *P, item_t tok, const char *context, size_t *len) {
  if (tok.typ != IT_STRING && tok.typ != IT_RAW_STRING) p_unexpected(P, tok, context);
  const char *s;
  if (!unquote(P, tok.val, tok.len, &s, len)) p_errorf(P, "invalid syntax");
  return (char *)s;
}

static tpl_node_t *p_block(parser_t *P) {
  const char *context = "block clause";
  item_t tok = *p_next_nonspace(P);
  size_t nlen;
  char *name = p_template_name(P, tok, context, &nlen);
  tpl_node_t *pipe = p_pipeline(P, context, IT_RIGHT_DELIM);
  tpl_tree_t *bt = new_tree(P, name, nlen);
  ptree_t saved = p_start_tree(P, bt);
  tpl_node_t *end = NULL;
  bt->root = p_item_list(P, &end);
  if (end->type != TPL_N_END) {
    P->p = saved;
    p_errorf(P, "unexpected %s in %s", "{{else}}", context);
  }
  p_add(P);
  P->p = saved;
  tpl_node_t *n = p_node(P, TPL_N_TEMPLATE, tok.pos);
  n->str = name;
  n->slen = nlen;
  n->pipe = pipe;
  return n;
}

static tpl_node_t *p_template(parser_t *P) {
  const char *context = "template clause";
  item_t tok = *p_next_nonspace(P);
  size_t nlen;
  char *name = p_template_name(P, tok, context, &nlen);
  tpl_node_t *pipe = NULL;
  if (p_next_nonspace(P)->typ != IT_RIGHT_DELIM) {
    p_backup(P);
    pipe = p_pipeline(P, context, IT_RIGHT_DELIM);
  }
  tpl_node_t *n = p_node(P, TPL_N_TEMPLATE, tok.pos);
  n->str = name;
  n->slen = nlen;
  n->pipe = pipe;
  return n;
}

static tpl_node_t *p_action(parser_t *P) {
  item_t tok = *p_next_nonspace(P);
  switch (tok.typ) {
  case IT_BLOCK: return p_block(P);
  case IT_BREAK:
  case IT_CONTINUE: {
    bool brk = tok.typ == IT_BREAK;
    item_t t2 = *p_next_nonspace(P);
    if (t2.typ != IT_RIGHT_DELIM) p_unexpected(P, t2, brk ? "{{break}}" : "{{continue}}");
    if (P->p.range_depth == 0) p_errorf(P, "%s outside {{range}}", brk ? "{{break}}" : "{{continue}}");
    return p_node(P, brk ? TPL_N_BREAK : TPL_N_CONTINUE, tok.pos);
  }
  case IT_ELSE: {
    item_t pk = *p_peek_nonspace(P);
    if (pk.typ == IT_IF || pk.typ == IT_WITH) return p_node(P, TPL_N_ELSE, pk.pos);
    item_t t2 = p_expect(P, IT_RIGHT_DELIM, "else");
    return p_node(P, TPL_N_ELSE, t2.pos);
  }
  case IT_END: {
    item_t t2 = p_expect(P, IT_RIGHT_DELIM, "end");
    return p_node(P, TPL_N_END, t2.pos);
  }
  case IT_IF: return p_if(P);
  case IT_RANGE: return p_range(P);
  case IT_TEMPLATE: return p_template(P);
  case IT_WITH: return p_with(P);
  default: break;
  }
  p_backup(P);
  tpl_node_t *n = p_node(P, TPL_N_ACTION, p_peek(P)->pos);
  n->pipe = p_pipeline(P, "command", IT_RIGHT_DELIM);
  return n;
}

static tpl_node_t *p_text_or_action(parser_t *P) {
  item_t tok = *p_next_nonspace(P);
  switch (tok.typ) {
  case IT_TEXT: {
    tpl_node_t *n = p_node(P, TPL_N_TEXT, tok.pos);
    n->str = tok.val;
    n->slen = tok.len;
    return n;
  }
  case IT_LEFT_DELIM: {
    P->p.action_line = tok.line;
    tpl_node_t *n = p_action(P);
    P->p.action_line = 0;
    return n;
  }
  case IT_COMMENT: return p_node(P, TPL_N_COMMENT, tok.pos);
  default: p_unexpected(P, tok, "input");
  }
}

static void p_definition(parser_t *P) {
  const char *context = "define clause";
  item_t tok = *p_next_nonspace(P);
  if (tok.typ != IT_STRING && tok.typ != IT_RAW_STRING) p_unexpected(P, tok, context);
  const char *name;
  size_t nlen;
  if (!unquote(P, tok.val, tok.len, &name, &nlen)) p_errorf(P, "invalid syntax");
  P->p.t->name = name;
  p_expect(P, IT_RIGHT_DELIM, context);
  tpl_node_t *end = NULL;
  P->p.t->root = p_item_list(P, &end);
  if (end->type != TPL_N_END) p_errorf(P, "unexpected %s in %s", "{{else}}", context);
  p_add(P);
}

static void p_parse(parser_t *P) {
  tpl_tree_t *top = P->p.t;
  uint32_t pos = p_peek(P)->pos;
  size_t mark = P->nstk;
  while (p_peek(P)->typ != IT_EOF) {
    if (p_peek(P)->typ == IT_LEFT_DELIM) {
      item_t delim = *p_next(P);
      if (p_next_nonspace(P)->typ == IT_DEFINE) {
        tpl_tree_t *dt = new_tree(P, "definition", 10);
        ptree_t saved = p_start_tree(P, dt);
        p_definition(P);
        P->p = saved;
        continue;
      }
      p_backup2(P, delim);
    }
    tpl_node_t *n = p_text_or_action(P);
    if (n->type == TPL_N_END || n->type == TPL_N_ELSE)
      p_errorf(P, "unexpected %s", n->type == TPL_N_END ? "{{end}}" : "{{else}}");
    stk_push(P, n);
  }
  top->root = stk_pop_node(P, TPL_N_LIST, pos, mark, 0);
}

/* 64-bit FNV-1a of a text, eight bytes at a time. */
static uint64_t parsed_hash(const char *p, size_t n) {
  uint64_t h = 14695981039346656037u;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = (h ^ w) * 1099511628211u;
  }
  for (; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211u;
  return h;
}

/* The earlier parse of exactly these bytes whose trees a parse under name may share: none of its
 * defined templates is called name, as its top tree is not (the rules of adding would differ). */
static const tpl__parsed_t *parsed_find(const tpl_set_t *set, const char *name, const char *text, size_t len,
                                        uint64_t h) {
  size_t nl = strlen(name);
  for (const tpl__parsed_t *pp = set->parsed; pp; pp = pp->next) {
    if (pp->hash != h || pp->len != len || memcmp(pp->text, text, len)) continue;
    for (size_t i = 0; i < pp->n; i++)
      if (i != pp->top && pp->klens[i] == nl && !memcmp(pp->keys[i], name, nl)) return NULL;
    return pp;
  }
  return NULL;
}

/* Notes the parse P made of its text (the set's copy) under the top tree top. */
static int parsed_keep(parser_t *P, const tpl_tree_t *top, uint64_t h) {
  tpl_arena_t *a = P->a;
  size_t n = P->pending.len;
  tpl__parsed_t *pp = tpl_arena_alloc(a, sizeof *pp);
  if (!pp || !(pp->keys = tpl_arena_alloc(a, (n + 1) * sizeof *pp->keys)) ||
      !(pp->klens = tpl_arena_alloc(a, (n + 1) * sizeof *pp->klens)) ||
      !(pp->trees = tpl_arena_alloc(a, (n + 1) * sizeof *pp->trees)))
    return TPL_ENOMEM;
  pp->text = P->lex.input;
  pp->len = P->lex.len;
  pp->hash = h;
  pp->n = n;
  pp->top = SIZE_MAX;
  for (size_t i = 0; i < n; i++) {
    const tpl_map_entry_t *e = &P->pending.ents[i];
    pp->keys[i] = e->key;
    pp->klens[i] = e->klen;
    pp->trees[i] = (const tpl_tree_t *)(const void *)e->val.u.obj;
    if (pp->trees[i] == top) pp->top = i;
  }
  if (pp->top == SIZE_MAX) return 0; /* a define took the top's name: not shared */
  pp->next = P->set->parsed;
  P->set->parsed = pp;
  return 0;
}

/* tpl_set_parse of a text parsed before (pp): trees of their own (names, the parse name for
 * errors) on the earlier parse's nodes, added as a parse adds them. */
static int parsed_reuse(tpl_set_t *set, const tpl__parsed_t *pp, const char *name) {
  char *pn = tpl_arena_strndup(set->arena, name, strlen(name));
  if (!pn) return TPL_ENOMEM;
  for (size_t i = 0; i < pp->n; i++) {
    tpl_tree_t *t = tpl_arena_alloc(set->arena, sizeof *t);
    if (!t) return TPL_ENOMEM;
    *t = *pp->trees[i];
    t->parse_name = pn;
    if (i == pp->top) t->name = pn;
    size_t kl = i == pp->top ? strlen(pn) : pp->klens[i];
    if (is_empty_tree(t->root) && tpl__set_lookup(set, t->name, kl)) continue;
    tpl_value_t v = {0};
    v.kind = TPL_OBJECT;
    v.u.obj = (tpl_object_t *)(void *)t;
    if (tpl_map_set_key(set->arena, &set->trees, t->name, kl, v)) return TPL_ENOMEM;
  }
  return 0;
}

int tpl_set_parse(tpl_set_t *set, const char *name, const char *text, size_t len, buf_t *err) {
  if (len > UINT32_MAX) { /* positions are 32-bit */
    if (err) {
      buf_reset(err);
      buf_printf(err, "template: %s: text of %zu bytes is too long (at most %u)", name, len, (unsigned)UINT32_MAX);
    }
    return TPL_EPARSE;
  }
  uint64_t h = parsed_hash(text, len);
  const tpl__parsed_t *pp = parsed_find(set, name, text, len, h);
  if (pp) {
    int rc = parsed_reuse(set, pp, name);
    if (rc && err) {
      buf_reset(err);
      buf_printf(err, "template: %s: out of memory", name);
    }
    return rc;
  }
  parser_t *P = calloc(1, sizeof(*P));
  if (!P) return TPL_ENOMEM;
  P->text_hash = h;
  buf_t local = BUF_INIT;
  P->set = set;
  P->a = set->arena;
  P->err = err ? err : &local;
  char *txt = tpl_arena_strndup(set->arena, text, len);
  if (!txt) {
    free(P);
    return TPL_ENOMEM;
  }
  P->lex.input = txt;
  P->lex.len = len;
  P->lex.line = P->lex.start_line = 1;
  P->lex.arena = set->arena;
  P->lex.break_ok = !has_function(P, "break", 5);
  P->lex.continue_ok = !has_function(P, "continue", 8);
  int rc = 0;
  tpl__stack_init(&P->stack, 0);
  if (setjmp(P->jb) == 0) {
    tpl_tree_t *top = new_tree(P, name, strlen(name));
    top->parse_name = top->name;
    memset(&P->p, 0, sizeof P->p);
    P->p.t = top;
    vars_push(P, "$", 1);
    p_parse(P);
    P->p.t = top;
    p_add(P);
    /* AddParseTree for each: an empty tree does not replace an existing one. */
    for (size_t i = 0; i < P->pending.len; i++) {
      tpl_map_entry_t *e = &P->pending.ents[i];
      tpl_tree_t *t = (tpl_tree_t *)(void *)e->val.u.obj;
      if (is_empty_tree(t->root) && tpl__set_lookup(set, e->key, e->klen)) continue;
      if (tpl_map_set(set->arena, &set->trees, e->key, e->klen, e->val)) p_fail(P, TPL_ENOMEM);
    }
    if (parsed_keep(P, top, P->text_hash)) p_fail(P, TPL_ENOMEM);
  } else {
    rc = P->rc;
    if (rc == TPL_ENOMEM && err) {
      buf_reset(err);
      buf_printf(err, "template: %s: out of memory", name);
    }
  }
  tpl__stack_fini(&P->stack);
  buf_free(&local);
  free(P->stk);
  free(P->vars);
  free(P->ids);
  free(P);
  return rc;
}

/* ---- node strings (Go's Node.String) ---- */

static int node_string_d(const tpl_node_t *n, buf_t *b, int d) {
  int rc = 0;
  /* Bounded recursion: absurdly deep trees print elided (Go prints them whole). */
  if (d > 3000) return buf_puts(b, "...");
  switch (n->type) {
  case TPL_N_LIST:
    for (size_t i = 0; i < n->kids.n; i++) rc |= node_string_d(n->kids.v[i], b, d + 1);
    break;
  case TPL_N_TEXT: rc |= buf_append(b, n->str, n->slen); break;
  case TPL_N_COMMENT: rc |= buf_puts(b, "{{/* */}}"); break;
  case TPL_N_ACTION:
    rc |= buf_puts(b, "{{");
    rc |= node_string_d(n->pipe, b, d + 1);
    rc |= buf_puts(b, "}}");
    break;
  case TPL_N_IF:
  case TPL_N_RANGE:
  case TPL_N_WITH:
    rc |= buf_puts(b, n->type == TPL_N_IF ? "{{if " : n->type == TPL_N_RANGE ? "{{range " : "{{with ");
    rc |= node_string_d(n->pipe, b, d + 1);
    rc |= buf_puts(b, "}}");
    rc |= node_string_d(n->list, b, d + 1);
    if (n->else_list) {
      rc |= buf_puts(b, "{{else}}");
      rc |= node_string_d(n->else_list, b, d + 1);
    }
    rc |= buf_puts(b, "{{end}}");
    break;
  case TPL_N_TEMPLATE:
    rc |= buf_puts(b, "{{template ");
    rc |= tpl_fmt_quote(b, n->str, n->slen);
    if (n->pipe) {
      rc |= buf_putc(b, ' ');
      rc |= node_string_d(n->pipe, b, d + 1);
    }
    rc |= buf_puts(b, "}}");
    break;
  case TPL_N_BREAK: rc |= buf_puts(b, "{{break}}"); break;
  case TPL_N_CONTINUE: rc |= buf_puts(b, "{{continue}}"); break;
  case TPL_N_PIPE:
    for (size_t i = 0; i < n->decl.n; i++) {
      if (i) rc |= buf_puts(b, ", ");
      rc |= node_string_d(n->decl.v[i], b, d + 1);
    }
    if (n->decl.n) rc |= buf_puts(b, n->flag ? " = " : " := ");
    for (size_t i = 0; i < n->kids.n; i++) {
      if (i) rc |= buf_puts(b, " | ");
      rc |= node_string_d(n->kids.v[i], b, d + 1);
    }
    break;
  case TPL_N_COMMAND:
    for (size_t i = 0; i < n->kids.n; i++) {
      if (i) rc |= buf_putc(b, ' ');
      if (n->kids.v[i]->type == TPL_N_PIPE) {
        rc |= buf_putc(b, '(');
        rc |= node_string_d(n->kids.v[i], b, d + 1);
        rc |= buf_putc(b, ')');
      } else {
        rc |= node_string_d(n->kids.v[i], b, d + 1);
      }
    }
    break;
  case TPL_N_FIELD:
    for (size_t i = 0; i < n->nidents; i++) {
      rc |= buf_putc(b, '.');
      rc |= buf_append(b, n->idents[i], n->ilens[i]);
    }
    break;
  case TPL_N_VARIABLE:
    for (size_t i = 0; i < n->nidents; i++) {
      if (i) rc |= buf_putc(b, '.');
      rc |= buf_append(b, n->idents[i], n->ilens[i]);
    }
    break;
  case TPL_N_CHAIN:
    if (n->node->type == TPL_N_PIPE) {
      rc |= buf_putc(b, '(');
      rc |= node_string_d(n->node, b, d + 1);
      rc |= buf_putc(b, ')');
    } else {
      rc |= node_string_d(n->node, b, d + 1);
    }
    for (size_t i = 0; i < n->nidents; i++) {
      rc |= buf_putc(b, '.');
      rc |= buf_append(b, n->idents[i], n->ilens[i]);
    }
    break;
  case TPL_N_IDENT: rc |= buf_append(b, n->str, n->slen); break;
  case TPL_N_DOT: rc |= buf_putc(b, '.'); break;
  case TPL_N_NIL: rc |= buf_puts(b, "nil"); break;
  case TPL_N_BOOL: rc |= buf_puts(b, n->flag ? "true" : "false"); break;
  case TPL_N_NUMBER: rc |= buf_append(b, n->str, n->slen); break;
  case TPL_N_STRING: rc |= buf_append(b, n->quoted, n->qlen); break;
  case TPL_N_END: rc |= buf_puts(b, "{{end}}"); break;
  case TPL_N_ELSE: rc |= buf_puts(b, "{{else}}"); break;
  }
  return rc;
}

int tpl__node_string(const tpl_node_t *n, buf_t *b) { return node_string_d(n, b, 0); }
