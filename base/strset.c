#include "base/strset.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t strset__slot(const strset_t *s, const char *p, size_t n) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 16777619u;
  size_t j = h & (s->cap - 1);
  while (s->slot[j].p && !(s->slot[j].n == n && !memcmp(s->slot[j].p, p, n))) j = (j + 1) & (s->cap - 1);
  return j;
}

strset_entry_t *strset_get(strset_t *s, const char *p, size_t n) {
  if ((s->n + 1) * 2 > s->cap) { /* at most half full */
    size_t nc = s->cap ? s->cap * 2 : 256;
    strset_t g = {calloc(nc, sizeof *s->slot), nc, s->n};
    if (!g.slot) return NULL;
    for (size_t i = 0; i < s->cap; i++)
      if (s->slot[i].p) g.slot[strset__slot(&g, s->slot[i].p, s->slot[i].n)] = s->slot[i];
    free(s->slot);
    *s = g;
  }
  return &s->slot[strset__slot(s, p, n)];
}

void strset_free(strset_t *s) {
  free(s->slot);
  s->slot = NULL;
  s->cap = s->n = 0;
}
