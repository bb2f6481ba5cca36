#include "base/cjpool.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <cjson/cJSON.h>

#if defined(__SANITIZE_ADDRESS__)
#define CJPOOL_OFF 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CJPOOL_OFF 1
#endif
#endif

#ifndef CJPOOL_OFF
#define CJPOOL_CHUNK ((size_t)64 << 10)
#define CJPOOL_BIG 1024
#define CJPOOL_SPARE 2 /* empty chunks kept for reuse */

typedef struct cjpool_chunk_s {
  size_t live; /* blocks carved from it and not freed */
  size_t used; /* bytes carved, from the chunk's start (this header included) */
  struct cjpool_chunk_s *next_spare;
} cjpool_chunk_t;

#define CJPOOL_HDR ((sizeof(cjpool_chunk_t) + 15) & ~(size_t)15)

static cjpool_chunk_t *cjpool_cur, *cjpool_spare;
static size_t cjpool_nspare;
/* every chunk held: an open-addressing set of their addresses (grown at half full) */
static uintptr_t *cjpool_set;
static size_t cjpool_cap, cjpool_n;
static bool cjpool_on;
static _Thread_local bool cjpool_away; /* this thread bypasses the pool */

static size_t cjpool_slot(uintptr_t a) { return (size_t)(((a / CJPOOL_CHUNK) * 0x9E3779B97F4A7C15ull) >> 24); }

static bool cjpool_has(uintptr_t a) {
  if (!cjpool_cap) return false;
  for (size_t i = cjpool_slot(a) & (cjpool_cap - 1);; i = (i + 1) & (cjpool_cap - 1)) {
    if (cjpool_set[i] == a) return true;
    if (!cjpool_set[i]) return false;
  }
}

static bool cjpool_add(uintptr_t a) {
  if (2 * (cjpool_n + 1) > cjpool_cap) {
    size_t nc = cjpool_cap ? cjpool_cap * 2 : 256;
    uintptr_t *ns = calloc(nc, sizeof *ns);
    if (!ns) return false;
    for (size_t i = 0; i < cjpool_cap; i++)
      if (cjpool_set[i]) {
        size_t k = cjpool_slot(cjpool_set[i]) & (nc - 1);
        while (ns[k]) k = (k + 1) & (nc - 1);
        ns[k] = cjpool_set[i];
      }
    free(cjpool_set);
    cjpool_set = ns;
    cjpool_cap = nc;
  }
  size_t k = cjpool_slot(a) & (cjpool_cap - 1);
  while (cjpool_set[k]) k = (k + 1) & (cjpool_cap - 1);
  cjpool_set[k] = a;
  cjpool_n++;
  return true;
}

static void cjpool_del(uintptr_t a) {
  size_t i = cjpool_slot(a) & (cjpool_cap - 1);
  while (cjpool_set[i] != a) i = (i + 1) & (cjpool_cap - 1);
  cjpool_set[i] = 0;
  cjpool_n--;
  for (size_t j = (i + 1) & (cjpool_cap - 1); cjpool_set[j]; j = (j + 1) & (cjpool_cap - 1)) {
    uintptr_t x = cjpool_set[j];
    cjpool_set[j] = 0;
    size_t k = cjpool_slot(x) & (cjpool_cap - 1);
    while (cjpool_set[k]) k = (k + 1) & (cjpool_cap - 1);
    cjpool_set[k] = x;
  }
}

/* An emptied chunk: kept for reuse, or given back when enough are kept. */
static void cjpool_retire(cjpool_chunk_t *c) {
  if (cjpool_nspare < CJPOOL_SPARE) {
    c->next_spare = cjpool_spare;
    cjpool_spare = c;
    cjpool_nspare++;
    return;
  }
  cjpool_del((uintptr_t)c);
  free(c);
}

static void *cjpool_malloc(size_t n) {
  size_t need = (n + 7) & ~(size_t)7;
  if (!need) need = 8;
  if (need > CJPOOL_BIG || cjpool_away) return malloc(n);
  cjpool_chunk_t *c = cjpool_cur;
  if (!c || CJPOOL_CHUNK - c->used < need) {
    if (c && c->live == 0) cjpool_retire(c); /* else its last block retires it */
    cjpool_cur = NULL;
    if (cjpool_spare) {
      c = cjpool_spare;
      cjpool_spare = c->next_spare;
      cjpool_nspare--;
    } else {
      c = aligned_alloc(CJPOOL_CHUNK, CJPOOL_CHUNK);
      if (!c) return NULL;
      if (!cjpool_add((uintptr_t)c)) {
        free(c);
        return NULL;
      }
    }
    c->live = 0;
    c->used = CJPOOL_HDR;
    cjpool_cur = c;
  }
  void *p = (unsigned char *)c + c->used;
  c->used += need;
  c->live++;
  return p;
}

static void cjpool_free(void *p) {
  if (!p) return;
  if (cjpool_away) {
    free(p);
    return;
  }
  uintptr_t base = (uintptr_t)p & ~(uintptr_t)(CJPOOL_CHUNK - 1);
  if (!cjpool_has(base)) {
    free(p);
    return;
  }
  cjpool_chunk_t *c = (cjpool_chunk_t *)base;
  if (--c->live == 0) {
    if (c == cjpool_cur) c->used = CJPOOL_HDR; /* carved from the start again */
    else cjpool_retire(c);
  }
}

#endif

void cjpool_install(void) {
#ifndef CJPOOL_OFF
  if (cjpool_on) return;
  cJSON_Hooks hooks = {cjpool_malloc, cjpool_free};
  cJSON_InitHooks(&hooks);
  cjpool_on = true;
#endif
}

void cjpool_thread_off(void) {
#ifndef CJPOOL_OFF
  cjpool_away = true;
#endif
}

size_t cjpool_chunks(void) {
#ifndef CJPOOL_OFF
  return cjpool_n;
#else
  return 0;
#endif
}
