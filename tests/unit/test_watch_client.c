/* The API client against an in-process loopback HTTP/1.1 server: requests, keep-alive reuse, the
 * pool limits, chunked bodies, timeouts, cancellation, broken and oversized responses, API errors,
 * helpers, watch streams, and closing with work in flight. Every phase ends with a clean loop. */
#include "t.h"
#include "test_watch_server.h"
#include "watch/client.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uv_loop_t loop;
static tsrv_t srv;

typedef struct rec_s {
  int calls, err, status;
  char *errmsg, *body, *reason, *ctype;
  uint64_t at;
} rec_t;

static void rec_free(rec_t *r) {
  free(r->errmsg); free(r->body); free(r->reason); free(r->ctype);
  memset(r, 0, sizeof *r);
}

static void rec_cb(const kube_response_t *res, void *data) {
  rec_t *r = data;
  free(r->errmsg); free(r->body); free(r->reason); free(r->ctype);
  r->calls++;
  r->err = res->err;
  r->status = res->status;
  r->errmsg = res->errmsg ? strdup(res->errmsg) : NULL;
  r->body = strndup(res->body, res->body_len);
  r->reason = strdup(res->reason);
  const char *ct = kube_response_header(res, "content-type");
  r->ctype = ct ? strdup(ct) : NULL;
  r->at = uv_now(&loop);
}

static int timed_out;
static void deadline_cb(uv_timer_t *t) { timed_out = 1; }

/* Runs the loop until *flag becomes nonzero (or 10 s pass). */
static void run_until(int *flag) {
  uv_timer_t t;
  uv_timer_init(&loop, &t);
  timed_out = 0;
  uv_timer_start(&t, deadline_cb, 10000, 0);
  while (!*flag && !timed_out) uv_run(&loop, UV_RUN_ONCE);
  if (timed_out) fprintf(stderr, "run_until: deadline passed\n");
  uv_close((uv_handle_t *)&t, NULL);
  uv_run(&loop, UV_RUN_NOWAIT);
}

/* Runs the loop for ms milliseconds. */
static void run_for(uint64_t ms) {
  uv_timer_t t;
  uv_timer_init(&loop, &t);
  uint64_t end = uv_now(&loop) + ms;
  while (uv_now(&loop) < end) {
    uv_timer_start(&t, deadline_cb, end - uv_now(&loop), 0);
    uv_run(&loop, UV_RUN_ONCE);
  }
  uv_close((uv_handle_t *)&t, NULL);
  uv_run(&loop, UV_RUN_NOWAIT);
}

/* ---- the server's script ---- */

static int close_now_hits;

