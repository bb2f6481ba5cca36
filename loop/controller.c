#include "loop/controller.h"
#include "base/log.h"
#include "buildinfo.h"
#include "loop/cli.h"
#include "loop/kinds.h"
#include "loop/leader.h"
#include "loop/telemetry.h"
#include "base/metrics.h"
#include "watch/informer.h"
#include "reconcile/engine.h"
#include "reconcile/request.h"
#include "reconcile/clusters.h"
#include "reconcile/records.h"
#include "helm/source/cache.h"
#include "helm/source/source.h"
#include "watch/fetch.h"
#include "watch/client.h"
#include "watch/discovery.h"
#include "watch/events.h"
#include "watch/kubeconfig.h"
#include "watch/selector.h"
#include "base/sha256.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>
#define CTL_HAVE_MALLINFO2 1
#endif

typedef struct ctl_s {
  uv_loop_t loop;
  uv_signal_t sigterm, sigint, sigusr1;
  kube_config_t cfg;
  kube_client_t *client;
  discovery_t *disc;
  events_t *events;
  leader_t *leader;
  kinds_t *kinds;         /* the kinds served (loop/kinds.h): a reconciler each while its CRD is installed */
  bool kinds_started;
  engine_opts_t eopts;
  fetch_t *fetch;         /* HTTP(S) to chart repositories */
  chart_cache_t *charts;  /* charts in memory, one per digest */
  source_t *source;       /* repositories, downloads, the archive cache on disk */
  clusters_t *clusters;   /* other clusters, from kubeconfig Secrets in the chart-repository namespace */
  records_t *records;     /* Helm's release records, one watch for every front door's engine */
  const char *chartrepo_ns;
  bool publish_charts;    /* Chart objects for every chart of a ChartRepo */
  bool kubeconfig_exec;   /* --insecure-kubeconfig-exec */
  telemetry_t *telemetry; /* the metrics and health endpoints */
  bool leader_elect;
  metrics_series_t *leading; /* leader_election_master_status{name} */
  int stopping;
  int exit_code;
} ctl_t;

static void ctl__handle_closed(uv_handle_t *h) { (void)h; }

static void ctl__telemetry_closed(void *data) {
  ctl_t *c = data;
  c->telemetry = NULL;
  uv_close((uv_handle_t *)&c->sigterm, ctl__handle_closed);
  uv_close((uv_handle_t *)&c->sigint, ctl__handle_closed);
  uv_close((uv_handle_t *)&c->sigusr1, ctl__handle_closed);
}

/* The probes answer until the very end: /readyz says "shutting down" while the rest drains. */
static void ctl__client_closed(void *data) {
  ctl_t *c = data;
  c->client = NULL;
  telemetry_close(c->telemetry, ctl__telemetry_closed, c);
}

static void ctl__events_closed(void *data) {
  ctl_t *c = data;
  c->events = NULL;
  kube_client_close(c->client, ctl__client_closed, c);
}

static void ctl__disc_closed(void *data) {
  ctl_t *c = data;
  c->disc = NULL;
  if (c->events) events_close(c->events, ctl__events_closed, c);
  else ctl__events_closed(c);
}

static void ctl__leader_released(void *data) {
  ctl_t *c = data;
  c->leader = NULL;
  discovery_close(c->disc, ctl__disc_closed, c);
}

/* Shutdown order is the reverse of start: reconcilers drain, the lease is released, then the
 * mapper, the event recorder and the client close. */
static void ctl__fetch_closed(void *data) {
  ctl_t *c = data;
  c->fetch = NULL;
  if (c->charts) chart_cache_free(c->charts);
  c->charts = NULL;
  if (c->leader) leader_stop(c->leader, ctl__leader_released, c);
  else ctl__leader_released(c);
}

static void ctl__clusters_stopped(void *data);
static void ctl__records_stopped(void *data);

static void ctl__kinds_stopped(void *data) {
  ctl_t *c = data;
  c->kinds = NULL;
  if (c->records) { /* after the engines, which were subscribed to it */
    records_stop(c->records, ctl__records_stopped, c);
    return;
  }
  ctl__records_stopped(c);
}

