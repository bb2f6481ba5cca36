/* Label selector syntax (selector.h): a small lexer and a recursive-descent check of each
 * requirement; the API server's rules for keys and values. */
#include "watch/selector.h"
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef enum { TK_END, TK_IDENT, TK_NOT, TK_EQ, TK_DEQ, TK_NEQ, TK_GT, TK_LT, TK_OPEN, TK_CLOSE, TK_COMMA, TK_IN, TK_NOTIN } sel_tok_t;

typedef struct sel_lex_s {
  const char *s;
  size_t pos;           /* next byte to read */
  sel_tok_t tok;        /* the token just read */
  size_t start, len;    /* where it is */
} sel_lex_t;

static bool selector__special(char c) { return strchr("=!(),<>", c) != NULL; }

/* Reads the next token into l. */
static void selector__next(sel_lex_t *l) {
  const char *s = l->s;
  while (s[l->pos] && isspace((unsigned char)s[l->pos])) l->pos++;
  l->start = l->pos;
  char c = s[l->pos];
  if (!c) {
    l->tok = TK_END;
    l->len = 0;
    return;
  }
  if (selector__special(c)) {
    char d = s[l->pos + 1];
    l->len = 1;
    if (c == '=' && d == '=') l->tok = TK_DEQ, l->len = 2;
    else if (c == '!' && d == '=') l->tok = TK_NEQ, l->len = 2;
    else l->tok = c == '=' ? TK_EQ : c == '!' ? TK_NOT : c == '(' ? TK_OPEN : c == ')' ? TK_CLOSE
                : c == ',' ? TK_COMMA : c == '<' ? TK_LT : TK_GT;
    l->pos += l->len;
    return;
  }
  while (s[l->pos] && !isspace((unsigned char)s[l->pos]) && !selector__special(s[l->pos])) l->pos++;
  l->len = l->pos - l->start;
  l->tok = TK_IDENT;
  if (l->len == 2 && !strncmp(s + l->start, "in", 2)) l->tok = TK_IN;
  else if (l->len == 5 && !strncmp(s + l->start, "notin", 5)) l->tok = TK_NOTIN;
}

static int selector__fail(const sel_lex_t *l, buf_t *err, const char *what) {
  buf_printf(err, "at character %zu: %s", l->start + 1, what);
  return -22;
}

/* A label value or the name part of a key: alphanumeric at both ends, '-', '_' and '.' inside. */
static bool selector__name_ok(const char *p, size_t n) {
  if (!n || !isalnum((unsigned char)p[0]) || !isalnum((unsigned char)p[n - 1])) return false;
  for (size_t i = 0; i < n; i++)
    if (!isalnum((unsigned char)p[i]) && p[i] != '-' && p[i] != '_' && p[i] != '.') return false;
  return true;
}

/* A DNS subdomain (a key's prefix): lowercase labels of letters, digits and '-' joined by '.'. */
static bool selector__subdomain_ok(const char *p, size_t n) {
  if (!n || n > 253) return false;
  size_t label = 0;
  for (size_t i = 0; i <= n; i++) {
    if (i == n || p[i] == '.') {
      if (!label || p[i - 1] == '-') return false;
      label = 0;
      continue;
    }
    char c = p[i];
    if (!(islower((unsigned char)c) || isdigit((unsigned char)c) || c == '-')) return false;
    if (!label && c == '-') return false;
    label++;
  }
  return true;
}

static int selector__key(const sel_lex_t *l, buf_t *err) {
  const char *k = l->s + l->start;
  size_t n = l->len;
  const char *slash = memchr(k, '/', n);
  const char *name = k;
  size_t nn = n;
  if (slash) {
    name = slash + 1;
    nn = n - (size_t)(name - k);
    if (memchr(name, '/', nn)) return selector__fail(l, err, "a key has at most one '/' (prefix/name)");
    if (!selector__subdomain_ok(k, (size_t)(slash - k)))
      return selector__fail(l, err, "a key's prefix must be a DNS subdomain (lowercase letters, digits, '-' and '.', "
                                    "at most 253 characters)");
  }
  if (nn > 63) return selector__fail(l, err, "a key's name must be at most 63 characters");
  if (!selector__name_ok(name, nn))
    return selector__fail(l, err, "a key's name must be letters, digits, '-', '_' and '.', beginning and ending "
                                  "with a letter or digit");
  return 0;
}

