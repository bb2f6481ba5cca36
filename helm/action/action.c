/* Helm's actions as step machines (see action.h).
 *
 * install/upgrade: [the pre-patch sent] docs from the rendered manifests -> CRDs (policy) -> map
 *   kinds -> ownership of objects new to the release -> [the pre-patch answered 2xx] pending record
 *   -> apply each (SSA) -> prune what left the manifest -> supersede the previous -> deployed ->
 *   trim history. With CRDs from crds/ to create, their first request waits for the pre-patch.
 * rollback: the same from the stored manifest of the target revision, with a copy of its record.
 * uninstall: the newest record's objects in uninstall order, each deleted only when it carries this
 *   release's ownership metadata -> records deleted (or marked uninstalled) .
 * unlock: the pending record marked failed. */
#include "helm/action/action.h"
#include "helm/action/fields.h"
#include "helm/action/ready.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/yaml.h"
#include "helm/chart/chart.h"
#include "helm/render/manifest.h"
#include "helm/render/render.h"
#include "watch/waits.h"
#include <assert.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ACT_CRD_WAIT_TRIES 40   /* kinds of new CRDs: mapped again every 250 ms, for up to 10 s */
#define ACT_CRD_WAIT_MS 250
#define ACT_CRD_ESTABLISH_MS 60000 /* Helm 4 waits this long for the CRDs it installs */
#define ACT_MAX_RECORD_BYTES (1024 * 1024) /* a Secret's data limit */
#define ACT_OWNER_GETS 16  /* ownership GETs in flight at once: a chart of hundreds of objects opens no more */

typedef struct act__doc_s {
  char *source, *api_version, *kind, *name, *ns; /* ns as written in the document ("" when none) */
  cJSON *obj;                                    /* to apply (ownership metadata added); NULL for old docs */
  cJSON *live;                                   /* its state as last seen (apply response, watch), when waited for */
  char *created_uid;                             /* created by this action (it did not exist): its uid */
  char *deleted_uid;                             /* uninstall: deleted by this action (waited for until gone) */
  kwait_t *kw;                                   /* its readiness wait on the shared watch, begun before the apply */
  int keep;                                      /* helm.sh/resource-policy: keep */
  char *group, *version, *resource;
  int namespaced, mapped;
  char *ocheck;                                  /* what its ownership GET found, when it was not absent or ours:
                                                    the GET's error (ofailed), or why the object is not ours */
  int ofailed;
} act__doc_t;

typedef struct act__docs_s {
  act__doc_t *v;
  size_t n, cap;
} act__docs_t;

typedef void (*act__step_t)(act_t *a);

/* An ownership GET in flight (d NULL: the slot is free). */
typedef struct act__oget_s {
  act_t *a;
  act__doc_t *d;
  kube_req_t *req;
} act__oget_t;

typedef struct act__priv_s {
  int told_waiting; /* a->waiting was told on */
  act_done_cb cb;
  void *data;
  act__docs_t want, old, crds;
  const char *old_ns;          /* where the previous release's objects were applied */
  record_t *prev;              /* the last deployed record, or NULL */
  record_t *latest;            /* the newest record, or NULL */
  record_t *target;            /* rollback: the revision rolled back to */
  int resume;                  /* the newest record is our own pending one: rewritten, not created */
  size_t i;
  kube_req_t *req;             /* in flight */
  int disc_pending;            /* a discovery look-up in flight */
  struct act__tok_s *tok;      /* its token: cleared on cancel, so the late answer finds nobody */
  int stored_pending;          /* a pending record of ours is in storage (act__finish marks it failed) */
  int transient;               /* the failure was the API's (5xx, 429, transport) before anything was stored */
  uv_timer_t *timer;           /* CRD wait (own allocation, freed in its close callback) */
  int timer_pending;
  int cancelled, finished;
  int crds_applied, map_tries;
  buf_t path;
  act__docs_t *mapping;
  act__step_t after_map;
  act__step_t after_get;       /* the ownership GET's continuation */
  act__oget_t oget[ACT_OWNER_GETS]; /* the ownership GETs in flight, ogets of them */
  size_t ogets;
  size_t obad;                 /* the first object known to fail the check (want.n: none): no GET after it */
  int ostop;                   /* no more GETs: an answer was cancelled (UV_ECANCELED), or out of memory */
  int ostopping;               /* the GETs in flight are being cancelled (their callbacks only take note) */
  /* the pre-patch (act_t.pre_patch_*) */
  kube_req_t *pre_req;         /* in flight */
  int pre_rc;                  /* once answered: 0 (2xx), UV_ECANCELED, or -22 (pre_err says why) */
  buf_t pre_err;
  int pre_quiet;               /* act_cancel is cancelling it: its callback only takes note */
  act__step_t after_pre;       /* the first write, waiting for its answer */
  int parked, parked_rc;       /* act__finish waiting for its answer, with this rc */
  /* hooks of the event being run (Helm's execHook) */
  act__docs_t hdocs;           /* one per hook, in execution order */
  release_hook_t **hooks;      /* the record's hooks, same order */
  size_t nhooks, hi;
  const char *hevent;
  release_t *hrel;             /* the record whose hooks run (and keep last_run) */
  act__step_t after_hooks;
  int hphase;                  /* 0 delete before, 1 create, 2 wait, 3 succeeded deletes, 4 failed delete */
  kube_watch_t *watch;
  uv_timer_t *htimer;          /* the hook's deadline */
  int htimer_pending, hdone, hfailed;
  buf_t herr;
  /* the wait for readiness */
  size_t wi;
  uv_timer_t *wtimer;          /* the whole wait's deadline, and re-checks */
  int wtimer_pending, wtimed_out;
  act__step_t after_wait;
  act__docs_t *wdocs;          /* what is waited for: the applied objects, or the CRDs from crds/ */
  int test_failed;             /* test: a test hook failed (the record is written first) */
  int replacing;               /* the request in flight is a forced replace (or create) */
  size_t ci;                   /* cleanupOnFail: the next object to delete */
  char *del_uid;               /* uninstall: the uid of the object whose DELETE is in flight */
  buf_t cerr;                  /* its failures */
} act__priv_t;

