/* REST mapping: (apiVersion, kind) -> resource plural and scope, from the API server's discovery
 * documents, cached per group-version; and the server's version. */
#pragma once
#include <stdbool.h>
#include "watch/client.h"

typedef struct discovery_s discovery_t;

typedef struct discovery_mapping_s {
  const char *group;    /* "" for the core group */
  const char *version;
  const char *kind;
  const char *resource; /* plural, e.g. "deployments" */
  bool namespaced;
} discovery_mapping_t;

typedef struct discovery_version_s {
  const char *major, *minor, *git_version; /* e.g. "1", "34", "v1.34.1" */
} discovery_version_t;

/* m is valid during the call only; err is 0, UV_ENOENT (unknown kind or group-version), UV_ECANCELED,
 * or a transport/HTTP failure, with errmsg saying which. */
typedef void (*discovery_cb)(int err, const char *errmsg, const discovery_mapping_t *m, void *data);
typedef void (*discovery_version_cb)(int err, const char *errmsg, const discovery_version_t *v, void *data);

/* Creates a mapper that uses c; 0 or UV_ENOMEM. */
int discovery_new(kube_client_t *c, discovery_t **out);
/* Resolves apiVersion ("v1", "apps/v1") and kind; cb runs once, always from the loop (never inside this
 * call). An unknown kind in a cached group-version triggers one refresh (new CRDs). 0 or UV_ENOMEM. */
int discovery_resolve(discovery_t *d, const char *api_version, const char *kind, discovery_cb cb, void *data);
/* Looks the cache up without I/O: 0 and *out filled (borrowed), or UV_ENOENT when not cached. */
int discovery_lookup(discovery_t *d, const char *api_version, const char *kind, discovery_mapping_t *out);
/* Forgets every cached group-version, so the next resolve fetches again. */
void discovery_invalidate(discovery_t *d);
/* Fetches (once, then cached) the server version from /version; cb runs from the loop. 0 or UV_ENOMEM. */
int discovery_server_version(discovery_t *d, discovery_version_cb cb, void *data);
/* Cancels pending look-ups (their callbacks get UV_ECANCELED), frees the mapper, then calls cb. */
void discovery_close(discovery_t *d, void (*cb)(void *data), void *data);
