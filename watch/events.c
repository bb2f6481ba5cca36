#include "watch/events.h"
#include "watch/informer.h"
#include "watch/internal.h"
#include "base/buf.h"
#include "base/log.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define EV__MAX_MESSAGE 1024

typedef struct ev__link_s {
  struct ev__link_s *prev, *next;
} ev__link_t;

static void link__init(ev__link_t *l) { l->prev = l->next = l; }
static void link__remove(ev__link_t *l) {
  l->prev->next = l->next;
  l->next->prev = l->prev;
  link__init(l);
}
static void link__push_front(ev__link_t *head, ev__link_t *l) {
  l->next = head->next;
  l->prev = head;
  head->next->prev = l;
  head->next = l;
}

/* One aggregated Event: the same object, type, reason and message. */
typedef struct ev__agg_s {
  ev__link_t lru;
  char *key;
  char *event;       /* the Event as created, compact JSON (for re-creating it when it expired; as text it
                        takes a sixth of what its cJSON tree would: one entry is kept per object) */
  char *name;        /* the Event's name once created */
  unsigned count;
  uint64_t last_ms;
  int in_flight, dirty;
} ev__agg_t;

/* The per-object token bucket. */
typedef struct ev__bucket_s {
  ev__link_t lru;
  char *key;
  double tokens;
  uint64_t at_ms;
} ev__bucket_t;

typedef struct ev__req_s {
  ev__link_t link;   /* in ev->reqs */
  events_t *ev;
  char *key;
  kube_req_t *req;
  int create;
} ev__req_t;

struct events_s {
  kube_client_t *c;
  uv_loop_t *loop;
  char *component, *host;
  events_limits_t lim;
  watch_map_t aggs, buckets;
  ev__link_t agg_lru, bucket_lru, reqs;
  size_t in_flight;
  uint64_t seq;
  events_stats_t stats;
  int closing;
};

events_t *events_new(kube_client_t *c, const char *component) {
  events_t *ev = calloc(1, sizeof *ev);
  if (!ev) return NULL;
  ev->c = c;
  ev->loop = kube_client_loop(c);
  ev->component = strdup(component && *component ? component : "rudder");
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  ev->host = strdup(host);
  if (!ev->component || !ev->host) {
    free(ev->component); free(ev->host); free(ev);
    return NULL;
  }
  ev->lim = (events_limits_t){.window_ms = 600000, .burst = 25, .refill_ms = 300000, .max_tracked = 4096,
                              .max_in_flight = 256};
  ev->aggs = (watch_map_t)WATCH_MAP_INIT;
  ev->buckets = (watch_map_t)WATCH_MAP_INIT;
  link__init(&ev->agg_lru);
  link__init(&ev->bucket_lru);
  link__init(&ev->reqs);
  ev->seq = uv_hrtime();
  return ev;
}

void events_set_limits(events_t *ev, const events_limits_t *l) {
  if (l->window_ms) ev->lim.window_ms = l->window_ms;
  if (l->burst) ev->lim.burst = l->burst;
  if (l->refill_ms) ev->lim.refill_ms = l->refill_ms;
  if (l->max_tracked) ev->lim.max_tracked = l->max_tracked;
  if (l->max_in_flight) ev->lim.max_in_flight = l->max_in_flight;
}

events_stats_t events_get_stats(const events_t *ev) {
  events_stats_t s = ev->stats;
  s.aggregates = ev->aggs.len;
  s.buckets = ev->buckets.len;
  size_t it = 0;
  const char *k;
  void *v;
  while (watch_map_next(&ev->aggs, &it, &k, &v)) {
    const ev__agg_t *a = v;
    s.bytes += INFORMER_BLOCK_BYTES(sizeof *a) + 2 * INFORMER_BLOCK_BYTES(strlen(a->key) + 1); /* and the map's copy */
    if (a->event) s.bytes += INFORMER_BLOCK_BYTES(strlen(a->event) + 1);
    if (a->name) s.bytes += INFORMER_BLOCK_BYTES(strlen(a->name) + 1);
  }
  it = 0;
  while (watch_map_next(&ev->buckets, &it, &k, &v))
    s.bytes += INFORMER_BLOCK_BYTES(sizeof(ev__bucket_t)) + 2 * INFORMER_BLOCK_BYTES(strlen(k) + 1);
  if (ev->aggs.cap) s.bytes += INFORMER_BLOCK_BYTES(ev->aggs.cap * sizeof *ev->aggs.slots);
  if (ev->buckets.cap) s.bytes += INFORMER_BLOCK_BYTES(ev->buckets.cap * sizeof *ev->buckets.slots);
  return s;
}

