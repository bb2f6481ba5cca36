#include "watch/informer.h"
#include "watch/internal.h"
#include "watch/jscan.h"
#include "watch/ndjson.h"
#include "base/log.h"
#include "base/textpool.h"
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

/* One LIST page being read: its body is scanned as it arrives and each element of "items" is
 * parsed alone, so that an object that cannot be parsed fails alone. */
typedef struct informer__page_s {
  informer_t *inf;
  watch_jscan_t js;
  buf_t item;          /* the current item's bytes */
  const char *from;    /* where they start in the piece being scanned */
  int in_item, item_over, saw_items, oom;
  size_t item_base;    /* the scanner's depth inside "items" */
  size_t item_bytes;
  watch_objmeta_t meta; /* what the scan found of the current item */
  char *cont, *rv;     /* the list's metadata */
  size_t done;         /* items complete in this page */
  size_t bytes, max_bytes;
  size_t order_mark;   /* fresh_order.len when the page began */
  int too_big;         /* the page outgrew the body limit */
  buf_t reports;       /* "key\0why\0" ("" for no key) per skipped object, told once the page is complete */
} informer__page_t;

#define INFORMER_ACCEPT_META "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
#define INFORMER_ACCEPT_META_LIST "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"

struct informer_s {
  bool metadata_only; /* informer_opts_t.metadata_only */
  kube_client_t *c;
  uv_loop_t *loop;
  char *path, *label_selector, *field_selector;
  unsigned page_size, watch_timeout_s;
  uint64_t backoff_base_ms, backoff_max_ms, backoff_ms;
  informer_handlers_t h;
  watch_map_t cache;   /* key -> cJSON*, or informer__packed_t* when compact */
  size_t cache_object_bytes, cache_key_bytes; /* informer_memory: kept up to date by informer__cached/_uncached */
  watch_map_t fresh;   /* the list being assembled, key -> cJSON* (informer__packed_t* when compact) */
  buf_t fresh_order;   /* its keys in list order, NUL-separated, so handlers see list order */
  char *rv;            /* last resourceVersion seen */
  char *cont;          /* continue token of the list in progress */
  kube_req_t *list_req;
  informer__page_t *page; /* the page list_req is reading */
  unsigned cur_limit;  /* the page size asked for now (smaller after a page outgrew max_body) */
  watch_map_t bad;     /* keys of objects skipped in the list being assembled (values unused) */
  int bad_unknown;     /* an object whose key could not be found was skipped in it */
  kube_watch_t *watch;
  unsigned watch_events;
  int watch_error;     /* code of a watch ERROR event (410 means relist) */
  uv_timer_t timer;    /* backoff */
  int timer_relist;    /* what the timer starts: a list or a watch */
  bool synced;
  bool stopping;
  unsigned lists, watches;
  uint64_t rng;
  char **keep;         /* the projection (NULL-terminated copy), or NULL */
  char **keep_text;    /* the subtrees kept as text (NULL-terminated copy), or NULL */
  size_t nkeep_text;   /* how many */
  bool compact;        /* informer_opts_t.compact */
  cJSON *ring[INFORMER_RING]; /* compact: the trees informer_get/informer_next handed out, oldest replaced */
  unsigned ring_at;
  textpool_t texts;    /* their texts, each held once for all objects */
  void (*transform)(cJSON *obj, void *data);
  void *transform_data;
  void (*stop_cb)(void *);
  void *stop_data;
};

/* Informers started and not yet synced nor stopped, in the process (loop thread only): readiness. */
static size_t informer__unsynced;

size_t informer_unsynced(void) { return informer__unsynced; }

static void informer__list(informer_t *inf);
static void informer__watch(informer_t *inf);

/* ---- what the cache holds (informer_memory) ---- */

static size_t informer__node_bytes(const cJSON *o, unsigned depth) {
  size_t b = INFORMER_BLOCK_BYTES(sizeof(cJSON));
  if (o->string && !(o->type & cJSON_StringIsConst)) b += INFORMER_BLOCK_BYTES(strlen(o->string) + 1);
  if (o->type & cJSON_IsReference) return b; /* the value belongs to another tree */
  if ((cJSON_IsString(o) || cJSON_IsRaw(o)) && o->valuestring) b += INFORMER_BLOCK_BYTES(strlen(o->valuestring) + 1);
  /* Parsed trees are at most CJSON_NESTING_LIMIT deep; nothing deeper is cached. */
  if (depth < CJSON_NESTING_LIMIT)
    for (const cJSON *c = o->child; c; c = c->next) b += informer__node_bytes(c, depth + 1);
  return b;
}

size_t informer_object_bytes(const cJSON *obj) { return obj ? informer__node_bytes(obj, 0) : 0; }

/* The most keep_text paths a compact informer takes (informer_start says UV_EINVAL beyond). */
#define INFORMER__MAX_TEXT 64

/* A cached object of a compact informer, one block: the text's length, the pool's texts of its
 * keep_text subtrees (one per path, in keep_text's order; NULL where the path was absent or its
 * subtree stayed a tree), then the text itself, with null at each place a pooled text goes. The
 * block holds one hold on each of those texts. */
typedef struct informer__packed_s {
  size_t len;
  const char *held[];
} informer__packed_t;

static char *informer__packed_text(const informer_t *inf, const informer__packed_t *p) {
  return (char *)(p->held + inf->nkeep_text);
}

static size_t informer__packed_bytes(const informer_t *inf, const informer__packed_t *p) {
  return INFORMER_BLOCK_BYTES(sizeof *p + inf->nkeep_text * sizeof *p->held + p->len + 1);
}

/* The estimate of a cache or list value: a tree, or with compact a packed block. */
static size_t informer__value_bytes(const informer_t *inf, const void *v) {
  return inf->compact ? informer__packed_bytes(inf, v) : informer_object_bytes(v);
}

/* v was stored under key, replacing old (NULL: a new key). */
static void informer__cached(informer_t *inf, const char *key, const void *v, const void *old) {
  inf->cache_object_bytes += informer__value_bytes(inf, v);
  if (old) inf->cache_object_bytes -= informer__value_bytes(inf, old);
  else inf->cache_key_bytes += INFORMER_BLOCK_BYTES(strlen(key) + 1);
}

/* v, stored under key, was taken out of the cache. Cached values are never changed in place
 * (handlers see them const), so the estimate taken out is the one put in. */
static void informer__uncached(informer_t *inf, const char *key, const void *v) {
  inf->cache_object_bytes -= informer__value_bytes(inf, v);
  inf->cache_key_bytes -= INFORMER_BLOCK_BYTES(strlen(key) + 1);
}

