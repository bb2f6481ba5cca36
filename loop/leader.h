/* Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics: a candidate
 * takes the lease when it is free or its holder has not renewed it for leaseDurationSeconds (as
 * observed locally, so clocks need not agree); the leader renews every retry period and gives up
 * leadership when it could not renew within the renew deadline; a clean stop releases the lease so
 * that another replica takes over at once. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>
#include "watch/client.h"

typedef struct leader_s leader_t;

typedef struct leader_opts_s {
  const char *namespace; /* the Lease's namespace (required) */
  const char *name;      /* the Lease's name (required), e.g. "rudder-controller" */
  const char *identity;  /* this candidate's identity; default "<hostname>_<random hex>" */
  uint64_t lease_ms;     /* leaseDurationSeconds (default 15 s; whole seconds, at least 1) */
  uint64_t renew_ms;     /* the leader gives up after failing to renew for this long (default 10 s) */
  uint64_t retry_ms;     /* how often candidates try and the leader renews (default 2 s) */
  uint64_t release_ms;   /* how long a clean stop tries to release the lease (default 2 s): with the
                            API server unreachable, leader_stop gives up after this */
} leader_opts_t;

/* Called when this candidate becomes leader, and when it stops being leader (lost the lease,
 * could not renew in time, or leader_stop). The callbacks may call leader_stop. */
typedef void (*leader_cb)(leader_t *l, void *data);

/* Starts campaigning (the first attempt runs from the loop, not inside this call); 0, UV_EINVAL
 * (missing namespace or name, renew_ms >= lease_ms, retry_ms >= renew_ms) or UV_ENOMEM. */
int leader_start(uv_loop_t *loop, kube_client_t *c, const leader_opts_t *o, leader_cb on_started,
                 leader_cb on_stopped, void *data, leader_t **out);
/* True while this candidate holds the lease (and renewed it within the renew deadline). */
bool leader_is_leader(const leader_t *l);
/* This candidate's identity. */
const char *leader_identity(const leader_t *l);
/* The holder last seen in the Lease ("" when none or not yet read). */
const char *leader_holder(const leader_t *l);
/* Stops campaigning. When leading, calls on_stopped first (stop the work), then releases the lease
 * (holderIdentity cleared, leaseDurationSeconds 1), giving up after release_ms; then frees l and
 * calls cb (may be NULL). */
void leader_stop(leader_t *l, void (*cb)(void *data), void *data);
