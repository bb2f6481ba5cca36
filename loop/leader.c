#include "loop/leader.h"
#include "base/buf.h"
#include "base/log.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

struct leader_s {
  uv_loop_t *loop;
  kube_client_t *c;
  char *ns, *name, *identity;
  char *path;            /* the Lease object's path */
  char *coll;            /* the leases collection's path */
  uint64_t lease_ms, renew_ms, retry_ms, release_ms;
  leader_cb on_started, on_stopped;
  void *data;
  uv_timer_t timer;
  kube_req_t *req;       /* the request in flight */
  cJSON *lease;          /* the last Lease read or written (with its resourceVersion) */
  char *holder;          /* holderIdentity last seen */
  char *observed;        /* the last lease record seen (holder, renewTime, transitions) */
  uint64_t observed_at;  /* uv_now() when that record was first seen */
  uint64_t observed_lease_ms;
  uint64_t last_renew;   /* uv_now() of the last successful acquire or renew */
  bool leading;
  bool stopping;
  bool releasing;
  void (*stop_cb)(void *);
  void *stop_data;
  uint64_t rng;
};

static void leader__tick(uv_timer_t *t);
static void leader__finish_stop(leader_t *l);

static uint64_t leader__rand(leader_t *l) {
  l->rng ^= l->rng << 13;
  l->rng ^= l->rng >> 7;
  l->rng ^= l->rng << 17;
  return l->rng;
}

/* Candidates retry with client-go's jitter (1.0-2.2 x retry); the leader renews on the period. */
static void leader__schedule(leader_t *l) {
  if (l->stopping) return;
  uint64_t d = l->retry_ms;
  if (!l->leading) d += leader__rand(l) % (l->retry_ms * 6 / 5 + 1);
  uv_timer_start(&l->timer, leader__tick, d, 0);
}

/* MicroTime: 2006-01-02T15:04:05.000000Z */
static void leader__now(char *out, size_t n) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  struct tm tm;
  time_t s = tv.tv_sec;
  gmtime_r(&s, &tm);
  char base[32];
  strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(out, n, "%s.%06ldZ", base, (long)tv.tv_usec);
}

static const char *leader__str(const cJSON *o, const char *a, const char *b) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
  if (b) x = cJSON_GetObjectItemCaseSensitive(x, b);
  return cJSON_IsString(x) ? x->valuestring : NULL;
}

static void leader__set_str(char **dst, const char *v) {
  char *d = strdup(v ? v : "");
  if (!d) return; /* keeps the previous value; only ever informational or a comparison */
  free(*dst);
  *dst = d;
}

static void leader__lose(leader_t *l, const char *why) {
  if (!l->leading) return;
  l->leading = false;
  LOG_W("leader election: stopped leading", "lease", l->path, "identity", l->identity, "reason", why);
  if (l->on_stopped) l->on_stopped(l, l->data);
}

static void leader__gain(leader_t *l) {
  l->last_renew = uv_now(l->loop);
  if (l->leading) return;
  l->leading = true;
  LOG_I("leader election: started leading", "lease", l->path, "identity", l->identity);
  if (l->on_started) l->on_started(l, l->data);
}

/* Builds the spec this candidate writes: it holds the lease from now (release: nobody holds it). */
static char *leader__spec_json(leader_t *l, cJSON *lease, bool release) {
  cJSON *spec = cJSON_GetObjectItemCaseSensitive(lease, "spec");
  if (!cJSON_IsObject(spec)) {
    cJSON_DeleteItemFromObjectCaseSensitive(lease, "spec");
    if (!(spec = cJSON_AddObjectToObject(lease, "spec"))) return NULL;
  }
  const char *holder = leader__str(spec, "holderIdentity", NULL);
  bool mine = holder && !strcmp(holder, l->identity);
  const cJSON *tr = cJSON_GetObjectItemCaseSensitive(spec, "leaseTransitions");
  double transitions = cJSON_IsNumber(tr) ? tr->valuedouble : 0;
  if (!release && holder && !mine) transitions += 1; /* as client-go: any new holder, after a release too */
  char now[40];
  leader__now(now, sizeof now);
  const char *acquire = leader__str(spec, "acquireTime", NULL);
  char *acq = strdup(mine && !release && acquire ? acquire : now);
  cJSON *fresh = cJSON_CreateObject();
  int ok = acq && fresh && cJSON_AddStringToObject(fresh, "holderIdentity", release ? "" : l->identity) &&
           cJSON_AddNumberToObject(fresh, "leaseDurationSeconds", release ? 1 : (double)(l->lease_ms / 1000)) &&
           cJSON_AddStringToObject(fresh, "acquireTime", acq) && cJSON_AddStringToObject(fresh, "renewTime", now) &&
           cJSON_AddNumberToObject(fresh, "leaseTransitions", transitions);
  free(acq);
  if (!ok) { cJSON_Delete(fresh); return NULL; }
  cJSON_ReplaceItemInObjectCaseSensitive(lease, "spec", fresh);
  cJSON_DeleteItemFromObjectCaseSensitive(lease, "status");
  return cJSON_PrintUnformatted(lease);
}

