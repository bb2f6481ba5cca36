/* Shared watches for waits on single objects (see waits.h). */
#include "watch/waits.h"
#include "watch/internal.h"
#include "base/log.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

enum { KW_IDLE = 0, KW_LISTING, KW_RUNNING };

typedef struct kw_res_s {
  struct kw_res_s *next;
  kwaits_t *h;
  char *group, *version, *resource;
  int state;
  kube_req_t *list;
  kube_watch_t *watch;
  char *rv;            /* where the watch (re)starts: the list's, then the last event's or bookmark's */
  int werr;            /* the code of an ERROR event of the stream */
  int stopping;        /* the watch is being stopped by the hub (idle, free) */
  kwait_t *all;        /* every wait of the resource (doubly linked) */
  watch_map_t by_key;  /* "ns/name" -> the first wait on that object (chained by knext) */
  uint64_t gen;        /* marks the waits told in one pass */
  uv_timer_t idle;
  uint64_t refused_until; /* loop ms */
  uint32_t rng;
} kw_res_t;

struct kwait_s {
  kwait_t *prev, *next; /* in r->all */
  kwait_t *knext;       /* the next wait on the same object */
  kw_res_t *r;
  char *key;
  cJSON *latest;        /* the newest state seen and not taken */
  uint64_t high;        /* the newest resourceVersion seen or taken: nothing older is kept */
  int broken;
  uint64_t told;
  kwait_cb cb;
  void *data;
};

struct kwaits_s {
  kube_client_t *c;
  uv_loop_t *loop;
  char *selector;
  uint64_t idle_ms, refused_ms;
  kw_res_t *res;
  size_t closing; /* resource timers still closing after kwaits_free */
  int freeing;
  kwaits_stats_t stats;
};

static int kw__rv(const char *s, uint64_t *out) {
  if (!s || !*s || *s < '0' || *s > '9') return -1;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end) return -1;
  *out = v;
  return 0;
}

