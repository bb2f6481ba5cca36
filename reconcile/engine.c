/* The release engine (engine.h).
 *
 * One reconcile of one key is an object (rc_t) that advances when a response, a rendered chart or an
 * action's outcome arrives:
 *
 *   parse (door) -> memo: unchanged? done -> finalizer -> server version -> list records
 *     -> observe: absent | in sync | out of sync | failed | locked | rollback wanted | deleting
 *     -> one action (render on the thread pool first when installing or upgrading)
 *     -> outcome: status (door), memo; remediation is the next action when a release failed.
 *
 * A first install (no record, nothing but an install to decide: rc__finalizer_later) adds the
 * finalizer later: the install's action sends the patch with its ownership GETs and writes nothing
 * before it is answered 2xx (act_t.pre_patch_*); every other reconcile patches it first.
 *
 * Every step can be cancelled (the object changed or went away, shutdown, lost lease): the request
 * in flight is cancelled, no further request is sent, and the queue decides when to try again. */
#include "reconcile/engine.h"
#include "watch/waits.h"
#include "reconcile/track.h"
#include "base/container.h"
#include "base/log.h"
#include "base/sha256.h"
#include "base/b64.h"
#include "helm/action/action.h"
#include "helm/render/manifest.h"
#include "helm/render/render.h"
#include "helm/source/schema_http.h"
#include "helm/values/schema.h"
#include "queue/queue.h"
#include "reconcile/conditions.h"
#include "reconcile/drift.h"
#include "reconcile/inputs.h"
#include "reconcile/records.h"
#include "reconcile/refs.h"
#include "reconcile/clusters.h"
#include "helm/values/values.h"
#include "watch/informer.h"
#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ENGINE_MSG_MAX 32768 /* a condition message the API accepts */
#define ENGINE_LOCK_RETRY_MS 10000
#define ENGINE_PROGRESS_RECHECK_MS 50 /* a progress report due while the action's finalizer patch is in flight */

/* ---- memo: what each release was last brought to ---- */

typedef enum { MEMO_NONE = 0, MEMO_OK, MEMO_STALLED, MEMO_GONE /* uninstalled from its cluster */ } memo_state_t;

typedef struct memo_s {
  struct memo_s *next;
  long long generation;
  memo_state_t state;
  char digest[65];          /* the inputs `state` is about */
  /* What this process knows happened last; the object's status says the same once the informer has
   * seen our status write (it may lag behind). */
  long long revision;       /* applied revision */
  char applied[65];         /* its inputs' digest */
  char failed[65];          /* the inputs of the last failure, and the counts for them */
  int install_failures, upgrade_failures;
  int failed_rev;           /* the revision this process last marked failed: that write's own watch event
                             * (which may come after the action's end) is not a change made elsewhere */
  unsigned char bad_record; /* stalled on an unreadable record: any change of the records observes again */
  /* Drift detection: the mode the object asks for (req_drift_t), and whether the objects of the
   * applied revision have been compared since the last sign of drift (drift_ok; a new revision
   * clears it); drift_all: compare every object next time (the last comparison failed). */
  unsigned char drift_mode, drift_ok, drift_all;
  unsigned char acted; /* an action ran for this object in this process (it may have written records) */
  char *owner;   /* in the release index: the object key that manages this release */
  char *repo;    /* the chart repository the release's chart comes from, or NULL */
  char *release; /* the release index entry this object holds ("namespace/name"), or NULL */
  /* In the memo: the keys this object depends on; in the dependants index: the keys that depend on
   * this one. Each key followed by '\n'; NULL when none. */
  char *links;
  /* A release in several clusters: what this key's last outcome was ("generation\nready\nreason\nmessage"). */
  char *result;
  char key[];
} memo_t;

typedef struct memo_table_s {
  memo_t **b;
  size_t nb, n;
} memo_table_t;

