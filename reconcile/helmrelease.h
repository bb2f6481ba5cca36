/* The HelmRelease reconciler: watches rudder.dev/v1alpha1 HelmReleases, queues their keys and
 * drives one non-blocking reconcile state machine per key. */
#pragma once
#include <uv.h>
#include "watch/client.h"
#include "watch/discovery.h"
#include "watch/events.h"

typedef struct hr_reconciler_s hr_reconciler_t;

typedef struct hr_options_s {
  const char *namespace;  /* watch only this namespace; NULL or "" for all */
  unsigned concurrency;   /* reconciles in flight (default 4) */
  events_t *events;       /* Kubernetes Events are recorded here when not NULL (owned by the caller) */
} hr_options_t;

/* Creates the reconciler on loop using client c and mapper d (both owned by the caller and
 * kept open until the reconciler has stopped), starts the informer and the queue. */
int hr_reconciler_start(uv_loop_t *loop, kube_client_t *c, discovery_t *d, const hr_options_t *o,
                        hr_reconciler_t **out);
/* Stops watching, lets in-flight reconciles finish, frees everything, then calls cb. */
void hr_reconciler_stop(hr_reconciler_t *r, void (*cb)(void *data), void *data);
