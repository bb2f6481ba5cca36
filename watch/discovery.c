#include "watch/discovery.h"
#include "watch/internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

typedef struct disc__res_s {
  char *kind, *name;
  bool namespaced;
} disc__res_t;

typedef struct disc__gv_s disc__gv_t;
typedef struct disc__waiter_s disc__waiter_t;

struct disc__waiter_s {
  disc__waiter_t *next;
  disc__gv_t *gv;       /* NULL for a version waiter */
  char *kind;
  bool refreshed;       /* a fetch that started after this look-up has completed, or is the one it waits on */
  discovery_cb cb;
  discovery_version_cb vcb;
  void *data;
  int err;              /* for deliveries from the flush timer */
  char *errmsg;
};

struct disc__gv_s {
  discovery_t *d;
  char *group, *version;
  disc__res_t *res;
  size_t n;
  bool ok;              /* res holds a successful fetch */
  kube_req_t *req;      /* fetch in flight */
  bool fresh_fetch;     /* the fetch in flight was started for a waiter with refreshed set */
  disc__waiter_t *waiters;
};

struct discovery_s {
  kube_client_t *c;
  watch_map_t gvs;              /* "group/version" -> disc__gv_t* */
  disc__waiter_t *ready;        /* answered from cache, delivered by the flush timer */
  disc__waiter_t *ver_waiters;
  kube_req_t *ver_req;
  char *ver_major, *ver_minor, *ver_git;
  bool ver_ok;
  uv_timer_t flush;
  bool closing;
  void (*close_cb)(void *);
  void *close_data;
};

static void disc__fetch(discovery_t *d, disc__gv_t *gv);

static void disc__waiter_free(disc__waiter_t *w) {
  free(w->kind);
  free(w->errmsg);
  free(w);
}

static void disc__gv_clear(disc__gv_t *gv) {
  for (size_t i = 0; i < gv->n; i++) {
    free(gv->res[i].kind);
    free(gv->res[i].name);
  }
  free(gv->res);
  gv->res = NULL;
  gv->n = 0;
  gv->ok = false;
}

static const disc__res_t *disc__find(const disc__gv_t *gv, const char *kind) {
  for (size_t i = 0; i < gv->n; i++)
    if (!strcmp(gv->res[i].kind, kind)) return &gv->res[i];
  return NULL;
}

static void disc__deliver(disc__waiter_t *w, int err, const char *errmsg) {
  if (w->vcb) { w->vcb(err, errmsg, NULL, w->data); return; }
  const disc__res_t *r = !err && w->gv ? disc__find(w->gv, w->kind) : NULL;
  if (!err && !r) {
    w->cb(UV_ENOENT, "kind vanished from discovery", NULL, w->data);
    return;
  }
  if (err) { w->cb(err, errmsg, NULL, w->data); return; }
  discovery_mapping_t m = {w->gv->group, w->gv->version, w->kind, r->name, r->namespaced};
  w->cb(0, NULL, &m, w->data);
}

static void disc__flush_cb(uv_timer_t *t) {
  discovery_t *d = t->data;
  /* Deliver in request order; callbacks may add new ready waiters, picked up next round. */
  disc__waiter_t *list = d->ready, *rev = NULL;
  d->ready = NULL;
  while (list) { disc__waiter_t *n = list->next; list->next = rev; rev = list; list = n; }
  while (rev) {
    disc__waiter_t *w = rev;
    rev = w->next;
    if (w->vcb && !w->err) {
      discovery_version_t v = {d->ver_major, d->ver_minor, d->ver_git};
      w->vcb(0, NULL, &v, w->data);
    } else {
      disc__deliver(w, w->err, w->errmsg);
    }
    disc__waiter_free(w);
  }
}

static void disc__ready(discovery_t *d, disc__waiter_t *w) {
  w->next = d->ready;
  d->ready = w;
  if (!uv_is_active((uv_handle_t *)&d->flush)) uv_timer_start(&d->flush, disc__flush_cb, 0, 0);
}

