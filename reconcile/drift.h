/* Drift detection's watches: the objects releases applied, seen through one informer per kind in
 * use, selected by the label every applied object carries (DRIFT_LABEL_NAME), with a lean cache:
 * per object its identity (name, namespace, resourceVersion) and one short text holding a
 * digest of the fields rudder's apply owns (server-side apply's managed fields), a flag and the
 * release it belongs to. No polling: nothing is sent while nothing changes.
 *
 * An object deleted, or changed so that rudder's apply owns fewer or other fields while someone
 * else wrote it last, is drift until compared: its release is reported through the callback at once,
 * and drift_check tells the engine's drift action which objects to compare with the live ones. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include "helm/action/action.h"
#include "watch/client.h"

/* Labels on every object rudder applies: the release's name and the namespace its records are in. */
#define DRIFT_LABEL_NAME "rudder.dev/release-name"
#define DRIFT_LABEL_NAMESPACE "rudder.dev/release-namespace"

typedef struct drift_s drift_t;

/* release ("storage namespace/name") may have drifted: an object of it was changed by someone else
 * or deleted. */
typedef void (*drift_changed_cb)(const char *release, void *data);
/* A kind's first list is complete: objects of it can be judged now. */
typedef void (*drift_synced_cb)(void *data);

/* Watches with client c as field manager field_manager (both the caller's, outliving it), in every
 * namespace, or only in namespace ns (a tenant's releases, watched with the tenant's own identity:
 * cluster-scoped objects and those of other namespaces are then not watched, and not judged). */
int drift_new(kube_client_t *c, const char *ns, const char *field_manager, drift_changed_cb changed,
              drift_synced_cb synced, void *data, drift_t **out);
/* Makes sure objects of this kind are watched (idempotent). 0 or UV_ENOMEM. */
int drift_watch(drift_t *d, const char *group, const char *version, const char *resource, bool namespaced);
/* What the drift action should do with object o of release: ACT_DRIFT_UNSYNCED before its kind is
 * listed, ACT_DRIFT_CHECK when it is missing or suspected (the suspicion is then cleared), or for
 * every object not opted out when all is set, else ACT_DRIFT_SKIP. */
int drift_check(drift_t *d, const act_drift_obj_t *o, bool all);
/* Remembers how the comparison of o ended: drifted (and left so) objects are compared again whenever
 * someone else writes them. */
void drift_mark(drift_t *d, const act_drift_obj_t *o, bool drifted);
/* Owned objects cached, and the heap they take (the informers' own estimate). */
size_t drift_objects(const drift_t *d);
size_t drift_bytes(const drift_t *d);
/* Stops every watch, frees everything, then calls cb. */
void drift_stop(drift_t *d, void (*cb)(void *data), void *data);
