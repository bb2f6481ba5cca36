/* HelmRelease reconcile: one state machine per key, advanced by API responses.
 *
 * install/upgrade: render -> list release records -> (unchanged? status only) -> map kinds ->
 *   write pending record -> apply every object (SSA) -> delete objects that left the manifest ->
 *   supersede the previous record -> mark the new one deployed -> trim history -> status.
 * delete: list records -> delete the objects of the newest release in uninstall order ->
 *   delete the records -> remove the finalizer.
 * Each step issues at most one request; its callback moves to the next step. */
#include "reconcile/helmrelease.h"
#include "base/container.h"
#include "base/log.h"
#include "queue/queue.h"
#include "reconcile/hr_record.h"
#include "reconcile/hr_spec.h"
#include "reconcile/hr_status.h"
#include "watch/informer.h"
#include <assert.h>
#include <stdlib.h>
#include <string.h>

struct hr_reconciler_s {
  uv_loop_t *loop;
  kube_client_t *c;
  discovery_t *d;
  informer_t *inf;
  queue_t q;
  char *ns;
  events_t *events;
  char *kube_version; /* the server's gitVersion, once known */
  int stopping;
  void (*stop_cb)(void *);
  void *stop_data;
};

typedef struct rc_s rc_t;
typedef void (*rc_step_t)(rc_t *x);

enum { RC_FORGET = 0, RC_RETRY = 1 };

struct rc_s {
  hr_reconciler_t *r;
  char *key;
  hr_spec_t s;
  buf_t err;
  buf_t path;
  hr_docs_t want;    /* desired objects, install order */
  hr_docs_t old;     /* the previous release's objects (prune, uninstall) */
  hr_rec_t *recs;    /* release records, oldest first */
  size_t nrecs;
  hr_rec_t next;     /* the record this reconcile writes */
  int have_next;
  int next_written;  /* its Secret exists */
  rc_step_t list_then;
  long long version;
  int upgrade;       /* there is an earlier revision */
  int resume;        /* the newest record is a pending one this reconcile takes over */
  size_t i;          /* position in the current list */
  hr_docs_t *mapping; /* which list rc__map_next is resolving */
  rc_step_t after_map;
  int outcome;
  const char *fail_reason;
};

static void rc__finish(rc_t *x, int outcome);
static void rc__server_version(rc_t *x);
static void rc__list_records(rc_t *x, rc_step_t then);
static void rc__decide(rc_t *x);
static void rc__write_pending(rc_t *x);
static void rc__apply_next(rc_t *x);
static void rc__prune_next(rc_t *x);
static void rc__supersede_next(rc_t *x);
static void rc__mark_deployed(rc_t *x);
static void rc__trim_next(rc_t *x);
static void rc__status_success(rc_t *x);
static void rc__uninstall(rc_t *x);
static void rc__uninstall_next(rc_t *x);
static void rc__delete_records_next(rc_t *x);
static void rc__remove_finalizer(rc_t *x);
static void rc__fail(rc_t *x, const char *reason);


/* ---- helpers ---- */

static const char *rc__action(const rc_t *x) { return x->upgrade ? "upgrade" : "install"; }

static void rc__hr_path(rc_t *x, const char *sub) {
  buf_reset(&x->path);
  kube_path(&x->path, "rudder.dev", "v1alpha1", "helmreleases", x->s.ns, x->s.name, sub);
}

static void rc__records_free(rc_t *x) {
  for (size_t i = 0; i < x->nrecs; i++) hr_rec_free(&x->recs[i]);
  free(x->recs);
  x->recs = NULL;
  x->nrecs = 0;
}

static void rc__free(rc_t *x) {
  hr_spec_free(&x->s);
  buf_free(&x->err);
  buf_free(&x->path);
  hr_docs_free(&x->want);
  hr_docs_free(&x->old);
  rc__records_free(x);
  if (x->have_next) hr_rec_free(&x->next);
  free(x->key);
  free(x);
}

static hr_rec_t *rc__latest(rc_t *x) { return x->nrecs ? &x->recs[x->nrecs - 1] : NULL; }

static hr_rec_t *rc__last_deployed(rc_t *x) {
  for (size_t i = x->nrecs; i-- > 0;)
    if (!strcmp(x->recs[i].status, "deployed")) return &x->recs[i];
  return NULL;
}

static int rc__cmp_rec(const void *a, const void *b) {
  const hr_rec_t *ra = a, *rb = b;
  return ra->version < rb->version ? -1 : ra->version > rb->version;
}

/* Returns the namespace an object of doc lives in ("" for cluster-scoped). */
static const char *rc__doc_ns(const rc_t *x, const hr_doc_t *d) {
  if (!d->namespaced) return "";
  return d->ns && *d->ns ? d->ns : x->s.target_ns;
}

