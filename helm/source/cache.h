/* The chart cache: each loaded chart held once per digest (sha256 of its .tgz), shared,
 * refcounted and immutable, however many releases use it.
 *
 * Model: h2o's h2o_mem_alloc_shared. An entry is handed out with a reference
 * (chart_cache_lookup, chart_cache_put, chart_cache_load); chart_cache_addref takes another,
 * chart_cache_release drops one. An entry nobody references stays cached, on an LRU list, until
 * the byte budget needs its room; then the dispose callback (if any) sees it and the chart is
 * freed. Referenced entries are never evicted: the budget may be exceeded while they are held
 * (chart_cache_stats says by how much). Charts are never changed once cached: a caller that
 * must change one (dependency processing by user values) works on its own copy.
 *
 * Verification: chart_cache_load computes the archive's sha256 and refuses it when it differs
 * from the digest the index (or the OCI manifest) gave, before anything is parsed.
 *
 * Costs: lookup, put, addref and release are O(1) (a hash on the digest, an intrusive LRU list);
 * eviction is O(1) per evicted entry. One mutex guards the table: every call is safe from any
 * thread (loading, the expensive part, runs outside the lock). Memory: about 120 bytes per entry
 * plus the chart; the budget counts an estimate of each chart's size (file names and contents,
 * schema, subcharts, and a fixed overhead per file). */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "helm/chart/chart.h"

#define CHART_CACHE_EINVAL (-22) /* a malformed digest, or the chart does not load (message says why) */
#define CHART_CACHE_ENOMEM (-12)
#define CHART_CACHE_EDIGEST (-74) /* the archive's sha256 is not the expected one (EBADMSG) */

typedef struct chart_cache_s chart_cache_t;

/* A cached chart. Read-only for users; valid while a reference is held. */
typedef struct chart_cache_entry_s {
  const chart_t *chart;
  uint8_t digest[32]; /* sha256 of the .tgz */
  char digest_hex[65];
  size_t bytes;       /* what the budget counts for it */
  /* private */
  struct chart_cache_entry_s *hnext;             /* hash chain */
  struct chart_cache_entry_s *lru_prev, *lru_next; /* while unreferenced */
  size_t refs;
  chart_t *owned;
} chart_cache_entry_t;

typedef void (*chart_cache_dispose_cb)(const chart_cache_entry_t *e, void *data);

typedef struct chart_cache_options_s {
  size_t max_bytes;       /* budget for the charts held (0: 256 MiB) */
  chart_limits_t limits;  /* for chart_cache_load (0s: chart.h's defaults) */
  chart_cache_dispose_cb dispose; /* called for an entry just before it is freed (may be NULL) */
  void *dispose_data;
} chart_cache_options_t;

typedef struct chart_cache_stats_s {
  size_t entries, referenced; /* cached; of those, held by someone */
  size_t bytes, max_bytes;    /* counted for all entries; the budget */
  uint64_t hits, misses, loads, evictions, digest_mismatches;
} chart_cache_stats_t;

/* A new cache (opts NULL: defaults). 0 and *out, or CHART_CACHE_ENOMEM. */
int chart_cache_new(const chart_cache_options_t *opts, chart_cache_t **out);
/* Frees the cache and every entry; no entry may still be referenced (asserted). */
void chart_cache_free(chart_cache_t *c);

/* Parses "sha256:<hex>" or "<hex>" (64 hex digits, either case) into out. 0 or CHART_CACHE_EINVAL. */
int chart_cache_digest_parse(const char *s, uint8_t out[32]);

/* The entry for digest with one more reference, or NULL (a miss). */
chart_cache_entry_t *chart_cache_lookup(chart_cache_t *c, const uint8_t digest[32]);
/* Caches chart (taking ownership) under digest and returns it with one reference. When the
 * digest is already cached (another thread loaded it first) chart is freed and the cached
 * entry is returned. 0 or CHART_CACHE_ENOMEM (chart freed). */
int chart_cache_put(chart_cache_t *c, const uint8_t digest[32], chart_t *chart, chart_cache_entry_t **out);
/* The .tgz bytes as a cached chart: its sha256 checked against want ("sha256:<hex>" or "<hex>";
 * NULL: no check), then looked up, else loaded (chart_load_archive) and put. what names the
 * source in messages (e.g. the URL). 0 and *out (one reference); CHART_CACHE_EDIGEST,
 * CHART_CACHE_EINVAL (bad want, or the chart does not load: the loader's message) or
 * CHART_CACHE_ENOMEM, with the message in err. */
int chart_cache_load(chart_cache_t *c, const void *tgz, size_t len, const char *want, const char *what,
                     chart_cache_entry_t **out, char *err, size_t errlen);
/* Takes one more reference. */
void chart_cache_addref(chart_cache_t *c, chart_cache_entry_t *e);
/* Drops one reference; at zero the entry becomes evictable (and is evicted at once when over budget). */
void chart_cache_release(chart_cache_t *c, chart_cache_entry_t *e);
/* Counters and gauges. */
chart_cache_stats_t chart_cache_stats(chart_cache_t *c);
/* The size the budget counts for a chart (exposed for tests and benchmarks). */
size_t chart_cache_chart_bytes(const chart_t *chart);
