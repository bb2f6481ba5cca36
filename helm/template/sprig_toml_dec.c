/* Helm's fromToml: BurntSushi/toml v1.6.0's toml.Unmarshal into
 * map[string]interface{}, as a port of its lexer (lex.go: the same state
 * functions, item queue, line counting and error positions) and parser
 * (parse.go: contexts, implicit tables, arrays of tables, duplicate-key
 * rules, number and escape checks), so that results and the error texts
 * (`toml: line N (last key "k"): …`, stored under "Error") are the library's.
 * Integers are int64, floats float64, datetimes time.Time (sprig_date.c). */
#include <setjmp.h>
#include <string.h>

#include "helm/template/sprig_internal.h"
#include "helm/template/unicode.h"


enum {
  I_ERROR, I_EOF, I_TEXT, I_STRING, I_STRING_ESC, I_RAW_STRING, I_ML_STRING, I_RAW_ML_STRING, I_BOOL, I_INTEGER,
  I_FLOAT, I_DATETIME, I_ARRAY, I_ARRAY_END, I_TABLE_START, I_TABLE_END, I_ARRAY_TABLE_START, I_ARRAY_TABLE_END,
  I_KEY_START, I_KEY_END, I_COMMENT_START, I_INLINE_START, I_INLINE_END
};

/* tomlType names (typeString) reduced to what isArray needs. */
enum { T_OTHER = 1, T_ARRAY, T_HASH, T_ARRAY_HASH };

typedef struct {
  int typ;
  const char *val;
  size_t n;
  int line, start, len;
  const char *err; /* I_ERROR: message (arena) */
} item_t;

typedef struct lexer_s lexer_t;
typedef void *(*state_fn)(lexer_t *);

struct lexer_s {
  const char *in;
  size_t n;
  int start, pos, line;
  state_fn state;
  item_t q[16];
  int qh, qn;
  bool esc;
  int prev[4], nprev;
  bool at_eof;
  state_fn stack[1100];
  int sp;
  bool overflow; /* stack or queue overflow: reported as an error */
  tpl_arena_t *a;
  bool bug; /* next() after EOF: the library panics */
};

#define EOF_R 0
#define RUNE_ERROR 0xFFFD

static char *afmt(tpl_arena_t *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *afmt(tpl_arena_t *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  buf_t b = BUF_INIT;
  buf_vprintf(&b, fmt, ap);
  va_end(ap);
  char *r = tpl_arena_strndup(a, b.data ? b.data : "", b.len);
  buf_free(&b);
  return r;
}

/* Go's %q of a rune (strconv.QuoteRune). */
static char *qrune(tpl_arena_t *a, int32_t r) {
  buf_t b = BUF_INIT;
  tpl_value_t v = tpl_value_int((int64_t)r);
  tpl_fmt_sprintf(&b, "%q", 2, &v, 1);
  char *s = tpl_arena_strndup(a, b.data ? b.data : "", b.len);
  buf_free(&b);
  return s;
}
/* Go's %q of a string. */
static char *qstr(tpl_arena_t *a, const char *p, size_t n) {
  buf_t b = BUF_INIT;
  tpl_fmt_quote(&b, p, n);
  char *s = tpl_arena_strndup(a, b.data ? b.data : "", b.len);
  buf_free(&b);
  return s;
}

static void push_item(lexer_t *lx, item_t it) {
  if (lx->qn == 16) {
    lx->overflow = true;
    return;
  }
  lx->q[(lx->qh + lx->qn) % 16] = it;
  lx->qn++;
}

static item_t cur_pos(const lexer_t *lx) {
  item_t it = {0};
  it.line = lx->line;
  it.start = lx->start;
  it.len = lx->pos - lx->start;
  if (it.len <= 0) it.len = 1;
  return it;
}

static void *lx_error(lexer_t *lx, const char *msg);

static void emit(lexer_t *lx, int typ) {
  if (lx->start > lx->pos) {
    lx_error(lx, afmt(lx->a, "invalid UTF-8 byte: 0x%02x", (unsigned char)lx->in[lx->pos]));
    return;
  }
  item_t it = cur_pos(lx);
  it.typ = typ;
  it.val = lx->in + lx->start;
  it.n = (size_t)(lx->pos - lx->start);
  push_item(lx, it);
  lx->start = lx->pos;
}

static void emit_trim(lexer_t *lx, int typ) {
  item_t it = cur_pos(lx);
  it.typ = typ;
  const char *p = lx->in + lx->start;
  size_t n = (size_t)(lx->pos - lx->start);
  while (n && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\v' || *p == '\f')) p++, n--;
  while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\n' || p[n - 1] == '\r' || p[n - 1] == '\v' ||
               p[n - 1] == '\f'))
    n--;
  it.val = p;
  it.n = n;
  push_item(lx, it);
  lx->start = lx->pos;
}

static void *err_prev_line(lexer_t *lx, const char *msg) {
  item_t it = cur_pos(lx);
  it.line--;
  it.len = 1;
  it.start = lx->pos - 1;
  it.typ = I_ERROR;
  it.err = msg;
  push_item(lx, it);
  return NULL;
}

static void *lx_error(lexer_t *lx, const char *msg) {
  if (lx->at_eof) return err_prev_line(lx, msg);
  item_t it = cur_pos(lx);
  it.typ = I_ERROR;
  it.err = msg;
  push_item(lx, it);
  return NULL;
}

static void *errorf(lexer_t *lx, const char *msg) {
  item_t it = cur_pos(lx);
  if (lx->at_eof) {
    if (lx->pos >= 1 && lx->in[lx->pos - 1] == '\n') it.line--;
    it.len = 1;
    it.start = lx->pos - 1;
  }
  it.typ = I_ERROR;
  it.err = msg;
  push_item(lx, it);
  return NULL;
}

static bool is_control(int32_t r) {
  if (r == '\t' || r == '\r' || r == '\n') return false;
  return (r >= 0 && r <= 0x1f) || r == 0x7f;
}

static int32_t next(lexer_t *lx) {
  if (lx->at_eof) {
    lx->bug = true;
    return EOF_R;
  }
  if ((size_t)lx->pos >= lx->n) {
    lx->at_eof = true;
    return EOF_R;
  }
  if (lx->in[lx->pos] == '\n') lx->line++;
  lx->prev[3] = lx->prev[2];
  lx->prev[2] = lx->prev[1];
  lx->prev[1] = lx->prev[0];
  if (lx->nprev < 4) lx->nprev++;
  int32_t r;
  int w = (int)tpl__utf8_decode(lx->in + lx->pos, lx->n - (size_t)lx->pos, &r);
  if (r == RUNE_ERROR && w == 1) {
    lx_error(lx, afmt(lx->a, "invalid UTF-8 byte: 0x%02x", (unsigned char)lx->in[lx->pos]));
    return RUNE_ERROR;
  }
  if (is_control(r) || (r == '\r' && ((size_t)lx->pos + 1 == lx->n || lx->in[lx->pos + 1] != '\n'))) {
    item_t it = cur_pos(lx);
    it.start = lx->pos - 1;
    it.len = 1;
    it.typ = I_ERROR;
    it.err = afmt(lx->a, "TOML files cannot contain control characters: '0x%02x'", (unsigned)r);
    push_item(lx, it);
    return RUNE_ERROR;
  }
  lx->prev[0] = w;
  lx->pos += w;
  return r;
}

static void ignore(lexer_t *lx) { lx->start = lx->pos; }