static void ctl__records_stopped(void *data) {
  ctl_t *c = data;
  c->records = NULL;
  if (c->clusters) { /* after the engines: their reconciles held clients of other clusters */
    clusters_stop(c->clusters, ctl__clusters_stopped, c);
    return;
  }
  ctl__clusters_stopped(c);
}

static void ctl__clusters_stopped(void *data) {
  ctl_t *c = data;
  c->clusters = NULL;
  /* Every reconcile is gone: nothing holds a chart any more. What the sources cost, for the
   * benchmarks: downloads, index fetches, charts loaded in memory. */
  if (c->source) {
    source_stats_t ss = source_get_stats(c->source);
    chart_cache_stats_t cs = chart_cache_stats(c->charts);
    char v[10][24];
    snprintf(v[0], sizeof v[0], "%llu", (unsigned long long)ss.index_fetches);
    snprintf(v[1], sizeof v[1], "%llu", (unsigned long long)ss.index_not_modified);
    snprintf(v[2], sizeof v[2], "%llu", (unsigned long long)ss.downloads);
    snprintf(v[3], sizeof v[3], "%llu", (unsigned long long)ss.disk_hits);
    snprintf(v[4], sizeof v[4], "%llu", (unsigned long long)ss.memory_hits);
    snprintf(v[5], sizeof v[5], "%llu", (unsigned long long)cs.loads);
    snprintf(v[6], sizeof v[6], "%zu", cs.entries);
    snprintf(v[7], sizeof v[7], "%zu", cs.bytes);
    LOG_I("chart sources", "index_fetches", v[0], "index_not_modified", v[1], "downloads", v[2], "disk_hits", v[3],
          "memory_hits", v[4], "charts_loaded", v[5], "charts_cached", v[6], "chart_cache_bytes", v[7]);
  }
  source_free(c->source);
  c->source = NULL;
  if (c->fetch) fetch_close(c->fetch, ctl__fetch_closed, c);
  else ctl__fetch_closed(c);
}

/* VmRSS and VmHWM of this process from /proc/self/status, in KiB (0 where there is none). */
static void ctl__proc_rss(unsigned long long *rss, unsigned long long *hwm) {
  *rss = *hwm = 0;
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return;
  char line[256];
  while (fgets(line, sizeof line, f)) {
    if (!strncmp(line, "VmRSS:", 6)) *rss = strtoull(line + 6, NULL, 10);
    else if (!strncmp(line, "VmHWM:", 6)) *hwm = strtoull(line + 6, NULL, 10);
  }
  fclose(f);
}

/* What the controller holds, logged once as it starts to shut down (before anything is freed), for
 * bench/scale/memory.sh: the informer caches (informer_memory), the engines' per-release
 * structures (engine_stats_t), the event recorder's aggregation entries (events_stats_t), the
 * chart cache, the heap as malloc sees it and the kernel's RSS, all read at the same moment. */
