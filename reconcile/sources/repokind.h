/* What every chart-repository kind shares (rudder's HelmRepository, Captain's ChartRepo): an
 * informer and a rate-limited queue per kind, one reconcile per object (read it, get the Secrets
 * and ConfigMap it names, declare the repository to helm/source, fetch the index, write the
 * status, come back after the interval), and the Secrets and ConfigMaps they read watched by
 * name so that a rotated credential or CA is used at once. A kind is a row of functions
 * (repokind_t): how its spec reads, what its status adds, and what it does once an index is in
 * hand. Internal to reconcile/sources/. */
#pragma once
#include <cJSON.h>
#include <stdbool.h>
#include <uv.h>

#include "base/buf.h"
#include "helm/source/source.h"
#include "queue/queue.h"
#include "reconcile/sources/helmrepository.h"
#include "watch/client.h"
#include "watch/events.h"
#include "watch/informer.h"

typedef struct repo_run_s repo_run_t;

typedef struct repokind_s {
  const char *group, *version, *resource, *kind;
  const char *key_prefix;  /* helm/source's key is this + "namespace/name" */
  const char *const *keep; /* what the informer keeps of each object */
  long default_interval_ms;
  const char *pending; /* optional: a status merge patch written before an object's first fetch */
  /* Reads the spec into x (url, Secret/ConfigMap names, options): 0, or nonzero after calling
   * repo_run_fail. */
  int (*parse)(repo_run_t *x, const cJSON *spec);
  /* Adds the kind's own fields to status (observedGeneration and conditions are there); ready is
   * "True" or "False"; info is NULL unless an index was fetched. */
  void (*status)(repo_run_t *x, cJSON *st, const char *ready, const char *reason, const source_index_info_t *info);
  /* Optional: the index was fetched; the kind does its own work and ends with repo_run_synced. */
  void (*synced)(repo_run_t *x);
  /* Optional: stops what synced started; its completion must then call repo_run_synced. */
  void (*cancel)(repo_run_t *x);
  /* Optional: the object key ("namespace/name") is gone. */
  void (*gone)(repoctl_t *rc, const char *key);
} repokind_t;

enum { REPO_OK, REPO_RETRY, REPO_FORGET }; /* a run's outcome: after the interval, with backoff, not again */

/* One reconcile of one object. The kind's parse sets the fields marked (parse). */
struct repo_run_s {
  repoctl_t *rc;
  repo_run_t *prev, *next;
  char *key, *skey, *ns, *name, *uid, *rv;
  long long generation;
  cJSON *prev_conds;
  char *url;                                  /* (parse) */
  char *ref_ns;                               /* (parse) where the Secrets and ConfigMap are; NULL: ns */
  char *secret, *cert_secret, *ca_cm;         /* (parse) names, or NULL */
  const char *secret_field;                   /* (parse) e.g. "spec.secretRef", for messages */
  bool secret_tls;                            /* (parse) the Secret may hold ca.crt, tls.crt/tls.key too, and
                                                 no credentials */
  bool pass_credentials, insecure, oci, plain_http; /* (parse) */
  long interval_ms, timeout_ms;               /* (parse) defaults set before */
  source_index_info_t info;                   /* the last fetch (digest in info_digest) */
  char *info_digest;
  char msg[512];                              /* what the fetch found, for the Ready condition */
  void *ext;                                  /* the kind's own state for this run */
  /* private */
  int step;
  kube_req_t *inflight;
  source_op_t *op;
  int cancelled, in_synced;
  char *user, *pass, *bearer;
  buf_t ca, cert, tkey;
  buf_t path;
  int outcome;
};

/* A one-shot declaration (repokind_declare): how it ends. err 0: the repository is declared to the
 * source; else reason and msg say why not (the Ready=False the kind's status would say). */
typedef void (*repokind_declared_cb)(int err, const char *reason, const char *msg, void *data);

struct repoctl_s {
  const repokind_t *k;
  /* Set for repokind_declare: one run over an object handed in, no informer, queue, status or
   * Event; the run ends in this callback once the repository is declared (or cannot be). */
  repokind_declared_cb once;
  void *once_data;
  const cJSON *once_obj;
  bool once_said; /* the callback has run */
  void *kind_data; /* the kind's own (repokind_start's) */
  uv_loop_t *loop;
  kube_client_t *c;
  source_t *s;
  events_t *events;
  informer_t *inf;
  queue_t q;
  char *ns;
  repo_run_t *running;
  struct refs_s *refs;   /* the Secrets and ConfigMaps repositories read, watched by name */
  int pending_stops;
  int stopping;
  void (*stop_cb)(void *);
  void *stop_data;
};

/* Starts the kind's informer and queue (namespace: o->namespace, or all). 0 or a negative code. */
int repokind_start(const repokind_t *k, void *kind_data, uv_loop_t *loop, kube_client_t *c, source_t *s,
                   const repoctl_opts_t *o, repoctl_t **out);
/* Declares the repository of object obj (a k object as the API server serves it) to s as a run of
 * the kind would: its spec read by k's parse, the Secrets and ConfigMap it names read with c, the
 * URL and credentials given to source_repo_set under k's key. Nothing is written (no status, no
 * Event) and the index is not fetched: the caller asks s for a chart next. cb runs exactly once,
 * perhaps before this returns. For programs outside the controller (`rudder diff`). 0 or UV_ENOMEM. */
int repokind_declare(const repokind_t *k, kube_client_t *c, source_t *s, const cJSON *obj, repokind_declared_cb cb,
                     void *data);
/* Cancels every run (no request after this), stops the informers, frees rc, then calls cb. */
void repokind_stop(repoctl_t *rc, void (*cb)(void *data), void *data);
/* Queues key again now (e.g. something the kind watches changed). */
void repokind_requeue(repoctl_t *rc, const char *key);
/* Ends x with Ready=False (reason, msg), an Event and the status; outcome is REPO_*. */
void repo_run_fail(repo_run_t *x, const char *reason, const char *msg, int outcome);
/* Ends x without writing anything (outcome REPO_*). */
void repo_run_end(repo_run_t *x, int outcome);
/* Ends the kind's synced step: err 0 writes Ready=True with x->msg; otherwise Ready=False with
 * reason and msg, retried with backoff (UV_ECANCELED: nothing written). */
void repo_run_synced(repo_run_t *x, int err, const char *reason, const char *msg);
/* An Event on x's object. */
void repo_run_event(repo_run_t *x, const char *type, const char *reason, const char *msg);
/* Adds what the index holds to status: indexDigest, lastFetchTime, charts, versions (info may be NULL). */
void repo_status_index(cJSON *st, const source_index_info_t *info);
/* A string field of o, or NULL. */
const char *repo_str(const cJSON *o, const char *k);
/* Reads spec.interval and spec.timeout (Go durations) into x: 0, or nonzero after failing x. */
int repo_run_durations(repo_run_t *x, const cJSON *spec);
