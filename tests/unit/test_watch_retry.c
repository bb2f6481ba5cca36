/* The client's resilience against an in-process loopback server: 429/5xx retried with backoff and
 * Retry-After (within the deadline, idempotent methods only for 5xx), 409 as a conflict, the
 * client-side token bucket, token files re-read on 401, exec credential plugins (cached, re-run on
 * 401 and on expiry, clear failures), delete preconditions, JSON patch and status helpers. */
#include "t.h"
#include "test_watch_server.h"
#include "watch/client.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uv_loop_t loop;
static tsrv_t srv;
static char dir[64];

typedef struct rec_s {
  int calls, err, status;
  char *errmsg, *body, *reason;
  int conflict;
  uint64_t at;
} rec_t;

static void rec_free(rec_t *r) {
  free(r->errmsg); free(r->body); free(r->reason);
  memset(r, 0, sizeof *r);
}

static void rec_cb(const kube_response_t *res, void *data) {
  rec_t *r = data;
  free(r->errmsg); free(r->body); free(r->reason);
  r->calls++;
  r->err = res->err;
  r->status = res->status;
  r->errmsg = res->errmsg ? strdup(res->errmsg) : NULL;
  r->body = strndup(res->body, res->body_len);
  r->reason = strdup(res->reason);
  r->conflict = kube_response_is_conflict(res);
  r->at = uv_now(&loop);
}

static int timed_out;
static void deadline_cb(uv_timer_t *t) { timed_out = 1; }

static void run_until(int *flag, int n) {
  uv_timer_t t;
  uv_timer_init(&loop, &t);
  timed_out = 0;
  uv_timer_start(&t, deadline_cb, 15000, 0);
  while (*flag < n && !timed_out) uv_run(&loop, UV_RUN_ONCE);
  if (timed_out) fprintf(stderr, "run_until: deadline passed\n");
  uv_close((uv_handle_t *)&t, NULL);
  uv_run(&loop, UV_RUN_NOWAIT);
}

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

/* ---- the server ---- */

static int hits_dated;
static int hits_flaky, hits_429, hits_500, hits_post503, hits_far, hits_tb;
static char last_auth[256], last_ctype[128];
static buf_t last_body, last_url;

static void header_value(const char *headers, const char *name, char *out, size_t n) {
  out[0] = 0;
  size_t nl = strlen(name);
  for (const char *p = headers; *p;) {
    const char *e = strchr(p, '\n');
    if (!e) e = p + strlen(p);
    if ((size_t)(e - p) > nl + 2 && !strncasecmp(p, name, nl) && p[nl] == ':') {
      snprintf(out, n, "%.*s", (int)(e - p - nl - 2), p + nl + 2);
      return;
    }
    p = *e ? e + 1 : e;
  }
}

