/* 1,000 concurrent watch streams over TLS in one loop, against the real local API server
 * ($KUBECONFIG, e.g. from tests/cluster/up): memory per stream.
 *
 * Each stream watches ConfigMaps in one namespace holding one ConfigMap, so each gets one
 * ADDED event (the ConfigMap is created once they are asked for, and they watch from the list's
 * resourceVersion); then the ConfigMap is modified once so that every
 * stream carries a MODIFIED event as well. Memory is measured as the process's RSS and as
 * glibc's heap in use (mallinfo2: the client's allocations, TLS state included), before the
 * streams and once all are streaming, divided by the number of streams.
 *
 * Usage: watch_streams [streams]   (default 1000). Prints `name value unit` lines. */
#include "watch/client.h"
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <mbedtls/ssl.h>

static uv_loop_t loop;
static int n_streams, added, modified, ended, timed_out;

typedef struct res_s { int done, status; char *errmsg; char rv[32]; } res_t;

static void res_cb(const kube_response_t *r, void *d) {
  res_t *x = d;
  x->done = 1;
  x->status = r->status;
  if (r->errmsg) x->errmsg = strdup(r->errmsg);
  /* Keep the collection's resourceVersion from a list, to watch from it. */
  cJSON *j = r->body && r->status == 200 ? cJSON_Parse(r->body) : NULL;
  const cJSON *rv = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "metadata"), "resourceVersion");
  if (cJSON_IsString(rv)) snprintf(x->rv, sizeof x->rv, "%s", rv->valuestring);
  cJSON_Delete(j);
}

static void deadline_cb(uv_timer_t *t) { timed_out = 1; }

#define RUN_UNTIL(cond, ms)                                                           \
  do {                                                                                \
    uv_timer_t _t;                                                                    \
    uv_timer_init(&loop, &_t);                                                        \
    timed_out = 0;                                                                    \
    uv_timer_start(&_t, deadline_cb, (ms), 0);                                        \
    while (!(cond) && !timed_out) uv_run(&loop, UV_RUN_ONCE);                         \
    uv_close((uv_handle_t *)&_t, NULL);                                               \
    uv_run(&loop, UV_RUN_NOWAIT);                                                     \
  } while (0)

static char last_rv[32];

static int req(kube_client_t *c, const char *method, const char *path, const char *body) {
  res_t r = {0};
  kube_req_opts_t o = {.method = method, .path = path, .body = body, .body_len = body ? strlen(body) : 0,
                       .content_type = method && !strcmp(method, "PATCH") ? "application/merge-patch+json" : NULL};
  if (!kube_request(c, &o, res_cb, &r)) return -1;
  RUN_UNTIL(r.done, 60000);
  if (r.status >= 400 && r.status != 409 && r.status != 404)
    fprintf(stderr, "%s %s: %s\n", method, path, r.errmsg ? r.errmsg : "?");
  free(r.errmsg);
  memcpy(last_rv, r.rv, sizeof last_rv);
  return r.status;
}

static void on_event(kube_watch_t *w, const char *type, cJSON *obj, void *data) {
  if (!strcmp(type, "ADDED")) added++;
  else if (!strcmp(type, "MODIFIED")) modified++;
}

static void on_end(kube_watch_t *w, const kube_response_t *res, void *data) {
  ended++;
  if (res->err != UV_ECANCELED && res->errmsg) fprintf(stderr, "watch ended: %s\n", res->errmsg);
}

static long rss_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "VmRSS:", 6)) v = strtol(line + 6, NULL, 10);
  if (f) fclose(f);
  return v;
}

