/* Internal: binary min-heap of waiting items ordered by (ready_at_ms, seq); each item knows
 * its slot, so decrease-key is O(log n). */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "queue/queue_item.h"

typedef struct queue__heap_s {
  queue__item_t **v;
  uint32_t len, cap;
  uint64_t ops, swaps; /* work counters: push/pop/update calls and levels moved */
} queue__heap_t;

/* Prepares an empty heap (allocates nothing). */
void queue__heap_init(queue__heap_t *h);
/* Adds an item (ready_at_ms and seq set); 0 or UV_ENOMEM. */
int queue__heap_push(queue__heap_t *h, queue__item_t *it);
/* Restores order after an item's ready_at_ms decreased. */
void queue__heap_decreased(queue__heap_t *h, queue__item_t *it);
/* The earliest item, or NULL. */
static inline queue__item_t *queue__heap_top(const queue__heap_t *h) { return h->len ? h->v[0] : NULL; }
/* Removes the earliest item and returns it. */
queue__item_t *queue__heap_pop(queue__heap_t *h);
/* Frees the array. */
void queue__heap_free(queue__heap_t *h);
