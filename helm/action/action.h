/* Helm's actions as non-blocking sub-machines on the loop: install, upgrade, rollback, uninstall,
 * unlock (a record left pending by an interrupted operation marked failed) and test (the test hooks
 * of the deployed revision, results recorded as `helm test` records them). Each issues one
 * request at a time, whose callback moves it on, except for the ownership check of the objects new
 * to an install, upgrade or rollback: their GETs are in flight together (up to 16 at once), judged
 * in document order once all are answered. An install, upgrade or rollback may also be handed a
 * merge patch to send first (pre_patch_*: the engine's finalizer on a first install), in flight
 * with the kind mapping and the ownership GETs; nothing is written (no CRD, no record) before it
 * is answered 2xx, and the action ends only once it is answered. The caller (the release engine)
 * observes the release records first and hands them in; the action writes the records Helm's own
 * action would write, applies with server-side apply, and reports one outcome.
 *
 * Cost: one request per object applied, per new object checked for ownership (install: every
 * object, upgrade: those new in this revision), per object deleted (a GET to check it belongs to
 * the release, then the DELETE), per record written, and the pre-patch when one is given. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>
#include <cjson/cJSON.h>
#include "base/buf.h"
#include "helm/action/record.h"
#include "watch/client.h"
#include "watch/discovery.h"

struct chart_s;
struct manifest_set_s;
struct render_output_s;

/* ACT_DRIFT: the deployed revision's objects compared with the live ones (drift detection); what
 * drifted is reported, and re-applied when asked (no record is written: the release is unchanged). */
typedef enum { ACT_INSTALL, ACT_UPGRADE, ACT_ROLLBACK, ACT_UNINSTALL, ACT_UNLOCK, ACT_TEST, ACT_DRIFT } act_kind_t;
/* CRDs from crds/: created when absent, also replaced when present, or left alone. */
typedef enum { ACT_CRDS_CREATE, ACT_CRDS_CREATE_REPLACE, ACT_CRDS_SKIP } act_crds_t;

/* Where actions run: shared by every action of one controller. */
typedef struct act_env_s {
  uv_loop_t *loop;
  kube_client_t *c;
  discovery_t *d;
  const char *field_manager;
  struct kwaits_s *waits; /* shared readiness watches (watch/waits.h), or NULL: a watch per object waited for */
} act_env_t;

typedef struct act_s act_t;
typedef void (*act_done_cb)(act_t *a, void *data);

/* One object of the deployed revision, as drift detection asks about it. */
typedef struct act_drift_obj_s {
  const char *group, *version, *resource, *kind, *ns, *name; /* ns "" for cluster-scoped objects */
} act_drift_obj_t;
/* What the caller's drift_check answers: leave the object alone, compare it with the live one, or
 * not known yet (the caller's watch of its kind has not listed it yet: compared later). */
enum { ACT_DRIFT_SKIP = 0, ACT_DRIFT_CHECK, ACT_DRIFT_UNSYNCED };
/* An object opts out of drift detection with this annotation set to "disabled" (in the chart or live). */
#define ACT_DRIFT_ANNOTATION "rudder.dev/drift-detection"