static void handler(tconn_t *c, const char *method, const char *url, const char *headers, const char *body,
                    size_t body_len) {
  header_value(headers, "Authorization", last_auth, sizeof last_auth);
  header_value(headers, "Content-Type", last_ctype, sizeof last_ctype);
  buf_reset(&last_body);
  buf_append(&last_body, body, body_len);
  buf_reset(&last_url);
  buf_puts(&last_url, method);
  buf_puts(&last_url, " ");
  buf_puts(&last_url, url);
  if (!strcmp(url, "/flaky")) {
    /* Two 503s with Retry-After: 1, then success. */
    if (++hits_flaky <= 2)
      tsrv_puts(c, "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\n\r\n");
    else
      tsrv_respond(c, 200, "OK", "application/json", "{\"ok\":true}");
  } else if (!strcmp(url, "/busy")) {
    /* Three 429s (API priority and fairness) without Retry-After, then success. */
    if (++hits_429 <= 3)
      tsrv_respond(c, 429, "Too Many Requests", "application/json",
                   "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"too many requests\","
                   "\"reason\":\"TooManyRequests\",\"code\":429}");
    else
      tsrv_respond(c, 201, "Created", "application/json", "{\"ok\":true}");
  } else if (!strcmp(url, "/broken")) {
    hits_500++;
    tsrv_respond(c, 500, "Internal Server Error", "application/json",
                 "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"boom\","
                 "\"reason\":\"InternalError\",\"code\":500}");
  } else if (!strcmp(url, "/post503")) {
    hits_post503++;
    tsrv_puts(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n");
  } else if (!strcmp(url, "/dated")) {
    /* Retry-After as an HTTP date: one in the past (retry at once), then one far ahead. */
    if (++hits_dated == 1)
      tsrv_puts(c, "HTTP/1.1 503 Service Unavailable\r\nRetry-After: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
                   "Content-Length: 0\r\n\r\n");
    else if (hits_dated == 2)
      tsrv_puts(c, "HTTP/1.1 503 Service Unavailable\r\nRetry-After: Fri, 31 Dec 2099 23:59:59 GMT\r\n"
                   "Content-Length: 0\r\n\r\n");
    else
      tsrv_respond(c, 200, "OK", "application/json", "{}");
  } else if (!strcmp(url, "/far")) {
    hits_far++;
    tsrv_puts(c, "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 30\r\nContent-Length: 0\r\n\r\n");
  } else if (!strcmp(url, "/conflict")) {
    tsrv_respond(c, 409, "Conflict", "application/json",
                 "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"Operation cannot be "
                 "fulfilled on configmaps \\\"x\\\": the object has been modified\",\"reason\":\"Conflict\",\"code\":409}");
  } else if (!strcmp(url, "/tb")) {
    hits_tb++;
    tsrv_respond(c, 200, "OK", "application/json", "{}");
  } else if (!strcmp(url, "/auth")) {
    /* Accepts "Bearer good" and exec tokens E2 and later. */
    if (!strcmp(last_auth, "Bearer good") || (!strncmp(last_auth, "Bearer E", 8) && atoi(last_auth + 8) >= 2))
      tsrv_respond(c, 200, "OK", "application/json", "{\"ok\":true}");
    else
      tsrv_respond(c, 401, "Unauthorized", "application/json",
                   "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"Unauthorized\","
                   "\"reason\":\"Unauthorized\",\"code\":401}");
  } else {
    tsrv_respond(c, 200, "OK", "application/json", "{}");
  }
}

static kube_client_t *new_client(kube_config_t *cfg) {
  char server[64], *err = NULL;
  snprintf(server, sizeof server, "http://127.0.0.1:%d", srv.port);
  CHECK_EQ_INT(kube_config_set_server(cfg, server, &err), 0);
  kube_client_t *c = NULL;
  int r = kube_client_new(&loop, cfg, &c, &err);
  CHECK_EQ_INT(r, 0);
  if (r) { fprintf(stderr, "kube_client_new: %s\n", err); free(err); exit(1); }
  kube_config_free(cfg);
  kube_client_limits_t l = {.retry_base_ms = 40};
  kube_client_set_limits(c, &l);
  return c;
}

static void closed_cb(void *d) { (*(int *)d)++; }
static void close_wait(kube_client_t *c) {
  int closed = 0;
  kube_client_close(c, closed_cb, &closed);
  run_until(&closed, 1);
  CHECK_EQ_INT(closed, 1);
}

static void test_retries(void) {
  kube_config_t cfg = {0};
  kube_client_t *c = new_client(&cfg);
  rec_t r = {0};

  /* 503 with Retry-After: 1 twice: the GET waits about two seconds and then succeeds. */
  uint64_t t0 = uv_now(&loop);
  kube_get(c, "/flaky", rec_cb, &r);
  run_until(&r.calls, 1);
  CHECK_EQ_INT(r.status, 200);
  CHECK_EQ_INT(hits_flaky, 3);
  CHECK(r.at - t0 >= 1900 && r.at - t0 < 4000);
  CHECK_EQ_INT(kube_client_get_stats(c).retries, 2);
  rec_free(&r);

  /* 429 is retried even for a POST (the server did not process it), with growing delays. */
  t0 = uv_now(&loop);
  kube_create(c, "/busy", "{}", rec_cb, &r);
  run_until(&r.calls, 1);
  CHECK_EQ_INT(r.status, 201);
  CHECK_EQ_INT(hits_429, 4);
  /* 40 ms doubling with 50-100% jitter: at least 20+40+80 ms. */
  CHECK(r.at - t0 >= 140);
  rec_free(&r);

  /* A 503 to a POST is not retried: the server may have acted on it. */
  kube_create(c, "/post503", "{}", rec_cb, &r);
  run_until(&r.calls, 1);
  CHECK_EQ_INT(r.status, 503);
  CHECK_EQ_INT(hits_post503, 1);
  rec_free(&r);

  /* ...unless the caller says the request is idempotent. */
  kube_req_opts_t o = {.method = "POST", .path = "/post503", .body = "{}", .body_len = 2, .retry = KUBE_RETRY_ALWAYS};
  kube_client_limits_t l = {.max_retries = 2};
  kube_client_set_limits(c, &l);
  kube_request(c, &o, rec_cb, &r);
  run_until(&r.calls, 1);
  CHECK_EQ_INT(r.status, 503);
  CHECK_EQ_INT(hits_post503, 4);
  rec_free(&r);

  /* A persistent 500 gives up after max_retries and delivers the last response. */
  kube_get(c, "/broken", rec_cb, &r);
  run_until(&r.calls, 1);
  CHECK_EQ_INT(r.status, 500);
  CHECK_EQ_INT(hits_500, 3);
  CHECK_EQ_STR(r.reason, "InternalError");
  CHECK_EQ_STR(r.errmsg, "HTTP 500 Internal Server Error: boom");
  rec_free(&r);

  /* KUBE_RETRY_NEVER delivers the first answer. */
  kube_req_opts_t never = {.path = "/broken", .retry = KUBE_RETRY_NEVER};
  kube_request(c, &never, rec_cb, &r);
  run_until(&r.calls, 1);
  CHECK_EQ_INT(hits_500, 4);
  rec_free(&r);

  /* A Retry-After beyond the request's deadline is not waited for. */
  kube_req_opts_t far = {.path = "/far", .timeout_ms = 2000};
  t0 = uv_now(&loop);
  kube_request(c, &far, rec_cb, &r);
  run_until(&r.calls, 1);
  CHECK_EQ_INT(r.status, 429);
  CHECK_EQ_INT(hits_far, 1);
  CHECK(r.at - t0 < 1000);
  rec_free(&r);

  /* Retry-After as an HTTP date: a past one is retried at once; one beyond the deadline is not waited for. */
  kube_req_opts_t dated = {.path = "/dated", .timeout_ms = 2000};
  t0 = uv_now(&loop);
  kube_request(c, &dated, rec_cb, &r);
  run_until(&r.calls, 1);
  CHECK_EQ_INT(r.status, 503);
  CHECK_EQ_INT(hits_dated, 2);
  CHECK(r.at - t0 < 1000);
  rec_free(&r);

  /* Cancelling a request while it waits to retry delivers ECANCELED at once. */
  hits_flaky = 0;
  kube_req_t *q = kube_get(c, "/flaky", rec_cb, &r);
  run_for(300);
  CHECK_EQ_INT(r.calls, 0);
  kube_request_cancel(q);
  CHECK_EQ_INT(r.calls, 1);
  CHECK_EQ_INT(r.err, UV_ECANCELED);
  rec_free(&r);

  /* Retries disabled altogether. */
  l = (kube_client_limits_t){.max_retries = -1};
  kube_client_set_limits(c, &l);
  hits_flaky = 0;
  kube_get(c, "/flaky", rec_cb, &r);
  run_until(&r.calls, 1);
  CHECK_EQ_INT(r.status, 503);
  CHECK_EQ_INT(hits_flaky, 1);
  rec_free(&r);

  /* 409 is a conflict, delivered at once. */
  kube_update(c, "/conflict", "{}", rec_cb, &r);
  run_until(&r.calls, 1);
  CHECK_EQ_INT(r.status, 409);
  CHECK(r.conflict);
  CHECK_EQ_STR(r.reason, "Conflict");
  CHECK(r.errmsg && strstr(r.errmsg, "the object has been modified"));
  rec_free(&r);
  close_wait(c);
}

static void test_token_bucket(void) {
  kube_config_t cfg = {0};
  kube_client_t *c = new_client(&cfg);
  kube_client_limits_t l = {.qps = 10, .burst = 2};
  kube_client_set_limits(c, &l);
  rec_t r[7] = {{0}};
  int done = 0;
  uint64_t t0 = uv_now(&loop);
  for (int i = 0; i < 7; i++) kube_get(c, "/tb", rec_cb, &r[i]);
  for (;;) {
    done = 0;
    for (int i = 0; i < 7; i++) done += r[i].calls;
    if (done == 7 || timed_out) break;
    uv_run(&loop, UV_RUN_ONCE);
  }
  /* Burst 2 goes at once; the other 5 come 100 ms apart. */
  uint64_t last = 0;
  for (int i = 0; i < 7; i++) {
    CHECK_EQ_INT(r[i].status, 200);
    if (r[i].at > last) last = r[i].at;
  }
  CHECK(r[1].at - t0 < 80);
  CHECK(last - t0 >= 450 && last - t0 < 1500);
  CHECK(kube_client_get_stats(c).throttled >= 5);
  for (int i = 0; i < 7; i++) rec_free(&r[i]);
  /* Unlimited. */
  l = (kube_client_limits_t){.qps = -1};
  kube_client_set_limits(c, &l);
  t0 = uv_now(&loop);
  for (int i = 0; i < 7; i++) kube_get(c, "/tb", rec_cb, &r[i]);
  for (;;) {
    done = 0;
    for (int i = 0; i < 7; i++) done += r[i].calls;
    if (done == 7) break;
    uv_run(&loop, UV_RUN_ONCE);
  }
  CHECK(uv_now(&loop) - t0 < 200);
  for (int i = 0; i < 7; i++) rec_free(&r[i]);
  close_wait(c);
}

static void write_file(const char *path, const char *text, int mode) {
  char tmp[300];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) { perror(tmp); exit(2); }
  fputs(text, f);
  fclose(f);
  chmod(tmp, (mode_t)mode);
  rename(tmp, path); /* atomically, as kubelet swaps projected tokens */
}

