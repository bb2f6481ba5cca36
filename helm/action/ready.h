/* Readiness of one applied object, judged exactly as Helm 4's `--wait` (the "watcher" strategy)
 * judges it: kstatus's rules (github.com/fluxcd/cli-utils v1.2.2, the version Helm v4.3.1 pins) and
 * Helm's own additions (Job and Pod readers for hooks and --wait-for-jobs, paused Deployments left
 * out). See helm/action/README.md for the rules and how they are tested against the Go code.
 *
 * Everything here is pure: no I/O, no globals, no clock (the caller passes the time), so it can run
 * on any thread. Cost: a few passes over the object's conditions; no allocation but the message. */
#pragma once
#include <stdint.h>
#include <cjson/cJSON.h>
#include "base/buf.h"

/* kstatus's statuses, in its words (ready_status_name). */
typedef enum {
  READY_IN_PROGRESS,
  READY_FAILED,
  READY_CURRENT,
  READY_TERMINATING,
  READY_NOT_FOUND,
  READY_UNKNOWN,
} ready_status_t;

/* Which of Helm's waits is judging: they use different readers. */
typedef enum {
  READY_WAIT,      /* install/upgrade/rollback --wait: kstatus for every kind */
  READY_WAIT_JOBS, /* the same with --wait-for-jobs: a Job is ready only once complete */
  READY_HOOK,      /* hooks: Jobs complete, Pods succeeded, every other kind ready at once */
} ready_mode_t;

typedef struct ready_result_s {
  ready_status_t status;
  /* Helm leaves the object out of the wait altogether (a paused Deployment); status is then
   * READY_CURRENT and the message empty. */
  int skipped;
  /* kstatus could not judge the object (a field of the wrong type, an invalid selector, an unknown
   * Pod phase): status is READY_UNKNOWN, the message empty, and this says why (truncated). */
  char error[200];
  /* When nonzero, the verdict changes by itself at this time (Unix seconds) even if the object does
   * not: a Pod that cannot be scheduled is InProgress for 15 s after its creation, then Failed. */
  int64_t recheck_at;
} ready_result_t;

/* Judges one object as the API server returns it (apiVersion, kind, metadata, spec, status) at time
 * `now` (Unix seconds). The message kstatus gives (the very words users see) is written to *msg
 * (reset first). Returns 0, or -12 when memory runs out. */
int ready_compute(const cJSON *obj, ready_mode_t mode, int64_t now, ready_result_t *r, buf_t *msg);

/* kstatus's name of a status ("InProgress", "Current", ...). */
const char *ready_status_name(ready_status_t s);

/* Whether an object of this kind needs to be watched at all once applied: 0 for kinds whose verdict
 * is fixed by what the apply returned (kstatus finds them Current at once and nothing but deletion
 * changes that: ConfigMap, Secret, ServiceAccount, RBAC, CronJob, a non-LoadBalancer Service...),
 * 1 for everything whose status a controller writes (workloads, Jobs, Pods, PVCs, CRDs, custom
 * resources, unknown kinds). `group` is "" for the core group. In READY_HOOK mode only Jobs and Pods
 * need it. The apply's response must still be judged with ready_compute (it may be terminating). */
int ready_kind_needs_watch(const char *group, const char *kind, ready_mode_t mode);

/* Helm's words for an object that is not ready when the wait ends (appended to *out):
 * "resource <Kind>/<namespace>/<name> not ready. status: <Status>, message: <message>". */
int ready_describe(const char *kind, const char *ns, const char *name, ready_status_t s, const char *message,
                   buf_t *out);

/* Helm's words for an object still there when the wait for deletion ends (uninstall --wait; an
 * object counts as gone once NotFound or Unknown): "resource <Kind>/<namespace>/<name> still exists.
 * status: <Status>, message: <message>". */
int ready_describe_undeleted(const char *kind, const char *ns, const char *name, ready_status_t s,
                             const char *message, buf_t *out);