static const char *const informer__always[] = {
    "apiVersion", "kind", "metadata.name", "metadata.namespace", "metadata.uid", "metadata.resourceVersion",
    "metadata.generation", "metadata.deletionTimestamp", "metadata.finalizers", NULL};

/* Moves src's children into dst where dst lacks them (for overlapping keep paths). The recursion
 * is bounded: below CJSON_NESTING_LIMIT levels (deeper than any parsed object) dst's copy is kept. */
static void informer__merge(cJSON *dst, cJSON *src, unsigned depth) {
  cJSON *ch;
  while ((ch = src->child)) {
    cJSON_DetachItemViaPointer(src, ch);
    cJSON *have = cJSON_GetObjectItemCaseSensitive(dst, ch->string);
    if (!have) cJSON_AddItemToObject(dst, ch->string, ch);
    else {
      if (cJSON_IsObject(have) && cJSON_IsObject(ch) && depth < CJSON_NESTING_LIMIT) informer__merge(have, ch, depth + 1);
      cJSON_Delete(ch);
    }
  }
}

/* Moves the item at dotted path from src to the same place in dst; 0 or UV_ENOMEM. */
static int informer__move(cJSON *dst, cJSON *src, const char *path) {
  char seg[256];
  for (;;) {
    size_t n = strcspn(path, ".");
    if (n >= sizeof seg) return 0;
    memcpy(seg, path, n);
    seg[n] = 0;
    cJSON *s = cJSON_GetObjectItemCaseSensitive(src, seg);
    if (!s) return 0;
    cJSON *d = cJSON_GetObjectItemCaseSensitive(dst, seg);
    if (!path[n]) {
      cJSON_DetachItemViaPointer(src, s);
      if (!d) {
        if (!cJSON_AddItemToObject(dst, seg, s)) { cJSON_Delete(s); return UV_ENOMEM; }
      } else {
        if (cJSON_IsObject(d) && cJSON_IsObject(s)) informer__merge(d, s, 1);
        cJSON_Delete(s);
      }
      return 0;
    }
    if (!cJSON_IsObject(s)) return 0;
    if (!d && !(d = cJSON_AddObjectToObject(dst, seg))) return UV_ENOMEM;
    if (!cJSON_IsObject(d)) return 0;
    src = s;
    dst = d;
    path += n + 1;
  }
}

cJSON *informer_project(cJSON *obj, const char *const *keep) {
  if (!obj || !keep) return obj;
  cJSON *p = cJSON_CreateObject();
  int r = p ? 0 : UV_ENOMEM;
  for (size_t i = 0; !r && informer__always[i]; i++) r = informer__move(p, obj, informer__always[i]);
  for (size_t i = 0; !r && keep[i]; i++) r = informer__move(p, obj, keep[i]);
  cJSON_Delete(obj);
  if (r) { cJSON_Delete(p); return NULL; }
  return p;
}

/* The item at dotted path in obj (through objects only), and the object that holds it. */
static cJSON *informer__at(cJSON *obj, const char *path, cJSON **parent) {
  char seg[256];
  for (;;) {
    size_t n = strcspn(path, ".");
    if (n >= sizeof seg || !cJSON_IsObject(obj)) return NULL;
    memcpy(seg, path, n);
    seg[n] = 0;
    cJSON *x = cJSON_GetObjectItemCaseSensitive(obj, seg);
    if (!x || !path[n]) {
      *parent = obj;
      return x;
    }
    obj = x;
    path += n + 1;
  }
}

/* A subtree kept as text: a raw node whose text is the pool's (informer_opts_t.keep_text). */
static bool informer__is_text(const cJSON *x) {
  return x && (x->type & 0xFF) == cJSON_Raw && (x->type & cJSON_IsReference) && x->valuestring;
}

/* Replaces each keep_text subtree of obj by its compact text, held in the informer's pool. Out of
 * memory, a subtree stays as it is (readers take both forms). */
static void informer__to_text(informer_t *inf, cJSON *obj) {
  for (size_t i = 0; inf->keep_text[i]; i++) {
    cJSON *parent, *x = informer__at(obj, inf->keep_text[i], &parent);
    if (!cJSON_IsObject(x) && !cJSON_IsArray(x)) continue;
    char *text = cJSON_PrintUnformatted(x);
    const char *held = text ? textpool_hold(&inf->texts, text, strlen(text)) : NULL;
    free(text);
    cJSON *raw = held ? cJSON_CreateNull() : NULL;
    if (!raw) {
      textpool_release(&inf->texts, held);
      continue;
    }
    /* The text is not the node's to free (cJSON_Delete skips a reference's value); the key moves. */
    raw->type = cJSON_Raw | cJSON_IsReference | (x->type & cJSON_StringIsConst);
    raw->valuestring = (char *)held;
    raw->string = x->string;
    x->string = NULL;
    cJSON_ReplaceItemViaPointer(parent, x, raw);
  }
}

/* Frees an object that informer__trim made, with its holds on the pool's texts. */
static void informer__free(informer_t *inf, cJSON *obj) {
  for (size_t i = 0; obj && inf->keep_text && inf->keep_text[i]; i++) {
    cJSON *parent, *x = informer__at(obj, inf->keep_text[i], &parent);
    if (informer__is_text(x)) textpool_release(&inf->texts, x->valuestring);
  }
  cJSON_Delete(obj);
}

/* ---- compact objects (informer_opts_t.compact) ---- */

/* The packed block of a trimmed tree; NULL when out of memory. The block takes over the tree's holds
 * on the pool's texts: on success the tree is to be freed with cJSON_Delete, not informer__free. */
static informer__packed_t *informer__pack(informer_t *inf, cJSON *obj) {
  const char *held[INFORMER__MAX_TEXT] = {0};
  cJSON *nodes[INFORMER__MAX_TEXT] = {0};
  size_t nk = inf->nkeep_text;
  for (size_t i = 0; i < nk; i++) {
    cJSON *parent, *x = informer__at(obj, inf->keep_text[i], &parent);
    if (!informer__is_text(x)) continue;
    /* Printed as null for now; the type comes back below, so the tree is as it was. */
    held[i] = x->valuestring;
    nodes[i] = x;
    x->type = (x->type & ~0xFF) | cJSON_NULL;
  }
  char *text = cJSON_PrintUnformatted(obj);
  for (size_t i = 0; i < nk; i++)
    if (nodes[i]) nodes[i]->type = (nodes[i]->type & ~0xFF) | cJSON_Raw;
  size_t len = text ? strlen(text) : 0;
  informer__packed_t *p = text ? malloc(sizeof *p + nk * sizeof *p->held + len + 1) : NULL;
  if (p) {
    p->len = len;
    for (size_t i = 0; i < nk; i++) p->held[i] = held[i];
    memcpy(informer__packed_text(inf, p), text, len + 1);
  }
  free(text);
  return p;
}