static void test_token_file(void) {
  char tf[128];
  snprintf(tf, sizeof tf, "%s/token", dir);
  write_file(tf, "stale\n", 0600);
  kube_config_t cfg = {0};
  cfg.token = strdup("stale");
  cfg.token_file = strdup(tf);
  kube_client_t *c = new_client(&cfg);
  rec_t r = {0};
  /* A 401 re-reads the file once; it still holds the stale token, so the 401 is delivered. */
  kube_get(c, "/auth", rec_cb, &r);
  run_until(&r.calls, 1);
  CHECK_EQ_INT(r.status, 401);
  CHECK_EQ_INT(kube_client_get_stats(c).auth_retries, 1);
  rec_free(&r);
  /* The token rotates: the next 401 picks it up and the retry succeeds. */
  write_file(tf, "good\n", 0600);
  kube_get(c, "/auth", rec_cb, &r);
  run_until(&r.calls, 1);
  CHECK_EQ_INT(r.status, 200);
  CHECK_EQ_STR(last_auth, "Bearer good");
  rec_free(&r);
  /* And with a short refresh interval, a rotation is seen without any 401. */
  kube_client_limits_t l = {.token_refresh_ms = 50};
  kube_client_set_limits(c, &l);
  write_file(tf, "rotated\n", 0600);
  run_for(80);
  kube_get(c, "/ok", rec_cb, &r);
  run_until(&r.calls, 1);
  CHECK_EQ_STR(last_auth, "Bearer rotated");
  rec_free(&r);
  close_wait(c);
}

