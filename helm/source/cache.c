/* The shared chart cache (see cache.h). */
#include "helm/source/cache.h"

#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/sha256.h"

#define FILE_OVERHEAD 64 /* per file: its chart_file_t, allocation headers */

struct chart_cache_s {
  pthread_mutex_t mu;
  chart_cache_options_t opts;
  chart_cache_entry_t **buckets;
  size_t nbuckets, entries, referenced, bytes;
  chart_cache_entry_t lru; /* sentinel: lru.lru_next is the most recently released */
  chart_cache_stats_t st;
};

int chart_cache_new(const chart_cache_options_t *opts, chart_cache_t **out) {
  *out = NULL;
  chart_cache_t *c = calloc(1, sizeof *c);
  if (!c) return CHART_CACHE_ENOMEM;
  if (opts) c->opts = *opts;
  if (!c->opts.max_bytes) c->opts.max_bytes = (size_t)256 << 20;
  c->nbuckets = 16;
  c->buckets = calloc(c->nbuckets, sizeof *c->buckets);
  if (!c->buckets) {
    free(c);
    return CHART_CACHE_ENOMEM;
  }
  pthread_mutex_init(&c->mu, NULL);
  c->lru.lru_next = c->lru.lru_prev = &c->lru;
  *out = c;
  return 0;
}

static size_t bucket_of(const chart_cache_t *c, const uint8_t d[32]) {
  uint64_t h;
  memcpy(&h, d, sizeof h); /* a sha256 is uniform already */
  return (size_t)h & (c->nbuckets - 1);
}

static void entry_free(chart_cache_t *c, chart_cache_entry_t *e) {
  if (c->opts.dispose) c->opts.dispose(e, c->opts.dispose_data);
  chart_free(e->owned);
  free(e);
}

