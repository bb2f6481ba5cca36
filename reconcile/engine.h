/* The release engine: for one front door (door.h), watches its objects, queues their keys and drives
 * one reconcile per key: parse the object into a release request, observe the release (its
 * records) into one named state, take one action (helm/action) towards the desired state, write
 * the outcome as the kind's status. Nothing here knows which kind it serves.
 *
 * Memory per release: the informer's projected object, a queue slot, and a memo entry (key,
 * generation, revision, digest: about 120 bytes plus the key). An unchanged release is decided from
 * its memo on a resync without any request. */
#pragma once
#include <uv.h>
#include "helm/render/render.h"
#include "helm/source/source.h"
#include "reconcile/door.h"
#include "watch/client.h"
#include "watch/discovery.h"
#include "watch/events.h"

typedef struct engine_s engine_t;

typedef struct engine_opts_s {
  const char *namespace;     /* watch only this namespace; NULL or "" for all */
  unsigned concurrency;      /* reconciles in flight (default 4) */
  events_t *events;          /* Kubernetes Events are recorded here when not NULL (owned by the caller) */
  const char *field_manager; /* server-side apply field manager (default "rudder") */
  render_limits_t limits;    /* every render's budgets (0 fields: render.h's defaults) */
  source_t *source;          /* chart repositories and URLs (the caller's; NULL: only inline charts) */
  const char *default_service_account; /* releases without a serviceAccountName act as this one of their
                                          namespace (NULL: as the controller) */
} engine_opts_t;

/* Counters for tests and benchmarks. */
typedef struct engine_stats_s {
  unsigned long reconciles;  /* reconciles started */
  unsigned long memo_hits;   /* decided from the memo, without a request */
  unsigned long actions;     /* actions run (install, upgrade, rollback, uninstall, unlock) */
  unsigned long renders;     /* charts rendered (on the thread pool) */
  unsigned long cancelled;   /* reconciles cancelled mid-flight */
} engine_stats_t;

/* Starts the engine for door on loop with client c and mapper d (owned by the caller, open until the
 * engine has stopped). 0 or a negative code. */
int engine_start(uv_loop_t *loop, kube_client_t *c, discovery_t *d, const door_t *door, const engine_opts_t *o,
                 engine_t **out);
/* Stops watching, cancels the reconciles in flight (no request is sent after this call), frees
 * everything, then calls cb. */
void engine_stop(engine_t *e, void (*cb)(void *data), void *data);
/* The engine's counters. */
engine_stats_t engine_get_stats(const engine_t *e);
