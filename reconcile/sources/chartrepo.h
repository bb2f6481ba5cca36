/* Captain's ChartRepo kind (app.alauda.io, v1beta1 and v1alpha1) and the Chart objects it
 * publishes. A ChartRepo in the chart-repository namespace declares an HTTP(S) chart repository
 * to helm/source under the key "chartrepo:<namespace>/<name>" (what `<repo>/<chart>` of a
 * HelmRequest resolves to), with credentials and a CA from spec.secret; its index is fetched on
 * an interval and the outcome written as status.phase (Synced, Failed) and status.reason.
 *
 * Charts: for every chart of a Synced ChartRepo's index a Chart object `<chart>.<repo>` (labelled
 * repo=<repo>, owned by the ChartRepo) holds every version's metadata. The index is walked as a
 * stream (one chart in memory at a time); only Charts whose content changed are written (a digest
 * of each is kept as an annotation, read from a lean informer of the Charts), charts that left
 * the index are deleted, and so are all of a deleted ChartRepo's. Writes go through the client's
 * rate limit, a few at a time. The index is walked only when its digest differs from the one
 * last published (once after a start). */
#pragma once
#include <stdbool.h>
#include <uv.h>

#include "helm/source/source.h"
#include "watch/client.h"
#include "watch/events.h"

#define CHARTREPO_KEY_PREFIX "chartrepo:"
#define CHARTREPO_DIGEST_ANNOTATION "rudder.dev/chart-digest"

typedef struct chartrepo_s chartrepo_t;

typedef struct chartrepo_opts_s {
  const char *namespace; /* the chart-repository namespace: ChartRepos and Charts are read and written there */
  events_t *events;      /* may be NULL */
  bool publish_charts;   /* write Chart objects */
  unsigned concurrency;  /* repositories fetched at once (default 4) */
  const char *label_selector; /* a shard: only the ChartRepos whose labels match; NULL or "": all */
} chartrepo_opts_t;

/* Starts watching ChartRepos (and Charts, when publishing); c and s are the caller's and outlive
 * it. 0 or a negative code. */
int chartrepo_start(uv_loop_t *loop, kube_client_t *c, source_t *s, const chartrepo_opts_t *o, chartrepo_t **out);
/* Cancels what is in flight (no request after this call), frees everything, then calls cb. */
void chartrepo_stop(chartrepo_t *cr, void (*cb)(void *data), void *data);