/* A tree of a packed object, with a raw reference node at each place of a pooled text (borrowed
 * from the block: valid while the block lives); NULL when out of memory. */
static cJSON *informer__unpack(const informer_t *inf, const informer__packed_t *p) {
  cJSON *obj = cJSON_ParseWithLength(informer__packed_text(inf, p), p->len);
  for (size_t i = 0; obj && i < inf->nkeep_text; i++) {
    if (!p->held[i]) continue;
    cJSON *parent, *x = informer__at(obj, inf->keep_text[i], &parent);
    if (!cJSON_IsNull(x)) continue; /* cannot happen: the text was printed with null there */
    x->type = cJSON_Raw | cJSON_IsReference | (x->type & cJSON_StringIsConst);
    x->valuestring = (char *)p->held[i];
  }
  return obj;
}

/* Frees a packed block and its holds. */
static void informer__packed_free(informer_t *inf, informer__packed_t *p) {
  for (size_t i = 0; p && i < inf->nkeep_text; i++) textpool_release(&inf->texts, p->held[i]);
  free(p);
}

/* Frees a cache or list value (a tree, or with compact a packed block). */
static void informer__value_free(informer_t *inf, void *v) {
  if (inf->compact) informer__packed_free(inf, v);
  else informer__free(inf, v);
}

/* Frees the trees handed out by informer_get and informer_next. Called before a cached value goes:
 * the pooled texts those trees point at may go with it. */
static void informer__ring_clear(informer_t *inf) {
  for (unsigned i = 0; i < INFORMER_RING; i++) {
    cJSON_Delete(inf->ring[i]);
    inf->ring[i] = NULL;
  }
}

/* Frees a value taken out of the cache. */
static void informer__drop(informer_t *inf, void *v) {
  if (!v) return;
  if (inf->compact) informer__ring_clear(inf);
  informer__value_free(inf, v);
}

/* The value of a trimmed tree for the cache or the list being assembled (consumes obj); NULL when out
 * of memory. With compact, keep (when not NULL) receives the tree instead of its being freed. */
static void *informer__value(informer_t *inf, cJSON *obj, cJSON **keep) {
  if (keep) *keep = NULL;
  if (!obj || !inf->compact) {
    if (keep) *keep = obj;
    return obj;
  }
  informer__packed_t *p = informer__pack(inf, obj);
  if (!p) {
    informer__free(inf, obj);
    return NULL;
  }
  if (keep) *keep = obj;
  else cJSON_Delete(obj); /* its holds are the block's now */
  return p;
}

/* A tree to hand a handler for a value: the value itself, or with compact a parse of it (to be freed
 * with informer__tree_done); NULL when out of memory. */
static const cJSON *informer__tree(const informer_t *inf, const void *v) {
  return inf->compact ? informer__unpack(inf, v) : v;
}

static void informer__tree_done(const informer_t *inf, const cJSON *t) {
  if (inf->compact) cJSON_Delete((cJSON *)t);
}

/* Whether two values of key are the same object: the same resourceVersion, or with compact the same
 * text and pooled texts (which is the same thing: the resourceVersion is in the text, and a text
 * follows from the object). */
static bool informer__same(const informer_t *inf, const void *a, const void *b);

/* Keys that most cached objects have, kept once for the process: a cached node with one of them
 * points here (cJSON_StringIsConst: cJSON_Delete leaves it, cJSON_Duplicate shares it) instead of
 * a block of its own (32 bytes or more each; a HelmRelease has some 30 of them). Sorted (strcmp). */
static const char *const informer__keys[] = {
    "annotations", "apiVersion", "blockOwnerDeletion", "chart", "conditions", "controller", "crds",
    "createNamespace", "creationTimestamp", "data", "deletionTimestamp", "dependsOn", "disableHooks",
    "disableWait", "driftDetection", "finalizers", "generation", "inline", "install", "installFailures",
    "interval", "key", "kind", "labels", "lastAppliedDigest", "lastAppliedRevision", "lastAttemptedDigest",
    "lastAttemptedRevision", "lastHandledReconcileAt", "lastTransitionTime", "maxHistory", "message", "metadata",
    "mode", "name", "namespace", "observedGeneration", "optional", "outsideObjects", "owner", "ownerReferences",
    "reason", "releaseName", "remediation", "repository", "resourceVersion", "retries", "rollback",
    "serviceAccountName", "spec", "status", "storageNamespace", "strategy", "suspend", "targetNamespace",
    "targetPath", "test", "timeout", "type", "uid", "uninstall", "upgrade", "upgradeFailures", "url", "values",
    "valuesFrom", "valuesKey", "version"};

static int informer__key_cmp(const void *k, const void *e) { return strcmp(k, *(const char *const *)e); }

/* Points the keys of o and below that informer__keys holds at its copies, freeing theirs. */
static void informer__share_keys(cJSON *o, unsigned depth) {
  for (cJSON *c = o->child; c; c = c->next) {
    if (c->string && !(c->type & cJSON_StringIsConst)) {
      const char *const *k = bsearch(c->string, informer__keys, sizeof informer__keys / sizeof *informer__keys,
                                     sizeof *informer__keys, informer__key_cmp);
      if (k) {
        cJSON_free(c->string);
        c->string = (char *)*k;
        c->type |= cJSON_StringIsConst;
      }
    }
    if (depth < CJSON_NESTING_LIMIT) informer__share_keys(c, depth + 1);
  }
}

/* Projects and transforms an object for the cache (consumes it); NULL when out of memory. */
static cJSON *informer__trim(informer_t *inf, cJSON *obj) {
  if (inf->keep) obj = informer_project(obj, (const char *const *)inf->keep);
  if (obj && inf->transform) inf->transform(obj, inf->transform_data);
  if (obj && inf->keep_text) informer__to_text(inf, obj);
  if (obj) informer__share_keys(obj, 0);
  return obj;
}

static const char *informer__str(const cJSON *o, const char *a, const char *b) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
  if (b) x = cJSON_GetObjectItemCaseSensitive(x, b);
  return cJSON_IsString(x) ? x->valuestring : NULL;
}

static bool informer__same(const informer_t *inf, const void *a, const void *b) {
  if (inf->compact) {
    const informer__packed_t *x = a, *y = b;
    return x->len == y->len && !memcmp(x->held, y->held, inf->nkeep_text * sizeof *x->held) &&
           !memcmp(informer__packed_text(inf, x), informer__packed_text(inf, y), x->len);
  }
  const char *orv = informer__str(a, "metadata", "resourceVersion"), *nrv = informer__str(b, "metadata", "resourceVersion");
  return orv && nrv && !strcmp(orv, nrv);
}