static void backup(lexer_t *lx) {
  if (lx->at_eof) {
    lx->at_eof = false;
    return;
  }
  if (lx->nprev < 1) {
    lx->bug = true;
    return;
  }
  int w = lx->prev[0];
  lx->prev[0] = lx->prev[1];
  lx->prev[1] = lx->prev[2];
  lx->prev[2] = lx->prev[3];
  lx->nprev--;
  lx->pos -= w;
  if ((size_t)lx->pos < lx->n && lx->in[lx->pos] == '\n') lx->line--;
}

static bool accept(lexer_t *lx, int32_t valid) {
  if (next(lx) == valid) return true;
  backup(lx);
  return false;
}

static int32_t peek(lexer_t *lx) {
  int32_t r = next(lx);
  backup(lx);
  return r;
}

static bool is_ws(int32_t r) { return r == '\t' || r == ' '; }
static bool is_nl(int32_t r) { return r == '\n' || r == '\r'; }
static bool is_digit(int32_t r) { return r >= '0' && r <= '9'; }
static bool is_hex(int32_t r) { return (r >= '0' && r <= '9') || ((r | 0x20) >= 'a' && (r | 0x20) <= 'f'); }
static bool is_bare(int32_t r) {
  return (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '_' || r == '-';
}

static void skip_ws(lexer_t *lx) {
  for (;;) {
    int32_t r = next(lx);
    if (is_ws(r)) continue;
    backup(lx);
    ignore(lx);
    return;
  }
}

static void push(lexer_t *lx, state_fn s) {
  if (lx->sp == 1100) {
    lx->overflow = true;
    return;
  }
  lx->stack[lx->sp++] = s;
}
static void *pop(lexer_t *lx) {
  if (lx->sp == 0) {
    lx->bug = true;
    return NULL;
  }
  return (void *)lx->stack[--lx->sp];
}

#define S(fn) static void *fn(lexer_t *lx)
S(lex_top);
S(lex_top_end);
S(lex_table_start);
S(lex_table_end);
S(lex_array_table_end);
S(lex_table_name_start);
S(lex_table_name_end);
S(lex_bare_name);
S(lex_quoted_name);
S(lex_key_start);
S(lex_key_name_start);
S(lex_key_end);
S(lex_value);
S(lex_array_value);
S(lex_array_value_end);
S(lex_array_end);
S(lex_inline_value);
S(lex_inline_value_end);
S(lex_inline_end);
S(lex_string);
S(lex_ml_string);
S(lex_raw_string);
S(lex_raw_ml_string);
S(lex_ml_string_escape);
S(lex_string_escape);
S(lex_hex_escape);
S(lex_short_unicode);
S(lex_long_unicode);
S(lex_number_or_date_start);
S(lex_number_or_date);
S(lex_datetime);
S(lex_hex_integer);
S(lex_octal_integer);
S(lex_binary_integer);
S(lex_decimal_number);
S(lex_decimal_number_start);
S(lex_base_number_or_date);
S(lex_float);
S(lex_bool);
S(lex_comment_start);
S(lex_comment);

static void *ret(state_fn f) { return (void *)f; }

static const char *current(lexer_t *lx) { return tpl_arena_strndup(lx->a, lx->in + lx->start, (size_t)(lx->pos - lx->start)); }

S(lex_top) {
  int32_t r = next(lx);
  if (is_ws(r) || is_nl(r)) {
    ignore(lx);
    return ret(lex_top);
  }
  switch (r) {
  case '#': push(lx, lex_top); return ret(lex_comment_start);
  case '[': return ret(lex_table_start);
  case EOF_R:
    if (lx->pos > lx->start) return errorf(lx, "unexpected EOF");
    emit(lx, I_EOF);
    return NULL;
  }
  backup(lx);
  push(lx, lex_top_end);
  return ret(lex_key_start);
}

S(lex_top_end) {
  int32_t r = next(lx);
  if (r == '#') {
    push(lx, lex_top);
    return ret(lex_comment_start);
  }
  if (is_ws(r)) return ret(lex_top_end);
  if (is_nl(r)) {
    ignore(lx);
    return ret(lex_top);
  }
  if (r == EOF_R) {
    emit(lx, I_EOF);
    return NULL;
  }
  return errorf(lx, afmt(lx->a, "expected a top-level item to end with a newline, comment, or EOF, but got %s instead",
                         qrune(lx->a, r)));
}

S(lex_table_start) {
  if (peek(lx) == '[') {
    next(lx);
    emit(lx, I_ARRAY_TABLE_START);
    push(lx, lex_array_table_end);
  } else {
    emit(lx, I_TABLE_START);
    push(lx, lex_table_end);
  }
  return ret(lex_table_name_start);
}

S(lex_table_end) {
  emit(lx, I_TABLE_END);
  return ret(lex_top_end);
}

S(lex_array_table_end) {
  int32_t r = next(lx);
  if (r != ']')
    return errorf(lx, afmt(lx->a, "expected end of table array name delimiter ']', but got %s instead", qrune(lx->a, r)));
  emit(lx, I_ARRAY_TABLE_END);
  return ret(lex_top_end);
}

S(lex_table_name_start) {
  skip_ws(lx);
  int32_t r = peek(lx);
  if (r == ']' || r == EOF_R) return errorf(lx, "unexpected end of table name (table names cannot be empty)");
  if (r == '.') return errorf(lx, "unexpected table separator (table names cannot be empty)");
  if (r == '"' || r == '\'') {
    ignore(lx);
    push(lx, lex_table_name_end);
    return ret(lex_quoted_name);
  }
  push(lx, lex_table_name_end);
  return ret(lex_bare_name);
}

S(lex_table_name_end) {
  skip_ws(lx);
  int32_t r = next(lx);
  if (r == '.') {
    ignore(lx);
    return ret(lex_table_name_start);
  }
  if (r == ']') return pop(lx);
  return errorf(lx, afmt(lx->a, "expected '.' or ']' to end table name, but got %s instead", qrune(lx->a, r)));
}

S(lex_bare_name) {
  int32_t r = next(lx);
  if (is_bare(r)) return ret(lex_bare_name);
  backup(lx);
  emit(lx, I_TEXT);
  return pop(lx);
}

S(lex_quoted_name) {
  int32_t r = next(lx);
  if (r == '"') {
    ignore(lx);
    return ret(lex_string);
  }
  if (r == '\'') {
    ignore(lx);
    return ret(lex_raw_string);
  }
  if (is_ws(r)) {
    ignore(lx);
    return ret(lex_value);
  }
  if (r == EOF_R) return errorf(lx, "unexpected EOF; expected value");
  return errorf(lx, afmt(lx->a, "expected value but found %s instead", qrune(lx->a, r)));
}

S(lex_key_start) {
  skip_ws(lx);
  int32_t r = peek(lx);
  if (r == '=' || r == EOF_R) return errorf(lx, "unexpected '=': key name appears blank");
  if (r == '.') return errorf(lx, "unexpected '.': keys cannot start with a '.'");
  if (r == '"' || r == '\'') ignore(lx);
  emit(lx, I_KEY_START);
  return ret(lex_key_name_start);
}

S(lex_key_name_start) {
  skip_ws(lx);
  int32_t r = peek(lx);
  if (r == '"' || r == '\'') {
    ignore(lx);
    push(lx, lex_key_end);
    return ret(lex_quoted_name);
  }
  if (r == '=' || r == EOF_R) return errorf(lx, "unexpected '='");
  if (r == '.') return errorf(lx, "unexpected '.'");
  push(lx, lex_key_end);
  return ret(lex_bare_name);
}

S(lex_key_end) {
  skip_ws(lx);
  int32_t r = next(lx);
  if (is_ws(r)) {
    ignore(lx);
    return ret(lex_key_end);
  }
  if (r == EOF_R) return errorf(lx, "unexpected EOF; expected key separator '='");
  if (r == '.') {
    ignore(lx);
    return ret(lex_key_name_start);
  }
  if (r == '=') {
    emit(lx, I_KEY_END);
    ignore(lx);
    return ret(lex_value);
  }
  const char *m = afmt(lx->a, "expected '.' or '=', but got %s instead", qrune(lx->a, r));
  if (r == '\n') return err_prev_line(lx, m);
  return errorf(lx, m);
}

/* unicode.IsLetter for lexValue/lexBool. */
static bool is_letter(int32_t r) { return tpl_unicode_is_letter(r); }

S(lex_value) {
  int32_t r = next(lx);
  if (is_ws(r)) {
    ignore(lx);
    return ret(lex_value);
  }
  if (is_digit(r)) {
    backup(lx);
    return ret(lex_number_or_date_start);
  }
  switch (r) {
  case '[':
    ignore(lx);
    emit(lx, I_ARRAY);
    return ret(lex_array_value);
  case '{':
    ignore(lx);
    emit(lx, I_INLINE_START);
    return ret(lex_inline_value);
  case '"':
    if (accept(lx, '"')) {
      if (accept(lx, '"')) {
        ignore(lx);
        return ret(lex_ml_string);
      }
      backup(lx);
    }
    ignore(lx);
    return ret(lex_string);
  case '\'':
    if (accept(lx, '\'')) {
      if (accept(lx, '\'')) {
        ignore(lx);
        return ret(lex_raw_ml_string);
      }
      backup(lx);
    }
    ignore(lx);
    return ret(lex_raw_string);
  case '.': return errorf(lx, "floats must start with a digit, not '.'");
  case 'i':
  case 'n':
    if ((accept(lx, 'n') && accept(lx, 'f')) || (accept(lx, 'a') && accept(lx, 'n'))) {
      emit(lx, I_FLOAT);
      return pop(lx);
    }
    break;
  case '-':
  case '+': return ret(lex_decimal_number_start);
  }
  if (is_letter(r)) {
    backup(lx);
    return ret(lex_bool);
  }
  if (r == EOF_R) return errorf(lx, "unexpected EOF; expected value");
  const char *m = afmt(lx->a, "expected value but found %s instead", qrune(lx->a, r));
  if (r == '\n') return err_prev_line(lx, m);
  return errorf(lx, m);
}

S(lex_array_value) {
  int32_t r = next(lx);
  if (is_ws(r) || is_nl(r)) {
    ignore(lx);
    return ret(lex_array_value);
  }
  if (r == '#') {
    push(lx, lex_array_value);
    return ret(lex_comment_start);
  }
  if (r == ',') return errorf(lx, "unexpected comma");
  if (r == ']') return ret(lex_array_end);
  backup(lx);
  push(lx, lex_array_value_end);
  return ret(lex_value);
}

static const char *rune_or_eof(lexer_t *lx, int32_t r) {
  if (r == EOF_R) return "end of file";
  char u[8];
  int n = (int)tpl__utf8_encode(r, u);
  return afmt(lx->a, "'%.*s'", n, u);
}

S(lex_array_value_end) {
  int32_t r = next(lx);
  if (is_ws(r) || is_nl(r)) {
    ignore(lx);
    return ret(lex_array_value_end);
  }
  if (r == '#') {
    push(lx, lex_array_value_end);
    return ret(lex_comment_start);
  }
  if (r == ',') {
    ignore(lx);
    return ret(lex_array_value);
  }
  if (r == ']') return ret(lex_array_end);
  return errorf(lx, afmt(lx->a, "expected a comma (',') or array terminator (']'), but got %s", rune_or_eof(lx, r)));
}

S(lex_array_end) {
  ignore(lx);
  emit(lx, I_ARRAY_END);
  return pop(lx);
}

S(lex_inline_value) {
  int32_t r = next(lx);
  if (is_ws(r) || is_nl(r)) {
    ignore(lx);
    return ret(lex_inline_value);
  }
  if (r == '#') {
    push(lx, lex_inline_value);
    return ret(lex_comment_start);
  }
  if (r == ',') return errorf(lx, "unexpected comma");
  if (r == '}') return ret(lex_inline_end);
  backup(lx);
  push(lx, lex_inline_value_end);
  return ret(lex_key_start);
}

S(lex_inline_value_end) {
  int32_t r = next(lx);
  if (is_ws(r) || is_nl(r)) {
    ignore(lx);
    return ret(lex_inline_value_end);
  }
  if (r == '#') {
    push(lx, lex_inline_value_end);
    return ret(lex_comment_start);
  }
  if (r == ',') {
    ignore(lx);
    skip_ws(lx);
    if (peek(lx) == '}') return ret(lex_inline_value_end);
    return ret(lex_inline_value);
  }
  if (r == '}') return ret(lex_inline_end);
  return errorf(lx, afmt(lx->a, "expected a comma or an inline table terminator '}', but got %s instead",
                         rune_or_eof(lx, r)));
}

S(lex_inline_end) {
  ignore(lx);
  emit(lx, I_INLINE_END);
  return pop(lx);
}

S(lex_string) {
  int32_t r = next(lx);
  if (r == EOF_R) return errorf(lx, "unexpected EOF; expected '\"'");
  if (is_nl(r)) return err_prev_line(lx, "strings cannot contain newlines");
  if (r == '\\') {
    push(lx, lex_string);
    return ret(lex_string_escape);
  }
  if (r == '"') {
    backup(lx);
    if (lx->esc) {
      lx->esc = false;
      emit(lx, I_STRING_ESC);
    } else {
      emit(lx, I_STRING);
    }
    next(lx);
    ignore(lx);
    return pop(lx);
  }
  return ret(lex_string);
}

static bool has_suffix(lexer_t *lx, const char *suf) {
  size_t k = strlen(suf), n = (size_t)(lx->pos - lx->start);
  return n >= k && memcmp(lx->in + lx->pos - k, suf, k) == 0;
}

S(lex_ml_string) {
  int32_t r = next(lx);
  if (r == EOF_R) return errorf(lx, "unexpected EOF; expected '\"\"\"'");
  if (r == '\\') return ret(lex_ml_string_escape);
  if (r == '"') {
    if (accept(lx, '"')) {
      if (accept(lx, '"')) {
        if (peek(lx) == '"') {
          if (has_suffix(lx, "\"\"\"\"\"") && !has_suffix(lx, "\\\"\"\"\"\"")) return errorf(lx, "unexpected '\"\"\"\"\"\"'");
          backup(lx);
          backup(lx);
          return ret(lex_ml_string);
        }
        backup(lx);
        backup(lx);
        backup(lx);
        lx->esc = false;
        emit(lx, I_ML_STRING);
        next(lx);
        next(lx);
        next(lx);
        ignore(lx);
        return pop(lx);
      }
      backup(lx);
    }
  }
  return ret(lex_ml_string);
}

S(lex_raw_string) {
  int32_t r = next(lx);
  if (r == EOF_R) return errorf(lx, "unexpected EOF; expected \"'\"");
  if (is_nl(r)) return err_prev_line(lx, "strings cannot contain newlines");
  if (r == '\'') {
    backup(lx);
    emit(lx, I_RAW_STRING);
    next(lx);
    ignore(lx);
    return pop(lx);
  }
  return ret(lex_raw_string);
}

S(lex_raw_ml_string) {
  int32_t r = next(lx);
  if (r == EOF_R) return errorf(lx, "unexpected EOF; expected \"'''\"");
  if (r == '\'') {
    if (accept(lx, '\'')) {
      if (accept(lx, '\'')) {
        if (peek(lx) == '\'') {
          if (has_suffix(lx, "'''''")) return errorf(lx, "unexpected \"''''''\"");
          backup(lx);
          backup(lx);
          return ret(lex_raw_ml_string);
        }
        backup(lx);
        backup(lx);
        backup(lx);
        emit(lx, I_RAW_ML_STRING);
        next(lx);
        next(lx);
        next(lx);
        ignore(lx);
        return pop(lx);
      }
      backup(lx);
    }
  }
  return ret(lex_raw_ml_string);
}

S(lex_ml_string_escape) {
  if (is_nl(next(lx))) return ret(lex_ml_string);
  backup(lx);
  push(lx, lex_ml_string);
  return lex_string_escape(lx);
}

S(lex_string_escape) {
  lx->esc = true;
  int32_t r = next(lx);
  switch (r) {
  case 'e': case 'b': case 't': case 'n': case 'f': case 'r': case '"': case ' ': case '\t': case '\\':
    return pop(lx);
  case 'x': return ret(lex_hex_escape);
  case 'u': return ret(lex_short_unicode);
  case 'U': return ret(lex_long_unicode);
  }
  char u[8];
  int k = (int)tpl__utf8_encode(r, u);
  if (r == 0) return lx_error(lx, "invalid escape in string '\\\xc0\x80'"); /* NUL, see perr */
  return lx_error(lx, afmt(lx->a, "invalid escape in string '\\%.*s'", k, u));
}

static void *hex_digits(lexer_t *lx, int count, const char *what) {
  for (int i = 0; i < count; i++) {
    if (!is_hex(next(lx))) {
      const char *cur = current(lx);
      return errorf(lx, afmt(lx->a, "expected %s hexadecimal digits after '\\%c', but got %s instead", what,
                             count == 2 ? 'x' : count == 4 ? 'u' : 'U', qstr(lx->a, cur, strlen(cur))));
    }
  }
  return pop(lx);
}
S(lex_hex_escape) { return hex_digits(lx, 2, "two"); }
S(lex_short_unicode) { return hex_digits(lx, 4, "four"); }
S(lex_long_unicode) { return hex_digits(lx, 8, "eight"); }

S(lex_number_or_date_start) {
  if (next(lx) == '0') return ret(lex_base_number_or_date);
  return ret(lex_number_or_date);
}

S(lex_number_or_date) {
  int32_t r = next(lx);
  if (is_digit(r)) return ret(lex_number_or_date);
  switch (r) {
  case '-': case ':': return ret(lex_datetime);
  case '_': return ret(lex_decimal_number);
  case '.': case 'e': case 'E': return ret(lex_float);
  }
  backup(lx);
  emit(lx, I_INTEGER);
  return pop(lx);
}

S(lex_datetime) {
  int32_t r = next(lx);
  if (is_digit(r)) return ret(lex_datetime);
  switch (r) {
  case '-': case ':': case 'T': case 't': case ' ': case '.': case 'Z': case 'z': case '+': return ret(lex_datetime);
  }
  backup(lx);
  emit_trim(lx, I_DATETIME);
  return pop(lx);
}

static void *int_digits(lexer_t *lx, bool (*ok)(int32_t), state_fn self) {
  int32_t r = next(lx);
  if (ok(r) || r == '_') return ret(self);
  backup(lx);
  emit(lx, I_INTEGER);
  return pop(lx);
}
static bool is_octal(int32_t r) { return r >= '0' && r <= '7'; }
static bool is_binary(int32_t r) { return r == '0' || r == '1'; }
S(lex_hex_integer) { return int_digits(lx, is_hex, lex_hex_integer); }
S(lex_octal_integer) { return int_digits(lx, is_octal, lex_octal_integer); }
S(lex_binary_integer) { return int_digits(lx, is_binary, lex_binary_integer); }

S(lex_decimal_number) {
  int32_t r = next(lx);
  if (is_digit(r)) return ret(lex_decimal_number);
  switch (r) {
  case '.': case 'e': case 'E': return ret(lex_float);
  case '_': return ret(lex_decimal_number);
  }
  backup(lx);
  emit(lx, I_INTEGER);
  return pop(lx);
}

S(lex_decimal_number_start) {
  int32_t r = next(lx);
  switch (r) {
  case 'i':
    if (!accept(lx, 'n') || !accept(lx, 'f')) return errorf(lx, afmt(lx->a, "invalid float: '%s'", current(lx)));
    emit(lx, I_FLOAT);
    return pop(lx);
  case 'n':
    if (!accept(lx, 'a') || !accept(lx, 'n')) return errorf(lx, afmt(lx->a, "invalid float: '%s'", current(lx)));
    emit(lx, I_FLOAT);
    return pop(lx);
  case '0': {
    int32_t p = peek(lx);
    if (p == 'b' || p == 'o' || p == 'x')
      return errorf(lx, afmt(lx->a, "cannot use sign with non-decimal numbers: '%s%c'", current(lx), (char)p));
    break;
  }
  case '.': return errorf(lx, "floats must start with a digit, not '.'");
  }
  if (is_digit(r)) return ret(lex_decimal_number);
  return errorf(lx, afmt(lx->a, "expected a digit but got %s", qrune(lx->a, r)));
}

/* prefix + current() + the rune (a NUL byte for EOF, as Go's %c of 0) + "'". */
static const char *with_rune(lexer_t *lx, const char *prefix, int32_t r) {
  buf_t b = BUF_INIT;
  char u[8];
  buf_puts(&b, prefix);
  buf_append(&b, lx->in + lx->start, (size_t)(lx->pos - lx->start));
  if (r == 0) buf_puts(&b, "\xc0\x80"); /* a NUL byte; perr writes it back (messages are C strings) */
  else buf_append(&b, u, tpl__utf8_encode(r, u));
  buf_putc(&b, '\'');
  const char *m = tpl_arena_strndup(lx->a, b.data, b.len);
  buf_free(&b);
  return m;
}

S(lex_base_number_or_date) {
  int32_t r = next(lx);
  if (is_digit(r)) return ret(lex_number_or_date);
  switch (r) {
  case '_': return ret(lex_decimal_number);
  case '.': case 'e': case 'E': return ret(lex_float);
  case 'b':
    r = peek(lx);
    if (!is_binary(r)) errorf(lx, with_rune(lx, "not a binary number: '", r));
    return ret(lex_binary_integer);
  case 'o':
    r = peek(lx);
    if (!is_octal(r)) errorf(lx, with_rune(lx, "not an octal number: '", r));
    return ret(lex_octal_integer);
  case 'x':
    r = peek(lx);
    if (!is_hex(r)) errorf(lx, with_rune(lx, "not a hexadecimal number: '", r));
    return ret(lex_hex_integer);
  }
  backup(lx);
  emit(lx, I_INTEGER);
  return pop(lx);
}

S(lex_float) {
  int32_t r = next(lx);
  if (is_digit(r)) return ret(lex_float);
  switch (r) {
  case '_': case '.': case '-': case '+': case 'e': case 'E': return ret(lex_float);
  }
  backup(lx);
  emit(lx, I_FLOAT);
  return pop(lx);
}

S(lex_bool) {
  buf_t rs = BUF_INIT;
  for (;;) {
    int32_t r = next(lx);
    if (!is_letter(r)) {
      backup(lx);
      break;
    }
    char u[8];
    buf_append(&rs, u, (size_t)tpl__utf8_encode(r, u));
  }
  const char *s = rs.data ? rs.data : "";
  if ((rs.len == 4 && !memcmp(s, "true", 4)) || (rs.len == 5 && !memcmp(s, "false", 5))) {
    buf_free(&rs);
    emit(lx, I_BOOL);
    return pop(lx);
  }
  const char *m = afmt(lx->a, "expected value but found %s instead", qstr(lx->a, s, rs.len));
  buf_free(&rs);
  return errorf(lx, m);
}

S(lex_comment_start) {
  ignore(lx);
  emit(lx, I_COMMENT_START);
  return ret(lex_comment);
}

S(lex_comment) {
  int32_t r = next(lx);
  if (is_nl(r) || r == EOF_R) {
    backup(lx);
    emit(lx, I_TEXT);
    return pop(lx);
  }
  return ret(lex_comment);
}

/* nextItem: run states until an item is queued. */
static item_t next_item(lexer_t *lx) {
  for (;;) {
    if (lx->qn) {
      item_t it = lx->q[lx->qh];
      lx->qh = (lx->qh + 1) % 16;
      lx->qn--;
      return it;
    }
    if (!lx->state || lx->bug || lx->overflow) {
      item_t it = cur_pos(lx);
      it.typ = I_ERROR;
      it.err = lx->overflow ? "document nested too deeply" : "BUG in lexer";
      return it;
    }
    lx->state = (state_fn)lx->state(lx);
  }
}

/* ---- parser ---------------------------------------------------------------------- */

typedef struct {
  const char **k;
  size_t *n;
  size_t len, cap;
} key_t_;

typedef struct {
  tpl_call_t *c;
  tpl_arena_t *a;
  lexer_t lx;
  key_t_ context;
  const char *cur_key; /* currentKey */
  size_t cur_n;
  int pos_line;
  tpl_map_t *mapping;
  tpl_map_t *key_info;  /* Key.String() -> type */
  tpl_map_t *implicits; /* Key.String() set */
  const tpl_list_t **aot; /* lists that are []map[string]interface{} */
  size_t naot, caot;
  jmp_buf jb;
  int code; /* why the parser stopped: 1 toml error (text in err), 2 out of memory, 3 a Go panic (text in err) */
  tpl_value_t result;
  buf_t err;
  int depth;
} parser_t;

static void __attribute__((noreturn)) pjump(parser_t *p, int code) {
  p->code = code;
  longjmp(p->jb, 1);
}

static void key_push(parser_t *p, key_t_ *k, const char *s, size_t n) {
  if (k->len == k->cap) {
    size_t nc = k->cap ? k->cap * 2 : 8;
    const char **nk = tpl_arena_alloc(p->a, nc * sizeof *nk);
    size_t *nn = tpl_arena_alloc(p->a, nc * sizeof *nn);
    if (!nk || !nn) pjump(p, 2);
    if (k->len) {
      memcpy(nk, k->k, k->len * sizeof *nk);
      memcpy(nn, k->n, k->len * sizeof *nn);
    }
    k->k = nk;
    k->n = nn;
    k->cap = nc;
  }
  k->k[k->len] = s;
  k->n[k->len] = n;
  k->len++;
}

static key_t_ key_copy(parser_t *p, const key_t_ *k, size_t len) {
  key_t_ r = {0};
  for (size_t i = 0; i < len; i++) key_push(p, &r, k->k[i], k->n[i]);
  return r;
}

/* Key.String(): pieces joined by '.', quoted when not bare. */
static void key_string(buf_t *b, const key_t_ *k) {
  for (size_t i = 0; i < k->len; i++) {
    if (i) buf_putc(b, '.');
    if (!k->n[i]) {
      buf_puts(b, "\"\"");
      continue;
    }
    bool bare = true;
    for (size_t j = 0; j < k->n[i]; j++)
      if (!is_bare((unsigned char)k->k[i][j])) bare = false;
    if (bare) {
      buf_append(b, k->k[i], k->n[i]);
      continue;
    }
    buf_putc(b, '"');
    for (size_t j = 0; j < k->n[i]; j++) {
      unsigned char ch = (unsigned char)k->k[i][j];
      switch (ch) {
      case '"': buf_puts(b, "\\\""); break;
      case '\\': buf_puts(b, "\\\\"); break;
      case '\b': buf_puts(b, "\\b"); break;
      case '\t': buf_puts(b, "\\t"); break;
      case '\n': buf_puts(b, "\\n"); break;
      case '\f': buf_puts(b, "\\f"); break;
      case '\r': buf_puts(b, "\\r"); break;
      default:
        if (ch < 0x20 || ch == 0x7f) buf_printf(b, "\\u%04x", ch);
        else buf_putc(b, (char)ch);
      }
    }
    buf_putc(b, '"');
  }
}

static const char *key_str(parser_t *p, const key_t_ *k) {
  buf_t b = BUF_INIT;
  key_string(&b, k);
  const char *s = tpl_arena_strndup(p->a, b.data ? b.data : "", b.len);
  buf_free(&b);
  if (!s) pjump(p, 2);
  return s;
}

/* p.current(): the last key for error messages. */
static void current_key(parser_t *p, buf_t *b) {
  if (!p->cur_n) {
    key_string(b, &p->context);
    return;
  }
  if (!p->context.len) {
    buf_append(b, p->cur_key, p->cur_n);
    return;
  }
  key_string(b, &p->context);
  buf_putc(b, '.');
  buf_append(b, p->cur_key, p->cur_n);
}

static void __attribute__((noreturn)) perr(parser_t *p, int line, const char *msg) {
  buf_t lk = BUF_INIT;
  current_key(p, &lk);
  if (lk.len) {
    buf_printf(&p->err, "toml: line %d (last key ", line);
    tpl_fmt_quote(&p->err, lk.data, lk.len);
    buf_puts(&p->err, "): ");
  } else {
    buf_printf(&p->err, "toml: line %d: ", line);
  }
  for (const char *m = msg; *m; m++) {
    if (m[0] == '\xc0' && m[1] == '\x80') {
      buf_putc(&p->err, 0);
      m++;
    } else {
      buf_putc(&p->err, *m);
    }
  }
  buf_free(&lk);
  pjump(p, 1);
}

static item_t pnext(parser_t *p) {
  item_t it = next_item(&p->lx);
  if (it.typ == I_ERROR) perr(p, it.line, it.err);
  return it;
}

static item_t pnext_pos(parser_t *p) {
  item_t it = pnext(p);
  p->pos_line = it.line;
  return it;
}

static void __attribute__((noreturn)) bug(parser_t *p, const char *what) {
  buf_printf(&p->err, "BUG: %s", what);
  pjump(p, 3);
}

static bool is_aot(parser_t *p, const tpl_value_t *v) {
  if (v->kind != TPL_LIST || !v->u.list) return false;
  for (size_t i = 0; i < p->naot; i++)
    if (p->aot[i] == v->u.list) return true;
  return false;
}

static void set_flag(parser_t *p, tpl_map_t *m, const char *k, int v) {
  if (tpl_map_set(p->a, m, k, strlen(k), tpl_value_int(v))) pjump(p, 2);
}

static void add_implicit(parser_t *p, const key_t_ *k) { set_flag(p, p->implicits, key_str(p, k), 1); }
static void remove_implicit(parser_t *p, const key_t_ *k) {
  const char *s = key_str(p, k);
  tpl_map_delete(p->a, p->implicits, s, strlen(s));
}
static bool is_implicit(parser_t *p, const key_t_ *k) {
  const char *s = key_str(p, k);
  return tpl_map_get(p->implicits, s, strlen(s)) != NULL;
}
static bool is_array(parser_t *p, const key_t_ *k) {
  const char *s = key_str(p, k);
  tpl_value_t *v = tpl_map_get(p->key_info, s, strlen(s));
  return v && v->u.i == T_ARRAY;
}

static tpl_value_t new_map(parser_t *p) {
  tpl_value_t m = tpl_value_map_new(p->a, TPL_ELEM_ANY);
  if (m.kind == TPL_INVALID) pjump(p, 2);
  return m;
}

static void map_put(parser_t *p, tpl_map_t *m, const char *k, size_t n, tpl_value_t v) {
  v.iface = 1;
  if (tpl_map_set(p->a, m, k, n, v)) pjump(p, 2);
}

static void set_value(parser_t *p, const char *key, size_t kn, tpl_value_t value) {
  tpl_map_t *hash = p->mapping;
  key_t_ kc = {0};
  for (size_t i = 0; i < p->context.len; i++) {
    key_push(p, &kc, p->context.k[i], p->context.n[i]);
    tpl_value_t *t = tpl_map_get(hash, p->context.k[i], p->context.n[i]);
    if (!t) bug(p, "Context for key has not been established.");
    if (is_aot(p, t)) hash = t->u.list->items[t->u.list->len - 1].u.map;
    else if (t->kind == TPL_MAP) hash = t->u.map;
    else perr(p, p->pos_line, afmt(p->a, "Key '%s' has already been defined.", key_str(p, &kc)));
  }
  key_push(p, &kc, key, kn);
  if (tpl_map_get(hash, key, kn)) {
    if (is_array(p, &kc)) {
      if (!is_implicit(p, &kc)) perr(p, p->pos_line, afmt(p->a, "Key '%s' has already been defined.", key_str(p, &kc)));
      remove_implicit(p, &kc);
      map_put(p, hash, key, kn, value);
      return;
    }
    if (is_implicit(p, &kc)) {
      remove_implicit(p, &kc);
      return;
    }
    perr(p, p->pos_line, afmt(p->a, "Key '%s' has already been defined.", key_str(p, &kc)));
  }
  map_put(p, hash, key, kn, value);
}

static void set_type(parser_t *p, const char *key, size_t kn, int typ) {
  key_t_ kc = key_copy(p, &p->context, p->context.len);
  if (kn) key_push(p, &kc, key, kn);
  if (!kc.len) key_push(p, &kc, "", 0);
  set_flag(p, p->key_info, key_str(p, &kc), typ);
}

static void add_context(parser_t *p, const key_t_ *key, bool array) {
  tpl_map_t *hash = p->mapping;
  key_t_ kc = {0};
  for (size_t i = 0; i + 1 < key->len; i++) {
    tpl_value_t *t = tpl_map_get(hash, key->k[i], key->n[i]);
    key_push(p, &kc, key->k[i], key->n[i]);
    if (!t) {
      add_implicit(p, &kc);
      map_put(p, hash, key->k[i], key->n[i], new_map(p));
      t = tpl_map_get(hash, key->k[i], key->n[i]);
    }
    if (is_aot(p, t)) hash = t->u.list->items[t->u.list->len - 1].u.map;
    else if (t->kind == TPL_MAP) hash = t->u.map;
    else perr(p, p->pos_line, afmt(p->a, "Key '%s' was already created as a hash.", key_str(p, &kc)));
  }
  p->context = kc;
  const char *last = key->k[key->len - 1];
  size_t ln = key->n[key->len - 1];
  if (array) {
    tpl_value_t *t = tpl_map_get(hash, last, ln);
    if (!t) {
      tpl_value_t l = tpl_value_list_new(p->a, TPL_ELEM_ANY, 4);
      if (l.kind == TPL_INVALID) pjump(p, 2);
      if (p->naot == p->caot) {
        size_t nc = p->caot ? p->caot * 2 : 8;
        const tpl_list_t **na = tpl_arena_alloc(p->a, nc * sizeof *na);
        if (!na) pjump(p, 2);
        if (p->naot) memcpy(na, p->aot, p->naot * sizeof *na);
        p->aot = na;
        p->caot = nc;
      }
      p->aot[p->naot++] = l.u.list;
      map_put(p, hash, last, ln, l);
      t = tpl_map_get(hash, last, ln);
    }
    if (!is_aot(p, t))
      perr(p, p->pos_line, afmt(p->a, "Key '%s' was already created and cannot be used as an array.", key_str(p, key)));
    tpl_value_t m = new_map(p);
    m.iface = 1;
    if (tpl_list_push(p->a, t->u.list, m)) pjump(p, 2);
  } else {
    set_value(p, last, ln, new_map(p));
  }
  key_push(p, &p->context, last, ln);
}

static void add_implicit_context(parser_t *p, const key_t_ *k) {
  add_implicit(p, k);
  add_context(p, k, false);
}

static tpl_value_t value(parser_t *p, item_t it, bool parent_is_array, int *typ);

static void key_string_item(parser_t *p, item_t it, const char **s, size_t *n) {
  if (it.typ == I_TEXT) {
    *s = it.val;
    *n = it.n;
    return;
  }
  if (it.typ == I_STRING || it.typ == I_STRING_ESC || it.typ == I_ML_STRING || it.typ == I_RAW_STRING ||
      it.typ == I_RAW_ML_STRING) {
    int t;
    tpl_value_t v = value(p, it, false, &t);
    *s = v.u.s.p;
    *n = v.u.s.n;
    return;
  }
  bug(p, "Unexpected key type");
}

static bool num_underscores_ok(const char *s, size_t n) {
  static const char *const sp[] = {"nan", "+nan", "-nan", "inf", "-inf", "+inf"};
  for (size_t i = 0; i < 6; i++)
    if (strlen(sp[i]) == n && !memcmp(sp[i], s, n)) return true;
  bool acc = false;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '_' && !acc) return false;
    acc = is_hex((unsigned char)s[i]);
  }
  return acc;
}