static int disc__parse(disc__gv_t *gv, const kube_response_t *res) {
  cJSON *root = cJSON_ParseWithLength(res->body, res->body_len);
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "resources");
  if (!cJSON_IsArray(list)) { cJSON_Delete(root); return UV_EPROTO; }
  disc__gv_clear(gv);
  gv->res = calloc((size_t)cJSON_GetArraySize(list) + 1, sizeof *gv->res);
  if (!gv->res) { cJSON_Delete(root); return UV_ENOMEM; }
  const cJSON *it;
  cJSON_ArrayForEach(it, list) {
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "name");
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(it, "kind");
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(it, "namespaced");
    /* Subresources ("pods/status") share their parent's kind and are not mappings. */
    if (!cJSON_IsString(name) || !cJSON_IsString(kind) || strchr(name->valuestring, '/')) continue;
    disc__res_t *r = &gv->res[gv->n];
    r->name = strdup(name->valuestring);
    r->kind = strdup(kind->valuestring);
    r->namespaced = cJSON_IsTrue(ns);
    if (!r->name || !r->kind) { free(r->name); free(r->kind); cJSON_Delete(root); disc__gv_clear(gv); return UV_ENOMEM; }
    gv->n++;
  }
  gv->ok = true;
  cJSON_Delete(root);
  return 0;
}

static void disc__fetch_cb(const kube_response_t *res, void *data) {
  disc__gv_t *gv = data;
  discovery_t *d = gv->d;
  gv->req = NULL;
  disc__waiter_t *ws = gv->waiters;
  gv->waiters = NULL;
  bool fresh = gv->fresh_fetch;
  gv->fresh_fetch = false;
  int err = 0;
  buf_t m = BUF_INIT;
  if (res->err) {
    err = res->err;
    buf_printf(&m, "discovery of %s%s%s failed: %s", gv->group, *gv->group ? "/" : "", gv->version, res->errmsg);
  } else if (res->status == 404) {
    err = UV_ENOENT;
    buf_printf(&m, "apiVersion %s%s%s is not served by the API server (HTTP 404)", gv->group, *gv->group ? "/" : "",
               gv->version);
  } else if (!kube_response_ok(res)) {
    err = UV_EPROTO;
    buf_printf(&m, "discovery of %s%s%s failed: %s", gv->group, *gv->group ? "/" : "", gv->version,
               res->errmsg ? res->errmsg : "unexpected response");
  } else if ((err = disc__parse(gv, res))) {
    buf_printf(&m, "discovery of %s%s%s: %s", gv->group, *gv->group ? "/" : "", gv->version,
               err == UV_ENOMEM ? "out of memory" : "response has no resources list");
  }
  /* Waiters that missed on a fetch older than their look-up get one fresh fetch. */
  disc__waiter_t *again = NULL;
  while (ws) {
    disc__waiter_t *w = ws;
    ws = w->next;
    if (err) {
      disc__deliver(w, err, m.data);
      disc__waiter_free(w);
    } else if (disc__find(gv, w->kind)) {
      disc__deliver(w, 0, NULL);
      disc__waiter_free(w);
    } else if (!w->refreshed && !fresh && res->err != UV_ECANCELED) {
      w->refreshed = true;
      w->next = again;
      again = w;
    } else {
      buf_t nm = BUF_INIT;
      buf_printf(&nm, "kind %s is not served in apiVersion %s%s%s (is its CRD installed?)", w->kind, gv->group,
                 *gv->group ? "/" : "", gv->version);
      w->cb(UV_ENOENT, nm.data, NULL, w->data);
      buf_free(&nm);
      disc__waiter_free(w);
    }
  }
  buf_free(&m);
  if (again) {
    gv->waiters = again;
    gv->fresh_fetch = true;
    disc__fetch(d, gv);
  }
}

