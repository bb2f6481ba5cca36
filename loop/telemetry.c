#include "loop/telemetry.h"
#include "base/log.h"
#include "base/metrics.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

struct telemetry_s {
  httpd_t *srv[2];
  int open;                      /* servers not yet closed */
  httpd_route_t routes[2][4];    /* each server's table */
  telemetry_opts_t o;
  metrics_collector_t collector; /* process and chart-source metrics, read when scraped */
  void (*close_cb)(void *);
  void *close_data;
};

/* ---- process metrics, named as the Prometheus client libraries name them ---- */

static metrics_family_t tm__cpu = {.name = "process_cpu_seconds_total",
                                   .help = "Total user and system CPU time spent in seconds.", .type = METRICS_COUNTER};
static metrics_family_t tm__rss = {.name = "process_resident_memory_bytes", .help = "Resident memory size in bytes.",
                                   .type = METRICS_GAUGE};
static metrics_family_t tm__vsize = {.name = "process_virtual_memory_bytes", .help = "Virtual memory size in bytes.",
                                     .type = METRICS_GAUGE};
static metrics_family_t tm__vmax = {.name = "process_virtual_memory_max_bytes",
                                    .help = "Maximum amount of virtual memory available in bytes.", .type = METRICS_GAUGE};
static metrics_family_t tm__fds = {.name = "process_open_fds", .help = "Number of open file descriptors.",
                                   .type = METRICS_GAUGE};
static metrics_family_t tm__maxfds = {.name = "process_max_fds", .help = "Maximum number of open file descriptors.",
                                      .type = METRICS_GAUGE};
static metrics_family_t tm__start = {.name = "process_start_time_seconds",
                                     .help = "Start time of the process since unix epoch in seconds.", .type = METRICS_GAUGE};

/* ---- the chart sources' counters (helm/source), mirrored when scraped ---- */

static metrics_family_t tm__cache_hits = {.name = "rudder_chart_cache_hits_total",
                                          .help = "Charts found loaded in the chart cache", .type = METRICS_COUNTER};
static metrics_family_t tm__cache_misses = {.name = "rudder_chart_cache_misses_total",
                                            .help = "Charts not in the chart cache, loaded from an archive",
                                            .type = METRICS_COUNTER};
static metrics_family_t tm__cache_bytes = {.name = "rudder_chart_cache_bytes",
                                           .help = "Bytes of the charts held in the chart cache", .type = METRICS_GAUGE};
static metrics_family_t tm__cache_entries = {.name = "rudder_chart_cache_charts", .help = "Charts held in the chart cache",
                                             .type = METRICS_GAUGE};
static metrics_family_t tm__downloads = {.name = "rudder_chart_downloads_total",
                                         .help = "Chart archives downloaded from repositories and registries",
                                         .type = METRICS_COUNTER};
static metrics_family_t tm__disk_hits = {.name = "rudder_chart_archive_disk_hits_total",
                                         .help = "Chart archives found in the storage directory instead of downloaded",
                                         .type = METRICS_COUNTER};
static metrics_family_t tm__index_fetches = {.name = "rudder_repository_index_fetches_total",
                                             .help = "Repository index fetches (not-modified answers included)",
                                             .type = METRICS_COUNTER};

/* /proc/self/stat: utime, stime (clock ticks), starttime (ticks after boot), vsize, rss (pages). */
static void tm__proc_stat(void) {
  FILE *f = fopen("/proc/self/stat", "r");
  if (!f) return;
  char line[1024];
  size_t n = fread(line, 1, sizeof line - 1, f);
  fclose(f);
  line[n] = 0;
  const char *p = strrchr(line, ')'); /* the command name may hold spaces and parentheses */
  unsigned long long utime, stime, start, vsize;
  long long rss;
  if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d %llu %llu %lld",
                   &utime, &stime, &start, &vsize, &rss) != 5)
    return;
  double tick = (double)sysconf(_SC_CLK_TCK);
  metrics_set(metrics_get(&tm__cpu), (double)(utime + stime) / tick);
  metrics_set(metrics_get(&tm__vsize), (double)vsize);
  metrics_set(metrics_get(&tm__rss), (double)rss * (double)sysconf(_SC_PAGESIZE));
  /* The start time: the boot time (btime in /proc/stat) plus the ticks after it. */
  FILE *s = fopen("/proc/stat", "r");
  if (!s) return;
  char l[256];
  unsigned long long btime = 0;
  while (fgets(l, sizeof l, s))
    if (!strncmp(l, "btime ", 6)) btime = strtoull(l + 6, NULL, 10);
  fclose(s);
  if (btime) metrics_set(metrics_get(&tm__start), (double)btime + (double)start / tick);
}

static void tm__collect(void *data) {
  telemetry_t *t = data;
  tm__proc_stat();
  struct rlimit rl;
  if (!getrlimit(RLIMIT_NOFILE, &rl)) metrics_set(metrics_get(&tm__maxfds), (double)rl.rlim_cur);
  if (!getrlimit(RLIMIT_AS, &rl)) metrics_set(metrics_get(&tm__vmax), (double)rl.rlim_cur);
  DIR *d = opendir("/proc/self/fd");
  if (d) {
    long n = 0;
    while (readdir(d)) n++;
    closedir(d);
    metrics_set(metrics_get(&tm__fds), (double)(n - 3)); /* ".", ".." and the directory's own */
  }
  if (t->o.charts) {
    chart_cache_stats_t cs = chart_cache_stats(t->o.charts);
    metrics_set(metrics_get(&tm__cache_hits), (double)cs.hits);
    metrics_set(metrics_get(&tm__cache_misses), (double)cs.misses);
    metrics_set(metrics_get(&tm__cache_bytes), (double)cs.bytes);
    metrics_set(metrics_get(&tm__cache_entries), (double)cs.entries);
  }
  if (t->o.source) {
    source_stats_t ss = source_get_stats(t->o.source);
    metrics_set(metrics_get(&tm__downloads), (double)ss.downloads);
    metrics_set(metrics_get(&tm__disk_hits), (double)ss.disk_hits);
    metrics_set(metrics_get(&tm__index_fetches), (double)(ss.index_fetches + ss.index_not_modified));
  }
}