static void ev__agg_free(ev__agg_t *a) {
  free(a->event);
  free(a->name);
  free(a->key);
  free(a);
}

/* Evicts least recently used entries beyond the bound (never one with a request in flight). */
static void ev__trim(events_t *ev) {
  ev__link_t *l = ev->agg_lru.prev;
  while (ev->aggs.len > ev->lim.max_tracked && l != &ev->agg_lru) {
    ev__agg_t *a = WATCH__CONTAINER_OF(l, ev__agg_t, lru);
    l = l->prev;
    if (a->in_flight) continue;
    link__remove(&a->lru);
    watch_map_del(&ev->aggs, a->key);
    ev__agg_free(a);
  }
  while (ev->buckets.len > ev->lim.max_tracked && ev->bucket_lru.prev != &ev->bucket_lru) {
    ev__bucket_t *b = WATCH__CONTAINER_OF(ev->bucket_lru.prev, ev__bucket_t, lru);
    link__remove(&b->lru);
    watch_map_del(&ev->buckets, b->key);
    free(b->key);
    free(b);
  }
}

/* Takes a token from the object's bucket; 0 when it is empty. */
static int ev__allow(events_t *ev, const char *okey, uint64_t now) {
  ev__bucket_t *b = watch_map_get(&ev->buckets, okey);
  if (!b) {
    b = calloc(1, sizeof *b);
    if (!b || !(b->key = strdup(okey)) || watch_map_put(&ev->buckets, okey, b, NULL)) {
      if (b) free(b->key);
      free(b);
      return 1; /* out of memory: not a reason to drop the event */
    }
    b->tokens = ev->lim.burst;
    b->at_ms = now;
    link__push_front(&ev->bucket_lru, &b->lru);
  } else {
    link__remove(&b->lru);
    link__push_front(&ev->bucket_lru, &b->lru);
  }
  b->tokens += (double)(now - b->at_ms) / (double)ev->lim.refill_ms;
  if (b->tokens > ev->lim.burst) b->tokens = ev->lim.burst;
  b->at_ms = now;
  if (b->tokens < 1) return 0;
  b->tokens -= 1;
  return 1;
}

static void ev__timestamp(char *out, size_t n) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void ev__send(events_t *ev, ev__agg_t *a, int create);

static void ev__done(const kube_response_t *res, void *data) {
  ev__req_t *q = data;
  events_t *ev = q->ev;
  link__remove(&q->link);
  ev->in_flight--;
  ev__agg_t *a = watch_map_get(&ev->aggs, q->key);
  int create = q->create;
  free(q->key);
  free(q);
  if (!a) return;
  a->in_flight = 0;
  if (res->err == UV_ECANCELED || ev->closing) return;
  if (create && kube_response_ok(res)) {
    ev->stats.created++;
    cJSON *o = cJSON_ParseWithLength(res->body, res->body_len);
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "metadata"), "name"));
    free(a->name);
    a->name = name ? strdup(name) : NULL;
    cJSON_Delete(o);
  } else if (!create && kube_response_ok(res)) {
    ev->stats.patched++;
  } else if (!create && kube_response_is_not_found(res)) {
    /* The Event expired (the API server keeps them for an hour): make a new one. */
    free(a->name);
    a->name = NULL;
    ev__send(ev, a, 1);
    return;
  } else {
    ev->stats.failed++;
    LOG_W("writing an event failed", "event", a->name ? a->name : "(new)", "error", res->errmsg ? res->errmsg : "");
  }
  if (a->dirty && a->name) {
    a->dirty = 0;
    ev__send(ev, a, 0);
  }
}