static void big_chunks(tconn_t *c) {
  tsrv_puts(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
  static char chunk[65536 + 16];
  int n = snprintf(chunk, sizeof chunk, "10000\r\n");
  memset(chunk + n, 'z', 65536);
  memcpy(chunk + n + 65536, "\r\n", 2);
  for (int i = 0; i < 40; i++) tsrv_later(c, 1, chunk, (size_t)n + 65536 + 2);
}

static const char *watch_events =
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"10\"}}}\n"
    "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"11\"}}}\n"
    "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"12\"}}}\n"
    "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"13\"}}}\n";

static void handler(tconn_t *c, const char *method, const char *url, const char *headers, const char *body,
                    size_t body_len) {
  if (!strcmp(url, "/ok") || !strcmp(url, "/prefix/ok")) {
    tsrv_respond(c, 200, "OK", "application/json", "{\"kind\":\"Thing\",\"n\":1}");
  } else if (!strncmp(url, "/delay", 6)) {
    const char *r = "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\ndelayed";
    tsrv_later(c, 30, r, strlen(r));
  } else if (!strncmp(url, "/echo", 5) || !strncmp(url, "/prefix/echo", 12)) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "method", method);
    cJSON_AddStringToObject(o, "url", url);
    cJSON_AddStringToObject(o, "headers", headers);
    char *b = strndup(body, body_len);
    cJSON_AddStringToObject(o, "body", b);
    free(b);
    char *j = cJSON_PrintUnformatted(o);
    tsrv_respond(c, 200, "OK", "application/json", j);
    free(j);
    cJSON_Delete(o);
  } else if (!strcmp(url, "/chunked")) {
    tsrv_puts(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n");
    tsrv_later(c, 10, "1\r\n \r\n", 6);
    tsrv_later(c, 10, "5\r\nworld\r\n0\r\n\r\n", 15);
  } else if (!strcmp(url, "/slow")) {
    /* never answers */
  } else if (!strcmp(url, "/close-mid")) {
    tsrv_puts(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789");
    tsrv_later(c, 10, NULL, 0);
  } else if (!strcmp(url, "/close-now")) {
    close_now_hits++;
    tsrv_close(c);
  } else if (!strcmp(url, "/big")) {
    tsrv_puts(c, "HTTP/1.1 200 OK\r\nContent-Length: 2097152\r\n\r\nxxxx");
  } else if (!strcmp(url, "/big-chunked")) {
    big_chunks(c);
  } else if (!strcmp(url, "/big-chunked-end")) {
    big_chunks(c);
    tsrv_later(c, 1, "0\r\n\r\n", 5);
  } else if (!strcmp(url, "/status/422")) {
    tsrv_respond(c, 422, "Unprocessable Entity", "application/json",
                 "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"HelmRelease.rudder.dev "
                 "\\\"x\\\" is invalid: spec.chart: Required value\",\"reason\":\"Invalid\",\"code\":422}");
  } else if (!strcmp(url, "/html-502")) {
    tsrv_respond(c, 502, "Bad Gateway", "text/html", "<html>\n<body>upstream down</body></html>");
  } else if (!strcmp(url, "/close-after")) {
    tsrv_puts(c, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok");
    tsrv_later(c, 5, NULL, 0);
  } else if (!strcmp(url, "/drop-idle")) {
    tsrv_respond(c, 200, "OK", "text/plain", "ok");
    tsrv_later(c, 20, NULL, 0);
  } else if (!strncmp(url, "/watch?", 7)) {
    tsrv_puts(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
    /* The events go out in awkward pieces: chunk boundaries and TCP writes split lines anywhere. */
    size_t n = strlen(watch_events), off = 0, piece = 37;
    while (off < n) {
      size_t k = n - off < piece ? n - off : piece;
      char hdr[16];
      int h = snprintf(hdr, sizeof hdr, "%zx\r\n", k);
      tsrv_later(c, 2, hdr, (size_t)h);
      tsrv_later(c, 1, watch_events + off, k);
      tsrv_later(c, 0, "\r\n", 2);
      off += k;
      piece = piece == 37 ? 5 : 37;
    }
    if (!strstr(url, "forever")) tsrv_later(c, 5, "0\r\n\r\n", 5);
  } else if (!strncmp(url, "/watch-410", 10)) {
    tsrv_respond(c, 410, "Gone", "application/json",
                 "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"too old resource version: 1 (50)\","
                 "\"reason\":\"Expired\",\"code\":410}");
  } else if (!strncmp(url, "/watch-bad", 10)) {
    const char *r = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n{oops\n\r\n";
    tsrv_puts(c, r);
  } else {
    tsrv_respond(c, 404, "Not Found", "text/plain", "no such path");
  }
}

static kube_client_t *new_client(const char *server) {
  kube_config_t cfg = {0};
  char *err = NULL;
  CHECK_EQ_INT(kube_config_set_server(&cfg, server, &err), 0);
  cfg.token = strdup("s3cret");
  kube_client_t *c = NULL;
  int r = kube_client_new(&loop, &cfg, &c, &err);
  CHECK_EQ_INT(r, 0);
  if (r) fprintf(stderr, "kube_client_new: %s\n", err);
  free(err);
  kube_config_free(&cfg);
  return c;
}

static char server_url[64];

static void closed_cb(void *d) { (*(int *)d)++; }

/* Closes the client, runs until it reports closed, and checks it did so once. */
static void close_client(kube_client_t *c) {
  int n = 0;
  kube_client_close(c, closed_cb, &n);
  run_until(&n);
  CHECK_EQ_INT(n, 1);
}

/* ---- phases ---- */

static void test_basic_and_keepalive(void) {
  kube_client_t *c = new_client(server_url);
  rec_t r = {0};
  int before = srv.accepted;
  kube_req_t *q = kube_get(c, "/ok", rec_cb, &r);
  CHECK(q != NULL);
  CHECK_EQ_INT(r.calls, 0); /* never called back from inside kube_request */
  run_until(&r.calls);
  CHECK_EQ_INT(r.err, 0);
  CHECK_EQ_INT(r.status, 200);
  CHECK(r.errmsg == NULL);
  CHECK_EQ_STR(r.body, "{\"kind\":\"Thing\",\"n\":1}");
  CHECK_EQ_STR(r.ctype, "application/json");
  CHECK(strstr(srv.last_headers.data, "Authorization: Bearer s3cret") != NULL);
  CHECK(strstr(srv.last_headers.data, "Host: 127.0.0.1:") != NULL);
  /* Five more sequential requests reuse the one keep-alive connection. */
  for (int i = 0; i < 5; i++) {
    rec_free(&r);
    kube_get(c, "/ok", rec_cb, &r);
    run_until(&r.calls);
    CHECK_EQ_INT(r.status, 200);
  }
  CHECK_EQ_INT(srv.accepted - before, 1);
  /* A chunked body arrives whole. */
  rec_free(&r);
  kube_get(c, "/chunked", rec_cb, &r);
  run_until(&r.calls);
  CHECK_EQ_INT(r.status, 200);
  CHECK_EQ_STR(r.body, "hello world");
  CHECK_EQ_INT(srv.accepted - before, 1);
  /* Connection: close is honoured: the next request needs a new connection. */
  rec_free(&r);
  kube_get(c, "/close-after", rec_cb, &r);
  run_until(&r.calls);
  CHECK_EQ_STR(r.body, "ok");
  rec_free(&r);
  kube_get(c, "/ok", rec_cb, &r);
  run_until(&r.calls);
  CHECK_EQ_INT(r.status, 200);
  CHECK_EQ_INT(srv.accepted - before, 2);
  /* The server dropping an idle connection is noticed; the next request still works. */
  rec_free(&r);
  kube_get(c, "/drop-idle", rec_cb, &r);
  run_until(&r.calls);
  run_for(60);
  rec_free(&r);
  kube_get(c, "/ok", rec_cb, &r);
  run_until(&r.calls);
  CHECK_EQ_INT(r.err, 0);
  CHECK_EQ_INT(r.status, 200);
  rec_free(&r);
  close_client(c);
}

static void test_pool_limits(void) {
  kube_client_t *c = new_client(server_url);
  kube_client_limits_t l = {.max_conns = 2, .max_idle = 1};
  kube_client_set_limits(c, &l);
  int before = srv.accepted, closed_before = srv.peer_closed;
  srv.max_open = srv.open_now;
  int base_open = srv.open_now;
  rec_t r[6] = {{0}};
  for (int i = 0; i < 6; i++) CHECK(kube_get(c, "/delay", rec_cb, &r[i]) != NULL);
  int all = 0;
  while (!all && !timed_out) {
    run_until(&r[5].calls);
    all = 1;
    for (int i = 0; i < 6; i++) all &= r[i].calls == 1;
  }
  for (int i = 0; i < 6; i++) {
    CHECK_EQ_INT(r[i].calls, 1);
    CHECK_EQ_STR(r[i].body, "delayed");
    rec_free(&r[i]);
  }
  CHECK_EQ_INT(srv.accepted - before, 2);       /* queued behind two connections */
  CHECK(srv.max_open - base_open <= 2);
  run_for(30);
  CHECK_EQ_INT(srv.peer_closed - closed_before, 1); /* only one idle connection is kept */
  close_client(c);
}

static void test_failures(void) {
  kube_client_t *c = new_client(server_url);
  kube_client_limits_t l = {.max_body = 1u << 20};
  kube_client_set_limits(c, &l);
  rec_t r = {0};

  /* Timeout, naming the phase. */
  kube_req_opts_t o = {.path = "/slow", .timeout_ms = 100};
  uint64_t t0 = uv_now(&loop);
  kube_request(c, &o, rec_cb, &r);
  run_until(&r.calls);
  CHECK_EQ_INT(r.err, UV_ETIMEDOUT);
  CHECK(r.errmsg && strstr(r.errmsg, "GET /slow") && strstr(r.errmsg, "timed out after 100 ms") &&
        strstr(r.errmsg, "waiting for the response"));
  CHECK(r.at - t0 >= 95 && r.at - t0 < 2000);
  rec_free(&r);

  /* Server closes mid-body. */
  kube_get(c, "/close-mid", rec_cb, &r);
  run_until(&r.calls);
  CHECK_EQ_INT(r.err, UV_EOF);
  CHECK(r.errmsg && strstr(r.errmsg, "in the middle of the response to GET /close-mid") &&
        strstr(r.errmsg, "after 10 body bytes"));
  rec_free(&r);

  /* Server closes before answering (a fresh connection: no replay). */
  kube_get(c, "/close-now", rec_cb, &r);
  run_until(&r.calls);
  CHECK(r.err < 0);
  CHECK(r.errmsg && strstr(r.errmsg, "before responding to GET /close-now"));
  rec_free(&r);

  /* A reused keep-alive connection that the server drops without answering: an idempotent request is
   * replayed once on a new connection (which here fails too), a POST is not replayed. */
  kube_get(c, "/ok", rec_cb, &r);
  run_until(&r.calls);
  rec_free(&r);
  close_now_hits = 0;
  kube_get(c, "/close-now", rec_cb, &r);
  run_until(&r.calls);
  CHECK_EQ_INT(close_now_hits, 2);
  CHECK(r.err < 0 && r.errmsg && strstr(r.errmsg, "before responding"));
  rec_free(&r);
  kube_get(c, "/ok", rec_cb, &r);
  run_until(&r.calls);
  rec_free(&r);
  close_now_hits = 0;
  kube_create(c, "/close-now", "{}", rec_cb, &r);
  run_until(&r.calls);
  CHECK_EQ_INT(close_now_hits, 1);
  CHECK(r.err < 0);
  rec_free(&r);

  /* Oversized bodies, by Content-Length and by chunks. */
  kube_get(c, "/big", rec_cb, &r);
  run_until(&r.calls);
  CHECK_EQ_INT(r.err, UV_E2BIG);
  CHECK(r.errmsg && strstr(r.errmsg, "larger than the limit of 1 MiB"));
  rec_free(&r);
  kube_get(c, "/big-chunked", rec_cb, &r);
  run_until(&r.calls);
  CHECK_EQ_INT(r.err, UV_E2BIG);
  CHECK(r.errmsg && strstr(r.errmsg, "GET /big-chunked") && strstr(r.errmsg, "1 MiB"));
  rec_free(&r);

  /* API errors carry the Status message and reason; other bodies are shown briefly. */
  kube_get(c, "/status/422", rec_cb, &r);
  run_until(&r.calls);
  CHECK_EQ_INT(r.err, 0);
  CHECK_EQ_INT(r.status, 422);
  CHECK_EQ_STR(r.errmsg, "HTTP 422 Unprocessable Entity: HelmRelease.rudder.dev \"x\" is invalid: spec.chart: Required value");
  CHECK_EQ_STR(r.reason, "Invalid");
  rec_free(&r);
  kube_get(c, "/html-502", rec_cb, &r);
  run_until(&r.calls);
  CHECK_EQ_INT(r.status, 502);
  CHECK_EQ_STR(r.errmsg, "HTTP 502 Bad Gateway: <html> <body>upstream down</body></html>");
  CHECK_EQ_STR(r.reason, "");
  rec_free(&r);

  /* Bad input fails through the callback, later. */
  kube_req_opts_t bad = {.path = "/ok\r\nX-Evil: 1"};
  CHECK(kube_request(c, &bad, rec_cb, &r) != NULL);
  CHECK_EQ_INT(r.calls, 0);
  run_until(&r.calls);
  CHECK_EQ_INT(r.err, UV_EINVAL);
  CHECK(r.errmsg && strstr(r.errmsg, "line breaks"));
  rec_free(&r);

  /* Cancellation: in flight, queued, and twice (the callback still runs once). */
  l = (kube_client_limits_t){.max_conns = 1};
  kube_client_set_limits(c, &l);
  rec_t a = {0}, b = {0};
  kube_req_t *qa = kube_get(c, "/slow", rec_cb, &a);
  kube_req_t *qb = kube_get(c, "/ok", rec_cb, &b);
  run_for(30);
  CHECK_EQ_INT(a.calls + b.calls, 0);
  kube_request_cancel(qb); /* queued behind the slow one */
  CHECK_EQ_INT(b.calls, 1);
  CHECK_EQ_INT(b.err, UV_ECANCELED);
  kube_request_cancel(qa);
  kube_request_cancel(qa);
  CHECK_EQ_INT(a.calls, 1);
  CHECK_EQ_INT(a.err, UV_ECANCELED);
  run_for(20);
  CHECK_EQ_INT(a.calls, 1);
  rec_free(&a);
  rec_free(&b);
  /* The pool slot of the cancelled request is free again. */
  kube_get(c, "/ok", rec_cb, &r);
  run_until(&r.calls);
  CHECK_EQ_INT(r.status, 200);
  rec_free(&r);
  close_client(c);

  /* Connection refused names the address. */
  uv_tcp_t probe;
  uv_tcp_init(&loop, &probe);
  struct sockaddr_in sa;
  uv_ip4_addr("127.0.0.1", 0, &sa);
  uv_tcp_bind(&probe, (struct sockaddr *)&sa, 0);
  struct sockaddr_storage ss;
  int len = sizeof ss;
  uv_tcp_getsockname(&probe, (struct sockaddr *)&ss, &len);
  int port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
  uv_close((uv_handle_t *)&probe, NULL); /* bound but never listening: connects are refused */
  run_for(5);
  char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
  c = new_client(url);
  kube_get(c, "/ok", rec_cb, &r);
  run_until(&r.calls);
  CHECK_EQ_INT(r.err, UV_ECONNREFUSED);
  char want[96];
  snprintf(want, sizeof want, "connect to 127.0.0.1:%d failed: connection refused", port);
  CHECK_EQ_STR(r.errmsg, want);
  rec_free(&r);
  close_client(c);
}

static void test_helpers(void) {
  char url[96];
  /* A base path from the server URL prefixes every request; the host is resolved by name. */
  snprintf(url, sizeof url, "http://localhost:%d/prefix/", srv.port);
  kube_client_t *c = new_client(url);
  rec_t r = {0};
  kube_apply(c, "/echo/apply", "{\"kind\":\"ConfigMap\"}", "rudder-test", true, rec_cb, &r);
  run_until(&r.calls);
  CHECK_EQ_INT(r.status, 200);
  cJSON *j = cJSON_Parse(r.body);
  const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(j, "method"));
  const char *u = cJSON_GetStringValue(cJSON_GetObjectItem(j, "url"));
  const char *h = cJSON_GetStringValue(cJSON_GetObjectItem(j, "headers"));
  const char *b = cJSON_GetStringValue(cJSON_GetObjectItem(j, "body"));
  CHECK_EQ_STR(m, "PATCH");
  CHECK_EQ_STR(u, "/prefix/echo/apply?fieldManager=rudder-test&force=true");
  CHECK(h && strstr(h, "Content-Type: application/apply-patch+yaml\n"));
  CHECK(h && strstr(h, "Content-Length: 20\n"));
  CHECK_EQ_STR(b, "{\"kind\":\"ConfigMap\"}");
  cJSON_Delete(j);
  rec_free(&r);

  kube_apply(c, "/echo/apply?dryRun=All", "{}", "m", false, rec_cb, &r);
  run_until(&r.calls);
  j = cJSON_Parse(r.body);
  CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(j, "url")), "/prefix/echo/apply?dryRun=All&fieldManager=m");
  cJSON_Delete(j);
  rec_free(&r);

  kube_merge_patch(c, "/echo/mp", "{\"a\":1}", rec_cb, &r);
  run_until(&r.calls);
  j = cJSON_Parse(r.body);
  CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(j, "method")), "PATCH");
  CHECK(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(j, "headers")), "application/merge-patch+json"));
  cJSON_Delete(j);
  rec_free(&r);

  kube_create(c, "/echo/c", "{\"b\":2}", rec_cb, &r);
  run_until(&r.calls);
  j = cJSON_Parse(r.body);
  CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(j, "method")), "POST");
  CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(j, "body")), "{\"b\":2}");
  cJSON_Delete(j);
  rec_free(&r);

  kube_update(c, "/echo/u", "{}", rec_cb, &r);
  run_until(&r.calls);
  j = cJSON_Parse(r.body);
  CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(j, "method")), "PUT");
  cJSON_Delete(j);
  rec_free(&r);

  kube_delete(c, "/echo/d", "Foreground", rec_cb, &r);
  run_until(&r.calls);
  j = cJSON_Parse(r.body);
  CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(j, "method")), "DELETE");
  CHECK(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(j, "body")), "\"propagationPolicy\":\"Foreground\""));
  cJSON_Delete(j);
  rec_free(&r);

  kube_header_t extra[] = {{"Impersonate-User", "system:serviceaccount:a:b"}};
  kube_req_opts_t o = {.method = "GET", .path = "/echo/x", .accept = "application/yaml", .headers = extra,
                       .n_headers = 1};
  kube_request(c, &o, rec_cb, &r);
  run_until(&r.calls);
  j = cJSON_Parse(r.body);
  h = cJSON_GetStringValue(cJSON_GetObjectItem(j, "headers"));
  CHECK(h && strstr(h, "Impersonate-User: system:serviceaccount:a:b\n") && strstr(h, "Accept: application/yaml\n"));
  cJSON_Delete(j);
  rec_free(&r);
  close_client(c);
}

