/* The release engine: for one front door (door.h), watches its objects, queues their keys and drives
 * one reconcile per key: parse the object into a release request, observe the release (its
 * records) into one named state, take one action (helm/action) towards the desired state, write
 * the outcome as the kind's status. Nothing here knows which kind it serves.
 *
 * Memory per release: the informer's projected object, a queue slot, a memo entry (key,
 * generation, revision, three digests, counters: 280 bytes plus the key, and the name of the
 * release it holds in the index) and an entry in the release index (the same struct, 280 bytes plus
 * "namespace/name", and the owner's key; dropped with the object); all of it is counted in
 * engine_get_stats. An unchanged release is decided from its memo on a resync without
 * any request. */
#pragma once
#include <uv.h>
#include "helm/render/render.h"
#include "helm/source/source.h"
#include "reconcile/door.h"
#include "watch/client.h"
#include "watch/discovery.h"
#include "watch/events.h"
#include "watch/informer.h"

typedef struct engine_s engine_t;

typedef struct engine_opts_s {
  const char *namespace;     /* watch only this namespace; NULL or "" for all */
  unsigned concurrency;      /* reconciles in flight (default 4) */
  /* Releases whose action has waited on the cluster (readiness, a hook Job) for ENGINE_PARK_AFTER_MS
   * give their slot to the next release: up to this many waiting at once besides the concurrency
   * ones (0: 10 × concurrency; negative: none, a waiting release holds its slot as a Helm
   * client's would). */
  int max_waiting;
  events_t *events;          /* Kubernetes Events are recorded here when not NULL (owned by the caller) */
  const char *field_manager; /* server-side apply field manager (default "rudder") */
  render_limits_t limits;    /* every render's budgets (0 fields: render.h's defaults) */
  source_t *source;          /* chart repositories and URLs (the caller's; NULL: only inline charts) */
  const char *default_service_account; /* releases without a serviceAccountName act as this one of their
                                          namespace (NULL: as the controller) */
  door_ctx_t door_ctx;        /* handed to the door's parse */
  struct clusters_s *clusters; /* other clusters (the caller's; NULL: releases go to the local cluster only) */
  const char *label_selector; /* a shard: only the kind's objects whose labels match (checked by the
                                 caller, watch/selector.h); NULL or "": all */
  /* The Reconciling (Progressing) condition is written for an action still running after this many
   * ms (0: ENGINE_PROGRESS_AFTER_MS); negative: before every action, as Flux writes it. */
  long progress_after_ms;
  /* Helm's release records, watched once for all the process's engines (records.h; the caller's,
   * started before and stopped after every engine using it); NULL, or one not covering the
   * engine's namespace: the engine watches them itself. */
  struct records_s *records;
  /* Readiness waits watch each object on their own, as Helm does, instead of sharing one watch of
   * each kind (watch/waits.h; for tests and comparisons). */
  bool no_shared_waits;
} engine_opts_t;

/* How long an action waits on the cluster before its release gives its slot away (max_waiting). */
#define ENGINE_PARK_AFTER_MS 1000

/* How long an action runs before its Reconciling condition is written (engine_opts_t.progress_after_ms). */
#define ENGINE_PROGRESS_AFTER_MS 2000

/* Counters for tests and benchmarks. */
typedef struct engine_stats_s {
  unsigned long reconciles;  /* reconciles started */
  unsigned long memo_hits;   /* decided from the memo, without a request */
  unsigned long actions;     /* actions run (install, upgrade, rollback, uninstall, unlock) */
  unsigned long renders;     /* charts rendered (on the thread pool) */
  unsigned long cancelled;   /* reconciles cancelled mid-flight */
  unsigned long parked;      /* actions that gave their slot away while waiting (max_waiting) */
  unsigned long lists_skipped; /* records lists not sent: a first install the records cache shows none for */
  unsigned long waits_shared, waits_declined; /* readiness waits on the shared watches; those that were not
                                                 running yet (watched on their own) */
  unsigned long waits_broken; /* shared waits whose watch lost track (then watched on their own) */
  /* What the engine holds now, in bytes of heap. The memo tables count each block as glibc's
   * malloc holds it (INFORMER_BLOCK_BYTES, as the informer caches are counted) and are walked when
   * the stats are read (O(releases)); the queue's figure is its own (queue_metrics_t.memory_bytes:
   * bytes as requested). */
  size_t memo_entries, memo_bytes;   /* the memo: one entry per release brought to a state */
  size_t index_entries, index_bytes; /* the release index: "storage namespace/name" -> the object's key */
  size_t queue_keys, queue_bytes;    /* the work queue: keys tracked (waiting for their resync too) */
  size_t running;                    /* reconciles in flight (0 in a steady state) */
  size_t bytes;                      /* memo_bytes + index_bytes + queue_bytes */
  informer_memory_t cache;           /* the informer of the kind's objects (projected: door_t.cache_keep) */
  informer_memory_t records_cache;   /* the informer of Helm's release Secrets (metadata and labels only) */
  size_t drift_objects, drift_bytes; /* drift detection's caches of the objects releases applied */
} engine_stats_t;

/* Starts the engine for door on loop with client c and mapper d (owned by the caller, open until the
 * engine has stopped). 0 or a negative code. */
int engine_start(uv_loop_t *loop, kube_client_t *c, discovery_t *d, const door_t *door, const engine_opts_t *o,
                 engine_t **out);
/* Stops watching, cancels the reconciles in flight (no request is sent after this call), frees
 * everything, then calls cb. */
void engine_stop(engine_t *e, void (*cb)(void *data), void *data);
/* The engine's counters and what it holds now. */
engine_stats_t engine_get_stats(const engine_t *e);
