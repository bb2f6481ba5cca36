/* A pool of texts held by reference count: a text asked for again is the copy already held, and
 * each copy is freed when its last holder lets it go. An informer keeps large subtrees that many of
 * its objects share (an inline chart carried by a thousand HelmReleases) once this way.
 * Costs: one block per distinct text (a 32-byte header and the text), one bucket pointer per text;
 * hold is O(length) (a hash and one compare), release O(1) on average. Not thread-safe. */
#pragma once
#include <stddef.h>

typedef struct textpool_entry_s textpool_entry_t;

typedef struct textpool_s {
  textpool_entry_t **b; /* buckets (chained), a power of two of them */
  size_t nb, n;         /* buckets, distinct texts */
  size_t bytes;         /* the texts' blocks and the buckets, as TEXTPOOL_BLOCK_BYTES counts them */
} textpool_t;

#define TEXTPOOL_INIT {NULL, 0, 0, 0}

/* The pool's copy of p[0..n) (NUL-terminated), held once more; NULL when out of memory. */
const char *textpool_hold(textpool_t *tp, const char *p, size_t n);
/* Lets go of one hold on text (a pointer textpool_hold returned); the copy is freed with the last. */
void textpool_release(textpool_t *tp, const char *text);
/* How many holds text has (a pointer textpool_hold returned). */
size_t textpool_refs(const char *text);
/* Frees the buckets and every text still held (for a pool whose holders are all gone at once). */
void textpool_free(textpool_t *tp);