int informer_key(const cJSON *obj, buf_t *buf) {
  const char *ns = informer__str(obj, "metadata", "namespace"), *name = informer__str(obj, "metadata", "name");
  if (!name || !*name) return UV_EINVAL;
  buf_reset(buf);
  int r = ns && *ns ? buf_printf(buf, "%s/%s", ns, name) : buf_puts(buf, name);
  return r ? UV_ENOMEM : 0;
}

static int informer__set_rv(informer_t *inf, const char *rv) {
  if (!rv || !*rv) return 0;
  char *d = strdup(rv);
  if (!d) return UV_ENOMEM;
  free(inf->rv);
  inf->rv = d;
  return 0;
}

/* Jittered exponential backoff: the delay doubles up to the cap, and each wait is 50-100% of it. */
static uint64_t informer__next_delay(informer_t *inf) {
  inf->backoff_ms = inf->backoff_ms ? inf->backoff_ms * 2 : inf->backoff_base_ms;
  if (inf->backoff_ms > inf->backoff_max_ms) inf->backoff_ms = inf->backoff_max_ms;
  inf->rng ^= inf->rng << 13;
  inf->rng ^= inf->rng >> 7;
  inf->rng ^= inf->rng << 17;
  return inf->backoff_ms / 2 + inf->rng % (inf->backoff_ms / 2 + 1);
}

static void informer__timer_cb(uv_timer_t *t) {
  informer_t *inf = t->data;
  if (inf->stopping) return;
  if (inf->timer_relist) informer__list(inf);
  else informer__watch(inf);
}

static void informer__retry(informer_t *inf, int relist, const char *why) {
  /* With its client closed the informer has nothing to retry with; it waits for informer_stop. */
  if (kube_client_is_closing(inf->c)) return;
  uint64_t d = informer__next_delay(inf);
  char ms[32];
  snprintf(ms, sizeof ms, "%llu", (unsigned long long)d);
  LOG_W(relist ? "informer list failed; retrying" : "informer watch failed; retrying", "path", inf->path, "error",
        why ? why : "", "retry_ms", ms);
  inf->timer_relist = relist;
  uv_timer_start(&inf->timer, informer__timer_cb, d, 0);
}

static void informer__free_map(informer_t *inf, watch_map_t *m) {
  /* Only ever called on maps whose values are all objects. */
  size_t it = 0;
  const char *k;
  void *v;
  while (watch_map_next(m, &it, &k, &v)) informer__value_free(inf, v);
  watch_map_free(m);
}

/* Tells on_delete of the cached value v of key (parsed for the call with compact). */
static void informer__tell_delete(informer_t *inf, const char *key, const void *v) {
  const cJSON *t = informer__tree(inf, v);
  if (t) inf->h.on_delete(inf, key, t, inf->h.data);
  else LOG_E("informer out of memory; a delete is not told", "path", inf->path, "key", key);
  informer__tree_done(inf, t);
}

/* Applies a complete list to the cache: adds, updates where resourceVersion changed, and deletes
 * what vanished. */
static void informer__apply_list(informer_t *inf) {
  static char consumed; /* marks fresh entries already moved to the cache */
  const char *k;
  void *v;
  for (size_t off = 0; off < inf->fresh_order.len; off += strlen(inf->fresh_order.data + off) + 1) {
    k = inf->fresh_order.data + off;
    void *obj = watch_map_get(&inf->fresh, k);
    if (!obj || obj == (void *)&consumed) continue;
    watch_map_put(&inf->fresh, k, &consumed, NULL); /* replacing a value never allocates */
    void *old = watch_map_get(&inf->cache, k);
    if (old && informer__same(inf, old, obj)) { informer__value_free(inf, obj); continue; }
    if (watch_map_put(&inf->cache, k, obj, NULL)) {
      LOG_E("informer out of memory; object dropped", "path", inf->path, "key", k);
      informer__value_free(inf, obj);
      continue;
    }
    informer__cached(inf, k, obj, old);
    if (!inf->stopping && (old ? inf->h.on_update != NULL : inf->h.on_add != NULL)) {
      /* A compact list holds texts (so that a relist of every object never holds every tree at once):
       * each is parsed for its handler call. */
      const cJSON *t = informer__tree(inf, obj), *ot = old ? informer__tree(inf, old) : NULL;
      if (!t || (old && !ot)) LOG_E("informer out of memory; a change is not told", "path", inf->path, "key", k);
      else if (old) inf->h.on_update(inf, k, ot, t, inf->h.data);
      else inf->h.on_add(inf, k, t, inf->h.data);
      informer__tree_done(inf, t);
      informer__tree_done(inf, ot);
    }
    informer__drop(inf, old);
  }
  size_t it = 0;
  if (inf->bad_unknown)
    LOG_W("informer list had an object it could not read or name; no deletes are inferred from this list", "path",
          inf->path);
  while (watch_map_next(&inf->cache, &it, &k, &v)) {
    if (watch_map_get(&inf->fresh, k)) continue;
    /* A skipped object is not gone: its last readable copy stays. */
    if (inf->bad_unknown || watch_map_get(&inf->bad, k)) continue;
    if (!inf->stopping && inf->h.on_delete) informer__tell_delete(inf, k, v);
    informer__uncached(inf, k, v);
    watch_map_del(&inf->cache, k); /* deleting leaves a tombstone: iteration stays valid */
    informer__drop(inf, v);
  }
  /* Every fresh value now belongs to the cache or was freed. */
  watch_map_free(&inf->fresh);
  buf_reset(&inf->fresh_order);
  watch_map_free(&inf->bad);
  inf->bad_unknown = 0;
}

/* Forgets a partly assembled list. */
static void informer__drop_fresh(informer_t *inf) {
  informer__free_map(inf, &inf->fresh);
  buf_reset(&inf->fresh_order);
  watch_map_free(&inf->bad);
  inf->bad_unknown = 0;
}

static const char *const informer__items[] = {"items", NULL};

static void informer__page_free(informer__page_t *pg) {
  if (!pg) return;
  watch_jscan_free(&pg->js);
  buf_free(&pg->item);
  buf_free(&pg->reports);
  free(pg->cont);
  free(pg->rv);
  free(pg);
}

/* Takes back what a page that is read again added to the list being assembled. */
static void informer__page_undo(informer_t *inf, informer__page_t *pg) {
  for (size_t off = pg->order_mark; off < inf->fresh_order.len; off += strlen(inf->fresh_order.data + off) + 1)
    informer__value_free(inf, watch_map_del(&inf->fresh, inf->fresh_order.data + off));
  if (inf->fresh_order.len > pg->order_mark) {
    inf->fresh_order.len = pg->order_mark;
    if (inf->fresh_order.data) inf->fresh_order.data[pg->order_mark] = 0;
  }
}