static void ctl__log_memory(ctl_t *c) {
  size_t objects = 0, cache = 0, records = 0, records_objects = 0, memo = 0, index = 0, queue = 0, running = 0,
         queue_keys = 0, engine = 0, drift_objects = 0, drift_bytes = 0;
  engine_t *engines[32];
  size_t nengines = kinds_engines(c->kinds, engines, sizeof engines / sizeof *engines);
  for (size_t i = 0; i < nengines; i++) {
    engine_stats_t s = engine_get_stats(engines[i]);
    objects += s.cache.objects;
    cache += s.cache.bytes;
    if (!c->records) { /* else every engine reports the one shared cache: counted once below */
      records_objects += s.records_cache.objects;
      records += s.records_cache.bytes;
    }
    memo += s.memo_bytes;
    index += s.index_bytes;
    queue += s.queue_bytes;
    queue_keys += s.queue_keys;
    running += s.running;
    engine += s.bytes;
    drift_objects += s.drift_objects;
    drift_bytes += s.drift_bytes;
  }
  if (c->records) {
    informer_memory_t rm = records_memory(c->records);
    records_objects = rm.objects;
    records = rm.bytes;
  }
  unsigned long long rss, hwm, heap_used = 0, heap_free = 0, heap_mmap = 0;
  ctl__proc_rss(&rss, &hwm);
#ifdef CTL_HAVE_MALLINFO2
  struct mallinfo2 mi = mallinfo2();
  heap_used = mi.uordblks + mi.hblkhd; /* in use: in the arenas and in blocks of their own (mmap) */
  heap_free = mi.fordblks;             /* free in the arenas, kept by malloc */
  heap_mmap = mi.hblkhd;
#endif
  unsigned long long n[] = {objects, cache + records, cache, records_objects, records, engine, memo, index, queue,
                            queue_keys, running, c->charts ? chart_cache_stats(c->charts).bytes : 0, heap_used,
                            heap_free, heap_mmap, rss, hwm, 0, 0, 0, drift_objects, drift_bytes};
  if (c->events) {
    events_stats_t es = events_get_stats(c->events);
    n[17] = es.bytes;
    n[18] = es.aggregates;
  }
#ifdef CTL_HAVE_MALLINFO2
  /* What of the RSS is heap that malloc keeps free: the RSS once it has given back what it can. */
  malloc_trim(0);
  unsigned long long hwm2;
  ctl__proc_rss(&n[19], &hwm2);
#endif
  char v[sizeof n / sizeof *n][24];
  for (size_t i = 0; i < sizeof n / sizeof *n; i++) snprintf(v[i], sizeof v[i], "%llu", n[i]);
  LOG_I("memory", "objects", v[0], "informer_cache_bytes", v[1], "objects_cache_bytes", v[2], "records", v[3],
        "records_cache_bytes", v[4], "engine_bytes", v[5], "memo_bytes", v[6], "index_bytes", v[7], "queue_bytes",
        v[8], "queue_keys", v[9], "reconciles_in_flight", v[10], "chart_cache_bytes", v[11], "heap_in_use_bytes",
        v[12], "heap_free_bytes", v[13], "heap_mmap_bytes", v[14], "vm_rss_kib", v[15], "vm_hwm_kib", v[16],
        "events_bytes", v[17], "events_tracked", v[18], "vm_rss_after_trim_kib", v[19], "drift_objects", v[20],
        "drift_cache_bytes", v[21]);
}

static void ctl__shutdown(ctl_t *c) {
  if (c->stopping) return;
  c->stopping = 1;
  ctl__log_memory(c);
  kinds_stop(c->kinds, ctl__kinds_stopped, c);
}

static void ctl__on_signal(uv_signal_t *s, int signum) {
  ctl_t *c = s->data;
  if (c->stopping) {
    LOG_W("second signal: exiting now", "signal", signum == SIGINT ? "SIGINT" : "SIGTERM");
    exit(1);
  }
  LOG_I("shutting down", "signal", signum == SIGINT ? "SIGINT" : "SIGTERM");
  ctl__shutdown(c);
}

/* SIGUSR1: the memory line now, without stopping (bench/scale reads it in the middle of a run). */
static void ctl__on_usr1(uv_signal_t *s, int signum) {
  (void)signum;
  ctl_t *c = s->data;
  if (!c->stopping) ctl__log_memory(c);
}

static void ctl__kind_failed(void *data) {
  ctl_t *c = data;
  c->exit_code = 1;
  ctl__shutdown(c);
}

/* Every kind whose CRD is installed, now or later (loop/kinds.h). */
static void ctl__start_reconcilers(ctl_t *c) {
  c->kinds_started = true;
  int crc = clusters_start(&c->loop, c->client, c->chartrepo_ns, c->eopts.field_manager, &c->clusters);
  if (!crc) clusters_allow_exec(c->clusters, c->kubeconfig_exec);
  if (crc) {
    LOG_W("cannot watch the kubeconfig Secrets of other clusters: releases go to this cluster only", "error",
          uv_strerror(crc));
    c->clusters = NULL;
  }
  c->eopts.clusters = c->clusters;
  int rrc = records_start(c->client, c->eopts.namespace, &c->records);
  if (rrc) {
    LOG_W("cannot watch the release records once for all kinds: each kind watches them itself", "error",
          uv_strerror(rrc));
    c->records = NULL;
  }
  c->eopts.records = c->records;
  kinds_env_t env = {.loop = &c->loop, .client = c->client, .disc = c->disc, .source = c->source, .eopts = &c->eopts,
                     .publish_charts = c->publish_charts};
  int rc = kinds_start(c->kinds, &env, ctl__kind_failed, c);
  if (rc) {
    LOG_E("cannot watch the CustomResourceDefinitions", "error", uv_strerror(rc));
    ctl__kind_failed(c);
  }
}