static bool num_leading_zero(const char *s, size_t n) {
  if (n > 1 && s[0] == '0' && !(s[1] == 'b' || s[1] == 'o' || s[1] == 'x')) return true;
  if (n > 2 && (s[0] == '-' || s[0] == '+') && s[1] == '0') return true;
  return false;
}

static void __attribute__((noreturn)) perr_item(parser_t *p, item_t it, const char *msg) { perr(p, it.line, msg); }

static tpl_value_t value_integer(parser_t *p, item_t it) {
  const char *q = qstr(p->a, it.val, it.n);
  if (!num_underscores_ok(it.val, it.n))
    perr_item(p, it, afmt(p->a, "Invalid integer %s: underscores must be surrounded by digits", q));
  if (num_leading_zero(it.val, it.n)) perr_item(p, it, afmt(p->a, "Invalid integer %s: cannot have leading zeroes", q));
  int64_t v;
  int rc = sprig__parse_int(it.val, it.n, 0, &v);
  if (rc == -2) perr_item(p, it, afmt(p->a, "%.*s is out of range for int64", (int)it.n, it.val));
  if (rc) bug(p, "Expected integer value");
  return tpl_value_int64(v);
}

static tpl_value_t value_float(parser_t *p, item_t it) {
  const char *q = qstr(p->a, it.val, it.n);
  /* strings.FieldsFunc on '.', 'e', 'E' */
  bool first = true;
  for (size_t i = 0; i <= it.n;) {
    size_t j = i;
    while (j < it.n && it.val[j] != '.' && it.val[j] != 'e' && it.val[j] != 'E') j++;
    if (j > i) {
      if (!num_underscores_ok(it.val + i, j - i))
        perr_item(p, it, afmt(p->a, "Invalid float %s: underscores must be surrounded by digits", q));
      if (first && num_leading_zero(it.val + i, j - i))
        perr_item(p, it, afmt(p->a, "Invalid float %s: cannot have leading zeroes", q));
      first = false;
    }
    i = j + 1;
  }
  bool period = false;
  for (size_t i = 0; i < it.n; i++) {
    if (period && !is_digit((unsigned char)it.val[i]))
      perr_item(p, it, afmt(p->a, "Invalid float %s: '.' must be followed by one or more digits", q));
    period = it.val[i] == '.';
  }
  if (period) perr_item(p, it, afmt(p->a, "Invalid float %s: '.' must be followed by one or more digits", q));
  char *v = tpl_arena_alloc(p->a, it.n + 1);
  if (!v) pjump(p, 2);
  size_t m = 0;
  for (size_t i = 0; i < it.n; i++)
    if (it.val[i] != '_') v[m++] = it.val[i];
  bool neg_nan = false;
  if ((m == 4 && !memcmp(v, "+nan", 4)) || (m == 4 && !memcmp(v, "-nan", 4))) {
    neg_nan = v[0] == '-';
    memcpy(v, "nan", 3);
    m = 3;
  }
  double f;
  int rc = sprig__parse_float(v, m, &f);
  if (rc == -2) perr_item(p, it, afmt(p->a, "%.*s is out of range for float64", (int)it.n, it.val));
  if (rc) perr_item(p, it, afmt(p->a, "Invalid float value: %s", q));
  if (neg_nan) f = -__builtin_fabs(f);
  return tpl_value_float(f);
}

