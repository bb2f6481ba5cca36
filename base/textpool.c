#include "base/textpool.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct textpool_entry_s {
  textpool_entry_t *next;
  uint64_t hash;
  size_t refs, len;
  char text[];
};

/* A block as glibc's malloc holds it: the request and 8, rounded up to 16, at least 32 (as
 * informer.h's INFORMER_BLOCK_BYTES, which base/ cannot include). */
static size_t textpool__block(size_t n) {
  size_t b = (n + 8 + 15) & ~(size_t)15;
  return b < 32 ? 32 : b;
}

static uint64_t textpool__hash(const char *p, size_t n) {
  uint64_t h = 14695981039346656037ull; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
  return h;
}

static textpool_entry_t *textpool__entry(const char *text) {
  return (textpool_entry_t *)(text - offsetof(textpool_entry_t, text));
}

/* Doubles the buckets (at least 16); 0 or -1 when out of memory (the pool stays as it was). */
static int textpool__grow(textpool_t *tp) {
  size_t nb = tp->nb ? tp->nb * 2 : 16;
  textpool_entry_t **b = calloc(nb, sizeof *b);
  if (!b) return -1;
  for (size_t i = 0; i < tp->nb; i++)
    for (textpool_entry_t *e = tp->b[i], *next; e; e = next) {
      next = e->next;
      e->next = b[e->hash & (nb - 1)];
      b[e->hash & (nb - 1)] = e;
    }
  if (tp->nb) tp->bytes -= textpool__block(tp->nb * sizeof *tp->b);
  tp->bytes += textpool__block(nb * sizeof *b);
  free(tp->b);
  tp->b = b;
  tp->nb = nb;
  return 0;
}

const char *textpool_hold(textpool_t *tp, const char *p, size_t n) {
  uint64_t h = textpool__hash(p, n);
  for (textpool_entry_t *e = tp->nb ? tp->b[h & (tp->nb - 1)] : NULL; e; e = e->next)
    if (e->hash == h && e->len == n && !memcmp(e->text, p, n)) {
      e->refs++;
      return e->text;
    }
  if (tp->n >= tp->nb && textpool__grow(tp) && !tp->nb) return NULL; /* a full table still works, slower */
  textpool_entry_t *e = malloc(sizeof *e + n + 1);
  if (!e) return NULL;
  e->hash = h;
  e->refs = 1;
  e->len = n;
  memcpy(e->text, p, n);
  e->text[n] = 0;
  e->next = tp->b[h & (tp->nb - 1)];
  tp->b[h & (tp->nb - 1)] = e;
  tp->n++;
  tp->bytes += textpool__block(sizeof *e + n + 1);
  return e->text;
}

void textpool_release(textpool_t *tp, const char *text) {
  if (!text) return;
  textpool_entry_t *e = textpool__entry(text);
  if (--e->refs) return;
  textpool_entry_t **pp = &tp->b[e->hash & (tp->nb - 1)];
  while (*pp != e) pp = &(*pp)->next;
  *pp = e->next;
  tp->n--;
  tp->bytes -= textpool__block(sizeof *e + e->len + 1);
  free(e);
}

size_t textpool_refs(const char *text) { return text ? textpool__entry(text)->refs : 0; }

void textpool_free(textpool_t *tp) {
  for (size_t i = 0; i < tp->nb; i++)
    for (textpool_entry_t *e = tp->b[i], *next; e; e = next) {
      next = e->next;
      free(e);
    }
  free(tp->b);
  *tp = (textpool_t)TEXTPOOL_INIT;
}
