/* Leader election against an in-process fake API server that stops answering: a clean stop tries
 * to release the lease and gives up after the release bound (release_ms) instead of waiting for
 * the client's request timeout; and closing the client during the release ends it at once. No
 * wall-clock thresholds: the client's timeouts are 60 s and the test checks that the stop finished
 * while a 60 s guard timer was still pending. */
#include "t.h"
#include "test_watch_server.h"
#include "loop/leader.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uv_loop_t loop;
static tsrv_t srv;
static int silent;   /* the server takes requests and never answers */
static buf_t log_;   /* "METHOD;" per request */

static void api(tconn_t *c, const char *method, const char *url, const char *headers, const char *body, size_t len) {
  buf_printf(&log_, "%s;", method);
  if (silent) return;
  if (!strcmp(method, "GET")) {
    tsrv_respond(c, 404, "Not Found", "application/json", "{\"kind\":\"Status\",\"reason\":\"NotFound\",\"code\":404}");
    return;
  }
  /* POST or PUT: the lease as written, with a resourceVersion. */
  cJSON *j = cJSON_ParseWithLength(body, len);
  cJSON *md = cJSON_GetObjectItem(j, "metadata");
  cJSON_DeleteItemFromObject(md, "resourceVersion");
  cJSON_AddStringToObject(md, "resourceVersion", "7");
  char *out = cJSON_PrintUnformatted(j);
  tsrv_respond(c, !strcmp(method, "POST") ? 201 : 200, "OK", "application/json", out);
  free(out);
  cJSON_Delete(j);
}

static int started, stopped_leading, stopped;
static void on_started(leader_t *l, void *d) { started++; }
static void on_stopped(leader_t *l, void *d) { stopped_leading++; }
static void stop_cb(void *d) { (*(int *)d)++; }
static int guard_fired;
static void guard_cb(uv_timer_t *t) { guard_fired = 1; }

static kube_client_t *new_client(void) {
  char url[64], *err = NULL;
  snprintf(url, sizeof url, "http://127.0.0.1:%d", srv.port);
  kube_config_t cfg = {0};
  CHECK_EQ_INT(kube_config_set_server(&cfg, url, &err), 0);
  kube_client_t *c = NULL;
  CHECK_EQ_INT(kube_client_new(&loop, &cfg, &c, &err), 0);
  kube_config_free(&cfg);
  free(err);
  kube_client_limits_t l = {.default_timeout_ms = 60000};
  kube_client_set_limits(c, &l);
  return c;
}

/* Campaigns until leading, then makes the server silent and stops; close_client also closes the
 * client right after leader_stop. Returns the loop time the stop took. */
static uint64_t lead_then_stop(int close_client) {
  kube_client_t *c = new_client();
  leader_t *l;
  started = stopped_leading = stopped = guard_fired = 0;
  silent = 0;
  buf_reset(&log_);
  leader_opts_t o = {.namespace = "ns", .name = "rudder", .identity = "me", .lease_ms = 60000, .renew_ms = 50000,
                     .retry_ms = 40000};
  CHECK_EQ_INT(leader_start(&loop, c, &o, on_started, on_stopped, NULL, &l), 0);
  uv_timer_t guard;
  uv_timer_init(&loop, &guard);
  uv_timer_start(&guard, guard_cb, 60000, 0);
  while (!started && !guard_fired) uv_run(&loop, UV_RUN_ONCE);
  CHECK_EQ_INT(started, 1);
  CHECK_EQ_STR(log_.data, "GET;POST;");
  silent = 1;
  uint64_t t0 = uv_now(&loop);
  int closed = 0;
  leader_stop(l, stop_cb, &stopped);
  if (close_client) kube_client_close(c, stop_cb, &closed);
  while (!stopped && !guard_fired) uv_run(&loop, UV_RUN_ONCE);
  uint64_t took = uv_now(&loop) - t0;
  CHECK_EQ_INT(stopped, 1);
  CHECK_EQ_INT(stopped_leading, 1);
  CHECK(!guard_fired && uv_is_active((uv_handle_t *)&guard));
  if (!close_client) {
    CHECK_EQ_STR(log_.data, "GET;POST;PUT;"); /* the release was sent, and not answered */
    kube_client_close(c, stop_cb, &closed);
  }
  while (!closed && !guard_fired) uv_run(&loop, UV_RUN_ONCE);
  CHECK_EQ_INT(closed, 1);
  CHECK(!guard_fired);
  uv_close((uv_handle_t *)&guard, NULL);
  uv_run(&loop, UV_RUN_NOWAIT);
  return took;
}

int main(void) {
  uv_loop_init(&loop);
  if (tsrv_start(&srv, &loop, api)) return 2;
  /* The release gives up after its bound (2 s by default; timers never fire early). */
  uint64_t took = lead_then_stop(0);
  CHECK(took >= 1990);
  /* Closing the client during the release ends it at once. */
  lead_then_stop(1);
  tsrv_stop(&srv);
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(uv_loop_close(&loop), 0);
  buf_free(&log_);
  return t_done();
}