/* ---- the endpoints ---- */

static void tm__metrics(void *data, httpd_response_t *res) {
  res->content_type = "text/plain; version=0.0.4; charset=utf-8";
  if (metrics_write(&res->body)) {
    buf_reset(&res->body);
    buf_puts(&res->body, "out of memory\n");
    res->status = 500;
  }
}

static void tm__healthz(void *data, httpd_response_t *res) { buf_puts(&res->body, "ok\n"); }

static void tm__readyz(void *data, httpd_response_t *res) {
  telemetry_t *t = data;
  buf_t why = BUF_INIT;
  if (!t->o.ready || t->o.ready(t->o.data, &why)) {
    buf_puts(&res->body, "ok\n");
  } else {
    res->status = 503;
    buf_printf(&res->body, "not ready: %s\n", why.data ? why.data : "");
  }
  buf_free(&why);
}

static int tm__listen(telemetry_t *t, uv_loop_t *loop, int i, const char *flag, const char *addr, buf_t *err) {
  struct sockaddr_storage ss;
  char e[256];
  int rc = httpd_parse_addr(addr, &ss, e, sizeof e);
  if (rc) {
    buf_printf(err, "%s: %s", flag, e);
    return rc;
  }
  if ((rc = httpd_start(loop, (struct sockaddr *)&ss, t->routes[i], &t->o.limits, &t->srv[i]))) {
    buf_printf(err, "%s %s: cannot listen: %s", flag, addr, uv_strerror(rc));
    return rc;
  }
  t->open++;
  char a[80] = "";
  httpd_address(t->srv[i], a, sizeof a);
  buf_t p = BUF_INIT;
  for (int r = 0; t->routes[i][r].path; r++) buf_printf(&p, "%s%s", r ? " " : "", t->routes[i][r].path);
  LOG_I("serving HTTP", "flag", flag, "address", a, "paths", p.data ? p.data : "");
  buf_free(&p);
  return 0;
}

static void tm__closed(void *data) {
  telemetry_t *t = data;
  if (--t->open) return;
  void (*cb)(void *) = t->close_cb;
  void *cd = t->close_data;
  free(t);
  if (cb) cb(cd);
}

int telemetry_start(uv_loop_t *loop, const telemetry_opts_t *o, telemetry_t **out, buf_t *err) {
  *out = NULL;
  int want_m = o->metrics_addr && strcmp(o->metrics_addr, "0");
  int want_h = o->health_addr && strcmp(o->health_addr, "0");
  if (!want_m && !want_h) return 0;
  telemetry_t *t = calloc(1, sizeof *t);
  if (!t) {
    buf_puts(err, "out of memory");
    return UV_ENOMEM;
  }
  t->o = *o;
  /* One server for both when they name the same address (port 0 asks for a free port each). */
  size_t ml = want_m ? strlen(o->metrics_addr) : 0;
  int shared = want_m && want_h && !strcmp(o->metrics_addr, o->health_addr) &&
               !(ml >= 2 && !strcmp(o->metrics_addr + ml - 2, ":0"));
  /* Server 0 serves /metrics when wanted; the probes go with it when the addresses are the same. */
  int hi = want_m && !shared ? 1 : 0, n0 = 0;
  if (want_m) t->routes[0][n0++] = (httpd_route_t){"/metrics", tm__metrics, t};
  if (want_h) {
    int n = hi ? 0 : n0;
    t->routes[hi][n++] = (httpd_route_t){"/healthz", tm__healthz, t};
    t->routes[hi][n++] = (httpd_route_t){"/readyz", tm__readyz, t};
  }
  int rc = 0;
  if (want_m) rc = tm__listen(t, loop, 0, shared ? "--metrics-addr and --health-addr" : "--metrics-addr", o->metrics_addr, err);
  if (!rc && want_h && !shared) rc = tm__listen(t, loop, hi, "--health-addr", o->health_addr, err);
  if (rc) {
    telemetry_close(t, NULL, NULL);
    return rc;
  }
  t->collector = (metrics_collector_t){.collect = tm__collect, .data = t};
  metrics_collector_add(&t->collector);
  *out = t;
  return 0;
}

void telemetry_close(telemetry_t *t, void (*cb)(void *data), void *data) {
  if (!t) {
    if (cb) cb(data);
    return;
  }
  metrics_collector_remove(&t->collector);
  t->close_cb = cb;
  t->close_data = data;
  if (!t->open) {
    free(t);
    if (cb) cb(data);
    return;
  }
  int n = t->open;
  for (int i = 0; i < 2 && n; i++)
    if (t->srv[i]) {
      httpd_t *s = t->srv[i];
      t->srv[i] = NULL;
      n--;
      httpd_close(s, tm__closed, t);
    }
}
