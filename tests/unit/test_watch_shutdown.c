/* Shutdown with the API server unreachable: kube_client_close and informer_stop complete at once
 * while requests wait to connect to an address that never answers (a listening socket that never
 * accepts: one connection sits in its queue unanswered, the next ones' SYNs are dropped), with a
 * watch waiting for its headers, token-bucket waits, a retry waiting out a Retry-After, and an
 * informer's backoff pending. Nothing is measured by the clock: every request and retry is given
 * 60 s, and the test checks that everything was closed while a 60 s guard timer was still pending. */
#include "t.h"
#include "test_watch_server.h"
#include "watch/informer.h"
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static uv_loop_t loop;
static tsrv_t srv;

typedef struct rec_s {
  int calls, err;
} rec_t;

static void rec_cb(const kube_response_t *res, void *data) {
  rec_t *r = data;
  r->calls++;
  r->err = res->err;
}

static int w_ends, w_err;
static void w_event(kube_watch_t *w, const char *type, cJSON *obj, void *data) {}
static void w_end(kube_watch_t *w, const kube_response_t *res, void *data) {
  w_ends++;
  w_err = res->err;
}

static int guard_fired;
static void guard_cb(uv_timer_t *t) { guard_fired = 1; }
static void step_cb(uv_timer_t *t) {}

static void run_for(uint64_t ms) {
  uv_timer_t t;
  uv_timer_init(&loop, &t);
  uv_timer_start(&t, step_cb, ms, 0);
  while (uv_is_active((uv_handle_t *)&t)) uv_run(&loop, UV_RUN_ONCE);
  uv_close((uv_handle_t *)&t, NULL);
  uv_run(&loop, UV_RUN_NOWAIT);
}

/* The fake server answers every request 503 with Retry-After: 30, except the informer's list: 404. */
static void api(tconn_t *c, const char *method, const char *url, const char *headers, const char *body, size_t len) {
  if (strstr(url, "/informer")) {
    tsrv_respond(c, 404, "Not Found", "application/json", "{\"kind\":\"Status\",\"message\":\"nothing here\"}");
    return;
  }
  buf_t b = BUF_INIT;
  const char *msg = "{\"kind\":\"Status\",\"message\":\"busy\"}";
  buf_printf(&b, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 30\r\n"
             "Content-Length: %zu\r\n\r\n%s", strlen(msg), msg);
  tsrv_write(c, b.data, b.len);
  buf_free(&b);
}

static void closed_cb(void *d) { (*(int *)d)++; }
static void on_synced(informer_t *i, void *d) {}

static kube_client_t *client_for(int port, const kube_client_limits_t *l) {
  char url[64], *err = NULL;
  snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
  kube_config_t cfg = {0};
  CHECK_EQ_INT(kube_config_set_server(&cfg, url, &err), 0);
  kube_client_t *c = NULL;
  CHECK_EQ_INT(kube_client_new(&loop, &cfg, &c, &err), 0);
  kube_config_free(&cfg);
  free(err);
  kube_client_set_limits(c, l);
  return c;
}

int main(void) {
  uv_loop_init(&loop);
  if (tsrv_start(&srv, &loop, api)) return 2;
  /* The unreachable server: it listens but never accepts. */
  int hole = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t alen = sizeof a;
  if (hole < 0 || bind(hole, (struct sockaddr *)&a, sizeof a) || listen(hole, 0) ||
      getsockname(hole, (struct sockaddr *)&a, &alen))
    return 2;

  kube_client_limits_t l = {.default_timeout_ms = 60000, .watch_connect_timeout_ms = 60000, .qps = 1, .burst = 2,
                            .retry_max_ms = 60000};
  kube_client_t *dead = client_for(ntohs(a.sin_port), &l);
  kube_client_t *busy = client_for(srv.port, &l);

  uv_timer_t guard;
  uv_timer_init(&loop, &guard);
  uv_timer_start(&guard, guard_cb, 60000, 0);

  /* Against the unreachable server: a watch (it takes the queue's one place and waits for headers),
   * a request whose connect hangs, and requests waiting for tokens; an informer whose list waits. */
  rec_t r[4] = {{0}};
  CHECK(kube_watch_start(dead, "/watch?watch=1", w_event, w_end, NULL) != NULL);
  for (int i = 0; i < 4; i++) CHECK(kube_get(dead, "/api/v1/namespaces", rec_cb, &r[i]) != NULL);
  informer_t *inf_dead, *inf_busy;
  informer_opts_t io = {.path = "/api/v1/configmaps", .backoff_base_ms = 60000, .backoff_max_ms = 60000};
  informer_handlers_t h = {.on_synced = on_synced};
  CHECK_EQ_INT(informer_start(dead, &io, &h, &inf_dead), 0);
  /* Against the busy server: a request waiting out Retry-After, and an informer in backoff. */
  rec_t rb = {0};
  CHECK(kube_get(busy, "/api/v1/pods", rec_cb, &rb) != NULL);
  io.path = "/informer";
  CHECK_EQ_INT(informer_start(busy, &io, &h, &inf_busy), 0);
  run_for(300);
  kube_client_stats_t sd = kube_client_get_stats(dead), sb = kube_client_get_stats(busy);
  CHECK(sd.throttled >= 1);     /* some requests wait for tokens */
  CHECK_EQ_INT(sb.retries, 1);  /* the 503 is waiting to be retried */
  CHECK(srv.requests >= 2);     /* and the informer's list got its 404 */
  for (int i = 0; i < 4; i++) CHECK_EQ_INT(r[i].calls, 0);
  CHECK_EQ_INT(rb.calls, 0);
  CHECK_EQ_INT(w_ends, 0);

  /* Stop everything, as a SIGTERM does. */
  int stopped = 0, closed = 0;
  informer_stop(inf_dead, closed_cb, &stopped);
  informer_stop(inf_busy, closed_cb, &stopped);
  kube_client_close(dead, closed_cb, &closed);
  kube_client_close(busy, closed_cb, &closed);
  while ((stopped < 2 || closed < 2) && !guard_fired) uv_run(&loop, UV_RUN_ONCE);
  CHECK_EQ_INT(stopped, 2);
  CHECK_EQ_INT(closed, 2);
  CHECK(!guard_fired && uv_is_active((uv_handle_t *)&guard)); /* done before any 60 s timer could fire */
  for (int i = 0; i < 4; i++) {
    CHECK_EQ_INT(r[i].calls, 1);
    CHECK_EQ_INT(r[i].err, UV_ECANCELED);
  }
  CHECK_EQ_INT(rb.calls, 1);
  CHECK_EQ_INT(rb.err, UV_ECANCELED);
  CHECK_EQ_INT(w_ends, 1);
  CHECK_EQ_INT(w_err, UV_ECANCELED);

  /* Nothing else is left on the loop: with the guard and the servers closed it ends. */
  uv_close((uv_handle_t *)&guard, NULL);
  tsrv_stop(&srv);
  close(hole);
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(uv_loop_close(&loop), 0);
  return t_done();
}