static void rc__doc_path(rc_t *x, const hr_doc_t *d) {
  buf_reset(&x->path);
  const char *ns = rc__doc_ns(x, d);
  kube_path(&x->path, d->group, d->version, d->resource, *ns ? ns : NULL, d->name, NULL);
}

/* ---- status ---- */

static void rc__status_done(const kube_response_t *res, void *data) {
  rc_t *x = data;
  if (res->err || (res->status >= 400 && res->status != 404))
    LOG_W("status update failed", "release", x->key, "error", res->errmsg ? res->errmsg : "");
  rc__finish(x, x->outcome);
}

/* Writes status: Ready (and Released when `released` is not NULL) with reason/message. */
static void rc__write_status(rc_t *x, const char *ready, const char *reason, const char *msg, const char *released,
                             long long applied) {
  if (x->r->events) {
    /* Same reason and message again is aggregated by the recorder, so retries do not flood. */
    events_ref_t ref = {.api_version = "rudder.dev/v1alpha1", .kind = "HelmRelease", .namespace = x->s.ns,
                        .name = x->s.name, .uid = x->s.uid, .resource_version = x->s.resource_version};
    events_emit_ref(x->r->events, &ref, !strcmp(ready, "True") ? "Normal" : "Warning", reason, msg);
  }
  char now[32];
  hr_now_rfc3339(now);
  cJSON *st = cJSON_CreateObject();
  cJSON_AddNumberToObject(st, "observedGeneration", (double)x->s.generation);
  cJSON *conds = x->s.conditions ? cJSON_Duplicate(x->s.conditions, 1) : NULL;
  conds = hr_condition_set(conds, x->s.conditions, "Ready", ready, reason, msg, x->s.generation, now);
  if (released) conds = hr_condition_set(conds, x->s.conditions, "Released", released, reason, msg, x->s.generation, now);
  cJSON_AddItemToObject(st, "conditions", conds);
  if (applied > 0) cJSON_AddNumberToObject(st, "lastAppliedRevision", (double)applied);
  if (x->version > 0) cJSON_AddNumberToObject(st, "lastAttemptedRevision", (double)x->version);
  cJSON_AddStringToObject(st, "storageNamespace", x->s.storage_ns);
  if (x->nrecs || x->have_next) {
    cJSON *h = cJSON_CreateArray();
    if (x->have_next) cJSON_AddItemToArray(h, hr_rec_history_json(&x->next));
    for (size_t i = x->nrecs; i-- > 0;)
      if (!x->have_next || x->recs[i].version != x->next.version) cJSON_AddItemToArray(h, hr_rec_history_json(&x->recs[i]));
    cJSON_AddItemToObject(st, "history", h);
  }
  cJSON *patch = cJSON_CreateObject();
  cJSON_AddItemToObject(patch, "status", st);
  char *body = cJSON_PrintUnformatted(patch);
  cJSON_Delete(patch);
  rc__hr_path(x, "status");
  if (!body || !kube_merge_patch(x->r->c, x->path.data, body, rc__status_done, x)) {
    free(body);
    rc__finish(x, RC_RETRY);
    return;
  }
  free(body);
}

/* Fails this reconcile: records a failed release when a pending one was written, then
 * reports Ready=False and retries with backoff. */
static void rc__fail_status(rc_t *x) {
  LOG_W("reconcile failed", "release", x->key, "reason", x->fail_reason, "error", x->err.data ? x->err.data : "");
  x->outcome = RC_RETRY;
  long long applied = x->s.last_applied_revision;
  rc__write_status(x, "False", x->fail_reason, x->err.data ? x->err.data : "", x->have_next ? "False" : NULL, applied);
}

static void rc__failed_record_written(const kube_response_t *res, void *data) {
  rc_t *x = data;
  if (!kube_response_ok(res))
    LOG_W("cannot record the failed release", "release", x->key, "error", res->errmsg ? res->errmsg : "");
  rc__fail_status(x);
}

/* Fails this reconcile with err as the message. When a pending record was written the
 * release is recorded as failed (as Helm does) before the status is written. */
static void rc__fail(rc_t *x, const char *reason) {
  x->fail_reason = reason;
  if (x->have_next && x->next_written) {
    buf_t d = BUF_INIT;
    buf_printf(&d, "%s \"%s\" failed: %s", x->upgrade ? "Upgrade" : "Release", x->s.release_name,
               x->err.data ? x->err.data : "");
    hr_rec_set_status(&x->next, "failed", d.data);
    buf_free(&d);
    char *body = hr_rec_secret_json(&x->next, x->s.storage_ns, 0);
    buf_reset(&x->path);
    kube_path(&x->path, "", "v1", "secrets", x->s.storage_ns, x->next.secret_name, NULL);
    if (body && kube_update(x->r->c, x->path.data, body, rc__failed_record_written, x)) {
      free(body);
      return;
    }
    free(body);
  }
  rc__fail_status(x);
}

