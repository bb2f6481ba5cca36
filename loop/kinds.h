/* The kinds the controller serves, one row each: every front door (reconcile/doors, served by a
 * release engine) and the chart-source kinds (HelmRepository, ...). A kind is served while its CRD
 * is installed: the CRDs are watched (one informer; its cache keeps of each of our CRDs only the
 * group, the versions' names and served flags and the Established condition, and of the others only
 * their names), a kind's reconciler is started once its CRD is Established and serves its version,
 * at start-up or whenever that happens later, and stopped when the CRD is deleted (the API server has
 * deleted every object of the kind by then). `--kinds` restricts the kinds to a list. Each kind's
 * reconciler has its own informer and work queue. */
#pragma once
#include <uv.h>
#include "base/buf.h"
#include "helm/source/source.h"
#include "reconcile/engine.h"
#include "watch/client.h"
#include "watch/discovery.h"

/* What a kind's reconciler is started with (the controller's; they outlive the kinds). */
typedef struct kinds_env_s {
  uv_loop_t *loop;
  kube_client_t *client;
  discovery_t *disc;
  source_t *source;            /* chart sources; NULL when they could not be set up */
  const engine_opts_t *eopts;  /* the release engines' options (namespace, events, ...) */
  bool publish_charts;         /* ChartRepo: write a Chart object for every chart of its index */
} kinds_env_t;

typedef struct kind_row_s kind_row_t;
struct kind_row_s {
  const char *kind, *group, *version, *resource; /* the kind's API; its CRD is <resource>.<group> */
  const door_t *door; /* a front door (served by a release engine), or NULL */
  /* Starts the kind's reconciler into *out; 0 or a negative code. */
  int (*start)(const kinds_env_t *env, const kind_row_t *row, void **out);
  /* Stops it (no request after the call), then calls cb. */
  void (*stop)(void *h, void (*cb)(void *data), void *data);
};

typedef struct kinds_s kinds_t;

/* The kinds to serve: every known one when list is NULL, else those named in list (comma-separated
 * kinds, case-insensitive; "Kind.group" for one of several kinds of that name). -22 with err naming
 * the unknown one and listing the known kinds; -12. */
int kinds_new(const char *list, kinds_t **out, buf_t *err);
/* Appends the known kinds to out ("HelmRelease (rudder.dev), ..."); 0 or -12. */
int kinds_describe(buf_t *out);
/* Starts watching the CRDs and serving the kinds whose CRD is ready. on_fatal runs when a
 * reconciler cannot be started (the controller then shuts down). 0 or a negative code. */
int kinds_start(kinds_t *k, const kinds_env_t *env, void (*on_fatal)(void *data), void *data);
/* The release engines running now, up to max, into out; their count. */
size_t kinds_engines(const kinds_t *k, engine_t **out, size_t max);
/* Stops the CRD watch and every reconciler, then calls cb; k is freed. Also for a k never started. */
void kinds_stop(kinds_t *k, void (*cb)(void *data), void *data);
