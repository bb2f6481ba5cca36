/* Kubernetes Events (core/v1) for the controller's objects, aggregated and rate-limited in the
 * spirit of client-go's event correlator: the same type+reason+message about the same object
 * within the aggregation window bumps count and lastTimestamp on the existing Event (PATCH)
 * instead of creating a new one; each object has a token bucket (burst 25, one more every 5 min)
 * so a hot loop cannot flood the API server; the bookkeeping is bounded (LRU). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "watch/client.h"

typedef struct events_s events_t;

/* What an Event is about (the involvedObject); namespace NULL or "" for cluster-scoped objects. */
typedef struct events_ref_s {
  const char *api_version, *kind, *namespace, *name, *uid, *resource_version, *field_path;
} events_ref_t;

typedef struct events_limits_s {
  uint64_t window_ms;       /* aggregation window (default 10 min) */
  unsigned burst;           /* events per object before throttling (default 25) */
  uint64_t refill_ms;       /* one more event per object every refill_ms (default 5 min) */
  size_t max_tracked;       /* aggregation and per-object entries kept, least recently used evicted (default 4096) */
  size_t max_in_flight;     /* requests in flight; more emits are dropped (default 256) */
} events_limits_t;

typedef struct events_stats_s {
  uint64_t created, patched, dropped, failed;
  /* What the recorder holds now (bounded by max_tracked): aggregation entries (each with its Event
   * as text), per-object buckets, and their bytes of heap counted as informer_object_bytes counts
   * blocks (walked when read). */
  size_t aggregates, buckets, bytes;
} events_stats_t;

/* Creates a recorder that reports as source.component = component (also reportingComponent);
 * NULL when out of memory. */
events_t *events_new(kube_client_t *c, const char *component);
/* Replaces the limits; zero fields keep their current values. */
void events_set_limits(events_t *ev, const events_limits_t *l);
/* Records an event about obj (a Kubernetes object: apiVersion, kind, metadata.namespace/name/uid/
 * resourceVersion); type is "Normal" or "Warning"; message is truncated to 1 KiB. 0, UV_EINVAL (no
 * kind or name, bad type), UV_EBUSY (rate-limited or too many in flight: dropped) or UV_ENOMEM. */
int events_emit(events_t *ev, const cJSON *obj, const char *type, const char *reason, const char *message);
/* The same with the involved object given by reference fields. */
int events_emit_ref(events_t *ev, const events_ref_t *ref, const char *type, const char *reason, const char *message);
/* Counters: events created, aggregated into an existing Event, dropped, and failed writes; and what
 * the recorder holds now. */
events_stats_t events_get_stats(const events_t *ev);
/* Cancels requests in flight, frees the recorder, then calls cb (may be NULL). */
void events_close(events_t *ev, void (*cb)(void *data), void *data);
