/* Internal: the per-key record and the intrusive list it sits on. Not for use outside queue/. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define queue__container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

/* Circular doubly linked list node; a list head is a node that points to itself when empty. */
typedef struct queue__link_s {
  struct queue__link_s *prev, *next;
} queue__link_t;

static inline void queue__link_init(queue__link_t *h) { h->prev = h->next = h; }
static inline int queue__link_empty(const queue__link_t *h) { return h->next == h; }
static inline void queue__link_push(queue__link_t *h, queue__link_t *n) {
  n->prev = h->prev;
  n->next = h;
  h->prev->next = n;
  h->prev = n;
}
static inline void queue__link_remove(queue__link_t *n) {
  n->prev->next = n->next;
  n->next->prev = n->prev;
  n->prev = n->next = NULL;
}

/* Item state bits. DIRTY: wants processing (client-go's dirty set). PROCESSING: handed to
 * the consumer, not yet done. WAITING: in the timer heap. PARKED: PROCESSING, but not holding a
 * processing slot (queue_park). An item is on the ready list iff
 * DIRTY && !PROCESSING, and on the running list iff PROCESSING, so one link serves both. */
enum { QUEUE__DIRTY = 1u, QUEUE__PROCESSING = 2u, QUEUE__WAITING = 4u, QUEUE__PARKED = 8u };

/* One tracked key. It lives while any state bit is set or failures > 0 (the backoff memory
 * that client-go keeps until Forget), and is one allocation: this header plus the key. */
typedef struct queue__item_s {
  struct queue__item_s *hnext; /* hash chain */
  queue__link_t link;          /* ready FIFO or running list */
  uint64_t ready_at_ms;        /* WAITING: deadline */
  uint64_t seq;                /* WAITING: tie-break, FIFO among equal deadlines */
  uint64_t added_ms;           /* DIRTY: when it was added (queue latency) */
  uint64_t started_ms;         /* PROCESSING: when it was dispatched (work duration) */
  uint32_t hash;
  uint32_t heap_idx;   /* WAITING: slot in the heap */
  uint32_t failures;   /* rate-limited adds since the last forget */
  uint16_t keylen;
  uint8_t flags;
  char key[];          /* NUL-terminated */
} queue__item_t;