/* Remembers what a read or written Lease says, restarting the local expiry clock when the record changed. */
static void leader__observe(leader_t *l, cJSON *lease) {
  const cJSON *spec = cJSON_GetObjectItemCaseSensitive(lease, "spec");
  const char *holder = leader__str(spec, "holderIdentity", NULL);
  const char *renew = leader__str(spec, "renewTime", NULL);
  const cJSON *dur = cJSON_GetObjectItemCaseSensitive(spec, "leaseDurationSeconds");
  const cJSON *tr = cJSON_GetObjectItemCaseSensitive(spec, "leaseTransitions");
  char rec[512];
  snprintf(rec, sizeof rec, "%s|%s|%g|%g", holder ? holder : "", renew ? renew : "",
           cJSON_IsNumber(dur) ? dur->valuedouble : 0, cJSON_IsNumber(tr) ? tr->valuedouble : 0);
  if (!l->observed || strcmp(l->observed, rec)) {
    leader__set_str(&l->observed, rec);
    l->observed_at = uv_now(l->loop);
  }
  l->observed_lease_ms = cJSON_IsNumber(dur) && dur->valuedouble > 0 ? (uint64_t)(dur->valuedouble * 1000) : l->lease_ms;
  leader__set_str(&l->holder, holder);
  cJSON_Delete(l->lease);
  l->lease = lease;
}

static void leader__written(const kube_response_t *res, void *data) {
  leader_t *l = data;
  l->req = NULL;
  if (res->err == UV_ECANCELED && !l->releasing) return;
  if (l->releasing) {
    if (kube_response_ok(res)) LOG_I("leader election: released the lease", "lease", l->path, "identity", l->identity);
    else LOG_W("leader election: could not release the lease", "lease", l->path, "error", res->errmsg ? res->errmsg : "");
    leader__finish_stop(l);
    return;
  }
  if (kube_response_ok(res)) {
    cJSON *lease = cJSON_ParseWithLength(res->body, res->body_len);
    if (lease) leader__observe(l, lease);
    leader__gain(l);
  } else {
    /* 409: someone wrote the lease since we read it; read it again next time. */
    cJSON_Delete(l->lease);
    l->lease = NULL;
    if (!kube_response_is_conflict(res))
      LOG_W("leader election: writing the lease failed", "lease", l->path, "error", res->errmsg ? res->errmsg : "");
  }
  if (l->stopping) return;
  leader__schedule(l);
}

static void leader__write(leader_t *l, bool create) {
  char *json = leader__spec_json(l, l->lease, false);
  kube_req_opts_t o = {.method = create ? "POST" : "PUT", .path = create ? l->coll : l->path, .body = json,
                       .body_len = json ? strlen(json) : 0, .timeout_ms = l->renew_ms, .retry = KUBE_RETRY_NEVER};
  l->req = json ? kube_request(l->c, &o, leader__written, l) : NULL;
  free(json);
  if (!l->req) leader__schedule(l);
}

static void leader__read(const kube_response_t *res, void *data) {
  leader_t *l = data;
  l->req = NULL;
  if (res->err == UV_ECANCELED || l->stopping) return;
  uint64_t now = uv_now(l->loop);
  if (kube_response_is_not_found(res)) {
    /* No lease yet: create it, holding it. */
    cJSON_Delete(l->lease);
    l->lease = cJSON_CreateObject();
    cJSON *md = l->lease ? cJSON_AddObjectToObject(l->lease, "metadata") : NULL;
    if (!md || !cJSON_AddStringToObject(l->lease, "apiVersion", "coordination.k8s.io/v1") ||
        !cJSON_AddStringToObject(l->lease, "kind", "Lease") || !cJSON_AddStringToObject(md, "name", l->name) ||
        !cJSON_AddStringToObject(md, "namespace", l->ns)) {
      leader__schedule(l);
      return;
    }
    leader__write(l, true);
    return;
  }
  cJSON *lease = kube_response_ok(res) ? cJSON_ParseWithLength(res->body, res->body_len) : NULL;
  if (!lease) {
    LOG_W("leader election: reading the lease failed", "lease", l->path, "error", res->errmsg ? res->errmsg : "bad JSON");
    leader__schedule(l);
    return;
  }
  leader__observe(l, lease);
  bool held_by_other = *l->holder && strcmp(l->holder, l->identity);
  if (held_by_other && now < l->observed_at + l->observed_lease_ms) {
    /* Someone else holds a lease that has not expired (by our own clock). */
    leader__lose(l, "another candidate holds the lease");
    if (!l->stopping) leader__schedule(l);
    return;
  }
  leader__write(l, false);
}

