/* The HelmRepository kind (rudder.dev/v1alpha1): declares a chart repository to helm/source
 * (URL, credentials from secretRef, trust from certSecretRef/caConfigMapRef), fetches its index
 * on its interval, and writes what it found as the object's status (Ready, index digest, fetch
 * time, chart and version counts). Releases whose chart comes from a repository are woken by
 * helm/source when its index changes. */
#pragma once
#include <uv.h>
#include <cjson/cJSON.h>
#include "helm/source/source.h"
#include "watch/client.h"
#include "watch/events.h"

typedef struct repoctl_s repoctl_t;

typedef struct repoctl_opts_s {
  const char *namespace; /* watch only this namespace; NULL or "" for all */
  events_t *events;      /* may be NULL */
  unsigned concurrency;  /* repositories fetched at once (default 4) */
  const char *label_selector; /* a shard: only the objects whose labels match; NULL or "": all */
} repoctl_opts_t;

/* Starts watching HelmRepositories; s and c are the caller's and outlive it. 0 or a negative code. */
int repoctl_start(uv_loop_t *loop, kube_client_t *c, source_t *s, const repoctl_opts_t *o, repoctl_t **out);
/* Declares the repository of HelmRepository obj to s, as the controller's run of it would, writing
 * nothing (repokind_declare); the source's key is "namespace/name", as the HelmRelease door names
 * it. cb(err, reason, msg, data) runs once, perhaps before this returns. 0 or UV_ENOMEM. */
int repoctl_declare(kube_client_t *c, source_t *s, const cJSON *obj,
                    void (*cb)(int err, const char *reason, const char *msg, void *data), void *data);
/* Cancels what is in flight (no request after this call), frees everything, then calls cb. */
void repoctl_stop(repoctl_t *r, void (*cb)(void *data), void *data);