/* Fails from an API response: err gets "<what>: <errmsg>". */
static int rc__check(rc_t *x, const kube_response_t *res, const char *reason, const char *what) {
  if (kube_response_ok(res)) return 0;
  buf_reset(&x->err);
  buf_printf(&x->err, "%s: %s", what, res->errmsg ? res->errmsg : uv_strerror(res->err));
  rc__fail(x, reason);
  return -1;
}

/* ---- entry ---- */

static void rc__finalizer_added(const kube_response_t *res, void *data) {
  rc_t *x = data;
  if (res->status == 409 || res->status == 404) { /* changed meanwhile: the watch brings it back */
    rc__finish(x, RC_RETRY);
    return;
  }
  if (rc__check(x, res, "FinalizerFailed", "adding the finalizer")) return;
  rc__server_version(x);
}

static void rc__begin(rc_t *x) {
  const cJSON *obj = informer_get(x->r->inf, x->key);
  if (!obj) { /* deleted, and its finalizer (if any) already gone */
    rc__finish(x, RC_FORGET);
    return;
  }
  int rc = hr_spec_parse(obj, &x->s, &x->err);
  if (x->s.deleting) {
    if (!x->s.has_finalizer) { rc__finish(x, RC_FORGET); return; }
    rc__list_records(x, rc__uninstall);
    return;
  }
  if (rc) {
    rc__fail(x, rc == -95 ? "ArtifactFailed" : "InvalidSpec");
    return;
  }
  if (x->s.suspend) {
    LOG_I("release suspended", "release", x->key);
    rc__finish(x, RC_FORGET);
    return;
  }
  if (!x->s.has_finalizer) {
    cJSON *patch = cJSON_CreateObject();
    cJSON *meta = cJSON_AddObjectToObject(patch, "metadata");
    cJSON *fins = x->s.finalizers ? cJSON_Duplicate(x->s.finalizers, 1) : cJSON_CreateArray();
    cJSON_AddItemToArray(fins, cJSON_CreateString(HR_FINALIZER));
    cJSON_AddItemToObject(meta, "finalizers", fins);
    /* resourceVersion makes the patch fail rather than drop someone else's finalizer. */
    cJSON_AddStringToObject(meta, "resourceVersion", x->s.resource_version ? x->s.resource_version : "");
    char *body = cJSON_PrintUnformatted(patch);
    cJSON_Delete(patch);
    rc__hr_path(x, NULL);
    if (!body || !kube_merge_patch(x->r->c, x->path.data, body, rc__finalizer_added, x)) rc__finish(x, RC_RETRY);
    free(body);
    return;
  }
  rc__server_version(x);
}

/* The server's version becomes .Capabilities.KubeVersion (fetched once, then cached). */
static void rc__server_version_done(int err, const char *errmsg, const discovery_version_t *v, void *data) {
  rc_t *x = data;
  if (err) {
    buf_reset(&x->err);
    buf_printf(&x->err, "reading the server version: %s", errmsg ? errmsg : uv_strerror(err));
    rc__fail(x, "ArtifactFailed");
    return;
  }
  if (!x->r->kube_version && v && v->git_version) x->r->kube_version = strdup(v->git_version);
  rc__list_records(x, rc__decide);
}

static void rc__server_version(rc_t *x) {
  if (x->r->kube_version) {
    rc__list_records(x, rc__decide);
    return;
  }
  if (discovery_server_version(x->r->d, rc__server_version_done, x)) rc__finish(x, RC_RETRY);
}

/* ---- release records ---- */

static void rc__records_listed(const kube_response_t *res, void *data) {
  rc_t *x = data;
  rc_step_t then = x->list_then;
  if (rc__check(x, res, "StorageFailed", "listing release records")) return;
  cJSON *list = cJSON_ParseWithLength(res->body, res->body_len);
  const cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
  size_t n = (size_t)cJSON_GetArraySize(items);
  rc__records_free(x);
  x->recs = calloc(n ? n : 1, sizeof *x->recs);
  if (!list || !x->recs) {
    cJSON_Delete(list);
    buf_reset(&x->err);
    buf_puts(&x->err, "listing release records: unreadable response");
    rc__fail(x, "StorageFailed");
    return;
  }
  const cJSON *it;
  cJSON_ArrayForEach(it, items) {
    buf_t e = BUF_INIT;
    if (hr_rec_from_secret(it, &x->recs[x->nrecs], &e) == 0) x->nrecs++;
    else LOG_W("skipping unreadable release record", "release", x->key, "error", e.data ? e.data : "");
    buf_free(&e);
  }
  cJSON_Delete(list);
  qsort(x->recs, x->nrecs, sizeof *x->recs, rc__cmp_rec);
  then(x);
}