static void leader__tick(uv_timer_t *t) {
  leader_t *l = t->data;
  if (l->stopping) return;
  uint64_t now = uv_now(l->loop);
  if (l->leading && now - l->last_renew >= l->renew_ms) {
    /* Not renewed within the deadline: another candidate may take the lease soon; stop first. */
    if (l->req) kube_request_cancel(l->req);
    leader__lose(l, "could not renew the lease within the renew deadline");
    if (l->stopping) return;
  }
  if (l->req) { leader__schedule(l); return; }
  /* The leader renews from the lease it wrote last; candidates read it first. */
  if (l->leading && l->lease) {
    leader__write(l, false);
    return;
  }
  l->req = kube_request(l->c, &(kube_req_opts_t){.path = l->path, .timeout_ms = l->renew_ms, .retry = KUBE_RETRY_NEVER},
                        leader__read, l);
  if (!l->req) leader__schedule(l);
}

int leader_start(uv_loop_t *loop, kube_client_t *c, const leader_opts_t *o, leader_cb on_started,
                 leader_cb on_stopped, void *data, leader_t **out) {
  *out = NULL;
  uint64_t lease = o->lease_ms ? o->lease_ms : 15000, renew = o->renew_ms ? o->renew_ms : 10000,
           retry = o->retry_ms ? o->retry_ms : 2000;
  if (!o->namespace || !*o->namespace || !o->name || !*o->name || lease < 1000 || renew >= lease || retry >= renew)
    return UV_EINVAL;
  leader_t *l = calloc(1, sizeof *l);
  if (!l) return UV_ENOMEM;
  l->loop = loop;
  l->c = c;
  l->lease_ms = lease / 1000 * 1000;
  l->renew_ms = renew;
  l->retry_ms = retry;
  l->release_ms = o->release_ms ? o->release_ms : 2000;
  l->on_started = on_started;
  l->on_stopped = on_stopped;
  l->data = data;
  l->rng = uv_hrtime() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)l;
  if (!l->rng) l->rng = 1;
  l->ns = strdup(o->namespace);
  l->name = strdup(o->name);
  if (o->identity && *o->identity) {
    l->identity = strdup(o->identity);
  } else {
    char host[256] = "rudder";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = 0;
    buf_t id = BUF_INIT;
    if (!buf_printf(&id, "%s_%08llx", host, (unsigned long long)(leader__rand(l) & 0xffffffffu)))
      l->identity = buf_steal(&id);
    buf_free(&id);
  }
  buf_t p = BUF_INIT, q = BUF_INIT;
  int r = kube_path(&p, "coordination.k8s.io", "v1", "leases", o->namespace, o->name, NULL);
  r |= kube_path(&q, "coordination.k8s.io", "v1", "leases", o->namespace, NULL, NULL);
  l->path = r ? NULL : buf_steal(&p);
  l->coll = r ? NULL : buf_steal(&q);
  buf_free(&p);
  buf_free(&q);
  if (!l->ns || !l->name || !l->identity || !l->path || !l->coll) {
    free(l->ns); free(l->name); free(l->identity); free(l->path); free(l->coll); free(l);
    return UV_ENOMEM;
  }
  uv_timer_init(loop, &l->timer);
  l->timer.data = l;
  uv_timer_start(&l->timer, leader__tick, 0, 0);
  *out = l;
  return 0;
}

bool leader_is_leader(const leader_t *l) { return l->leading; }

const char *leader_identity(const leader_t *l) { return l->identity; }

const char *leader_holder(const leader_t *l) { return l->holder ? l->holder : ""; }

static void leader__closed(uv_handle_t *h) {
  leader_t *l = h->data;
  void (*cb)(void *) = l->stop_cb;
  void *data = l->stop_data;
  cJSON_Delete(l->lease);
  free(l->ns); free(l->name); free(l->identity); free(l->path); free(l->coll); free(l->holder); free(l->observed);
  free(l);
  if (cb) cb(data);
}

static void leader__finish_stop(leader_t *l) {
  l->releasing = false;
  uv_close((uv_handle_t *)&l->timer, leader__closed);
}

void leader_stop(leader_t *l, void (*cb)(void *), void *data) {
  if (l->stopping) return;
  l->stopping = true;
  l->stop_cb = cb;
  l->stop_data = data;
  uv_timer_stop(&l->timer);
  if (l->req) kube_request_cancel(l->req);
  bool was_leading = l->leading;
  leader__lose(l, "stopped");
  /* Release only a lease we hold and have the latest copy of (its resourceVersion guards the write). */
  if (was_leading && l->lease && !kube_client_is_closing(l->c)) {
    char *json = leader__spec_json(l, l->lease, true);
    l->releasing = true;
    kube_req_opts_t o = {.method = "PUT", .path = l->path, .body = json, .body_len = json ? strlen(json) : 0,
                         .timeout_ms = l->release_ms, .retry = KUBE_RETRY_NEVER};
    l->req = json ? kube_request(l->c, &o, leader__written, l) : NULL;
    free(json);
    if (l->req) return;
  }
  leader__finish_stop(l);
}