static kube_exec_t *exec_of(const char *script, const char *hint) {
  kube_exec_t *e = calloc(1, sizeof *e);
  e->command = strdup(script);
  e->args = calloc(2, sizeof *e->args);
  e->args[0] = strdup(dir);
  e->n_args = 1;
  e->env = calloc(2, sizeof *e->env);
  e->env[0] = strdup("RUDDER_TEST_VAR=from-kubeconfig");
  e->n_env = 1;
  e->api_version = strdup("client.authentication.k8s.io/v1");
  e->install_hint = hint ? strdup(hint) : NULL;
  return e;
}

static int read_count(void) {
  char p[128];
  snprintf(p, sizeof p, "%s/count", dir);
  FILE *f = fopen(p, "r");
  int n = 0;
  if (f) { if (fscanf(f, "%d", &n) != 1) n = 0; fclose(f); }
  return n;
}

static void test_exec(void) {
  char script[128];
  snprintf(script, sizeof script, "%s/cred.sh", dir);
  /* Each run counts itself and returns token E<count>; the expiry comes from $1/expiry when present. */
  write_file(script,
             "#!/bin/sh\n"
             "d=\"$1\"\n"
             "n=$(cat \"$d/count\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$d/count\"\n"
             "echo \"$KUBERNETES_EXEC_INFO\" > \"$d/info\"\n"
             "[ \"$RUDDER_TEST_VAR\" = from-kubeconfig ] || { echo 'env not passed' >&2; exit 3; }\n"
             "exp=''\n"
             "[ -f \"$d/expiry\" ] && exp=\", \\\"expirationTimestamp\\\": \\\"$(cat \"$d/expiry\")\\\"\"\n"
             "echo \"{\\\"kind\\\": \\\"ExecCredential\\\", \\\"apiVersion\\\": \\\"client.authentication.k8s.io/v1\\\","
             " \\\"status\\\": {\\\"token\\\": \\\"E$n\\\"$exp}}\"\n",
             0755);
  kube_config_t cfg = {0};
  cfg.exec = exec_of(script, NULL);
  kube_client_t *c = new_client(&cfg);
  rec_t r = {0};
  /* First run gives E1, which the server refuses: the 401 re-runs the plugin and E2 works. */
  kube_get(c, "/auth", rec_cb, &r);
  run_until(&r.calls, 1);
  CHECK_EQ_INT(r.status, 200);
  CHECK_EQ_STR(last_auth, "Bearer E2");
  CHECK_EQ_INT(read_count(), 2);
  rec_free(&r);
  /* Cached: several requests, no new run. */
  rec_t rs[3] = {{0}};
  for (int i = 0; i < 3; i++) kube_get(c, "/auth", rec_cb, &rs[i]);
  run_until(&rs[2].calls, 1);
  run_until(&rs[0].calls, 1);
  run_until(&rs[1].calls, 1);
  for (int i = 0; i < 3; i++) { CHECK_EQ_INT(rs[i].status, 200); rec_free(&rs[i]); }
  CHECK_EQ_INT(read_count(), 2);
  CHECK_EQ_INT(kube_client_get_stats(c).exec_runs, 2);
  char info[128], buf[512] = "";
  snprintf(info, sizeof info, "%s/info", dir);
  FILE *f = fopen(info, "r");
  if (f) { if (!fgets(buf, sizeof buf, f)) buf[0] = 0; fclose(f); }
  CHECK(strstr(buf, "\"kind\":\"ExecCredential\"") && strstr(buf, "\"interactive\":false"));
  close_wait(c);

  /* Expiry: a credential that expires in 2 s is used until then, then the plugin runs again. */
  char ep[128], when[64];
  snprintf(ep, sizeof ep, "%s/expiry", dir);
  time_t exp = time(NULL) + 2;
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&exp));
  write_file(ep, when, 0600);
  cfg = (kube_config_t){0};
  cfg.exec = exec_of(script, NULL);
  c = new_client(&cfg);
  kube_get(c, "/ok", rec_cb, &r);
  run_until(&r.calls, 1);
  rec_free(&r);
  int runs = read_count();
  kube_get(c, "/ok", rec_cb, &r);
  run_until(&r.calls, 1);
  rec_free(&r);
  CHECK_EQ_INT(read_count(), runs);
  run_for(2600);
  kube_get(c, "/ok", rec_cb, &r);
  run_until(&r.calls, 1);
  CHECK_EQ_INT(r.status, 200);
  rec_free(&r);
  CHECK_EQ_INT(read_count(), runs + 1);
  close_wait(c);
  unlink(ep);

  /* A failing plugin: every waiting request fails with its exit status and stderr. */
  char bad[128];
  snprintf(bad, sizeof bad, "%s/bad.sh", dir);
  write_file(bad, "#!/bin/sh\necho 'login required: run sso-login' >&2\nexit 7\n", 0755);
  cfg = (kube_config_t){0};
  cfg.exec = exec_of(bad, NULL);
  c = new_client(&cfg);
  rec_t r2 = {0};
  kube_get(c, "/ok", rec_cb, &r);
  kube_get(c, "/ok", rec_cb, &r2);
  run_until(&r.calls, 1);
  run_until(&r2.calls, 1);
  CHECK_EQ_INT(r.err, UV_EACCES);
  CHECK_EQ_INT(r2.err, UV_EACCES);
  CHECK(r.errmsg && strstr(r.errmsg, "exited with status 7: login required: run sso-login"));
  CHECK_EQ_INT(kube_client_get_stats(c).exec_runs, 1);
  rec_free(&r);
  rec_free(&r2);
  close_wait(c);

  /* A missing plugin: the install hint is part of the message. */
  cfg = (kube_config_t){0};
  char missing[128];
  snprintf(missing, sizeof missing, "%s/nope", dir);
  cfg.exec = exec_of(missing, "install nope from example.com");
  c = new_client(&cfg);
  kube_get(c, "/ok", rec_cb, &r);
  run_until(&r.calls, 1);
  CHECK_EQ_INT(r.err, UV_EACCES);
  CHECK(r.errmsg && strstr(r.errmsg, "could not be run") && strstr(r.errmsg, "install nope from example.com"));
  rec_free(&r);
  close_wait(c);

  /* Garbage output. */
  write_file(bad, "#!/bin/sh\necho '{\"kind\":\"Other\"}'\n", 0755);
  cfg = (kube_config_t){0};
  cfg.exec = exec_of(bad, NULL);
  c = new_client(&cfg);
  kube_get(c, "/ok", rec_cb, &r);
  run_until(&r.calls, 1);
  CHECK(r.errmsg && strstr(r.errmsg, "not ExecCredential"));
  rec_free(&r);
  close_wait(c);

  /* A plugin that hangs is killed after exec_timeout_ms; closing the client while one runs is clean. */
  write_file(bad, "#!/bin/sh\nexec sleep 30\n", 0755);
  cfg = (kube_config_t){0};
  cfg.exec = exec_of(bad, NULL);
  c = new_client(&cfg);
  kube_client_limits_t l = {.exec_timeout_ms = 300};
  kube_client_set_limits(c, &l);
  kube_get(c, "/ok", rec_cb, &r);
  run_until(&r.calls, 1);
  CHECK(r.errmsg && strstr(r.errmsg, "did not finish within 300 ms"));
  rec_free(&r);
  kube_get(c, "/ok", rec_cb, &r);
  run_for(50);
  close_wait(c);
  CHECK_EQ_INT(r.err, UV_ECANCELED);
  rec_free(&r);
}

