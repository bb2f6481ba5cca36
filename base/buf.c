#include "base/buf.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int buf__grow(buf_t *b, size_t extra) {
  if (b->len + extra + 1 <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < b->len + extra + 1) {
    if (cap > ((size_t)-1) / 2) return -12;
    cap *= 2;
  }
  char *p = realloc(b->data, cap);
  if (!p) return -12;
  b->data = p;
  b->cap = cap;
  return 0;
}

int buf_puts(buf_t *b, const char *s) { return buf_append(b, s, strlen(s)); }

int buf_vprintf(buf_t *b, const char *fmt, va_list ap) {
  va_list cp;
  va_copy(cp, ap);
  int n = vsnprintf(NULL, 0, fmt, cp);
  va_end(cp);
  if (n < 0) return -22;
  if (buf_reserve(b, (size_t)n)) return -12;
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
  return 0;
}

int buf_printf(buf_t *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = buf_vprintf(b, fmt, ap);
  va_end(ap);
  return r;
}

void buf_reset(buf_t *b) {
  b->len = 0;
  if (b->data) b->data[0] = 0;
}

void buf__free(buf_t *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

char *buf_steal(buf_t *b) {
  if (!b->data && buf_reserve(b, 0)) return NULL;
  if (!b->len) b->data[0] = 0;
  char *p = b->data;
  b->data = NULL;
  b->len = b->cap = 0;
  return p;
}

void buf_consume(buf_t *b, size_t n) {
  if (n >= b->len) { buf_reset(b); return; }
  memmove(b->data, b->data + n, b->len - n);
  b->len -= n;
  b->data[b->len] = 0;
}
