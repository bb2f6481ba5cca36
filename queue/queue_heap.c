#include "queue/queue_heap.h"

#include <stdlib.h>
#include <uv.h>

static int queue__heap_less(const queue__item_t *a, const queue__item_t *b) {
  return a->ready_at_ms < b->ready_at_ms || (a->ready_at_ms == b->ready_at_ms && a->seq < b->seq);
}

static void queue__heap_place(queue__heap_t *h, uint32_t i, queue__item_t *it) {
  h->v[i] = it;
  it->heap_idx = i;
}

static void queue__heap_up(queue__heap_t *h, uint32_t i) {
  queue__item_t *it = h->v[i];
  while (i > 0) {
    uint32_t parent = (i - 1) / 2;
    if (!queue__heap_less(it, h->v[parent])) break;
    queue__heap_place(h, i, h->v[parent]);
    i = parent;
    h->swaps++;
  }
  queue__heap_place(h, i, it);
}

static void queue__heap_down(queue__heap_t *h, uint32_t i) {
  queue__item_t *it = h->v[i];
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= h->len) break;
    if (c + 1 < h->len && queue__heap_less(h->v[c + 1], h->v[c])) c++;
    if (!queue__heap_less(h->v[c], it)) break;
    queue__heap_place(h, i, h->v[c]);
    i = c;
    h->swaps++;
  }
  queue__heap_place(h, i, it);
}

void queue__heap_init(queue__heap_t *h) {
  h->v = NULL;
  h->len = h->cap = 0;
  h->ops = h->swaps = 0;
}

int queue__heap_push(queue__heap_t *h, queue__item_t *it) {
  if (h->len == h->cap) {
    if (h->cap >= UINT32_MAX / 2) return UV_ENOMEM;
    uint32_t cap = h->cap ? h->cap * 2 : 16;
    queue__item_t **v = realloc(h->v, (size_t)cap * sizeof *v);
    if (!v) return UV_ENOMEM;
    h->v = v;
    h->cap = cap;
  }
  h->ops++;
  h->v[h->len] = it;
  queue__heap_up(h, h->len++);
  return 0;
}

void queue__heap_decreased(queue__heap_t *h, queue__item_t *it) {
  h->ops++;
  queue__heap_up(h, it->heap_idx);
}

queue__item_t *queue__heap_pop(queue__heap_t *h) {
  if (!h->len) return NULL;
  h->ops++;
  queue__item_t *top = h->v[0];
  if (--h->len) {
    h->v[0] = h->v[h->len];
    queue__heap_down(h, 0);
  }
  top->heap_idx = UINT32_MAX;
  /* Give memory back after a burst; halving at 1/4 keeps this amortized O(1). */
  if (h->cap > 64 && h->len < h->cap / 4) {
    queue__item_t **v = realloc(h->v, (size_t)(h->cap / 2) * sizeof *v);
    if (v) {
      h->v = v;
      h->cap /= 2;
    }
  }
  return top;
}

void queue__heap_free(queue__heap_t *h) {
  free(h->v);
  h->v = NULL;
  h->len = h->cap = 0;
}