static size_t memo__hash(const char *s) {
  size_t h = 1469598103934665603ULL;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

static memo_t *memo_get(memo_table_t *t, const char *key) {
  if (!t->nb) return NULL;
  for (memo_t *m = t->b[memo__hash(key) & (t->nb - 1)]; m; m = m->next)
    if (!strcmp(m->key, key)) return m;
  return NULL;
}

static memo_t *memo_put(memo_table_t *t, const char *key) {
  memo_t *m = memo_get(t, key);
  if (m) return m;
  if (t->n + 1 > t->nb) {
    size_t nb = t->nb ? t->nb * 2 : 64;
    memo_t **b = calloc(nb, sizeof *b);
    if (!b) return NULL;
    for (size_t i = 0; i < t->nb; i++)
      for (memo_t *e = t->b[i], *nx; e; e = nx) {
        nx = e->next;
        size_t h = memo__hash(e->key) & (nb - 1);
        e->next = b[h];
        b[h] = e;
      }
    free(t->b);
    t->b = b;
    t->nb = nb;
  }
  size_t len = strlen(key);
  if (!(m = calloc(1, sizeof *m + len + 1))) return NULL;
  memcpy(m->key, key, len + 1);
  size_t h = memo__hash(key) & (t->nb - 1);
  m->next = t->b[h];
  t->b[h] = m;
  t->n++;
  return m;
}

static void memo_del(memo_table_t *t, const char *key) {
  if (!t->nb) return;
  for (memo_t **p = &t->b[memo__hash(key) & (t->nb - 1)]; *p; p = &(*p)->next)
    if (!strcmp((*p)->key, key)) {
      memo_t *m = *p;
      *p = m->next;
      free(m->owner);
      free(m->repo);
      free(m->release);
      free(m->links);
      free(m->result);
      free(m);
      t->n--;
      return;
    }
}

static void memo_free_all(memo_table_t *t) {
  for (size_t i = 0; i < t->nb; i++)
    for (memo_t *e = t->b[i], *nx; e; e = nx) {
      nx = e->next;
      free(e->owner);
      free(e->repo);
      free(e->release);
      free(e->links);
      free(e->result);
      free(e);
    }
  free(t->b);
  memset(t, 0, sizeof *t);
}

/* ---- the engine ---- */

typedef struct rc_s rc_t;

/* What a render's `lookup` needs: the engine, and the client of the release's identity. */
typedef struct lk_ctx_s {
  struct engine_s *e;
  kube_client_t *c;
} lk_ctx_t;

/* A `lookup` a render on the thread pool asks for: the worker waits on cond while the loop thread
 * performs the request (DESIGN.md: the worker blocks, the loop never does). Freed by whichever of
 * the two lets go last. */
typedef struct lookup_s {
  struct lookup_s *next;
  struct engine_s *e;
  kube_client_t *c; /* the release's identity */
  char *api_version, *kind, *ns, *name;
  uv_cond_t cond;
  int done, refs, rc;
  char *json;
  char err[512];
  buf_t path;
} lookup_t;

struct engine_s {
  uv_loop_t *loop;
  uv_async_t lookups;  /* wakes the loop for lookups asked by renders */
  uv_mutex_t lk_mu;
  lookup_t *lk_head;
  const door_t *door;
  act_env_t env;
  discovery_t *d;
  informer_t *inf;
  records_t *records;  /* Helm's release Secrets (labels only): a change made elsewhere queues its release */
  int own_records;     /* started by this engine (no shared one given): stopped with it */
  queue_t q;
  char *ns;
  char *field_manager;
  render_limits_t limits;
  events_t *events;
  char *kube_version; /* the server's gitVersion, once known */
  source_t *source;   /* charts that are not inline come from here (NULL: refused) */
  char *default_sa;   /* see engine_opts_t.default_service_account */
  door_ctx_t ctx;     /* for the door's parse (its strings owned here) */
  /* One client per service account releases act as (impersonated), made when first needed. */
  struct sa_client_s {
    struct sa_client_s *next;
    char *user;
    act_env_t env;
  } *sa_clients;
  int sa_closing;
  memo_table_t memo;
  memo_table_t releases; /* "storage namespace/release name" -> owner: the object key */
  memo_table_t dependants; /* object key -> the keys whose dependsOn names it (links) */
  refs_t *refs;       /* the ConfigMaps and Secrets releases read values from, watched */
  drift_t *drift;     /* the objects releases applied, watched for drift (made when a release first asks) */
  struct remote_s *remotes; /* release records in other clusters, watched (one informer per cluster and namespace) */
  struct remote_drift_s *remote_drifts; /* drift watches in other clusters */
  size_t remotes_stopping; /* remote watches stopping (replaced ones included): the engine waits for them */
  int remotes_waiting;     /* the engine is stopping and waits for remotes_stopping to reach 0 */
  clusters_t *clusters; /* other clusters (the controller's), or NULL */
  /* A release in several clusters: object key -> its targets (links: cluster names, "" the local one,
   * those being uninstalled included) and, in owner, the summary last written as its status. */
  memo_table_t fanout;
  rc_t *running;      /* reconciles in flight (doubly linked) */
  /* Reconciling (Progressing) is reported only for actions still running after progress_delay_ms
   * (engine_opts_t): one timer for all, armed for the earliest such report due. */
  uv_timer_t progress_timer;
  long progress_delay_ms;
  engine_stats_t stats;
  int stopping;
  void (*stop_cb)(void *);
  void *stop_data;
};

typedef void (*rc_step_t)(rc_t *x);

enum { RC_DONE = 0, RC_RETRY, RC_STALL, RC_FORGET, RC_AFTER };

struct rc_s {
  engine_t *e;
  rc_t *prev, *next; /* in e->running */
  char *key;
  char *obj_key;        /* the object's key ("namespace/name"): key without "@cluster" */
  char *cluster;        /* the target cluster of a key "namespace/name@cluster", else NULL */
  cluster_t *cl;        /* its client, held while the reconcile runs */
  int coordinator;      /* a release only in other clusters: this key sums up and holds the finalizer */
  char coord_target[512]; /* the coordinator's spec.kubeConfig target whose records it reads */
  int fanned;           /* the object's key of a release in several clusters: its status is the sum */
  int parse_rc;         /* the door's parse result, kept while a target's kubeconfig is read */
  release_req_t req;
  buf_t err;
  buf_t path;
  record_t *recs;   /* oldest first */
  size_t nrecs;
  /* render */
  uv_work_t work;
  int rendering;
  int render_rc;
  buf_t render_warnings; /* Helm's warnings of the render ("; "-separated), and whether one was WARN */
  int render_warned;
  cJSON *render_values;
  manifest_set_t set;
  render_output_t crds;
  /* action */
  act_t act;
  int act_running;
  int remediating;      /* the action running is a remediation */
  int listing_prev, prev_done, retiring; /* the release managed under its previous name: listed, handled, uninstalling */
  kube_req_t *inflight; /* the engine's own request (finalizer, list, status) */
  lk_ctx_t lk; /* whom a render's lookups run as: the release's identity */
  source_op_t *src_op;  /* the chart being fetched */
  size_t vf_next;       /* the valuesFrom entry being read */
  int ns_created;       /* createNamespace done (or not needed) for this install */
  int fin_later;        /* the finalizer is the install's to add (rc__finalizer_later), not yet handed over */
  char *fin_path, *fin_body; /* that patch, once handed to the action (act_t.pre_patch_*) */
  cJSON *vf_values;     /* what they gave so far */
  cJSON *labels;        /* put on every object applied: the release (drift.h) */
  chart_cache_entry_t *src_entry; /* the fetched chart (a reference) */
  int cancelled;
  int outcome;
  uint64_t after_ms;
  act_kind_t tested_kind; /* the action whose release the tests run against */
  uint64_t progress_due;  /* when the running action's Reconciling report is due (loop ms); 0: none */
  kube_req_t *progress_req; /* that report being written while the action runs */
  int action_waiting;     /* the action finished while the report was being written */
  int parked;             /* the action waits on the cluster and gave its queue slot away (queue_park) */
  uint64_t park_due;      /* when it gives it away if it still waits (loop ms); 0: not waiting */
  long long remediate_to; /* the revision a remediating rollback goes back to */
  /* outcome for status */
  release_outcome_t out;
  const char *ready, *reason;
  buf_t msg;
};

static void rc__finish(rc_t *x, int outcome);
static void rc__watch_remote(rc_t *x);
static void engine__remotes_done(engine_t *e);
static void engine__record_event_in(engine_t *e, const cJSON *secret, int deleted, const char *target,
                                    const char *only_ns);
static void rc__list_records(rc_t *x);
static void rc__records_read(rc_t *x);
static void rc__decide(rc_t *x);
static void rc__run(rc_t *x, act_kind_t kind);
static void rc__start_action(rc_t *x, act_kind_t kind);
static void rc__progress(rc_t *x);
static const act_env_t *rc__env(rc_t *x, buf_t *err);

static const char *rc__key(const rc_t *x) { return x->key; }

/* Whether target c is a cluster given by the object's own kubeconfig Secret ("secret:NAME:KEY"),
 * and that Secret's name and key when name is not NULL. */
static int rc__secret_cluster(const char *c, char name[256], char key[256]) {
  if (!c || strncmp(c, REQ_SECRET_CLUSTER, strlen(REQ_SECRET_CLUSTER))) return 0;
  if (!name) return 1;
  const char *ref = c + strlen(REQ_SECRET_CLUSTER), *colon = strrchr(ref, ':');
  snprintf(name, 256, "%.*s", colon ? (int)(colon - ref) : (int)strlen(ref), ref);
  snprintf(key, 256, "%s", colon ? colon + 1 : "value");
  return 1;
}

/* Where the release's records live and what the server is: the target cluster's, else the
 * controller's own client. */
static const act_env_t *rc__storage(const rc_t *x) { return x->cl ? cluster_env(x->cl) : &x->e->env; }
static const char *rc__kube_version(const rc_t *x) { return x->cl ? cluster_version(x->cl) : x->e->kube_version; }

static void rc__obj_path(rc_t *x, const char *sub) {
  const door_t *dr = x->e->door;
  /* A target key's object is the object itself (its name without "@cluster"). */
  buf_reset(&x->path);
  kube_path(&x->path, dr->group, dr->version, dr->resource, x->req.ns, x->req.name, sub);
}

static void rc__records_free(rc_t *x) {
  for (size_t i = 0; i < x->nrecs; i++) record_free(&x->recs[i]);
  free(x->recs);
  x->recs = NULL;
  x->nrecs = 0;
}

static record_t *rc__latest(rc_t *x) { return x->nrecs ? &x->recs[x->nrecs - 1] : NULL; }

/* The revision a remediation rolls back to: the newest one older than `before` that was deployed. */
static record_t *rc__rollback_target(rc_t *x, long long before) {
  for (size_t i = x->nrecs; i-- > 0;)
    if (x->recs[i].version < before && (!strcmp(x->recs[i].status, "deployed") || !strcmp(x->recs[i].status, "superseded")))
      return &x->recs[i];
  return NULL;
}

/* The release was deployed once (an upgrade, not an install, comes next): a record deployed or
 * superseded, even when the newest one failed. */
static int rc__released(rc_t *x) { return rc__rollback_target(x, (long long)1 << 62) != NULL; }

/* The record the last action wrote joins the observed ones (the next action works on it). */
static void rc__adopt_next(rc_t *x) {
  if (!x->act.have_next) return;
  record_t rec = x->act.next;
  x->act.have_next = false;
  memset(&x->act.next, 0, sizeof x->act.next);
  for (size_t i = 0; i < x->nrecs; i++)
    if (x->recs[i].version == rec.version) {
      record_free(&x->recs[i]);
      x->recs[i] = rec;
      return;
    }
  record_t *nv = realloc(x->recs, (x->nrecs + 1) * sizeof *nv);
  if (!nv) {
    record_free(&rec);
    return;
  }
  x->recs = nv;
  x->recs[x->nrecs++] = rec;
  record_sort(x->recs, x->nrecs);
}

static void rc__free(rc_t *x) {
  if (x->src_entry) source_chart_release(x->e->source, x->src_entry);
  req_free(&x->req);
  buf_free(&x->err);
  buf_free(&x->path);
  buf_free(&x->msg);
  buf_free(&x->render_warnings);
  manifest_set_free(&x->set);
  render_output_free(&x->crds);
  cJSON_Delete(x->render_values);
  cJSON_Delete(x->vf_values);
  cJSON_Delete(x->labels);
  if (x->act.p || x->act.have_next || x->act.err.data || x->act.drift.data) act_free(&x->act);
  rc__records_free(x);
  cluster_unref(x->cl);
  free(x->fin_path);
  free(x->fin_body);
  free(x->obj_key);
  free(x->key);
  free(x);
}

static void rc__event(rc_t *x, const char *type, const char *reason, const char *msg) {
  engine_t *e = x->e;
  if (!e->events || !x->req.name) return;
  char api[128];
  snprintf(api, sizeof api, "%s/%s", e->door->group, e->door->version);
  events_ref_t ref = {.api_version = api, .kind = e->door->kind, .namespace = x->req.ns, .name = x->req.name,
                      .uid = x->req.uid, .resource_version = x->req.resource_version};
  /* The same reason and message again is aggregated by the recorder, so retries do not flood. */
  events_emit_ref(e->events, &ref, type, reason, msg);
}

/* True when the request was cancelled (and the reconcile finished); else clears inflight. */
static int rc__cancelled(rc_t *x, const kube_response_t *res) {
  x->inflight = NULL;
  if (x->cancelled || (res && res->err == UV_ECANCELED)) {
    rc__finish(x, RC_RETRY);
    return 1;
  }
  return 0;
}

static void rc__send(rc_t *x, kube_req_t *r) {
  x->inflight = r;
  if (!r) rc__finish(x, RC_RETRY);
}

/* ---- status ---- */

static void rc__status_done(const kube_response_t *res, void *data) {
  rc_t *x = data;
  if (rc__cancelled(x, res)) return;
  if (res->err || (res->status >= 400 && res->status != 404)) {
    /* The outcome is not on the object: observed and written again, not taken from the memo. */
    LOG_W("status update failed", "release", x->key, "error", res->errmsg ? res->errmsg : "");
    memo_t *m = memo_get(&x->e->memo, x->key);
    if (m) m->state = MEMO_NONE;
    rc__finish(x, RC_RETRY);
    return;
  }
  rc__finish(x, x->outcome);
}

/* The records for status.history, newest first (the record written, if any, included once). */
static void rc__history(rc_t *x, record_t **out, size_t *n) {
  size_t k = 0, cap = x->nrecs + 1;
  record_t *h = calloc(cap, sizeof *h);
  if (!h) {
    *out = NULL;
    *n = 0;
    return;
  }
  const act_t *a = &x->act;
  if (a->have_next) h[k++] = a->next;
  for (size_t i = x->nrecs; i-- > 0;)
    if (x->recs[i].version > 0 && (!a->have_next || x->recs[i].version != a->next.version)) h[k++] = x->recs[i];
  *out = h;
  *n = k;
}

/* The sum of every target's last outcome at the current inputs (a release in several clusters). */
typedef struct agg_s {
  const char *ready, *reason;
  buf_t msg, synced;
  int local_failed;
} agg_t;
static void rc__aggregate(rc_t *x, agg_t *a);
static void agg_free(agg_t *a);
static char *agg_text(const agg_t *a);
static void rc__save_result(rc_t *x);
static int rc__agg_changed(rc_t *x);
static void rc__uninstalled(rc_t *x);
static void rc__coordinate(rc_t *x);
static cJSON *rc__outside(rc_t *x, const record_t *r);
static int rc__reconcile_asked(const rc_t *x);

/* Writes the outcome as the door's status, then finishes with x->outcome. */
static void rc__write_status(rc_t *x) {
  if (x->cluster) { /* kept for the sum; the object's key writes it */
    rc__save_result(x);
    if (!x->e->stopping) queue_add(&x->e->q, x->obj_key);
    rc__finish(x, x->outcome);
    return;
  }
  agg_t agg = {0};
  if (x->fanned) {
    if (!x->coordinator) rc__save_result(x);
    rc__aggregate(x, &agg);
    memo_t *f = memo_get(&x->e->fanout, x->key);
    char *text = agg_text(&agg);
    int same = text && f && f->owner && !strcmp(f->owner, text);
    if (f && text) {
      free(f->owner);
      f->owner = text;
    } else {
      free(text);
    }
    if (same && x->coordinator && !rc__reconcile_asked(x)) { /* nothing new to say */
      agg_free(&agg);
      rc__finish(x, x->outcome);
      return;
    }
    x->ready = agg.ready;
    x->reason = agg.reason ? agg.reason : x->reason;
    buf_reset(&x->msg);
    buf_puts(&x->msg, agg.msg.data ? agg.msg.data : "");
    x->out.synced = agg.synced.data ? agg.synced.data : "";
  }
  char *cut = malloc(ENGINE_MSG_MAX);
  x->out.req = &x->req;
  x->out.ready = x->ready;
  x->out.reason = x->reason;
  x->out.message = cut ? cond_message(x->msg.data ? x->msg.data : "", cut, ENGINE_MSG_MAX) : "";
  x->out.install_failures = x->req.install_failures;
  x->out.upgrade_failures = x->req.upgrade_failures;
  record_t *hist = NULL;
  size_t nhist = 0;
  rc__history(x, &hist, &nhist);
  x->out.history = hist;
  x->out.nhistory = nhist;
  if (x->coordinator && nhist && x->req.nclusters == 1 && !x->req.all_clusters && !strcmp(x->ready, "True"))
    for (size_t i = 0; i < nhist; i++) /* one cluster: its deployed revision is the release's */
      if (hist[i].status && !strcmp(hist[i].status, "deployed")) {
        x->out.applied_revision = hist[i].version;
        break;
      }
  cJSON *outside = NULL;
  if (!x->fanned && !x->out.progressing) { /* the deployed revision's objects outside the records' namespace */
    const record_t *cur = NULL;
    for (size_t i = 0; i < nhist && !cur; i++)
      if (hist[i].status && !strcmp(hist[i].status, "deployed")) cur = &hist[i];
    if (cur && (outside = rc__outside(x, cur)) && !cJSON_GetArraySize(outside) && !x->req.outside) {
      cJSON_Delete(outside); /* none, and none said before: nothing to write */
      outside = NULL;
    }
    x->out.outside = outside;
  }
  if (!x->out.progressing) track_release(x->e->door, x->key, x->out.ready, x->out.applied_revision);
  char *body = x->e->door->status_patch(&x->out);
  x->out.outside = NULL;
  cJSON_Delete(outside);
  free(hist);
  free(cut);
  x->out.synced = NULL;
  agg_free(&agg);
  rc__obj_path(x, "status");
  if (!body) {
    rc__finish(x, RC_RETRY);
    return;
  }
  rc__send(x, kube_merge_patch(x->e->env.c, x->path.data, body, rc__status_done, x));
  free(body);
}

/* Reports a failure: Ready=False with reason and x->err as the message. */
static void rc__fail(rc_t *x, const char *reason, int outcome) {
  LOG_W("reconcile failed", "release", x->key, "reason", reason, "error", x->err.data ? x->err.data : "");
  x->outcome = outcome;
  x->ready = "False";
  x->reason = reason;
  buf_reset(&x->msg);
  buf_puts(&x->msg, x->err.data ? x->err.data : "");
  if (outcome == RC_STALL) {
    x->out.stalled = "True";
    /* The same inputs fail the same way: not tried again until they change. */
    memo_t *m = x->req.digest[0] ? memo_put(&x->e->memo, x->key) : NULL;
    if (m) {
      m->generation = x->req.generation;
      m->state = MEMO_STALLED;
      memcpy(m->digest, x->req.digest, 65);
    }
  }
  x->out.applied_revision = x->req.applied_revision;
  x->out.applied_digest = x->req.applied_digest;
  rc__event(x, "Warning", reason, x->msg.data);
  rc__write_status(x);
}

static int rc__check(rc_t *x, const kube_response_t *res, const char *reason, const char *what) {
  if (rc__cancelled(x, res)) return -1;
  if (kube_response_ok(res)) return 0;
  buf_reset(&x->err);
  buf_printf(&x->err, "%s: %s", what, res->errmsg ? res->errmsg : uv_strerror(res->err));
  rc__fail(x, reason, RC_RETRY);
  return -1;
}

/* ---- entry ---- */

static void rc__server_version(rc_t *x);

/* A finalizer patch answered with status (not 2xx) and msg: the object changed or went away
 * meanwhile (409, 404) ends the reconcile quietly (the watch brings it back); else reported. */
static void rc__finalizer_failed(rc_t *x, int status, const char *msg) {
  if (status == 409 || status == 404) {
    rc__finish(x, RC_RETRY);
    return;
  }
  buf_reset(&x->err);
  buf_printf(&x->err, "updating the finalizers: %s", msg);
  rc__fail(x, "FinalizerFailed", RC_RETRY);
}

static void rc__finalizer_patched(const kube_response_t *res, void *data) {
  rc_t *x = data;
  if (rc__cancelled(x, res)) return;
  if (!kube_response_ok(res)) {
    rc__finalizer_failed(x, res->status, res->errmsg ? res->errmsg : uv_strerror(res->err));
    return;
  }
  if (x->req.deleting) {
    LOG_I("released", "release", x->key);
    rc__finish(x, RC_FORGET);
    return;
  }
  if (x->coordinator) {
    rc__coordinate(x);
    return;
  }
  rc__server_version(x);
}

static int rc__legacy_finalizer(const door_t *d, const char *f) {
  for (const char *const *l = d->legacy_finalizers; l && *l; l++)
    if (!strcmp(*l, f)) return 1;
  return 0;
}

/* The merge patch that adds (add) or removes the door's finalizer (and drops an earlier
 * controller's); resourceVersion makes it fail rather than drop someone else's finalizer. NULL:
 * out of memory. */
static char *rc__finalizer_body(rc_t *x, int add) {
  const char *fin = x->e->door->finalizer;
  cJSON *patch = cJSON_CreateObject();
  cJSON *meta = cJSON_AddObjectToObject(patch, "metadata");
  cJSON *fins = cJSON_AddArrayToObject(meta, "finalizers");
  const cJSON *f;
  cJSON_ArrayForEach(f, x->req.finalizers)
    if (!cJSON_IsString(f) || (strcmp(f->valuestring, fin) && !rc__legacy_finalizer(x->e->door, f->valuestring)))
      cJSON_AddItemToArray(fins, cJSON_Duplicate(f, 1));
  if (add) cJSON_AddItemToArray(fins, cJSON_CreateString(fin));
  cJSON_AddStringToObject(meta, "resourceVersion", x->req.resource_version ? x->req.resource_version : "");
  char *body = cJSON_PrintUnformatted(patch);
  cJSON_Delete(patch);
  return body;
}

/* Adds (add) or removes the finalizer, then rc__finalizer_patched. */
static void rc__patch_finalizer(rc_t *x, int add) {
  char *body = rc__finalizer_body(x, add);
  rc__obj_path(x, NULL);
  if (!body) {
    rc__finish(x, RC_RETRY);
    return;
  }
  rc__send(x, kube_merge_patch(x->e->env.c, x->path.data, body, rc__finalizer_patched, x));
  free(body);
}

/* Drops the release index entry `release` if the object `key` holds it. */
static void engine__unindex(engine_t *e, const char *release, const char *key) {
  memo_t *r = release ? memo_get(&e->releases, release) : NULL;
  if (r && r->owner && !strcmp(r->owner, key)) memo_del(&e->releases, release);
}

/* Forgets an object: its memo and the release index entry it holds. */
static void engine__set_deps(engine_t *e, const char *key, char *const *deps, size_t n);
static void engine__forget(engine_t *e, const char *key) {
  if (e->refs) refs_set(e->refs, key, NULL, 0);
  engine__set_deps(e, key, NULL, 0);
  memo_t *m = memo_get(&e->memo, key);
  if (m) engine__unindex(e, m->release, key);
  memo_del(&e->memo, key);
}

/* Remembers which object manages the release, so that a change to its records queues the object. */
static void rc__index_release(rc_t *x) {
  buf_t k = BUF_INIT;
  buf_printf(&k, "%s/%s", x->req.storage_ns, x->req.release_name);
  memo_t *m = k.data ? memo_put(&x->e->releases, k.data) : NULL;
  /* The first object to name a release keeps it while it exists (a second one is refused). */
  if (m && (!m->owner || (strcmp(m->owner, x->key) && !informer_has(x->e->inf, m->owner)))) {
    free(m->owner);
    m->owner = strdup(x->key);
  }
  /* The object remembers the entry it holds, so that the entry goes when the object goes (or names
   * another release). */
  if (m && m->owner && !strcmp(m->owner, x->key)) {
    memo_t *om = memo_put(&x->e->memo, x->key);
    if (om && (!om->release || strcmp(om->release, k.data))) {
      engine__unindex(x->e, om->release, x->key);
      free(om->release);
      om->release = strdup(k.data);
    }
  }
  buf_free(&k);
}

/* The memo is newer than the object's status while the informer has not seen our last status write. */
static void rc__merge_memo(rc_t *x) {
  memo_t *m = memo_get(&x->e->memo, x->key);
  release_req_t *r = &x->req;
  if (!m) return;
  if (m->revision > r->applied_revision || (m->revision == r->applied_revision && m->applied[0])) {
    r->applied_revision = m->revision;
    memcpy(r->applied_digest, m->applied, 65);
  }
  if (m->failed[0] && !strcmp(m->failed, r->digest)) {
    memcpy(r->failed_digest, m->failed, 65);
    if (m->install_failures > r->install_failures) r->install_failures = m->install_failures;
    if (m->upgrade_failures > r->upgrade_failures) r->upgrade_failures = m->upgrade_failures;
  }
}

/* Records what an action left: the applied revision (when applied is not NULL) and the failure counts. */
static memo_t *rc__memo_note(rc_t *x, long long revision, const char *applied) {
  memo_t *m = memo_put(&x->e->memo, x->key);
  if (!m) return NULL;
  m->generation = x->req.generation;
  m->drift_mode = (unsigned char)x->req.drift_mode; /* a sign of drift then bypasses the memo */
  if (applied) {
    if (m->revision != revision) m->drift_ok = 0;
    m->revision = revision;
    snprintf(m->applied, sizeof m->applied, "%s", applied);
  }
  snprintf(m->failed, sizeof m->failed, "%s", x->req.failed_digest);
  m->install_failures = x->req.install_failures;
  m->upgrade_failures = x->req.upgrade_failures;
  return m;
}

static void rc__begin_with_chart(rc_t *x);
static int rc__no_records(rc_t *x);

/* Whether the finalizer may wait for the install (the action sends it with its ownership GETs and
 * writes nothing before its 2xx): the object's own key, no other cluster involved, with nothing to
 * observe first but an install (no record, no rollback asked, no previous release to retire) and
 * no namespace to create first. Asked again before the records would be listed (rc__list_records). */
static int rc__finalizer_later(rc_t *x) {
  const release_req_t *r = &x->req;
  return !x->cluster && !x->coordinator && !x->fanned && !r->deleting && !r->rollback_to && !r->prev_release_name &&
         !r->create_namespace && rc__no_records(x);
}

/* The fetched chart: its digest joins the inputs' digest, so that a new chart version (or a
 * republished archive) is an upgrade and an unchanged one costs nothing. */
static void rc__chart_fetched(int err, const char *message, const source_chart_t *ch, void *data) {
  rc_t *x = data;
  x->src_op = NULL;
  if (err == UV_ECANCELED || x->cancelled) {
    if (ch) source_chart_release(x->e->source, ch->entry);
    rc__finish(x, RC_RETRY);
    return;
  }
  if (err) {
    buf_reset(&x->err);
    buf_puts(&x->err, message ? message : "cannot fetch the chart");
    rc__fail(x, "ArtifactFailed", RC_RETRY);
    return;
  }
  x->src_entry = ch->entry;
  buf_t in = BUF_INIT;
  buf_printf(&in, "%s\n%s", x->req.digest, ch->digest);
  uint8_t d[32];
  base_sha256(in.data ? in.data : "", in.len, d);
  buf_free(&in);
  base_sha256_hex(d, x->req.digest);
  LOG_D("chart fetched", "release", x->key, "chart", ch->name, "version", ch->version, "digest", ch->digest);
  rc__begin_with_chart(x);
}

/* A packaged chart in a ConfigMap (binaryData, or data as base64) or a Secret (data). */
static void rc__chart_object(const kube_response_t *res, void *data) {
  rc_t *x = data;
  if (rc__cancelled(x, res)) return;
  req_chart_src_t *src = &x->req.src;
  buf_reset(&x->err);
  if (!kube_response_ok(res)) {
    buf_printf(&x->err, "spec.chart.%s: cannot read %s %s/%s: %s", src->kind == REQ_SRC_CONFIGMAP ? "configMapRef" : "secretRef",
               src->kind == REQ_SRC_CONFIGMAP ? "ConfigMap" : "Secret", x->req.ns, src->obj_name,
               res->errmsg ? res->errmsg : "failed");
    rc__fail(x, "ArtifactFailed", RC_RETRY);
    return;
  }
  cJSON *obj = cJSON_ParseWithLength(res->body, res->body_len);
  unsigned char *tgz = NULL;
  size_t n = 0;
  buf_t what = BUF_INIT;
  int rc = inputs_chart_bytes(src, x->req.ns, obj, &tgz, &n, &what, &x->err);
  cJSON_Delete(obj);
  if (rc) {
    buf_free(&what);
    rc__fail(x, "ArtifactFailed", RC_RETRY);
    return;
  }
  x->src_op = source_chart_from_bytes(x->e->source, tgz, n, what.data, rc__chart_fetched, x);
  buf_free(&what);
  free(tgz);
  if (!x->src_op) rc__finish(x, RC_RETRY);
}

/* A chart URL or OCI reference, fetched with conn (NULL: no credentials). */
static void rc__fetch_url(rc_t *x, const source_conn_t *conn) {
  engine_t *e = x->e;
  req_chart_src_t *src = &x->req.src;
  if (src->kind == REQ_SRC_OCI)
    x->src_op = source_chart_from_oci(e->source, src->url, src->version, conn, false, rc__chart_fetched, x);
  else x->src_op = source_chart_from_url(e->source, src->url, conn, rc__chart_fetched, x);
  if (!x->src_op) rc__finish(x, RC_RETRY);
}

/* The chart source's credentials Secret: username/password, ca.crt, tls.crt/tls.key. */
static void rc__source_secret_got(const kube_response_t *res, void *data) {
  rc_t *x = data;
  if (rc__cancelled(x, res)) return;
  req_chart_src_t *src = &x->req.src;
  buf_reset(&x->err);
  if (!kube_response_ok(res)) {
    buf_printf(&x->err, "%s: cannot read Secret %s/%s: %s", src->secret_field ? src->secret_field : "secretRef", x->req.ns,
               src->secret_name, res->errmsg ? res->errmsg : "failed");
    rc__fail(x, "ArtifactFailed", RC_RETRY); /* watched: a Secret made later is used at once */
    return;
  }
  cJSON *obj = cJSON_ParseWithLength(res->body, res->body_len);
  inputs_conn_t conn;
  int rc = inputs_conn_from_secret(src, x->req.ns, obj, &conn, &x->err);
  cJSON_Delete(obj);
  if (rc) {
    rc__fail(x, "ArtifactFailed", RC_STALL);
    return;
  }
  rc__fetch_url(x, &conn.conn); /* the source copies the credentials */
  inputs_conn_free(&conn);
}

static void rc__fetch_chart(rc_t *x) {
  engine_t *e = x->e;
  req_chart_src_t *src = &x->req.src;
  if (!e->source) {
    buf_reset(&x->err);
    buf_puts(&x->err, "spec.chart: charts from repositories and URLs are not enabled in this controller");
    rc__fail(x, "ArtifactFailed", RC_STALL);
    return;
  }
  if (src->kind == REQ_SRC_REPOSITORY) {
    memo_t *m = memo_put(&e->memo, x->key);
    if (m && (!m->repo || strcmp(m->repo, src->repo_key))) {
      free(m->repo);
      m->repo = strdup(src->repo_key);
    }
    if (!strncmp(src->repo_key, "url:", 4)) {
      /* A repository named only by its URL has no object of its own to refresh it: its index is
       * fetched again when older than the release's interval (a new version then upgrades). */
      char msg[256] = "";
      if (!source_repo_known(e->source, src->repo_key) &&
          source_repo_set(e->source, src->repo_key, src->url, NULL, msg, sizeof msg)) {
        buf_reset(&x->err);
        buf_printf(&x->err, "spec.chart.url: %s", msg);
        rc__fail(x, "InvalidSpec", RC_STALL);
        return;
      }
      int64_t age = source_repo_age(e->source, src->repo_key);
      if (age >= 0 && age * 1000 >= x->req.interval_ms) source_repo_refresh(e->source, src->repo_key, NULL, NULL);
    }
    x->src_op = source_chart_from_repo(e->source, src->repo_key, src->name, src->version, rc__chart_fetched, x);
  } else if (src->kind == REQ_SRC_CONFIGMAP || src->kind == REQ_SRC_SECRET) {
    /* Read at every reconcile (one GET): the object may have changed since. */
    buf_reset(&x->path);
    kube_path(&x->path, "", "v1", src->kind == REQ_SRC_CONFIGMAP ? "configmaps" : "secrets", x->req.ns, src->obj_name,
              NULL);
    rc__send(x, kube_get(e->env.c, x->path.data, rc__chart_object, x));
    return;
  } else if (src->secret_name) { /* credentials first (one GET, watched) */
    buf_reset(&x->path);
    kube_path(&x->path, "", "v1", "secrets", x->req.ns, src->secret_name, NULL);
    rc__send(x, kube_get(e->env.c, x->path.data, rc__source_secret_got, x));
    return;
  } else {
    rc__fetch_url(x, NULL);
    return;
  }
  if (!x->src_op) rc__finish(x, RC_RETRY);
}

/* ---- dependsOn and valuesFrom ---- */

/* links: keys each followed by '\n'. */
/* Runs the block after it for every line of links, the line in `var` (a char array). */
#define LINKS_EACH(links, var, ...)                            \
  for (const char *p__ = (links); p__ && *p__;) {              \
    const char *nl__ = strchr(p__, '\n');                      \
    char var[512];                                             \
    snprintf(var, sizeof var, "%.*s", (int)(nl__ - p__), p__); \
    p__ = nl__ + 1;                                            \
    __VA_ARGS__                                                \
  }

static int links__has(const char *links, const char *key) {
  size_t n = strlen(key);
  for (const char *p = links; p && *p;) {
    const char *nl = strchr(p, '\n');
    if (!nl) break;
    if ((size_t)(nl - p) == n && !memcmp(p, key, n)) return 1;
    p = nl + 1;
  }
  return 0;
}

static char *links__add(char *links, const char *key) {
  if (links__has(links, key)) return links;
  size_t a = links ? strlen(links) : 0, b = strlen(key);
  char *n = realloc(links, a + b + 2);
  if (!n) return links;
  memcpy(n + a, key, b);
  n[a + b] = '\n';
  n[a + b + 1] = 0;
  return n;
}

static char *links__del(char *links, const char *key) {
  size_t n = strlen(key);
  for (char *p = links; p && *p;) {
    char *nl = strchr(p, '\n');
    if (!nl) break;
    if ((size_t)(nl - p) == n && !memcmp(p, key, n)) {
      memmove(p, nl + 1, strlen(nl + 1) + 1);
      break;
    }
    p = nl + 1;
  }
  if (links && !*links) {
    free(links);
    return NULL;
  }
  return links;
}

/* Records that key depends on deps (in its memo) and indexes it under each of them, so that a
 * dependency becoming Ready wakes exactly its dependants. */
static void engine__set_deps(engine_t *e, const char *key, char *const *deps, size_t n) {
  memo_t *m = n ? memo_put(&e->memo, key) : memo_get(&e->memo, key);
  if (!m) return;
  char *now = NULL;
  for (size_t i = 0; i < n; i++) now = links__add(now, deps[i]);
  LINKS_EACH(m->links, dep, { /* no longer a dependency */
    if (!links__has(now, dep)) {
      memo_t *d = memo_get(&e->dependants, dep);
      if (d && !(d->links = links__del(d->links, key))) memo_del(&e->dependants, dep);
    }
  });
  for (size_t i = 0; i < n; i++) {
    memo_t *d = memo_put(&e->dependants, deps[i]);
    if (d) d->links = links__add(d->links, key);
  }
  free(m->links);
  m->links = now;
}

/* Ready at its current generation, and not being deleted. */
static int engine__is_ready(const cJSON *obj) {
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
  if (!obj || cJSON_GetObjectItemCaseSensitive(meta, "deletionTimestamp")) return 0;
  const cJSON *gen = cJSON_GetObjectItemCaseSensitive(meta, "generation");
  const cJSON *c = cond_find(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "status"), "conditions"),
                             "Ready");
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(c, "status");
  const cJSON *og = cJSON_GetObjectItemCaseSensitive(c, "observedGeneration");
  return cJSON_IsString(st) && !strcmp(st->valuestring, "True") && cJSON_IsNumber(og) && cJSON_IsNumber(gen) &&
         og->valuedouble == gen->valuedouble;
}

#define ENGINE_DEP_DEPTH 64