/* Notes a skipped object, to be told when the page is complete. */
static void informer__page_report(informer__page_t *pg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void informer__page_report(informer__page_t *pg, const char *fmt, ...) {
  char key[320] = "", why[512];
  watch_objmeta_key(&pg->meta, key, sizeof key);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  if (buf_append(&pg->reports, key, strlen(key) + 1) || buf_append(&pg->reports, why, strlen(why) + 1)) pg->oom = 1;
}

static void informer__item_add(informer__page_t *pg, const char *p, size_t n) {
  pg->item_bytes += n;
  if (pg->item_over || !n) return;
  if (pg->item.len + n > pg->max_bytes) {
    /* Too big to keep: the rest is only scanned, for its name. */
    pg->item_over = 1;
    buf_free(&pg->item);
    return;
  }
  if (buf_append(&pg->item, p, n)) pg->oom = 1;
}

/* One element of "items" is complete: parse it alone, or skip it and say why. */
static void informer__item_done(informer__page_t *pg) {
  informer_t *inf = pg->inf;
  size_t depth = pg->js.max_depth - pg->item_base;
  pg->done++;
  if (pg->item_over) {
    informer__page_report(pg, "the object is %zu bytes, more than the client's limit of %zu bytes", pg->item_bytes,
                          pg->max_bytes);
    return;
  }
  if (depth > WATCH_MAX_NESTING) {
    informer__page_report(pg, "the object is nested %zu levels deep, more than the limit of %d", depth,
                          WATCH_MAX_NESTING);
    return;
  }
  if (pg->item.len && watch_json_has_nul(pg->item.data, pg->item.len)) {
    buf_reset(&pg->item);
    informer__page_report(pg, "a string holds a NUL character (\\u0000), which would cut it short: refused");
    return;
  }
  cJSON *item = cJSON_ParseWithLength(pg->item.data ? pg->item.data : "", pg->item.len);
  buf_reset(&pg->item);
  if (!cJSON_IsObject(item)) {
    informer__page_report(pg, item ? "the list item is not a JSON object" : "the object is not valid JSON");
    cJSON_Delete(item);
    return;
  }
  buf_t key = BUF_INIT;
  void *old, *v = NULL;
  /* Trimmed at once (and with compact packed): one whole object is the most the informer ever holds
   * beyond its cache. */
  if (!(item = informer__trim(inf, item))) {
    pg->oom = 1;
  } else if (informer_key(item, &key)) {
    informer__page_report(pg, "the object has no metadata.name");
    informer__free(inf, item);
  } else if (!(v = informer__value(inf, item, NULL))) {
    pg->oom = 1;
  } else if (watch_map_put(&inf->fresh, key.data, v, &old)) {
    informer__value_free(inf, v);
    pg->oom = 1;
  } else if (old) {
    informer__value_free(inf, old);
  } else if (buf_append(&inf->fresh_order, key.data, key.len + 1)) {
    /* Out of memory: an object missing from the order list would leak, so it is dropped. */
    informer__value_free(inf, watch_map_del(&inf->fresh, key.data));
    pg->oom = 1;
  }
  buf_free(&key);
}

static void informer__page_key(watch_jscan_t *s) {
  informer__page_t *pg = s->data;
  if (s->depth == 1 && s->kind[0] == '{' && !strcmp(s->key[0], "items")) pg->saw_items = 1;
}

static void informer__page_elem(watch_jscan_t *s, int end, const char *at) {
  informer__page_t *pg = s->data;
  if (!watch_jscan_at(s, 2, informer__items)) return;
  if (!end) {
    pg->in_item = 1;
    pg->item_over = 0;
    pg->item_bytes = 0;
    pg->from = at;
    buf_reset(&pg->item);
    memset(&pg->meta, 0, sizeof pg->meta);
    pg->item_base = s->depth;
    s->max_depth = s->depth;
    return;
  }
  informer__item_add(pg, pg->from, (size_t)(at - pg->from));
  pg->in_item = 0;
  informer__item_done(pg);
}

static void informer__page_string(watch_jscan_t *s, const char *v, size_t n) {
  informer__page_t *pg = s->data;
  if (pg->in_item) {
    watch_objmeta_take(&pg->meta, s, 2, informer__items, v, n);
    return;
  }
  static const char *const cont[] = {"metadata", "continue"}, *const rv[] = {"metadata", "resourceVersion"};
  char **dst = watch_jscan_at(s, 2, cont) ? &pg->cont : watch_jscan_at(s, 2, rv) ? &pg->rv : NULL;
  if (!dst) return;
  free(*dst);
  if (!(*dst = strndup(v, n))) pg->oom = 1;
}

/* Receives the LIST body as it arrives (kube_req_opts_t.on_body). */
static int informer__page_body(const char *p, size_t n, void *data) {
  informer_t *inf = data;
  informer__page_t *pg = inf->page;
  pg->bytes += n;
  /* A page bigger than the body limit is asked for again with fewer objects; with one object per
   * page, only that object's bytes are bounded (and it is skipped when too big). */
  if (pg->bytes > pg->max_bytes && inf->cur_limit > 1) {
    pg->too_big = 1;
    return UV_E2BIG;
  }
  if (pg->in_item) pg->from = p;
  int r = watch_jscan_feed(&pg->js, p, n);
  if (pg->oom) return UV_ENOMEM;
  if (r) return r;
  if (pg->in_item) informer__item_add(pg, pg->from, (size_t)(p + n - pg->from));
  return pg->oom ? UV_ENOMEM : 0;
}

/* Tells the owner of the page's skipped objects, and remembers their keys so that the list does not
 * report their cached copies as deleted. */
static void informer__page_tell(informer_t *inf, informer__page_t *pg) {
  for (size_t off = 0; off < pg->reports.len && !inf->stopping;) {
    const char *key = pg->reports.data + off;
    const char *why = key + strlen(key) + 1;
    off = (size_t)(why - pg->reports.data) + strlen(why) + 1;
    if (!*key || watch_map_put(&inf->bad, key, inf, NULL)) inf->bad_unknown = 1;
    LOG_W("informer skipped an object it cannot read", "path", inf->path, "key", key, "error", why);
    if (inf->h.on_bad_object) inf->h.on_bad_object(inf, *key ? key : NULL, why, inf->h.data);
  }
}

static void informer__list_cb(const kube_response_t *res, void *data) {
  informer_t *inf = data;
  informer__page_t *pg = inf->page;
  inf->list_req = NULL;
  inf->page = NULL;
  if (inf->stopping || res->err == UV_ECANCELED) { informer__page_free(pg); return; }
  if (pg->too_big) {
    /* Ask again for fewer objects: as many as fitted, at most half as many. */
    informer__page_undo(inf, pg);
    unsigned lim = inf->cur_limit / 2;
    if (pg->done && pg->done < lim) lim = (unsigned)pg->done;
    inf->cur_limit = lim ? lim : 1;
    char l[16];
    snprintf(l, sizeof l, "%u", inf->cur_limit);
    LOG_I("informer list page is larger than the client's body limit; asking for fewer objects", "path", inf->path,
          "limit", l);
    informer__page_free(pg);
    informer__list(inf);
    return;
  }
  if (!kube_response_ok(res)) {
    /* The scanner stops a body whose structure is broken; say where rather than that it stopped. */
    char why[128];
    const char *msg = res->errmsg;
    if (pg->js.err) snprintf(why, sizeof why, "the list response is not valid JSON (at byte %zu)", pg->js.pos);
    if (pg->js.err) msg = why;
    else if (pg->oom) msg = "out of memory";
    informer__page_free(pg);
    if (res->status == 410 && inf->cont) {
      /* The continue token expired mid-list: start the list over. */
      LOG_I("informer list continue token expired; listing again", "path", inf->path);
      informer__drop_fresh(inf);
      free(inf->cont);
      inf->cont = NULL;
      informer__list(inf);
      return;
    }
    informer__drop_fresh(inf);
    free(inf->cont);
    inf->cont = NULL;
    informer__retry(inf, 1, msg);
    return;
  }
  if (!watch_jscan_done(&pg->js) || pg->js.kind[0] != '{' || !pg->saw_items || pg->oom) {
    int oom = pg->oom;
    informer__page_free(pg);
    informer__drop_fresh(inf);
    free(inf->cont);
    inf->cont = NULL;
    informer__retry(inf, 1, oom ? "out of memory" : "the list response is not a JSON list");
    return;
  }
  informer__page_tell(inf, pg);
  if (inf->stopping) { informer__page_free(pg); return; }
  free(inf->cont);
  inf->cont = pg->cont && *pg->cont ? pg->cont : NULL;
  if (inf->cont) pg->cont = NULL;
  int err = !inf->cont ? informer__set_rv(inf, pg->rv) : 0;
  informer__page_free(pg);
  if (err) {
    informer__drop_fresh(inf);
    informer__retry(inf, 1, "out of memory");
    return;
  }
  if (inf->cont) {
    /* After a page that had to be made smaller, the next ones grow back. */
    if (inf->cur_limit < inf->page_size)
      inf->cur_limit = inf->cur_limit > inf->page_size / 2 ? inf->page_size : inf->cur_limit * 2;
    informer__list(inf);
    return;
  }
  inf->lists++;
  inf->backoff_ms = 0;
  inf->cur_limit = inf->page_size;
  informer__apply_list(inf);
  if (inf->stopping) return;
  if (!inf->synced) {
    inf->synced = true;
    informer__unsynced--;
    if (inf->h.on_synced) inf->h.on_synced(inf, inf->h.data);
    if (inf->stopping) return;
  }
  informer__watch(inf);
}

static int informer__query(informer_t *inf, buf_t *p) {
  int r = 0;
  if (inf->label_selector) r |= kube_query_add(p, "labelSelector", inf->label_selector);
  if (inf->field_selector) r |= kube_query_add(p, "fieldSelector", inf->field_selector);
  return r;
}

static void informer__list(informer_t *inf) {
  buf_t p = BUF_INIT;
  char lim[16];
  snprintf(lim, sizeof lim, "%u", inf->cur_limit);
  int r = buf_puts(&p, inf->path);
  r |= kube_query_add(&p, "limit", lim);
  r |= informer__query(inf, &p);
  if (inf->cont) r |= kube_query_add(&p, "continue", inf->cont);
  informer__page_t *pg = r ? NULL : calloc(1, sizeof *pg);
  if (pg) {
    pg->inf = inf;
    watch_jscan_init(&pg->js);
    pg->js.on_key = informer__page_key;
    pg->js.on_elem = informer__page_elem;
    pg->js.on_string = informer__page_string;
    pg->js.want_depths = 1u << 2 | 1u << 4; /* metadata.continue, items[].metadata.name */
    pg->js.data = pg;
    pg->max_bytes = kube_client_get_limits(inf->c).max_body;
    pg->order_mark = inf->fresh_order.len;
    inf->page = pg;
    kube_req_opts_t o = {.method = "GET", .path = p.data, .on_body = informer__page_body,
                         .accept = inf->metadata_only ? INFORMER_ACCEPT_META_LIST : NULL};
    inf->list_req = kube_request(inf->c, &o, informer__list_cb, inf);
    if (!inf->list_req) {
      inf->page = NULL;
      informer__page_free(pg);
    }
  }
  buf_free(&p);
  if (!inf->list_req) informer__retry(inf, 1, "cannot start the list request (out of memory or client closed)");
}

static void informer__event(kube_watch_t *w, const char *type, cJSON *object, void *data) {
  informer_t *inf = data;
  if (inf->stopping) return;
  inf->watch_events++;
  if (!strcmp(type, "ERROR")) {
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(object, "code");
    const char *msg = informer__str(object, "message", NULL);
    inf->watch_error = cJSON_IsNumber(code) ? code->valueint : 500;
    if (inf->watch_error != 410)
      LOG_W("informer watch error event", "path", inf->path, "message", msg ? msg : "");
    kube_watch_stop(w);
    return;
  }
  const char *rv = informer__str(object, "metadata", "resourceVersion");
  if (!strcmp(type, "BOOKMARK")) {
    informer__set_rv(inf, rv);
    return;
  }
  buf_t key = BUF_INIT;
  if (informer_key(object, &key)) {
    buf_free(&key);
    return;
  }
  if (!strcmp(type, "DELETED")) {
    void *old = watch_map_del(&inf->cache, key.data);
    if (old) informer__uncached(inf, key.data, old);
    informer__set_rv(inf, rv);
    /* Handlers see the projection, as for adds and updates. */
    cJSON *last = inf->keep || inf->transform || inf->keep_text ? informer__trim(inf, kube_watch_take_object(w)) : NULL;
    if (inf->h.on_delete) inf->h.on_delete(inf, key.data, last ? last : object, inf->h.data);
    informer__free(inf, last);
    informer__drop(inf, old);
  } else if (!strcmp(type, "ADDED") || !strcmp(type, "MODIFIED")) {
    /* With compact, the handler gets the tree just trimmed (the block holds its pooled texts now),
     * and the old object parsed from its block before the block goes. */
    const void *have = inf->compact && inf->h.on_update ? watch_map_get(&inf->cache, key.data) : NULL;
    const cJSON *ot = have ? informer__tree(inf, have) : NULL;
    cJSON *obj = NULL;
    void *v = have && !ot ? NULL : informer__value(inf, informer__trim(inf, kube_watch_take_object(w)), &obj), *old = NULL;
    if (!v || watch_map_put(&inf->cache, key.data, v, &old)) {
      if (v) {
        informer__value_free(inf, v);
        informer__tree_done(inf, obj);
      }
      informer__tree_done(inf, ot);
      LOG_E("informer out of memory; relisting", "path", inf->path);
      inf->watch_error = 410; /* the cache is now wrong: rebuild it */
      kube_watch_stop(w);
    } else {
      informer__cached(inf, key.data, v, old);
      informer__set_rv(inf, rv);
      if (old && inf->h.on_update) inf->h.on_update(inf, key.data, inf->compact ? ot : old, obj, inf->h.data);
      else if (!old && inf->h.on_add) inf->h.on_add(inf, key.data, obj, inf->h.data);
      informer__tree_done(inf, obj);
      informer__tree_done(inf, ot);
      informer__drop(inf, old);
    }
  }
  buf_free(&key);
}

/* A watch event the stream skipped (kube_watch_on_bad_event). */
static void informer__bad_event(kube_watch_t *w, const char *type, const char *ns, const char *name, const char *rv,
                                const char *why, void *data) {
  informer_t *inf = data;
  if (inf->stopping) return;
  inf->watch_events++;
  char key[320];
  int have = *name != 0;
  if (have) snprintf(key, sizeof key, *ns ? "%s/%s" : "%s%s", *ns ? ns : "", name);
  if (!strcmp(type, "ERROR")) {
    LOG_W("informer watch error event that cannot be read", "path", inf->path, "error", why);
    inf->watch_error = 500;
    kube_watch_stop(w);
    return;
  }
  informer__set_rv(inf, rv);
  if (!strcmp(type, "BOOKMARK")) return;
  if (!strcmp(type, "DELETED") && have) {
    /* The object is gone whatever its last state was: its cached copy goes as the delete. */
    void *old = watch_map_del(&inf->cache, key);
    if (old) informer__uncached(inf, key, old);
    if (old && inf->h.on_delete) informer__tell_delete(inf, key, old);
    informer__drop(inf, old);
    return;
  }
  LOG_W("informer skipped an object it cannot read", "path", inf->path, "key", have ? key : "", "error", why);
  if (inf->h.on_bad_object) inf->h.on_bad_object(inf, have ? key : NULL, why, inf->h.data);
}

static void informer__end(kube_watch_t *w, const kube_response_t *res, void *data) {
  informer_t *inf = data;
  inf->watch = NULL;
  if (inf->stopping) return;
  int werr = inf->watch_error;
  inf->watch_error = 0;
  if (werr == 410 || res->status == 410) {
    /* Our resourceVersion is too old for the watch cache: list again from scratch. */
    LOG_I("informer resourceVersion expired; relisting", "path", inf->path);
    informer__list(inf);
    return;
  }
  if (werr) {
    informer__retry(inf, 0, "the watch reported an error event");
    return;
  }
  if (res->err == UV_ECANCELED) return; /* the client was closed */
  if (res->err == 0 && res->status == 200) {
    /* The server's timeoutSeconds ended a healthy stream: continue from where it stopped. */
    inf->backoff_ms = 0;
    informer__watch(inf);
    return;
  }
  if (inf->watch_events) inf->backoff_ms = 0; /* it worked for a while: start the backoff over */
  informer__retry(inf, 0, res->errmsg);
}

/* True when what the cache keeps may hold metadata.managedFields: whole objects, or a keep path at
 * or above it. Otherwise the watch leaves it out before the parse. */
static int informer__keeps_managed(const informer_t *inf) {
  static const char mf[] = "metadata.managedFields";
  if (!inf->keep) return 1;
  for (size_t i = 0; inf->keep[i]; i++) {
    const char *k = inf->keep[i];
    size_t n = strlen(k);
    if (!strcmp(k, "metadata") || (n >= sizeof mf - 1 && !strncmp(k, mf, sizeof mf - 1) &&
                                   (k[sizeof mf - 1] == 0 || k[sizeof mf - 1] == '.')))
      return 1;
  }
  return 0;
}

static void informer__watch(informer_t *inf) {
  buf_t p = BUF_INIT;
  char to[16];
  unsigned t = inf->watch_timeout_s;
  if (!t) {
    /* Like client-go: spread re-watches of many informers over 5-10 minutes. */
    inf->rng ^= inf->rng << 13; inf->rng ^= inf->rng >> 7; inf->rng ^= inf->rng << 17;
    t = 300 + (unsigned)(inf->rng % 300);
  }
  snprintf(to, sizeof to, "%u", t);
  int r = buf_puts(&p, inf->path);
  r |= kube_query_add(&p, "watch", "1");
  r |= kube_query_add(&p, "allowWatchBookmarks", "true");
  r |= kube_query_add(&p, "resourceVersion", inf->rv ? inf->rv : "");
  r |= kube_query_add(&p, "timeoutSeconds", to);
  r |= informer__query(inf, &p);
  inf->watch_events = 0;
  inf->watch_error = 0;
  inf->watch = r ? NULL : kube_watch_start_accept(inf->c, p.data, inf->metadata_only ? INFORMER_ACCEPT_META : NULL,
                                                  informer__event, informer__end, inf);
  buf_free(&p);
  if (inf->watch) kube_watch_on_bad_event(inf->watch, informer__bad_event);
  if (inf->watch && !informer__keeps_managed(inf)) kube_watch_drop_managed_fields(inf->watch);
  if (inf->watch) inf->watches++;
  else informer__retry(inf, 0, "cannot start the watch (out of memory or client closed)");
}

static void informer__free_list(char ***list) {
  for (size_t i = 0; *list && (*list)[i]; i++) free((*list)[i]);
  free(*list);
  *list = NULL;
}

static void informer__free_keep(informer_t *inf) {
  informer__free_list(&inf->keep);
  informer__free_list(&inf->keep_text);
}

/* A NULL-terminated copy of a NULL-terminated list of strings; 0 or UV_ENOMEM (*out then freed). */
static int informer__copy_list(const char *const *list, char ***out) {
  size_t n = 0;
  while (list[n]) n++;
  if (!(*out = calloc(n + 1, sizeof **out))) return UV_ENOMEM;
  for (size_t i = 0; i < n; i++)
    if (!((*out)[i] = strdup(list[i]))) {
      informer__free_list(out);
      return UV_ENOMEM;
    }
  return 0;
}

int informer_start(kube_client_t *c, const informer_opts_t *o, const informer_handlers_t *h, informer_t **out) {
  *out = NULL;
  if (!o->path || o->path[0] != '/' || strchr(o->path, '?')) return UV_EINVAL;
  informer_t *inf = calloc(1, sizeof *inf);
  if (!inf) return UV_ENOMEM;
  inf->c = c;
  inf->loop = kube_client_loop(c);
  inf->path = strdup(o->path);
  inf->label_selector = watch__strdup(o->label_selector);
  inf->field_selector = watch__strdup(o->field_selector);
  if (!inf->path || (o->label_selector && !inf->label_selector) || (o->field_selector && !inf->field_selector)) {
    free(inf->path); free(inf->label_selector); free(inf->field_selector); free(inf);
    return UV_ENOMEM;
  }
  inf->page_size = o->page_size ? o->page_size : 500;
  inf->cur_limit = inf->page_size;
  inf->watch_timeout_s = o->watch_timeout_s;
  inf->backoff_base_ms = o->backoff_base_ms ? o->backoff_base_ms : 500;
  inf->backoff_max_ms = o->backoff_max_ms ? o->backoff_max_ms : 30000;
  if (inf->backoff_max_ms < inf->backoff_base_ms) inf->backoff_max_ms = inf->backoff_base_ms;
  inf->h = *h;
  inf->transform = o->transform;
  inf->metadata_only = o->metadata_only;
  inf->transform_data = o->transform_data;
  int err = UV_ENOMEM;
  if ((o->keep && informer__copy_list(o->keep, &inf->keep)) ||
      (o->keep_text && informer__copy_list(o->keep_text, &inf->keep_text)))
    goto fail;
  while (inf->keep_text && inf->keep_text[inf->nkeep_text]) inf->nkeep_text++;
  inf->compact = o->compact;
  err = UV_EINVAL;
  if (inf->compact && inf->nkeep_text > INFORMER__MAX_TEXT) goto fail;
  for (size_t i = 1; i < sizeof informer__keys / sizeof *informer__keys; i++)
    assert(strcmp(informer__keys[i - 1], informer__keys[i]) < 0); /* bsearch needs them sorted */
  inf->rng = uv_hrtime() | 1;
  inf->cache = (watch_map_t)WATCH_MAP_INIT;
  inf->fresh = (watch_map_t)WATCH_MAP_INIT;
  inf->bad = (watch_map_t)WATCH_MAP_INIT;
  uv_timer_init(inf->loop, &inf->timer);
  inf->timer.data = inf;
  /* The first list starts from the loop, so no handler runs inside informer_start. */
  inf->timer_relist = 1;
  uv_timer_start(&inf->timer, informer__timer_cb, 0, 0);
  informer__unsynced++;
  *out = inf;
  return 0;
fail:
  informer__free_keep(inf);
  free(inf->path); free(inf->label_selector); free(inf->field_selector); free(inf);
  return err;
}

bool informer_has_synced(const informer_t *inf) { return inf->synced; }

/* A tree for a reader of a compact informer, kept in the ring (the oldest there goes); NULL when out of
 * memory. The ring is the informer's own bookkeeping, not its cache: const callers may fill it. */
static const cJSON *informer__ring_put(const informer_t *cinf, const void *v) {
  informer_t *inf = (informer_t *)cinf;
  cJSON *t = informer__unpack(inf, v);
  if (!t) return NULL;
  cJSON_Delete(inf->ring[inf->ring_at]);
  inf->ring[inf->ring_at] = t;
  inf->ring_at = (inf->ring_at + 1) % INFORMER_RING;
  return t;
}

const cJSON *informer_get(const informer_t *inf, const char *key) {
  const void *v = watch_map_get(&inf->cache, key);
  return v && inf->compact ? informer__ring_put(inf, v) : v;
}

bool informer_has(const informer_t *inf, const char *key) { return watch_map_get(&inf->cache, key) != NULL; }

size_t informer_cached_bytes(const informer_t *inf, const char *key) {
  const void *v = watch_map_get(&inf->cache, key);
  return v ? informer__value_bytes(inf, v) : 0;
}

size_t informer_count(const informer_t *inf) { return inf->cache.len; }

bool informer_next(const informer_t *inf, size_t *it, const char **key, const cJSON **obj) {
  void *v;
  while (watch_map_next(&inf->cache, it, key, &v)) {
    *obj = inf->compact ? informer__ring_put(inf, v) : v;
    if (*obj) return true;
    LOG_E("informer out of memory; an object is left out of an iteration", "path", inf->path, "key", *key);
  }
  return false;
}

const char *informer_resource_version(const informer_t *inf) { return inf->rv ? inf->rv : ""; }

void informer_stats(const informer_t *inf, unsigned *lists, unsigned *watches) {
  if (lists) *lists = inf->lists;
  if (watches) *watches = inf->watches;
}

informer_memory_t informer_memory(const informer_t *inf) {
  informer_memory_t m = {.objects = inf->cache.len, .object_bytes = inf->cache_object_bytes,
                         .key_bytes = inf->cache_key_bytes};
  if (inf->cache.cap) m.table_bytes = INFORMER_BLOCK_BYTES(inf->cache.cap * sizeof *inf->cache.slots);
  m.texts = inf->texts.n;
  m.text_bytes = inf->texts.bytes;
  m.bytes = m.object_bytes + m.key_bytes + m.table_bytes + m.text_bytes;
  return m;
}

static void informer__closed(uv_handle_t *h) {
  informer_t *inf = h->data;
  void (*cb)(void *) = inf->stop_cb;
  void *data = inf->stop_data;
  informer__ring_clear(inf);
  informer__free_map(inf, &inf->cache);
  informer__free_map(inf, &inf->fresh);
  informer__free_keep(inf); /* after the objects: freeing them reads keep_text */
  textpool_free(&inf->texts);
  buf_free(&inf->fresh_order);
  watch_map_free(&inf->bad);
  informer__page_free(inf->page);
  free(inf->path);
  free(inf->label_selector);
  free(inf->field_selector);
  free(inf->rv);
  free(inf->cont);
  free(inf);
  if (cb) cb(data);
}

void informer_stop(informer_t *inf, void (*cb)(void *), void *data) {
  if (inf->stopping) return;
  inf->stopping = true;
  if (!inf->synced) informer__unsynced--;
  inf->stop_cb = cb;
  inf->stop_data = data;
  if (inf->list_req) kube_request_cancel(inf->list_req);
  if (inf->watch) kube_watch_stop(inf->watch);
  uv_close((uv_handle_t *)&inf->timer, informer__closed);
}