static void ev__send(events_t *ev, ev__agg_t *a, int create) {
  char now[40];
  ev__timestamp(now, sizeof now);
  char *json = NULL;
  buf_t path = BUF_INIT;
  cJSON *event = a->event ? cJSON_Parse(a->event) : NULL;
  const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(event, "metadata"), "namespace"));
  if (!event) {
    /* out of memory: nothing is sent */
  } else if (create) {
    /* client-go names events <object>.<hex nanoseconds>; a sequence number keeps them unique. */
    const char *oname = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(event, "involvedObject"), "name"));
    char name[320];
    snprintf(name, sizeof name, "%.250s.%llx", oname ? oname : "object", (unsigned long long)++ev->seq);
    cJSON *md = cJSON_GetObjectItemCaseSensitive(event, "metadata");
    cJSON_ReplaceItemInObjectCaseSensitive(md, "name", cJSON_CreateString(name));
    cJSON_ReplaceItemInObjectCaseSensitive(event, "count", cJSON_CreateNumber(a->count));
    cJSON_ReplaceItemInObjectCaseSensitive(event, "lastTimestamp", cJSON_CreateString(now));
    json = cJSON_PrintUnformatted(event);
    kube_path(&path, "", "v1", "events", ns, NULL, NULL);
  } else {
    buf_t b = BUF_INIT;
    if (!buf_printf(&b, "{\"count\":%u,\"lastTimestamp\":\"%s\"}", a->count, now)) json = buf_steal(&b);
    buf_free(&b);
    kube_path(&path, "", "v1", "events", ns, a->name, NULL);
  }
  cJSON_Delete(event);
  ev__req_t *q = calloc(1, sizeof *q);
  if (!json || !path.data || !q || !(q->key = strdup(a->key))) {
    free(json);
    buf_free(&path);
    if (q) free(q->key);
    free(q);
    ev->stats.failed++;
    return;
  }
  q->ev = ev;
  q->create = create;
  link__init(&q->link);
  link__push_front(&ev->reqs, &q->link);
  ev->in_flight++;
  a->in_flight = 1;
  q->req = create ? kube_create(ev->c, path.data, json, ev__done, q) : kube_merge_patch(ev->c, path.data, json, ev__done, q);
  free(json);
  buf_free(&path);
  if (!q->req) {
    link__remove(&q->link);
    ev->in_flight--;
    a->in_flight = 0;
    free(q->key);
    free(q);
    ev->stats.failed++;
  }
}

static cJSON *ev__event(events_t *ev, const events_ref_t *r, const char *type, const char *reason,
                        const char *message) {
  char now[40];
  ev__timestamp(now, sizeof now);
  cJSON *e = cJSON_CreateObject();
  cJSON *md = cJSON_AddObjectToObject(e, "metadata");
  cJSON *io = cJSON_AddObjectToObject(e, "involvedObject");
  cJSON *src = cJSON_AddObjectToObject(e, "source");
  if (!e || !md || !io || !src) { cJSON_Delete(e); return NULL; }
  cJSON_AddStringToObject(e, "apiVersion", "v1");
  cJSON_AddStringToObject(e, "kind", "Event");
  cJSON_AddStringToObject(md, "name", "");
  cJSON_AddStringToObject(md, "namespace", r->namespace && *r->namespace ? r->namespace : "default");
  if (r->api_version) cJSON_AddStringToObject(io, "apiVersion", r->api_version);
  cJSON_AddStringToObject(io, "kind", r->kind);
  if (r->namespace && *r->namespace) cJSON_AddStringToObject(io, "namespace", r->namespace);
  cJSON_AddStringToObject(io, "name", r->name);
  if (r->uid) cJSON_AddStringToObject(io, "uid", r->uid);
  if (r->resource_version) cJSON_AddStringToObject(io, "resourceVersion", r->resource_version);
  if (r->field_path) cJSON_AddStringToObject(io, "fieldPath", r->field_path);
  cJSON_AddStringToObject(e, "reason", reason);
  char msg[EV__MAX_MESSAGE + 1];
  snprintf(msg, sizeof msg, "%s", message ? message : "");
  cJSON_AddStringToObject(e, "message", msg);
  cJSON_AddStringToObject(e, "type", type);
  cJSON_AddStringToObject(src, "component", ev->component);
  if (*ev->host) cJSON_AddStringToObject(src, "host", ev->host);
  cJSON_AddStringToObject(e, "firstTimestamp", now);
  cJSON_AddStringToObject(e, "lastTimestamp", now);
  cJSON_AddNumberToObject(e, "count", 1);
  cJSON_AddStringToObject(e, "reportingComponent", ev->component);
  cJSON_AddStringToObject(e, "reportingInstance", *ev->host ? ev->host : ev->component);
  return e;
}