static void test_helpers(void) {
  kube_config_t cfg = {0};
  kube_client_t *c = new_client(&cfg);
  rec_t r = {0};
  kube_delete_opts_t d = {.propagation = "Foreground", .precondition_uid = "u-1", .precondition_rv = "42",
                          .grace_period_seconds = 0};
  kube_delete_ex(c, "/api/v1/namespaces/a/configmaps/x", &d, rec_cb, &r);
  run_until(&r.calls, 1);
  CHECK_EQ_STR(last_url.data, "DELETE /api/v1/namespaces/a/configmaps/x");
  CHECK_EQ_STR(last_body.data, "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"propagationPolicy\":\"Foreground\","
                               "\"gracePeriodSeconds\":0,\"preconditions\":{\"uid\":\"u-1\",\"resourceVersion\":\"42\"}}");
  rec_free(&r);
  kube_delete(c, "/x", NULL, rec_cb, &r);
  run_until(&r.calls, 1);
  CHECK_EQ_INT(last_body.len, 0);
  rec_free(&r);
  kube_json_patch(c, "/p", "[{\"op\":\"add\",\"path\":\"/a\",\"value\":1}]", rec_cb, &r);
  run_until(&r.calls, 1);
  CHECK_EQ_STR(last_ctype, "application/json-patch+json");
  CHECK_EQ_STR(last_url.data, "PATCH /p");
  rec_free(&r);
  kube_merge_patch_status(c, "/apis/g/v1/namespaces/a/things/x?dryRun=All", "{}", rec_cb, &r);
  run_until(&r.calls, 1);
  CHECK_EQ_STR(last_url.data, "PATCH /apis/g/v1/namespaces/a/things/x/status?dryRun=All");
  CHECK_EQ_STR(last_ctype, "application/merge-patch+json");
  rec_free(&r);
  kube_update_status(c, "/t/x", "{}", rec_cb, &r);
  run_until(&r.calls, 1);
  CHECK_EQ_STR(last_url.data, "PUT /t/x/status");
  rec_free(&r);
  kube_apply_status(c, "/t/x", "{}", "rudder", true, rec_cb, &r);
  run_until(&r.calls, 1);
  CHECK_EQ_STR(last_url.data, "PATCH /t/x/status?fieldManager=rudder&force=true");
  rec_free(&r);
  close_wait(c);
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/rudder-retry-XXXXXX");
  if (!mkdtemp(dir)) { perror("mkdtemp"); return 2; }
  uv_loop_init(&loop);
  CHECK_EQ_INT(tsrv_start(&srv, &loop, handler), 0);
  test_retries();
  test_token_bucket();
  test_token_file();
  test_exec();
  test_helpers();
  tsrv_stop(&srv);
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(uv_loop_close(&loop), 0);
  buf_free(&last_body);
  buf_free(&last_url);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
  return t_done();
}