/* A path of dependsOn links from `at` back to stack[0]; stack holds the path so far. */
static int engine__cycle(engine_t *e, const char **stack, int depth) {
  if (depth >= ENGINE_DEP_DEPTH) return 0;
  memo_t *m = memo_get(&e->memo, stack[depth - 1]);
  LINKS_EACH(m ? m->links : NULL, dep, {
    if (!strcmp(dep, stack[0])) return depth;
    int seen = 0;
    for (int i = 0; i < depth; i++) seen |= !strcmp(stack[i], dep);
    if (seen) continue;
    memo_t *dm = memo_get(&e->memo, dep);
    if (!dm) continue;
    stack[depth] = dm->key;
    int n = engine__cycle(e, stack, depth + 1);
    if (n) return n;
  });
  return 0;
}

/* Waits (returns 1, the outcome written) while a dependency is not Ready, or forever on a cycle. */
static int rc__deps_wait(rc_t *x) {
  engine_t *e = x->e;
  const char *stack[ENGINE_DEP_DEPTH] = {x->key};
  int n = engine__cycle(e, stack, 1);
  buf_reset(&x->err);
  if (n) {
    buf_puts(&x->err, "spec.dependsOn: dependency cycle: ");
    for (int i = 0; i < n; i++) buf_printf(&x->err, "%s -> ", stack[i]);
    buf_puts(&x->err, x->key);
    rc__fail(x, "DependencyCycle", RC_STALL);
    return 1;
  }
  for (size_t i = 0; i < x->req.ndepends_on; i++) {
    const char *dep = x->req.depends_on[i];
    const cJSON *obj = informer_get(e->inf, dep);
    if (engine__is_ready(obj)) continue;
    buf_printf(&x->err, "dependency '%s' %s", dep, obj ? "is not ready" : "does not exist");
    /* Woken when it becomes Ready (the dependants index), not at an interval. */
    rc__fail(x, "DependencyNotReady", RC_FORGET);
    return 1;
  }
  return 0;
}

/* ---- other clusters ----
 *
 * A release in several clusters is one key per target: "namespace/name" for the local cluster (it
 * also holds the finalizer and writes the status) and "namespace/name@cluster" for each other one.
 * The object's key fans out to its targets; each target key reconciles its cluster as any release
 * (records stored there), keeps its outcome in its memo and wakes the object's key, which writes
 * the sum of all of them as the status. A target no longer wanted (or the object deleted) is
 * uninstalled from its cluster, and the finalizer goes only once every target is gone. */

static int rc__multi(const rc_t *x) { return x->req.nclusters || x->req.all_clusters; }

/* The request's targets, each followed by '\n' ("" is the local cluster). */
static void rc__targets(rc_t *x, buf_t *out) {
  if (x->req.all_clusters) {
    buf_puts(out, "\n");
    if (x->e->clusters) clusters_names(x->e->clusters, out);
  } else if (x->req.nclusters) {
    for (size_t i = 0; i < x->req.nclusters; i++) buf_printf(out, "%s\n", x->req.clusters[i]);
  } else {
    buf_puts(out, "\n");
  }
}

static void rc__target_key(const char *obj_key, const char *cluster, buf_t *out) {
  buf_reset(out);
  if (*cluster) buf_printf(out, "%s@%s", obj_key, cluster);
  else buf_puts(out, obj_key);
}

/* The object's key: queues every target (wanted now, or still to be uninstalled) and remembers
 * them. Returns whether the local cluster is a target. */
static int rc__fan_out(rc_t *x) {
  engine_t *e = x->e;
  buf_t t = BUF_INIT, k = BUF_INIT;
  if (x->req.deleting) {
    memo_t *f = memo_get(&e->fanout, x->key);
    if (f && f->links) buf_puts(&t, f->links);
  } else {
    rc__targets(x, &t);
  }
  memo_t *f = memo_put(&e->fanout, x->key);
  char *now = NULL;
  LINKS_EACH(t.data, c, { now = links__add(now, c); });
  /* Targets dropped from the spec stay until they are uninstalled. */
  LINKS_EACH(f ? f->links : NULL, c, {
    rc__target_key(x->key, c, &k);
    memo_t *m = memo_get(&e->memo, k.data);
    if (*c && !(m && m->state == MEMO_GONE)) now = links__add(now, c);
  });
  LINKS_EACH(now, c, {
    if (*c && !e->stopping) {
      rc__target_key(x->key, c, &k);
      queue_add(&e->q, k.data);
    }
  });
  int local = links__has(t.data, "");
  if (f && !rc__multi(x) && !x->req.deleting && now && !strcmp(now, "\n")) {
    free(now); /* back to the local cluster only, the others uninstalled */
    memo_del(&e->fanout, x->key);
  } else if (f) {
    free(f->links);
    f->links = now;
  } else {
    free(now);
  }
  buf_free(&t);
  buf_free(&k);
  return local;
}


static void rc__aggregate(rc_t *x, agg_t *a) {
  engine_t *e = x->e;
  buf_t t = BUF_INIT, k = BUF_INIT, pending = BUF_INIT;
  rc__targets(x, &t);
  int failed = 0, npending = 0;
  a->ready = "True";
  a->reason = NULL;
  LINKS_EACH(t.data, c, {
    rc__target_key(x->obj_key, c, &k);
    memo_t *m = memo_get(&e->memo, k.data);
    const char *r = m ? m->result : NULL;
    const char *d = r, *nl1 = r ? strchr(r, '\n') : NULL;
    const char *rd = nl1 ? nl1 + 1 : NULL, *nl2 = rd ? strchr(rd, '\n') : NULL;
    const char *rs = nl2 ? nl2 + 1 : NULL, *nl3 = rs ? strchr(rs, '\n') : NULL;
    const char *rm = nl3 ? nl3 + 1 : NULL;
    int current = d && nl1 && strtoll(d, NULL, 10) == x->req.generation;
    if (!current || !nl3) {
      buf_printf(&pending, "%s%s", npending++ ? ", " : "", *c ? c : "the local cluster");
    } else if ((size_t)(nl2 - rd) == 4 && !memcmp(rd, "True", 4)) {
      buf_printf(&a->synced, "%s\n", c);
    } else {
      if (!failed++) {
        a->ready = "False";
        if (!*c) a->local_failed = 1;
      }
      int own = rc__secret_cluster(c, NULL, NULL);
      buf_printf(&a->msg, "%s%s%s: %s", a->msg.len ? "; " : "", *c && !own ? "cluster " : "",
                 own ? "the cluster of spec.kubeConfig" : *c ? c : "local cluster", rm);
    }
  });
  if (!failed && npending) {
    a->ready = "Unknown";
    a->reason = "Progressing";
    buf_printf(&a->msg, "waiting for %s", pending.data);
  } else if (failed && !a->local_failed) {
    a->reason = "ClusterFailed";
  } else if (!failed) {
    a->reason = !x->cluster && links__has(t.data, "") && x->reason ? x->reason : "Synced";
    buf_puts(&a->msg, "deployed in ");
    int n = 0;
    LINKS_EACH(a->synced.data, c, {
      int own = rc__secret_cluster(c, NULL, NULL);
      buf_printf(&a->msg, "%s%s", n++ ? ", " : "", own ? "the cluster of spec.kubeConfig" : *c ? c : "the local cluster");
    });
  }
  buf_free(&t);
  buf_free(&k);
  buf_free(&pending);
}

static void agg_free(agg_t *a) {
  buf_free(&a->msg);
  buf_free(&a->synced);
}

/* Keeps this key's outcome for the sum; the status is then written by the object's key. */
static void rc__save_result(rc_t *x) {
  memo_t *m = memo_put(&x->e->memo, x->key);
  if (!m) return;
  buf_t r = BUF_INIT;
  /* By generation, not by the inputs' digest: a failure before the chart is fetched has no digest yet. */
  buf_printf(&r, "%lld\n%s\n%s\n%s", x->req.generation, x->ready ? x->ready : "Unknown", x->reason ? x->reason : "",
             x->msg.data ? x->msg.data : "");
  if (!r.data) return;
  free(m->result);
  m->result = buf_steal(&r);
}

/* The summary as a string, to know whether the status must be written again. */
static char *agg_text(const agg_t *a) {
  buf_t b = BUF_INIT;
  buf_printf(&b, "%s\n%s\n%s\n%s", a->ready, a->reason ? a->reason : "", a->synced.data ? a->synced.data : "",
             a->msg.data ? a->msg.data : "");
  return buf_steal(&b);
}

/* Whether the sum of the targets differs from what the object's status says (last written). */
static int rc__agg_changed(rc_t *x) {
  if (x->cluster || !rc__multi(x)) return 0;
  agg_t a = {0};
  rc__aggregate(x, &a);
  char *t = agg_text(&a);
  memo_t *f = memo_get(&x->e->fanout, x->key);
  int changed = !t || !f || !f->owner || strcmp(f->owner, t);
  free(t);
  agg_free(&a);
  return changed;
}

/* A target key is uninstalled from its cluster (or its cluster is gone): the object's key is woken. */
static void rc__target_gone(rc_t *x) {
  engine_t *e = x->e;
  engine__forget(e, x->key);
  memo_t *m = memo_put(&e->memo, x->key);
  if (m) m->state = MEMO_GONE;
  if (!e->stopping) queue_add(&e->q, x->obj_key);
  rc__finish(x, RC_FORGET);
}

static void rc__patch_finalizer(rc_t *x, int add);

/* The release is uninstalled here: a target key reports it; the object's key lets the finalizer go
 * once every other cluster is done too. */
static void rc__uninstalled(rc_t *x) {
  engine_t *e = x->e;
  if (x->cluster) {
    rc__target_gone(x);
    return;
  }
  memo_t *f = memo_get(&e->fanout, x->key);
  buf_t k = BUF_INIT;
  int waiting = 0;
  LINKS_EACH(f ? f->links : NULL, c, {
    if (!*c) continue;
    rc__target_key(x->key, c, &k);
    memo_t *m = memo_get(&e->memo, k.data);
    if (!(m && m->state == MEMO_GONE)) {
      waiting++;
      if (!e->stopping) queue_add(&e->q, k.data);
    }
  });
  if (waiting) {
    LOG_I("waiting for the other clusters to uninstall", "release", x->key, "clusters", f->links);
    buf_free(&k);
    rc__finish(x, RC_FORGET); /* each one wakes this key when done */
    return;
  }
  LINKS_EACH(f ? f->links : NULL, c, {
    if (!*c) continue;
    rc__target_key(x->key, c, &k);
    memo_del(&e->memo, k.data);
  });
  buf_free(&k);
  memo_del(&e->fanout, x->key);
  rc__patch_finalizer(x, 0);
}

/* A release only in other clusters: the object's key holds the finalizer and writes the sum. */
static cluster_t *rc__secret_client(rc_t *x, const kube_response_t *res, const char *target);

static void rc__coord_secret_got(const kube_response_t *res, void *data) {
  rc_t *x = data;
  if (rc__cancelled(x, res)) return;
  if ((x->cl = rc__secret_client(x, res, x->coord_target))) rc__list_records(x); /* back to rc__coordinate */
  else rc__write_status(x);
}

static void rc__coordinate(rc_t *x) {
  x->outcome = RC_DONE;
  /* The status's history, version and notes are those of the first cluster the release is synced
   * in: its records are listed there (read only), then the sum is written. */
  engine_t *e = x->e;
  agg_t a = {0};
  rc__aggregate(x, &a);
  char first[512] = "";
  LINKS_EACH(a.synced.data, c, {
    if (!*first && *c) snprintf(first, sizeof first, "%s", c);
  });
  agg_free(&a);
  char name[256], key[256];
  if (*first && !x->cl && e->clusters && rc__secret_cluster(first, name, key)) {
    /* spec.kubeConfig: the cluster's client from its Secret, as the target's reconcile made it */
    snprintf(x->coord_target, sizeof x->coord_target, "%s", first);
    buf_reset(&x->path);
    kube_path(&x->path, "", "v1", "secrets", x->req.ns, name, NULL);
    rc__send(x, kube_get(e->env.c, x->path.data, rc__coord_secret_got, x));
    return;
  }
  buf_t err = BUF_INIT;
  if (*first && !x->cl && e->clusters && (x->cl = clusters_get(e->clusters, first, &err))) {
    buf_free(&err);
    rc__list_records(x); /* rc__records_listed comes back here */
    return;
  }
  buf_free(&err);
  rc__write_status(x);
}

/* The clusters changed (added, removed, a kubeconfig rotated): releases in several clusters look
 * at their targets again. */
static void engine__clusters_changed(void *data) {
  engine_t *e = data;
  if (e->stopping) return;
  for (size_t i = 0; i < e->fanout.nb; i++)
    for (memo_t *m = e->fanout.b[i]; m; m = m->next) queue_add(&e->q, m->key);
}

static void rc__after_values(rc_t *x);

static void rc__values_from_next(rc_t *x);

/* One valuesFrom object read: its key merged (or set at targetPath) into what the others gave. */
static void rc__values_from_got(const kube_response_t *res, void *data) {
  rc_t *x = data;
  if (rc__cancelled(x, res)) return;
  const req_values_from_t *v = &x->req.values_from[x->vf_next];
  buf_reset(&x->err);
  cJSON *obj = kube_response_ok(res) ? cJSON_ParseWithLength(res->body, res->body_len) : NULL;
  int rc = inputs_values_from_merge(v, res->err ? 0 : res->status, res->errmsg, obj, x->vf_values, &x->err);
  cJSON_Delete(obj);
  if (rc) {
    rc__fail(x, "ValuesFromFailed", RC_RETRY);
    return;
  }
  x->vf_next++;
  rc__values_from_next(x);
}

static void rc__values_from_next(rc_t *x) {
  if (x->vf_next < x->req.nvalues_from) {
    const req_values_from_t *v = &x->req.values_from[x->vf_next];
    buf_reset(&x->path);
    kube_path(&x->path, "", "v1", v->secret ? "secrets" : "configmaps", v->ns, v->name, NULL);
    rc__send(x, kube_get(x->e->env.c, x->path.data, rc__values_from_got, x));
    return;
  }
  /* The object's own values go over what was read; the result joins the inputs' digest. */
  buf_t in = BUF_INIT;
  if (values_merge_maps(x->vf_values, x->req.values) || (buf_printf(&in, "%s\n", x->req.digest), !in.data) ||
      release_go_json_append(&in, x->vf_values)) {
    buf_free(&in);
    buf_reset(&x->err);
    buf_puts(&x->err, "out of memory merging valuesFrom");
    rc__fail(x, "InternalError", RC_RETRY);
    return;
  }
  cJSON_Delete(x->req.values);
  x->req.values = x->vf_values;
  x->vf_values = NULL;
  uint8_t d[32];
  base_sha256(in.data, in.len, d);
  buf_free(&in);
  base_sha256_hex(d, x->req.digest);
  rc__after_values(x);
}

/* The objects the release reads (valuesFrom, a chart in a ConfigMap or Secret) are watched by name from now on. */
static void rc__track_refs(rc_t *x) {
  engine_t *e = x->e;
  if (!e->refs) return;
  const req_chart_src_t *src = &x->req.src;
  bool chart_obj = src->kind == REQ_SRC_CONFIGMAP || src->kind == REQ_SRC_SECRET || src->secret_name;
  size_t n = x->req.deleting ? 0 : x->req.nvalues_from + chart_obj;
  refs_obj_t *objs = n ? calloc(n, sizeof *objs) : NULL;
  if (n && !objs) return;
  for (size_t i = 0; i < x->req.nvalues_from && i < n; i++)
    objs[i] = (refs_obj_t){.secret = x->req.values_from[i].secret, .ns = x->req.values_from[i].ns,
                           .name = x->req.values_from[i].name};
  if (chart_obj && n) /* a packaged chart in a ConfigMap or Secret (a new one upgrades at once), or a source's credentials */
    objs[n - 1] = (refs_obj_t){.secret = src->kind != REQ_SRC_CONFIGMAP, .ns = x->req.ns,
                               .name = src->secret_name ? src->secret_name : src->obj_name};
  char kc[256] = "", kk[256];
  if (x->req.nclusters && !x->req.deleting && rc__secret_cluster(x->req.clusters[0], kc, kk)) {
    /* the release's own kubeconfig Secret: a rotation is used at once */
    refs_obj_t *grown = realloc(objs, (n + 1) * sizeof *objs);
    if (grown) {
      objs = grown;
      objs[n++] = (refs_obj_t){.secret = true, .ns = x->req.ns, .name = kc};
    }
  }
  if (refs_set(e->refs, x->key, objs, n)) LOG_W("cannot watch the objects the release reads", "release", x->key);
  free(objs);
}

static void rc__begin_rest(rc_t *x, int rc);


/* The object's kubeconfig Secret, read at every reconcile (and watched): the cluster's client. */
/* The client of target ("secret:NAME:KEY") from the Secret res holds (clusters_get_text caches it by
 * the Secret's resourceVersion), or NULL with x->err saying why. */
static cluster_t *rc__secret_client(rc_t *x, const kube_response_t *res, const char *target) {
  engine_t *e = x->e;
  cluster_t *cl = NULL;
  char name[256], key[256];
  rc__secret_cluster(target, name, key);
  buf_reset(&x->err);
  cJSON *obj = kube_response_ok(res) ? cJSON_ParseWithLength(res->body, res->body_len) : NULL;
  const cJSON *rv = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "resourceVersion");
  buf_t text = BUF_INIT;
  char berr[128] = "";
  int got = kube_data_value(obj, key, true, &text, berr, sizeof berr);
  if (!got && !strcmp(key, "value")) got = kube_data_value(obj, "value.yaml", true, &text, berr, sizeof berr); /* as Flux */
  buf_t id = BUF_INIT, what = BUF_INIT;
  buf_printf(&id, "%s/%s:%s", x->req.ns, name, key);
  buf_printf(&what, "Secret %s/%s key %s", x->req.ns, name, key);
  if (!kube_response_ok(res))
    buf_printf(&x->err, "spec.kubeConfig.secretRef: cannot read Secret %s/%s: %s", x->req.ns, name,
               res->errmsg ? res->errmsg : "failed");
  else if (!got)
    buf_printf(&x->err, "spec.kubeConfig.secretRef: Secret %s/%s has no key %s", x->req.ns, name, key);
  else if (got < 0)
    buf_printf(&x->err, "spec.kubeConfig.secretRef: Secret %s/%s key %s: not base64 (%s)", x->req.ns, name, key, berr);
  else if (id.data && what.data)
    cl = clusters_get_text(e->clusters, id.data, cJSON_IsString(rv) ? rv->valuestring : "", text.data, text.len,
                           what.data, &x->err);
  if (text.data) memset(text.data, 0, text.len);
  buf_free(&text);
  buf_free(&id);
  buf_free(&what);
  cJSON_Delete(obj);
  return cl;
}

static void rc__kubeconfig_got(const kube_response_t *res, void *data) {
  rc_t *x = data;
  if (rc__cancelled(x, res)) return;
  x->cl = rc__secret_client(x, res, x->cluster);
  if (!x->cl) {
    if (x->req.deleting) { /* nothing to reach: what was installed there stays */
      LOG_W("cannot uninstall from a cluster that cannot be reached", "release", x->key, "error",
            x->err.data ? x->err.data : "");
      rc__target_gone(x);
      return;
    }
    rc__fail(x, "ClusterUnavailable", RC_RETRY); /* the Secret is watched: a fix is seen at once */
    return;
  }
  rc__begin_rest(x, x->parse_rc);
}

/* A target key: its cluster's client, or (a target no longer wanted, the object deleted) the
 * uninstall from it. Returns 1 when the reconcile has been finished (or goes on) elsewhere. */
static int rc__begin_target(rc_t *x, int parse_rc) {
  engine_t *e = x->e;
  if (parse_rc && !x->req.deleting) return 0; /* fails as a bad spec; nothing is uninstalled for that */
  int wanted = 0;
  if (!x->req.deleting) {
    buf_t t = BUF_INIT;
    rc__targets(x, &t);
    wanted = links__has(t.data, x->cluster);
    buf_free(&t);
  }
  buf_reset(&x->err);
  char name[256], key[256];
  if (e->clusters && rc__secret_cluster(x->cluster, name, key)) {
    if (!wanted) {
      x->req.deleting = true;
      x->req.has_finalizer = true;
    }
    x->parse_rc = parse_rc;
    buf_reset(&x->path);
    kube_path(&x->path, "", "v1", "secrets", x->req.ns, name, NULL);
    rc__send(x, kube_get(e->env.c, x->path.data, rc__kubeconfig_got, x));
    return 1;
  }
  x->cl = e->clusters ? clusters_get(e->clusters, x->cluster, &x->err) : NULL;
  if (!x->cl && !e->clusters) buf_puts(&x->err, "releases in other clusters are not enabled in this controller");
  if (!wanted) {
    if (!x->cl) { /* nothing to reach: what was installed there stays */
      LOG_W("cannot uninstall from a cluster that is gone", "release", x->key, "error", x->err.data ? x->err.data : "");
      rc__target_gone(x);
      return 1;
    }
    x->req.deleting = true;
    x->req.has_finalizer = true; /* the object's key holds it until this cluster is done */
    return 0;
  }
  if (!x->cl) {
    rc__fail(x, "ClusterUnavailable", e->clusters ? RC_RETRY : RC_STALL);
    return 1;
  }
  return 0;
}