static void disc__fetch(discovery_t *d, disc__gv_t *gv) {
  if (gv->req) return;
  if (d->closing) {
    disc__waiter_t *ws = gv->waiters;
    gv->waiters = NULL;
    while (ws) {
      disc__waiter_t *w = ws;
      ws = w->next;
      disc__deliver(w, UV_ECANCELED, "discovery was closed");
      disc__waiter_free(w);
    }
    return;
  }
  buf_t p = BUF_INIT;
  int r = *gv->group ? buf_printf(&p, "/apis/%s/%s", gv->group, gv->version) : buf_printf(&p, "/api/%s", gv->version);
  gv->req = r ? NULL : kube_get(d->c, p.data, disc__fetch_cb, gv);
  buf_free(&p);
  if (!gv->req) {
    disc__waiter_t *ws = gv->waiters;
    gv->waiters = NULL;
    while (ws) {
      disc__waiter_t *w = ws;
      ws = w->next;
      w->err = UV_ENOMEM;
      w->errmsg = strdup("cannot start the discovery request (out of memory or client closed)");
      disc__ready(d, w);
    }
  }
}

static int disc__split(const char *api_version, char **group, char **version) {
  const char *slash = strchr(api_version, '/');
  *group = slash ? strndup(api_version, (size_t)(slash - api_version)) : strdup("");
  *version = strdup(slash ? slash + 1 : api_version);
  if (!*group || !*version) { free(*group); free(*version); return UV_ENOMEM; }
  if (!**version || strchr(*version, '/') || (slash && !**group)) { free(*group); free(*version); return UV_EINVAL; }
  return 0;
}

static disc__gv_t *disc__gv(discovery_t *d, const char *api_version, bool create, int *err) {
  char *g, *v;
  *err = 0;
  disc__gv_t *gv = watch_map_get(&d->gvs, api_version);
  if (gv || !create) return gv;
  if ((*err = disc__split(api_version, &g, &v))) return NULL;
  gv = calloc(1, sizeof *gv);
  if (!gv || watch_map_put(&d->gvs, api_version, gv, NULL)) {
    free(gv); free(g); free(v);
    *err = UV_ENOMEM;
    return NULL;
  }
  gv->d = d;
  gv->group = g;
  gv->version = v;
  return gv;
}

int discovery_new(kube_client_t *c, discovery_t **out) {
  discovery_t *d = calloc(1, sizeof *d);
  if (!d) return UV_ENOMEM;
  d->c = c;
  d->gvs = (watch_map_t)WATCH_MAP_INIT;
  uv_timer_init(kube_client_loop(c), &d->flush);
  d->flush.data = d;
  *out = d;
  return 0;
}

int discovery_lookup(discovery_t *d, const char *api_version, const char *kind, discovery_mapping_t *out) {
  int err;
  disc__gv_t *gv = disc__gv(d, api_version, false, &err);
  const disc__res_t *r = gv && gv->ok ? disc__find(gv, kind) : NULL;
  if (!r) return UV_ENOENT;
  *out = (discovery_mapping_t){gv->group, gv->version, r->name, r->name, r->namespaced};
  out->kind = r->kind;
  return 0;
}

int discovery_resolve(discovery_t *d, const char *api_version, const char *kind, discovery_cb cb, void *data) {
  if (d->closing) return UV_ECANCELED;
  disc__waiter_t *w = calloc(1, sizeof *w);
  if (!w || !(w->kind = strdup(kind))) { free(w); return UV_ENOMEM; }
  w->cb = cb;
  w->data = data;
  int err;
  disc__gv_t *gv = disc__gv(d, api_version, true, &err);
  if (!gv) {
    if (err == UV_ENOMEM) { disc__waiter_free(w); return err; }
    buf_t m = BUF_INIT;
    buf_printf(&m, "invalid apiVersion \"%s\"", api_version);
    w->err = UV_EINVAL;
    w->errmsg = buf_steal(&m);
    disc__ready(d, w);
    return 0;
  }
  w->gv = gv;
  if (gv->ok && disc__find(gv, kind)) { disc__ready(d, w); return 0; }
  if (gv->req) {
    w->refreshed = false; /* that fetch may predate a CRD that this look-up expects */
  } else {
    w->refreshed = true;
    gv->fresh_fetch = true;
  }
  w->next = gv->waiters;
  gv->waiters = w;
  disc__fetch(d, gv);
  return 0;
}

void discovery_invalidate(discovery_t *d) {
  size_t it = 0;
  const char *k;
  void *v;
  while (watch_map_next(&d->gvs, &it, &k, &v)) disc__gv_clear(v);
}

