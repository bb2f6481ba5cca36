/* Internal: key -> item hash map, chained through the items themselves (no side allocations).
 * Keyed SipHash-1-3 with a per-process random seed, so hostile object names cannot force
 * long chains; load factor kept in [1/4, 1] by doubling/halving, so every operation is O(1)
 * expected and resizes are amortized O(1). */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "queue/queue_item.h"

typedef struct queue__map_s {
  queue__item_t **buckets;
  size_t nbuckets; /* 0 or a power of two */
  size_t count;
  uint64_t k0, k1;
  /* Work counters: lookups (find/insert/remove), chain entries examined, entries moved by resizes. */
  uint64_t lookups, probes, rehashed;
} queue__map_t;

/* Prepares an empty map (allocates nothing). */
void queue__map_init(queue__map_t *m);
/* Hashes a key with the map's seed. */
uint32_t queue__map_hash(const queue__map_t *m, const char *key, size_t len);
/* Finds the item for key (hash from queue__map_hash), or NULL. */
queue__item_t *queue__map_find(queue__map_t *m, const char *key, size_t len, uint32_t hash);
/* Adds an item whose key is not in the map yet; 0, or UV_ENOMEM only if no table exists at all. */
int queue__map_insert(queue__map_t *m, queue__item_t *it);
/* Unlinks an item that is in the map. */
void queue__map_remove(queue__map_t *m, queue__item_t *it);
/* Empties the map in one pass, handing each item to fn (which may free it). */
void queue__map_clear(queue__map_t *m, void (*fn)(queue__item_t *it, void *ctx), void *ctx);
/* Frees the bucket array. */
void queue__map_free(queue__map_t *m);