static void act__finish(act_t *a, int rc);
static void act__fail(act_t *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

const char *act_kind_name(act_kind_t k) {
  static const char *const names[] = {"install", "upgrade", "rollback", "uninstall", "unlock", "test", "drift"};
  return names[k];
}

static const char *act__fail_reason(act_kind_t k) {
  static const char *const r[] = {"InstallFailed", "UpgradeFailed", "RollbackFailed", "UninstallFailed",
                                  "UpgradeFailed", "TestFailed", "DriftFailed"};
  return r[k];
}

/* ---- documents ---- */

/* Ends d's wait on the shared watch, if any. */
static void act__kw_stop(act__doc_t *d) {
  kwait_end(d->kw);
  d->kw = NULL;
}


static void act__docs_free(act__docs_t *d) {
  for (size_t i = 0; i < d->n; i++) {
    act__doc_t *h = &d->v[i];
    free(h->source); free(h->api_version); free(h->kind); free(h->name); free(h->ns);
    free(h->group); free(h->version); free(h->resource); free(h->created_uid); free(h->deleted_uid); free(h->ocheck);
    cJSON_Delete(h->obj);
    cJSON_Delete(h->live);
    act__kw_stop(h);
  }
  free(d->v);
  memset(d, 0, sizeof *d);
}

static act__doc_t *act__docs_push(act__docs_t *d) {
  if (d->n == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 8;
    act__doc_t *nv = realloc(d->v, cap * sizeof *nv);
    if (!nv) return NULL;
    d->v = nv;
    d->cap = cap;
  }
  act__doc_t *h = &d->v[d->n++];
  memset(h, 0, sizeof *h);
  return h;
}

static char *act__dup(const char *s) { return strdup(s ? s : ""); }

static const char *act__str(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Adds doc (and, for a kind List, each of its items, as Helm's client flattens lists) to out. With
 * objects (want) the JSON to apply is built with ownership metadata. -22 with err, or -12. */
static int act__add_doc(act_t *a, const manifest_doc_t *d, int with_obj, act__docs_t *out) {
  cJSON *obj = NULL;
  manifest_error_t merr = {0};
  if (with_obj || !strcmp(d->kind, "List")) {
    int rc = manifest_object_json(d, a->release_name, a->ns, with_obj ? a->labels : NULL, &obj, &merr);
    if (rc) {
      buf_reset(&a->err);
      buf_puts(&a->err, merr.message[0] ? merr.message : "out of memory");
      return rc == -12 ? -12 : -22;
    }
  }
  const cJSON *items = obj && !strcmp(d->kind, "List") ? cJSON_GetObjectItemCaseSensitive(obj, "items") : NULL;
  if (cJSON_IsArray(items)) {
    int k = 0;
    for (const cJSON *it = items->child; it; it = it->next, k++) {
      char *text = cJSON_PrintUnformatted(it);
      const cJSON *meta = cJSON_GetObjectItemCaseSensitive(it, "metadata");
      manifest_doc_t sub = {.source = d->source, .content = text, .content_len = text ? strlen(text) : 0, .line = d->line,
                            .api_version = (char *)act__str(it, "apiVersion"), .kind = (char *)act__str(it, "kind"),
                            .name = (char *)act__str(meta, "name"), .namespace = (char *)act__str(meta, "namespace"),
                            .annotations = cJSON_GetObjectItemCaseSensitive(meta, "annotations")};
      int rc = 0;
      if (!text) rc = -12;
      else if (!cJSON_IsObject(it) || !sub.api_version || !sub.kind || !sub.name) {
        buf_reset(&a->err);
        buf_printf(&a->err, "%s: item %d of the List has no apiVersion, kind or metadata.name", d->source, k);
        rc = -22;
      } else {
        rc = act__add_doc(a, &sub, with_obj, out);
      }
      free(text);
      if (rc) {
        cJSON_Delete(obj);
        return rc;
      }
    }
    cJSON_Delete(obj);
    return 0;
  }
  act__doc_t *h = act__docs_push(out);
  if (!h) {
    cJSON_Delete(obj);
    return -12;
  }
  h->source = act__dup(d->source);
  h->api_version = act__dup(d->api_version);
  h->kind = act__dup(d->kind);
  h->name = act__dup(d->name);
  h->ns = act__dup(d->namespace);
  h->obj = with_obj ? obj : NULL;
  if (!with_obj) cJSON_Delete(obj);
  const cJSON *pol = cJSON_GetObjectItemCaseSensitive(d->annotations, "helm.sh/resource-policy");
  h->keep = cJSON_IsString(pol) && !strcmp(pol->valuestring, "keep");
  return h->source && h->api_version && h->kind && h->name && h->ns ? 0 : -12;
}

static int act__docs_from_set(act_t *a, const manifest_set_t *set, int with_obj, act__docs_t *out) {
  for (size_t i = 0; i < set->ndocs; i++) {
    if (set->docs[i].is_empty) continue;
    int rc = act__add_doc(a, &set->docs[i], with_obj, out);
    if (rc) return rc;
  }
  return 0;
}

static int act__docs_from_manifest(act_t *a, const char *manifest, manifest_order_t order, int with_obj,
                                   act__docs_t *out) {
  manifest_set_t set = {0};
  manifest_error_t merr = {0};
  int rc = manifest_parse_release(manifest ? manifest : "", manifest ? strlen(manifest) : 0, order, &set, &merr);
  if (rc) {
    buf_reset(&a->err);
    buf_printf(&a->err, "reading the stored manifest: %s", merr.message[0] ? merr.message : "out of memory");
    return rc == -12 ? -12 : -22;
  }
  rc = act__docs_from_set(a, &set, with_obj, out);
  manifest_set_free(&set);
  return rc;
}

/* The namespace an object of d lives in ("" for cluster-scoped), for a release in ns. */
static const char *act__doc_ns(const act__doc_t *d, const char *ns) {
  if (!d->namespaced) return "";
  return *d->ns ? d->ns : ns;
}

static void act__doc_path(act_t *a, const act__doc_t *d, const char *ns) {
  buf_reset(&a->p->path);
  const char *n = act__doc_ns(d, ns);
  kube_path(&a->p->path, d->group, d->version, d->resource, *n ? n : NULL, d->name, NULL);
}

static int act__same_object(const act__doc_t *x, const char *xns, const act__doc_t *y, const char *yns) {
  return x->mapped && y->mapped && !strcmp(x->group, y->group) && !strcmp(x->resource, y->resource) &&
         !strcmp(x->name, y->name) && !strcmp(act__doc_ns(x, xns), act__doc_ns(y, yns));
}

/* ---- finishing ---- */

static void act__fail(act_t *a, const char *fmt, ...) {
  buf_reset(&a->err);
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(&a->err, fmt, ap);
  va_end(ap);
  act__finish(a, -22);
}

/* cleanupOnFail (Helm's failRelease): after the failed record, the objects this upgrade created (that
 * did not exist before it) are deleted, in the order they were applied; an object already gone is
 * fine, any other failure is added to the upgrade's error as Helm reports it. */
static void act__cleanup_next(act_t *a);

static void act__cleanup_deleted(const kube_response_t *res, void *data) {
  act_t *a = data;
  act__priv_t *p = a->p;
  act__doc_t *d = &p->want.v[p->ci];
  p->req = NULL;
  if (!kube_response_ok(res) && res->status != 404 && res->status != 409) {
    buf_t *e = &p->cerr;
    buf_puts(e, e->len ? ", " : "");
    buf_printf(e, "deleting %s \"%s\": %s", d->kind, d->name, res->errmsg ? res->errmsg : uv_strerror(res->err));
  } else if (kube_response_ok(res)) {
    a->deleted++;
  }
  p->ci++;
  act__cleanup_next(a);
}

static void act__cleanup_next(act_t *a) {
  act__priv_t *p = a->p;
  for (; p->ci < p->want.n && !kube_client_is_closing(a->env->c); p->ci++) {
    act__doc_t *d = &p->want.v[p->ci];
    if (!d->created_uid) continue;
    LOG_I("cleanup on fail: deleting an object the failed upgrade created", "release", a->log_key, "kind", d->kind,
          "name", d->name);
    kube_delete_opts_t o = {.propagation = "Background", .precondition_uid = d->created_uid, .grace_period_seconds = -1};
    act__doc_path(a, d, a->ns);
    if ((p->req = kube_delete_ex(a->env->c, p->path.data, &o, act__cleanup_deleted, a))) return;
  }
  if (p->cerr.len) {
    buf_t e = BUF_INIT;
    buf_printf(&e, "an error occurred while cleaning up resources. original upgrade error: %s: unable to cleanup "
               "resources: %s", a->err.data ? a->err.data : "", p->cerr.data);
    buf_free(&a->err);
    a->err = e;
  }
  p->cb(a, p->data);
}

/* What follows a failure once it is recorded: the cleanup, or the callback. */
static void act__after_failure(act_t *a) {
  act__priv_t *p = a->p;
  if (a->cleanup_on_fail && a->kind == ACT_UPGRADE && a->rc != UV_ECANCELED) {
    p->ci = 0;
    act__cleanup_next(a);
    return;
  }
  p->cb(a, p->data);
}

static void act__record_failed_written(const kube_response_t *res, void *data) {
  act_t *a = data;
  a->p->req = NULL;
  if (!kube_response_ok(res))
    LOG_W("cannot record the failed release", "release", a->log_key, "error", res->errmsg ? res->errmsg : "");
  act__after_failure(a);
}

/* Tells the caller the action waits (on) or goes on (off), when that changed. */
static void act__waiting(act_t *a, int on) {
  if (a->p->told_waiting == on) return;
  a->p->told_waiting = on;
  if (a->waiting) a->waiting(a, on != 0, a->waiting_data);
}

/* Ends the action. A failure after the pending record was written records the release as failed,
 * with Helm's description, before the callback. A cancelled action writes nothing more (the lease
 * may be lost): its pending record carries our owner annotation and is taken over next time. */
static void act__finish(act_t *a, int rc) {
  act__priv_t *p = a->p;
  assert(!p->finished);
  act__waiting(a, 0);
  if (p->pre_req) { /* the action never ends before its pre-patch is answered */
    p->parked = 1;
    p->parked_rc = rc;
    return;
  }
  if (p->pre_rc && rc != UV_ECANCELED) { /* it came first: its failure is the action's */
    rc = p->pre_rc;
    a->reason = rc == UV_ECANCELED ? "Cancelled" : "PrePatchFailed";
    buf_reset(&a->err);
    buf_puts(&a->err, p->pre_err.data ? p->pre_err.data : "");
  }
  p->finished = 1;
  for (size_t i = 0; i < p->want.n; i++) act__kw_stop(&p->want.v[i]); /* no readiness wait outlives the action */
  a->rc = rc;
  if (rc && !a->reason) a->reason = rc == UV_ECANCELED ? "Cancelled" : p->transient ? "Transient" : act__fail_reason(a->kind);
  if (rc && rc != UV_ECANCELED && a->have_next && p->stored_pending && a->next.secret_name && !p->pre_rc &&
      !kube_client_is_closing(a->env->c)) {
    buf_t d = BUF_INIT;
    static const char *const what[] = {"Release", "Upgrade", "Rollback", "Uninstall", "Upgrade", "Test", "Drift"};
    buf_printf(&d, "%s \"%s\" failed: %s", what[a->kind], a->release_name, a->err.data ? a->err.data : "");
    record_set_status(&a->next, "failed", d.data);
    buf_free(&d);
    char *body = record_secret_json(&a->next, a->storage_ns, 0, a->owner_uid);
    buf_reset(&p->path);
    kube_path(&p->path, "", "v1", "secrets", a->storage_ns, a->next.secret_name, NULL);
    p->req = body ? kube_update(a->env->c, p->path.data, body, act__record_failed_written, a) : NULL;
    free(body);
    if (p->req) return;
  }
  if (rc) act__after_failure(a);
  else p->cb(a, p->data);
}

/* An API failure: "<what>: <errmsg>". Returns -1 after finishing. */
static int act__check(act_t *a, const kube_response_t *res, const char *what) {
  a->p->req = NULL;
  if (a->p->cancelled || res->err == UV_ECANCELED) {
    act__finish(a, UV_ECANCELED);
    return -1;
  }
  if (kube_response_ok(res)) return 0;
  /* An API failure before anything was stored is retried as it is; after, the release failed. */
  a->p->transient = (res->err || res->status >= 500 || res->status == 429) && !a->p->stored_pending;
  act__fail(a, "%s: %s", what, res->errmsg ? res->errmsg : uv_strerror(res->err));
  return -1;
}

static void act__send_failed(act_t *a) {
  buf_reset(&a->err);
  buf_puts(&a->err, "cannot send a request (out of memory, or the client is closing)");
  act__finish(a, UV_ENOMEM);
}

/* Starts a request; the callback runs later. On out-of-memory, finishes. */
static void act__sent(act_t *a, kube_req_t *req) {
  a->p->req = req;
  if (!req) act__send_failed(a);
}

/* ---- the pre-patch: sent as the action begins, answered before its first write ---- */

static void act__pre_gate(act_t *a, act__step_t then);

static void act__pre_done(const kube_response_t *res, void *data) {
  act_t *a = data;
  act__priv_t *p = a->p;
  p->pre_req = NULL;
  a->pre_pending = false;
  a->pre_status = res->err ? 0 : res->status;
  if (res->err == UV_ECANCELED) {
    p->pre_rc = UV_ECANCELED;
  } else if (kube_response_ok(res)) {
    a->pre_patched = true;
  } else {
    p->pre_rc = -22;
    buf_puts(&p->pre_err, res->errmsg ? res->errmsg : uv_strerror(res->err));
  }
  if (p->pre_quiet) return;
  if (p->parked) {
    p->parked = 0;
    act__finish(a, p->cancelled ? UV_ECANCELED : p->parked_rc);
    return;
  }
  act__step_t then = p->after_pre;
  p->after_pre = NULL;
  if (then) act__pre_gate(a, then);
}

/* Sends the pre-patch, if any. -1 after finishing (it could not be sent). */
static int act__pre_send(act_t *a) {
  if (!a->pre_patch_path) return 0;
  kube_client_t *c = a->pre_patch_client ? a->pre_patch_client : a->env->c;
  a->p->pre_req = kube_merge_patch(c, a->pre_patch_path, a->pre_patch_body ? a->pre_patch_body : "{}", act__pre_done, a);
  if (!a->p->pre_req) {
    act__send_failed(a);
    return -1;
  }
  a->pre_pending = true;
  return 0;
}

/* Before the action's first write: then once the pre-patch (if any) is answered 2xx; else the
 * action ends with its failure. */
static void act__pre_gate(act_t *a, act__step_t then) {
  act__priv_t *p = a->p;
  if (p->pre_req) {
    p->after_pre = then;
    return;
  }
  if (p->cancelled || p->pre_rc) {
    act__finish(a, p->cancelled ? UV_ECANCELED : p->pre_rc);
    return;
  }
  then(a);
}

/* ---- timers and object watches ---- */

static void act__timer_closed(uv_handle_t *h) { free(h); }

/* The timer in *slot, made on first use (its own allocation, freed in its close callback). */
static uv_timer_t *act__timer(act_t *a, uv_timer_t **slot) {
  if (!*slot && (*slot = malloc(sizeof **slot))) {
    uv_timer_init(a->env->loop, *slot);
    (*slot)->data = a;
  }
  return *slot;
}

/* Watches the one object d names (a field selector on its name), from its current state. */
static kube_watch_t *act__watch_object(act_t *a, const act__doc_t *d, kube_watch_event_cb ev, kube_watch_end_cb end) {
  buf_t q = BUF_INIT, sel = BUF_INIT;
  const char *n = act__doc_ns(d, a->ns);
  kube_path(&q, d->group, d->version, d->resource, *n ? n : NULL, NULL, NULL);
  buf_printf(&sel, "metadata.name=%s", d->name);
  kube_query_add(&q, "fieldSelector", sel.data);
  kube_query_add(&q, "watch", "1");
  kube_watch_t *w = q.data && sel.data ? kube_watch_start(a->env->c, q.data, ev, end, a) : NULL;
  buf_free(&q);
  buf_free(&sel);
  return w;
}

/* Writes record r back (an update of its Secret, annotated with owner), then cb. */
static void act__put_record(act_t *a, const record_t *r, const char *owner, kube_response_cb cb) {
  char *body = record_secret_json(r, a->storage_ns, 0, owner);
  buf_reset(&a->p->path);
  kube_path(&a->p->path, "", "v1", "secrets", a->storage_ns, r->secret_name, NULL);
  if (!body) {
    act__finish(a, UV_ENOMEM);
    return;
  }
  act__sent(a, kube_update(a->env->c, a->p->path.data, body, cb, a));
  free(body);
}

/* ---- kind mapping ---- */

static void act__map_next(act_t *a);

static void act__map_timer(uv_timer_t *t) {
  act_t *a = t->data;
  a->p->timer_pending = 0;
  if (a->p->cancelled) {
    act__finish(a, UV_ECANCELED);
    return;
  }
  discovery_invalidate(a->env->d);
  act__map_next(a);
}

/* A discovery look-up cannot be cancelled: it answers a token, which a cancelled action leaves behind. */
typedef struct act__tok_s {
  act_t *a;
} act__tok_t;

static void act__mapped(int err, const char *errmsg, const discovery_mapping_t *m, void *data);

static void act__mapped_tok(int err, const char *errmsg, const discovery_mapping_t *m, void *data) {
  act__tok_t *t = data;
  act_t *a = t->a;
  free(t);
  if (!a) return; /* cancelled meanwhile: finished already */
  a->p->tok = NULL;
  act__mapped(err, errmsg, m, a);
}

static void act__mapped(int err, const char *errmsg, const discovery_mapping_t *m, void *data) {
  act_t *a = data;
  act__priv_t *p = a->p;
  p->disc_pending = 0;
  if (p->cancelled) {
    act__finish(a, UV_ECANCELED);
    return;
  }
  act__doc_t *d = &p->mapping->v[p->i];
  if (err) {
    if (p->mapping == &p->want || p->mapping == &p->crds) {
      /* A kind whose CRD was just applied: served once the CRD is established. */
      if (err == UV_ENOENT && p->crds_applied && p->map_tries < ACT_CRD_WAIT_TRIES) {
        p->map_tries++;
        if (act__timer(a, &p->timer)) {
          p->timer_pending = 1;
          uv_timer_start(p->timer, act__map_timer, ACT_CRD_WAIT_MS, 0);
          return;
        }
      }
      if (err == UV_ENOENT)
        act__fail(a, "%s: no matches for kind \"%s\" in version \"%s\" (is its CRD installed?)", d->source, d->kind,
                  d->api_version);
      else {
        p->transient = !p->stored_pending; /* discovery did not answer: the API's failure, retried */
        act__fail(a, "%s: resolving kind %s %s: %s", d->source, d->api_version, d->kind, errmsg ? errmsg : "");
      }
      return;
    }
    /* An old object whose kind is gone (its CRD was removed): nothing left to delete. */
    LOG_W("skipping object of unknown kind", "release", a->log_key, "kind", d->kind, "apiVersion", d->api_version);
  } else {
    d->group = strdup(m->group);
    d->version = strdup(m->version);
    d->resource = strdup(m->resource);
    d->namespaced = m->namespaced;
    d->mapped = d->group && d->version && d->resource;
  }
  p->i++;
  act__map_next(a);
}

static void act__map_next(act_t *a) {
  act__priv_t *p = a->p;
  while (p->i < p->mapping->n && p->mapping->v[p->i].mapped) p->i++;
  if (p->i >= p->mapping->n) {
    p->i = 0;
    p->after_map(a);
    return;
  }
  act__doc_t *d = &p->mapping->v[p->i];
  /* Cached kinds are answered without a callback round trip through the loop. */
  discovery_mapping_t m;
  if (discovery_lookup(a->env->d, d->api_version, d->kind, &m) == 0) {
    p->disc_pending = 1;
    act__mapped(0, NULL, &m, a);
    return;
  }
  act__tok_t *t = malloc(sizeof *t);
  if (!t || (t->a = a, discovery_resolve(a->env->d, d->api_version, d->kind, act__mapped_tok, t))) {
    free(t);
    act__finish(a, UV_ENOMEM);
    return;
  }
  p->tok = t;
  p->disc_pending = 1;
}

static void act__map(act_t *a, act__docs_t *docs, act__step_t then) {
  a->p->mapping = docs;
  a->p->after_map = then;
  a->p->i = 0;
  act__map_next(a);
}

/* ---- ownership (Helm's checkOwnership) ---- */

/* Appends to msg why obj's metadata does not name this release (installed into ns); 0 when it does. */
static int act__ownership(act_t *a, const cJSON *obj, const char *ns, buf_t *msg) {
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
  const cJSON *labels = cJSON_GetObjectItemCaseSensitive(meta, "labels");
  const cJSON *ann = cJSON_GetObjectItemCaseSensitive(meta, "annotations");
  struct { const cJSON *m; const char *what, *k, *v; } req[] = {
      {labels, "label", "app.kubernetes.io/managed-by", "Helm"},
      {ann, "annotation", "meta.helm.sh/release-name", a->release_name},
      {ann, "annotation", "meta.helm.sh/release-namespace", ns},
  };
  int bad = 0;
  for (size_t i = 0; i < sizeof req / sizeof *req; i++) {
    const char *have = act__str(req[i].m, req[i].k);
    if (have && !strcmp(have, req[i].v)) continue;
    buf_puts(msg, bad++ ? "; " : "invalid ownership metadata; ");
    if (!have) buf_printf(msg, "%s validation error: missing key \"%s\": must be set to \"%s\"", req[i].what, req[i].k, req[i].v);
    else buf_printf(msg, "%s validation error: key \"%s\" must equal \"%s\": current value is \"%s\"", req[i].what, req[i].k,
                    req[i].v, have);
  }
  return bad;
}

static void act__owner_next(act_t *a);

static int act__in_old(act_t *a, const act__doc_t *w) {
  for (size_t k = 0; k < a->p->old.n; k++)
    if (act__same_object(&a->p->old.v[k], a->p->old_ns, w, a->ns)) return 1;
  return 0;
}

/* Notes on d what the answer about it found (nothing when the object is absent, or ours). 0, or -12. */
static int act__owner_note(act_t *a, act__doc_t *d, const kube_response_t *res) {
  if (res->status == 404) return 0;
  if (!kube_response_ok(res)) {
    d->ofailed = 1;
    d->ocheck = strdup(res->errmsg ? res->errmsg : "");
  } else {
    cJSON *obj = cJSON_ParseWithLength(res->body, res->body_len);
    buf_t why = BUF_INIT;
    int bad = obj ? act__ownership(a, obj, a->ns, &why) : 0;
    cJSON_Delete(obj);
    if (!bad) return 0;
    d->ocheck = buf_steal(&why);
  }
  if (!d->ocheck) return -12;
  size_t i = (size_t)(d - a->p->want.v);
  if ((d->ofailed || !a->take_ownership) && i < a->p->obad) a->p->obad = i;
  return 0;
}

/* Cancels the ownership GETs in flight; their callbacks only take note, the caller goes on. */
static void act__owner_stop(act_t *a) {
  act__priv_t *p = a->p;
  p->ostopping = 1;
  for (size_t k = 0; k < ACT_OWNER_GETS; k++)
    if (p->oget[k].req) kube_request_cancel(p->oget[k].req);
  p->ostopping = 0;
}

static void act__owner_got(const kube_response_t *res, void *data) {
  act__oget_t *s = data;
  act_t *a = s->a;
  act__priv_t *p = a->p;
  act__doc_t *d = s->d;
  s->d = NULL;
  s->req = NULL;
  p->ogets--;
  int rc = res->err == UV_ECANCELED ? UV_ECANCELED : act__owner_note(a, d, res);
  if (rc && !p->ostop) p->ostop = rc == -12 ? UV_ENOMEM : rc;
  if (p->ostopping) return;
  if (p->ostop) act__owner_stop(a);
  act__owner_next(a);
}

static void act__write_pending(act_t *a);

/* The answers in document order, as Helm checks one object after another: the first failure is
 * the error; an object not ours is taken over (take_ownership), or refused. */
static void act__owner_judge(act_t *a) {
  act__priv_t *p = a->p;
  for (size_t i = 0; i < p->want.n; i++) {
    act__doc_t *d = &p->want.v[i];
    if (!d->ocheck) continue;
    if (d->ofailed) {
      act__fail(a, "could not get information about the resource %s \"%s\" in namespace \"%s\": %s", d->kind, d->name,
                act__doc_ns(d, a->ns), d->ocheck);
      return;
    }
    if (!a->take_ownership) {
      act__fail(a, "Unable to continue with %s: %s \"%s\" in namespace \"%s\" exists and cannot be imported into the "
                "current release: %s", a->kind == ACT_INSTALL ? "install" : "update", d->kind, d->name,
                act__doc_ns(d, a->ns), d->ocheck);
      return;
    }
    LOG_I("taking ownership", "release", a->log_key, "kind", d->kind, "name", d->name, "was", d->ocheck);
  }
  p->i = 0;
  act__pre_gate(a, act__write_pending);
}

/* Objects that are new to the release must not belong to anyone else (Helm checks before it
 * creates); those the previous revision held are ours already. Their GETs go out together, up to
 * ACT_OWNER_GETS at a time (the next as one is answered), none past an object known to fail; once
 * the last is answered the answers are judged in order, or the action finishes (cancelled, or a
 * send failed: the others were cancelled). */
static void act__owner_next(act_t *a) {
  act__priv_t *p = a->p;
  while (!p->cancelled && !p->ostop && p->ogets < ACT_OWNER_GETS && p->i < p->obad) {
    act__doc_t *d = &p->want.v[p->i++];
    if (act__in_old(a, d)) continue;
    act__oget_t *s = p->oget;
    while (s->d) s++;
    act__doc_path(a, d, a->ns);
    if (!(s->req = kube_get(a->env->c, p->path.data, act__owner_got, s))) {
      p->ostop = UV_ENOMEM;
      act__owner_stop(a);
      break;
    }
    s->a = a;
    s->d = d;
    p->ogets++;
  }
  if (p->ogets) return; /* the last answer goes on */
  if (p->cancelled || p->ostop == UV_ECANCELED) act__finish(a, UV_ECANCELED);
  else if (p->ostop) act__send_failed(a);
  else act__owner_judge(a);
}

/* ---- records ---- */

static void act__apply_next(act_t *a);
static void act__apply_start(act_t *a);
static void act__supersede_next(act_t *a);
static void act__post_hooks(act_t *a);
static void act__hooks(act_t *a, release_t *rel, const char *event, act__step_t then);
static void act__trim_next(act_t *a);

static void act__pending_written(const kube_response_t *res, void *data) {
  act_t *a = data;
  if (res->status == 409) { /* another writer got this revision first */
    a->p->req = NULL;
    a->have_next = false; /* not ours: never marked failed */
    record_free(&a->next);
    a->reason = "Conflict";
    act__fail(a, "release record %s.v%lld was written concurrently (another operation on this release?)",
              a->release_name, a->version);
    return;
  }
  if (act__check(a, res, "writing the release record")) return;
  a->p->stored_pending = 1;
  static const char *const pre[] = {"pre-install", "pre-upgrade", "pre-rollback"};
  act__hooks(a, a->next.rel, pre[a->kind], act__apply_start);
}

static void act__apply_start(act_t *a) {
  a->p->i = 0;
  act__apply_next(a);
}

static void act__write_pending(act_t *a) {
  act__priv_t *p = a->p;
  static const char *const st[] = {"pending-install", "pending-upgrade", "pending-rollback"};
  int rc;
  if (a->kind == ACT_ROLLBACK) {
    char desc[64];
    snprintf(desc, sizeof desc, "Rollback to %lld", a->rollback_to);
    rc = record_copy(p->target, a->version, st[2], desc, a->nrecs ? &a->recs[0] : NULL, &a->next, &a->err);
    if (!rc) a->next.rel->info->rollback_revision = a->rollback_to; /* as helm rollback records it */
  } else {
    record_in_t in = {.release_name = a->release_name, .namespace = a->ns, .chart = a->chart, .config = a->config,
                      .set = a->set};
    rc = record_new(&in, a->version, st[a->kind == ACT_UPGRADE], a->kind == ACT_UPGRADE ? "Preparing upgrade"
                                                                                          : "Initial install underway",
                    a->nrecs ? &a->recs[0] : NULL, &a->next, &a->err);
    /* Replacing is client-side apply to Helm 4 (it refuses --force-replace with server-side apply). */
    if (!rc && a->force && a->kind == ACT_UPGRADE) {
      char *m = strdup("csa");
      if (!m) rc = -12;
      else {
        free(a->next.rel->apply_method);
        a->next.rel->apply_method = m;
      }
    }
  }
  if (rc) {
    act__finish(a, rc);
    return;
  }
  a->have_next = true;
  /* The record carries its owner as the listed ones do: a later write of it (the test results,
   * a supersede) keeps the annotation. */
  if (a->owner_uid && !a->next.owner_uid && !(a->next.owner_uid = strdup(a->owner_uid))) {
    act__finish(a, UV_ENOMEM);
    return;
  }
  char *body = record_secret_json(&a->next, a->storage_ns, !p->resume, a->owner_uid);
  buf_reset(&p->path);
  if (!body) {
    act__finish(a, UV_ENOMEM);
    return;
  }
  /* A Secret holds at most 1 MiB of data: a bigger record would be refused after the objects were
   * applied, or leave a record nobody can read back. Checked before anything is written. */
  size_t stored = record_stored_size(body);
  if (stored > ACT_MAX_RECORD_BYTES) {
    free(body);
    a->have_next = false;
    record_free(&a->next);
    a->reason = "RecordTooLarge";
    act__fail(a, "the release record %s.v%lld is %zu bytes compressed, more than the %d bytes a Secret can hold "
              "(the chart and its rendered manifests are too big to be stored as Helm stores releases)",
              a->release_name, a->version, stored, ACT_MAX_RECORD_BYTES);
    return;
  }
  if (p->resume) {
    kube_path(&p->path, "", "v1", "secrets", a->storage_ns, a->next.secret_name, NULL);
    act__sent(a, kube_update(a->env->c, p->path.data, body, act__pending_written, a));
  } else {
    kube_path(&p->path, "", "v1", "secrets", a->storage_ns, NULL, NULL);
    act__sent(a, kube_create(a->env->c, p->path.data, body, act__pending_written, a));
  }
  free(body);
}

/* ---- apply ---- */

static void act__prune_next(act_t *a);

static void act__applied(const kube_response_t *res, void *data) {
  act_t *a = data;
  act__doc_t *d = &a->p->want.v[a->p->i];
  int replaced = a->p->replacing;
  a->p->replacing = 0;
  if (!kube_response_ok(res) && !a->p->cancelled && res->err != UV_ECANCELED) {
    a->p->req = NULL;
    if (replaced)
      act__fail(a, "%s: replacing %s \"%s\": failed to replace object: %s", d->source, d->kind, d->name,
                res->errmsg ? res->errmsg : "");
    else act__fail(a, "%s: applying %s \"%s\": %s", d->source, d->kind, d->name, res->errmsg ? res->errmsg : "");
    return;
  }
  if (act__check(a, res, "applying")) return;
  int want_live = a->wait && ready_kind_needs_watch(d->group, d->kind, READY_WAIT);
  /* 201: the apply (or forced create) made the object; Helm's "created" list is those. */
  if (want_live || (res->status == 201 && a->cleanup_on_fail)) {
    cJSON *live = cJSON_ParseWithLength(res->body, res->body_len);
    const char *uid = act__str(cJSON_GetObjectItemCaseSensitive(live, "metadata"), "uid");
    if (res->status == 201 && a->cleanup_on_fail && uid && !d->created_uid && !(d->created_uid = strdup(uid))) {
      cJSON_Delete(live);
      act__finish(a, UV_ENOMEM);
      return;
    }
    cJSON_Delete(d->live);
    d->live = want_live ? live : NULL;
    if (!want_live) cJSON_Delete(live);
  }
  a->applied++;
  a->p->i++;
  act__apply_next(a);
}

/* Force (Helm's --force-replace, which Helm 4 allows only with client-side apply): an object that
 * exists is replaced whole (a PUT at its current resourceVersion, as Helm's helper.Replace), one that
 * does not is created. A refused PUT fails the upgrade, as it does Helm's. */
static void act__replace_got(const kube_response_t *res, void *data) {
  act_t *a = data;
  act__priv_t *p = a->p;
  act__doc_t *d = &p->want.v[p->i];
  p->req = NULL;
  if (p->cancelled || res->err == UV_ECANCELED) {
    act__finish(a, UV_ECANCELED);
    return;
  }
  if (res->status != 404 && !kube_response_ok(res)) {
    act__fail(a, "%s: could not get information about the resource %s \"%s\": %s", d->source, d->kind, d->name,
              res->errmsg ? res->errmsg : uv_strerror(res->err));
    return;
  }
  cJSON *meta = cJSON_GetObjectItemCaseSensitive(d->obj, "metadata");
  const char *rv = NULL;
  cJSON *live = res->status == 404 ? NULL : cJSON_ParseWithLength(res->body, res->body_len);
  rv = act__str(cJSON_GetObjectItemCaseSensitive(live, "metadata"), "resourceVersion");
  if (meta && rv) {
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
    cJSON_AddStringToObject(meta, "resourceVersion", rv);
  }
  cJSON_Delete(live);
  char *body = cJSON_PrintUnformatted(d->obj);
  if (!body) {
    act__finish(a, UV_ENOMEM);
    return;
  }
  buf_reset(&p->path);
  const char *ns = act__doc_ns(d, a->ns);
  kube_path(&p->path, d->group, d->version, d->resource, *ns ? ns : NULL, res->status == 404 ? NULL : d->name, NULL);
  kube_query_add(&p->path, "fieldManager", a->env->field_manager);
  kube_query_add(&p->path, "fieldValidation", "Strict");
  p->replacing = 1;
  act__sent(a, res->status == 404 ? kube_create(a->env->c, p->path.data, body, act__applied, a)
                                  : kube_update(a->env->c, p->path.data, body, act__applied, a));
  free(body);
}

/* Server-side applies d (its namespace filled in), or dry-runs the apply; cb gets the answer. */
static void act__apply_doc(act_t *a, act__doc_t *d, int dry_run, kube_response_cb cb) {
  act__priv_t *p = a->p;
  const char *ns = act__doc_ns(d, a->ns);
  cJSON *meta = cJSON_GetObjectItemCaseSensitive(d->obj, "metadata");
  if (*ns && meta && !cJSON_GetObjectItemCaseSensitive(meta, "namespace")) cJSON_AddStringToObject(meta, "namespace", ns);
  act__doc_path(a, d, a->ns);
  if (dry_run) kube_query_add(&p->path, "dryRun", "All");
  char *body = cJSON_PrintUnformatted(d->obj);
  if (!body) {
    act__finish(a, UV_ENOMEM);
    return;
  }
  act__sent(a, kube_apply(a->env->c, p->path.data, body, a->env->field_manager, true, cb, a));
  free(body);
}

static void act__apply_next(act_t *a) {
  act__priv_t *p = a->p;
  if (p->i >= p->want.n) {
    p->i = 0;
    act__prune_next(a);
    return;
  }
  act__doc_t *d = &p->want.v[p->i];
  /* The readiness wait on the shared watch begins before the write, so that no later state is missed. */
  if (a->wait && a->env->waits && !d->kw && ready_kind_needs_watch(d->group, d->kind, READY_WAIT))
    d->kw = kwait_begin(a->env->waits, d->group, d->version, d->resource, act__doc_ns(d, a->ns), d->name);
  if (a->force && a->kind == ACT_UPGRADE) {
    const char *ns = act__doc_ns(d, a->ns);
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(d->obj, "metadata");
    if (*ns && meta && !cJSON_GetObjectItemCaseSensitive(meta, "namespace")) cJSON_AddStringToObject(meta, "namespace", ns);
    act__doc_path(a, d, a->ns);
    act__sent(a, kube_get(a->env->c, p->path.data, act__replace_got, a));
    return;
  }
  act__apply_doc(a, d, 0, act__applied);
}

/* ---- deleting objects that belong to the release (prune, uninstall) ---- */

static void act__del_next(act_t *a);

typedef struct act__delstate_s {
  act__docs_t *docs;
  const char *ns;
  act__step_t then;
  int (*skip)(act_t *a, const act__doc_t *d);
  const char *what;
} act__delstate_t;

static act__delstate_t *act__ds(act_t *a);

static void act__deleted(const kube_response_t *res, void *data) {
  act_t *a = data;
  act__delstate_t *s = act__ds(a);
  act__doc_t *d = &s->docs->v[a->p->i];
  if (res->status == 404 || res->status == 409) { /* gone, or replaced by another object meanwhile */
    a->p->req = NULL;
  } else if (!kube_response_ok(res) && !a->p->cancelled && res->err != UV_ECANCELED) {
    a->p->req = NULL;
    act__fail(a, "%s: deleting %s \"%s\": %s", s->what, d->kind, d->name, res->errmsg ? res->errmsg : "");
    return;
  } else {
    if (act__check(a, res, "deleting")) return;
    a->deleted++;
    if (a->p->del_uid) {
      d->deleted_uid = a->p->del_uid;
      a->p->del_uid = NULL;
    }
  }
  free(a->p->del_uid);
  a->p->del_uid = NULL;
  a->p->i++;
  act__del_next(a);
}

static void act__del_got(const kube_response_t *res, void *data) {
  act_t *a = data;
  act__priv_t *p = a->p;
  act__delstate_t *s = act__ds(a);
  act__doc_t *d = &s->docs->v[p->i];
  if (res->status == 404) {
    p->req = NULL;
    p->i++;
    act__del_next(a);
    return;
  }
  if (act__check(a, res, s->what)) return;
  cJSON *obj = cJSON_ParseWithLength(res->body, res->body_len);
  buf_t why = BUF_INIT;
  int bad = !obj || act__ownership(a, obj, s->ns, &why);
  const cJSON *uid = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "uid");
  if (bad) {
    /* Never delete what another release (or nobody) owns, whatever a record says. */
    LOG_W("not deleting an object that does not belong to the release", "release", a->log_key, "kind", d->kind,
          "name", d->name, "namespace", act__doc_ns(d, s->ns), "why", why.data ? why.data : "unreadable");
    buf_free(&why);
    cJSON_Delete(obj);
    p->i++;
    act__del_next(a);
    return;
  }
  buf_free(&why);
  kube_delete_opts_t o = {.propagation = a->propagation ? a->propagation : "Background",
                          .precondition_uid = cJSON_IsString(uid) ? uid->valuestring : NULL, .grace_period_seconds = -1};
  free(p->del_uid);
  p->del_uid = a->kind == ACT_UNINSTALL && a->wait && cJSON_IsString(uid) ? strdup(uid->valuestring) : NULL;
  act__doc_path(a, d, s->ns);
  LOG_I("deleting", "release", a->log_key, "kind", d->kind, "name", d->name, "namespace", act__doc_ns(d, s->ns));
  act__sent(a, kube_delete_ex(a->env->c, p->path.data, &o, act__deleted, a));
  cJSON_Delete(obj);
}

static void act__del_next(act_t *a) {
  act__priv_t *p = a->p;
  act__delstate_t *s = act__ds(a);
  while (p->i < s->docs->n) {
    act__doc_t *d = &s->docs->v[p->i];
    if (d->mapped && !d->keep && !(s->skip && s->skip(a, d))) {
      act__doc_path(a, d, s->ns);
      act__sent(a, kube_get(a->env->c, p->path.data, act__del_got, a));
      return;
    }
    p->i++;
  }
  p->i = 0;
  s->then(a);
}

/* One deletion pass at a time per action: its state lives beside the private part. */
typedef struct act__priv_full_s {
  act__priv_t p;
  act__delstate_t del;
} act__priv_full_t;

static act__delstate_t *act__ds(act_t *a) { return &((act__priv_full_t *)a->p)->del; }

static void act__delete_docs(act_t *a, act__docs_t *docs, const char *ns, int (*skip)(act_t *, const act__doc_t *),
                             const char *what, act__step_t then) {
  *act__ds(a) = (act__delstate_t){.docs = docs, .ns = ns, .then = then, .skip = skip, .what = what};
  a->p->i = 0;
  act__del_next(a);
}

/* Prune: old objects that the new revision does not hold, addressed where they were applied. */
static int act__still_wanted(act_t *a, const act__doc_t *o) {
  for (size_t i = 0; i < a->p->want.n; i++)
    if (act__same_object(&a->p->want.v[i], a->ns, o, a->p->old_ns)) return 1;
  return 0;
}

static void act__prune_next(act_t *a) {
  act__delete_docs(a, &a->p->old, a->p->old_ns, act__still_wanted, "deleting an object that left the manifest",
                   act__post_hooks);
}

static void act__supersede_start(act_t *a) {
  a->p->i = 0;
  act__supersede_next(a);
}

static void act__post_hooks_run(act_t *a) {
  static const char *const post[] = {"post-install", "post-upgrade", "post-rollback"};
  act__hooks(a, a->next.rel, post[a->kind], act__supersede_start);
}

static void act__wait(act_t *a, act__step_t then);

/* Helm waits for the objects before it runs the post hooks. */
static void act__post_hooks(act_t *a) { act__wait(a, act__post_hooks_run); }

/* ---- supersede, deployed, trim ---- */

static void act__record_updated(const kube_response_t *res, void *data) {
  act_t *a = data;
  if (act__check(a, res, "updating a release record")) return;
  a->p->i++;
  act__supersede_next(a);
}

static void act__mark_deployed(act_t *a);

static void act__supersede_next(act_t *a) {
  act__priv_t *p = a->p;
  while (p->i < a->nrecs) {
    record_t *r = &a->recs[p->i];
    if (r->version != a->version && !strcmp(r->status, "deployed")) {
      record_set_status(r, "superseded", NULL);
      act__put_record(a, r, r->owner_uid, act__record_updated);
      return;
    }
    p->i++;
  }
  act__mark_deployed(a);
}

static void act__deployed_written(const kube_response_t *res, void *data) {
  act_t *a = data;
  if (act__check(a, res, "recording the deployed release")) return;
  a->p->stored_pending = 0;
  LOG_I(a->kind == ACT_INSTALL ? "installed" : a->kind == ACT_UPGRADE ? "upgraded" : "rolled back", "release", a->log_key,
        "revision", a->next.secret_name);
  a->p->i = 0;
  act__trim_next(a);
}

static void act__mark_deployed(act_t *a) {
  static const char *const done[] = {"Install complete", "Upgrade complete"};
  char desc[64];
  if (a->kind == ACT_ROLLBACK) snprintf(desc, sizeof desc, "Rollback to %lld", a->rollback_to);
  record_set_status(&a->next, "deployed", a->kind == ACT_ROLLBACK ? desc : done[a->kind == ACT_UPGRADE]);
  act__put_record(a, &a->next, a->owner_uid, act__deployed_written);
}

/* Keeps at most max_history records (the new one included), deleting the oldest first. */
static void act__trimmed(const kube_response_t *res, void *data) {
  act_t *a = data;
  a->p->req = NULL;
  if (a->p->cancelled || res->err == UV_ECANCELED) {
    act__finish(a, UV_ECANCELED);
    return;
  }
  if (!kube_response_ok(res) && res->status != 404)
    LOG_W("cannot delete an old release record", "release", a->log_key, "error", res->errmsg ? res->errmsg : "");
  else
    a->recs[a->p->i].version = -1; /* gone */
  a->p->i++;
  act__trim_next(a);
}

static void act__trim_next(act_t *a) {
  act__priv_t *p = a->p;
  size_t total = a->nrecs + (p->resume ? 0 : 1);
  size_t max = (size_t)a->max_history;
  if (max && total > max && p->i < total - max && p->i < a->nrecs && a->recs[p->i].version != a->version) {
    buf_reset(&p->path);
    kube_path(&p->path, "", "v1", "secrets", a->storage_ns, a->recs[p->i].secret_name, NULL);
    act__sent(a, kube_delete(a->env->c, p->path.data, NULL, act__trimmed, a));
    return;
  }
  act__finish(a, 0);
}

/* ---- wait for readiness (Helm 4's watcher strategy: kstatus on every applied object) ---- */

static void act__wait_next(act_t *a);

static metrics_family_t act__f_waits = {
    .name = "rudder_readiness_waits_total",
    .help = "Objects waited for until ready, by watch: one shared watch of their kind, or a watch of their own",
    .type = METRICS_COUNTER, .labels = {"watch"}};

static void act__count_wait(const char *how) {
  metrics_series_t *s = metrics_get(&act__f_waits, how);
  if (s) metrics_inc(s);
}

/* A state of d newer than the one it has, from the shared watch. */
static void act__kw_take(act__doc_t *d) {
  if (!d->kw) return;
  cJSON *n = kwait_take(d->kw, act__str(cJSON_GetObjectItemCaseSensitive(d->live, "metadata"), "resourceVersion"));
  if (n) {
    cJSON_Delete(d->live);
    d->live = n;
  }
}


/* The judgement of d as last seen: 1 ready (Current, or left out), 0 not yet, -1 failed (why in msg). */
static int act__judge(act_t *a, act__doc_t *d, buf_t *msg, int64_t *recheck) {
  ready_result_t r;
  buf_t m = BUF_INIT;
  *recheck = 0;
  if (ready_compute(d->live, READY_WAIT, (int64_t)time(NULL), &r, &m)) {
    buf_free(&m);
    return 0;
  }
  int v = r.status == READY_CURRENT ? 1 : r.status == READY_FAILED ? -1 : 0;
  *recheck = r.recheck_at;
  if (v != 1 && msg) {
    buf_reset(msg);
    ready_describe(d->kind, act__doc_ns(d, a->ns), d->name, r.status, m.data ? m.data : "", msg);
  }
  buf_free(&m);
  return v;
}

static void act__wait_end(act_t *a, int failed) {
  act__priv_t *p = a->p;
  act__waiting(a, 0);
  if (p->wtimer_pending) {
    uv_timer_stop(p->wtimer);
    p->wtimer_pending = 0;
  }
  if (failed && p->wdocs == &p->crds) {
    /* Helm's words, and the condition that says why (NamesAccepted or Established, False). */
    const act__doc_t *d = &p->wdocs->v[p->wi < p->wdocs->n ? p->wi : 0];
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(d->live, "status"), *c;
    buf_t why = BUF_INIT;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(st, "conditions")) {
      const char *t = act__str(c, "type"), *cs = act__str(c, "status"), *r = act__str(c, "reason");
      if (!why.len && t && cs && !strcmp(cs, "False") && (!strcmp(t, "NamesAccepted") || !strcmp(t, "Established")))
        buf_printf(&why, " (condition %s=False, reason %s: %s)", t, r ? r : "", act__str(c, "message") ? act__str(c, "message") : "");
    }
    act__fail(a, "%s: CustomResourceDefinition \"%s\" is not established: %s%s%s", d->source, d->name,
              p->herr.data ? p->herr.data : "", why.data ? why.data : "", p->wtimed_out ? ": context deadline exceeded" : "");
    buf_free(&why);
    return;
  }
  if (failed) {
    act__fail(a, "wait for readiness: %s", p->herr.data ? p->herr.data : "");
    return;
  }
  p->after_wait(a);
}

/* Judges the object being waited for; moves on when it is ready. */
static void act__wait_check(act_t *a) {
  act__priv_t *p = a->p;
  act__doc_t *d = &p->wdocs->v[p->wi];
  int64_t recheck;
  int v = act__judge(a, d, &p->herr, &recheck);
  if (v == 0 && !p->wtimed_out) return; /* the next event (or the re-check) decides */
  if (p->watch) {
    kube_watch_t *w = p->watch;
    p->watch = NULL;
    kube_watch_stop(w); /* its end callback moves on */
    return;
  }
  if (v == 1 && !p->wtimed_out) {
    p->wi++;
    act__wait_next(a);
    return;
  }
  act__wait_end(a, 1);
}

static void act__wait_event(kube_watch_t *w, const char *type, cJSON *obj, void *data) {
  act_t *a = data;
  act__priv_t *p = a->p;
  act__doc_t *d = &p->wdocs->v[p->wi];
  if (strcmp(type, "ADDED") && strcmp(type, "MODIFIED")) return;
  cJSON_Delete(d->live);
  d->live = kube_watch_take_object(w);
  if (!d->live) return;
  (void)obj;
  act__wait_check(a);
}

static void act__wait_watch(act_t *a);

static void act__wait_watch_end(kube_watch_t *w, const kube_response_t *res, void *data) {
  act_t *a = data;
  act__priv_t *p = a->p;
  if (p->watch == w) p->watch = NULL;
  if (p->cancelled) {
    if (p->wtimer_pending) {
      uv_timer_stop(p->wtimer);
      p->wtimer_pending = 0;
    }
    act__finish(a, UV_ECANCELED);
    return;
  }
  act__doc_t *d = &p->wdocs->v[p->wi];
  int64_t recheck;
  int v = act__judge(a, d, &p->herr, &recheck);
  if (v == 1 && !p->wtimed_out) {
    p->wi++;
    act__wait_next(a);
  } else if (v == -1 || p->wtimed_out) {
    act__wait_end(a, 1);
  } else {
    act__wait_watch(a); /* the stream ended early: watch again */
  }
}

static void act__wait_watch(act_t *a) {
  act__priv_t *p = a->p;
  p->watch = act__watch_object(a, &p->wdocs->v[p->wi], act__wait_event, act__wait_watch_end);
  if (!p->watch) {
    buf_reset(&p->herr);
    buf_puts(&p->herr, "cannot start a watch");
    act__wait_end(a, 1);
  }
}

static void act__wait_deadline(uv_timer_t *t) {
  act_t *a = t->data;
  act__priv_t *p = a->p;
  p->wtimer_pending = 0;
  p->wtimed_out = 1;
  act__doc_t *d = &p->wdocs->v[p->wi];
  int64_t recheck;
  act__judge(a, d, &p->herr, &recheck);
  if (!p->herr.len) buf_printf(&p->herr, "resource %s/%s/%s not ready", d->kind, act__doc_ns(d, a->ns), d->name);
  act__kw_stop(d);
  if (p->watch) {
    kube_watch_t *w = p->watch;
    p->watch = NULL;
    kube_watch_stop(w);
    return;
  }
  act__wait_end(a, 1);
}

/* The shared watch saw a newer state of the object waited for, or lost track of it. */
static void act__kw_changed(kwait_t *w, void *data) {
  act_t *a = data;
  act__priv_t *p = a->p;
  act__doc_t *d = &p->wdocs->v[p->wi];
  (void)w;
  if (kwait_broken(d->kw)) { /* watched on its own from its current state */
    act__kw_stop(d);
    act__count_wait("own");
    act__wait_watch(a);
    return;
  }
  act__kw_take(d);
  int64_t recheck;
  int v = act__judge(a, d, &p->herr, &recheck);
  if (v == 0) return;
  act__kw_stop(d);
  if (v == -1) {
    act__wait_end(a, 1);
    return;
  }
  p->wi++;
  act__wait_next(a);
}

static void act__wait_next(act_t *a) {
  act__priv_t *p = a->p;
  if (p->cancelled) {
    act__finish(a, UV_ECANCELED);
    return;
  }
  for (; p->wi < p->wdocs->n; p->wi++) {
    act__doc_t *d = &p->wdocs->v[p->wi];
    if (!d->live) continue;
    act__kw_take(d);
    int64_t recheck;
    int v = act__judge(a, d, &p->herr, &recheck);
    if (v == 1) {
      act__kw_stop(d);
      continue;
    }
    if (v == -1) {
      act__kw_stop(d);
      act__wait_end(a, 1);
      return;
    }
    act__waiting(a, 1); /* not ready yet: the wait begins (or goes on) */
    if (d->kw && !kwait_broken(d->kw)) {
      act__count_wait("shared");
      kwait_notify(d->kw, act__kw_changed, a);
      return;
    }
    act__kw_stop(d);
    act__count_wait("own");
    act__wait_watch(a);
    return;
  }
  act__wait_end(a, 0);
}

static void act__wait_docs(act_t *a, act__docs_t *docs, uint64_t timeout_ms, act__step_t then) {
  act__priv_t *p = a->p;
  p->after_wait = then;
  p->wdocs = docs;
  if (!act__timer(a, &p->wtimer)) {
    act__finish(a, UV_ENOMEM);
    return;
  }
  p->wi = 0;
  p->wtimed_out = 0;
  p->wtimer_pending = 1;
  uv_timer_start(p->wtimer, act__wait_deadline, timeout_ms, 0);
  act__wait_next(a);
}

static void act__wait(act_t *a, act__step_t then) {
  if (!a->wait) {
    then(a);
    return;
  }
  act__wait_docs(a, &a->p->want, a->timeout_ms ? a->timeout_ms : 300000, then);
}

/* ---- hooks (Helm's execHook) ---- */

static int act__has_policy(const release_hook_t *h, const char *p) {
  for (size_t i = 0; i < h->ndelete_policies; i++)
    if (!strcmp(h->delete_policies[i], p)) return 1;
  return 0;
}

static int act__hook_less(const release_hook_t *x, const release_hook_t *y) {
  if (x->weight != y->weight) return x->weight < y->weight;
  int rx = manifest_kind_rank(x->kind ? x->kind : "", MANIFEST_INSTALL_ORDER);
  int ry = manifest_kind_rank(y->kind ? y->kind : "", MANIFEST_INSTALL_ORDER);
  const char *nx = x->name ? x->name : "", *ny = y->name ? y->name : "";
  if (rx < 0 && ry < 0) {
    int k = strcmp(x->kind ? x->kind : "", y->kind ? y->kind : "");
    return k ? k < 0 : strcmp(nx, ny) < 0;
  }
  if (rx < 0) return 0;
  if (ry < 0) return 1;
  return rx == ry ? strcmp(nx, ny) < 0 : rx < ry;
}

static void act__hook_step(act_t *a);
static void act__hooks_done(act_t *a);

/* Ends the wait of the current hook: hfailed with herr when it failed. */
static void act__hook_wait_end(act_t *a, int failed, const char *why) {
  act__priv_t *p = a->p;
  if (p->hdone) return;
  act__waiting(a, 0);
  p->hdone = 1;
  p->hfailed = failed;
  if (failed) {
    buf_reset(&p->herr);
    buf_puts(&p->herr, why);
  }
  if (p->htimer_pending) {
    uv_timer_stop(p->htimer);
    p->htimer_pending = 0;
  }
  if (p->watch) {
    kube_watch_t *w = p->watch;
    p->watch = NULL;
    kube_watch_stop(w); /* its end callback moves on */
    return;
  }
  act__hook_step(a);
}

static void act__hook_event(kube_watch_t *w, const char *type, cJSON *obj, void *data) {
  act_t *a = data;
  act__doc_t *d = &a->p->hdocs.v[a->p->hi];
  if (a->p->hdone || (strcmp(type, "ADDED") && strcmp(type, "MODIFIED"))) return;
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(obj, "status");
  char why[512];
  if (!strcmp(d->kind, "Job")) {
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(st, "conditions")) {
      const char *t = act__str(c, "type"), *s = act__str(c, "status");
      if (!t || !s || strcmp(s, "True")) continue;
      if (!strcmp(t, "Complete")) {
        act__hook_wait_end(a, 0, NULL);
        return;
      }
      if (!strcmp(t, "Failed")) {
        snprintf(why, sizeof why, "job %s failed: %s", d->name, act__str(c, "reason") ? act__str(c, "reason") : "");
        act__hook_wait_end(a, 1, why);
        return;
      }
    }
  } else { /* Pod */
    const char *phase = act__str(st, "phase");
    if (phase && !strcmp(phase, "Succeeded")) act__hook_wait_end(a, 0, NULL);
    else if (phase && !strcmp(phase, "Failed")) {
      snprintf(why, sizeof why, "pod %s failed", d->name);
      act__hook_wait_end(a, 1, why);
    }
  }
}