/* ---- streamed bodies (kube_req_opts_t.on_body) ---- */

typedef struct sink_s {
  size_t bytes, pieces;
  int stop_after; /* abandon the response after this many pieces */
} sink_t;

static int sink_cb(const char *p, size_t n, void *data) {
  sink_t *s = (sink_t *)((rec_t *)data + 1);
  s->bytes += n;
  s->pieces++;
  for (size_t i = 0; i < n; i++)
    if (p[i] != 'z') return UV_EINVAL;
  return s->stop_after && s->pieces >= (size_t)s->stop_after ? UV_E2BIG : 0;
}

static void test_on_body(void) {
  kube_client_t *c = new_client(server_url);
  kube_client_limits_t l = {.max_body = 1u << 20};
  kube_client_set_limits(c, &l);
  /* A 2xx body goes to on_body piece by piece, past max_body, and res->body stays empty. */
  struct { rec_t r; sink_t s; } x = {{0}, {0}};
  kube_req_opts_t o = {.path = "/big-chunked-end", .on_body = sink_cb};
  kube_request(c, &o, rec_cb, &x);
  run_until(&x.r.calls);
  CHECK_EQ_INT(x.r.err, 0);
  CHECK_EQ_INT(x.r.status, 200);
  CHECK_EQ_INT(x.s.bytes, 40u * 65536);
  CHECK(x.s.pieces > 1);
  CHECK_EQ_STR(x.r.body, "");
  rec_free(&x.r);
  /* Other responses are buffered as usual. */
  memset(&x, 0, sizeof x);
  o.path = "/status/422";
  kube_request(c, &o, rec_cb, &x);
  run_until(&x.r.calls);
  CHECK_EQ_INT(x.r.status, 422);
  CHECK_EQ_INT(x.s.pieces, 0);
  CHECK(x.r.body && strstr(x.r.body, "spec.chart: Required value"));
  rec_free(&x.r);
  /* A reader that gives up fails the request with its code. */
  memset(&x, 0, sizeof x);
  x.s.stop_after = 2;
  o.path = "/big-chunked";
  kube_request(c, &o, rec_cb, &x);
  run_until(&x.r.calls);
  CHECK_EQ_INT(x.r.err, UV_E2BIG);
  CHECK(x.r.errmsg && strstr(x.r.errmsg, "abandoned by its reader"));
  CHECK_EQ_INT(x.s.pieces, 2);
  rec_free(&x.r);
  close_client(c);
}