struct act_s {
  /* ---- set by the caller before act_start (borrowed; must outlive the action) ---- */
  act_kind_t kind;
  const act_env_t *env;
  const char *log_key;                          /* for log lines */
  const char *release_name, *ns, *storage_ns;   /* ns: the target namespace */
  const char *owner_uid;                        /* written on records (RECORD_OWNER_ANNOTATION) */
  int max_history;                              /* 0 keeps all */
  bool take_ownership;                          /* adopt objects that belong to no release or another */
  act_crds_t crds;
  bool keep_history;                            /* uninstall: keep the records, marked uninstalled */
  const char *propagation;                      /* uninstall and prune: NULL for Background */
  bool disable_hooks;                           /* Helm's --no-hooks: hooks are stored, not run */
  bool wait;                                    /* install/upgrade/rollback: wait until every object is ready;
                                                   uninstall: until every object deleted is gone */
  bool force;                                   /* upgrade: replace objects (PUT) instead of applying them, as
                                                   helm upgrade --force-replace --server-side=false; recorded csa */
  bool cleanup_on_fail;                         /* upgrade: a failure deletes the objects it created */
  uint64_t timeout_ms;                          /* each hook's wait, and the wait for readiness (or deletion); 0: 5 min */
  record_t *recs;                               /* the observed records, oldest first */
  size_t nrecs;
  /* install, upgrade: */
  const struct chart_s *chart;                  /* rendered (dependencies processed) */
  const cJSON *config;                          /* the user's values */
  const struct manifest_set_s *set;             /* the rendered manifests and hooks */
  const struct render_output_s *crd_docs;       /* crds/ files */
  /* rollback: */
  long long rollback_to;
  /* install, upgrade, rollback: a merge patch of pre_patch_path sent with pre_patch_client (not
   * env->c: e.g. the controller's own identity) as the action begins, or none (NULL path). The
   * first write waits for its answer and is made only after a 2xx; a failure of the action waits
   * for it too. Not 2xx: nothing is written, rc != 0, reason "PrePatchFailed", err its error (the
   * action's own failure, if any, is not reported: the patch comes first). Other kinds: UV_EINVAL. */
  kube_client_t *pre_patch_client;
  const char *pre_patch_path, *pre_patch_body;
  /* every object applied (install, upgrade, rollback, drift) also gets these labels (strings), or NULL */
  const cJSON *labels;
  /* drift: */
  bool drift_correct;                         /* re-apply what drifted (else a dry run: reported only) */
  const cJSON *drift_ignore;                  /* [{paths: [JSON pointer...], target: {group, version, kind,
                                                 name, namespace}}]: fields never counted as drift */
  void (*drift_kind)(const char *group, const char *version, const char *resource, bool namespaced,
                     void *data); /* each kind seen */
  int (*drift_check)(const act_drift_obj_t *o, void *data); /* ACT_DRIFT_*: which objects to compare */
  void (*drift_result)(const act_drift_obj_t *o, bool drifted, void *data); /* each compared: left drifted? */
  void *drift_data;
  /* told when the action only waits on the cluster (readiness, a CRD established, a hook Job or
   * Pod to end): on as the wait begins, off as the action goes on, and off before the done
   * callback if it ends while waiting (cancelled); never inside act_start. NULL: not told. */
  void (*waiting)(act_t *a, bool on, void *data);
  void *waiting_data;
  /* ---- results, valid in the done callback and until act_free ---- */
  int rc;                 /* 0, or a negative code (UV_ECANCELED when cancelled) */
  const char *reason;     /* when rc != 0: InstallFailed, UpgradeFailed, RollbackFailed, UninstallFailed, ... */
  buf_t err;              /* what failed and where */
  record_t next;          /* the record written (install, upgrade, rollback) */
  bool have_next;
  long long version;      /* its revision */
  bool pre_pending;       /* the pre-patch is in flight (valid while the action runs, too) */
  bool pre_patched;       /* the pre-patch was answered 2xx */
  int pre_status;         /* its answer's HTTP status (0: none: not sent, a transport error, cancelled) */
  size_t applied, deleted; /* objects applied and deleted */
  /* drift: what drifted ("Kind namespace/name: .field, ...; ..."), how many objects, whether some
   * could not be judged yet (ACT_DRIFT_UNSYNCED) */
  buf_t drift;
  size_t drifted;
  bool drift_unsynced;
  /* ---- private ---- */
  struct act__priv_s *p;
};

/* Starts a (the fields above set); cb runs exactly once, never inside this call. 0, UV_ENOMEM, or
 * UV_EINVAL (a pre-patch for a kind that takes none). */
int act_start(act_t *a, act_done_cb cb, void *data);
/* Cancels a running action: no further request is sent; cb runs with rc UV_ECANCELED once the
 * requests in flight (if any) have been cancelled. */
void act_cancel(act_t *a);
/* Frees what the action allocated (results included). Not while it runs. */
void act_free(act_t *a);
/* The action's name as Helm's messages use it ("install", "upgrade", ...). */
const char *act_kind_name(act_kind_t k);
