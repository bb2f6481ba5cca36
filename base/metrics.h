/* The process's metrics, written in the Prometheus text exposition format (version 0.0.4).
 *
 * A family (a metric name with its help, type, label names and, for a histogram, its bucket
 * bounds) is a static object where it is used; it joins the registry the first time one of its
 * series is asked for. A series is one set of label values: metrics_get finds or makes it (one
 * allocation, the only one), and callers on a hot path keep the pointer. Updating a series is a
 * relaxed atomic operation (no lock, no allocation; safe from libuv's thread pool); every update
 * function accepts NULL (a series that could not be made) and does nothing then.
 *
 * Values that are cheaper to read when scraped than to keep up to date (queue depths, memory)
 * come from collectors: callbacks run by metrics_write before it writes, on the writer's thread.
 *
 * Costs: a series is sizeof(metrics_series_t) + its label values + 8 bytes per bucket; metrics_get
 * is a lock and a hash look-up of the family's series; metrics_write is O(series). */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "base/buf.h"

typedef enum { METRICS_COUNTER, METRICS_GAUGE, METRICS_HISTOGRAM } metrics_type_t;

#define METRICS_MAX_LABELS 4
#define METRICS_MAX_BUCKETS 48

typedef struct metrics_series_s metrics_series_t;

typedef struct metrics_family_s {
  const char *name, *help;
  metrics_type_t type;
  const char *labels[METRICS_MAX_LABELS]; /* label names; unused slots NULL */
  const double *buckets;                  /* histogram: upper bounds, increasing (+Inf implied) */
  unsigned nbuckets;
  /* private */
  struct metrics_family_s *next; /* in the registry, once registered */
  int registered;
  unsigned nlabels;
  metrics_series_t *series;
  metrics_series_t **index; /* series by the hash of their label values (chained by hnext) */
  size_t index_cap, nseries;
} metrics_family_t;

struct metrics_series_s {
  metrics_series_t *next;
  metrics_family_t *f;
  uint64_t value;   /* counter or gauge: a double's bits; histogram: the sum's */
  uint64_t count;   /* histogram: observations */
  uint64_t *bucket; /* histogram: observations per bucket (not cumulative) */
  char *label[METRICS_MAX_LABELS];
  metrics_series_t *hnext; /* private: the next in the family's index bucket */
  uint64_t hash;
};

/* A callback metrics_write runs before writing (to set gauges); linked in by metrics_collector_add. */
typedef struct metrics_collector_s {
  void (*collect)(void *data);
  void *data;
  struct metrics_collector_s *prev, *next; /* private */
} metrics_collector_t;

/* Controller-runtime's reconcile and client-go's request latency buckets, 5 ms to 60 s. */
#define METRICS_BUCKETS_LATENCY_N 40
extern const double metrics_buckets_latency[METRICS_BUCKETS_LATENCY_N];
/* client-go's workqueue buckets: 10 ns to 1000 s, powers of ten. */
#define METRICS_BUCKETS_WORKQUEUE_N 12
extern const double metrics_buckets_workqueue[METRICS_BUCKETS_WORKQUEUE_N];

/* The series of f with the given label values (one per label name of f, none NULL), made when new;
 * NULL when out of memory or when f is malformed (the reason is logged once). */
metrics_series_t *metrics_get(metrics_family_t *f, ...);
/* Adds v to a counter or gauge. */
void metrics_add(metrics_series_t *s, double v);
/* Adds 1 to a counter or gauge. */
static inline void metrics_inc(metrics_series_t *s) { metrics_add(s, 1); }
/* Sets a gauge (or a counter mirrored from elsewhere). */
void metrics_set(metrics_series_t *s, double v);
/* The value of a counter or gauge, or a histogram's sum. */
double metrics_value(const metrics_series_t *s);
/* Counts v into a histogram. */
void metrics_observe(metrics_series_t *s, double v);
/* Removes a series (its pointer is invalid after this); for series that stand for something gone. */
void metrics_remove(metrics_series_t *s);
/* Runs c->collect before every write, until metrics_collector_remove(c); c stays the caller's. */
void metrics_collector_add(metrics_collector_t *c);
/* Stops running c (a no-op when it is not added). */
void metrics_collector_remove(metrics_collector_t *c);
/* Runs the collectors, then appends every family that has a series, in name order; 0 or -12. */
int metrics_write(buf_t *out);
/* Appends a float as the exposition format reads it: shortest digits, NaN, +Inf, -Inf. */
int metrics_format_double(buf_t *out, double v);