static char *strip_first_nl(const char *s, size_t *n) {
  if (*n > 0 && s[0] == '\n') {
    (*n)--;
    return (char *)s + 1;
  }
  if (*n > 1 && s[0] == '\r' && s[1] == '\n') {
    *n -= 2;
    return (char *)s + 2;
  }
  return (char *)s;
}

static void strip_escaped_newlines(parser_t *p, const char **sp, size_t *np) {
  const char *s = *sp;
  size_t n = *np, i = 0;
  buf_t b = BUF_INIT;
  for (;;) {
    const char *bs = i < n ? memchr(s + i, '\\', n - i) : NULL;
    if (!bs) {
      buf_append(&b, s, n);
      break;
    }
    i = (size_t)(bs - s);
    if (n > i + 1 && s[i + 1] == '\\') {
      i += 2;
      continue;
    }
    size_t j = i + 1;
    while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '\r' || s[j] == '\n')) j++;
    if (j == i + 1 || !memchr(s + i, '\n', j - i)) {
      i++;
      continue;
    }
    buf_append(&b, s, i);
    s += j;
    n -= j;
    i = 0;
  }
  *sp = tpl_arena_strndup(p->a, b.data ? b.data : "", b.len);
  *np = b.len;
  buf_free(&b);
  if (!*sp) pjump(p, 2);
}

