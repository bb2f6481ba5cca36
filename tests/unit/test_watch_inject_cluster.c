/* 429 and 503 injected by a TLS-terminating proxy in front of the real API server are retried
 * with backoff, Retry-After is honoured (the client waits at least as long as it says), the
 * number of attempts is what the rules say, and a real 409 from the API server is reported as a
 * conflict.
 *
 * The proxy (tests/faults/tls_fault_proxy.h) serves a certificate for 127.0.0.1 minted now with
 * openssl and signed by the test cluster's CA from $RUDDER_CLUSTER_STATE/pki, so the client from
 * the cluster's kubeconfig trusts it as it would the API server. */
#include "test_watch_kube.h"
#include "../faults/tls_fault_proxy.h"

typedef struct ires_s {
  int done, err, status, conflict, not_found;
  char reason[64];
  char retry_after[16];
  char *body;
} ires_t;

static void ires_cb(const kube_response_t *res, void *data) {
  ires_t *r = data;
  r->done++;
  r->err = res->err;
  r->status = res->status;
  r->conflict = kube_response_is_conflict(res);
  r->not_found = kube_response_is_not_found(res);
  snprintf(r->reason, sizeof r->reason, "%s", res->reason ? res->reason : "");
  const char *ra = kube_response_header(res, "retry-after");
  snprintf(r->retry_after, sizeof r->retry_after, "%s", ra ? ra : "");
  free(r->body);
  r->body = strndup(res->body ? res->body : "", res->body_len);
}

static fproxy_t px;
static kube_client_t *c; /* the client under test, pointed at the proxy */
static double elapsed_ms;

/* Runs one request through the proxy with the given fault script; returns its result and sets
 * elapsed_ms to the loop time it took. */
static ires_t run(const char *method, const char *path, const char *body, const int *faults, size_t n_faults,
                  uint64_t timeout_ms) {
  fproxy_script(&px, faults, n_faults);
  ires_t r = {0};
  kube_req_opts_t o = {.method = method, .path = path, .body = body, .body_len = body ? strlen(body) : 0,
                       .timeout_ms = timeout_ms};
  uint64_t t0 = uv_hrtime();
  if (!kube_request(c, &o, ires_cb, &r)) {
    r.err = UV_ENOMEM;
    return r;
  }
  RUN_UNTIL(r.done, 60000);
  elapsed_ms = (double)(uv_hrtime() - t0) / 1e6;
  return r;
}

static kube_client_stats_t before;
static uint64_t retries_since(void) { return kube_client_get_stats(c).retries - before.retries; }
static void mark(void) { before = kube_client_get_stats(c); }