static void disc__version_cb(const kube_response_t *res, void *data) {
  discovery_t *d = data;
  d->ver_req = NULL;
  int err = 0;
  const char *msg = NULL;
  if (res->err) { err = res->err; msg = res->errmsg; }
  else if (!kube_response_ok(res)) { err = UV_EPROTO; msg = res->errmsg; }
  else {
    cJSON *j = cJSON_ParseWithLength(res->body, res->body_len);
    const cJSON *ma = cJSON_GetObjectItemCaseSensitive(j, "major"), *mi = cJSON_GetObjectItemCaseSensitive(j, "minor"),
                *gvs = cJSON_GetObjectItemCaseSensitive(j, "gitVersion");
    if (cJSON_IsString(ma) && cJSON_IsString(mi) && cJSON_IsString(gvs)) {
      d->ver_major = strdup(ma->valuestring);
      d->ver_minor = strdup(mi->valuestring);
      d->ver_git = strdup(gvs->valuestring);
      if (d->ver_major && d->ver_minor && d->ver_git) d->ver_ok = true;
      else { err = UV_ENOMEM; msg = "out of memory"; }
    } else {
      err = UV_EPROTO;
      msg = "the /version response lacks major, minor or gitVersion";
    }
    cJSON_Delete(j);
  }
  disc__waiter_t *ws = d->ver_waiters;
  d->ver_waiters = NULL;
  while (ws) {
    disc__waiter_t *w = ws;
    ws = w->next;
    if (err) w->vcb(err, msg, NULL, w->data);
    else {
      discovery_version_t v = {d->ver_major, d->ver_minor, d->ver_git};
      w->vcb(0, NULL, &v, w->data);
    }
    disc__waiter_free(w);
  }
  if (!d->ver_ok) { free(d->ver_major); free(d->ver_minor); free(d->ver_git); d->ver_major = d->ver_minor = d->ver_git = NULL; }
}

int discovery_server_version(discovery_t *d, discovery_version_cb cb, void *data) {
  if (d->closing) return UV_ECANCELED;
  disc__waiter_t *w = calloc(1, sizeof *w);
  if (!w) return UV_ENOMEM;
  w->vcb = cb;
  w->data = data;
  if (d->ver_ok) { disc__ready(d, w); return 0; }
  w->next = d->ver_waiters;
  d->ver_waiters = w;
  if (!d->ver_req && !(d->ver_req = kube_get(d->c, "/version", disc__version_cb, d))) {
    d->ver_waiters = w->next;
    w->err = UV_ENOMEM;
    w->errmsg = strdup("cannot start the /version request (out of memory or client closed)");
    disc__ready(d, w);
  }
  return 0;
}

static void disc__closed(uv_handle_t *h) {
  discovery_t *d = h->data;
  void (*cb)(void *) = d->close_cb;
  void *data = d->close_data;
  size_t it = 0;
  const char *k;
  void *v;
  while (watch_map_next(&d->gvs, &it, &k, &v)) {
    disc__gv_t *gv = v;
    disc__gv_clear(gv);
    free(gv->group);
    free(gv->version);
    free(gv);
  }
  watch_map_free(&d->gvs);
  free(d->ver_major);
  free(d->ver_minor);
  free(d->ver_git);
  free(d);
  if (cb) cb(data);
}

void discovery_close(discovery_t *d, void (*cb)(void *), void *data) {
  if (d->closing) return;
  d->closing = true;
  d->close_cb = cb;
  d->close_data = data;
  /* Cancelling delivers UV_ECANCELED to every waiter through the fetch callbacks. */
  size_t it = 0;
  const char *k;
  void *v;
  while (watch_map_next(&d->gvs, &it, &k, &v)) {
    disc__gv_t *gv = v;
    if (gv->req) kube_request_cancel(gv->req);
  }
  if (d->ver_req) kube_request_cancel(d->ver_req);
  uv_timer_stop(&d->flush);
  disc__waiter_t *ws = d->ready;
  d->ready = NULL;
  while (ws) {
    disc__waiter_t *w = ws;
    ws = w->next;
    disc__deliver(w, UV_ECANCELED, "discovery was closed");
    disc__waiter_free(w);
  }
  uv_close((uv_handle_t *)&d->flush, disc__closed);
}