static void rc__begin(rc_t *x) {
  engine_t *e = x->e;
  /* A tree of the cache (compact): req copies what it keeps of it, so nothing here outlives the call. */
  const cJSON *obj = informer_get(e->inf, x->obj_key);
  if (!obj && informer_has(e->inf, x->obj_key)) { /* out of memory parsing it: later */
    rc__finish(x, RC_RETRY);
    return;
  }
  if (!obj) { /* deleted, and its finalizer (if any) already gone */
    engine__forget(e, x->key);
    if (!x->cluster) memo_del(&e->fanout, x->key);
    rc__finish(x, RC_FORGET);
    return;
  }
  int rc = e->door->parse(obj, &e->ctx, &x->req, &x->err);
  const cJSON *lf;
  cJSON_ArrayForEach(lf, x->req.finalizers) /* an earlier controller's finalizer holds it for us too */
    if (cJSON_IsString(lf) && rc__legacy_finalizer(e->door, lf->valuestring)) x->req.has_finalizer = true;
  if (x->cluster) {
    if (rc__begin_target(x, rc)) return;
  } else if ((!rc || x->req.deleting) && (rc__multi(x) || memo_get(&e->fanout, x->key))) {
    x->fanned = 1;
    x->coordinator = !rc__fan_out(x);
  }
  rc__begin_rest(x, rc);
}

/* After the parse (and, for a target key, its cluster's client). */
static void rc__begin_rest(rc_t *x, int rc) {
  engine_t *e = x->e;
  if (x->req.deleting) {
    if (!x->req.has_finalizer) {
      rc__finish(x, RC_FORGET);
      return;
    }
    if (x->coordinator) { /* nothing here: the finalizer goes once the other clusters are done */
      rc__uninstalled(x);
      return;
    }
    rc__list_records(x);
    return;
  }
  if (rc) {
    /* Not retried until the object changes: the same input fails the same way. */
    rc__fail(x, rc == -95 ? "NotSupported" : rc == -12 ? "InternalError" : "InvalidSpec",
             rc == -12 ? RC_RETRY : RC_STALL);
    return;
  }
  rc__index_release(x);
  rc__track_refs(x);
  engine__set_deps(e, x->key, x->req.depends_on, x->req.ndepends_on);
  if (x->req.suspend) {
    LOG_I("release suspended", "release", x->key);
    rc__finish(x, RC_FORGET);
    return;
  }
  if (x->req.nvalues_from) {
    if (!(x->vf_values = cJSON_CreateObject())) {
      rc__finish(x, RC_RETRY);
      return;
    }
    rc__values_from_next(x);
    return;
  }
  rc__after_values(x);
}

/* With the values known: the chart next (fetched, or carried in the object). */
static void rc__after_values(rc_t *x) {
  if (x->req.src.kind != REQ_SRC_INLINE) {
    rc__fetch_chart(x);
    return;
  }
  rc__begin_with_chart(x);
}

/* ---- a reconcile asked for (REQ_RECONCILE_ANNOTATION) ---- */

/* Whether the object asks for a reconcile its status does not say was handled: then nothing is
 * decided from the memo or skipped as already reported, and the status is written. */
static int rc__reconcile_asked(const rc_t *x) {
  const release_req_t *r = &x->req;
  return r->reconcile_requested && (!r->reconcile_handled || strcmp(r->reconcile_requested, r->reconcile_handled));
}

static void rc__handled_done(const kube_response_t *res, void *data) {
  rc_t *x = data;
  if (rc__cancelled(x, res)) return;
  if (!kube_response_ok(res) && res->status != 404) LOG_W("cannot record the reconcile as handled", "release", x->key,
                                                         "error", res->errmsg ? res->errmsg : "");
  rc__finish(x, x->outcome);
}

/* Finishes with outcome where no status is written otherwise; a reconcile asked for is recorded
 * as handled first (status.lastHandledReconcileAt only), so that whoever asked sees the answer. */
static void rc__finish_handled(rc_t *x, int outcome) {
  if (!rc__reconcile_asked(x) || x->cluster) {
    rc__finish(x, outcome);
    return;
  }
  cJSON *body = cJSON_CreateObject();
  cJSON *st = body ? cJSON_AddObjectToObject(body, "status") : NULL;
  char *text = st && cJSON_AddStringToObject(st, "lastHandledReconcileAt", x->req.reconcile_requested)
                   ? cJSON_PrintUnformatted(body) : NULL;
  cJSON_Delete(body);
  if (!text) {
    rc__finish(x, RC_RETRY);
    return;
  }
  x->outcome = outcome;
  rc__obj_path(x, "status");
  rc__send(x, kube_merge_patch(x->e->env.c, x->path.data, text, rc__handled_done, x));
  free(text);
}

/* With the chart's identity known (inline, or fetched): decided from the memo when nothing changed. */
static void rc__begin_with_chart(rc_t *x) {
  engine_t *e = x->e;
  rc__merge_memo(x);
  memo_t *m = memo_get(&e->memo, x->key);
  if (m && m->generation == x->req.generation && !strcmp(m->digest, x->req.digest) && m->state != MEMO_NONE &&
      m->state != MEMO_GONE && !(m->state == MEMO_OK && m->drift_mode && !m->drift_ok) && !rc__agg_changed(x) &&
      !rc__reconcile_asked(x)) {
    /* Unchanged inputs: nothing to observe, render or apply. */
    e->stats.memo_hits++;
    rc__finish(x, m->state == MEMO_OK ? RC_DONE : RC_FORGET);
    return;
  }
  if (x->req.ndepends_on && rc__deps_wait(x)) return;
  if (x->coordinator) {
    if (!x->req.has_finalizer) rc__patch_finalizer(x, 1);
    else rc__coordinate(x);
    return;
  }
  if (x->src_entry && !x->req.chart && !(x->req.chart = chart_clone(x->src_entry->chart))) {
    buf_reset(&x->err);
    buf_puts(&x->err, "out of memory copying the chart");
    rc__fail(x, "InternalError", RC_RETRY);
    return;
  }
  if (!x->req.has_finalizer && !x->cluster && !(x->fin_later = rc__finalizer_later(x))) {
    rc__patch_finalizer(x, 1); /* the object's key holds it for every cluster */
    return;
  }
  rc__server_version(x);
}

/* The server's version becomes .Capabilities.KubeVersion (fetched once, then cached). Fetched with a
 * request of the reconcile's own, so that cancelling the reconcile cancels it. */
static void rc__server_version_done(const kube_response_t *res, void *data) {
  rc_t *x = data;
  if (rc__check(x, res, "ArtifactFailed", "reading the server version")) return;
  cJSON *v = cJSON_ParseWithLength(res->body, res->body_len);
  const cJSON *gv = cJSON_GetObjectItemCaseSensitive(v, "gitVersion");
  if (x->cl && cJSON_IsString(gv)) cluster_set_version(x->cl, gv->valuestring);
  else if (!x->e->kube_version && cJSON_IsString(gv)) x->e->kube_version = strdup(gv->valuestring);
  cJSON_Delete(v);
  if (!rc__kube_version(x)) {
    buf_reset(&x->err);
    buf_puts(&x->err, "reading the server version: /version has no gitVersion");
    rc__fail(x, "ArtifactFailed", RC_RETRY);
    return;
  }
  rc__list_records(x);
}

static void rc__server_version(rc_t *x) {
  if (rc__kube_version(x)) {
    rc__list_records(x);
    return;
  }
  rc__send(x, kube_get(rc__storage(x)->c, "/version", rc__server_version_done, x));
}

/* ---- observe ---- */

static void rc__records_listed(const kube_response_t *res, void *data) {
  rc_t *x = data;
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
    rc__fail(x, "StorageFailed", RC_RETRY);
    return;
  }
  const cJSON *it;
  buf_t bad = BUF_INIT;
  int nbad = 0;
  cJSON_ArrayForEach(it, items) {
    buf_t e = BUF_INIT;
    if (record_from_secret(it, &x->recs[x->nrecs], &e) == 0) {
      x->nrecs++;
    } else {
      LOG_W("unreadable release record", "release", x->key, "error", e.data ? e.data : "");
      if (!nbad++) buf_puts(&bad, e.data ? e.data : "");
    }
    buf_free(&e);
  }
  cJSON_Delete(list);
  record_sort(x->recs, x->nrecs);
  /* A record that cannot be read (damaged, or in a format of a newer Helm) hides what the release
   * is: nothing is applied over it, the deployed objects stay, and a change of that record (fixed,
   * deleted) is watched for. An uninstall goes on from the readable records and leaves it. */
  if (nbad && !x->req.deleting) {
    buf_reset(&x->err);
    buf_printf(&x->err, "release record Secret %s/%s%s; nothing is applied until the record is fixed or deleted",
               x->req.storage_ns, bad.data ? bad.data : "", nbad > 1 ? " (and more unreadable records)" : "");
    buf_free(&bad);
    rc__fail(x, "RecordUnreadable", RC_STALL);
    memo_t *m = memo_get(&x->e->memo, x->key);
    if (m) m->bad_record = 1;
    return;
  }
  buf_free(&bad);
  rc__records_read(x);
}

/* With the release's records in x->recs (none, or listed). */
static void rc__records_read(rc_t *x) {
  if (x->listing_prev) {
    x->listing_prev = 0;
    x->prev_done = 1;
    record_t *last = rc__latest(x);
    if (last && last->owner_uid && x->req.uid && !strcmp(last->owner_uid, x->req.uid)) {
      x->retiring = 1;
      rc__start_action(x, ACT_UNINSTALL);
      return;
    }
    rc__records_free(x); /* gone already, or not this object's: left alone */
    rc__list_records(x);
    return;
  }
  if (x->coordinator) { /* only read, for the status (rc__coordinate) */
    rc__write_status(x);
    return;
  }
  memo_t *m = memo_get(&x->e->memo, x->key);
  if (m) m->bad_record = 0;
  if (x->cluster && x->cl) rc__watch_remote(x);
  rc__decide(x);
}

/* Whether the release surely has no record: its first install, seen from the records informer's
 * cache (synced, holding the storage namespace, none named for the release) before this process
 * acted on the object; a record of ours the cache has not seen yet cannot be missed that way. */
static int rc__no_records(rc_t *x) {
  engine_t *e = x->e;
  if (x->cluster || x->coordinator || x->req.deleting || !e->records || !records_synced(e->records)) return 0;
  if (!records_covers(e->records, x->req.storage_ns)) return 0;
  const memo_t *m = memo_get(&e->memo, x->key);
  if ((m && (m->acted || m->revision)) || x->req.applied_revision) return 0;
  return !records_count(e->records, x->req.storage_ns, x->req.release_name);
}

static void rc__list_records(rc_t *x) {
  if (x->fin_later && !rc__finalizer_later(x)) { /* a record came meanwhile: the finalizer first after all */
    x->fin_later = 0;
    rc__patch_finalizer(x, 1);
    return;
  }
  /* Renamed (releaseName, targetNamespace or storageNamespace changed): the release it managed before
   * is looked at first, and uninstalled when it is this object's. */
  x->listing_prev = x->req.prev_release_name && !x->prev_done && !x->req.deleting && !x->coordinator && !x->cluster;
  if (!x->listing_prev && rc__no_records(x)) {
    x->e->stats.lists_skipped++;
    rc__records_free(x);
    rc__records_read(x);
    return;
  }
  buf_reset(&x->path);
  kube_path(&x->path, "", "v1", "secrets", x->listing_prev ? x->req.prev_storage_ns : x->req.storage_ns, NULL, NULL);
  buf_t sel = BUF_INIT;
  buf_printf(&sel, "owner=helm,name=%s", x->listing_prev ? x->req.prev_release_name : x->req.release_name);
  kube_query_add(&x->path, "labelSelector", sel.data);
  buf_free(&sel);
  rc__send(x, kube_get(rc__storage(x)->c, x->path.data, rc__records_listed, x));
}

/* The named states of a release (Flux's helm-controller names the same ones). */
typedef enum {
  ST_ABSENT,      /* no record: install */
  ST_IN_SYNC,     /* the newest record is deployed from these inputs */
  ST_OUT_OF_SYNC, /* deployed from other inputs, or changed outside the engine: upgrade */
  ST_FAILED,      /* the newest record failed */
  ST_LOCKED,      /* the newest record is pending (an operation in progress, or interrupted) */
  ST_ROLLBACK,    /* a rollback to a given revision is wanted and not in place */
  ST_UNINSTALLED, /* the newest record says uninstalled (kept history): install again */
} rc_state_t;

static const char *const rc__state_names[] = {"absent", "in-sync", "out-of-sync", "failed", "locked", "rollback",
                                              "uninstalled"};

static rc_state_t rc__observe(rc_t *x) {
  record_t *latest = rc__latest(x);
  release_req_t *r = &x->req;
  if (!latest) return ST_ABSENT;
  if (!strncmp(latest->status, "pending-", 8)) return ST_LOCKED;
  if (!strcmp(latest->status, "uninstalled")) return ST_UNINSTALLED;
  int ours = latest->version == r->applied_revision && r->applied_digest[0] && !strcmp(r->applied_digest, r->digest);
  /* The status never said what was applied (stopped before writing it): our own deployed record is
   * compared with the inputs themselves. */
  if (!ours && !r->applied_digest[0] && !r->rollback_to && latest->owner_uid && r->uid &&
      !strcmp(latest->owner_uid, r->uid) && !strcmp(latest->status, "deployed") &&
      record_matches(latest, r->chart, r->values, r->target_ns)) {
    r->applied_revision = latest->version;
    memcpy(r->applied_digest, r->digest, 65);
    ours = 1;
  }
  if (!strcmp(latest->status, "deployed")) {
    if (ours) return ST_IN_SYNC;
    return r->rollback_to ? ST_ROLLBACK : ST_OUT_OF_SYNC;
  }
  if (!strcmp(latest->status, "failed")) return ST_FAILED;
  return ST_OUT_OF_SYNC;
}

/* The age of a record's last write, from its last-deployed time. */
static long long rc__age_ms(const record_t *r) {
  const release_info_t *i = r->rel ? r->rel->info : NULL;
  if (!i || !i->last_deployed.set) return 1LL << 40;
  return ((long long)time(NULL) - i->last_deployed.sec) * 1000;
}

static const req_action_opts_t *rc__opts(rc_t *x, act_kind_t k) {
  return k == ACT_INSTALL ? &x->req.install : &x->req.upgrade;
}

static void rc__in_sync_report(rc_t *x);
static drift_t *rc__drift_module(rc_t *x, int make);

static void rc__in_sync(rc_t *x) {
  record_t *latest = rc__latest(x);
  memo_t *m = rc__memo_note(x, latest->version, x->req.digest);
  if (m) {
    m->state = MEMO_OK;
    memcpy(m->digest, x->req.digest, 65);
  }
  /* Untested: tests are enabled and have not passed at this generation. */
  const cJSON *tc = cond_find(x->req.conditions, "TestSuccess");
  const cJSON *tg = tc ? cJSON_GetObjectItemCaseSensitive(tc, "observedGeneration") : NULL;
  if (x->req.test_enable && !(tc && cJSON_IsNumber(tg) && (long long)tg->valuedouble == x->req.generation)) {
    if (m) m->state = MEMO_NONE;
    x->tested_kind = latest->version > 1 ? ACT_UPGRADE : ACT_INSTALL;
    rc__start_action(x, ACT_TEST);
    return;
  }
  if (m) m->drift_mode = (unsigned char)x->req.drift_mode;
  /* Drift: the deployed objects compared with the live ones, when a sign of drift came (or this
   * revision was never compared); otherwise nothing is sent. Only in the controller's own cluster. */
  if (m && x->req.drift_mode != REQ_DRIFT_DISABLED && (!m->drift_ok || m->revision != latest->version) &&
      rc__drift_module(x, 1)) {
    rc__start_action(x, ACT_DRIFT);
    return;
  }
  if (x->req.drift_mode == REQ_DRIFT_DISABLED && cond_find(x->req.conditions, "Drifted")) x->out.drifted = "";
  rc__in_sync_report(x);
}

/* Whether the Drifted condition the outcome asks for is what the object's status has already. */
static int rc__drift_unchanged(rc_t *x) {
  const cJSON *dc = cond_find(x->req.conditions, "Drifted");
  if (!x->out.drifted) return 1;
  if (!*x->out.drifted) return !dc;
  const cJSON *msg = dc ? cJSON_GetObjectItemCaseSensitive(dc, "message") : NULL;
  return dc && cJSON_IsString(msg) && x->out.drift_message && !strcmp(msg->valuestring, x->out.drift_message);
}

/* In sync: success reported, unless the status says so already at this generation. */
static void rc__in_sync_report(rc_t *x) {
  record_t *latest = rc__latest(x);
  const cJSON *ready = cond_find(x->req.conditions, "Ready");
  const cJSON *rs = ready ? cJSON_GetObjectItemCaseSensitive(ready, "status") : NULL;
  const cJSON *og = ready ? cJSON_GetObjectItemCaseSensitive(ready, "observedGeneration") : NULL;
  if (!x->cluster && cJSON_IsString(rs) && !strcmp(rs->valuestring, "True") && cJSON_IsNumber(og) &&
      (long long)og->valuedouble == x->req.generation && !cond_find(x->req.conditions, "Reconciling") &&
      !rc__agg_changed(x) && rc__drift_unchanged(x) && !rc__reconcile_asked(x)) {
    track_release(x->e->door, x->key, "True", latest->version);
    rc__finish(x, RC_DONE);
    return;
  }
  x->outcome = RC_DONE;
  x->ready = "True";
  x->reason = latest->version > 1 ? "UpgradeSucceeded" : "InstallSucceeded";
  buf_reset(&x->msg);
  buf_printf(&x->msg, "Helm release %s/%s.v%lld is deployed", x->req.storage_ns, x->req.release_name, latest->version);
  x->out.released = "True";
  x->out.applied_revision = latest->version;
  x->out.applied_digest = x->req.digest;
  rc__write_status(x);
}

/* ---- objects outside the records' namespace ---- */

#define ENGINE_OUTSIDE_MAX 1000 /* more than this is not kept in the status (its size is bounded) */

/* Order of the outside list: Helm's uninstall order of kinds (unknown ones after, by name), then
 * namespace, name and apiVersion, so that the list is the same whichever parse of the manifest
 * made it (rc__outside) and a status write is not made for an order alone. */
static int rc__outside_cmp(const void *pa, const void *pb) {
  const cJSON *a = *(const cJSON *const *)pa, *b = *(const cJSON *const *)pb;
  const char *ka = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "kind"));
  const char *kb = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "kind"));
  int ra = manifest_kind_rank(ka, MANIFEST_UNINSTALL_ORDER), rb = manifest_kind_rank(kb, MANIFEST_UNINSTALL_ORDER);
  if (ra != rb) return ra < 0 ? 1 : rb < 0 ? -1 : ra < rb ? -1 : 1;
  int c = strcmp(ka, kb);
  static const char *const fields[] = {"namespace", "name", "apiVersion"};
  for (size_t i = 0; !c && i < sizeof fields / sizeof *fields; i++) {
    const char *fa = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, fields[i]));
    const char *fb = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, fields[i]));
    c = strcmp(fa ? fa : "", fb ? fb : "");
  }
  return c;
}

/* The objects of record r that live outside the namespace its records are stored in (cluster-scoped
 * ones, and namespaced ones of other namespaces), without those helm.sh/resource-policy=keep
 * leaves behind: what an uninstall must still find when that namespace is deleted with the records
 * in it. An empty array when there are none; NULL when unknown (a kind not mapped yet, too many).
 * When r is the revision this reconcile rendered (its manifest is the render's), the render's
 * documents are read instead of parsing the manifest again; sorted (rc__outside_cmp) either way. */