static void rc__list_records(rc_t *x, rc_step_t then) {
  x->list_then = then;
  buf_reset(&x->path);
  kube_path(&x->path, "", "v1", "secrets", x->s.storage_ns, NULL, NULL);
  buf_t sel = BUF_INIT;
  buf_printf(&sel, "owner=helm,name=%s", x->s.release_name);
  kube_query_add(&x->path, "labelSelector", sel.data);
  buf_free(&sel);
  if (!kube_get(x->r->c, x->path.data, rc__records_listed, x)) rc__finish(x, RC_RETRY);
}

/* ---- kind mapping ---- */

static void rc__map_next(rc_t *x);

static void rc__mapped(int err, const char *errmsg, const discovery_mapping_t *m, void *data) {
  rc_t *x = data;
  hr_doc_t *d = &x->mapping->v[x->i];
  if (err) {
    if (x->mapping == &x->want) {
      buf_reset(&x->err);
      if (err == UV_ENOENT)
        buf_printf(&x->err, "%s: no matches for kind \"%s\" in version \"%s\" (is its CRD installed?)", d->source,
                   d->kind, d->api_version);
      else
        buf_printf(&x->err, "%s: resolving kind %s %s: %s", d->source, d->api_version, d->kind, errmsg ? errmsg : "");
      rc__fail(x, x->upgrade ? "UpgradeFailed" : "InstallFailed");
      return;
    }
    /* An old object whose kind is gone (its CRD was removed): nothing left to delete. */
    LOG_W("skipping object of unknown kind", "release", x->key, "kind", d->kind, "apiVersion", d->api_version);
  } else {
    d->group = strdup(m->group);
    d->version = strdup(m->version);
    d->resource = strdup(m->resource);
    d->namespaced = m->namespaced;
    d->mapped = d->group && d->version && d->resource;
  }
  x->i++;
  rc__map_next(x);
}

static void rc__map_next(rc_t *x) {
  if (x->i >= x->mapping->n) {
    x->i = 0;
    x->after_map(x);
    return;
  }
  hr_doc_t *d = &x->mapping->v[x->i];
  if (discovery_resolve(x->r->d, d->api_version, d->kind, rc__mapped, x)) rc__finish(x, RC_RETRY);
}

static void rc__map(rc_t *x, hr_docs_t *docs, rc_step_t then) {
  x->mapping = docs;
  x->after_map = then;
  x->i = 0;
  rc__map_next(x);
}

/* ---- install / upgrade ---- */

static void rc__decide_mapped(rc_t *x);

static void rc__decide(rc_t *x) {
  hr_rec_t *latest = rc__latest(x);
  if (latest && !strcmp(latest->status, "deployed") && hr_rec_matches(latest, &x->s)) {
    /* Nothing to do; report success if the status does not say so yet. */
    x->version = latest->version;
    x->upgrade = latest->version > 1;
    const cJSON *ready = hr_condition_find(x->s.conditions, "Ready");
    const cJSON *rs = ready ? cJSON_GetObjectItemCaseSensitive(ready, "status") : NULL;
    const cJSON *og = ready ? cJSON_GetObjectItemCaseSensitive(ready, "observedGeneration") : NULL;
    if (cJSON_IsString(rs) && !strcmp(rs->valuestring, "True") && cJSON_IsNumber(og) &&
        (long long)og->valuedouble == x->s.generation && x->s.last_applied_revision == latest->version) {
      rc__finish(x, RC_FORGET);
      return;
    }
    rc__status_success(x);
    return;
  }
  if (latest && (!strncmp(latest->status, "pending-", 8) ||
                 (!strcmp(latest->status, "failed") && hr_rec_matches(latest, &x->s)))) {
    /* A write that was interrupted (ours, or a crashed helm), or a retry of the same inputs that
     * failed: take it over at the same revision rather than add a record per attempt. */
    x->resume = 1;
    x->version = latest->version;
  } else {
    x->version = latest ? latest->version + 1 : 1;
  }
  x->upgrade = x->nrecs > (size_t)(x->resume ? 1 : 0);
  buf_reset(&x->err);
  if (hr_render(&x->s, x->version, x->upgrade, x->r->kube_version, &x->want, &x->err)) {
    rc__fail(x, "RenderFailed");
    return;
  }
  rc__map(x, &x->want, rc__decide_mapped);
}

