/* The release request: everything the engine needs to bring one Helm release to its desired state,
 * whichever kind of object asked for it. Front doors (door.h) fill it from their objects. */
#pragma once
#include <stdbool.h>
#include <cjson/cJSON.h>
#include "helm/action/action.h"
#include "helm/chart/chart.h"

#define REQ_DEFAULT_INTERVAL_MS (10 * 60 * 1000L)
#define REQ_MIN_INTERVAL_MS (10 * 1000L)  /* shorter intervals are refused: one release must not hog the queue */
#define REQ_DEFAULT_TIMEOUT_MS (5 * 60 * 1000L)
#define REQ_DEFAULT_MAX_HISTORY 10
/* A target cluster given by a kubeconfig Secret of the object's namespace: "secret:NAME:KEY". */
/* Asks for a reconcile now (`rudder reconcile` sets it to the time): a value the status does not
 * name as handled (status.lastHandledReconcileAt) bypasses the memo; every status written then
 * records it as handled. */
#define REQ_RECONCILE_ANNOTATION "rudder.dev/reconcile-requested-at"
#define REQ_SECRET_CLUSTER "secret:"

/* Drift detection (objects of the release changed by someone else, or deleted): ignored, reported
 * (condition Drifted, an Event), or corrected (re-applied). */
typedef enum { REQ_DRIFT_DISABLED = 0, REQ_DRIFT_WARN, REQ_DRIFT_ENABLED } req_drift_t;

typedef enum { REQ_REMEDIATE_NONE = 0, REQ_REMEDIATE_ROLLBACK, REQ_REMEDIATE_UNINSTALL } req_strategy_t;

typedef struct req_action_opts_s {
  int retries;                /* remediation retries (0: none; < 0: unlimited) */
  req_strategy_t strategy;    /* what is done between attempts */
  bool remediate_last;        /* upgrade: also remediate the last failure */
  act_crds_t crds;
  bool disable_hooks, disable_wait, take_ownership;
} req_action_opts_t;

/* Where the chart comes from when it is not carried in the object (the engine fetches it). */
typedef enum { REQ_SRC_INLINE = 0, REQ_SRC_REPOSITORY, REQ_SRC_URL, REQ_SRC_OCI, REQ_SRC_CONFIGMAP, REQ_SRC_SECRET } req_src_kind_t;

typedef struct req_chart_src_s {
  req_src_kind_t kind;
  char *repo_key;      /* REQ_SRC_REPOSITORY: "namespace/name" of the repository object */
  char *name;          /* chart name in the repository */
  char *version;       /* semver constraint ("" = "*") */
  char *url;           /* REQ_SRC_URL: a packaged chart's URL (http(s)://.../chart.tgz);
                          REQ_SRC_OCI: an oci:// reference (version is then Helm's --version) */
  char *obj_name, *obj_key; /* REQ_SRC_CONFIGMAP/SECRET: the object (in the request's namespace) and its key */
  char *secret_name;   /* REQ_SRC_URL/OCI: a Secret of the request's namespace with the credentials (username,
                          password; ca.crt, tls.crt/tls.key), or NULL */
  char *secret_field;  /* where it was named, for messages ("spec.source.http.secretRef") */
} req_chart_src_t;

/* Values read from a ConfigMap or Secret (valuesFrom), merged in order before the request's own values. */
typedef struct req_values_from_s {
  bool secret;          /* a Secret, else a ConfigMap */
  char *ns, *name;      /* the object */
  char *key;            /* its data key (default values.yaml) */
  char *target_path;    /* NULL: the key's YAML is merged at the root; else its text is set at this path as --set does */
  bool optional;        /* a missing object or key is skipped rather than an error */
  char *field;          /* where it was declared, for messages ("spec.valuesFrom[0]") */
} req_values_from_t;

typedef struct release_req_s {
  /* The object that asked: identity for status, events and the records' owner annotation. */
  char *ns, *name, *uid, *resource_version;
  long long generation;
  bool deleting;       /* being deleted (its finalizer holds it) */
  bool has_finalizer;
  cJSON *finalizers;   /* metadata.finalizers (array or NULL) */
  cJSON *conditions;   /* status.conditions as the object has them (array or NULL) */
  char *reconcile_requested; /* REQ_RECONCILE_ANNOTATION's value, or NULL */
  char *reconcile_handled;   /* status.lastHandledReconcileAt, or NULL */

  /* The release. */
  char *release_name, *target_ns, *storage_ns;
  /* The release the object managed before under another name or storage namespace (the status says
   * so), uninstalled before this one is installed; NULL when the same. */
  char *prev_release_name, *prev_storage_ns;
  bool create_namespace; /* install creates target_ns when missing, as helm install --create-namespace */
  chart_t *chart;      /* loaded from its source, owned (for fetched charts: a copy made for this reconcile) */
  req_chart_src_t src; /* where a chart that is not inline comes from */
  cJSON *values;       /* the user's values (object), owned */
  char digest[65];     /* of every input that decides the release (chart, values, options) */
  int max_history;     /* 0 keeps all */
  long interval_ms, timeout_ms;
  bool suspend;
  req_action_opts_t install, upgrade;
  bool force, cleanup_on_fail;
  long long rollback_to;    /* > 0: the desired state is this revision */
  const char *rollback_field; /* where rollback_to was asked for, for messages (static; NULL: spec.rollback.toRevision) */
  bool keep_history, uninstall_disable_hooks, uninstall_disable_wait;
  long uninstall_timeout_ms; /* hooks and the wait for deletion; default timeout_ms */
  char *deletion_propagation; /* NULL: Background */
  bool test_enable, test_ignore_failures;
  char *service_account;
  req_drift_t drift_mode;
  cJSON *drift_ignore; /* [{paths: [JSON pointer, ...], target: {group, version, kind, name, namespace}}], or NULL */
  req_values_from_t *values_from; /* read by the engine (and watched), merged in order under `values` */
  size_t nvalues_from;
  char **depends_on;   /* "namespace/name" of objects of the same kind that must be Ready (at their generation) first */
  size_t ndepends_on;
  /* Where the release goes: the local cluster unless clusters are named (an entry "" is the local
   * one) or all_clusters (the local one and every cluster with a kubeconfig Secret: reconcile/clusters.h). */
  char **clusters;
  size_t nclusters;
  bool all_clusters;
  cJSON *outside;      /* the status's list of objects outside the storage namespace (release_outcome_t.outside), or NULL */
  char *door_data;     /* the door's own (malloc'd) text, kept with the request for its status (e.g. a spec hash) */

  /* What the object's status says happened last (it survives restarts). */
  long long applied_revision;
  char applied_digest[65];
  char failed_digest[65];   /* the inputs of the last failed attempt */
  int install_failures, upgrade_failures;
} release_req_t;

/* Frees everything req holds and zeroes it. */
void req_free(release_req_t *req);
/* Parses a Go-style duration ("1h30m", "90s", "500ms") into milliseconds; -1 when malformed. */
long req_duration_ms(const char *s);