static void ctl__on_started_leading(leader_t *l, void *data) {
  ctl_t *c = data;
  LOG_I("became leader", "identity", leader_identity(l));
  metrics_set(c->leading, 1);
  if (!c->stopping && !c->kinds_started) ctl__start_reconcilers(c);
}

/* Losing the lease while running means another replica may already reconcile: stop at once and
 * exit non-zero (as client-go controllers do) so that the process restarts as a candidate. */
static void ctl__on_stopped_leading(leader_t *l, void *data) {
  ctl_t *c = data;
  metrics_set(c->leading, 0);
  if (c->stopping) return;
  LOG_E("lost leadership; exiting", "identity", leader_identity(l), "holder", leader_holder(l));
  c->exit_code = 1;
  ctl__shutdown(c);
}

/* client-go's leader gauge, as controller-runtime registers it: 1 while this process holds the lease. */
static metrics_family_t ctl__f_leader = {
    .name = "leader_election_master_status",
    .help = "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. "
            "'name' is the string used to identify the lease. Please make sure to group by name.",
    .type = METRICS_GAUGE, .labels = {"name"}};

/* /readyz: a standby (waiting for the lease) is ready; so is a controller whose caches (every
 * informer: the CRDs, each kind's objects and records, the objects releases read) have synced. */
static bool ctl__ready(void *data, buf_t *why) {
  ctl_t *c = data;
  if (c->stopping) return buf_puts(why, "shutting down"), false;
  if (c->leader_elect && !c->kinds_started) return true;
  if (!c->kinds_started) return buf_puts(why, "the reconcilers have not started"), false;
  size_t n = informer_unsynced();
  if (n) return buf_printf(why, "%zu cache%s not synced yet", n, n == 1 ? " is" : "s are"), false;
  return true;
}