int main(void) {
  uv_loop_init(&loop);
  const char *state = getenv("RUDDER_CLUSTER_STATE");
  if (!state || !*state) {
    fprintf(stderr, "FAIL: RUDDER_CLUSTER_STATE is unset: this test needs the local control plane's state dir "
                    "(ctest runs it with the e2e.cluster-up fixture; by hand: eval \"$(tests/cluster/up)\")\n");
    return 1;
  }
  char ca_crt[1024], ca_key[1024], dir[] = "/tmp/rudder-fproxy-XXXXXX", crt[1100], key[1100];
  snprintf(ca_crt, sizeof ca_crt, "%s/pki/ca.crt", state);
  snprintf(ca_key, sizeof ca_key, "%s/pki/ca.key", state);
  if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
  snprintf(crt, sizeof crt, "%s/proxy.crt", dir);
  snprintf(key, sizeof key, "%s/proxy.key", dir);
  int minted = fproxy_mint_cert(dir, ca_crt, ca_key);
  CHECK_EQ_INT(minted, 0);
  if (minted) { fproxy_unmint(dir); return t_done(); }

  kube_config_t up;
  char *err = NULL;
  if (kube_config_load(NULL, NULL, &up, &err)) {
    fprintf(stderr, "FAIL: kubeconfig: %s\n", err);
    return 1;
  }
  int started = fproxy_start(&px, &loop, crt, key, &up);
  if (started) fprintf(stderr, "proxy: %s\n", px.errmsg);
  CHECK_EQ_INT(started, 0);
  kube_config_free(&up);
  if (started) { fproxy_unmint(dir); return t_done(); }

  c = k_client(px.port);
  kube_client_t *w = k_client(0); /* setup and cleanup, straight to the API server */
  /* No token bucket waits to blur the timings; a short backoff base so that waits of a second
   * can only come from Retry-After. */
  kube_client_limits_t l = {.qps = -1, .retry_base_ms = 100, .max_retries = 5};
  kube_client_set_limits(c, &l);
  kube_client_set_limits(w, &(kube_client_limits_t){.qps = -1});

  char ns[64], coll[160], obj[224];
  snprintf(ns, sizeof ns, "rudder-inject-%d", (int)getpid());
  snprintf(coll, sizeof coll, "/api/v1/namespaces/%s/configmaps", ns);
  snprintf(obj, sizeof obj, "%s/cm-a", coll);
  k_namespace(w, ns);
  static const char cm_a[] = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm-a\"},"
                             "\"data\":{\"v\":\"1\"}}";
  kres_t kr = k_do(w, "POST", coll, cm_a);
  CHECK_EQ_INT(kr.status, 201);
  kres_free(&kr);

  /* 1. No faults: the proxy passes a request through to the real server (TLS both ways). */
  mark();
  ires_t r = run("GET", obj, NULL, NULL, 0, 0);
  if (r.err) fprintf(stderr, "through the proxy: err %d; proxy: %s\n", r.err, px.errmsg);
  CHECK_EQ_INT(r.status, 200);
  CHECK(r.body && strstr(r.body, "\"cm-a\""));
  CHECK_EQ_INT(px.requests, 1);
  CHECK_EQ_INT(px.forwarded, 1);
  CHECK_EQ_INT(retries_since(), 0);
  free(r.body);

  /* 2. One 429 with Retry-After: 1: retried once, no sooner than a second later, then 200. */
  mark();
  r = run("GET", obj, NULL, (int[]){FP_429}, 1, 0);
  CHECK_EQ_INT(r.status, 200);
  CHECK_EQ_INT(px.requests, 2);
  CHECK_EQ_INT(px.injected, 1);
  CHECK_EQ_INT(retries_since(), 1);
  printf("429 then 200: %d attempts, gap %.0f ms, loop time %.0f ms\n", px.requests, fproxy_gap_ms(&px, 1),
         elapsed_ms);
  CHECK(fproxy_gap_ms(&px, 1) >= 950);
  CHECK(elapsed_ms >= 950);
  free(r.body);

  /* 3. Two 429s in a row: each wait honours Retry-After (not the 100 ms backoff). */
  mark();
  r = run("GET", obj, NULL, (int[]){FP_429, FP_429}, 2, 0);
  CHECK_EQ_INT(r.status, 200);
  CHECK_EQ_INT(px.requests, 3);
  CHECK_EQ_INT(retries_since(), 2);
  printf("429, 429 then 200: %d attempts, gaps %.0f and %.0f ms, loop time %.0f ms\n", px.requests,
         fproxy_gap_ms(&px, 1), fproxy_gap_ms(&px, 2), elapsed_ms);
  CHECK(fproxy_gap_ms(&px, 1) >= 950);
  CHECK(fproxy_gap_ms(&px, 2) >= 950);
  CHECK(elapsed_ms >= 1900);
  free(r.body);

  /* 4. 503s without Retry-After on a GET: retried with jittered exponential backoff from the
   * 100 ms base (50-100 ms, then 100-200 ms), then 200. */
  mark();
  r = run("GET", obj, NULL, (int[]){FP_503, FP_503}, 2, 0);
  CHECK_EQ_INT(r.status, 200);
  CHECK_EQ_INT(px.requests, 3);
  CHECK_EQ_INT(px.injected, 2);
  CHECK_EQ_INT(retries_since(), 2);
  printf("503, 503 then 200: %d attempts, gaps %.0f and %.0f ms\n", px.requests, fproxy_gap_ms(&px, 1),
         fproxy_gap_ms(&px, 2));
  CHECK(fproxy_gap_ms(&px, 1) >= 45);
  CHECK(fproxy_gap_ms(&px, 2) >= 95);
  free(r.body);

  /* 5. A 503 that carries Retry-After: 1 is waited out for the second it asks. */
  mark();
  r = run("GET", obj, NULL, (int[]){FP_503_RA}, 1, 0);
  CHECK_EQ_INT(r.status, 200);
  CHECK_EQ_INT(px.requests, 2);
  CHECK_EQ_INT(retries_since(), 1);
  CHECK(fproxy_gap_ms(&px, 1) >= 950);
  free(r.body);

  /* 6. Retries run out (max_retries 2): the third 503 is delivered, after 3 attempts. */
  kube_client_set_limits(c, &(kube_client_limits_t){.max_retries = 2});
  mark();
  r = run("GET", obj, NULL, (int[]){FP_503, FP_503, FP_503, FP_503}, 4, 0);
  CHECK_EQ_INT(r.err, 0);
  CHECK_EQ_INT(r.status, 503);
  CHECK_EQ_STR(r.reason, "ServiceUnavailable");
  CHECK_EQ_INT(px.requests, 3);
  CHECK_EQ_INT(retries_since(), 2);
  free(r.body);
  kube_client_set_limits(c, &(kube_client_limits_t){.max_retries = 5});

  /* 7. A Retry-After that does not fit in the request's timeout is not waited for: the 429 is
   * delivered at once, with its Retry-After for the caller. */
  mark();
  r = run("GET", obj, NULL, (int[]){FP_429}, 1, 500);
  CHECK_EQ_INT(r.status, 429);
  CHECK_EQ_STR(r.retry_after, "1");
  CHECK_EQ_INT(px.requests, 1);
  CHECK_EQ_INT(retries_since(), 0);
  CHECK(elapsed_ms < 500);
  free(r.body);

  /* 8. A create (POST, not idempotent): a 503 is delivered, not retried (the server may have
   * acted on it); a 429 is retried (the server did not), and the create then succeeds. */
  static const char cm_b[] = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm-b\"},"
                             "\"data\":{\"v\":\"1\"}}";
  mark();
  r = run("POST", coll, cm_b, (int[]){FP_503}, 1, 0);
  CHECK_EQ_INT(r.status, 503);
  CHECK_EQ_INT(px.requests, 1);
  CHECK_EQ_INT(retries_since(), 0);
  free(r.body);
  mark();
  r = run("POST", coll, cm_b, (int[]){FP_429}, 1, 0);
  CHECK_EQ_INT(r.status, 201);
  CHECK_EQ_INT(px.requests, 2);
  CHECK_EQ_INT(px.forwarded, 1);
  CHECK_EQ_INT(retries_since(), 1);
  CHECK(fproxy_gap_ms(&px, 1) >= 950);
  free(r.body);

  /* 9. A real 409 from the API server: creating an object that exists is a conflict
   * (AlreadyExists), delivered at once, never retried. */
  mark();
  r = run("POST", coll, cm_b, NULL, 0, 0);
  CHECK_EQ_INT(r.err, 0);
  CHECK_EQ_INT(r.status, 409);
  CHECK(r.conflict);
  CHECK(!r.not_found);
  CHECK_EQ_STR(r.reason, "AlreadyExists");
  CHECK_EQ_INT(px.requests, 1);
  CHECK_EQ_INT(px.forwarded, 1);
  CHECK_EQ_INT(retries_since(), 0);
  free(r.body);

  /* 10. So is an update from a stale resourceVersion (reason Conflict), even after an injected
   * 429 on the way: the retry reaches the server and the server's 409 is what is delivered. */
  static const char stale[] = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm-a\","
                              "\"resourceVersion\":\"1\"},\"data\":{\"v\":\"2\"}}";
  mark();
  r = run("PUT", obj, stale, (int[]){FP_429}, 1, 0);
  CHECK_EQ_INT(r.status, 409);
  CHECK(r.conflict);
  CHECK_EQ_STR(r.reason, "Conflict");
  CHECK_EQ_INT(px.requests, 2);
  CHECK_EQ_INT(retries_since(), 1);
  free(r.body);

  /* 11. A 2xx is not a conflict, nor is a 404. */
  r = run("GET", obj, NULL, NULL, 0, 0);
  CHECK_EQ_INT(r.status, 200);
  CHECK(!r.conflict);
  free(r.body);
  char missing[240];
  snprintf(missing, sizeof missing, "%s/nope", coll);
  r = run("GET", missing, NULL, NULL, 0, 0);
  CHECK_EQ_INT(r.status, 404);
  CHECK(r.not_found && !r.conflict);
  free(r.body);

  if (px.errmsg[0]) fprintf(stderr, "proxy: %s\n", px.errmsg);
  k_delete_namespace(w, ns);
  k_client_close(c);
  k_client_close(w);
  fproxy_stop(&px);
  uv_run(&loop, UV_RUN_DEFAULT);
  fproxy_free(&px);
  fproxy_unmint(dir);
  CHECK_EQ_INT(uv_loop_close(&loop), 0);
  return t_done();
}