static tpl_value_t replace_escapes(parser_t *p, item_t it, const char *s, size_t n) {
  buf_t b = BUF_INIT;
  for (size_t i = 0; i < n;) {
    if (s[i] != '\\') {
      int32_t r;
      int w = (int)tpl__utf8_decode(s + i, n - i, &r);
      char u[8];
      buf_append(&b, u, (size_t)tpl__utf8_encode(r, u)); /* WriteRune of a decoded rune (U+FFFD for bad bytes) */
      i += (size_t)w;
      continue;
    }
    if (i + 1 >= n) {
      buf_free(&b);
      bug(p, "Escape sequence at end of string.");
    }
    char e = s[i + 1];
    int hexn = 0;
    switch (e) {
    case ' ':
    case '\t': {
      buf_free(&b);
      perr_item(p, it, afmt(p->a, "invalid escape: '\\%c'", e));
    }
    case 'b': buf_putc(&b, 0x08); break;
    case 't': buf_putc(&b, 0x09); break;
    case 'n': buf_putc(&b, 0x0a); break;
    case 'f': buf_putc(&b, 0x0c); break;
    case 'r': buf_putc(&b, 0x0d); break;
    case 'e': buf_putc(&b, 0x1b); break;
    case '"': buf_putc(&b, 0x22); break;
    case '\\': buf_putc(&b, 0x5c); break;
    case 'x': hexn = 2; break;
    case 'u': hexn = 4; break;
    case 'U': hexn = 8; break;
    default: buf_free(&b); bug(p, "Expected valid escape code");
    }
    if (!hexn) {
      i += 2;
      continue;
    }
    uint64_t h = 0;
    for (int k = 0; k < hexn; k++) {
      char ch = s[i + 2 + (size_t)k] | 0x20;
      h = h * 16 + (uint64_t)(ch >= 'a' ? ch - 'a' + 10 : ch - '0');
    }
    if (h > 0x10FFFF || (h >= 0xD800 && h <= 0xDFFF)) {
      buf_free(&b);
      perr_item(p, it, afmt(p->a, "Escaped character '\\u%.*s' is not valid UTF-8.", hexn, s + i + 2));
    }
    char u[8];
    buf_append(&b, u, (size_t)tpl__utf8_encode((int32_t)h, u));
    i += 2 + (size_t)hexn;
  }
  tpl_value_t v = tpl_value_str_copy(p->a, b.data ? b.data : "", b.len);
  buf_free(&b);
  if (v.kind == TPL_INVALID) pjump(p, 2);
  return v;
}

