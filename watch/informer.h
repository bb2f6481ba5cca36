/* A list+watch informer for one resource collection, with a cache keyed "namespace/name" (or
 * "name" for cluster-scoped objects) of whole objects or of a projection chosen per informer. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "watch/client.h"

typedef struct informer_s informer_t;

/* How many trees informer_get and informer_next of a compact informer (informer_opts_t.compact)
 * keep valid at once. */
#define INFORMER_RING 4

typedef struct informer_handlers_s {
  /* A new object (obj is the cached copy, borrowed; for a compact informer a tree of it made for
   * this call: valid until the handler returns). */
  void (*on_add)(informer_t *inf, const char *key, const cJSON *obj, void *data);
  /* A changed object: old is freed after the call, obj is the cached copy (compact: both are trees
   * made for this call, valid until the handler returns). */
  void (*on_update)(informer_t *inf, const char *key, const cJSON *old, const cJSON *obj, void *data);
  /* A deleted object (its last known state, freed after the call). */
  void (*on_delete)(informer_t *inf, const char *key, const cJSON *obj, void *data);
  /* The first complete list has been delivered (optional). */
  void (*on_synced)(informer_t *inf, void *data);
  void *data;
  /* An object that cannot be read (nested deeper than WATCH_MAX_NESTING, 999 levels, in ndjson.h;
   * larger than the client's max_body or max_watch_line, not valid JSON, or without a name) was
   * skipped; the others are delivered as usual (optional). key is "namespace/name" or "name" as a
   * light scan of its text found it, or NULL; message says why. A cached copy of that key stays
   * cached (it is not reported deleted) until a readable version or a delete arrives. */
  void (*on_bad_object)(informer_t *inf, const char *key, const char *message, void *data);
} informer_handlers_t;

typedef struct informer_opts_s {
  const char *path;            /* collection path, e.g. /apis/rudder.dev/v1alpha1/namespaces/NS/helmreleases */
  const char *label_selector;  /* optional */
  const char *field_selector;  /* optional */
  unsigned page_size;          /* LIST limit (default 500); a page larger than the client's max_body is
                                  asked for again with fewer objects, down to one */
  unsigned watch_timeout_s;    /* server-side watch timeout (default: random 5-10 min) */
  uint64_t backoff_base_ms;    /* first retry delay (default 500 ms) */
  uint64_t backoff_max_ms;     /* retry delay cap (default 30 s) */
  /* The projection the cache keeps, so that memory per object is small and known: dotted field
   * paths (e.g. "spec", "status.conditions", "metadata.labels"), NULL-terminated. apiVersion, kind,
   * metadata.name, namespace, uid, resourceVersion, generation, deletionTimestamp and finalizers are
   * always kept. NULL keeps whole objects. Handlers see the projected objects. */
  const char *const *keep;
  /* Optional: trims or rewrites each object in place after keep (e.g. drops managedFields); it must
   * leave metadata.name, namespace and resourceVersion alone. */
  void (*transform)(cJSON *obj, void *data);
  void *transform_data;
  /* Optional: subtrees kept as their compact JSON text, dotted paths through objects (e.g.
   * "spec.chart.inline"), NULL-terminated, applied after keep and transform. An object or array at
   * such a path becomes a raw node (cJSON_IsRaw) holding cJSON_PrintUnformatted's text of it, so
   * that printing the object gives the same text as before; readers parse it. Identical texts are
   * held once for all the informer's objects (the node is a cJSON_IsReference: its text belongs to
   * the informer and lives as long as the cached object). Out of memory, a subtree stays a tree. */
  const char *const *keep_text;
  /* Ask for metadata only (PartialObjectMetadata: apiVersion meta.k8s.io/v1, the object's metadata,
   * managedFields included): no spec, status or data is sent at all. */
  bool metadata_only;
  /* Keep each cached object as one block of its compact JSON text (cJSON_PrintUnformatted, after
   * keep, transform and keep_text) instead of a tree: a tree costs some 80 bytes per node and a
   * block per string, the text about its length. keep_text subtrees stay shared: the text has null
   * at their place and the block points at the pool's copies, which each cached object holds as
   * without compact. Readers get trees parsed from the text with a raw reference node at each such
   * place (the same trees as without compact), at the cost of a parse per read: informer_get and
   * informer_next keep the last INFORMER_RING trees they made (see there), handlers get trees made
   * for the call. At most 64 keep_text paths (informer_start says UV_EINVAL). Out of memory while
   * parsing, informer_get says NULL (informer_has still says true), informer_next skips the object
   * and a handler call is left out (logged). */
  bool compact;
} informer_opts_t;