void chart_cache_free(chart_cache_t *c) {
  if (!c) return;
  for (size_t i = 0; i < c->nbuckets; i++)
    for (chart_cache_entry_t *e = c->buckets[i], *next; e; e = next) {
      next = e->hnext;
      assert(e->refs == 0 && "chart_cache_free with an entry still referenced");
      entry_free(c, e);
    }
  free(c->buckets);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

int chart_cache_digest_parse(const char *s, uint8_t out[32]) {
  if (!s) return CHART_CACHE_EINVAL;
  if (!strncmp(s, "sha256:", 7)) s += 7;
  if (strlen(s) != 64) return CHART_CACHE_EINVAL;
  for (int i = 0; i < 32; i++) {
    int v = 0;
    for (int k = 0; k < 2; k++) {
      char ch = s[2 * i + k];
      int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
      if (d < 0) return CHART_CACHE_EINVAL;
      v = v * 16 + d;
    }
    out[i] = (uint8_t)v;
  }
  return 0;
}


static size_t files_bytes(const chart_file_t *f, size_t n) {
  size_t b = 0;
  for (size_t i = 0; i < n; i++) b += strlen(f[i].name) + f[i].len + 2 + FILE_OVERHEAD;
  return b;
}

size_t chart_cache_chart_bytes(const chart_t *ch) {
  size_t b = sizeof *ch + files_bytes(ch->templates, ch->ntemplates) + files_bytes(ch->files, ch->nfiles) +
             ch->schema_len;
  for (size_t i = 0; i < ch->ndeps; i++) b += chart_cache_chart_bytes(ch->deps[i]);
  return b;
}

static chart_cache_entry_t *find(chart_cache_t *c, const uint8_t d[32]) {
  for (chart_cache_entry_t *e = c->buckets[bucket_of(c, d)]; e; e = e->hnext)
    if (!memcmp(e->digest, d, 32)) return e;
  return NULL;
}

static void lru_unlink(chart_cache_entry_t *e) {
  e->lru_prev->lru_next = e->lru_next;
  e->lru_next->lru_prev = e->lru_prev;
  e->lru_prev = e->lru_next = NULL;
}

static void ref_locked(chart_cache_t *c, chart_cache_entry_t *e) {
  if (e->refs++ == 0) {
    lru_unlink(e);
    c->referenced++;
  }
}

static void unhash(chart_cache_t *c, chart_cache_entry_t *e) {
  chart_cache_entry_t **pp = &c->buckets[bucket_of(c, e->digest)];
  while (*pp != e) pp = &(*pp)->hnext;
  *pp = e->hnext;
  c->entries--;
  c->bytes -= e->bytes;
}

/* Evicts unreferenced entries, oldest first, while over budget; returns them in a list to free
 * outside the lock. */
static chart_cache_entry_t *evict_locked(chart_cache_t *c) {
  chart_cache_entry_t *gone = NULL;
  while (c->bytes > c->opts.max_bytes && c->lru.lru_prev != &c->lru) {
    chart_cache_entry_t *e = c->lru.lru_prev;
    lru_unlink(e);
    unhash(c, e);
    c->st.evictions++;
    e->hnext = gone;
    gone = e;
  }
  return gone;
}

static void free_list(chart_cache_t *c, chart_cache_entry_t *gone) {
  while (gone) {
    chart_cache_entry_t *next = gone->hnext;
    entry_free(c, gone);
    gone = next;
  }
}

chart_cache_entry_t *chart_cache_lookup(chart_cache_t *c, const uint8_t digest[32]) {
  pthread_mutex_lock(&c->mu);
  chart_cache_entry_t *e = find(c, digest);
  if (e) {
    ref_locked(c, e);
    c->st.hits++;
  } else c->st.misses++;
  pthread_mutex_unlock(&c->mu);
  return e;
}

static void grow_locked(chart_cache_t *c) {
  if (c->entries < c->nbuckets) return;
  size_t nb = c->nbuckets * 2;
  chart_cache_entry_t **b = calloc(nb, sizeof *b);
  if (!b) return; /* longer chains, still correct */
  for (size_t i = 0; i < c->nbuckets; i++)
    for (chart_cache_entry_t *e = c->buckets[i], *next; e; e = next) {
      next = e->hnext;
      uint64_t h;
      memcpy(&h, e->digest, sizeof h);
      size_t k = (size_t)h & (nb - 1);
      e->hnext = b[k];
      b[k] = e;
    }
  free(c->buckets);
  c->buckets = b;
  c->nbuckets = nb;
}

int chart_cache_put(chart_cache_t *c, const uint8_t digest[32], chart_t *chart, chart_cache_entry_t **out) {
  *out = NULL;
  chart_cache_entry_t *ne = calloc(1, sizeof *ne);
  if (!ne) {
    chart_free(chart);
    return CHART_CACHE_ENOMEM;
  }
  memcpy(ne->digest, digest, 32);
  base_sha256_hex(digest, ne->digest_hex);
  ne->chart = ne->owned = chart;
  ne->bytes = chart_cache_chart_bytes(chart);
  pthread_mutex_lock(&c->mu);
  chart_cache_entry_t *e = find(c, digest);
  chart_cache_entry_t *gone = NULL;
  if (e) {
    ref_locked(c, e);
    c->st.hits++;
  } else {
    grow_locked(c);
    size_t k = bucket_of(c, digest);
    ne->hnext = c->buckets[k];
    c->buckets[k] = ne;
    ne->refs = 1;
    c->entries++;
    c->referenced++;
    c->bytes += ne->bytes;
    gone = evict_locked(c);
    e = ne;
    ne = NULL;
  }
  pthread_mutex_unlock(&c->mu);
  if (ne) {
    chart_free(ne->owned);
    free(ne);
  }
  free_list(c, gone);
  *out = e;
  return 0;
}

void chart_cache_addref(chart_cache_t *c, chart_cache_entry_t *e) {
  pthread_mutex_lock(&c->mu);
  assert(e->refs > 0);
  e->refs++;
  pthread_mutex_unlock(&c->mu);
}

void chart_cache_release(chart_cache_t *c, chart_cache_entry_t *e) {
  if (!e) return;
  pthread_mutex_lock(&c->mu);
  assert(e->refs > 0);
  chart_cache_entry_t *gone = NULL;
  if (--e->refs == 0) {
    c->referenced--;
    e->lru_next = c->lru.lru_next;
    e->lru_prev = &c->lru;
    c->lru.lru_next->lru_prev = e;
    c->lru.lru_next = e;
    gone = evict_locked(c);
  }
  pthread_mutex_unlock(&c->mu);
  free_list(c, gone);
}

int chart_cache_load(chart_cache_t *c, const void *tgz, size_t len, const char *want, const char *what,
                     chart_cache_entry_t **out, char *err, size_t errlen) {
  *out = NULL;
  if (!what) what = "chart";
  uint8_t d[32], w[32];
  if (want && chart_cache_digest_parse(want, w))
    return base_errf(err, errlen, CHART_CACHE_EINVAL, "%s: the expected digest \"%.80s\" is not a sha256 digest", what,
                     want);
  base_sha256(tgz, len, d);
  if (want && memcmp(d, w, 32)) {
    char got[65], exp[65];
    base_sha256_hex(d, got);
    base_sha256_hex(w, exp);
    pthread_mutex_lock(&c->mu);
    c->st.digest_mismatches++;
    pthread_mutex_unlock(&c->mu);
    return base_errf(err, errlen, CHART_CACHE_EDIGEST,
                     "%s: digest mismatch: expected sha256:%s, the downloaded archive (%zu bytes) is sha256:%s", what,
                     exp, len, got);
  }
  if ((*out = chart_cache_lookup(c, d))) return 0;
  chart_t *ch = NULL;
  chart_error_t ce;
  ce.message[0] = 0;
  int rc = chart_load_archive(tgz, len, &c->opts.limits, &ch, &ce);
  if (rc) {
    chart_free(ch);
    return base_errf(err, errlen, rc == CHART_ENOMEM ? CHART_CACHE_ENOMEM : CHART_CACHE_EINVAL, "%s: %s", what,
                     ce.message);
  }
  pthread_mutex_lock(&c->mu);
  c->st.loads++;
  pthread_mutex_unlock(&c->mu);
  rc = chart_cache_put(c, d, ch, out);
  if (rc) return base_errf(err, errlen, rc, "%s: out of memory", what);
  return 0;
}

chart_cache_stats_t chart_cache_stats(chart_cache_t *c) {
  pthread_mutex_lock(&c->mu);
  chart_cache_stats_t s = c->st;
  s.entries = c->entries;
  s.referenced = c->referenced;
  s.bytes = c->bytes;
  s.max_bytes = c->opts.max_bytes;
  pthread_mutex_unlock(&c->mu);
  return s;
}
