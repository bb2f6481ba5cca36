/* A set of texts, each kept once: an open-addressing table of (pointer, length) the caller fills
 * with lasting copies (in an arena, in blocks of its own). Interns map keys: a values file of
 * 20,000 list items has 120,000 keys and a handful of distinct ones. */
#pragma once
#include <stddef.h>

typedef struct strset_entry_s {
  const char *p; /* NULL: empty */
  size_t n;
} strset_entry_t;

typedef struct strset_s {
  strset_entry_t *slot;
  size_t cap, n;
} strset_t;

#define STRSET_INIT {NULL, 0, 0}

/* The entry of p[0..n): when ->p is NULL the text is not there yet, and the caller stores a lasting
 * copy of it with strset_fill (or leaves the entry empty). NULL when the table cannot grow. */
strset_entry_t *strset_get(strset_t *s, const char *p, size_t n);

static inline void strset_fill(strset_t *s, strset_entry_t *e, const char *copy, size_t n) {
  e->p = copy;
  e->n = n;
  s->n++;
}

/* Frees the table (not the texts, which are the caller's). */
void strset_free(strset_t *s);