/* ---- watches ---- */

typedef struct wrec_s {
  buf_t log;
  int ends, end_err, end_status;
  char *end_msg;
  cJSON *kept;
  int stop_on;  /* stop the watch at this event number */
  int events;
} wrec_t;

static void w_event(kube_watch_t *w, const char *type, cJSON *obj, void *data) {
  wrec_t *r = data;
  r->events++;
  const char *rv = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "metadata"), "resourceVersion"));
  buf_printf(&r->log, "%s@%s;", type, rv ? rv : "?");
  if (!strcmp(type, "MODIFIED")) {
    cJSON_Delete(r->kept);
    r->kept = kube_watch_take_object(w);
  }
  if (r->stop_on && r->events == r->stop_on) kube_watch_stop(w);
}

static void w_end(kube_watch_t *w, const kube_response_t *res, void *data) {
  wrec_t *r = data;
  r->ends++;
  r->end_err = res->err;
  r->end_status = res->status;
  free(r->end_msg);
  r->end_msg = res->errmsg ? strdup(res->errmsg) : NULL;
}

static void wrec_free(wrec_t *r) {
  buf_free(&r->log);
  free(r->end_msg);
  cJSON_Delete(r->kept);
  memset(r, 0, sizeof *r);
}

static void test_watch(void) {
  kube_client_t *c = new_client(server_url);
  wrec_t r = {0};
  int before = srv.accepted;
  kube_watch_t *w = kube_watch_start(c, "/watch?watch=1&resourceVersion=9", w_event, w_end, &r);
  CHECK(w != NULL);
  run_until(&r.ends);
  CHECK_EQ_STR(r.log.data, "ADDED@10;MODIFIED@11;BOOKMARK@12;DELETED@13;");
  CHECK_EQ_INT(r.ends, 1);
  CHECK_EQ_INT(r.end_err, 0);
  CHECK_EQ_INT(r.end_status, 200);
  CHECK(r.end_msg == NULL);
  CHECK(r.kept && cJSON_GetObjectItem(r.kept, "metadata")); /* a taken object outlives its event */
  wrec_free(&r);

  kube_watch_start(c, "/watch-410?watch=1", w_event, w_end, &r);
  run_until(&r.ends);
  CHECK_EQ_INT(r.end_err, 0);
  CHECK_EQ_INT(r.end_status, 410);
  CHECK_EQ_STR(r.end_msg, "HTTP 410 Gone: too old resource version: 1 (50)");
  CHECK_EQ_INT(r.events, 0);
  wrec_free(&r);

  kube_watch_start(c, "/watch-bad?watch=1", w_event, w_end, &r);
  run_until(&r.ends);
  CHECK_EQ_INT(r.end_err, UV_EPROTO);
  CHECK(r.end_msg && strstr(r.end_msg, "not valid JSON") && strstr(r.end_msg, "/watch-bad"));
  wrec_free(&r);

  /* An event longer than the line bound ends the stream with a clear error. */
  kube_client_limits_t l = {.max_watch_line = 40};
  kube_client_set_limits(c, &l);
  kube_watch_start(c, "/watch?watch=1", w_event, w_end, &r);
  run_until(&r.ends);
  CHECK_EQ_INT(r.end_err, UV_E2BIG);
  CHECK(r.end_msg && strstr(r.end_msg, "watch event 1 is longer than the limit of 40 bytes") && strstr(r.end_msg, "/watch"));
  CHECK_EQ_INT(r.events, 0);
  wrec_free(&r);
  l.max_watch_line = 1u << 20;
  kube_client_set_limits(c, &l);

  /* Stopping from inside an event: no more events, end once with UV_ECANCELED. */
  r.stop_on = 2;
  kube_watch_start(c, "/watch?watch=1", w_event, w_end, &r);
  run_until(&r.ends);
  run_for(50);
  CHECK_EQ_INT(r.events, 2);
  CHECK_EQ_INT(r.ends, 1);
  CHECK_EQ_INT(r.end_err, UV_ECANCELED);
  wrec_free(&r);

  /* Each watch had its own connection. */
  CHECK_EQ_INT(srv.accepted - before, 5);

  /* Closing the client with a long-lived watch and requests in flight cancels them all. */
  rec_t q = {0}, q2 = {0};
  kube_watch_start(c, "/watch?watch=1&forever=1", w_event, w_end, &r);
  kube_get(c, "/slow", rec_cb, &q);
  run_for(60);
  kube_get(c, "/ok", rec_cb, &q2); /* still queued: not yet dispatched */
  CHECK_EQ_INT(r.ends, 0);
  close_client(c);
  CHECK_EQ_INT(r.ends, 1);
  CHECK_EQ_INT(r.end_err, UV_ECANCELED);
  CHECK_EQ_INT(q.calls, 1);
  CHECK_EQ_INT(q.err, UV_ECANCELED);
  CHECK_EQ_INT(q2.calls, 1);
  CHECK_EQ_INT(q2.err, UV_ECANCELED);
  CHECK(r.events >= 1);
  rec_free(&q);
  rec_free(&q2);
  wrec_free(&r);
}

int main(void) {
  uv_loop_init(&loop);
  if (tsrv_start(&srv, &loop, handler)) { fprintf(stderr, "cannot start the test server\n"); return 2; }
  snprintf(server_url, sizeof server_url, "http://127.0.0.1:%d", srv.port);
  test_basic_and_keepalive();
  test_pool_limits();
  test_failures();
  test_helpers();
  test_on_body();
  test_watch();
  tsrv_stop(&srv);
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(uv_loop_close(&loop), 0);
  return t_done();
}