static tpl_value_t value_array(parser_t *p, item_t it) {
  set_type(p, p->cur_key, p->cur_n, T_ARRAY);
  tpl_value_t arr = tpl_value_list_new(p->a, TPL_ELEM_ANY, 2);
  if (arr.kind == TPL_INVALID) pjump(p, 2);
  for (it = pnext(p); it.typ != I_ARRAY_END; it = pnext(p)) {
    if (it.typ == I_COMMENT_START) {
      pnext(p);
      continue;
    }
    int t;
    tpl_value_t v = value(p, it, true, &t);
    v.iface = 1;
    if (tpl_list_push(p->a, arr.u.list, v)) pjump(p, 2);
  }
  return arr;
}

static void parse_key(parser_t *p, key_t_ *key, int end) {
  item_t k = pnext_pos(p);
  for (; k.typ != end && k.typ != I_EOF; k = pnext(p)) {
    const char *s;
    size_t n;
    key_string_item(p, k, &s, &n);
    key_push(p, key, s, n);
  }
  if (k.typ != end) bug(p, "Expected key end");
}

static tpl_value_t value_inline(parser_t *p, item_t it, bool parent_is_array) {
  (void)it;
  tpl_value_t top = new_map(p);
  key_t_ outer = p->context;
  const char *outer_key = p->cur_key;
  size_t outer_n = p->cur_n;
  p->context = key_copy(p, &outer, outer.len);
  key_push(p, &p->context, p->cur_key, p->cur_n);
  key_t_ prev = p->context;
  p->cur_key = "";
  p->cur_n = 0;
  add_implicit(p, &p->context);
  key_t_ ctx_copy = key_copy(p, &p->context, p->context.len);
  add_context(p, &ctx_copy, parent_is_array);
  for (item_t i2 = pnext(p); i2.typ != I_INLINE_END; i2 = pnext(p)) {
    if (i2.typ == I_COMMENT_START) {
      pnext(p);
      continue;
    }
    key_t_ key = {0};
    parse_key(p, &key, I_KEY_END);
    p->cur_key = key.k[key.len - 1];
    p->cur_n = key.n[key.len - 1];
    for (size_t i = 0; i + 1 < key.len; i++) {
      key_t_ ic = key_copy(p, &p->context, p->context.len);
      key_push(p, &ic, key.k[i], key.n[i]);
      add_implicit_context(p, &ic);
    }
    int t;
    tpl_value_t v = value(p, pnext(p), false, &t);
    set_value(p, p->cur_key, p->cur_n, v);
    set_type(p, p->cur_key, p->cur_n, t);
    tpl_map_t *hash = top.u.map;
    for (size_t i = 0; i + 1 < key.len; i++) {
      tpl_value_t *h = tpl_map_get(hash, key.k[i], key.n[i]);
      if (!h) {
        map_put(p, hash, key.k[i], key.n[i], new_map(p));
        h = tpl_map_get(hash, key.k[i], key.n[i]);
      }
      if (h->kind != TPL_MAP || is_aot(p, h)) {
        buf_t ks = BUF_INIT;
        key_string(&ks, &p->context);
        const char *m = afmt(p->a, "%s is not a table", qstr(p->a, ks.data ? ks.data : "", ks.len));
        buf_free(&ks);
        perr(p, p->pos_line, m);
      }
      hash = h->u.map;
    }
    map_put(p, hash, p->cur_key, p->cur_n, v);
    p->context = prev;
  }
  p->context = outer;
  p->cur_key = outer_key;
  p->cur_n = outer_n;
  return top;
}