static void act__hook_watch_end(kube_watch_t *w, const kube_response_t *res, void *data) {
  act_t *a = data;
  act__priv_t *p = a->p;
  if (p->watch == w) p->watch = NULL;
  if (p->cancelled) {
    if (p->htimer_pending) {
      uv_timer_stop(p->htimer);
      p->htimer_pending = 0;
    }
    act__finish(a, UV_ECANCELED);
    return;
  }
  if (!p->hdone) { /* the stream ended early (server timeout, network): watch again */
    p->watch = act__watch_object(a, &p->hdocs.v[p->hi], act__hook_event, act__hook_watch_end);
    if (!p->watch) act__hook_wait_end(a, 1, "cannot watch the hook");
    return;
  }
  act__hook_step(a);
}

static void act__hook_deadline(uv_timer_t *t) {
  act_t *a = t->data;
  a->p->htimer_pending = 0;
  act__doc_t *d = &a->p->hdocs.v[a->p->hi];
  char why[512];
  snprintf(why, sizeof why, "timed out waiting for the condition: %s %s did not %s within %llus", d->kind, d->name,
           strcmp(d->kind, "Job") ? "succeed" : "complete",
           (unsigned long long)(a->timeout_ms ? a->timeout_ms : 300000) / 1000);
  act__hook_wait_end(a, 1, why);
}