static void rc__decide_mapped(rc_t *x) {
  /* The previous deployed release's objects: those not rendered any more are deleted. */
  hr_rec_t *prev = rc__last_deployed(x);
  hr_docs_free(&x->old);
  if (prev && prev->manifest && *prev->manifest) {
    buf_reset(&x->err);
    if (hr_docs_from_manifest(prev->manifest, 1, &x->old, &x->err))
      LOG_W("cannot read the previous manifest; nothing will be pruned", "release", x->key, "error", x->err.data);
  }
  rc__map(x, &x->old, rc__write_pending);
}

static void rc__pending_written(const kube_response_t *res, void *data) {
  rc_t *x = data;
  if (res->status == 409) { /* another writer got this revision first */
    buf_reset(&x->err);
    buf_printf(&x->err, "release record %s was written concurrently; retrying", x->next.secret_name);
    x->have_next = 0;
    hr_rec_free(&x->next);
    rc__fail(x, x->upgrade ? "UpgradeFailed" : "InstallFailed");
    return;
  }
  if (rc__check(x, res, x->upgrade ? "UpgradeFailed" : "InstallFailed", "writing the release record")) return;
  x->next_written = 1;
  x->i = 0;
  rc__apply_next(x);
}

static void rc__write_pending(rc_t *x) {
  buf_reset(&x->err);
  const hr_rec_t *first = x->nrecs ? &x->recs[0] : NULL;
  if (hr_rec_new(&x->s, x->version, &x->want, x->upgrade ? "pending-upgrade" : "pending-install",
                 x->upgrade ? "Preparing upgrade" : "Initial install underway", first, &x->next, &x->err)) {
    rc__fail(x, "StorageFailed");
    return;
  }
  x->have_next = 1;
  char *body = hr_rec_secret_json(&x->next, x->s.storage_ns, !x->resume);
  buf_reset(&x->path);
  kube_req_t *req = NULL;
  if (body && x->resume) {
    kube_path(&x->path, "", "v1", "secrets", x->s.storage_ns, x->next.secret_name, NULL);
    req = kube_update(x->r->c, x->path.data, body, rc__pending_written, x);
  } else if (body) {
    kube_path(&x->path, "", "v1", "secrets", x->s.storage_ns, NULL, NULL);
    req = kube_create(x->r->c, x->path.data, body, rc__pending_written, x);
  }
  free(body);
  if (!req) rc__finish(x, RC_RETRY);
}

static void rc__applied(const kube_response_t *res, void *data) {
  rc_t *x = data;
  hr_doc_t *d = &x->want.v[x->i];
  if (!kube_response_ok(res)) {
    buf_reset(&x->err);
    buf_printf(&x->err, "%s: applying %s \"%s\": %s", d->source, d->kind, d->name, res->errmsg ? res->errmsg : "");
    rc__fail(x, x->upgrade ? "UpgradeFailed" : "InstallFailed");
    return;
  }
  x->i++;
  rc__apply_next(x);
}

static void rc__apply_next(rc_t *x) {
  if (x->i >= x->want.n) {
    x->i = 0;
    rc__prune_next(x);
    return;
  }
  hr_doc_t *d = &x->want.v[x->i];
  const char *ns = rc__doc_ns(x, d);
  cJSON *meta = cJSON_GetObjectItemCaseSensitive(d->obj, "metadata");
  if (*ns && meta && !cJSON_GetObjectItemCaseSensitive(meta, "namespace"))
    cJSON_AddStringToObject(meta, "namespace", ns);
  char *body = cJSON_PrintUnformatted(d->obj);
  rc__doc_path(x, d);
  if (!body || !kube_apply(x->r->c, x->path.data, body, HR_FIELD_MANAGER, true, rc__applied, x)) rc__finish(x, RC_RETRY);
  free(body);
}

/* True when the desired set still holds old object o. */
static int rc__still_wanted(rc_t *x, const hr_doc_t *o) {
  for (size_t i = 0; i < x->want.n; i++) {
    const hr_doc_t *w = &x->want.v[i];
    if (w->mapped && !strcmp(w->group, o->group) && !strcmp(w->resource, o->resource) && !strcmp(w->name, o->name) &&
        !strcmp(rc__doc_ns(x, w), rc__doc_ns(x, o)))
      return 1;
  }
  return 0;
}