static tpl_value_t value(parser_t *p, item_t it, bool parent_is_array, int *typ) {
  if (++p->depth > 1000) {
    buf_puts(&p->err, "toml: document nested too deeply");
    pjump(p, 3);
  }
  tpl_value_t v;
  *typ = T_OTHER;
  switch (it.typ) {
  case I_STRING:
  case I_RAW_STRING: v = tpl_value_strn(it.val, it.n); break;
  case I_STRING_ESC: v = replace_escapes(p, it, it.val, it.n); break;
  case I_ML_STRING: {
    size_t n = it.n;
    const char *s = strip_first_nl(it.val, &n);
    strip_escaped_newlines(p, &s, &n);
    v = replace_escapes(p, it, s, n);
    break;
  }
  case I_RAW_ML_STRING: {
    size_t n = it.n;
    const char *s = strip_first_nl(it.val, &n);
    v = tpl_value_strn(s, n);
    break;
  }
  case I_INTEGER: v = value_integer(p, it); break;
  case I_FLOAT: v = value_float(p, it); break;
  case I_BOOL: v = tpl_value_bool(it.n == 4); break;
  case I_DATETIME: {
    int rc = sprig__toml_datetime(p->c, it.val, it.n, &v);
    if (rc < 0) pjump(p, 2);
    if (rc == 0) {
      char *d = tpl_arena_strndup(p->a, it.val, it.n);
      if (!d) pjump(p, 2);
      for (size_t i = 0; i < it.n; i++) d[i] = d[i] == 'z' ? 'Z' : d[i] == 't' || d[i] == ' ' ? 'T' : d[i];
      perr_item(p, it, afmt(p->a, "invalid datetime: %s", qstr(p->a, d, it.n)));
    }
    break;
  }
  case I_ARRAY: v = value_array(p, it); *typ = T_ARRAY; break;
  case I_INLINE_START: v = value_inline(p, it, parent_is_array); *typ = T_HASH; break;
  default: bug(p, "Unexpected value type");
  }
  p->depth--;
  return v;
}