static void act__hook_wait(act_t *a) {
  act__priv_t *p = a->p;
  act__doc_t *d = &p->hdocs.v[p->hi];
  p->hdone = 0;
  p->hfailed = 0;
  /* Only Jobs and Pods are waited for, as Helm's WatchUntilReady. */
  if (strcmp(d->kind, "Job") && strcmp(d->kind, "Pod")) {
    p->hdone = 1;
    act__hook_step(a);
    return;
  }
  if (!act__timer(a, &p->htimer)) {
    act__finish(a, UV_ENOMEM);
    return;
  }
  p->htimer_pending = 1;
  uv_timer_start(p->htimer, act__hook_deadline, a->timeout_ms ? a->timeout_ms : 300000, 0);
  p->hdone = 0;
  act__waiting(a, 1);
  act__hook_watch_end(NULL, NULL, a); /* starts the watch */
}

static void act__hook_deleted(const kube_response_t *res, void *data) {
  act_t *a = data;
  if (res->status == 404) a->p->req = NULL;
  else if (act__check(a, res, "deleting a hook")) return;
  act__hook_step(a);
}

static void act__hook_created(const kube_response_t *res, void *data) {
  act_t *a = data;
  act__priv_t *p = a->p;
  p->req = NULL;
  if (p->cancelled || res->err == UV_ECANCELED) {
    act__finish(a, UV_ECANCELED);
    return;
  }
  if (!kube_response_ok(res)) {
    p->hdone = 1;
    p->hfailed = 1;
    buf_reset(&p->herr);
    buf_puts(&p->herr, res->errmsg ? res->errmsg : uv_strerror(res->err));
  }
  act__hook_step(a);
}