static void rc__pruned(const kube_response_t *res, void *data) {
  rc_t *x = data;
  hr_doc_t *d = &x->old.v[x->i];
  if (!kube_response_ok(res) && res->status != 404) {
    buf_reset(&x->err);
    buf_printf(&x->err, "deleting %s \"%s\" that left the manifest: %s", d->kind, d->name, res->errmsg ? res->errmsg : "");
    rc__fail(x, "UpgradeFailed");
    return;
  }
  x->i++;
  rc__prune_next(x);
}

static void rc__prune_next(rc_t *x) {
  while (x->i < x->old.n) {
    hr_doc_t *d = &x->old.v[x->i];
    if (d->mapped && !d->keep && !rc__still_wanted(x, d)) {
      rc__doc_path(x, d);
      LOG_I("deleting object that left the manifest", "release", x->key, "kind", d->kind, "name", d->name);
      if (!kube_delete(x->r->c, x->path.data, "Background", rc__pruned, x)) rc__finish(x, RC_RETRY);
      return;
    }
    x->i++;
  }
  x->i = 0;
  rc__supersede_next(x);
}

static void rc__record_updated(const kube_response_t *res, void *data) {
  rc_t *x = data;
  if (rc__check(x, res, "StorageFailed", "updating a release record")) return;
  x->i++;
  rc__supersede_next(x);
}

static void rc__supersede_next(rc_t *x) {
  while (x->i < x->nrecs) {
    hr_rec_t *r = &x->recs[x->i];
    if (r->version != x->version && !strcmp(r->status, "deployed")) {
      hr_rec_set_status(r, "superseded", NULL);
      char *body = hr_rec_secret_json(r, x->s.storage_ns, 0);
      buf_reset(&x->path);
      kube_path(&x->path, "", "v1", "secrets", x->s.storage_ns, r->secret_name, NULL);
      if (!body || !kube_update(x->r->c, x->path.data, body, rc__record_updated, x)) rc__finish(x, RC_RETRY);
      free(body);
      return;
    }
    x->i++;
  }
  rc__mark_deployed(x);
}

static void rc__deployed_written(const kube_response_t *res, void *data) {
  rc_t *x = data;
  if (rc__check(x, res, "StorageFailed", "recording the deployed release")) return;
  LOG_I(x->upgrade ? "upgraded" : "installed", "release", x->key, "revision", x->next.secret_name);
  x->i = 0;
  rc__trim_next(x);
}

static void rc__mark_deployed(rc_t *x) {
  hr_rec_set_status(&x->next, "deployed", x->upgrade ? "Upgrade complete" : "Install complete");
  char *body = hr_rec_secret_json(&x->next, x->s.storage_ns, 0);
  buf_reset(&x->path);
  kube_path(&x->path, "", "v1", "secrets", x->s.storage_ns, x->next.secret_name, NULL);
  if (!body || !kube_update(x->r->c, x->path.data, body, rc__deployed_written, x)) rc__finish(x, RC_RETRY);
  free(body);
}

/* Keeps at most maxHistory records (the new one included), deleting the oldest first. */
static void rc__trimmed(const kube_response_t *res, void *data) {
  rc_t *x = data;
  if (!kube_response_ok(res) && res->status != 404)
    LOG_W("cannot delete an old release record", "release", x->key, "error", res->errmsg ? res->errmsg : "");
  else
    x->recs[x->i].version = -1; /* gone: left out of status.history */
  x->i++;
  rc__trim_next(x);
}

static void rc__trim_next(rc_t *x) {
  size_t total = x->nrecs + (x->resume ? 0 : 1);
  size_t max = (size_t)x->s.max_history;
  if (max && total > max && x->i < total - max && x->i < x->nrecs && x->recs[x->i].version != x->version) {
    buf_reset(&x->path);
    kube_path(&x->path, "", "v1", "secrets", x->s.storage_ns, x->recs[x->i].secret_name, NULL);
    if (!kube_delete(x->r->c, x->path.data, NULL, rc__trimmed, x)) rc__finish(x, RC_RETRY);
    return;
  }
  /* Drop deleted records from the list used for status.history. */
  size_t j = 0;
  for (size_t i = 0; i < x->nrecs; i++) {
    if (x->recs[i].version < 0) hr_rec_free(&x->recs[i]);
    else x->recs[j++] = x->recs[i];
  }
  x->nrecs = j;
  rc__status_success(x);
}

static void rc__status_success(rc_t *x) {
  hr_rec_t *r = x->have_next ? &x->next : rc__latest(x);
  buf_t m = BUF_INIT;
  buf_printf(&m, "Helm %s succeeded for release %s/%s.v%lld with chart %s@%s", rc__action(x), x->s.storage_ns,
             x->s.release_name, r ? r->version : x->version, x->s.chart_name, x->s.chart_version);
  x->outcome = RC_FORGET;
  rc__write_status(x, "True", x->upgrade ? "UpgradeSucceeded" : "InstallSucceeded", m.data, "True",
                   r ? r->version : x->version);
  buf_free(&m);
}