static cJSON *rc__outside(rc_t *x, const record_t *r) {
  if (!r || !r->rel || !r->rel->manifest) return NULL;
  manifest_set_t parsed = {0};
  const manifest_set_t *set = &x->set;
  if (!x->set.manifest || strcmp(x->set.manifest, r->rel->manifest)) {
    manifest_error_t me;
    if (manifest_parse_release(r->rel->manifest, strlen(r->rel->manifest), MANIFEST_UNINSTALL_ORDER, &parsed, &me))
      return NULL;
    set = &parsed;
  }
  cJSON *arr = cJSON_CreateArray();
  const char *target = r->rel->namespace && *r->rel->namespace ? r->rel->namespace : x->req.target_ns;
  for (size_t i = 0; arr && i < set->ndocs; i++) {
    const manifest_doc_t *d = &set->docs[i];
    if (d->is_empty || !d->name || !*d->name) continue;
    const cJSON *keep = cJSON_GetObjectItemCaseSensitive(d->annotations, "helm.sh/resource-policy");
    if (cJSON_IsString(keep) && !strcmp(keep->valuestring, "keep")) continue;
    discovery_mapping_t m;
    if (discovery_lookup(rc__storage(x)->d, d->api_version, d->kind, &m)) { /* not known: the list would be wrong */
      cJSON_Delete(arr);
      arr = NULL;
      break;
    }
    const char *ns = m.namespaced ? (d->namespace && *d->namespace ? d->namespace : target) : NULL;
    if (ns && !strcmp(ns, x->req.storage_ns)) continue;
    if (cJSON_GetArraySize(arr) >= ENGINE_OUTSIDE_MAX) {
      cJSON_Delete(arr);
      arr = NULL;
      break;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "apiVersion", d->api_version);
    cJSON_AddStringToObject(o, "kind", d->kind);
    if (ns) cJSON_AddStringToObject(o, "namespace", ns);
    cJSON_AddStringToObject(o, "name", d->name);
    cJSON_AddItemToArray(arr, o);
  }
  manifest_set_free(&parsed);
  int n = arr ? cJSON_GetArraySize(arr) : 0;
  cJSON **items = n > 1 ? malloc((size_t)n * sizeof *items) : NULL;
  if (items) { /* detached, sorted, put back */
    for (int i = 0; i < n; i++) items[i] = cJSON_DetachItemFromArray(arr, 0);
    qsort(items, (size_t)n, sizeof *items, rc__outside_cmp);
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(arr, items[i]);
    free(items);
  }
  return arr;
}

/* A release whose records are gone while its object is deleted (its namespace deleted with the
 * records in it): a record made of the objects the status kept, so that the uninstall deletes
 * them as usual (only those that carry this release's ownership metadata). */
static int rc__record_from_outside(rc_t *x) {
  const release_req_t *r = &x->req;
  buf_t man = BUF_INIT;
  const cJSON *o;
  cJSON_ArrayForEach(o, r->outside) {
    cJSON *doc = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(doc, "metadata");
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(o, "namespace");
    cJSON_AddItemToObject(doc, "apiVersion", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(o, "apiVersion"), 1));
    cJSON_AddItemToObject(doc, "kind", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(o, "kind"), 1));
    cJSON_AddItemToObject(meta, "name", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(o, "name"), 1));
    if (cJSON_IsString(ns)) cJSON_AddStringToObject(meta, "namespace", ns->valuestring);
    char *text = cJSON_PrintUnformatted(doc); /* JSON is YAML */
    cJSON_Delete(doc);
    if (!text) {
      buf_free(&man);
      return -12;
    }
    buf_printf(&man, "---\n# Source: %s/outside\n%s\n", r->release_name, text);
    free(text);
  }
  record_t *rec = calloc(1, sizeof *rec);
  release_t *rel = rec ? calloc(1, sizeof *rel) : NULL;
  buf_t sname = BUF_INIT;
  long long v = r->applied_revision > 0 ? r->applied_revision : 1;
  buf_printf(&sname, "sh.helm.release.v1.%s.v%lld", r->release_name, v);
  if (!rec || !rel || !man.data || !sname.data || !(rel->name = strdup(r->release_name)) ||
      !(rel->namespace = strdup(r->target_ns)) || !(rec->status = strdup("deployed")) ||
      !(r->uid && (rec->owner_uid = strdup(r->uid)))) {
    if (rel) release_free(rel);
    if (rec) {
      free(rec->status);
      free(rec->owner_uid);
    }
    free(rec);
    buf_free(&man);
    buf_free(&sname);
    return -12;
  }
  rel->manifest = buf_steal(&man);
  rel->version = v;
  rec->version = v;
  rec->secret_name = buf_steal(&sname);
  rec->rel = rel;
  rc__records_free(x);
  x->recs = rec;
  x->nrecs = 1;
  return 0;
}

/* Uninstalls on the object's own deletion, and only a release this object manages (a record carries
 * its uid): deleting an object that was refused, or that never took over a helm CLI release, leaves
 * the release alone. */
static void rc__delete_release(rc_t *x) {
  int ours = 0;
  for (size_t i = 0; i < x->nrecs; i++)
    if (x->recs[i].owner_uid && x->req.uid && !strcmp(x->recs[i].owner_uid, x->req.uid)) ours = 1;
  if (!x->nrecs && x->req.outside && !x->cluster) {
    LOG_I("the release records are gone: uninstalling the objects outside their namespace the status lists",
          "release", x->key);
    if (rc__record_from_outside(x)) {
      rc__finish(x, RC_RETRY);
      return;
    }
    ours = 1;
  }
  if (!ours) {
    if (x->nrecs) LOG_I("not uninstalling a release this object does not manage", "release", x->key);
    rc__uninstalled(x);
    return;
  }
  rc__run(x, ACT_UNINSTALL);
}

/* When the kind's CRD itself is being deleted, the API server deletes every object of the kind:
 * that is not a request to uninstall every release in the cluster. The releases are left as they
 * are (orphaned, still working with the helm CLI) and only the finalizers are removed. */
static void rc__crd_checked(const kube_response_t *res, void *data) {
  rc_t *x = data;
  if (rc__cancelled(x, res)) return;
  if (kube_response_ok(res)) {
    cJSON *crd = cJSON_ParseWithLength(res->body, res->body_len);
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(crd, "metadata");
    int going = cJSON_GetObjectItemCaseSensitive(meta, "deletionTimestamp") != NULL;
    cJSON_Delete(crd);
    if (going) {
      LOG_W("the kind's CRD is being deleted: leaving the release installed", "release", x->key);
      rc__uninstalled(x);
      return;
    }
  }
  rc__delete_release(x);
}