/* One hook at a time: delete (before-hook-creation), create, wait; then the next. After the last, the
 * hook-succeeded deletions in reverse order. */
static void act__hook_step(act_t *a) {
  act__priv_t *p = a->p;
  if (p->cancelled) {
    act__finish(a, UV_ECANCELED);
    return;
  }
  if (p->hi >= p->nhooks) { /* succeeded deletions, last hook first */
    while (p->hphase < (int)p->nhooks) {
      size_t k = p->nhooks - 1 - (size_t)p->hphase++;
      release_hook_t *h = p->hooks[k];
      if (strcmp(h->kind, "CustomResourceDefinition") && act__has_policy(h, "hook-succeeded")) {
        act__doc_path(a, &p->hdocs.v[k], a->ns);
        act__sent(a, kube_delete(a->env->c, p->path.data, "Background", act__hook_deleted, a));
        return;
      }
    }
    act__hooks_done(a);
    return;
  }
  release_hook_t *h = p->hooks[p->hi];
  act__doc_t *d = &p->hdocs.v[p->hi];
  switch (p->hphase) {
  case 0: /* before-hook-creation */
    p->hphase = 1;
    if (strcmp(h->kind, "CustomResourceDefinition") && act__has_policy(h, "before-hook-creation")) {
      act__doc_path(a, d, a->ns);
      act__sent(a, kube_delete(a->env->c, p->path.data, "Background", act__hook_deleted, a));
      return;
    }
    /* fall through */
  case 1: { /* create */
    p->hphase = 2;
    h->started_at = release_time_now();
    h->completed_at = (release_time_t){0};
    free(h->phase);
    h->phase = strdup("Unknown");
    const char *ns = act__doc_ns(d, a->ns);
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(d->obj, "metadata");
    if (*ns && meta && !cJSON_GetObjectItemCaseSensitive(meta, "namespace")) cJSON_AddStringToObject(meta, "namespace", ns);
    char *body = cJSON_PrintUnformatted(d->obj);
    act__doc_path(a, d, a->ns);
    if (!body) {
      act__finish(a, UV_ENOMEM);
      return;
    }
    p->hdone = 0;
    p->hfailed = 0;
    act__sent(a, kube_apply(a->env->c, p->path.data, body, a->env->field_manager, true, act__hook_created, a));
    free(body);
    return;
  }
  case 2: /* created: wait, unless creating failed */
    p->hphase = 3;
    if (!p->hfailed) {
      act__hook_wait(a);
      return;
    }
    /* fall through */
  case 3: /* waited */
    h->completed_at = release_time_now();
    free(h->phase);
    h->phase = strdup(p->hfailed ? "Failed" : "Succeeded");
    if (p->hfailed) {
      p->hphase = 4;
      if (strcmp(h->kind, "CustomResourceDefinition") && act__has_policy(h, "hook-failed")) {
        act__doc_path(a, d, a->ns);
        act__sent(a, kube_delete(a->env->c, p->path.data, "Background", act__hook_deleted, a));
        return;
      }
    } else {
      p->hphase = 0;
      p->hi++;
      act__hook_step(a);
      return;
    }
    /* fall through */
  case 4:
  default:
    if (a->kind == ACT_TEST) { /* helm test records the results before it reports the failure */
      buf_reset(&a->err);
      buf_printf(&a->err, "test hook %s failed: %s", h->path ? h->path : "", p->herr.data ? p->herr.data : "");
      p->test_failed = 1;
      act__hooks_done(a);
      return;
    }
    act__fail(a, "warning: Hook %s %s failed: %s", p->hevent, h->path ? h->path : "", p->herr.data ? p->herr.data : "");
    return;
  }
}