static const char ctl__usage[] =
  "Usage: rudder controller [flags]\n"
  "  --kubeconfig FILE   kubeconfig to use (default $KUBECONFIG, then in-cluster, then ~/.kube/config)\n"
  "  --context NAME      kubeconfig context (default its current-context)\n"
  "  --namespace NS      watch the kinds' objects in this namespace only (default all)\n"
  "  --watch-label-selector SELECTOR  a shard: serve only the objects whose labels match (e.g.\n"
  "                      \"sharding.fluxcd.io/key in (shard1)\", or \"!sharding.fluxcd.io/key\" for the rest);\n"
  "                      the kinds' objects and the repositories they name, each shard with its own Lease\n"
  "  --kinds KIND[,KIND...]  serve only these kinds (default every kind whose CRD is installed, found when\n"
  "                      the controller starts and whenever a CRD is installed later; the known kinds are\n"
  "                      listed below; a HelmRelease whose chart is in a HelmRepository needs HelmRepository\n"
  "                      too); Kind.group picks one of several kinds of that name\n"
  "  --concurrency N     reconciles in flight at once (default 10)\n"
  "  --max-waiting N     releases that have waited on the cluster (readiness, a hook Job) for 1s give\n"
  "                      their slot to the next: up to N waiting at once besides those in flight\n"
  "                      (default 10 x --concurrency; 0: a waiting release holds its slot)\n"
  "  --qps Q             client-side limit on API requests per second (default: 50 until the API server\n"
  "                      shows it applies its own flow control, then none, as Flux decides; negative: none)\n"
  "  --burst N           burst allowed above --qps (default 100)\n"
  "  --leader-elect      take a coordination.k8s.io Lease before reconciling (for several replicas)\n"
  "  --leader-election-namespace NS   the Lease's namespace (default the kubeconfig's namespace)\n"
  "  --leader-election-id NAME        the Lease's name (default rudder-controller; with\n"
  "                      --watch-label-selector, rudder-controller-<10 hex digits of the selector's sha256>)\n"
  "  --leader-election-lease-duration D, --leader-election-renew-deadline D,\n"
  "  --leader-election-retry-period D  lease timings (defaults 15s, 10s, 2s)\n"
  "  --log-level LEVEL   debug, info, warn or error (default info)\n"
  "  --log-format FORMAT logfmt (default) or json: one JSON object per line\n"
  "  --metrics-addr ADDR serve Prometheus metrics at ADDR/metrics (default :8080; 0: off); ADDR is\n"
  "                      :PORT, IP:PORT, [IPv6]:PORT or localhost:PORT (port 0: any free one, logged)\n"
  "  --health-addr ADDR  serve /healthz and /readyz at ADDR (default :8081; 0: off)\n"
  "  --max-render-memory SIZE, --max-render-output SIZE, --max-render-time TIME\n"
  "                      each render's budgets (defaults 256Mi, 64Mi, 30s): a chart that exceeds one\n"
  "                      fails alone (RenderFailed, not retried until its inputs change)\n"
  "  --default-service-account NAME  releases without spec.serviceAccountName act as this service account\n"
  "                      of their namespace (impersonated; default: as the controller itself)\n"
  "  --allow-cross-namespace-refs  let objects name objects of other namespaces (dependsOn, chart\n"
  "                      repositories); refused by default\n"
  "  --insecure-kubeconfig-exec  run the exec credential plugins that kubeconfigs of other clusters\n"
  "                      (Secrets) name; refused by default: whoever writes such a Secret picks a command\n"
  "  --publish-charts=false  do not write a Chart object (app.alauda.io) for every chart of a ChartRepo\n"
  "  --chartrepo-namespace NS  where Captain's ChartRepo objects (app.alauda.io) are read, and the kubeconfig\n"
  "                      Secrets of other clusters (default captain-system)\n"
  "  --publish-charts=false  do not write a Chart object (app.alauda.io) for every chart of a ChartRepo\n"
  "  --storage-path DIR  where downloaded chart archives are kept (default /tmp/rudder-charts)\n"
  "  --max-storage SIZE  archives kept there, least recently used dropped first (default 1Gi)\n"
  "  --max-chart-cache SIZE  charts kept loaded in memory when no release holds them (default 256Mi)\n";

