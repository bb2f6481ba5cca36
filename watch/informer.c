#include "watch/informer.h"
#include "watch/internal.h"
#include "base/log.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

struct informer_s {
  kube_client_t *c;
  uv_loop_t *loop;
  char *path, *label_selector, *field_selector;
  unsigned page_size, watch_timeout_s;
  uint64_t backoff_base_ms, backoff_max_ms, backoff_ms;
  informer_handlers_t h;
  watch_map_t cache;   /* key -> cJSON* */
  watch_map_t fresh;   /* the list being assembled, key -> cJSON* */
  buf_t fresh_order;   /* its keys in list order, NUL-separated, so handlers see list order */
  char *rv;            /* last resourceVersion seen */
  char *cont;          /* continue token of the list in progress */
  kube_req_t *list_req;
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
  void (*transform)(cJSON *obj, void *data);
  void *transform_data;
  void (*stop_cb)(void *);
  void *stop_data;
};

static void informer__list(informer_t *inf);
static void informer__watch(informer_t *inf);

static const char *const informer__always[] = {
    "apiVersion", "kind", "metadata.name", "metadata.namespace", "metadata.uid", "metadata.resourceVersion",
    "metadata.generation", "metadata.deletionTimestamp", "metadata.finalizers", NULL};

/* Moves src's children into dst where dst lacks them (for overlapping keep paths). */
static void informer__merge(cJSON *dst, cJSON *src) {
  cJSON *ch;
  while ((ch = src->child)) {
    cJSON_DetachItemViaPointer(src, ch);
    cJSON *have = cJSON_GetObjectItemCaseSensitive(dst, ch->string);
    if (!have) cJSON_AddItemToObject(dst, ch->string, ch);
    else {
      if (cJSON_IsObject(have) && cJSON_IsObject(ch)) informer__merge(have, ch);
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
        if (cJSON_IsObject(d) && cJSON_IsObject(s)) informer__merge(d, s);
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

/* Projects and transforms an object for the cache (consumes it); NULL when out of memory. */
static cJSON *informer__trim(informer_t *inf, cJSON *obj) {
  if (inf->keep) obj = informer_project(obj, (const char *const *)inf->keep);
  if (obj && inf->transform) inf->transform(obj, inf->transform_data);
  return obj;
}

static const char *informer__str(const cJSON *o, const char *a, const char *b) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
  if (b) x = cJSON_GetObjectItemCaseSensitive(x, b);
  return cJSON_IsString(x) ? x->valuestring : NULL;
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

static void informer__free_map(watch_map_t *m) {
  /* Only ever called on maps whose values are all objects. */
  size_t it = 0;
  const char *k;
  void *v;
  while (watch_map_next(m, &it, &k, &v)) cJSON_Delete(v);
  watch_map_free(m);
}

/* Applies a complete list to the cache: adds, updates where resourceVersion changed, and deletes
 * what vanished. */
static void informer__apply_list(informer_t *inf) {
  static char consumed; /* marks fresh entries already moved to the cache */
  const char *k;
  void *v;
  for (size_t off = 0; off < inf->fresh_order.len; off += strlen(inf->fresh_order.data + off) + 1) {
    k = inf->fresh_order.data + off;
    cJSON *obj = watch_map_get(&inf->fresh, k);
    if (!obj || obj == (cJSON *)&consumed) continue;
    watch_map_put(&inf->fresh, k, &consumed, NULL); /* replacing a value never allocates */
    cJSON *old = watch_map_get(&inf->cache, k);
    const char *orv = old ? informer__str(old, "metadata", "resourceVersion") : NULL;
    const char *nrv = informer__str(obj, "metadata", "resourceVersion");
    if (old && orv && nrv && !strcmp(orv, nrv)) { cJSON_Delete(obj); continue; }
    if (watch_map_put(&inf->cache, k, obj, NULL)) {
      LOG_E("informer out of memory; object dropped", "path", inf->path, "key", k);
      cJSON_Delete(obj);
      continue;
    }
    if (!inf->stopping) {
      if (old && inf->h.on_update) inf->h.on_update(inf, k, old, obj, inf->h.data);
      else if (!old && inf->h.on_add) inf->h.on_add(inf, k, obj, inf->h.data);
    }
    cJSON_Delete(old);
  }
  size_t it = 0;
  while (watch_map_next(&inf->cache, &it, &k, &v)) {
    if (watch_map_get(&inf->fresh, k)) continue;
    if (!inf->stopping && inf->h.on_delete) inf->h.on_delete(inf, k, v, inf->h.data);
    watch_map_del(&inf->cache, k); /* deleting leaves a tombstone: iteration stays valid */
    cJSON_Delete(v);
  }
  /* Every fresh value now belongs to the cache or was freed. */
  watch_map_free(&inf->fresh);
  buf_reset(&inf->fresh_order);
}

/* Forgets a partly assembled list. */
static void informer__drop_fresh(informer_t *inf) {
  informer__free_map(&inf->fresh);
  buf_reset(&inf->fresh_order);
}

static void informer__list_cb(const kube_response_t *res, void *data) {
  informer_t *inf = data;
  inf->list_req = NULL;
  if (inf->stopping || res->err == UV_ECANCELED) return;
  if (!kube_response_ok(res)) {
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
    informer__retry(inf, 1, res->errmsg);
    return;
  }
  cJSON *root = cJSON_ParseWithLength(res->body, res->body_len);
  cJSON *items = cJSON_GetObjectItemCaseSensitive(root, "items");
  if (!root || !(cJSON_IsArray(items) || cJSON_IsNull(items))) {
    cJSON_Delete(root);
    informer__drop_fresh(inf);
    free(inf->cont);
    inf->cont = NULL;
    informer__retry(inf, 1, "the list response is not a JSON list");
    return;
  }
  buf_t key = BUF_INIT;
  cJSON *item;
  while (cJSON_IsArray(items) && (item = cJSON_DetachItemFromArray(items, 0))) {
    void *old;
    /* Trimmed at once: a page of whole objects is the most the informer ever holds. */
    if (!(item = informer__trim(inf, item))) continue;
    if (informer_key(item, &key) || watch_map_put(&inf->fresh, key.data, item, &old)) {
      cJSON_Delete(item);
      continue;
    }
    if (old) cJSON_Delete(old);
    else if (buf_append(&inf->fresh_order, key.data, key.len + 1)) {
      /* Out of memory: an object missing from the order list would leak, so it is dropped. */
      cJSON_Delete(watch_map_del(&inf->fresh, key.data));
    }
  }
  buf_free(&key);
  const char *cont = informer__str(root, "metadata", "continue");
  const char *rv = informer__str(root, "metadata", "resourceVersion");
  free(inf->cont);
  inf->cont = cont && *cont ? strdup(cont) : NULL;
  int err = cont && *cont && !inf->cont;
  if (!err && !inf->cont) err = informer__set_rv(inf, rv);
  cJSON_Delete(root);
  if (err) {
    informer__drop_fresh(inf);
    informer__retry(inf, 1, "out of memory");
    return;
  }
  if (inf->cont) { informer__list(inf); return; }
  inf->lists++;
  inf->backoff_ms = 0;
  informer__apply_list(inf);
  if (inf->stopping) return;
  if (!inf->synced) {
    inf->synced = true;
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
  snprintf(lim, sizeof lim, "%u", inf->page_size);
  int r = buf_puts(&p, inf->path);
  r |= kube_query_add(&p, "limit", lim);
  r |= informer__query(inf, &p);
  if (inf->cont) r |= kube_query_add(&p, "continue", inf->cont);
  inf->list_req = r ? NULL : kube_get(inf->c, p.data, informer__list_cb, inf);
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
    cJSON *old = watch_map_del(&inf->cache, key.data);
    informer__set_rv(inf, rv);
    /* Handlers see the projection, as for adds and updates. */
    cJSON *last = inf->keep || inf->transform ? informer__trim(inf, kube_watch_take_object(w)) : NULL;
    if (inf->h.on_delete) inf->h.on_delete(inf, key.data, last ? last : object, inf->h.data);
    cJSON_Delete(last);
    cJSON_Delete(old);
  } else if (!strcmp(type, "ADDED") || !strcmp(type, "MODIFIED")) {
    cJSON *obj = informer__trim(inf, kube_watch_take_object(w)), *old = NULL;
    if (!obj || watch_map_put(&inf->cache, key.data, obj, (void **)&old)) {
      cJSON_Delete(obj);
      LOG_E("informer out of memory; relisting", "path", inf->path);
      inf->watch_error = 410; /* the cache is now wrong: rebuild it */
      kube_watch_stop(w);
    } else {
      informer__set_rv(inf, rv);
      if (old && inf->h.on_update) inf->h.on_update(inf, key.data, old, obj, inf->h.data);
      else if (!old && inf->h.on_add) inf->h.on_add(inf, key.data, obj, inf->h.data);
      cJSON_Delete(old);
    }
  }
  buf_free(&key);
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
  inf->watch = r ? NULL : kube_watch_start(inf->c, p.data, informer__event, informer__end, inf);
  buf_free(&p);
  if (inf->watch) inf->watches++;
  else informer__retry(inf, 0, "cannot start the watch (out of memory or client closed)");
}

static void informer__free_keep(informer_t *inf) {
  for (size_t i = 0; inf->keep && inf->keep[i]; i++) free(inf->keep[i]);
  free(inf->keep);
  inf->keep = NULL;
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
  inf->watch_timeout_s = o->watch_timeout_s;
  inf->backoff_base_ms = o->backoff_base_ms ? o->backoff_base_ms : 500;
  inf->backoff_max_ms = o->backoff_max_ms ? o->backoff_max_ms : 30000;
  if (inf->backoff_max_ms < inf->backoff_base_ms) inf->backoff_max_ms = inf->backoff_base_ms;
  inf->h = *h;
  inf->transform = o->transform;
  inf->transform_data = o->transform_data;
  if (o->keep) {
    size_t n = 0;
    while (o->keep[n]) n++;
    if (!(inf->keep = calloc(n + 1, sizeof *inf->keep))) goto nomem;
    for (size_t i = 0; i < n; i++)
      if (!(inf->keep[i] = strdup(o->keep[i]))) goto nomem;
  }
  inf->rng = uv_hrtime() | 1;
  inf->cache = (watch_map_t)WATCH_MAP_INIT;
  inf->fresh = (watch_map_t)WATCH_MAP_INIT;
  uv_timer_init(inf->loop, &inf->timer);
  inf->timer.data = inf;
  /* The first list starts from the loop, so no handler runs inside informer_start. */
  inf->timer_relist = 1;
  uv_timer_start(&inf->timer, informer__timer_cb, 0, 0);
  *out = inf;
  return 0;
nomem:
  informer__free_keep(inf);
  free(inf->path); free(inf->label_selector); free(inf->field_selector); free(inf);
  return UV_ENOMEM;
}

bool informer_has_synced(const informer_t *inf) { return inf->synced; }

const cJSON *informer_get(const informer_t *inf, const char *key) { return watch_map_get(&inf->cache, key); }

size_t informer_count(const informer_t *inf) { return inf->cache.len; }

bool informer_next(const informer_t *inf, size_t *it, const char **key, const cJSON **obj) {
  void *v;
  if (!watch_map_next(&inf->cache, it, key, &v)) return false;
  *obj = v;
  return true;
}

const char *informer_resource_version(const informer_t *inf) { return inf->rv ? inf->rv : ""; }

void informer_stats(const informer_t *inf, unsigned *lists, unsigned *watches) {
  if (lists) *lists = inf->lists;
  if (watches) *watches = inf->watches;
}

static void informer__closed(uv_handle_t *h) {
  informer__free_keep(h->data);
  informer_t *inf = h->data;
  void (*cb)(void *) = inf->stop_cb;
  void *data = inf->stop_data;
  informer__free_map(&inf->cache);
  informer__free_map(&inf->fresh);
  buf_free(&inf->fresh_order);
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
  inf->stop_cb = cb;
  inf->stop_data = data;
  if (inf->list_req) kube_request_cancel(inf->list_req);
  if (inf->watch) kube_watch_stop(inf->watch);
  uv_close((uv_handle_t *)&inf->timer, informer__closed);
}
