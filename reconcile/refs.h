/* Objects that releases read besides their own (valuesFrom ConfigMaps and Secrets), watched by name
 * so that a change wakes exactly the releases that read them, at once rather than at their next
 * interval. One watch (a field-selected informer keeping only identity) per object read, however
 * many releases read it; it stops when the last one no longer does.
 *
 * Costs: refs_set is O(objects named + objects the owner named before); an event is O(owners of that
 * object). Memory: per watched object an informer with one cached identity, its key and an array of
 * owner keys; per owner its key and an array of pointers. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include "watch/client.h"

typedef struct refs_s refs_t;

typedef struct refs_obj_s {
  bool secret; /* a Secret, else a ConfigMap */
  const char *ns, *name;
} refs_obj_t;

/* Called with the key of every owner that reads an object that was created, changed or deleted
 * (not for what the first list of a new watch finds). */
typedef void (*refs_changed_cb)(const char *owner, void *data);

/* A tracker using client c (the caller's; it outlives the tracker). 0 or UV_ENOMEM. */
int refs_new(kube_client_t *c, refs_changed_cb cb, void *data, refs_t **out);
/* owner now reads exactly these n objects (n = 0: none; duplicates allowed). 0 or UV_ENOMEM (then
 * what it read before is kept). */
int refs_set(refs_t *r, const char *owner, const refs_obj_t *objs, size_t n);
/* Objects watched now. */
size_t refs_watched(const refs_t *r);
/* Stops every watch (no request or callback after this call), frees everything, then calls cb. */
void refs_stop(refs_t *r, void (*cb)(void *data), void *data);