static size_t heap_bytes(void) {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

static void closed_cb(void *d) { (*(int *)d)++; }

int main(int argc, char **argv) {
  n_streams = argc > 1 ? atoi(argv[1]) : 1000;
  if (!getenv("KUBECONFIG")) {
    fprintf(stderr, "KUBECONFIG is unset: run against the local control plane (eval \"$(tests/cluster/up)\")\n");
    return 2;
  }
  uv_loop_init(&loop);
  kube_config_t cfg;
  char *err = NULL;
  if (kube_config_load(NULL, NULL, &cfg, &err)) { fprintf(stderr, "kubeconfig: %s\n", err); return 2; }
  kube_client_t *c;
  if (kube_client_new(&loop, &cfg, &c, &err)) { fprintf(stderr, "client: %s\n", err); return 2; }
  kube_config_free(&cfg);
  kube_client_set_limits(c, &(kube_client_limits_t){.qps = -1, .watch_connect_timeout_ms = 120000});

  char ns[64], coll[128], path[256];
  snprintf(ns, sizeof ns, "rudder-bench-watch-%d", (int)getpid());
  snprintf(coll, sizeof coll, "/api/v1/namespaces/%s/configmaps", ns);
  char body[256];
  snprintf(body, sizeof body, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}", ns);
  req(c, "POST", "/api/v1/namespaces", body);
  /* One request first, so that the client's own fixed costs are in the baseline. */
  req(c, "GET", coll, NULL);
  malloc_trim(0);
  long rss0 = rss_kib();
  size_t heap0 = heap_bytes();

  kube_watch_t **ws = calloc((size_t)n_streams, sizeof *ws);
  /* Watch from the list's resourceVersion, as informers do. A watch without one ("start at most
   * recent") may be told by the server that its initial state ends at a revision whose change it
   * never delivers: seen with kube-apiserver v1.34 (the initial-events-end bookmark carried the
   * revision of the later PATCH, and exactly those streams missed the MODIFIED event). */
  snprintf(path, sizeof path, "%s?watch=1&allowWatchBookmarks=true&timeoutSeconds=600&resourceVersion=%s", coll, last_rv);
  uint64_t t0 = uv_hrtime();
  for (int i = 0; i < n_streams; i++) ws[i] = kube_watch_start(c, path, on_event, on_end, NULL);
  /* Created once the watches are asked for: watching from the list's revision, every stream
   * delivers its ADDED however late it is established. */
  req(c, "POST", coll, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\"},"
                       "\"data\":{\"v\":\"0\"}}");
  RUN_UNTIL(added + ended >= n_streams, 180000);
  double open_s = (double)(uv_hrtime() - t0) / 1e9;
  if (added < n_streams) {
    fprintf(stderr, "only %d of %d streams got their first event (%d ended)\n", added, n_streams, ended);
    return 1;
  }
  long rss1 = rss_kib();
  size_t heap1 = heap_bytes();

  snprintf(path, sizeof path, "%s/cm", coll);
  req(c, "PATCH", path, "{\"data\":{\"v\":\"1\"}}");
  uint64_t t1 = uv_hrtime();
  RUN_UNTIL(modified + ended >= n_streams, 60000);
  double fanout_s = (double)(uv_hrtime() - t1) / 1e9;
  long rss2 = rss_kib();
  size_t heap2 = heap_bytes();

  printf("watch_streams %d streams\n", n_streams);
  printf("watch_streams_open_time %.2f s\n", open_s);
  printf("watch_streams_events_modified %d events\n", modified);
  printf("watch_streams_modified_fanout_time %.2f s\n", fanout_s);
  printf("watch_streams_ended_early %d streams\n", ended);
  printf("watch_stream_rss_per_stream %.1f KiB\n", (double)(rss1 - rss0) / n_streams);
  printf("watch_stream_heap_per_stream %.1f KiB\n", (double)(heap1 - heap0) / 1024.0 / n_streams);
  printf("watch_stream_rss_per_stream_after_event %.1f KiB\n", (double)(rss2 - rss0) / n_streams);
  printf("watch_stream_heap_per_stream_after_event %.1f KiB\n", (double)(heap2 - heap0) / 1024.0 / n_streams);
  printf("mbedtls_ssl_in_buffer %d bytes\n", (int)MBEDTLS_SSL_IN_CONTENT_LEN);
  printf("mbedtls_ssl_out_buffer %d bytes\n", (int)MBEDTLS_SSL_OUT_CONTENT_LEN);
  printf("mbedtls_ssl_context_struct %zu bytes\n", sizeof(mbedtls_ssl_context));

  for (int i = 0; i < n_streams; i++)
    if (ws[i]) kube_watch_stop(ws[i]);
  free(ws);
  snprintf(path, sizeof path, "/api/v1/namespaces/%s", ns);
  req(c, "DELETE", path, NULL);
  int closed = 0;
  kube_client_close(c, closed_cb, &closed);
  RUN_UNTIL(closed, 10000);
  uv_run(&loop, UV_RUN_DEFAULT);
  return uv_loop_close(&loop) == 0 && closed ? 0 : 1;
}