static int selector__value(const sel_lex_t *l, buf_t *err) {
  if (l->len > 63) return selector__fail(l, err, "a value must be at most 63 characters");
  if (l->len && !selector__name_ok(l->s + l->start, l->len))
    return selector__fail(l, err, "a value must be empty or letters, digits, '-', '_' and '.', beginning and "
                                  "ending with a letter or digit");
  return 0;
}

static bool selector__at_end(const sel_lex_t *l) { return l->tok == TK_END || l->tok == TK_COMMA; }

/* One requirement, from its first token to the ',' or the end after it. */
static int selector__requirement(sel_lex_t *l, buf_t *err) {
  int rc;
  if (l->tok == TK_NOT) {
    selector__next(l);
    if (l->tok != TK_IDENT) return selector__fail(l, err, "'!' must be followed by a key");
    if ((rc = selector__key(l, err))) return rc;
    selector__next(l);
    return selector__at_end(l) ? 0 : selector__fail(l, err, "expected ',' or the end after \"!key\"");
  }
  if (l->tok != TK_IDENT) return selector__fail(l, err, "expected a key");
  if ((rc = selector__key(l, err))) return rc;
  selector__next(l);
  if (selector__at_end(l)) return 0; /* the key exists */
  sel_tok_t op = l->tok;
  switch (op) {
  case TK_EQ:
  case TK_DEQ:
  case TK_NEQ:
    selector__next(l);
    if (selector__at_end(l)) return 0; /* the empty value */
    if (l->tok != TK_IDENT) return selector__fail(l, err, "expected a value");
    if ((rc = selector__value(l, err))) return rc;
    break;
  case TK_GT:
  case TK_LT: {
    selector__next(l);
    if (l->tok != TK_IDENT) return selector__fail(l, err, "'<' and '>' need an integer value");
    const char *v = l->s + l->start;
    size_t i = v[0] == '-' ? 1 : 0;
    if (i == l->len) return selector__fail(l, err, "'<' and '>' need an integer value");
    for (; i < l->len; i++)
      if (!isdigit((unsigned char)v[i])) return selector__fail(l, err, "'<' and '>' need an integer value");
    if (l->len > 19) return selector__fail(l, err, "the integer is too large");
    break;
  }
  case TK_IN:
  case TK_NOTIN: {
    const char *name = op == TK_IN ? "in" : "notin";
    selector__next(l);
    if (l->tok != TK_OPEN) {
      buf_printf(err, "at character %zu: \"%s\" needs a list of values in parentheses", l->start + 1, name);
      return -22;
    }
    size_t open = l->start;
    int values = 0;
    selector__next(l);
    /* "()" is accepted: the API server takes it (an empty set). */
    for (;;) { /* value? (',' value?)* ')' */
      if (l->tok == TK_IDENT) {
        if ((rc = selector__value(l, err))) return rc;
        selector__next(l);
      }
      values++;
      if (l->tok == TK_CLOSE) break;
      if (l->tok != TK_COMMA) {
        if (l->tok == TK_END) {
          buf_printf(err, "at character %zu: the '(' is not closed", open + 1);
          return -22;
        }
        return selector__fail(l, err, "expected ',' or ')' in the list of values");
      }
      selector__next(l);
    }
    (void)values;
    break;
  }
  default:
    return selector__fail(l, err, "expected '=', '==', '!=', 'in', 'notin', '<', '>', ',' or the end after a key");
  }
  selector__next(l);
  return selector__at_end(l) ? 0 : selector__fail(l, err, "expected ',' or the end after a requirement");
}

int kube_label_selector_check(const char *s, buf_t *err) {
  size_t n = strlen(s);
  if (n > KUBE_SELECTOR_MAX) {
    buf_printf(err, "longer than %d characters", KUBE_SELECTOR_MAX);
    return -22;
  }
  sel_lex_t l = {.s = s};
  selector__next(&l);
  if (l.tok == TK_END) return 0;
  for (;;) {
    int rc = selector__requirement(&l, err);
    if (rc) return rc;
    if (l.tok == TK_END) return 0;
    selector__next(&l); /* past the ',' */
    if (l.tok == TK_END) return selector__fail(&l, err, "a ',' must be followed by a requirement");
  }
}