/* ---- uninstall ---- */

static void rc__uninstall_mapped(rc_t *x) {
  x->i = 0;
  rc__uninstall_next(x);
}

static void rc__uninstall(rc_t *x) {
  /* The newest record's objects (Helm uninstalls what the last release holds). */
  hr_rec_t *latest = rc__latest(x);
  if (latest && latest->manifest && *latest->manifest) {
    buf_reset(&x->err);
    if (hr_docs_from_manifest(latest->manifest, 1, &x->old, &x->err)) {
      rc__fail(x, "UninstallFailed");
      return;
    }
  }
  rc__map(x, &x->old, rc__uninstall_mapped);
}

static void rc__uninstall_deleted(const kube_response_t *res, void *data) {
  rc_t *x = data;
  hr_doc_t *d = &x->old.v[x->i];
  if (!kube_response_ok(res) && res->status != 404) {
    buf_reset(&x->err);
    buf_printf(&x->err, "uninstall: deleting %s \"%s\": %s", d->kind, d->name, res->errmsg ? res->errmsg : "");
    rc__fail(x, "UninstallFailed");
    return;
  }
  x->i++;
  rc__uninstall_next(x);
}

static void rc__uninstall_next(rc_t *x) {
  while (x->i < x->old.n) {
    hr_doc_t *d = &x->old.v[x->i];
    if (d->mapped && !d->keep) {
      rc__doc_path(x, d);
      if (!kube_delete(x->r->c, x->path.data, "Background", rc__uninstall_deleted, x)) rc__finish(x, RC_RETRY);
      return;
    }
    x->i++;
  }
  x->i = 0;
  rc__delete_records_next(x);
}

static void rc__record_deleted(const kube_response_t *res, void *data) {
  rc_t *x = data;
  if (!kube_response_ok(res) && res->status != 404) {
    buf_reset(&x->err);
    buf_printf(&x->err, "uninstall: deleting release record %s: %s", x->recs[x->i].secret_name,
               res->errmsg ? res->errmsg : "");
    rc__fail(x, "UninstallFailed");
    return;
  }
  x->i++;
  rc__delete_records_next(x);
}

static void rc__delete_records_next(rc_t *x) {
  if (x->i < x->nrecs) {
    buf_reset(&x->path);
    kube_path(&x->path, "", "v1", "secrets", x->s.storage_ns, x->recs[x->i].secret_name, NULL);
    if (!kube_delete(x->r->c, x->path.data, NULL, rc__record_deleted, x)) rc__finish(x, RC_RETRY);
    return;
  }
  rc__remove_finalizer(x);
}

static void rc__finalizer_removed(const kube_response_t *res, void *data) {
  rc_t *x = data;
  if (res->status == 404) { rc__finish(x, RC_FORGET); return; }
  if (res->status == 409) { rc__finish(x, RC_RETRY); return; }
  if (rc__check(x, res, "UninstallFailed", "removing the finalizer")) return;
  LOG_I("uninstalled", "release", x->key);
  rc__finish(x, RC_FORGET);
}

static void rc__remove_finalizer(rc_t *x) {
  cJSON *patch = cJSON_CreateObject();
  cJSON *meta = cJSON_AddObjectToObject(patch, "metadata");
  cJSON *fins = cJSON_AddArrayToObject(meta, "finalizers");
  const cJSON *f;
  cJSON_ArrayForEach(f, x->s.finalizers)
    if (!cJSON_IsString(f) || strcmp(f->valuestring, HR_FINALIZER)) cJSON_AddItemToArray(fins, cJSON_Duplicate(f, 1));
  cJSON_AddStringToObject(meta, "resourceVersion", x->s.resource_version ? x->s.resource_version : "");
  char *body = cJSON_PrintUnformatted(patch);
  cJSON_Delete(patch);
  rc__hr_path(x, NULL);
  if (!body || !kube_merge_patch(x->r->c, x->path.data, body, rc__finalizer_removed, x)) rc__finish(x, RC_RETRY);
  free(body);
}

/* ---- queue and informer wiring ---- */

static void rc__finish(rc_t *x, int outcome) {
  hr_reconciler_t *r = x->r;
  if (outcome == RC_RETRY) {
    queue_add_rate_limited(&r->q, x->key);
  } else {
    queue_forget(&r->q, x->key);
    /* Resync at the interval (drift checks will hang off this). */
    if (x->s.name && !x->s.deleting && !r->stopping) queue_add_after(&r->q, x->key, (uint64_t)x->s.interval_ms);
  }
  queue_done(&r->q, x->key);
  rc__free(x);
}