static void top_level(parser_t *p, item_t it) {
  switch (it.typ) {
  case I_COMMENT_START: pnext(p); return;
  case I_TABLE_START:
  case I_ARRAY_TABLE_START: {
    bool arr = it.typ == I_ARRAY_TABLE_START;
    key_t_ key = {0};
    parse_key(p, &key, arr ? I_ARRAY_TABLE_END : I_TABLE_END);
    add_context(p, &key, arr);
    set_type(p, "", 0, arr ? T_ARRAY_HASH : T_HASH);
    return;
  }
  case I_KEY_START: {
    key_t_ outer = p->context;
    key_t_ key = {0};
    parse_key(p, &key, I_KEY_END);
    p->cur_key = key.k[key.len - 1];
    p->cur_n = key.n[key.len - 1];
    for (size_t i = 0; i + 1 < key.len; i++) {
      key_t_ ic = key_copy(p, &p->context, p->context.len);
      key_push(p, &ic, key.k[i], key.n[i]);
      add_implicit_context(p, &ic);
    }
    item_t vi = pnext(p);
    int t;
    tpl_value_t v = value(p, vi, false, &t);
    set_value(p, p->cur_key, p->cur_n, v);
    set_type(p, p->cur_key, p->cur_n, t);
    p->context = outer;
    p->cur_key = "";
    p->cur_n = 0;
    return;
  }
  default: bug(p, "Unexpected type at top level");
  }
}

/* Arrays of tables hold maps; the value model has no []map[string]interface{}
 * element type, so they stay []interface{} (SPRIG_STATUS gap 17). */
SPRIG_FN(f_fromtoml) {
  (void)n;
  parser_t *p = calloc(1, sizeof *p);
  if (!p) return TPL_ENOMEM;
  p->c = c;
  p->a = tpl_call_arena(c);
  const char *s = args[0].u.s.p;
  size_t sn = args[0].u.s.n;
  if (sn >= 2 && ((s[0] == '\xff' && s[1] == '\xfe') || (s[0] == '\xfe' && s[1] == '\xff'))) s += 2, sn -= 2;
  else if (sn >= 3 && !memcmp(s, "\xef\xbb\xbf", 3)) s += 3, sn -= 3;
  int rc = 0;
  tpl_value_t res = tpl_value_map_new(p->a, TPL_ELEM_ANY);
  if (res.kind == TPL_INVALID) {
    free(p);
    return TPL_ENOMEM;
  }
  if (memchr(s, 0, sn < 6 ? sn : 6)) {
    buf_puts(&p->err, "toml: line 1: files cannot contain NULL bytes; probably using UTF-16; TOML files must be UTF-8");
    rc = 1;
  } else {
    tpl_value_t m = tpl_value_map_new(p->a, TPL_ELEM_ANY);
    tpl_value_t ki = tpl_value_map_new(p->a, TPL_ELEM_ANY);
    tpl_value_t im = tpl_value_map_new(p->a, TPL_ELEM_ANY);
    if (m.kind == TPL_INVALID || ki.kind == TPL_INVALID || im.kind == TPL_INVALID) {
      free(p);
      return TPL_ENOMEM;
    }
    p->mapping = m.u.map;
    p->key_info = ki.u.map;
    p->implicits = im.u.map;
    p->cur_key = "";
    p->lx = (lexer_t){.in = s, .n = sn, .line = 1, .state = (state_fn)lex_top, .a = p->a};
    if (setjmp(p->jb) == 0) {
      for (;;) {
        item_t it = pnext(p);
        if (it.typ == I_EOF) break;
        top_level(p, it);
      }
      p->result = m;
    }
    rc = p->code;
    if (!rc) res = p->result;
  }
  if (rc == 2) {
    buf_free(&p->err);
    free(p);
    return TPL_ENOMEM;
  }
  if (rc == 3) {
    rc = tpl_call_errorf(c, "%.*s", (int)p->err.len, p->err.data ? p->err.data : "");
    buf_free(&p->err);
    free(p);
    return rc;
  }
  if (rc == 1) {
    tpl_value_t e = tpl_value_str_copy(p->a, p->err.data ? p->err.data : "", p->err.len);
    if (e.kind == TPL_INVALID || tpl_map_set(p->a, res.u.map, "Error", 5, e)) rc = TPL_ENOMEM;
    else rc = 0;
  }
  buf_free(&p->err);
  free(p);
  if (rc) return rc;
  *out = res;
  return 0;
}

const tpl_func_t sprig__toml_dec_fns[] = {
    {"fromToml", "s", f_fromtoml, NULL, "func(string) map[string]interface {}"},
};
const size_t sprig__toml_dec_nfns = sizeof sprig__toml_dec_fns / sizeof sprig__toml_dec_fns[0];