static void act__hooks_mapped(act_t *a) {
  a->p->hi = 0;
  a->p->hphase = 0;
  act__hook_step(a);
}

static void act__hooks_done(act_t *a) {
  act__priv_t *p = a->p;
  act__docs_free(&p->hdocs);
  free(p->hooks);
  p->hooks = NULL;
  p->nhooks = 0;
  p->hphase = 0;
  p->hi = 0;
  p->after_hooks(a);
}

/* Runs the hooks of rel for event (Helm's execHook), then `then`. */
static void act__hooks(act_t *a, release_t *rel, const char *event, act__step_t then) {
  act__priv_t *p = a->p;
  p->after_hooks = then;
  p->hevent = event;
  p->hrel = rel;
  p->nhooks = 0;
  if (a->disable_hooks || !rel || !rel->nhooks) {
    then(a);
    return;
  }
  p->hooks = calloc(rel->nhooks, sizeof *p->hooks);
  if (!p->hooks) {
    act__finish(a, UV_ENOMEM);
    return;
  }
  for (size_t i = 0; i < rel->nhooks; i++)
    for (size_t e = 0; e < rel->hooks[i].nevents; e++)
      if (!strcmp(rel->hooks[i].events[e], event)) {
        p->hooks[p->nhooks++] = &rel->hooks[i];
        break;
      }
  if (!p->nhooks) {
    free(p->hooks);
    p->hooks = NULL;
    then(a);
    return;
  }
  /* Helm sorts by weight, then kind, then name (not stable). */
  for (size_t i = 1; i < p->nhooks; i++)
    for (size_t j = i; j > 0 && act__hook_less(p->hooks[j], p->hooks[j - 1]); j--) {
      release_hook_t *t = p->hooks[j];
      p->hooks[j] = p->hooks[j - 1];
      p->hooks[j - 1] = t;
    }
  for (size_t i = 0; i < p->nhooks; i++) {
    release_hook_t *h = p->hooks[i];
    /* The default delete policy, recorded as Helm records it. */
    if (!h->ndelete_policies) {
      char **v = calloc(1, sizeof *v);
      if (!v || !(v[0] = strdup("before-hook-creation"))) {
        free(v);
        act__finish(a, UV_ENOMEM);
        return;
      }
      free(h->delete_policies);
      h->delete_policies = v;
      h->ndelete_policies = 1;
    }
    act__doc_t *d = act__docs_push(&p->hdocs);
    yaml_opts_t yo = {.flags = YAML_OPT_BIGINT_RAW};
    yaml_error_t ye;
    cJSON *obj = NULL;
    if (!d || yaml_to_json(h->manifest ? h->manifest : "", h->manifest ? strlen(h->manifest) : 0, &yo, &obj, &ye) ||
        !cJSON_IsObject(obj)) {
      cJSON_Delete(obj);
      act__fail(a, "unable to build kubernetes object for %s hook %s", event, h->path ? h->path : "");
      return;
    }
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    d->obj = obj;
    d->source = act__dup(h->path);
    d->api_version = act__dup(act__str(obj, "apiVersion"));
    d->kind = act__dup(h->kind);
    d->name = act__dup(h->name);
    d->ns = act__dup(act__str(meta, "namespace"));
    if (!d->source || !d->api_version || !d->kind || !d->name || !d->ns) {
      act__finish(a, UV_ENOMEM);
      return;
    }
  }
  act__map(a, &p->hdocs, act__hooks_mapped);
}

/* ---- install / upgrade / rollback ---- */

static int act__crd_docs(act_t *a) {
  const render_output_t *c = a->crd_docs;
  for (size_t i = 0; c && i < c->ncrds; i++) {
    yaml_error_t ye;
    /* A CRD file may hold several documents: each is applied. */
    const char *text = c->crds[i].content;
    manifest_set_t set = {0};
    manifest_error_t merr = {0};
    size_t len = strlen(text);
    int rc = manifest_parse_release(text, len, MANIFEST_INSTALL_ORDER, &set, &merr);
    if (rc) {
      buf_reset(&a->err);
      buf_printf(&a->err, "%s: %s", c->crds[i].path, merr.message);
      return rc == -12 ? -12 : -22;
    }
    for (size_t k = 0; k < set.ndocs && !rc; k++) {
      manifest_doc_t *d = &set.docs[k];
      if (d->is_empty) continue;
      act__doc_t *h = act__docs_push(&a->p->crds);
      yaml_opts_t yo = {.flags = YAML_OPT_BIGINT_RAW};
      if (!h) rc = -12;
      else {
        h->source = act__dup(c->crds[i].path);
        h->api_version = act__dup(d->api_version);
        h->kind = act__dup(d->kind);
        h->name = act__dup(d->name);
        h->ns = act__dup("");
        if (yaml_to_json(d->content, d->content_len, &yo, &h->obj, &ye)) rc = -22;
        if (!h->source || !h->api_version || !h->kind || !h->name || !h->ns) rc = -12;
      }
    }
    manifest_set_free(&set);
    if (rc) {
      if (rc == -22) {
        buf_reset(&a->err);
        buf_printf(&a->err, "%s: cannot read the CRD", c->crds[i].path);
      }
      return rc;
    }
  }
  return 0;
}

static void act__crd_next(act_t *a);

static void act__crd_done(const kube_response_t *res, void *data) {
  act_t *a = data;
  act__doc_t *d = &a->p->crds.v[a->p->i];
  if (!kube_response_ok(res) && !a->p->cancelled && res->err != UV_ECANCELED) {
    a->p->req = NULL;
    act__fail(a, "%s: applying CustomResourceDefinition \"%s\": %s", d->source, d->name, res->errmsg ? res->errmsg : "");
    return;
  }
  if (act__check(a, res, "applying a CRD")) return;
  cJSON_Delete(d->live);
  d->live = cJSON_ParseWithLength(res->body, res->body_len); /* waited for until established */
  a->p->crds_applied = 1;
  a->p->i++;
  act__crd_next(a);
}

static void act__crd_got(const kube_response_t *res, void *data) {
  act_t *a = data;
  act__doc_t *d = &a->p->crds.v[a->p->i];
  if (res->status == 200) { /* exists: Create leaves it alone */
    a->p->req = NULL;
    a->p->i++;
    act__crd_next(a);
    return;
  }
  if (res->status != 404 && act__check(a, res, "reading a CRD")) return;
  a->p->req = NULL;
  char *body = cJSON_PrintUnformatted(d->obj);
  if (!body) {
    act__finish(a, UV_ENOMEM);
    return;
  }
  act__sent(a, kube_apply(a->env->c, a->p->path.data, body, a->env->field_manager, true, act__crd_done, a));
  free(body);
}

static void act__after_crds(act_t *a);

static void act__wait_docs(act_t *a, act__docs_t *docs, uint64_t timeout_ms, act__step_t then);

static void act__crd_next(act_t *a) {
  act__priv_t *p = a->p;
  if (p->i >= p->crds.n) {
    p->i = 0;
    /* The CRDs applied are waited for until established (kstatus), whatever the release's wait,
     * for Helm's 60 s, before anything that may use them. */
    if (p->crds_applied) act__wait_docs(a, &p->crds, ACT_CRD_ESTABLISH_MS, act__after_crds);
    else act__after_crds(a);
    return;
  }
  act__doc_t *d = &p->crds.v[p->i];
  if (!d->mapped) {
    act__fail(a, "%s: %s %s is not a CustomResourceDefinition", d->source, d->api_version, d->kind);
    return;
  }
  act__doc_path(a, d, "");
  if (a->crds == ACT_CRDS_CREATE) {
    act__sent(a, kube_get(a->env->c, p->path.data, act__crd_got, a));
    return;
  }
  char *body = cJSON_PrintUnformatted(d->obj);
  if (!body) {
    act__finish(a, UV_ENOMEM);
    return;
  }
  act__sent(a, kube_apply(a->env->c, p->path.data, body, a->env->field_manager, true, act__crd_done, a));
  free(body);
}

static void act__old_mapped(act_t *a) {
  a->p->i = 0;
  a->p->obad = a->p->want.n;
  act__owner_next(a);
}

static void act__want_mapped(act_t *a) {
  /* The previous deployed release's objects (prune, ownership). */
  act__priv_t *p = a->p;
  /* Taking over our own interrupted revision: what it may have applied is old too. */
  if (p->resume && p->latest != p->prev && p->latest->rel && p->latest->rel->manifest && *p->latest->rel->manifest &&
      act__docs_from_manifest(a, p->latest->rel->manifest, MANIFEST_UNINSTALL_ORDER, 0, &p->old) == -12) {
    act__finish(a, UV_ENOMEM);
    return;
  }
  if (p->prev && p->prev->rel && p->prev->rel->manifest && *p->prev->rel->manifest) {
    int rc = act__docs_from_manifest(a, p->prev->rel->manifest, MANIFEST_UNINSTALL_ORDER, 0, &p->old);
    if (rc == -12) {
      act__finish(a, UV_ENOMEM);
      return;
    }
    if (rc) {
      LOG_W("cannot read the previous manifest; nothing will be pruned", "release", a->log_key, "error", a->err.data);
      act__docs_free(&p->old);
      buf_reset(&a->err);
    }
  }
  act__map(a, &p->old, act__old_mapped);
}

static void act__after_crds(act_t *a) { act__map(a, &a->p->want, act__want_mapped); }

static void act__crds_mapped(act_t *a) { act__pre_gate(a, act__crd_next); }

static void act__deploy(act_t *a) {
  act__priv_t *p = a->p;
  int rc;
  if (act__pre_send(a)) return;
  if (a->kind == ACT_ROLLBACK) {
    for (size_t i = 0; i < a->nrecs; i++)
      if (a->recs[i].version == a->rollback_to) p->target = &a->recs[i];
    if (!p->target) {
      act__fail(a, "release: not found: revision %lld of release \"%s\" does not exist", a->rollback_to, a->release_name);
      a->reason = "RollbackFailed";
      return;
    }
    rc = act__docs_from_manifest(a, p->target->rel->manifest, MANIFEST_INSTALL_ORDER, 1, &p->want);
  } else {
    rc = act__docs_from_set(a, a->set, 1, &p->want);
    if (!rc && a->crds != ACT_CRDS_SKIP) rc = act__crd_docs(a);
  }
  if (rc) {
    act__finish(a, rc == -12 ? UV_ENOMEM : -22);
    return;
  }
  if (p->crds.n) act__map(a, &p->crds, act__crds_mapped);
  else act__after_crds(a);
}

/* ---- uninstall ---- */

static void act__records_delete_next(act_t *a);

static void act__record_gone(const kube_response_t *res, void *data) {
  act_t *a = data;
  if (res->status == 404) a->p->req = NULL;
  else if (act__check(a, res, "uninstall: deleting a release record")) return;
  a->p->i++;
  act__records_delete_next(a);
}

static void act__uninstalled_written(const kube_response_t *res, void *data) {
  act_t *a = data;
  if (act__check(a, res, "uninstall: recording the release as uninstalled")) return;
  act__finish(a, 0);
}

static void act__records_delete_next(act_t *a) {
  act__priv_t *p = a->p;
  if (a->keep_history) {
    record_t *r = p->latest;
    if (!r) {
      act__finish(a, 0);
      return;
    }
    record_set_status(r, "uninstalled", "Uninstallation complete");
    act__put_record(a, r, r->owner_uid, act__uninstalled_written);
    return;
  }
  if (p->i < a->nrecs) {
    buf_reset(&p->path);
    kube_path(&p->path, "", "v1", "secrets", a->storage_ns, a->recs[p->i].secret_name, NULL);
    act__sent(a, kube_delete(a->env->c, p->path.data, NULL, act__record_gone, a));
    return;
  }
  LOG_I("uninstalled", "release", a->log_key);
  act__finish(a, 0);
}