static void hr__process(queue_t *q, const char *key, void *data) {
  hr_reconciler_t *r = data;
  rc_t *x = calloc(1, sizeof *x);
  if (x) x->key = strdup(key);
  if (!x || !x->key) {
    free(x);
    queue_add_rate_limited(q, key);
    queue_done(q, key);
    return;
  }
  x->r = r;
  LOG_D("reconcile", "release", key);
  rc__begin(x);
}

/* An added or deleted object: queued (a delete finds nothing in the cache and ends there). */
static void hr__on_add_or_delete(informer_t *inf, const char *key, const cJSON *obj, void *data) {
  hr_reconciler_t *r = data;
  if (!r->stopping) queue_add(&r->q, key);
}

/* Only changes the reconcile acts on: spec (generation), deletion, finalizers, labels and
 * annotations. Status-only updates (our own writes) are not queued. */
static int hr__meta_changed(const cJSON *a, const cJSON *b, const char *field) {
  const cJSON *ma = cJSON_GetObjectItemCaseSensitive(a, "metadata");
  const cJSON *mb = cJSON_GetObjectItemCaseSensitive(b, "metadata");
  const cJSON *fa = cJSON_GetObjectItemCaseSensitive(ma, field), *fb = cJSON_GetObjectItemCaseSensitive(mb, field);
  if (!fa || !fb) return fa != fb; /* cJSON_Compare calls two missing fields different */
  return !cJSON_Compare(fa, fb, 1);
}

static void hr__on_update(informer_t *inf, const char *key, const cJSON *old, const cJSON *obj, void *data) {
  hr_reconciler_t *r = data;
  if (r->stopping) return;
  static const char *const fields[] = {"generation", "deletionTimestamp", "finalizers", "labels", "annotations"};
  for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
    if (hr__meta_changed(old, obj, fields[i])) {
      queue_add(&r->q, key);
      return;
    }
}

static void hr__queue_closed(queue_t *q) {
  hr_reconciler_t *r = container_of(q, hr_reconciler_t, q);
  void (*cb)(void *) = r->stop_cb;
  void *data = r->stop_data;
  free(r->ns);
  free(r->kube_version);
  free(r);
  if (cb) cb(data);
}

int hr_reconciler_start(uv_loop_t *loop, kube_client_t *c, discovery_t *d, const hr_options_t *o,
                        hr_reconciler_t **out) {
  hr_reconciler_t *r = calloc(1, sizeof *r);
  if (!r) return UV_ENOMEM;
  r->loop = loop;
  r->c = c;
  r->d = d;
  r->ns = o && o->namespace && *o->namespace ? strdup(o->namespace) : NULL;
  r->events = o ? o->events : NULL;
  queue_options_t qo;
  queue_options_init(&qo);
  qo.name = "helmrelease";
  if (o && o->concurrency) qo.max_in_flight = o->concurrency;
  int rc = queue_init(loop, &r->q, &qo, hr__process, r);
  if (rc) {
    free(r->ns);
    free(r);
    return rc;
  }
  buf_t path = BUF_INIT;
  kube_path(&path, "rudder.dev", "v1alpha1", "helmreleases", r->ns, NULL, NULL);
  /* The cache keeps what a reconcile reads (hr_spec_parse, the update filter): not managedFields,
   * not status.history. */
  static const char *const keep[] = {"spec", "status.conditions", "status.lastAppliedRevision", "metadata.labels",
                                     "metadata.annotations", NULL};
  informer_opts_t io = {.path = path.data, .keep = keep};
  informer_handlers_t h = {.on_add = hr__on_add_or_delete, .on_update = hr__on_update, .on_delete = hr__on_add_or_delete, .data = r};
  rc = informer_start(c, &io, &h, &r->inf);
  buf_free(&path);
  if (rc) {
    r->stopping = 1;
    queue_close(&r->q, hr__queue_closed);
    return rc;
  }
  *out = r;
  return 0;
}

static void hr__drained(queue_t *q, void *data) {
  queue_close(q, hr__queue_closed);
}

static void hr__informer_stopped(void *data) {
  hr_reconciler_t *r = data;
  r->inf = NULL;
  queue_shutdown(&r->q, hr__drained, r);
}

void hr_reconciler_stop(hr_reconciler_t *r, void (*cb)(void *data), void *data) {
  r->stopping = 1;
  r->stop_cb = cb;
  r->stop_data = data;
  informer_stop(r->inf, hr__informer_stopped, r);
}
