/* Helm's release records (Secrets labelled owner=helm), watched once for every release engine of
 * the process: one informer holding their labels, the count of records per release, and the
 * engines subscribed to its events. Every front door's engine reads the same Secrets (a HelmRelease,
 * a HelmRequest and a Microservice all store releases as Helm does), so one cache serves all. */
#pragma once
#include <stdbool.h>
#include "watch/informer.h"

typedef struct records_s records_t;

/* Starts watching the records of namespace ns (NULL: all namespaces) with client c; 0 or a
 * negative code. */
int records_start(kube_client_t *c, const char *ns, records_t **out);
/* Delivers the records' add, update and delete events to h (copied; h->data tells subscribers
 * apart) from now on (a new subscriber reads what is cached with records_count); 0 or UV_ENOMEM. */
int records_subscribe(records_t *r, const informer_handlers_t *h);
/* Stops delivering to the subscriber whose handlers' data is data (safe from inside a handler). */
void records_unsubscribe(records_t *r, void *data);
/* True once the first list has been applied to the cache. */
bool records_synced(const records_t *r);
/* Whether the watch covers namespace ns (it watches all, or that one). */
bool records_covers(const records_t *r, const char *ns);
/* How many records of release name in namespace ns the cache holds. */
unsigned records_count(const records_t *r, const char *ns, const char *name);
/* What the cache holds (informer_memory). */
informer_memory_t records_memory(const records_t *r);
/* Stops the watch and frees everything, then calls cb (may be NULL); no subscriber may remain. */
void records_stop(records_t *r, void (*cb)(void *data), void *data);