static const char *kw__meta(const cJSON *obj, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void kw__key(buf_t *b, const char *ns, const char *name) {
  buf_reset(b);
  buf_printf(b, "%s/%s", ns ? ns : "", name);
}

kwaits_t *kwaits_new(kube_client_t *c, const kwaits_opts_t *o) {
  kwaits_t *h = calloc(1, sizeof *h);
  if (!h || !o->label_selector || !(h->selector = strdup(o->label_selector))) {
    free(h);
    return NULL;
  }
  h->c = c;
  h->loop = kube_client_loop(c);
  h->idle_ms = o->idle_ms ? o->idle_ms : 30000;
  h->refused_ms = o->refused_ms ? o->refused_ms : 60000;
  return h;
}

kwaits_stats_t kwaits_stats(const kwaits_t *h) {
  kwaits_stats_t s = h->stats;
  for (const kw_res_t *r = h->res; r; r = r->next) s.watching += r->watch != NULL;
  return s;
}

/* The first wait not yet told in pass gen: of the object key, or (key NULL) of the whole resource. */
static kwait_t *kw__untold(kw_res_t *r, const char *key, uint64_t gen) {
  kwait_t *w = key ? watch_map_get(&r->by_key, key) : r->all;
  while (w && w->told == gen) w = key ? w->knext : w->next;
  return w;
}

/* Tells the waits on key (NULL: every wait of r), each once whatever the callbacks end, that the
 * hub lost track: each watches on its own. */
static void kw__break(kw_res_t *r, const char *key) {
  uint64_t gen = ++r->gen;
  for (kwait_t *w; (w = kw__untold(r, key, gen));) {
    w->told = gen;
    if (w->broken) continue;
    w->broken = 1;
    r->h->stats.broken++;
    if (w->cb) w->cb(w, w->data);
  }
}

static void kw__set_rv(kw_res_t *r, const char *rv) {
  char *n = rv && *rv ? strdup(rv) : NULL;
  if (n) {
    free(r->rv);
    r->rv = n;
  }
}

static void kw__watch(kw_res_t *r);

static void kw__idle_fired(uv_timer_t *t) {
  kw_res_t *r = t->data;
  if (r->all || !r->watch) return;
  r->stopping = 1;
  kube_watch_stop(r->watch); /* its end callback runs now */
  r->stopping = 0;
}

static void kw__refused(kw_res_t *r, int code) {
  r->refused_until = uv_now(r->h->loop) + (code == 403 || code == 404 ? r->h->refused_ms : 5000);
}

static void kw__event(kube_watch_t *kw, const char *type, cJSON *obj, void *data) {
  kw_res_t *r = data;
  r->h->stats.events++;
  if (!strcmp(type, "ERROR")) {
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(obj, "code");
    r->werr = cJSON_IsNumber(code) ? code->valueint : 500;
    kube_watch_stop(kw);
    return;
  }
  const char *rvs = kw__meta(obj, "resourceVersion");
  kw__set_rv(r, rvs);
  if (!strcmp(type, "BOOKMARK")) return;
  const char *name = kw__meta(obj, "name"), *ns = kw__meta(obj, "namespace");
  if (!name) return;
  buf_t key = BUF_INIT;
  kw__key(&key, ns, name);
  uint64_t v = 0;
  int bad = kw__rv(rvs, &v);
  int gone = !strcmp(type, "DELETED");
  kwait_t *first = key.data ? watch_map_get(&r->by_key, key.data) : NULL;
  /* The event's object, owned here; each wait gets a copy (a callback may end any wait), or the
   * object itself when it is the only wait on it (the common case: no copy). A wait on the same
   * object begun by that wait's callback then finds no object left for this event and is told it
   * is broken (it watches on its own), where a copy would have told it this state. */
  cJSON *own = first && !gone && !bad ? kube_watch_take_object(kw) : NULL;
  int single = first && !first->knext;
  uint64_t gen = ++r->gen;
  for (kwait_t *w; first && (w = kw__untold(r, key.data, gen));) {
    w->told = gen;
    if (w->broken || (!gone && !bad && v <= w->high)) continue;
    cJSON *copy = gone || bad ? NULL : single ? own : cJSON_Duplicate(own, 1);
    if (copy && copy == own) own = NULL;
    if (!copy) { /* deleted or out of the selector, a version that cannot be compared, or no memory */
      w->broken = 1;
      r->h->stats.broken++;
    } else {
      cJSON_Delete(w->latest);
      w->latest = copy;
      w->high = v;
    }
    if (w->cb) w->cb(w, w->data);
  }
  cJSON_Delete(own);
  buf_free(&key);
}

static void kw__bad_event(kube_watch_t *kw, const char *type, const char *ns, const char *name, const char *rv,
                          const char *why, void *data) {
  kw_res_t *r = data;
  (void)why;
  r->h->stats.events++;
  if (!strcmp(type, "ERROR")) {
    r->werr = 500;
    kube_watch_stop(kw);
    return;
  }
  kw__set_rv(r, rv);
  if (!name || !*name) return;
  buf_t key = BUF_INIT;
  kw__key(&key, ns, name);
  if (key.data) kw__break(r, key.data); /* an unreadable state of a waited object: its waiter reads it on its own */
  buf_free(&key);
}

static void kw__end(kube_watch_t *kw, const kube_response_t *res, void *data) {
  kw_res_t *r = data;
  (void)kw;
  r->watch = NULL;
  int werr = r->werr;
  r->werr = 0;
  if (r->h->freeing) return;
  if (r->stopping) { /* idle: nobody waits */
    r->state = KW_IDLE;
    return;
  }
  if (!werr && res->err == 0 && res->status == 200 && r->rv) { /* the server's timeout: go on from there */
    kw__watch(r);
    return;
  }
  int code = werr ? werr : res->status;
  if (code != 410 && res->err != UV_ECANCELED) {
    char st[16];
    snprintf(st, sizeof st, "%d", code);
    LOG_I("shared readiness watch ended; waits watch on their own", "resource", r->resource, "status", st, "error",
          res->errmsg ? res->errmsg : "");
  }
  if (code != 410) kw__refused(r, code);
  r->state = KW_IDLE;
  kw__break(r, NULL);
}

static void kw__watch(kw_res_t *r) {
  buf_t p = BUF_INIT;
  char to[16];
  r->rng ^= r->rng << 13; r->rng ^= r->rng >> 17; r->rng ^= r->rng << 5;
  snprintf(to, sizeof to, "%u", 300 + r->rng % 300);
  int e = kube_path(&p, r->group, r->version, r->resource, NULL, NULL, NULL);
  e |= kube_query_add(&p, "labelSelector", r->h->selector);
  e |= kube_query_add(&p, "watch", "1");
  e |= kube_query_add(&p, "allowWatchBookmarks", "true");
  e |= kube_query_add(&p, "resourceVersion", r->rv);
  e |= kube_query_add(&p, "timeoutSeconds", to);
  r->watch = e ? NULL : kube_watch_start(r->h->c, p.data, kw__event, kw__end, r);
  buf_free(&p);
  if (!r->watch) {
    r->state = KW_IDLE;
    kw__refused(r, 0);
    kw__break(r, NULL);
    return;
  }
  kube_watch_on_bad_event(r->watch, kw__bad_event);
  /* Waits judge readiness (status, generation, spec): the managers' field sets are not read. */
  kube_watch_drop_managed_fields(r->watch);
  r->h->stats.watches++;
  r->state = KW_RUNNING;
}

static void kw__listed(const kube_response_t *res, void *data) {
  kw_res_t *r = data;
  r->list = NULL;
  if (r->h->freeing) return;
  const char *rv = NULL;
  cJSON *body = kube_response_ok(res) ? cJSON_ParseWithLength(res->body, res->body_len) : NULL;
  uint64_t v;
  if (body && (rv = kw__meta(body, "resourceVersion")) && !kw__rv(rv, &v)) {
    free(r->rv);
    r->rv = strdup(rv);
  } else {
    rv = NULL;
  }
  cJSON_Delete(body);
  if (!rv || !r->rv) {
    if (res->err != UV_ECANCELED) {
      char st[16];
      snprintf(st, sizeof st, "%d", res->status);
      LOG_I("shared readiness watch cannot start; waits watch on their own", "resource", r->resource, "status", st,
            "error", res->errmsg ? res->errmsg : "");
    }
    r->state = KW_IDLE;
    kw__refused(r, res->status);
    return;
  }
  kw__watch(r);
}

/* The resourceVersion to watch from: a list of at most one object (read from etcd, so current). */
static void kw__start(kw_res_t *r) {
  buf_t p = BUF_INIT;
  int e = kube_path(&p, r->group, r->version, r->resource, NULL, NULL, NULL);
  e |= kube_query_add(&p, "labelSelector", r->h->selector);
  e |= kube_query_add(&p, "limit", "1");
  r->list = e ? NULL : kube_get(r->h->c, p.data, kw__listed, r);
  buf_free(&p);
  if (!r->list) {
    kw__refused(r, 0);
    return;
  }
  r->h->stats.lists++;
  r->state = KW_LISTING;
}

static kw_res_t *kw__res(kwaits_t *h, const char *group, const char *version, const char *resource) {
  for (kw_res_t *r = h->res; r; r = r->next)
    if (!strcmp(r->group, group) && !strcmp(r->version, version) && !strcmp(r->resource, resource)) return r;
  kw_res_t *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->group = strdup(group);
  r->version = strdup(version);
  r->resource = strdup(resource);
  if (!r->group || !r->version || !r->resource) {
    free(r->group); free(r->version); free(r->resource);
    free(r);
    return NULL;
  }
  r->h = h;
  r->rng = 2463534242u ^ (uint32_t)(uintptr_t)r;
  uv_timer_init(h->loop, &r->idle);
  r->idle.data = r;
  r->next = h->res;
  h->res = r;
  return r;
}

kwait_t *kwait_begin(kwaits_t *h, const char *group, const char *version, const char *resource, const char *ns,
                     const char *name) {
  kw_res_t *r = kw__res(h, group ? group : "", version, resource);
  if (!r) return NULL;
  if (r->state != KW_RUNNING) {
    if (r->state == KW_IDLE && uv_now(h->loop) >= r->refused_until) kw__start(r);
    h->stats.declined++;
    return NULL;
  }
  kwait_t *w = calloc(1, sizeof *w);
  buf_t key = BUF_INIT;
  kw__key(&key, ns, name);
  void *old = NULL;
  if (!w || !key.data || watch_map_put(&r->by_key, key.data, w, &old)) {
    free(w);
    buf_free(&key);
    return NULL;
  }
  w->key = buf_steal(&key);
  w->knext = old;
  w->r = r;
  w->next = r->all;
  if (r->all) r->all->prev = w;
  r->all = w;
  uv_timer_stop(&r->idle);
  h->stats.begun++;
  return w;
}

cJSON *kwait_take(kwait_t *w, const char *after_rv) {
  uint64_t a;
  if (w->broken) return NULL;
  if (kw__rv(after_rv, &a)) {
    w->broken = 1;
    w->r->h->stats.broken++;
    return NULL;
  }
  cJSON *got = NULL;
  if (w->latest && w->high > a) got = w->latest;
  else cJSON_Delete(w->latest);
  w->latest = NULL;
  if (a > w->high) w->high = a;
  return got;
}

int kwait_broken(const kwait_t *w) { return w->broken; }

void kwait_notify(kwait_t *w, kwait_cb cb, void *data) {
  w->cb = cb;
  w->data = data;
}

void kwait_end(kwait_t *w) {
  if (!w) return;
  kw_res_t *r = w->r;
  if (w->prev) w->prev->next = w->next;
  else r->all = w->next;
  if (w->next) w->next->prev = w->prev;
  kwait_t *head = watch_map_get(&r->by_key, w->key);
  if (head == w) {
    if (w->knext) watch_map_put(&r->by_key, w->key, w->knext, NULL); /* the key exists: cannot fail */
    else watch_map_del(&r->by_key, w->key);
  } else {
    for (kwait_t *k = head; k; k = k->knext)
      if (k->knext == w) {
        k->knext = w->knext;
        break;
      }
  }
  cJSON_Delete(w->latest);
  free(w->key);
  free(w);
  if (!r->all && r->state == KW_RUNNING && !r->h->freeing) uv_timer_start(&r->idle, kw__idle_fired, r->h->idle_ms, 0);
}

static void kw__res_closed(uv_handle_t *t) {
  kw_res_t *r = t->data;
  kwaits_t *h = r->h;
  free(r->group); free(r->version); free(r->resource); free(r->rv);
  watch_map_free(&r->by_key);
  free(r);
  if (--h->closing == 0) {
    free(h->selector);
    free(h);
  }
}

void kwaits_free(kwaits_t *h) {
  if (!h) return;
  h->freeing = 1;
  if (!h->res) {
    free(h->selector);
    free(h);
    return;
  }
  for (kw_res_t *r = h->res; r; r = r->next) h->closing++;
  for (kw_res_t *r = h->res, *n; r; r = n) {
    n = r->next;
    if (r->list) kube_request_cancel(r->list);
    if (r->watch) kube_watch_stop(r->watch);
    while (r->all) kwait_end(r->all);
    uv_close((uv_handle_t *)&r->idle, kw__res_closed);
  }
}