int events_emit_ref(events_t *ev, const events_ref_t *r, const char *type, const char *reason, const char *message) {
  if (ev->closing) return UV_ECANCELED;
  if (!r->kind || !*r->kind || !r->name || !*r->name || !reason || !*reason || !type ||
      (strcmp(type, "Normal") && strcmp(type, "Warning")))
    return UV_EINVAL;
  uint64_t now = uv_now(ev->loop);
  buf_t ok = BUF_INIT, ak = BUF_INIT;
  int rc = buf_printf(&ok, "%s\x1f%s\x1f%s\x1f%s", r->namespace ? r->namespace : "", r->kind, r->name, r->uid ? r->uid : "");
  rc |= buf_printf(&ak, "%s\x1f%s\x1f%s\x1f%.*s", ok.data ? ok.data : "", type, reason, EV__MAX_MESSAGE,
                   message ? message : "");
  if (rc) { buf_free(&ok); buf_free(&ak); return UV_ENOMEM; }
  if (!ev__allow(ev, ok.data, now)) {
    ev->stats.dropped++;
    buf_free(&ok);
    buf_free(&ak);
    ev__trim(ev);
    return UV_EBUSY;
  }
  buf_free(&ok);
  ev__agg_t *a = watch_map_get(&ev->aggs, ak.data);
  if (a) {
    link__remove(&a->lru);
    link__push_front(&ev->agg_lru, &a->lru);
  }
  if (a && now - a->last_ms <= ev->lim.window_ms) {
    a->count++;
    a->last_ms = now;
    buf_free(&ak);
    if (a->in_flight) { a->dirty = 1; return 0; }
    if (ev->in_flight >= ev->lim.max_in_flight) { ev->stats.dropped++; a->dirty = 1; return UV_EBUSY; }
    ev__send(ev, a, a->name == NULL);
    return 0;
  }
  if (ev->in_flight >= ev->lim.max_in_flight) {
    ev->stats.dropped++;
    buf_free(&ak);
    return UV_EBUSY;
  }
  cJSON *tree = ev__event(ev, r, type, reason, message);
  char *e = tree ? cJSON_PrintUnformatted(tree) : NULL;
  cJSON_Delete(tree);
  if (!e) { buf_free(&ak); return UV_ENOMEM; }
  if (a && a->in_flight) {
    /* The window passed while a write was in flight: aggregate anyway rather than race it. */
    free(e);
    a->count++;
    a->last_ms = now;
    a->dirty = 1;
    buf_free(&ak);
    return 0;
  }
  if (!a) {
    a = calloc(1, sizeof *a);
    if (!a || !(a->key = strdup(ak.data)) || watch_map_put(&ev->aggs, ak.data, a, NULL)) {
      if (a) free(a->key);
      free(a);
      free(e);
      buf_free(&ak);
      return UV_ENOMEM;
    }
    link__push_front(&ev->agg_lru, &a->lru);
  }
  buf_free(&ak);
  free(a->event);
  a->event = e;
  free(a->name);
  a->name = NULL;
  a->count = 1;
  a->dirty = 0;
  a->last_ms = now;
  ev__send(ev, a, 1);
  ev__trim(ev);
  return 0;
}

int events_emit(events_t *ev, const cJSON *obj, const char *type, const char *reason, const char *message) {
  const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
  events_ref_t r = {
      .api_version = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, "apiVersion")),
      .kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, "kind")),
      .namespace = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "namespace")),
      .name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "name")),
      .uid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "uid")),
      .resource_version = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "resourceVersion")),
  };
  return events_emit_ref(ev, &r, type, reason, message);
}

void events_close(events_t *ev, void (*cb)(void *), void *data) {
  if (ev->closing) return;
  ev->closing = 1;
  while (ev->reqs.next != &ev->reqs) {
    ev__req_t *q = WATCH__CONTAINER_OF(ev->reqs.next, ev__req_t, link);
    kube_request_cancel(q->req); /* runs ev__done, which unlinks and frees q */
  }
  size_t it = 0;
  const char *k;
  void *v;
  while (watch_map_next(&ev->aggs, &it, &k, &v)) ev__agg_free(v);
  watch_map_free(&ev->aggs);
  it = 0;
  while (watch_map_next(&ev->buckets, &it, &k, &v)) {
    free(((ev__bucket_t *)v)->key);
    free(v);
  }
  watch_map_free(&ev->buckets);
  free(ev->component);
  free(ev->host);
  free(ev);
  if (cb) cb(data);
}