static void act__post_delete(act_t *a) {
  a->p->i = 0;
  act__hooks(a, a->p->latest ? a->p->latest->rel : NULL, "post-delete", act__records_delete_next);
}

/* ---- uninstall: wait until the deleted objects are gone (Helm's WaitForDelete) ----
 * One object at a time: a GET (gone already: next), then a watch from its resourceVersion until it
 * is DELETED (or replaced by another object of the name), all within the uninstall's timeout. On
 * timeout the uninstall fails before the records are touched, so the next attempt uninstalls
 * again; the message names the object as Helm does. */
static void act__gone_next(act_t *a);

static void act__gone_timer_stop(act_t *a) {
  if (a->p->wtimer_pending) {
    uv_timer_stop(a->p->wtimer);
    a->p->wtimer_pending = 0;
  }
}

static void act__gone_failed(act_t *a) {
  act__priv_t *p = a->p;
  act__doc_t *d = &p->old.v[p->wi];
  act__gone_timer_stop(a);
  ready_result_t r = {0};
  buf_t m = BUF_INIT, msg = BUF_INIT;
  if (!d->live || ready_compute(d->live, READY_WAIT, (int64_t)time(NULL), &r, &m)) r.status = READY_UNKNOWN;
  ready_describe_undeleted(d->kind, act__doc_ns(d, p->old_ns), d->name, r.status, m.data ? m.data : "", &msg);
  act__fail(a, "uninstall: the release's objects were not deleted within %llus: %s: context deadline exceeded",
            (unsigned long long)(a->timeout_ms ? a->timeout_ms : 300000) / 1000, msg.data ? msg.data : "");
  buf_free(&m);
  buf_free(&msg);
}

static void act__gone_event(kube_watch_t *w, const char *type, cJSON *obj, void *data) {
  act_t *a = data;
  act__priv_t *p = a->p;
  act__doc_t *d = &p->old.v[p->wi];
  if (!d->deleted_uid) return;
  const char *uid = act__str(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "uid");
  if (!strcmp(type, "DELETED") || (uid && strcmp(uid, d->deleted_uid))) {
    free(d->deleted_uid); /* gone */
    d->deleted_uid = NULL;
  } else if (!strcmp(type, "ADDED") || !strcmp(type, "MODIFIED")) {
    cJSON_Delete(d->live);
    d->live = kube_watch_take_object(w);
    return;
  } else {
    return;
  }
  if (p->watch) {
    kube_watch_t *x = p->watch;
    p->watch = NULL;
    kube_watch_stop(x); /* its end callback moves on */
  }
}

static void act__gone_watch_end(kube_watch_t *w, const kube_response_t *res, void *data) {
  act_t *a = data;
  act__priv_t *p = a->p;
  if (p->watch == w) p->watch = NULL;
  if (p->cancelled) {
    act__gone_timer_stop(a);
    act__finish(a, UV_ECANCELED);
    return;
  }
  act__doc_t *d = &p->old.v[p->wi];
  if (d->deleted_uid && p->wtimed_out) {
    act__gone_failed(a);
    return;
  }
  if (!d->deleted_uid) p->wi++;
  act__gone_next(a); /* gone: the next one; the stream ended early: read it again */
}

static void act__gone_got(const kube_response_t *res, void *data) {
  act_t *a = data;
  act__priv_t *p = a->p;
  act__doc_t *d = &p->old.v[p->wi];
  p->req = NULL;
  if (p->cancelled || res->err == UV_ECANCELED) {
    act__gone_timer_stop(a);
    act__finish(a, UV_ECANCELED);
    return;
  }
  cJSON *obj = res->status == 200 ? cJSON_ParseWithLength(res->body, res->body_len) : NULL;
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
  const char *uid = act__str(meta, "uid"), *rv = act__str(meta, "resourceVersion");
  if (res->status == 404 || (uid && strcmp(uid, d->deleted_uid))) {
    cJSON_Delete(obj);
    free(d->deleted_uid);
    d->deleted_uid = NULL;
    p->wi++;
    act__gone_next(a);
    return;
  }
  if (!kube_response_ok(res) || !obj) {
    cJSON_Delete(obj);
    act__gone_timer_stop(a);
    act__fail(a, "uninstall: waiting for %s \"%s\" to be deleted: %s", d->kind, d->name,
              res->errmsg ? res->errmsg : "unreadable response");
    return;
  }
  cJSON_Delete(d->live);
  d->live = obj;
  if (p->wtimed_out) {
    act__gone_failed(a);
    return;
  }
  buf_t q = BUF_INIT, sel = BUF_INIT;
  const char *n = act__doc_ns(d, p->old_ns);
  kube_path(&q, d->group, d->version, d->resource, *n ? n : NULL, NULL, NULL);
  buf_printf(&sel, "metadata.name=%s", d->name);
  kube_query_add(&q, "fieldSelector", sel.data);
  kube_query_add(&q, "watch", "1");
  if (rv) kube_query_add(&q, "resourceVersion", rv);
  p->watch = q.data && sel.data ? kube_watch_start(a->env->c, q.data, act__gone_event, act__gone_watch_end, a) : NULL;
  buf_free(&q);
  buf_free(&sel);
  if (!p->watch) {
    act__gone_timer_stop(a);
    act__fail(a, "uninstall: cannot watch %s \"%s\"", d->kind, d->name);
  }
}

static void act__gone_deadline(uv_timer_t *t) {
  act_t *a = t->data;
  act__priv_t *p = a->p;
  p->wtimer_pending = 0;
  p->wtimed_out = 1;
  if (p->watch) {
    kube_watch_t *w = p->watch;
    p->watch = NULL;
    kube_watch_stop(w); /* its end callback reports the object */
  } /* else a GET is in flight: its callback sees the deadline */
}

static void act__gone_next(act_t *a) {
  act__priv_t *p = a->p;
  while (p->wi < p->old.n && !p->old.v[p->wi].deleted_uid) p->wi++;
  if (p->wi >= p->old.n) {
    act__gone_timer_stop(a);
    p->after_wait(a);
    return;
  }
  act__doc_path(a, &p->old.v[p->wi], p->old_ns);
  act__sent(a, kube_get(a->env->c, p->path.data, act__gone_got, a));
}

static void act__uninstall_wait(act_t *a) {
  act__priv_t *p = a->p;
  p->after_wait = act__post_delete;
  p->wi = 0;
  p->wtimed_out = 0;
  if (!a->wait) {
    act__post_delete(a);
    return;
  }
  if (!act__timer(a, &p->wtimer)) {
    act__finish(a, UV_ENOMEM);
    return;
  }
  p->wtimer_pending = 1;
  uv_timer_start(p->wtimer, act__gone_deadline, a->timeout_ms ? a->timeout_ms : 300000, 0);
  act__gone_next(a);
}

static void act__uninstall_objects(act_t *a) {
  act__delete_docs(a, &a->p->old, a->p->old_ns, NULL, "uninstall", act__uninstall_wait);
}

static void act__uninstall_mapped(act_t *a) {
  act__hooks(a, a->p->latest ? a->p->latest->rel : NULL, "pre-delete", act__uninstall_objects);
}

static void act__uninstall(act_t *a) {
  act__priv_t *p = a->p;
  record_t *r = p->latest;
  if (r && r->rel && r->rel->manifest && *r->rel->manifest && strcmp(r->status, "uninstalled")) {
    int rc = act__docs_from_manifest(a, r->rel->manifest, MANIFEST_UNINSTALL_ORDER, 0, &p->old);
    if (rc) {
      act__finish(a, rc == -12 ? UV_ENOMEM : -22);
      return;
    }
  }
  /* The newest revision did not finish (pending, failed): the last deployed one's objects are there too. */
  if (r && p->prev && p->prev != r && strcmp(r->status, "uninstalled") && p->prev->rel && p->prev->rel->manifest &&
      act__docs_from_manifest(a, p->prev->rel->manifest, MANIFEST_UNINSTALL_ORDER, 0, &p->old) == -12) {
    act__finish(a, UV_ENOMEM);
    return;
  }
  act__map(a, &p->old, act__uninstall_mapped);
}

/* ---- unlock ---- */

static void act__unlocked(const kube_response_t *res, void *data) {
  act_t *a = data;
  if (act__check(a, res, "marking the interrupted operation failed")) return;
  act__finish(a, 0);
}

static void act__unlock(act_t *a) {
  record_t *r = a->p->latest;
  if (!r || strncmp(r->status, "pending-", 8)) {
    act__finish(a, 0);
    return;
  }
  char desc[160];
  snprintf(desc, sizeof desc, "Release \"%s\" failed: the %s operation was interrupted and did not finish",
           a->release_name, r->status + 8);
  record_set_status(r, "failed", desc);
  act__put_record(a, r, r->owner_uid, act__unlocked);
}

/* ---- test ---- */

static void act__test_written(const kube_response_t *res, void *data) {
  act_t *a = data;
  if (act__check(a, res, "recording the test results")) return;
  if (a->p->test_failed) {
    a->reason = "TestFailed";
    act__finish(a, -22);
    return;
  }
  act__finish(a, 0);
}

static void act__test_record(act_t *a) {
  record_t *r = a->p->prev;
  act__put_record(a, r, r->owner_uid, act__test_written);
}

static void act__test(act_t *a) {
  record_t *r = a->p->prev;
  if (!r || !r->rel) {
    act__fail(a, "no deployed revision of release \"%s\" to test", a->release_name);
    return;
  }
  a->version = r->version;
  int any = 0;
  for (size_t i = 0; i < r->rel->nhooks; i++)
    for (size_t e = 0; e < r->rel->hooks[i].nevents; e++) any |= !strcmp(r->rel->hooks[i].events[e], "test");
  if (!any) {
    act__finish(a, 0);
    return;
  }
  a->disable_hooks = false;
  act__hooks(a, r->rel, "test", act__test_record);
}

/* ---- drift: the deployed revision's objects against the live ones ---- */

#define ACT_DRIFT_REPORT_MAX 4000 /* the report's length (it becomes a condition message and an Event) */

static void act__drift_next(act_t *a);

/* Whether rule (an entry of drift_ignore) applies to d: every target field given must match. */
static int act__ignore_targets(const cJSON *rule, const act__doc_t *d, const char *ns) {
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(rule, "target");
  if (!t) return 1;
  struct { const char *k, *v; } f[] = {{"group", d->group}, {"version", d->version}, {"kind", d->kind},
                                        {"name", d->name}, {"namespace", ns}};
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
    const char *want = act__str(t, f[i].k);
    if (want && strcmp(want, f[i].v ? f[i].v : "")) return 0;
  }
  return 1;
}

/* Whether JSON pointer ptr of d is ignored by a rule. */
static int act__ignored(act_t *a, const act__doc_t *d, const char *ns, const char *ptr) {
  const cJSON *rules = a->drift_ignore;
  for (const cJSON *r = cJSON_IsArray(rules) ? rules->child : NULL; r; r = r->next) {
    if (!act__ignore_targets(r, d, ns)) continue;
    const cJSON *paths = cJSON_GetObjectItemCaseSensitive(r, "paths");
    for (const cJSON *q = cJSON_IsArray(paths) ? paths->child : NULL; q; q = q->next)
      if (cJSON_IsString(q) && ptr && fields_pointer_under(ptr, q->valuestring)) return 1;
  }
  return 0;
}

static int act__has_ignore(act_t *a, const act__doc_t *d, const char *ns) {
  const cJSON *rules = a->drift_ignore;
  for (const cJSON *r = cJSON_IsArray(rules) ? rules->child : NULL; r; r = r->next)
    if (act__ignore_targets(r, d, ns)) return 1;
  return 0;
}

typedef struct act__drift_fields_s {
  act_t *a;
  const act__doc_t *d;
  const char *ns;
  const cJSON *after;  /* the object as the apply (or its dry run) leaves it */
  buf_t text;     /* ", .spec.replicas, ..." */
  cJSON *ignored; /* pointers of drifted fields the rules ignore (removed before a correcting apply) */
  int n;
} act__drift_fields_t;

static void act__drift_field(const char *path, const char *ptr, void *data) {
  act__drift_fields_t *f = data;
  /* A field someone else took over with the value rudder applies is not drift (an apply only shares it). */
  const cJSON *was = ptr ? fields_pointer_get(f->d->live, ptr) : NULL, *now = ptr ? fields_pointer_get(f->after, ptr) : NULL;
  if (was && now && cJSON_Compare(was, now, 1)) return;
  if (act__ignored(f->a, f->d, f->ns, ptr)) {
    if (!f->ignored) f->ignored = cJSON_CreateArray();
    if (f->ignored && ptr) cJSON_AddItemToArray(f->ignored, cJSON_CreateString(ptr));
    return;
  }
  f->n++;
  if (f->text.len < ACT_DRIFT_REPORT_MAX) buf_printf(&f->text, "%s%s", f->n > 1 ? ", " : "", path);
}

/* Tells the caller whether d drifted (and is left so: not corrected). */
static void act__drift_result(act_t *a, const act__doc_t *d, const char *ns, bool drifted) {
  act_drift_obj_t o = {.group = d->group, .version = d->version, .resource = d->resource, .kind = d->kind, .ns = ns,
                       .name = d->name};
  if (a->drift_result) a->drift_result(&o, drifted && !a->drift_correct, a->drift_data);
}

