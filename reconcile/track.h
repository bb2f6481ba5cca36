/* What the engine tells the metrics and the logs about its reconciles and releases, one call per
 * event (base/metrics.h for the registry):
 *
 * - each reconcile gets an id (a random UUID, as controller-runtime's reconcileID) that every log
 *   line naming its release carries as reconcile_id (base/log.h tags), and is counted and timed as
 *   controller-runtime counts them: controller_runtime_reconcile_total{controller,result},
 *   controller_runtime_reconcile_errors_total, controller_runtime_terminal_reconcile_errors_total,
 *   controller_runtime_reconcile_time_seconds, controller_runtime_active_workers;
 * - each release's Ready status and last applied revision: rudder_releases{controller,ready}
 *   (how many are True, False, Unknown) and rudder_release_revision{controller,namespace,name}.
 *
 * The controller label is the kind in lower case (as controller-runtime names a controller after
 * its kind), with ".group" when two doors serve kinds of the same name.
 *
 * Memory: per reconcile in flight, one block (key, id, start); per release, one block (key, its
 * revision series). Loop thread only. */
#pragma once
#include <stdint.h>
#include "reconcile/door.h"

/* How a reconcile ended, as controller-runtime's result label says it. */
typedef enum {
  TRACK_SUCCESS = 0,    /* done: in sync, or nothing more to do */
  TRACK_ERROR,          /* failed; retried with backoff */
  TRACK_TERMINAL,       /* failed; not retried until the inputs change (also counted as an error) */
  TRACK_REQUEUE,        /* cancelled: queued again by the change that cancelled it */
  TRACK_REQUEUE_AFTER,  /* asked to come back after a delay */
} track_result_t;

/* The controller label of the door's reconciles (and its work queue's name). */
const char *track_controller_name(const door_t *door);
/* A reconcile of key starts: its id is made and its log lines tagged. */
void track_reconcile_start(const door_t *door, const char *key);
/* The reconcile of key ends with result: counted, timed, its log tag removed. */
void track_reconcile_finish(const door_t *door, const char *key, track_result_t result);
/* The release of object key is Ready ready ("True", "False", "Unknown"; NULL: seen, and Unknown
 * unless already known) at applied revision (0: unchanged). */
void track_release(const door_t *door, const char *key, const char *ready, long long revision);
/* The object key is gone: its release leaves the gauges. */
void track_release_forget(const door_t *door, const char *key);
/* The id of the reconcile of key in flight, or NULL (for tests). */
const char *track_reconcile_id(const door_t *door, const char *key);