static void rc__check_kind_deleted(rc_t *x) {
  const door_t *dr = x->e->door;
  buf_reset(&x->path);
  buf_printf(&x->path, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/%s.%s", dr->resource, dr->group);
  rc__send(x, kube_get(x->e->env.c, x->path.data, rc__crd_checked, x));
}

static void rc__decide(rc_t *x) {
  release_req_t *r = &x->req;
  record_t *latest = rc__latest(x);
  if (r->deleting) {
    rc__check_kind_deleted(x);
    return;
  }
  /* One object per release: records written for another object are not taken over. */
  if (latest && latest->owner_uid && r->uid && strcmp(latest->owner_uid, r->uid)) {
    buf_t k = BUF_INIT;
    buf_printf(&k, "%s/%s", r->storage_ns, r->release_name);
    memo_t *owner = k.data ? memo_get(&x->e->releases, k.data) : NULL;
    buf_free(&k);
    buf_reset(&x->err);
    if (owner && owner->owner && strcmp(owner->owner, x->key))
      buf_printf(&x->err, "release %s/%s is managed by %s %s; refusing to take it over", r->storage_ns, r->release_name,
                 x->e->door->kind, owner->owner);
    else
      buf_printf(&x->err, "release %s/%s is managed by another object (uid %s); refusing to take it over",
                 r->storage_ns, r->release_name, latest->owner_uid);
    rc__fail(x, "ReleaseConflict", RC_STALL);
    return;
  }
  rc_state_t st = rc__observe(x);
  LOG_D("observed", "release", x->key, "state", rc__state_names[st]);
  /* A release another tool made (no owner annotation on any record) is taken over only on request. */
  int foreign = x->nrecs > 0;
  for (size_t i = 0; i < x->nrecs; i++)
    if (x->recs[i].owner_uid) foreign = 0;
  if (foreign && !r->upgrade.take_ownership && !r->install.take_ownership) {
    buf_reset(&x->err);
    buf_printf(&x->err, "release %s/%s exists and was not made by rudder (helm CLI?); set spec.upgrade.takeOwnership "
               "to take it over", r->storage_ns, r->release_name);
    rc__fail(x, "ReleaseConflict", RC_STALL);
    return;
  }
  if (foreign) rc__event(x, "Normal", "TakingOver", "taking over a release made outside rudder (takeOwnership is set)");
  switch (st) {
  case ST_IN_SYNC:
    rc__in_sync(x);
    return;
  case ST_LOCKED:
    if (latest->owner_uid && r->uid && !strcmp(latest->owner_uid, r->uid)) {
      /* Our own operation, interrupted (a crash, a lost lease): taken over by the next one. */
      rc__run(x, rc__released(x) ? ACT_UPGRADE : ACT_INSTALL);
      return;
    }
    if (rc__age_ms(latest) < r->timeout_ms) {
      buf_reset(&x->err);
      buf_printf(&x->err, "another operation (%s) is in progress on release %s/%s", latest->status, r->storage_ns,
                 r->release_name);
      x->outcome = RC_AFTER;
      x->after_ms = ENGINE_LOCK_RETRY_MS;
      x->ready = "Unknown";
      x->reason = "ReleaseLocked";
      buf_reset(&x->msg);
      buf_puts(&x->msg, x->err.data);
      x->out.applied_revision = r->applied_revision;
      x->out.applied_digest = r->applied_digest;
      rc__write_status(x);
      return;
    }
    rc__event(x, "Warning", "ReleaseUnlocked", "a pending operation older than the timeout was marked failed");
    rc__run(x, ACT_UNLOCK);
    return;
  case ST_ROLLBACK:
    rc__run(x, ACT_ROLLBACK);
    return;
  case ST_FAILED:
  case ST_OUT_OF_SYNC:
    if (st == ST_FAILED && !strcmp(r->failed_digest, r->digest) && !r->rollback_to) {
      /* These inputs failed before (the status remembers it across restarts): retried only while
       * remediation retries remain. */
      act_kind_t k = rc__released(x) ? ACT_UPGRADE : ACT_INSTALL;
      const req_action_opts_t *o = rc__opts(x, k);
      int count = k == ACT_INSTALL ? r->install_failures : r->upgrade_failures;
      if (o->retries >= 0 && count > o->retries) {
        memo_t *m = rc__memo_note(x, 0, NULL);
        if (m) {
          m->state = MEMO_STALLED;
          memcpy(m->digest, r->digest, 65);
        }
        rc__finish_handled(x, RC_STALL);
        return;
      }
    }
    if (r->rollback_to) {
      rc__run(x, ACT_ROLLBACK);
      return;
    }
    if (latest->version > r->applied_revision && r->applied_revision && !strcmp(latest->status, "deployed"))
      rc__event(x, "Warning", "ChangedOutside",
                "the release was changed outside rudder (helm upgrade or rollback?); bringing it back to the spec");
    rc__run(x, rc__released(x) ? ACT_UPGRADE : ACT_INSTALL);
    return;
  case ST_ABSENT:
  case ST_UNINSTALLED:
    if (r->rollback_to) {
      buf_reset(&x->err);
      buf_printf(&x->err, "%s: revision %lld of release %s/%s does not exist",
                 r->rollback_field ? r->rollback_field : "spec.rollback.toRevision", r->rollback_to,
                 r->storage_ns, r->release_name);
      rc__fail(x, "RollbackFailed", RC_STALL);
      return;
    }
    rc__run(x, ACT_INSTALL);
    return;
  }
}

/* ---- lookup: renders on the thread pool ask, the loop thread fetches ---- */

#define ENGINE_LOOKUP_TIMEOUT_NS (60ULL * 1000 * 1000 * 1000)

static void lookup__release(lookup_t *l) {
  /* under e->lk_mu */
  if (--l->refs) return;
  uv_cond_destroy(&l->cond);
  free(l->api_version);
  free(l->kind);
  free(l->ns);
  free(l->name);
  free(l->json);
  buf_free(&l->path);
  free(l);
}

static void lookup__complete(lookup_t *l, int rc, const char *body, size_t len, const char *err) {
  engine_t *e = l->e;
  char *json = body ? strndup(body, len) : NULL;
  uv_mutex_lock(&e->lk_mu);
  l->rc = body && !json ? -12 : rc;
  l->json = json;
  if (err) snprintf(l->err, sizeof l->err, "%s", err);
  l->done = 1;
  uv_cond_signal(&l->cond);
  lookup__release(l);
  uv_mutex_unlock(&e->lk_mu);
}

static void lookup__got(const kube_response_t *res, void *data) {
  lookup_t *l = data;
  if (res->status == 404) {
    lookup__complete(l, 0, NULL, 0, NULL);
    return;
  }
  if (!kube_response_ok(res)) {
    char m[512];
    snprintf(m, sizeof m, "%s", res->errmsg ? res->errmsg : uv_strerror(res->err));
    lookup__complete(l, -1, NULL, 0, m);
    return;
  }
  lookup__complete(l, 0, res->body, res->body_len, NULL);
}

static void lookup__mapped(int err, const char *errmsg, const discovery_mapping_t *m, void *data) {
  lookup_t *l = data;
  engine_t *e = l->e;
  char msg[512];
  if (err) {
    if (err == UV_ENOENT)
      snprintf(msg, sizeof msg, "no matches for kind \"%s\" in version \"%s\"", l->kind, l->api_version);
    else
      snprintf(msg, sizeof msg, "resolving kind %s %s: %s", l->api_version, l->kind, errmsg ? errmsg : uv_strerror(err));
    lookup__complete(l, -1, NULL, 0, msg);
    return;
  }
  /* Helm's lookup: a namespace only for namespaced kinds; an empty name lists. */
  const char *ns = m->namespaced && *l->ns ? l->ns : NULL;
  kube_path(&l->path, m->group, m->version, m->resource, ns, *l->name ? l->name : NULL, NULL);
  if (e->stopping || !kube_get(l->c ? l->c : e->env.c, l->path.data, lookup__got, l))
    lookup__complete(l, -1, NULL, 0, "the controller is shutting down");
}

static void engine__lookups_cb(uv_async_t *h) {
  engine_t *e = h->data;
  uv_mutex_lock(&e->lk_mu);
  lookup_t *l = e->lk_head;
  e->lk_head = NULL;
  uv_mutex_unlock(&e->lk_mu);
  while (l) {
    lookup_t *next = l->next;
    if (e->stopping || discovery_resolve(e->d, l->api_version, l->kind, lookup__mapped, l))
      lookup__complete(l, -1, NULL, 0, "the controller is shutting down");
    l = next;
  }
}

/* Called on a worker thread by the template engine's `lookup`. */
static int engine__lookup(void *ctx, const char *api_version, const char *kind, const char *ns, const char *name,
                          char **json, char *err, size_t errlen) {
  const lk_ctx_t *k = ctx;
  engine_t *e = k->e;
  kube_client_t *as = k->c;
  *json = NULL;
  lookup_t *l = calloc(1, sizeof *l);
  if (!l) return -12;
  l->e = e;
  l->c = as;
  l->refs = 2;
  l->api_version = strdup(api_version);
  l->kind = strdup(kind);
  l->ns = strdup(ns);
  l->name = strdup(name);
  if (!l->api_version || !l->kind || !l->ns || !l->name || uv_cond_init(&l->cond)) {
    free(l->api_version);
    free(l->kind);
    free(l->ns);
    free(l->name);
    free(l);
    return -12;
  }
  uv_mutex_lock(&e->lk_mu);
  l->next = e->lk_head;
  e->lk_head = l;
  uv_mutex_unlock(&e->lk_mu);
  uv_async_send(&e->lookups);
  uv_mutex_lock(&e->lk_mu);
  int timed_out = 0;
  while (!l->done && !timed_out) timed_out = uv_cond_timedwait(&l->cond, &e->lk_mu, ENGINE_LOOKUP_TIMEOUT_NS) != 0;
  int rc;
  if (!l->done) {
    snprintf(err, errlen, "lookup %s %s %s/%s: no answer within 60s", api_version, kind, ns, name);
    rc = -1;
  } else {
    rc = l->rc;
    if (rc && rc != -12) snprintf(err, errlen, "%s", l->err);
    *json = l->json;
    l->json = NULL;
  }
  lookup__release(l);
  uv_mutex_unlock(&e->lk_mu);
  return rc;
}

/* ---- render (libuv's thread pool) and actions ---- */

static void rc__action_done(act_t *a, void *data);

static void rc__ns_created(const kube_response_t *res, void *data) {
  rc_t *x = data;
  if (rc__cancelled(x, res)) return;
  if (!kube_response_ok(res) && res->status != 409) { /* AlreadyExists is what was wanted */
    buf_reset(&x->err);
    buf_printf(&x->err, "spec.createNamespace: cannot create namespace %s: %s", x->req.target_ns,
               res->errmsg ? res->errmsg : "failed");
    rc__fail(x, "InstallFailed", RC_RETRY);
    return;
  }
  x->ns_created = 1;
  rc__start_action(x, ACT_INSTALL);
}

/* As `helm install --create-namespace`: the target namespace, labelled name=<namespace>, created
 * by the release's identity before the install (never deleted with the release). */
static void rc__create_namespace(rc_t *x, const act_env_t *env) {
  cJSON *ns = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(ns, "metadata");
  cJSON_AddStringToObject(ns, "apiVersion", "v1");
  cJSON_AddStringToObject(ns, "kind", "Namespace");
  cJSON_AddStringToObject(meta, "name", x->req.target_ns);
  cJSON_AddStringToObject(cJSON_AddObjectToObject(meta, "labels"), "name", x->req.target_ns);
  char *body = cJSON_PrintUnformatted(ns);
  cJSON_Delete(ns);
  buf_reset(&x->path);
  kube_path(&x->path, "", "v1", "namespaces", NULL, NULL, NULL);
  kube_req_opts_t o = {.method = "POST", .path = x->path.data, .body = body, .body_len = body ? strlen(body) : 0,
                       .content_type = "application/json"};
  rc__send(x, body ? kube_request(env->c, &o, rc__ns_created, x) : NULL);
  free(body);
}

/* The drift action's questions: every kind of the deployed objects is watched, and each object is
 * compared only when it is missing or suspected (every one after a failed comparison). */
static void rc__drift_kind(const char *group, const char *version, const char *resource, bool namespaced, void *data) {
  rc_t *x = data;
  drift_t *d = rc__drift_module(x, 0);
  if (d && drift_watch(d, group, version, resource, namespaced))
    LOG_W("cannot watch objects for drift", "release", x->key, "resource", resource);
}

static int rc__drift_check(const act_drift_obj_t *o, void *data) {
  rc_t *x = data;
  memo_t *m = memo_get(&x->e->memo, x->key);
  drift_t *d = rc__drift_module(x, 0);
  return d ? drift_check(d, o, m && m->drift_all) : ACT_DRIFT_UNSYNCED;
}

static void rc__drift_result(const act_drift_obj_t *o, bool drifted, void *data) {
  rc_t *x = data;
  drift_t *d = rc__drift_module(x, 0);
  if (d) drift_mark(d, o, drifted);
}

/* The outcome of a drift comparison: reported (warn: condition Drifted and an Event) or corrected
 * (enabled: an Event), then the release is reported in sync as usual. */
static void rc__drift_done(rc_t *x) {
  act_t *a = &x->act;
  memo_t *m = memo_get(&x->e->memo, x->key);
  if (a->rc) {
    if (m) m->drift_all = 1;
    buf_reset(&x->err);
    buf_printf(&x->err, "comparing the release's objects with the live ones: %s", a->err.data ? a->err.data : "");
    LOG_W("drift detection failed", "release", x->key, "error", x->err.data);
    rc__event(x, "Warning", "DriftDetectionFailed", x->err.data);
    rc__finish(x, RC_RETRY);
    return;
  }
  if (m) {
    m->drift_ok = !a->drift_unsynced && m->revision == a->version; /* the rest is compared once its kind has been listed */
    m->drift_all = 0;
  }
  if (a->drifted && !a->drift_correct) {
    x->out.drifted = "True";
    x->out.drift_message = a->drift.data;
    if (!rc__drift_unchanged(x)) rc__event(x, "Warning", "DriftDetected", a->drift.data);
  } else {
    x->out.drifted = "";
    if (a->drifted) {
      buf_t msg = BUF_INIT;
      buf_printf(&msg, "drift corrected: %s", a->drift.data);
      LOG_I("drift corrected", "release", x->key, "objects", a->drift.data);
      rc__event(x, "Normal", "DriftCorrected", msg.data ? msg.data : a->drift.data);
      buf_free(&msg);
    }
  }
  rc__in_sync_report(x);
}

static void engine__progress_arm(engine_t *e, uint64_t due);

/* The action waits on the cluster: once it has waited ENGINE_PARK_AFTER_MS, its queue slot goes
 * to the next release (engine__progress_tick; unless max_waiting releases wait already: it keeps
 * the slot and tries again as long again later), and is taken back when it goes on. Shorter
 * waits keep their slot: most waits are short, and a slot given away for them only lets more
 * writes compete with the controllers making the objects ready (bench/scale/README.md). */
static void rc__act_waiting(act_t *a, bool on, void *data) {
  rc_t *x = data;
  (void)a;
  if (on) {
    if (!x->parked && !x->park_due && x->e->q.max_parked) {
      x->park_due = uv_now(x->e->loop) + ENGINE_PARK_AFTER_MS;
      engine__progress_arm(x->e, x->park_due);
    }
    return;
  }
  x->park_due = 0;
  if (x->parked) {
    x->parked = 0;
    queue_unpark(&x->e->q, x->key);
  }
}

static void rc__start_action(rc_t *x, act_kind_t kind) {
  engine_t *e = x->e;
  release_req_t *r = &x->req;
  memo_t *am = kind == ACT_DRIFT ? NULL : memo_put(&e->memo, x->key);
  if (am) am->acted = 1; /* from now on its records are listed (rc__no_records) */
  else if (kind != ACT_DRIFT) {
    buf_reset(&x->err);
    buf_puts(&x->err, "out of memory");
    rc__fail(x, "InternalError", RC_RETRY);
    return;
  }
  if (kind == ACT_INSTALL && r->create_namespace && !x->ns_created) {
    buf_reset(&x->err);
    const act_env_t *env = rc__env(x, &x->err);
    if (!env) {
      rc__fail(x, "InternalError", RC_RETRY);
      return;
    }
    rc__create_namespace(x, env);
    return;
  }
  act_free(&x->act);
  memset(&x->act, 0, sizeof x->act);
  act_t *a = &x->act;
  a->kind = kind;
  buf_reset(&x->err);
  const act_env_t *env = rc__env(x, &x->err);
  if (!env) {
    rc__fail(x, "InternalError", RC_RETRY);
    return;
  }
  a->env = env;
  a->log_key = x->key;
  a->release_name = x->retiring ? r->prev_release_name : r->release_name;
  a->ns = r->target_ns; /* an uninstall deletes where the records say the objects are */
  a->storage_ns = x->retiring ? r->prev_storage_ns : r->storage_ns;
  a->owner_uid = r->uid;
  a->max_history = r->max_history;
  a->take_ownership = rc__opts(x, kind)->take_ownership;
  a->crds = rc__opts(x, kind)->crds;
  a->keep_history = r->keep_history && !x->retiring;
  a->disable_hooks = kind == ACT_UNINSTALL ? r->uninstall_disable_hooks : rc__opts(x, kind)->disable_hooks;
  a->timeout_ms = (uint64_t)(kind == ACT_UNINSTALL && r->uninstall_timeout_ms ? r->uninstall_timeout_ms : r->timeout_ms);
  a->wait = kind == ACT_UNINSTALL ? !r->uninstall_disable_wait
                                  : kind != ACT_UNLOCK && !rc__opts(x, kind)->disable_wait;
  a->force = kind == ACT_UPGRADE && r->force;
  a->cleanup_on_fail = kind == ACT_UPGRADE && r->cleanup_on_fail;
  a->propagation = r->deletion_propagation;
  a->recs = x->recs;
  a->nrecs = x->nrecs;
  a->chart = r->chart;
  a->config = r->values;
  a->set = &x->set;
  a->crd_docs = &x->crds;
  if (!x->labels && (x->labels = cJSON_CreateObject())) {
    cJSON_AddStringToObject(x->labels, DRIFT_LABEL_NAME, r->release_name);
    cJSON_AddStringToObject(x->labels, DRIFT_LABEL_NAMESPACE, r->storage_ns);
  }
  a->labels = x->labels;
  if (kind == ACT_DRIFT) {
    a->drift_correct = r->drift_mode == REQ_DRIFT_ENABLED;
    a->drift_ignore = r->drift_ignore;
    a->drift_kind = rc__drift_kind;
    a->drift_check = rc__drift_check;
    a->drift_result = rc__drift_result;
    a->drift_data = x;
  }
  if (kind == ACT_ROLLBACK) {
    if (x->remediating) {
      a->rollback_to = x->remediate_to;
    } else {
      a->rollback_to = r->rollback_to;
    }
  }
  a->waiting = rc__act_waiting;
  a->waiting_data = x;
  e->stats.actions++;
  LOG_I("action", "release", x->key, "action", act_kind_name(kind));
  rc__progress(x);
}

/* Go's time.Duration.String() of ms ("5m0s", "1m30s", "1.5s"), as Flux's messages print timeouts. */
static void rc__go_duration(uint64_t ms, char *out, size_t len) {
  uint64_t h = ms / 3600000, m = ms / 60000 % 60, sec = ms / 1000 % 60, frac = ms % 1000;
  char s[16];
  if (frac) {
    snprintf(s, sizeof s, "%llu.%03llu", (unsigned long long)sec, (unsigned long long)frac);
    for (size_t n = strlen(s); s[n - 1] == '0'; n--) s[n - 1] = 0;
  } else {
    snprintf(s, sizeof s, "%llu", (unsigned long long)sec);
  }
  if (h) snprintf(out, len, "%lluh%llum%ss", (unsigned long long)h, (unsigned long long)m, s);
  else if (m) snprintf(out, len, "%llum%ss", (unsigned long long)m, s);
  else if (!sec && frac) snprintf(out, len, "%llums", (unsigned long long)frac);
  else snprintf(out, len, "%ss", s);
}

static void rc__act_go(rc_t *x) {
  if (x->fin_later) {
    /* The install adds the finalizer: sent with the controller's identity (as rc__patch_finalizer)
     * together with the ownership GETs, after the progress report (its resourceVersion). */
    assert(x->act.kind == ACT_INSTALL);
    x->fin_later = 0;
    rc__obj_path(x, NULL);
    if (!(x->fin_body = rc__finalizer_body(x, 1)) || !(x->fin_path = strdup(x->path.data))) {
      rc__finish(x, RC_RETRY);
      return;
    }
    x->act.pre_patch_client = x->e->env.c;
    x->act.pre_patch_path = x->fin_path;
    x->act.pre_patch_body = x->fin_body;
  }
  if (act_start(&x->act, rc__action_done, x)) {
    rc__finish(x, RC_RETRY);
    return;
  }
  x->act_running = 1;
}

/* The report's answer: our write moved the object's resourceVersion, and the finalizer patch (which
 * asserts it) must not take our own write for someone else's. */
static void rc__progress_written(rc_t *x, const kube_response_t *res) {
  /* Only a report: the action runs whether or not it was written. */
  if (!kube_response_ok(res)) {
    if (res->err != UV_ECANCELED)
      LOG_W("cannot write the Reconciling condition", "release", x->key, "error", res->errmsg ? res->errmsg : "");
    return;
  }
  cJSON *o = cJSON_ParseWithLength(res->body, res->body_len);
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
  const cJSON *rv = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
  const cJSON *fins = cJSON_GetObjectItemCaseSensitive(meta, "finalizers");
  /* Only when the finalizers are still the ones we read (else the patch must fail and re-read). */
  int same = (!fins && !x->req.finalizers) || (fins && x->req.finalizers && cJSON_Compare(fins, x->req.finalizers, 1));
  char *nrv = same && cJSON_IsString(rv) ? strdup(rv->valuestring) : NULL;
  if (nrv) {
    free(x->req.resource_version);
    x->req.resource_version = nrv;
  }
  cJSON_Delete(o);
}

static void rc__progress_done(const kube_response_t *res, void *data) {
  rc_t *x = data;
  if (rc__cancelled(x, res)) return;
  rc__progress_written(x, res);
  rc__act_go(x);
}

/* The body of the Reconciling report for the action about to run (NULL: the door writes none). */
static char *rc__progress_body(rc_t *x) {
  char d[32], msg[96];
  rc__go_duration(x->act.timeout_ms ? x->act.timeout_ms : 300000, d, sizeof d);
  snprintf(msg, sizeof msg, "Running '%s' action with timeout of %s", act_kind_name(x->act.kind), d);
  release_outcome_t o = {.req = &x->req, .progressing = msg};
  return x->e->door->status_patch(&o);
}

/* A report written while its action runs: the action's end waits for the answer (rc__action_done). */
static void rc__progress_late_done(const kube_response_t *res, void *data) {
  rc_t *x = data;
  x->progress_req = NULL;
  rc__progress_written(x, res);
  if (x->action_waiting) {
    x->action_waiting = 0;
    rc__action_done(&x->act, x);
  }
}

static void engine__progress_arm(engine_t *e, uint64_t due);

/* Writes the reports that are due, for the actions still running; re-arms for the next one. */
static void engine__progress_tick(uv_timer_t *t) {
  engine_t *e = t->data;
  uint64_t now = uv_now(e->loop), next = 0;
  for (rc_t *x = e->running; x; x = x->next) {
    if (x->park_due) {
      if (!x->act_running || x->cancelled) {
        x->park_due = 0;
      } else if (x->park_due <= now) {
        x->parked = queue_park(&e->q, x->key) == 0;
        x->park_due = x->parked ? 0 : now + ENGINE_PARK_AFTER_MS;
        if (x->parked) e->stats.parked++;
      }
      if (x->park_due && (!next || x->park_due < next)) next = x->park_due;
    }
    if (!x->progress_due) continue;
    if (!x->act_running || x->cancelled || x->progress_req) {
      x->progress_due = 0;
      continue;
    }
    if (x->progress_due <= now && x->act.pre_pending) /* not before the finalizer's answer: a status write
                                                          moves the resourceVersion it asserts */
      x->progress_due = now + ENGINE_PROGRESS_RECHECK_MS;
    if (x->progress_due > now) {
      if (!next || x->progress_due < next) next = x->progress_due;
      continue;
    }
    x->progress_due = 0;
    char *body = rc__progress_body(x);
    if (!body) continue;
    rc__obj_path(x, "status");
    x->progress_req = kube_merge_patch(e->env.c, x->path.data, body, rc__progress_late_done, x);
    free(body);
  }
  if (next) engine__progress_arm(e, next);
}

static void engine__progress_arm(engine_t *e, uint64_t due) {
  if (e->stopping) return;
  uint64_t now = uv_now(e->loop);
  uint64_t at = now + uv_timer_get_due_in(&e->progress_timer);
  if (uv_is_active((uv_handle_t *)&e->progress_timer) && at <= due) return;
  uv_timer_start(&e->progress_timer, engine__progress_tick, due > now ? due - now : 0, 0);
}

/* Reconciling=True (Progressing) with the action and its timeout, as Flux writes it before each
 * action; the outcome's status write removes it. Written before the action when progress_delay_ms
 * is negative, else only once the action has run that long: an action done sooner costs one status
 * write (its outcome), not two, and status.observedGeneration tells kstatus readers it is not
 * done meanwhile. */
static void rc__progress(rc_t *x) {
  /* A drift comparison changes no release: it writes no progress (nothing at all when nothing drifted). */
  if (x->cluster || x->act.kind == ACT_DRIFT) { /* the object's key reports for every cluster */
    rc__act_go(x);
    return;
  }
  engine_t *e = x->e;
  if (e->progress_delay_ms >= 0) {
    x->progress_due = uv_now(e->loop) + (uint64_t)e->progress_delay_ms;
    if (!x->progress_due) x->progress_due = 1;
    engine__progress_arm(e, x->progress_due);
    rc__act_go(x);
    return;
  }
  char *body = rc__progress_body(x);
  rc__obj_path(x, "status");
  if (!body) {
    rc__act_go(x);
    return;
  }
  rc__send(x, kube_merge_patch(e->env.c, x->path.data, body, rc__progress_done, x));
  free(body);
}

/* A values.schema.json's http(s) references: fetched on this worker thread (it blocks, not the loop). */
static const schema_loader_t engine__schema_net = {schema_http_load, NULL, NULL};

/* Helm's warnings from a render (the deprecated chart, the values' coalesce warnings), kept for one
 * Event once the render is back on the loop; called on the worker, which alone touches them then. */
static void rc__render_warn(void *ctx, const char *level, const char *msg) {
  rc_t *x = ctx;
  if (!strcmp(level, "WARN")) x->render_warned = 1;
  if (x->render_warnings.len < 4000) buf_printf(&x->render_warnings, "%s%s", x->render_warnings.len ? "; " : "", msg);
}

static void rc__render_work(uv_work_t *w) {
  rc_t *x = container_of(w, rc_t, work);
  render_opts_t ro = {.release_name = x->req.release_name, .namespace = x->req.target_ns,
                      .revision = (int)(x->nrecs ? rc__latest(x)->version + 1 : 1),
                      .is_upgrade = rc__released(x), .kube_version = rc__kube_version(x),
                      .lookup = engine__lookup, .lookup_ctx = &x->lk, .limits = x->e->limits,
                      .warn = rc__render_warn, .warn_ctx = x,
                      .schema_loader = &engine__schema_net};
  cJSON *vals = x->render_values;
  x->render_values = NULL;
  x->render_rc = render_release(x->req.chart, vals, &ro, &x->set, &x->crds, &x->err);
}

static void rc__render_after(uv_work_t *w, int status) {
  rc_t *x = container_of(w, rc_t, work);
  x->rendering = 0;
  if (status == UV_ECANCELED || x->cancelled) {
    rc__finish(x, RC_RETRY);
    return;
  }
  act_kind_t kind = rc__released(x) ? ACT_UPGRADE : ACT_INSTALL;
  if (x->render_warnings.len) /* as `helm template` prints them on stderr */
    rc__event(x, x->render_warned ? "Warning" : "Normal", "RenderWarnings", x->render_warnings.data);
  if (x->render_rc) {
    rc__fail(x, x->render_rc == RENDER_ENOMEM ? "InternalError" : "RenderFailed",
             x->render_rc == RENDER_ENOMEM ? RC_RETRY : RC_STALL);
    return;
  }
  rc__start_action(x, kind);
}

/* Everything a release applies, reads back and deletes is done as its service account when it has
 * one (or the controller's default), never with the controller's own identity; NULL env: the
 * controller's. The user name is the API server's for a service account. */
static const act_env_t *rc__env(rc_t *x, buf_t *err) {
  engine_t *e = x->e;
  if (x->cl) return cluster_env(x->cl); /* the kubeconfig's identity in that cluster */
  const char *sa = x->req.service_account && *x->req.service_account ? x->req.service_account : e->default_sa;
  if (!sa) return &e->env;
  buf_t user = BUF_INIT;
  buf_printf(&user, "system:serviceaccount:%s:%s", x->req.ns, sa);
  if (!user.data) return NULL;
  for (struct sa_client_s *s = e->sa_clients; s; s = s->next)
    if (!strcmp(s->user, user.data)) {
      buf_free(&user);
      return &s->env;
    }
  struct sa_client_s *s = calloc(1, sizeof *s);
  char *msg = NULL;
  int r = s ? kube_client_new_impersonating(e->env.c, user.data, &s->env.c, &msg) : UV_ENOMEM;
  if (r) {
    buf_printf(err, "cannot act as %s: %s", user.data, msg ? msg : uv_strerror(r));
    free(msg);
    free(s);
    buf_free(&user);
    return NULL;
  }
  s->user = buf_steal(&user);
  s->env.loop = e->env.loop;
  s->env.d = e->env.d;
  s->env.field_manager = e->env.field_manager;
  s->next = e->sa_clients;
  e->sa_clients = s;
  LOG_I("acting as a service account for its releases", "user", s->user);
  return &s->env;
}

/* Runs an action; install and upgrade render the chart first, off the loop thread. */
static void rc__run(rc_t *x, act_kind_t kind) {
  if (kind != ACT_INSTALL && kind != ACT_UPGRADE) {
    rc__start_action(x, kind);
    return;
  }
  buf_reset(&x->err);
  const act_env_t *env = rc__env(x, &x->err);
  if (!env) {
    rc__fail(x, "InternalError", RC_RETRY);
    return;
  }
  x->lk.e = x->e;
  x->lk.c = env->c;
  x->e->stats.renders++;
  x->render_values = cJSON_Duplicate(x->req.values, 1);
  if (!x->render_values || uv_queue_work(x->e->loop, &x->work, rc__render_work, rc__render_after)) {
    rc__finish(x, RC_RETRY);
    return;
  }
  x->rendering = 1;
}

static void rc__remediate_or_stall(rc_t *x, act_kind_t failed);

static void rc__action_done(act_t *a, void *data) {
  rc_t *x = data;
  release_req_t *r = &x->req;
  x->act_running = 0;
  x->progress_due = 0;
  if (x->progress_req) { /* the report's answer first: nothing may overtake it */
    x->action_waiting = 1;
    return;
  }
  if (a->rc == UV_ECANCELED || x->cancelled) {
    rc__finish(x, RC_RETRY);
    return;
  }
  if (a->pre_patch_path) { /* the finalizer, sent by the install (rc__act_go) */
    if (!a->pre_patched) { /* nothing was written: as rc__finalizer_patched */
      if (a->rc == UV_ENOMEM) rc__finish(x, RC_RETRY); /* not sent */
      else rc__finalizer_failed(x, a->pre_status, a->err.data ? a->err.data : "");
      return;
    }
    x->req.has_finalizer = true;
  }
  if (a->kind == ACT_DRIFT) {
    rc__drift_done(x);
    return;
  }
  if (x->retiring) {
    x->retiring = 0;
    buf_reset(&x->err);
    if (a->rc) {
      buf_printf(&x->err, "uninstalling release %s/%s, which this object managed before it was renamed to %s/%s: %s",
                 r->prev_storage_ns, r->prev_release_name, r->storage_ns, r->release_name, a->err.data ? a->err.data : "");
      rc__fail(x, "UninstallFailed", RC_RETRY);
      return;
    }
    buf_printf(&x->err, "release %s/%s uninstalled: the object manages %s/%s now", r->prev_storage_ns,
               r->prev_release_name, r->storage_ns, r->release_name);
    rc__event(x, "Normal", "PreviousReleaseUninstalled", x->err.data);
    act_free(&x->act);
    memset(&x->act, 0, sizeof x->act);
    rc__records_free(x);
    rc__list_records(x);
    return;
  }
  x->out.attempted_revision = a->version;
  x->out.attempted_digest = r->digest;
  if (a->rc && a->have_next && a->next.status && !strcmp(a->next.status, "failed")) {
    memo_t *fm = memo_put(&x->e->memo, x->key);
    if (fm) fm->failed_rev = a->next.version > INT_MAX ? 0 : (int)a->next.version;
  }
  if (a->kind == ACT_TEST) {
    x->out.tested = a->rc ? "False" : "True";
    x->out.applied_revision = a->version;
    x->out.applied_digest = r->digest;
    if (a->rc && !r->test_ignore_failures) {
      buf_reset(&x->err);
      buf_puts(&x->err, a->err.data ? a->err.data : "");
      rc__event(x, "Warning", "TestFailed", x->err.data);
      rc__remediate_or_stall(x, x->tested_kind);
      return;
    }
    memo_t *m = rc__memo_note(x, a->version, r->digest);
    if (m) {
      m->state = MEMO_OK;
      memcpy(m->digest, r->digest, 65);
    }
    x->outcome = RC_DONE;
    x->ready = "True";
    x->reason = a->rc ? "TestFailed" : "TestSucceeded";
    buf_reset(&x->msg);
    if (a->rc) buf_printf(&x->msg, "tests of release %s/%s.v%lld failed (ignored): %s", r->storage_ns, r->release_name,
                          a->version, a->err.data ? a->err.data : "");
    else buf_printf(&x->msg, "Helm test succeeded for release %s/%s.v%lld", r->storage_ns, r->release_name, a->version);
    x->out.released = "True";
    rc__event(x, a->rc ? "Warning" : "Normal", x->reason, x->msg.data);
    rc__write_status(x);
    return;
  }
  if (a->kind == ACT_UNLOCK) {
    if (a->rc) {
      buf_reset(&x->err);
      buf_puts(&x->err, a->err.data ? a->err.data : "");
      rc__fail(x, "StorageFailed", RC_RETRY);
      return;
    }
    /* Observe again: the release is failed now, and the next action follows from that. */
    act_free(&x->act);
    memset(&x->act, 0, sizeof x->act);
    rc__list_records(x);
    return;
  }
  if (a->kind == ACT_UNINSTALL && r->deleting) {
    if (a->rc) {
      buf_reset(&x->err);
      buf_puts(&x->err, a->err.data ? a->err.data : "");
      rc__fail(x, "UninstallFailed", RC_RETRY);
      return;
    }
    engine__forget(x->e, x->key); /* uninstalled: its records are no longer its own */
    rc__uninstalled(x);
    return;
  }
  if (x->remediating) {
    x->remediating = 0;
    x->out.remediated = a->rc ? "False" : "True";
    buf_reset(&x->msg);
    buf_puts(&x->msg, x->err.data ? x->err.data : "");
    if (a->rc) buf_printf(&x->msg, "; remediation (%s) failed: %s", act_kind_name(a->kind), a->err.data ? a->err.data : "");
    else buf_printf(&x->msg, "; remediated by %s", act_kind_name(a->kind));
    x->outcome = RC_RETRY;
    x->ready = "False";
    x->out.released = "False";
    if (!a->rc && a->kind == ACT_ROLLBACK) {
      x->out.applied_revision = a->version;
      x->out.applied_digest = ""; /* the rolled-back revision is not the spec's */
      rc__memo_note(x, a->version, "");
    } else if (!a->rc && a->kind == ACT_UNINSTALL) {
      x->out.applied_revision = 0;
      rc__memo_note(x, 0, "");
    } else {
      x->out.applied_revision = a->kind == ACT_UNINSTALL ? 0 : r->applied_revision;
    }
    rc__event(x, a->rc ? "Warning" : "Normal", a->rc ? "RemediationFailed" : "Remediated", x->msg.data);
    rc__write_status(x);
    return;
  }
  if (a->rc) {
    buf_reset(&x->err);
    buf_puts(&x->err, a->err.data ? a->err.data : "");
    if (a->reason && (!strcmp(a->reason, "Conflict") || !strcmp(a->reason, "Transient"))) {
      rc__fail(x, act_kind_name(a->kind)[0] == 'i' ? "InstallFailed" : "UpgradeFailed", RC_RETRY);
      return;
    }
    rc__remediate_or_stall(x, a->kind);
    return;
  }
  /* Success. */
  r->install_failures = r->upgrade_failures = 0;
  r->failed_digest[0] = 0;
  if (r->test_enable && (a->kind == ACT_INSTALL || a->kind == ACT_UPGRADE)) {
    /* The tests run against what was just deployed; their outcome is the reconcile's. */
    rc__memo_note(x, a->version, r->digest);
    x->tested_kind = a->kind;
    rc__adopt_next(x);
    rc__start_action(x, ACT_TEST);
    return;
  }
  memo_t *m = rc__memo_note(x, a->version, r->digest);
  if (m) {
    m->state = MEMO_OK;
    memcpy(m->digest, r->digest, 65);
  }
  static const char *const ok[] = {"InstallSucceeded", "UpgradeSucceeded", "RollbackSucceeded", "UninstallSucceeded"};
  x->outcome = RC_DONE;
  x->ready = "True";
  x->reason = ok[a->kind];
  buf_reset(&x->msg);
  const chart_meta_t *cm = r->chart ? &r->chart->meta : NULL;
  if (a->kind == ACT_ROLLBACK)
    buf_printf(&x->msg, "Helm rollback to revision %lld succeeded for release %s/%s.v%lld", a->rollback_to,
               r->storage_ns, r->release_name, a->version);
  else
    buf_printf(&x->msg, "Helm %s succeeded for release %s/%s.v%lld with chart %s@%s", act_kind_name(a->kind),
               r->storage_ns, r->release_name, a->version, cm && cm->name ? cm->name : "",
               cm && cm->version ? cm->version : "");
  x->out.released = "True";
  x->out.applied_revision = a->version;
  x->out.applied_digest = r->digest;
  rc__event(x, "Normal", x->reason, x->msg.data);
  rc__write_status(x);
}

/* A failed install or upgrade: counted; remediated while retries remain (uninstall, or rollback to
 * the last deployed revision), else the release is stalled until its inputs change. */
static void rc__remediate_or_stall(rc_t *x, act_kind_t failed) {
  release_req_t *r = &x->req;
  const req_action_opts_t *o = rc__opts(x, failed);
  /* Counts belong to one set of inputs: new inputs start again from zero. */
  if (strcmp(r->failed_digest, r->digest)) r->install_failures = r->upgrade_failures = 0;
  int *count = failed == ACT_INSTALL ? &r->install_failures : &r->upgrade_failures;
  (*count)++;
  memcpy(r->failed_digest, r->digest, 65);
  rc__memo_note(x, 0, NULL);
  const char *reason = failed == ACT_INSTALL ? "InstallFailed" : failed == ACT_ROLLBACK ? "RollbackFailed" : "UpgradeFailed";
  x->reason = reason;
  buf_reset(&x->msg);
  buf_puts(&x->msg, x->err.data ? x->err.data : "");
  int retry = o->retries < 0 || *count <= o->retries;
  int remediate = o->strategy != REQ_REMEDIATE_NONE && (retry || o->remediate_last) && failed != ACT_ROLLBACK;
  x->out.released = "False";
  rc__event(x, "Warning", reason, x->msg.data);
  if (remediate) {
    long long failed_version = x->act.version;
    /* The records as they are now (the failed one included) for the remediation. */
    rc__adopt_next(x);
    record_t *target = rc__rollback_target(x, failed_version);
    act_kind_t k = o->strategy == REQ_REMEDIATE_UNINSTALL || !target ? ACT_UNINSTALL : ACT_ROLLBACK;
    x->remediate_to = target ? target->version : 0;
    if (retry || o->remediate_last) {
      x->remediating = 1;
      rc__start_action(x, k);
      return;
    }
  }
  if (retry) {
    x->outcome = RC_RETRY;
    x->ready = "False";
    x->out.applied_revision = r->applied_revision;
    x->out.applied_digest = r->applied_digest;
    rc__write_status(x);
    return;
  }
  /* Retries exhausted: stalled until the inputs change (or the reset annotation is set). */
  memo_t *m = rc__memo_note(x, 0, NULL);
  if (m) {
    m->state = MEMO_STALLED;
    memcpy(m->digest, r->digest, 65);
  }
  x->outcome = RC_STALL;
  x->ready = "False";
  x->out.stalled = "True";
  x->out.stalled_reason = "RetriesExceeded";
  /* These inputs were remediated before this last attempt (the count says so): the condition says
   * it even when the informer has not yet shown us the status that first said it. */
  if (o->strategy != REQ_REMEDIATE_NONE && *count > 1 && failed != ACT_ROLLBACK) x->out.remediated = "True";
  buf_printf(&x->msg, " (%d failure%s; retries exhausted)", *count, *count == 1 ? "" : "s");
  x->out.applied_revision = r->applied_revision;
  x->out.applied_digest = r->applied_digest;
  rc__write_status(x);
}

/* ---- queue and informer wiring ---- */

static void rc__finish(rc_t *x, int outcome) {
  engine_t *e = x->e;
  assert(!x->inflight && !x->act_running && !x->rendering);
  if (x->prev) x->prev->next = x->next;
  else e->running = x->next;
  if (x->next) x->next->prev = x->prev;
  const char *key = x->key;
  track_reconcile_finish(e->door, key, x->cancelled ? TRACK_REQUEUE : outcome == RC_RETRY ? TRACK_ERROR : outcome == RC_STALL ? TRACK_TERMINAL : outcome == RC_AFTER ? TRACK_REQUEUE_AFTER : TRACK_SUCCESS);
  /* A cancelled reconcile was queued again by the change that cancelled it. */
  if (x->cancelled) outcome = RC_FORGET;
  switch (outcome) {
  case RC_RETRY:
    if (!e->stopping) queue_add_rate_limited(&e->q, key);
    break;
  case RC_AFTER:
    queue_forget(&e->q, key);
    if (!e->stopping) queue_add_after(&e->q, key, x->after_ms);
    break;
  case RC_DONE:
    queue_forget(&e->q, key);
    /* Resync at the interval (drift checks hang off this). */
    if (x->req.name && !x->req.deleting && !e->stopping) queue_add_after(&e->q, key, (uint64_t)x->req.interval_ms);
    break;
  case RC_STALL:
  case RC_FORGET:
  default:
    queue_forget(&e->q, key);
    break;
  }
  queue_done(&e->q, key);
  rc__free(x);
}

/* Cancels a reconcile in flight: the request, the render or the action is cancelled and the
 * reconcile finishes from its callback. */
static void rc__cancel(rc_t *x) {
  if (x->cancelled) return;
  x->cancelled = 1;
  x->e->stats.cancelled++;
  LOG_D("cancelling", "release", x->key);
  if (x->progress_req) {
    /* A late Reconciling report is only written while the action runs: the action is cancelled
     * (its end waits for the report), then the report, whose answer ends the reconcile. */
    if (x->act_running) act_cancel(&x->act);
    kube_request_cancel(x->progress_req);
    return;
  }
  if (x->inflight) {
    kube_req_t *r = x->inflight;
    x->inflight = NULL;
    kube_request_cancel(r);
  } else if (x->src_op) {
    source_cancel(x->src_op); /* rc__chart_fetched finishes it */
  } else if (x->act_running) {
    act_cancel(&x->act);
  } else if (x->rendering) {
    uv_cancel((uv_req_t *)&x->work); /* fails when already running: it finishes and sees cancelled */
  }
}

static rc_t *engine__running(engine_t *e, const char *key) {
  for (rc_t *x = e->running; x; x = x->next)
    if (!strcmp(x->key, key)) return x;
  return NULL;
}

static void engine__process(queue_t *q, const char *key, void *data) {
  engine_t *e = data;
  if (e->stopping) { /* queued again by a cancelled reconcile before the queue shut down */
    queue_done(q, key);
    return;
  }
  rc_t *x = calloc(1, sizeof *x);
  const char *at = strchr(key, '@'); /* not in object names: "namespace/name@cluster" is a target key */
  if (x && (x->key = strdup(key)) && (x->obj_key = at ? strndup(key, (size_t)(at - key)) : strdup(key)) && at)
    x->cluster = x->key + (at - key) + 1;
  if (!x || !x->key || !x->obj_key) {
    if (x) free(x->key);
    free(x);
    queue_add_rate_limited(q, key);
    queue_done(q, key);
    return;
  }
  x->e = e;
  x->next = e->running;
  if (e->running) e->running->prev = x;
  e->running = x;
  e->stats.reconciles++;
  track_reconcile_start(e->door, key);
  LOG_D("reconcile", "release", rc__key(x));
  rc__begin(x);
}

static void engine__on_add(informer_t *inf, const char *key, const cJSON *obj, void *data) {
  engine_t *e = data;
  track_release(e->door, key, NULL, 0);
  if (!e->stopping) queue_add(&e->q, key);
}

static void engine__on_delete(informer_t *inf, const char *key, const cJSON *obj, void *data) {
  engine_t *e = data;
  track_release_forget(e->door, key);
  engine__forget(e, key);
  rc_t *x = engine__running(e, key);
  if (x) rc__cancel(x);
  if (!e->stopping) queue_add(&e->q, key);
}

/* Only changes a reconcile acts on: spec (generation), deletion, finalizers, labels and annotations.
 * Status-only updates (our own writes) are not queued. A change of spec or a deletion cancels the
 * reconcile in flight: it works from inputs that are no longer wanted. */
static int engine__meta_changed(const cJSON *a, const cJSON *b, const char *field) {
  const cJSON *ma = cJSON_GetObjectItemCaseSensitive(a, "metadata");
  const cJSON *mb = cJSON_GetObjectItemCaseSensitive(b, "metadata");
  const cJSON *fa = cJSON_GetObjectItemCaseSensitive(ma, field), *fb = cJSON_GetObjectItemCaseSensitive(mb, field);
  if (!fa || !fb) return fa != fb;
  if (cJSON_IsNumber(fa) && cJSON_IsNumber(fb)) return fa->valuedouble != fb->valuedouble;
  if (cJSON_IsString(fa) && cJSON_IsString(fb)) return strcmp(fa->valuestring, fb->valuestring) != 0;
  /* finalizers, labels, annotations: flat; compared as printed text (no recursion into values) */
  char *ta = cJSON_PrintUnformatted(fa), *tb = cJSON_PrintUnformatted(fb);
  int changed = !ta || !tb || strcmp(ta, tb);
  free(ta);
  free(tb);
  return changed;
}

static void engine__on_update(informer_t *inf, const char *key, const cJSON *old, const cJSON *obj, void *data) {
  engine_t *e = data;
  if (e->stopping) return;
  int spec = engine__meta_changed(old, obj, "generation") || engine__meta_changed(old, obj, "deletionTimestamp");
  if (spec) {
    rc_t *x = engine__running(e, key);
    if (x) rc__cancel(x);
  }
  static const char *const fields[] = {"finalizers", "labels", "annotations"};
  for (size_t i = 0; !spec && i < sizeof fields / sizeof *fields; i++) spec = engine__meta_changed(old, obj, fields[i]);
  if (spec) queue_add(&e->q, key);
  /* A dependency that became Ready wakes its dependants. */
  memo_t *d = e->dependants.n ? memo_get(&e->dependants, key) : NULL;
  if (d && d->links && engine__is_ready(obj) && !engine__is_ready(old))
    LINKS_EACH(d->links, dep, { queue_add(&e->q, dep); });
}

/* An object some releases read values from changed: they are reconciled again (their digest
 * decides whether anything is to be done). */
static void engine__ref_changed(const char *owner, void *data) {
  engine_t *e = data;
  if (!e->stopping) queue_add(&e->q, owner);
}

/* An object of release ("storage namespace/name") was changed by someone else or deleted: the object
 * that manages the release is reconciled now, and compares its objects. */
static void engine__drift_changed(const char *release, void *data) {
  engine_t *e = data;
  memo_t *r = memo_get(&e->releases, release);
  memo_t *m = r && r->owner ? memo_get(&e->memo, r->owner) : NULL;
  if (!m || !m->drift_mode || e->stopping) return;
  m->drift_ok = 0;
  LOG_D("owned object changed", "release", m->key);
  queue_add(&e->q, m->key);
}

/* A kind's objects are listed: releases whose comparison waited for it compare now. */
static void engine__drift_synced(void *data) {
  engine_t *e = data;
  if (e->stopping) return;
  for (size_t i = 0; i < e->memo.nb; i++)
    for (memo_t *m = e->memo.b[i]; m; m = m->next)
      if (m->drift_mode && !m->drift_ok) queue_add(&e->q, m->key);
}

/* The drift watches of another cluster (one set per cluster, holding its client; for a release's own
 * kubeconfig Secret, per Secret): the objects releases applied there. */
typedef struct remote_drift_s {
  struct remote_drift_s *next;
  engine_t *e;
  cluster_t *cl;
  char *target, *obj_ns; /* as remote_t's; for a tenant's: its user name, and the namespace watched */
  int tenant;            /* this cluster's objects as a service account sees them (cl NULL) */
  drift_t *d;
} remote_drift_t;

static void engine__rdrift_changed(const char *release, void *data) {
  remote_drift_t *rd = data;
  engine_t *e = rd->e;
  memo_t *r = memo_get(&e->releases, release);
  if (!r || !r->owner || e->stopping) return;
  size_t nl = rd->obj_ns ? strlen(rd->obj_ns) : 0;
  if (!rd->tenant && rd->obj_ns && (strncmp(r->owner, rd->obj_ns, nl) || r->owner[nl] != '/')) return;
  const char *at = strchr(r->owner, '@');
  buf_t k = BUF_INIT;
  if (rd->tenant) buf_puts(&k, r->owner);
  else buf_printf(&k, "%.*s@%s", at ? (int)(at - r->owner) : (int)strlen(r->owner), r->owner, rd->target);
  memo_t *m = k.data ? memo_get(&e->memo, k.data) : NULL;
  buf_free(&k);
  if (!m || !m->drift_mode) return;
  m->drift_ok = 0;
  LOG_D("owned object changed", "release", m->key);
  queue_add(&e->q, m->key);
}

static void engine__rdrift_synced(void *data) {
  remote_drift_t *rd = data;
  engine__drift_synced(rd->e);
}

static void engine__rdrift_free(void *data) {
  remote_drift_t *rd = data;
  engine_t *e = rd->e;
  cluster_unref(rd->cl);
  free(rd->target);
  free(rd->obj_ns);
  free(rd);
  if (!--e->remotes_stopping && e->remotes_waiting) engine__remotes_done(e);
}

/* A tenant's drift watches (a release acting as a service account): in the release's target namespace,
 * with that account's identity, as everything else the release does. */
static drift_t *rc__tenant_drift(rc_t *x, const char *sa, int make) {
  engine_t *e = x->e;
  buf_t user = BUF_INIT;
  buf_printf(&user, "system:serviceaccount:%s:%s", x->req.ns, sa);
  if (!user.data) return NULL;
  for (remote_drift_t *rd = e->remote_drifts; rd; rd = rd->next)
    if (rd->tenant && !strcmp(rd->target, user.data) && !strcmp(rd->obj_ns, x->req.target_ns)) {
      buf_free(&user);
      return rd->d;
    }
  buf_t err = BUF_INIT;
  const act_env_t *env = make ? rc__env(x, &err) : NULL;
  buf_free(&err);
  remote_drift_t *rd = env ? calloc(1, sizeof *rd) : NULL;
  if (!rd || !(rd->obj_ns = strdup(x->req.target_ns)) ||
      drift_new(env->c, x->req.target_ns, e->field_manager, engine__rdrift_changed, engine__rdrift_synced, rd,
                &rd->d)) {
    if (rd) free(rd->obj_ns);
    free(rd);
    buf_free(&user);
    return NULL;
  }
  rd->target = buf_steal(&user);
  rd->tenant = 1;
  LOG_I("drift watches as a service account", "user", rd->target ? rd->target : "", "namespace", rd->obj_ns);
  rd->e = e;
  rd->next = e->remote_drifts;
  e->remote_drifts = rd;
  return rd->d;
}

/* The drift watches of x's cluster, made (when make is set) as the first release there asks for drift
 * detection; looked up afresh at every use, as another client of that cluster replaces them. */
static drift_t *rc__drift_module(rc_t *x, int make) {
  engine_t *e = x->e;
  if (e->stopping) return NULL;
  const char *sa = x->req.service_account && *x->req.service_account ? x->req.service_account : e->default_sa;
  if (!x->cl && sa) return rc__tenant_drift(x, sa, make);
  if (!x->cl) {
    if (!e->drift && make &&
        drift_new(e->env.c, NULL, e->field_manager, engine__drift_changed, engine__drift_synced, e, &e->drift))
      e->drift = NULL;
    return e->drift;
  }
  const char *obj_ns = !strncmp(x->cluster, REQ_SECRET_CLUSTER, strlen(REQ_SECRET_CLUSTER)) ? x->req.ns : NULL;
  for (remote_drift_t **p = &e->remote_drifts; *p; p = &(*p)->next) {
    remote_drift_t *rd = *p;
    if (strcmp(rd->target, x->cluster) || (obj_ns && strcmp(rd->obj_ns, obj_ns))) continue;
    if (rd->cl == x->cl) return rd->d;
    if (!make) return NULL;
    *p = rd->next; /* made for an older client of that cluster */
    e->remotes_stopping++;
    drift_stop(rd->d, engine__rdrift_free, rd);
    break;
  }
  if (!make) return NULL;
  remote_drift_t *rd = calloc(1, sizeof *rd);
  if (!rd || !(rd->target = strdup(x->cluster)) || (obj_ns && !(rd->obj_ns = strdup(obj_ns))) ||
      drift_new(cluster_env(x->cl)->c, NULL, e->field_manager, engine__rdrift_changed, engine__rdrift_synced, rd,
                &rd->d)) {
    if (rd) {
      free(rd->target);
      free(rd->obj_ns);
    }
    free(rd);
    return NULL;
  }
  rd->e = e;
  rd->cl = cluster_ref(x->cl);
  rd->next = e->remote_drifts;
  e->remote_drifts = rd;
  return rd->d;
}

/* ---- release records in other clusters ---- */

static void engine__remotes_done(engine_t *e);

/* The release records of one namespace of another cluster, watched (labels only) once a release
 * there has been reconciled: a change made there (helm upgrade or rollback by hand) reaches the
 * release at once, as the local records informer does for this cluster. One per cluster and
 * namespace, shared by every release stored there; it holds the cluster's client. */
typedef struct remote_s {
  struct remote_s *next;
  engine_t *e;
  cluster_t *cl;
  char *target;  /* what target keys call the cluster: "second", or "secret:NAME:KEY" */
  char *obj_ns;  /* "secret:..." targets: the namespace of the objects that name that Secret */
  char *ns;      /* the records' namespace */
  informer_t *inf;
} remote_t;

static void engine__remote_event(remote_t *w, const cJSON *obj, int deleted) {
  engine__record_event_in(w->e, obj, deleted, w->target, w->obj_ns);
}
static void engine__remote_add(informer_t *inf, const char *key, const cJSON *obj, void *data) {
  (void)inf;
  (void)key;
  remote_t *w = data;
  if (informer_has_synced(w->inf)) engine__remote_event(w, obj, 0); /* not what the first list finds */
}
static void engine__remote_update(informer_t *inf, const char *key, const cJSON *old, const cJSON *obj, void *data) {
  (void)inf;
  (void)key;
  (void)old;
  engine__remote_event(data, obj, 0);
}
static void engine__remote_delete(informer_t *inf, const char *key, const cJSON *obj, void *data) {
  (void)inf;
  (void)key;
  engine__remote_event(data, obj, 1);
}

static void engine__remote_free(remote_t *w) {
  cluster_unref(w->cl);
  free(w->target);
  free(w->obj_ns);
  free(w->ns);
  free(w);
}

static void engine__remote_stopped(void *data) {
  remote_t *w = data;
  engine_t *e = w->e;
  engine__remote_free(w);
  if (!--e->remotes_stopping && e->remotes_waiting) engine__remotes_done(e);
}

/* Watches the records of x's release in x's cluster, unless that is done already with the same
 * client (a cluster whose kubeconfig changed has a new one: its watch is made again). */
static void rc__watch_remote(rc_t *x) {
  engine_t *e = x->e;
  if (e->stopping) return;
  const char *obj_ns = !strncmp(x->cluster, REQ_SECRET_CLUSTER, strlen(REQ_SECRET_CLUSTER)) ? x->req.ns : NULL;
  for (remote_t **p = &e->remotes; *p; p = &(*p)->next) {
    remote_t *w = *p;
    if (strcmp(w->target, x->cluster) || strcmp(w->ns, x->req.storage_ns) || (obj_ns && strcmp(w->obj_ns, obj_ns)))
      continue;
    if (w->cl == x->cl) return;
    *p = w->next; /* an older client of that cluster */
    e->remotes_stopping++;
    informer_stop(w->inf, engine__remote_stopped, w);
    break;
  }
  remote_t *w = calloc(1, sizeof *w);
  buf_t path = BUF_INIT;
  if (!w || !(w->target = strdup(x->cluster)) || !(w->ns = strdup(x->req.storage_ns)) ||
      (obj_ns && !(w->obj_ns = strdup(obj_ns))) ||
      kube_path(&path, "", "v1", "secrets", x->req.storage_ns, NULL, NULL)) {
    if (w) {
      free(w->target);
      free(w->ns);
      free(w->obj_ns);
    }
    free(w);
    buf_free(&path);
    return; /* then changes there are seen at the interval */
  }
  w->e = e;
  w->cl = cluster_ref(x->cl);
  static const char *const keep[] = {"metadata.labels", NULL};
  informer_opts_t o = {.path = path.data, .label_selector = "owner=helm", .keep = keep,
                       .metadata_only = true, .compact = true};
  informer_handlers_t h = {.on_add = engine__remote_add, .on_update = engine__remote_update,
                           .on_delete = engine__remote_delete, .data = w};
  int rc = informer_start(cluster_env(x->cl)->c, &o, &h, &w->inf);
  buf_free(&path);
  if (rc) {
    engine__remote_free(w);
    return;
  }
  LOG_I("watching release records in another cluster", "cluster", cluster_name(x->cl), "namespace", x->req.storage_ns);
  w->next = e->remotes;
  e->remotes = w;
}

/* A release record changed. Our own writes while an action runs are expected; anything else (a newer
 * revision, the applied one changed or deleted: helm upgrade, rollback or uninstall by hand) makes
 * the memo stale, and the release is observed again. */
static void engine__record_event_in(engine_t *e, const cJSON *secret, int deleted, const char *target,
                                    const char *only_ns);
static void engine__record_event(engine_t *e, const cJSON *secret, int deleted) {
  engine__record_event_in(e, secret, deleted, NULL, NULL);
}

/* The same for a record in another cluster: it concerns the key "<object>@target" (objects of
 * namespace only_ns only, for a release's own kubeconfig Secret). */
static void engine__record_event_in(engine_t *e, const cJSON *secret, int deleted, const char *target,
                                    const char *only_ns) {
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(secret, "metadata");
  const cJSON *labels = cJSON_GetObjectItemCaseSensitive(meta, "labels");
  const cJSON *ns = cJSON_GetObjectItemCaseSensitive(meta, "namespace");
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(labels, "name");
  const cJSON *ver = cJSON_GetObjectItemCaseSensitive(labels, "version");
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(labels, "status");
  if (!cJSON_IsString(ns) || !cJSON_IsString(name)) return;
  buf_t k = BUF_INIT;
  buf_printf(&k, "%s/%s", ns->valuestring, name->valuestring);
  memo_t *rel = k.data ? memo_get(&e->releases, k.data) : NULL;
  if (!rel || !rel->owner) {
    buf_free(&k);
    return;
  }
  const char *owner = rel->owner;
  if (target) {
    size_t nl = only_ns ? strlen(only_ns) : 0;
    if (only_ns && (strncmp(owner, only_ns, nl) || owner[nl] != '/')) {
      buf_free(&k);
      return;
    }
    const char *at = strchr(rel->owner, '@'); /* the index may name a target key of the object */
    buf_reset(&k);
    buf_printf(&k, "%.*s@%s", at ? (int)(at - rel->owner) : (int)strlen(rel->owner), rel->owner, target);
    owner = k.data;
  }
  memo_t *m = owner ? memo_get(&e->memo, owner) : NULL;
  if (!m || m->state == MEMO_NONE) {
    buf_free(&k);
    return;
  }
  owner = m->key; /* k is freed below */
  buf_free(&k);
  if (m->bad_record) {
    m->bad_record = 0;
    m->state = MEMO_NONE;
    if (!e->stopping) queue_add(&e->q, owner);
    return;
  }
  if (!cJSON_IsString(ver)) return;
  long long v = atoll(ver->valuestring);
  int deployed = cJSON_IsString(st) && !strcmp(st->valuestring, "deployed");
  if (!deleted && v == m->failed_rev && cJSON_IsString(st) && !strcmp(st->valuestring, "failed")) return;
  if (v > m->revision || (v == m->revision && (deleted || !deployed))) {
    LOG_I("release records changed", "release", owner, "revision", ver->valuestring,
          "status", cJSON_IsString(st) ? st->valuestring : "");
    m->state = MEMO_NONE;
    if (!e->stopping) queue_add(&e->q, owner);
  }
}

static void engine__rec_add(informer_t *inf, const char *key, const cJSON *obj, void *data) {
  engine__record_event(data, obj, 0);
}

static void engine__rec_update(informer_t *inf, const char *key, const cJSON *old, const cJSON *obj, void *data) {
  engine__record_event(data, obj, 0);
}

static void engine__rec_delete(informer_t *inf, const char *key, const cJSON *obj, void *data) {
  engine__record_event(data, obj, 1);
}

/* An object the informer could not read (too deep, too big, malformed): it alone fails, with a
 * condition saying why; every other object goes on. */
typedef struct engine__bad_s {
  engine_t *e;
  buf_t path;
} engine__bad_t;

static void engine__bad_written(const kube_response_t *res, void *data) {
  engine__bad_t *b = data;
  if (!kube_response_ok(res) && res->err != UV_ECANCELED)
    LOG_W("cannot write the status of an unreadable object", "path", b->path.data, "error", res->errmsg ? res->errmsg : "");
  buf_free(&b->path);
  free(b);
}

static void engine__on_bad_object(informer_t *inf, const char *key, const char *message, void *data) {
  engine_t *e = data;
  LOG_W("object cannot be read; it is left alone", "kind", e->door->kind, "object", key ? key : "(unknown)", "error",
        message);
  const char *slash = key ? strchr(key, '/') : NULL;
  if (!slash || e->stopping) return;
  release_req_t req = {0};
  req.ns = strndup(key, (size_t)(slash - key));
  req.name = strdup(slash + 1);
  char cut[1024];
  char msg[1100];
  snprintf(msg, sizeof msg, "the object cannot be read: %s", cond_message(message, cut, sizeof cut));
  release_outcome_t o = {.req = &req, .ready = "False", .reason = "InvalidSpec", .message = msg, .stalled = "True"};
  char *body = req.ns && req.name ? e->door->status_patch(&o) : NULL;
  engine__bad_t *b = body ? calloc(1, sizeof *b) : NULL;
  if (b) {
    b->e = e;
    kube_path(&b->path, e->door->group, e->door->version, e->door->resource, req.ns, req.name, "status");
    if (!kube_merge_patch(e->env.c, b->path.data, body, engine__bad_written, b)) {
      buf_free(&b->path);
      free(b);
    }
  }
  free(body);
  req_free(&req);
}

/* A repository's index changed: every release whose chart comes from it is looked at again. */
static void engine__index_changed(const char *repo, void *data) {
  engine_t *e = data;
  if (e->stopping) return;
  for (size_t i = 0; i < e->memo.nb; i++)
    for (memo_t *m = e->memo.b[i]; m; m = m->next)
      if (m->repo && !strcmp(m->repo, repo)) queue_add(&e->q, m->key);
}

static void engine__sa_closed(void *data);

static void engine__queue_closed(queue_t *q) {
  engine_t *e = container_of(q, engine_t, q);
  kwaits_free(e->env.waits); /* no action runs any more */
  e->env.waits = NULL;
  /* The service accounts' clients close first (nothing uses them any more). */
  if (e->sa_clients) {
    for (struct sa_client_s *s = e->sa_clients; s; s = s->next) e->sa_closing++;
    for (struct sa_client_s *s = e->sa_clients; s; s = s->next) kube_client_close(s->env.c, engine__sa_closed, e);
    return;
  }
  void (*cb)(void *) = e->stop_cb;
  void *data = e->stop_data;
  memo_free_all(&e->memo);
  memo_free_all(&e->releases);
  memo_free_all(&e->dependants);
  memo_free_all(&e->fanout);
  free(e->ns);
  free(e->field_manager);
  free(e->kube_version);
  free(e->default_sa);
  free((char *)e->ctx.chartrepo_namespace);
  free(e);
  if (cb) cb(data);
}

static void engine__sa_closed(void *data) {
  engine_t *e = data;
  if (--e->sa_closing) return;
  while (e->sa_clients) {
    struct sa_client_s *s = e->sa_clients;
    e->sa_clients = s->next;
    free(s->user);
    free(s);
  }
  engine__queue_closed(&e->q);
}

static void engine__lookups_closed(uv_handle_t *h);
static void engine__close_handles(engine_t *e);

int engine_start(uv_loop_t *loop, kube_client_t *c, discovery_t *d, const door_t *door, const engine_opts_t *o,
                 engine_t **out) {
  engine_t *e = calloc(1, sizeof *e);
  if (!e) return UV_ENOMEM;
  e->loop = loop;
  e->door = door;
  e->d = d;
  e->ns = o && o->namespace && *o->namespace ? strdup(o->namespace) : NULL;
  e->field_manager = strdup(o && o->field_manager ? o->field_manager : "rudder");
  e->events = o ? o->events : NULL;
  if (o) e->limits = o->limits;
  e->source = o ? o->source : NULL;
  e->default_sa = o && o->default_service_account && *o->default_service_account ? strdup(o->default_service_account)
                                                                                  : NULL;
  e->env = (act_env_t){.loop = loop, .c = c, .d = d, .field_manager = e->field_manager};
  /* Readiness waits of the releases acting as the controller share one watch per kind; those acting
   * as a service account (or in another cluster) watch each object on their own. */
  if (!o || !o->no_shared_waits) {
    kwaits_opts_t wo = {.label_selector = "app.kubernetes.io/managed-by=Helm"};
    e->env.waits = kwaits_new(c, &wo);
  }
  e->ctx.chartrepo_namespace =
      strdup(o && o->door_ctx.chartrepo_namespace ? o->door_ctx.chartrepo_namespace : "captain-system");
  queue_options_t qo;
  queue_options_init(&qo);
  qo.name = track_controller_name(door);
  if (o && o->concurrency) qo.max_in_flight = o->concurrency;
  qo.max_parked = !o || !o->max_waiting ? 10 * qo.max_in_flight : o->max_waiting < 0 ? 0 : (unsigned)o->max_waiting;
  int rc = e->field_manager ? queue_init(loop, &e->q, &qo, engine__process, e) : UV_ENOMEM;
  if (rc) {
    free(e->ns);
    free(e->field_manager);
    free(e);
    return rc;
  }
  uv_mutex_init(&e->lk_mu);
  uv_async_init(loop, &e->lookups, engine__lookups_cb);
  e->lookups.data = e;
  uv_timer_init(loop, &e->progress_timer);
  e->progress_timer.data = e;
  e->progress_delay_ms = !o || !o->progress_after_ms ? ENGINE_PROGRESS_AFTER_MS
                         : o->progress_after_ms < 0 ? -1 : o->progress_after_ms;
  buf_t path = BUF_INIT;
  kube_path(&path, door->group, door->version, door->resource, e->ns, NULL, NULL);
  /* A shard sees only its objects: one relabelled away is a delete here (the watch says so), so it
   * is forgotten, not uninstalled, and the shard that now matches takes it over. */
  /* Compact: the cache of a kind is most of the controller's heap at 10,000 objects (issue 16). */
  informer_opts_t io = {.path = path.data, .keep = door->cache_keep, .keep_text = door->cache_text, .compact = true,
                        .label_selector = o && o->label_selector && *o->label_selector ? o->label_selector : NULL};
  informer_handlers_t h = {.on_add = engine__on_add, .on_update = engine__on_update, .on_delete = engine__on_delete,
                           .on_bad_object = engine__on_bad_object, .data = e};
  rc = informer_start(c, &io, &h, &e->inf);
  buf_free(&path);
  if (!rc) {
    /* The records: the process's shared watch when given (it must cover the engine's namespace),
     * else one of the engine's own. */
    if (o && o->records && records_covers(o->records, e->ns)) {
      e->records = o->records;
    } else {
      rc = records_start(c, e->ns, &e->records);
      e->own_records = !rc;
    }
    informer_handlers_t rh = {.on_add = engine__rec_add, .on_update = engine__rec_update,
                              .on_delete = engine__rec_delete, .data = e};
    if (!rc && (rc = records_subscribe(e->records, &rh)) && e->own_records) {
      records_stop(e->records, NULL, NULL);
      e->records = NULL;
    }
    if (rc) informer_stop(e->inf, NULL, NULL);
  }
  if (rc) {
    e->stopping = 1;
    engine__close_handles(e);
    return rc;
  }
  if (refs_new(c, engine__ref_changed, e, &e->refs)) e->refs = NULL; /* then valuesFrom changes wait for the interval */
  if (e->source) source_on_index_change(e->source, engine__index_changed, e);
  if ((e->clusters = o ? o->clusters : NULL) && clusters_listen(e->clusters, engine__clusters_changed, e))
    LOG_W("cannot follow the list of clusters: releases to all clusters see new ones at their interval", "kind",
          door->kind);
  *out = e;
  return 0;
}

static void engine__lookups_closed(uv_handle_t *h) {
  engine_t *e = h->data;
  uv_mutex_destroy(&e->lk_mu);
  queue_close(&e->q, engine__queue_closed);
}

static void engine__timer_closed(uv_handle_t *h) {
  engine_t *e = h->data;
  uv_close((uv_handle_t *)&e->lookups, engine__lookups_closed);
}

/* The engine's own handles closed, one after the other, then the queue. */
static void engine__close_handles(engine_t *e) { uv_close((uv_handle_t *)&e->progress_timer, engine__timer_closed); }

/* Every render has finished once the queue is drained: no lookup can be asked any more. */
static void engine__drained(queue_t *q, void *data) {
  engine_t *e = data;
  engine__lookups_cb(&e->lookups); /* answers any still queued */
  engine__close_handles(e);
}

static void engine__remotes_done(engine_t *e) { queue_shutdown(&e->q, engine__drained, e); }

/* Every remote records watch stopped (each frees itself and lets go of its cluster), then the queue. */
static void engine__stop_remotes(engine_t *e) {
  remote_t *w = e->remotes;
  e->remotes = NULL;
  remote_drift_t *rd = e->remote_drifts;
  e->remote_drifts = NULL;
  size_t n = 0;
  for (remote_t *v = w; v; v = v->next) n++;
  for (remote_drift_t *v = rd; v; v = v->next) n++;
  e->remotes_stopping += n; /* with those replaced earlier and still stopping */
  e->remotes_waiting = 1;
  if (!e->remotes_stopping) {
    engine__remotes_done(e);
    return;
  }
  while (w) {
    remote_t *nx = w->next;
    informer_stop(w->inf, engine__remote_stopped, w);
    w = nx;
  }
  while (rd) {
    remote_drift_t *nx = rd->next;
    drift_stop(rd->d, engine__rdrift_free, rd);
    rd = nx;
  }
}

static void engine__drift_stopped(void *data) {
  engine_t *e = data;
  e->drift = NULL;
  engine__stop_remotes(e);
}

static void engine__refs_stopped(void *data) {
  engine_t *e = data;
  e->refs = NULL;
  if (e->drift) drift_stop(e->drift, engine__drift_stopped, e);
  else engine__stop_remotes(e);
}

static void engine__records_stopped(void *data) {
  engine_t *e = data;
  e->records = NULL;
  if (e->refs) refs_stop(e->refs, engine__refs_stopped, e);
  else engine__refs_stopped(e);
}

static void engine__informer_stopped(void *data) {
  engine_t *e = data;
  e->inf = NULL;
  records_unsubscribe(e->records, e);
  if (e->own_records) records_stop(e->records, engine__records_stopped, e);
  else engine__records_stopped(e);
}

void engine_stop(engine_t *e, void (*cb)(void *data), void *data) {
  e->stopping = 1;
  if (e->source) source_off_index_change(e->source, engine__index_changed, e);
  if (e->clusters) clusters_unlisten(e->clusters, engine__clusters_changed, e);
  e->stop_cb = cb;
  e->stop_data = data;
  /* No request after this: every reconcile in flight is cancelled now (next is read first: a
   * cancelled reconcile may finish, and be freed, inside rc__cancel). */
  for (rc_t *x = e->running, *nx; x; x = nx) {
    nx = x->next;
    rc__cancel(x);
  }
  informer_stop(e->inf, engine__informer_stopped, e);
}

static size_t engine__memo_bytes(const memo_table_t *t) {
  size_t b = t->nb ? INFORMER_BLOCK_BYTES(t->nb * sizeof *t->b) : 0;
  for (size_t i = 0; i < t->nb; i++)
    for (const memo_t *m = t->b[i]; m; m = m->next) {
      b += INFORMER_BLOCK_BYTES(sizeof *m + strlen(m->key) + 1);
      if (m->owner) b += INFORMER_BLOCK_BYTES(strlen(m->owner) + 1);
      if (m->repo) b += INFORMER_BLOCK_BYTES(strlen(m->repo) + 1);
      if (m->release) b += INFORMER_BLOCK_BYTES(strlen(m->release) + 1);
      if (m->links) b += INFORMER_BLOCK_BYTES(strlen(m->links) + 1);
    }
  return b;
}

engine_stats_t engine_get_stats(const engine_t *e) {
  engine_stats_t s = e->stats;
  s.memo_entries = e->memo.n;
  s.memo_bytes = engine__memo_bytes(&e->memo) + engine__memo_bytes(&e->dependants);
  s.index_entries = e->releases.n;
  s.index_bytes = engine__memo_bytes(&e->releases);
  queue_metrics_t qm;
  queue_metrics_get((queue_t *)&e->q, &qm); /* reads only (the clock for its age gauges) */
  s.queue_keys = (size_t)qm.keys;
  s.queue_bytes = (size_t)qm.memory_bytes;
  for (const rc_t *x = e->running; x; x = x->next) s.running++;
  s.bytes = s.memo_bytes + s.index_bytes + s.queue_bytes;
  if (e->env.waits) {
    kwaits_stats_t ws = kwaits_stats(e->env.waits);
    s.waits_shared = ws.begun;
    s.waits_declined = ws.declined;
    s.waits_broken = ws.broken;
  }
  if (e->inf) s.cache = informer_memory(e->inf);
  if (e->records) s.records_cache = records_memory(e->records);
  if (e->drift) {
    s.drift_objects = drift_objects(e->drift);
    s.drift_bytes = drift_bytes(e->drift);
  }
  return s;
}