/* Appends "Kind ns/name: what" to the report. */
static void act__drift_report(act_t *a, const act__doc_t *d, const char *ns, const char *what) {
  a->drifted++;
  if (a->drift.len >= ACT_DRIFT_REPORT_MAX) {
    if (!strstr(a->drift.data, "; ...")) buf_puts(&a->drift, "; ...");
    return;
  }
  buf_printf(&a->drift, "%s%s %s%s%s: %s", a->drift.len ? "; " : "", d->kind, ns, *ns ? "/" : "", d->name, what);
}

/* The fields of the live object (before) that an apply or its dry run (res) gives back to rudder:
 * the drift. 1 when some remain after the ignore rules, 0 when none, -1 after finishing (error). */
static int act__drift_compare(act_t *a, act__doc_t *d, const kube_response_t *res, act__drift_fields_t *f) {
  cJSON *after = cJSON_ParseWithLength(res->body, res->body_len);
  if (!after) {
    act__fail(a, "%s: applying %s \"%s\": the response is not JSON", d->source, d->kind, d->name);
    return -1;
  }
  const cJSON *bf = d->live ? fields_applied(d->live, a->env->field_manager) : NULL;
  f->after = after;
  int n = fields_added(bf, fields_applied(after, a->env->field_manager), after, act__drift_field, f);
  f->after = NULL;
  cJSON_Delete(after);
  if (n < 0) {
    act__finish(a, UV_ENOMEM);
    return -1;
  }
  return f->n > 0;
}

static void act__drift_fields_free(act__drift_fields_t *f) {
  buf_free(&f->text);
  cJSON_Delete(f->ignored);
}

static void act__drift_apply(act_t *a, int dry_run, kube_response_cb cb);
static void act__apply_doc(act_t *a, act__doc_t *d, int dry_run, kube_response_cb cb);

static void act__drift_applied(const kube_response_t *res, void *data) {
  act_t *a = data;
  act__priv_t *p = a->p;
  act__doc_t *d = &p->want.v[p->i];
  if (act__check(a, res, "correcting drift")) return;
  const char *ns = act__doc_ns(d, a->ns);
  if (!d->live) {
    act__drift_report(a, d, ns, "deleted, recreated");
  } else {
    act__drift_fields_t f = {.a = a, .d = d, .ns = ns, .text = BUF_INIT};
    int rc = act__drift_compare(a, d, res, &f);
    if (rc < 0) {
      act__drift_fields_free(&f);
      return;
    }
    if (rc > 0) {
      buf_puts(&f.text, " corrected");
      act__drift_report(a, d, ns, f.text.data);
    }
    act__drift_fields_free(&f);
  }
  act__drift_result(a, d, ns, false);
  a->applied++;
  p->i++;
  act__drift_next(a);
}

/* A dry run (warn mode, or before a correction with ignore rules): reports the drift, then corrects
 * what the rules do not ignore when asked. */
static void act__drift_dry(const kube_response_t *res, void *data) {
  act_t *a = data;
  act__priv_t *p = a->p;
  act__doc_t *d = &p->want.v[p->i];
  if (act__check(a, res, "checking drift (dry run)")) return;
  const char *ns = act__doc_ns(d, a->ns);
  act__drift_fields_t f = {.a = a, .d = d, .ns = ns, .text = BUF_INIT};
  int rc = act__drift_compare(a, d, res, &f);
  if (rc < 0) {
    act__drift_fields_free(&f);
    return;
  }
  if (rc > 0 && a->drift_correct) {
    /* Fields another manager holds and the rules ignore are left out of the correcting apply: applying
     * them would take them back, and leaving them out of rudder's set does not remove them (they are
     * owned by that manager now). */
    for (const cJSON *q = f.ignored ? f.ignored->child : NULL; q; q = q->next)
      fields_pointer_remove(d->obj, q->valuestring);
    act__drift_fields_free(&f);
    act__drift_apply(a, 0, act__drift_applied);
    return;
  }
  if (rc > 0) act__drift_report(a, d, ns, f.text.data);
  act__drift_result(a, d, ns, rc > 0);
  act__drift_fields_free(&f);
  p->i++;
  act__drift_next(a);
}

static void act__drift_apply(act_t *a, int dry_run, kube_response_cb cb) {
  act__apply_doc(a, &a->p->want.v[a->p->i], dry_run, cb);
}

static void act__drift_got(const kube_response_t *res, void *data) {
  act_t *a = data;
  act__priv_t *p = a->p;
  act__doc_t *d = &p->want.v[p->i];
  if (res->status == 404) {
    p->req = NULL;
    if (p->cancelled || res->err == UV_ECANCELED) {
      act__finish(a, UV_ECANCELED);
      return;
    }
    cJSON_Delete(d->live);
    d->live = NULL;
  } else {
    if (act__check(a, res, "reading an object for drift detection")) return;
    cJSON_Delete(d->live);
    d->live = cJSON_ParseWithLength(res->body, res->body_len);
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(d->live, "metadata"), "annotations");
    const char *opt = act__str(ann, ACT_DRIFT_ANNOTATION);
    if (opt && !strcmp(opt, "disabled")) { /* opted out since it was last seen */
      p->i++;
      act__drift_next(a);
      return;
    }
  }
  const char *ns = act__doc_ns(d, a->ns);
  if (!d->live && !a->drift_correct) {
    act__drift_report(a, d, ns, "deleted");
    act__drift_result(a, d, ns, true);
    p->i++;
    act__drift_next(a);
    return;
  }
  if (a->drift_correct && (!d->live || !act__has_ignore(a, d, ns))) act__drift_apply(a, 0, act__drift_applied);
  else act__drift_apply(a, 1, act__drift_dry);
}

static void act__drift_next(act_t *a) {
  act__priv_t *p = a->p;
  for (; p->i < p->want.n; p->i++) {
    act__doc_t *d = &p->want.v[p->i];
    if (!d->mapped) continue;
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(d->obj, "metadata"), "annotations");
    const char *opt = act__str(ann, ACT_DRIFT_ANNOTATION);
    if (opt && !strcmp(opt, "disabled")) continue;
    act_drift_obj_t o = {.group = d->group, .version = d->version, .resource = d->resource, .kind = d->kind,
                         .ns = act__doc_ns(d, a->ns), .name = d->name};
    int v = a->drift_check ? a->drift_check(&o, a->drift_data) : ACT_DRIFT_CHECK;
    if (v == ACT_DRIFT_UNSYNCED) a->drift_unsynced = true;
    if (v != ACT_DRIFT_CHECK) continue;
    act__doc_path(a, d, a->ns);
    act__sent(a, kube_get(a->env->c, p->path.data, act__drift_got, a));
    return;
  }
  act__finish(a, 0);
}

static void act__drift_mapped(act_t *a) {
  act__priv_t *p = a->p;
  for (size_t i = 0; i < p->want.n && a->drift_kind; i++)
    if (p->want.v[i].mapped)
      a->drift_kind(p->want.v[i].group, p->want.v[i].version, p->want.v[i].resource, p->want.v[i].namespaced,
                    a->drift_data);
  p->i = 0;
  act__drift_next(a);
}

static void act__drift(act_t *a) {
  record_t *r = a->p->prev;
  if (!r || !r->rel) {
    act__fail(a, "no deployed revision of release \"%s\" to compare with the live objects", a->release_name);
    return;
  }
  a->version = r->version;
  /* The objects are where that revision put them. */
  if (r->rel->namespace && *r->rel->namespace) a->ns = r->rel->namespace;
  int rc = act__docs_from_manifest(a, r->rel->manifest, MANIFEST_INSTALL_ORDER, 1, &a->p->want);
  if (rc) {
    act__finish(a, rc);
    return;
  }
  act__map(a, &a->p->want, act__drift_mapped);
}

/* ---- entry ---- */

static void act__start_cb(uv_timer_t *t);
static void act__drift(act_t *a);

int act_start(act_t *a, act_done_cb cb, void *data) {
  if (a->pre_patch_path && a->kind != ACT_INSTALL && a->kind != ACT_UPGRADE && a->kind != ACT_ROLLBACK) return UV_EINVAL;
  act__priv_full_t *full = calloc(1, sizeof *full);
  if (!full) return UV_ENOMEM;
  act__priv_t *p = &full->p;
  a->p = p;
  p->cb = cb;
  p->data = data;
  a->rc = 0;
  a->reason = NULL;
  a->pre_pending = a->pre_patched = false;
  a->pre_status = 0;
  buf_reset(&a->err);
  p->latest = a->nrecs ? &a->recs[a->nrecs - 1] : NULL;
  for (size_t i = a->nrecs; i-- > 0;)
    if (!strcmp(a->recs[i].status, "deployed")) {
      p->prev = &a->recs[i];
      break;
    }
  /* Objects of the previous release are where that release put them. */
  p->old_ns = a->kind == ACT_UNINSTALL ? (p->latest && p->latest->rel && p->latest->rel->namespace && *p->latest->rel->namespace
                                              ? p->latest->rel->namespace : a->ns)
              : (p->prev && p->prev->rel && p->prev->rel->namespace && *p->prev->rel->namespace ? p->prev->rel->namespace
                                                                                             : a->ns);
  /* The revision written: one more than the newest, or the newest when it is our own pending
   * record left by an interrupted run (taken over instead of adding a record). */
  if (p->latest && !strncmp(p->latest->status, "pending-", 8) && a->owner_uid && p->latest->owner_uid &&
      !strcmp(p->latest->owner_uid, a->owner_uid) && a->kind != ACT_UNLOCK && a->kind != ACT_UNINSTALL &&
      a->kind != ACT_TEST) {
    p->resume = 1;
    p->stored_pending = 1;
    a->version = p->latest->version;
  } else {
    a->version = p->latest ? p->latest->version + 1 : 1;
  }
  /* Never inside act_start: the first step runs from the loop. */
  if (!act__timer(a, &p->timer)) {
    free(full);
    a->p = NULL;
    return UV_ENOMEM;
  }
  p->timer_pending = 1;
  uv_timer_start(p->timer, act__start_cb, 0, 0);
  return 0;
}

static void act__start_cb(uv_timer_t *t) {
  act_t *a = t->data;
  a->p->timer_pending = 0;
  if (a->p->cancelled) {
    act__finish(a, UV_ECANCELED);
    return;
  }
  switch (a->kind) {
  case ACT_INSTALL:
  case ACT_UPGRADE:
  case ACT_ROLLBACK: act__deploy(a); break;
  case ACT_UNINSTALL: act__uninstall(a); break;
  case ACT_UNLOCK: act__unlock(a); break;
  case ACT_TEST: act__test(a); break;
  case ACT_DRIFT: act__drift(a); break;
  }
}

void act_cancel(act_t *a) {
  act__priv_t *p = a->p;
  if (!p || p->finished || p->cancelled) return;
  p->cancelled = 1;
  if (p->pre_req) {
    p->pre_quiet = 1;
    kube_request_cancel(p->pre_req);
    p->pre_quiet = 0;
  }
  if (p->parked || p->after_pre) { /* nothing else in flight: the end, or the first write, waited for it */
    p->parked = 0;
    p->after_pre = NULL;
    act__finish(a, UV_ECANCELED);
    return;
  }
  if (p->ogets) {
    act__owner_stop(a);
    act__owner_next(a); /* all cancelled: finishes */
    return;
  }
  if (p->req) {
    kube_req_t *r = p->req;
    p->req = NULL;
    kube_request_cancel(r); /* its callback sees cancelled and finishes */
    return;
  }
  if (p->watch) {
    kube_watch_t *w = p->watch;
    p->watch = NULL;
    kube_watch_stop(w); /* its end callback finishes */
    return;
  }
  if (p->htimer_pending) {
    uv_timer_stop(p->htimer);
    p->htimer_pending = 0;
    act__finish(a, UV_ECANCELED);
    return;
  }
  if (p->wtimer_pending) {
    uv_timer_stop(p->wtimer);
    p->wtimer_pending = 0;
    act__finish(a, UV_ECANCELED);
    return;
  }
  if (p->timer_pending) {
    uv_timer_stop(p->timer);
    p->timer_pending = 0;
    act__finish(a, UV_ECANCELED);
  }
  if (p->tok) { /* a discovery look-up in flight: its answer will find nobody */
    p->tok->a = NULL;
    p->tok = NULL;
    p->disc_pending = 0;
    act__finish(a, UV_ECANCELED);
  }
}


void act_free(act_t *a) {
  act__priv_t *p = a->p;
  if (p) {
    act__docs_free(&p->want);
    act__docs_free(&p->old);
    act__docs_free(&p->crds);
    act__docs_free(&p->hdocs);
    free(p->hooks);
    buf_free(&p->herr);
    buf_free(&p->cerr);
    buf_free(&p->pre_err);
    free(p->del_uid);
    if (p->htimer) uv_close((uv_handle_t *)p->htimer, act__timer_closed);
    if (p->wtimer) uv_close((uv_handle_t *)p->wtimer, act__timer_closed);
    buf_free(&p->path);
    if (p->timer) uv_close((uv_handle_t *)p->timer, act__timer_closed);
    free(p);
    a->p = NULL;
  }
  if (a->have_next) record_free(&a->next);
  a->have_next = false;
  buf_free(&a->err);
  buf_free(&a->drift);
}
