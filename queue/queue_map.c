#include "queue/queue_map.h"

#include <stdlib.h>
#include <string.h>
#include <uv.h>

#define QUEUE__MAP_MIN 16

/* SipHash-1-3 (Aumasson & Bernstein): a keyed hash, fast on short keys like "ns/name". */
#define QUEUE__ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define QUEUE__SIPROUND                                                            \
  do {                                                                             \
    v0 += v1; v1 = QUEUE__ROTL(v1, 13); v1 ^= v0; v0 = QUEUE__ROTL(v0, 32);        \
    v2 += v3; v3 = QUEUE__ROTL(v3, 16); v3 ^= v2;                                  \
    v0 += v3; v3 = QUEUE__ROTL(v3, 21); v3 ^= v0;                                  \
    v2 += v1; v1 = QUEUE__ROTL(v1, 17); v1 ^= v2; v2 = QUEUE__ROTL(v2, 32);        \
  } while (0)

static uint64_t queue__siphash13(const unsigned char *in, size_t len, uint64_t k0, uint64_t k1) {
  uint64_t v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1;
  uint64_t v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
  uint64_t b = (uint64_t)len << 56;
  const unsigned char *end = in + (len & ~(size_t)7);
  for (; in != end; in += 8) {
    uint64_t m = 0;
    for (int i = 7; i >= 0; i--) m = (m << 8) | in[i]; /* little-endian load, any host */
    v3 ^= m;
    QUEUE__SIPROUND;
    v0 ^= m;
  }
  for (size_t i = 0; i < (len & 7); i++) b |= (uint64_t)in[i] << (8 * i);
  v3 ^= b;
  QUEUE__SIPROUND;
  v0 ^= b;
  v2 ^= 0xff;
  QUEUE__SIPROUND;
  QUEUE__SIPROUND;
  QUEUE__SIPROUND;
  return v0 ^ v1 ^ v2 ^ v3;
}

void queue__map_init(queue__map_t *m) {
  memset(m, 0, sizeof *m);
  uint64_t seed[2];
  /* Synchronous getrandom; if that fails, a weaker address/time seed still varies per process. */
  if (uv_random(NULL, NULL, seed, sizeof seed, 0, NULL) != 0) {
    seed[0] = (uint64_t)(uintptr_t)m ^ uv_hrtime();
    seed[1] = (uint64_t)(uintptr_t)&seed ^ 0x9e3779b97f4a7c15ULL;
  }
  m->k0 = seed[0];
  m->k1 = seed[1];
}

uint32_t queue__map_hash(const queue__map_t *m, const char *key, size_t len) {
  uint64_t h = queue__siphash13((const unsigned char *)key, len, m->k0, m->k1);
  return (uint32_t)(h ^ (h >> 32));
}

queue__item_t *queue__map_find(queue__map_t *m, const char *key, size_t len, uint32_t hash) {
  m->lookups++;
  if (!m->nbuckets) return NULL;
  for (queue__item_t *it = m->buckets[hash & (m->nbuckets - 1)]; it; it = it->hnext) {
    m->probes++;
    if (it->hash == hash && it->keylen == len && memcmp(it->key, key, len) == 0) return it;
  }
  return NULL;
}

/* Moves every entry to a table of n buckets; on allocation failure keeps the old one. */
static void queue__map_resize(queue__map_t *m, size_t n) {
  queue__item_t **nb = calloc(n, sizeof *nb);
  if (!nb) return;
  for (size_t i = 0; i < m->nbuckets; i++) {
    queue__item_t *it = m->buckets[i];
    while (it) {
      queue__item_t *next = it->hnext;
      size_t j = it->hash & (n - 1);
      it->hnext = nb[j];
      nb[j] = it;
      m->rehashed++;
      it = next;
    }
  }
  free(m->buckets);
  m->buckets = nb;
  m->nbuckets = n;
}

int queue__map_insert(queue__map_t *m, queue__item_t *it) {
  m->lookups++;
  if (m->count + 1 > m->nbuckets) queue__map_resize(m, m->nbuckets ? m->nbuckets * 2 : QUEUE__MAP_MIN);
  if (!m->nbuckets) return UV_ENOMEM; /* a failed later growth only raises the load */
  size_t j = it->hash & (m->nbuckets - 1);
  it->hnext = m->buckets[j];
  m->buckets[j] = it;
  m->count++;
  return 0;
}

void queue__map_remove(queue__map_t *m, queue__item_t *it) {
  m->lookups++;
  queue__item_t **pp = &m->buckets[it->hash & (m->nbuckets - 1)];
  while (*pp != it) {
    m->probes++;
    pp = &(*pp)->hnext;
  }
  m->probes++;
  *pp = it->hnext;
  it->hnext = NULL;
  m->count--;
  /* Halve below 1/4 load: a resize needs at least n/4 operations since the last one. */
  if (m->nbuckets > QUEUE__MAP_MIN && m->count < m->nbuckets / 4) queue__map_resize(m, m->nbuckets / 2);
}

void queue__map_clear(queue__map_t *m, void (*fn)(queue__item_t *it, void *ctx), void *ctx) {
  for (size_t i = 0; i < m->nbuckets; i++) {
    queue__item_t *it = m->buckets[i];
    m->buckets[i] = NULL;
    while (it) {
      queue__item_t *next = it->hnext;
      it->hnext = NULL;
      m->count--;
      fn(it, ctx);
      it = next;
    }
  }
}

void queue__map_free(queue__map_t *m) {
  free(m->buckets);
  m->buckets = NULL;
  m->nbuckets = m->count = 0;
}
