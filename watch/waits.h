/* Shared watches for waits on single objects: one watch per resource, cluster-wide and narrowed by a
 * label selector, stands in for a watch (and a connection, and a request) per object waited for.
 *
 * A wait begins before the write whose outcome it waits for (an apply): from then on the hub keeps
 * the newest state of that object the stream brings. The caller compares it with the state it has
 * (the write's answer) by resourceVersion and takes only what is newer. The promise holds only
 * when the hub's watch was running from a resourceVersion older than the write: kwait_begin answers
 * NULL otherwise (the first call for a resource starts its watch: the list that gives a
 * resourceVersion to watch from, then the stream), and the caller watches the object on its own.
 * When the hub loses track (the stream failed, its resourceVersion expired, the server refused it,
 * the object left the selector), every wait is told it is broken and the caller watches on its own.
 *
 * The watch of a resource stops after a while without waits (kwaits_opts_t.idle_ms), so a quiet
 * controller sends nothing. resourceVersions are compared as numbers (an etcd revision, as every
 * API server gives them); a wait on an object whose version is not a number is broken at once. */
#pragma once
#include <stdint.h>
#include <cjson/cJSON.h>
#include "watch/client.h"

typedef struct kwaits_s kwaits_t;
typedef struct kwait_s kwait_t;

typedef struct kwaits_opts_s {
  const char *label_selector; /* required: what every object waited for carries */
  uint64_t idle_ms;           /* a resource's watch stops this long after its last wait ended (default 30 s) */
  uint64_t refused_ms;        /* after a refused list or watch (403, 404...), waits answer NULL this long (default 60 s) */
} kwaits_opts_t;

typedef struct kwaits_stats_s {
  uint64_t lists, watches;  /* requests sent: the lists for a resourceVersion, the watch streams */
  uint64_t events;          /* events received (every object of the resource, waited for or not) */
  uint64_t begun, declined; /* waits begun; waits declined (NULL: the watch was not running) */
  uint64_t broken;          /* waits told the hub lost track */
  uint64_t watching;        /* resources whose watch is open now */
} kwaits_stats_t;

/* Called when a wait has something new: a newer state (kwait_take) or it is broken (kwait_broken). */
typedef void (*kwait_cb)(kwait_t *w, void *data);

/* NULL when out of memory. */
kwaits_t *kwaits_new(kube_client_t *c, const kwaits_opts_t *o);
/* Stops every watch and timer; the waits still begun are freed (their callers must not use them again). */
void kwaits_free(kwaits_t *h);
kwaits_stats_t kwaits_stats(const kwaits_t *h);

/* Begins a wait on one object (ns "" for a cluster-scoped one), before the write. NULL: the hub
 * cannot promise to see every change of it from now on (or out of memory). */
kwait_t *kwait_begin(kwaits_t *h, const char *group, const char *version, const char *resource, const char *ns,
                     const char *name);
/* The newest state seen whose resourceVersion is above after_rv (the caller's; owned by the caller
 * from now on), or NULL. A state once taken or passed over is not offered again. */
cJSON *kwait_take(kwait_t *w, const char *after_rv);
/* True once the hub lost track of the object: the caller must watch it on its own. */
int kwait_broken(const kwait_t *w);
/* cb (once per change, from the loop, never inside this call) when a newer state arrives or the
 * wait breaks; NULL cb: no more calls. */
void kwait_notify(kwait_t *w, kwait_cb cb, void *data);
/* Ends a wait (NULL is fine). */
void kwait_end(kwait_t *w);