/* Starts listing and watching; 0 or UV_ENOMEM/UV_EINVAL. */
int informer_start(kube_client_t *c, const informer_opts_t *o, const informer_handlers_t *h, informer_t **out);
/* True once the first full list has been applied to the cache. */
bool informer_has_synced(const informer_t *inf);
/* How many informers of the process are started and have not synced yet (nor been stopped). */
size_t informer_unsynced(void);
/* The cached object for key (borrowed), or NULL. Without compact it is the cached tree itself,
 * valid until the next event is processed. With compact it is a tree parsed from the cached text,
 * valid until the informer processes its next event (a watch event or a complete list, including
 * the handler calls of that event after the one running now) or stops, and at most until
 * INFORMER_RING more trees have been returned by informer_get and informer_next of the same informer:
 * a caller that needs it longer copies what it needs. */
const cJSON *informer_get(const informer_t *inf, const char *key);
/* Whether key is cached (no parse, whatever the mode). */
bool informer_has(const informer_t *inf, const char *key);
/* Number of cached objects. */
size_t informer_count(const informer_t *inf);
/* Iterates the cache: start with *it = 0; returns false when done. With compact, *obj is a tree with
 * the lifetime of informer_get's (so each step may end the life of the tree of INFORMER_RING steps
 * before). */
bool informer_next(const informer_t *inf, size_t *it, const char **key, const cJSON **obj);
/* The last resourceVersion seen (list, event or bookmark); "" before the first list. */
const char *informer_resource_version(const informer_t *inf);
/* Applies a keep list (as in informer_opts_t) to obj, returning the projection (obj is consumed);
 * NULL when out of memory. */
cJSON *informer_project(cJSON *obj, const char *const *keep);
/* Counters for tests and metrics: lists completed, watches started. */
void informer_stats(const informer_t *inf, unsigned *lists, unsigned *watches);

/* What the cache holds, in bytes of heap, as an estimate computed the same way for every object
 * (informer_cached_bytes: informer_object_bytes of its tree, or with compact its one block) and kept
 * up to date on every add, update and delete (no walk of the cache when it is read). The trees a
 * compact informer parses for readers are not counted (at most INFORMER_RING of them live on). */
typedef struct informer_memory_s {
  size_t objects;      /* cached objects (informer_count) */
  size_t object_bytes; /* the sum of informer_cached_bytes over them */
  size_t key_bytes;    /* the cache's copies of their keys ("namespace/name"), one block each */
  size_t table_bytes;  /* the cache's hash table (one block of slots) */
  size_t texts;        /* distinct texts held for keep_text subtrees (once however many objects share them) */
  size_t text_bytes;   /* their blocks and the pool's buckets (a text's raw node, or with compact its pointer and null in
                          the text, counts in object_bytes) */
  size_t bytes;        /* the sum of the four */
} informer_memory_t;
informer_memory_t informer_memory(const informer_t *inf);

/* The estimate of what one cJSON tree holds on the heap: every node one block of sizeof(cJSON)
 * (64 bytes on 64-bit targets), every key (unless constant) and every string or raw value one block
 * of strlen + 1 bytes; each block counted as glibc's malloc holds it (INFORMER_BLOCK_BYTES: the
 * request plus 8, rounded up to 16, at least 32; so a node is 80 bytes). Only obj and what is
 * below it, not its siblings. */
size_t informer_object_bytes(const cJSON *obj);
/* The estimate of what the cache holds for key's object (0 when not cached): informer_object_bytes
 * of its tree; with compact, the block of its text, which also holds its length and one pointer per
 * keep_text path (INFORMER_BLOCK_BYTES of all that; the pooled texts count in text_bytes). */
size_t informer_cached_bytes(const informer_t *inf, const char *key);
#define INFORMER_BLOCK_BYTES(n) ((((size_t)(n) + 8 + 15) & ~(size_t)15) < 32 ? (size_t)32 : (((size_t)(n) + 8 + 15) & ~(size_t)15))
/* Stops everything, frees the cache and the informer, then calls cb (may be NULL). */
void informer_stop(informer_t *inf, void (*cb)(void *data), void *data);
/* Builds the cache key ("namespace/name" or "name") of an object into buf; 0 or UV_EINVAL. */
int informer_key(const cJSON *obj, buf_t *buf);