int controller_main(int argc, char **argv) {
  const char *kubeconfig = NULL, *context = NULL, *ns = NULL, *le_ns = NULL, *le_id = NULL, *selector = NULL;
  char derived_id[64];
  unsigned concurrency = 10, burst = 100;
  int max_waiting = 0; /* the engine's default */
  double qps = 50;
  bool qps_auto = true;
  int leader_elect = 0;
  render_limits_t limits = {0};
  const char *storage_path = "/tmp/rudder-charts";
  const char *default_sa = NULL;
  const char *chartrepo_ns = "captain-system";
  bool publish_charts = true;
  bool allow_xns = false, kc_exec = false;
  const char *kinds_list = NULL;
  size_t max_storage = 0, max_chart_cache = 0;
  long le_lease = 15000, le_renew = 10000, le_retry = 2000;
  const char *metrics_addr = ":8080", *health_addr = ":8081";
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    const char *v = NULL;
    const char *eq = strchr(a, '=');
    char flag[64];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      buf_t k = BUF_INIT;
      int krc = kinds_describe(&k);
      printf("%sKinds: %s\n", ctl__usage, krc ? "(out of memory)" : k.data);
      buf_free(&k);
      return 0;
    }
    if (strncmp(a, "--", 2) != 0) { fprintf(stderr, "rudder controller: unexpected argument \"%s\"\n%s", a, ctl__usage); return 2; }
    if (!strcmp(a, "--leader-elect") || !strcmp(a, "--leader-elect=true")) { leader_elect = 1; continue; }
    if (!strcmp(a, "--leader-elect=false")) { leader_elect = 0; continue; }
    if (!strcmp(a, "--allow-cross-namespace-refs")) { allow_xns = true; continue; }
    if (!strcmp(a, "--insecure-kubeconfig-exec") || !strcmp(a, "--insecure-kubeconfig-exec=true")) { kc_exec = true; continue; }
    if (!strcmp(a, "--insecure-kubeconfig-exec=false")) { kc_exec = false; continue; }
    if (!strcmp(a, "--publish-charts") || !strcmp(a, "--publish-charts=true")) { publish_charts = true; continue; }
    if (!strcmp(a, "--publish-charts=false")) { publish_charts = false; continue; }
    if (eq) {
      snprintf(flag, sizeof flag, "%.*s", (int)(eq - a), a);
      v = eq + 1;
    } else {
      snprintf(flag, sizeof flag, "%s", a);
      if (i + 1 >= argc) { fprintf(stderr, "rudder controller: flag %s needs a value\n", a); return 2; }
      v = argv[++i];
    }
    if (!strcmp(flag, "--kubeconfig")) kubeconfig = v;
    else if (!strcmp(flag, "--context")) context = v;
    else if (!strcmp(flag, "--kinds")) kinds_list = v;
    else if (!strcmp(flag, "--watch-label-selector")) {
      buf_t serr = BUF_INIT;
      if (kube_label_selector_check(v, &serr)) {
        fprintf(stderr, "rudder controller: --watch-label-selector \"%s\": %s\n", v, serr.data ? serr.data : "out of memory");
        buf_free(&serr);
        return 2;
      }
      selector = *v ? v : NULL;
    }
    else if (!strcmp(flag, "--namespace") || !strcmp(flag, "-n")) ns = v;
    else if (!strcmp(flag, "--concurrency")) {
      char *end;
      long n = strtol(v, &end, 10);
      if (*end || n < 1 || n > 10000) { fprintf(stderr, "rudder controller: --concurrency: \"%s\" is not a number from 1 to 10000\n", v); return 2; }
      concurrency = (unsigned)n;
    } else if (!strcmp(flag, "--max-waiting")) {
      char *end;
      long n = strtol(v, &end, 10);
      if (*end || end == v || n < 0 || n > 1000000) { fprintf(stderr, "rudder controller: --max-waiting: \"%s\" is not a number from 0 to 1000000\n", v); return 2; }
      max_waiting = n ? (int)n : -1;
    } else if (!strcmp(flag, "--qps")) {
      char *end;
      qps = strtod(v, &end);
      qps_auto = false;
      if (*end || end == v) { fprintf(stderr, "rudder controller: --qps: \"%s\" is not a number\n", v); return 2; }
    } else if (!strcmp(flag, "--burst")) {
      char *end;
      long n = strtol(v, &end, 10);
      if (*end || n < 1 || n > 1000000) { fprintf(stderr, "rudder controller: --burst: \"%s\" is not a number from 1 to 1000000\n", v); return 2; }
      burst = (unsigned)n;
    } else if (!strcmp(flag, "--leader-election-namespace")) le_ns = v;
    else if (!strcmp(flag, "--leader-election-id")) le_id = v;
    else if (!strcmp(flag, "--leader-election-lease-duration") || !strcmp(flag, "--leader-election-renew-deadline") ||
             !strcmp(flag, "--leader-election-retry-period")) {
      long ms = req_duration_ms(v);
      if (ms <= 0) { fprintf(stderr, "rudder controller: %s: \"%s\" is not a positive duration like 15s\n", flag, v); return 2; }
      if (strstr(flag, "lease")) le_lease = ms;
      else if (strstr(flag, "renew")) le_renew = ms;
      else le_retry = ms;
    } else if (!strcmp(flag, "--max-render-memory") || !strcmp(flag, "--max-render-output")) {
      size_t n;
      if (cli_parse_size(v, &n)) { fprintf(stderr, "rudder controller: %s: \"%s\" is not a size such as 256Mi\n", flag, v); return 2; }
      if (strstr(flag, "memory")) limits.max_memory = n;
      else limits.max_output = n;
    } else if (!strcmp(flag, "--max-render-time")) {
      if (cli_parse_ms(v, &limits.max_time_ms)) { fprintf(stderr, "rudder controller: %s: \"%s\" is not a time such as 30s\n", flag, v); return 2; }
    } else if (!strcmp(flag, "--default-service-account")) {
      default_sa = v;
    } else if (!strcmp(flag, "--allow-cross-namespace-refs")) {
      if (strcmp(v, "true") && strcmp(v, "false")) { fprintf(stderr, "rudder controller: --allow-cross-namespace-refs: true or false\n"); return 2; }
      allow_xns = !strcmp(v, "true");
    } else if (!strcmp(flag, "--chartrepo-namespace")) {
      if (!*v) { fprintf(stderr, "rudder controller: --chartrepo-namespace: give a namespace\n"); return 2; }
      chartrepo_ns = v;
    } else if (!strcmp(flag, "--storage-path")) {
      if (!*v) { fprintf(stderr, "rudder controller: --storage-path: give a directory\n"); return 2; }
      storage_path = v;
    } else if (!strcmp(flag, "--max-storage") || !strcmp(flag, "--max-chart-cache")) {
      size_t n;
      if (cli_parse_size(v, &n) || !n) { fprintf(stderr, "rudder controller: %s: \"%s\" is not a size such as 1Gi\n", flag, v); return 2; }
      if (strstr(flag, "storage")) max_storage = n;
      else max_chart_cache = n;
    } else if (!strcmp(flag, "--metrics-addr") || !strcmp(flag, "--health-addr")) {
      struct sockaddr_storage ss;
      char e[256];
      if (httpd_parse_addr(v, &ss, e, sizeof e) < 0) { fprintf(stderr, "rudder controller: %s: %s\n", flag, e); return 2; }
      if (strstr(flag, "metrics")) metrics_addr = v;
      else health_addr = v;
    } else if (!strcmp(flag, "--log-format")) {
      int f = log_format_parse(v);
      if (f < 0) { fprintf(stderr, "rudder controller: --log-format: \"%s\" is not logfmt or json\n", v); return 2; }
      log_set_format((log_format_t)f);
    } else if (!strcmp(flag, "--log-level")) {
      int l = log_level_parse(v);
      if (l < 0) { fprintf(stderr, "rudder controller: --log-level: \"%s\" is not debug, info, warn or error\n", v); return 2; }
      log_set_level((log_level_t)l);
    } else { fprintf(stderr, "rudder controller: unknown flag %s\n%s", flag, ctl__usage); return 2; }
  }

  if (!le_id && selector) {
    /* Each shard elects its own leader: a Lease named after its selector unless one is given. */
    uint8_t d[32];
    char hex[65];
    base_sha256(selector, strlen(selector), d);
    base_sha256_hex(d, hex);
    snprintf(derived_id, sizeof derived_id, "rudder-controller-%.10s", hex);
    le_id = derived_id;
  }
  if (!le_id) le_id = "rudder-controller";
  /* A write to a connection the server closed must be an error, not a signal. */
  signal(SIGPIPE, SIG_IGN);
  ctl_t *c = calloc(1, sizeof *c);
  if (!c) { fprintf(stderr, "rudder controller: out of memory\n"); return 1; }
  buf_t kerr = BUF_INIT;
  if (kinds_new(kinds_list, &c->kinds, &kerr)) {
    fprintf(stderr, "rudder controller: %s\n", kerr.data ? kerr.data : "out of memory");
    buf_free(&kerr);
    free(c);
    return 2;
  }
  char *err = NULL;
  int rc = kube_config_load(kubeconfig, context, &c->cfg, &err);
  if (rc) {
    fprintf(stderr, "rudder controller: %s\n", err ? err : uv_strerror(rc));
    free(err);
    kinds_stop(c->kinds, NULL, NULL); /* never started: freed at once */
    free(c);
    return 1;
  }
  uv_loop_init(&c->loop);
  rc = kube_client_new(&c->loop, &c->cfg, &c->client, &err);
  if (rc == 0) {
    kube_client_set_limits(c->client, &(kube_client_limits_t){.qps = qps, .burst = burst, .qps_auto = qps_auto});
    rc = discovery_new(c->client, &c->disc);
  }
  if (rc == 0 && !(c->events = events_new(c->client, "rudder"))) rc = UV_ENOMEM;
  if (rc) {
    fprintf(stderr, "rudder controller: %s\n", err ? err : uv_strerror(rc));
    free(err);
    return 1;
  }
  uv_signal_init(&c->loop, &c->sigterm);
  uv_signal_init(&c->loop, &c->sigint);
  c->sigterm.data = c->sigint.data = c;
  uv_signal_start(&c->sigterm, ctl__on_signal, SIGTERM);
  uv_signal_start(&c->sigint, ctl__on_signal, SIGINT);
  uv_signal_init(&c->loop, &c->sigusr1);
  c->sigusr1.data = c;
  uv_signal_start(&c->sigusr1, ctl__on_usr1, SIGUSR1);

  LOG_I("rudder controller starting", "version", RUDDER_VERSION, "commit", RUDDER_GIT_COMMIT,
        "server", c->cfg.server, "namespace", ns && *ns ? ns : "(all)", "label_selector", selector ? selector : "(all)");
  chart_cache_options_t cco = {.max_bytes = max_chart_cache};
  source_opts_t so = {.storage_path = storage_path, .max_disk_bytes = max_storage};
  if ((rc = fetch_new(&c->loop, NULL, &c->fetch)) || (rc = chart_cache_new(&cco, &c->charts)) ||
      ((so.cache = c->charts), (rc = source_new(&c->loop, c->fetch, &so, &c->source)))) {
    LOG_E("cannot set up chart sources", "error", uv_strerror(rc));
    c->exit_code = 1;
  }
  c->eopts = (engine_opts_t){.namespace = ns, .concurrency = concurrency, .max_waiting = max_waiting, .events = c->events, .limits = limits,
                             .source = c->source, .default_service_account = default_sa,
                             .door_ctx = {.chartrepo_namespace = chartrepo_ns, .allow_cross_namespace_refs = allow_xns},
                             .label_selector = selector};
  c->chartrepo_ns = chartrepo_ns;
  c->publish_charts = publish_charts;
  c->kubeconfig_exec = kc_exec;
  c->leader_elect = leader_elect;
  buf_t terr = BUF_INIT;
  bool no_telemetry = false;
  telemetry_opts_t to = {.metrics_addr = metrics_addr, .health_addr = health_addr, .ready = ctl__ready, .data = c,
                         .charts = c->charts, .source = c->source};
  if (telemetry_start(&c->loop, &to, &c->telemetry, &terr)) {
    LOG_E("cannot serve metrics or health probes", "error", terr.data ? terr.data : "out of memory");
    fprintf(stderr, "rudder controller: %s\n", terr.data ? terr.data : "out of memory");
    c->exit_code = 1;
    no_telemetry = true; /* nothing starts: the shutdown below releases what there is */
  }
  buf_free(&terr);
  if (no_telemetry) {
    ctl__shutdown(c);
  } else if (leader_elect) {
    c->leading = metrics_get(&ctl__f_leader, le_id);
    metrics_set(c->leading, 0);
    leader_opts_t lo = {.namespace = le_ns && *le_ns ? le_ns : c->cfg.namespace, .name = le_id,
                        .lease_ms = (uint64_t)le_lease, .renew_ms = (uint64_t)le_renew, .retry_ms = (uint64_t)le_retry};
    LOG_I("leader election", "lease", le_id, "namespace", lo.namespace);
    rc = leader_start(&c->loop, c->client, &lo, ctl__on_started_leading, ctl__on_stopped_leading, c, &c->leader);
    if (rc) {
      LOG_E("cannot start leader election", "error", uv_strerror(rc));
      c->exit_code = 1;
      ctl__shutdown(c);
    }
  } else {
    ctl__start_reconcilers(c);
  }
  uv_run(&c->loop, UV_RUN_DEFAULT);
  int close_rc = uv_loop_close(&c->loop);
  if (close_rc) LOG_E("loop did not close cleanly", "error", uv_strerror(close_rc));
  int c_exit = c->exit_code;
  kube_config_free(&c->cfg);
  free(c);
  LOG_I("rudder controller stopped");
  return c_exit || close_rc ? 1 : 0;
}
