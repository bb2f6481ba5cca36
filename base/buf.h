/* Growable byte buffer. Always NUL-terminated so that text can be used as a C string. */
#pragma once
#include <stddef.h>
#include <stdarg.h>
#include <string.h>

typedef struct buf_s {
  char *data;
  size_t len;
  size_t cap;
} buf_t;

#define BUF_INIT {NULL, 0, 0}

/* Grows the buffer to hold `extra` more bytes plus the terminator (buf_reserve's slow path). */
int buf__grow(buf_t *b, size_t extra);
/* Ensures room for `extra` more bytes plus the terminator; 0 or UV_ENOMEM-style -12. */
static inline int buf_reserve(buf_t *b, size_t extra) {
  return b->len + extra + 1 <= b->cap ? 0 : buf__grow(b, extra);
}
/* Appends n bytes. */
static inline int buf_append(buf_t *b, const void *p, size_t n) {
  if (b->len + n + 1 > b->cap && buf__grow(b, n)) return -12;
  if (n) memcpy(b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = 0;
  return 0;
}
/* Appends a C string. */
int buf_puts(buf_t *b, const char *s);
/* Appends one byte. */
static inline int buf_putc(buf_t *b, char c) {
  if (b->len + 2 > b->cap && buf__grow(b, 1)) return -12;
  b->data[b->len++] = c;
  b->data[b->len] = 0;
  return 0;
}
/* Appends printf-formatted text. */
int buf_printf(buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends vprintf-formatted text. */
int buf_vprintf(buf_t *b, const char *fmt, va_list ap);
/* Empties the buffer, keeping its memory. */
void buf_reset(buf_t *b);
/* Frees the memory. */
void buf__free(buf_t *b);
static inline void buf_free(buf_t *b) {
  if (b->data) buf__free(b);
  else b->len = b->cap = 0;
}
/* Hands the data to the caller (NUL-terminated, never NULL) and empties the buffer. */
char *buf_steal(buf_t *b);
/* Removes the first n bytes. */
void buf_consume(buf_t *b, size_t n);
