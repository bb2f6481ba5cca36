/* watch/fetch against the real servers of tests/servers/up (nginx chart repository, tinyproxy, the
 * fault server), whose addresses come from the environment (SRV_*; ctest sources
 * $RUDDER_SERVERS_STATE/env, the e2e.servers-up fixture): every URL kind and trust setting, basic
 * auth, redirects and what they carry, gzip and a gzip bomb, 304s, Retry-After, timeouts, dropped
 * connections, DNS failures, proxies (CONNECT and absolute-form), cancellation, connection sharing
 * and closing with requests in flight. Ends with the loop closed and nothing leaked. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>

#include "base/buf.h"
#include "watch/client.h"
#include "watch/fetch.h"
#include "watch/internal.h"
#include "t.h"

static uv_loop_t *loop;

typedef struct {
  int done, err, status;
  char *msg, *body, *url, *etag;
  size_t body_len;
  size_t streamed;
} res_t;

static void res_free(res_t *r) {
  free(r->msg);
  free(r->body);
  free(r->url);
  free(r->etag);
  memset(r, 0, sizeof *r);
}

static void on_res(const fetch_response_t *res, void *data) {
  res_t *r = data;
  r->done = 1;
  r->err = res->err;
  r->status = res->status;
  r->msg = res->errmsg ? strdup(res->errmsg) : NULL;
  r->body = strndup(res->body, res->body_len);
  r->body_len = res->body_len;
  r->url = strdup(res->url);
  const char *e = fetch_response_header(res, "etag");
  r->etag = e ? strdup(e) : NULL;
}

static int on_chunk(const char *p, size_t n, void *data) {
  ((res_t *)data)->streamed += n;
  return 0;
}

static const char *env(const char *k) {
  const char *v = getenv(k);
  if (!v) {
    fprintf(stderr, "%s is not set: run under ctest (e2e.servers-up) or source tests/servers/up's env\n", k);
    exit(2);
  }
  return v;
}

static char *slurp(const char *path, size_t *n) {
  char *p;
  size_t len;
  if (watch__read_file(path, 1u << 20, &p, &len)) return NULL;
  if (n) *n = len;
  return p;
}

static char *ca, *other_ca, *ccert, *ckey;
static size_t ca_len, other_ca_len, ccert_len, ckey_len;

/* Runs one request to completion. */
static void run(fetch_t *f, fetch_opts_t o, res_t *r) {
  memset(r, 0, sizeof *r);
  fetch_req_t *q = fetch_request(f, &o, on_res, r);
  CHECK(q != NULL);
  while (q && !r->done) uv_run(loop, UV_RUN_ONCE);
}

static char *url(const char *base, const char *path) {
  buf_t b = BUF_INIT;
  buf_printf(&b, "%s%s", base, path);
  return buf_steal(&b);
}

static bool has(const char *s, const char *sub) {
  bool ok = s && strstr(s, sub);
  if (!ok) fprintf(stderr, "  \"%s\" does not contain \"%s\"\n", s ? s : "(null)", sub);
  return ok;
}

static void test_kinds(fetch_t *f) {
  res_t r;
  char *u = url(env("SRV_HTTP_URL"), "/index.yaml");
  run(f, (fetch_opts_t){.url = u}, &r);
  CHECK_EQ_INT(r.err, 0);
  CHECK_EQ_INT(r.status, 200);
  CHECK(has(r.body, "apiVersion"));
  res_free(&r);
  free(u);

  fetch_tls_t trust = {.ca_pem = ca, .ca_len = ca_len};
  u = url(env("SRV_HTTPS_URL"), "/index.yaml");
  run(f, (fetch_opts_t){.url = u, .tls = &trust, .gzip = true}, &r);
  CHECK_EQ_INT(r.status, 200);
  CHECK(has(r.body, "apiVersion")); /* nginx gzips it; decoded */
  res_free(&r);
  /* Without the test CA (the system bundle) and with another CA: the x509 reason and the host. */
  run(f, (fetch_opts_t){.url = u}, &r);
  CHECK_EQ_INT(r.err, UV_EPROTO);
  CHECK(has(r.msg, "127.0.0.1"));
  CHECK(has(r.msg, "not correctly signed by the trusted CA"));
  res_free(&r);
  fetch_tls_t wrong = {.ca_pem = other_ca, .ca_len = other_ca_len};
  run(f, (fetch_opts_t){.url = u, .tls = &wrong}, &r);
  CHECK_EQ_INT(r.err, UV_EPROTO);
  CHECK(has(r.msg, "TLS handshake with 127.0.0.1"));
  CHECK(has(r.msg, "not correctly signed"));
  res_free(&r);
  /* The certificate names 127.0.0.1, ::1 and localhost, not "vm" (in /etc/hosts here, maybe not elsewhere). */
  free(u);
  u = url(env("SRV_FAULT_TLS_URL"), "/echo");
  run(f, (fetch_opts_t){.url = u, .tls = &trust}, &r);
  CHECK_EQ_INT(r.status, 200);
  res_free(&r);
  free(u);

  /* A name of this machine that resolves to 127.0.0.1 but is not on the certificate (skipped
   * where there is none): the x509 reason names it. */
  char hn[256] = "";
  struct addrinfo *ai = NULL, hints = {.ai_family = AF_INET};
  if (!gethostname(hn, sizeof hn - 1) && strcmp(hn, "localhost") && !getaddrinfo(hn, NULL, &hints, &ai) && ai &&
      ((struct sockaddr_in *)ai->ai_addr)->sin_addr.s_addr == htonl(INADDR_LOOPBACK)) {
    buf_t hu = BUF_INIT;
    buf_printf(&hu, "https://%s:%s/index.yaml", hn, strrchr(env("SRV_HTTPS_URL"), ':') + 1);
    run(f, (fetch_opts_t){.url = hu.data, .tls = &trust}, &r);
    CHECK_EQ_INT(r.err, UV_EPROTO);
    char want[400];
    snprintf(want, sizeof want, "server certificate is not valid for host name %s", hn);
    CHECK(has(r.msg, want));
    res_free(&r);
    buf_free(&hu);
  } else {
    fprintf(stderr, "  skipped: no host name of this machine resolves to 127.0.0.1\n");
  }
  if (ai) freeaddrinfo(ai);
  /* IPv6 loopback, where the machine has it. */
  const char *v6 = getenv("SRV_HTTPS6_URL");
  if (v6 && *v6) {
    char *u6 = url(v6, "/index.yaml");
    run(f, (fetch_opts_t){.url = u6, .tls = &trust}, &r);
    CHECK_EQ_INT(r.status, 200);
    res_free(&r);
    free(u6);
  }

  fetch_tls_t mtls = {.ca_pem = ca, .ca_len = ca_len, .cert_pem = ccert, .cert_len = ccert_len, .key_pem = ckey,
                      .key_len = ckey_len};
  u = url(env("SRV_MTLS_URL"), "/index.yaml");
  run(f, (fetch_opts_t){.url = u, .tls = &mtls}, &r);
  CHECK_EQ_INT(r.status, 200);
  res_free(&r);
  run(f, (fetch_opts_t){.url = u, .tls = &trust}, &r);
  /* nginx answers a missing client certificate with HTTP 400, said plainly. */
  CHECK(r.err || r.status == 400);
  CHECK(r.msg != NULL);
  fprintf(stderr, "  mTLS without a certificate: %s\n", r.msg ? r.msg : "");
  res_free(&r);
  free(u);

  const char *user = env("SRV_USER"), *pass = env("SRV_PASS");
  u = url(env("SRV_BASIC_URL"), "/index.yaml?token=s3cret");
  fetch_auth_t good = {.username = user, .password = pass}, bad = {.username = user, .password = "wrong"};
  run(f, (fetch_opts_t){.url = u, .tls = &trust, .auth = &good}, &r);
  CHECK_EQ_INT(r.status, 200);
  res_free(&r);
  run(f, (fetch_opts_t){.url = u, .tls = &trust, .auth = &bad}, &r);
  CHECK_EQ_INT(r.err, 0);
  CHECK_EQ_INT(r.status, 401);
  CHECK(has(r.msg, "401 Unauthorized from https://127.0.0.1:"));
  CHECK(has(r.msg, "/index.yaml?token=xxxxx"));
  CHECK(!strstr(r.msg ? r.msg : "", "s3cret") && !strstr(r.msg ? r.msg : "", pass));
  res_free(&r);
  run(f, (fetch_opts_t){.url = u, .tls = &trust}, &r);
  CHECK_EQ_INT(r.status, 401);
  res_free(&r);
  free(u);
  /* Userinfo in the URL is basic auth too, and never shown. */
  buf_t b = BUF_INIT;
  buf_printf(&b, "https://%s:%s@%s/index.yaml", user, pass, env("SRV_BASIC_URL") + 8);
  run(f, (fetch_opts_t){.url = b.data, .tls = &trust}, &r);
  CHECK_EQ_INT(r.status, 200);
  CHECK(!strstr(r.url, pass));
  res_free(&r);
  buf_free(&b);
}

static void test_redirects(fetch_t *f) {
  res_t r;
  const char *fault = env("SRV_FAULT_URL");
  char *u = url(fault, "/redirect-loop");
  run(f, (fetch_opts_t){.url = u}, &r);
  CHECK_EQ_INT(r.err, UV_ELOOP);
  CHECK(has(r.msg, "stopped after 10 redirects at http://127.0.0.1:"));
  CHECK(has(r.msg, "/redirect-loop"));
  res_free(&r);
  free(u);

  /* To another host name of the same server ("localhost" for 127.0.0.1): Authorization dropped. */
  buf_t b = BUF_INIT, to = BUF_INIT, same = BUF_INIT;
  buf_printf(&to, "http://localhost:%s/echo", strrchr(fault, ':') + 1);
  buf_printf(&b, "%s/redirect?to=", fault);
  kube_url_escape(&b, to.data);
  fetch_auth_t bearer = {.bearer = "tok3n"};
  run(f, (fetch_opts_t){.url = b.data, .auth = &bearer}, &r);
  CHECK_EQ_INT(r.status, 200);
  CHECK_EQ_STR(r.url, to.data);
  CHECK(r.body && !strstr(r.body, "tok3n"));
  res_free(&r);
  run(f, (fetch_opts_t){.url = b.data, .auth = &bearer, .pass_credentials = true}, &r);
  CHECK_EQ_INT(r.status, 200);
  CHECK(has(r.body, "Bearer tok3n"));
  res_free(&r);
  /* The same host keeps it; POST becomes GET on a 302. */
  buf_printf(&same, "%s/redirect?to=", fault);
  kube_url_escape(&same, "/echo");
  run(f, (fetch_opts_t){.url = same.data, .auth = &bearer, .method = "POST", .body = "x", .body_len = 1}, &r);
  CHECK_EQ_INT(r.status, 200);
  CHECK(has(r.body, "Bearer tok3n"));
  CHECK(has(r.body, "\"GET\""));
  res_free(&r);
  /* Not followed when asked. */
  run(f, (fetch_opts_t){.url = same.data, .max_redirects = -1}, &r);
  CHECK_EQ_INT(r.status, 302);
  res_free(&r);
  buf_free(&b);
  buf_free(&to);
  buf_free(&same);
}

static void test_bodies(fetch_t *f) {
  res_t r;
  const char *fault = env("SRV_FAULT_URL");
  char *u = url(fault, "/gzip-bomb");
  run(f, (fetch_opts_t){.url = u, .gzip = true}, &r);
  CHECK_EQ_INT(r.err, UV_E2BIG);
  CHECK(has(r.msg, "larger than the limit of 64 MiB (after gzip decoding)"));
  res_free(&r);
  run(f, (fetch_opts_t){.url = u, .gzip = true, .max_body = 1u << 20, .on_body = on_chunk}, &r);
  CHECK_EQ_INT(r.err, UV_E2BIG);
  CHECK(r.streamed <= 1u << 20);
  CHECK(has(r.msg, "1 MiB"));
  res_free(&r);
  free(u);
  u = url(fault, "/big?n=100000");
  run(f, (fetch_opts_t){.url = u, .max_body = 1000}, &r);
  CHECK_EQ_INT(r.err, UV_E2BIG);
  res_free(&r);
  run(f, (fetch_opts_t){.url = u, .on_body = on_chunk}, &r);
  CHECK_EQ_INT(r.status, 200);
  CHECK_EQ_INT(r.streamed, 100000);
  CHECK_EQ_INT(r.body_len, 0);
  res_free(&r);
  free(u);

  u = url(fault, "/etag");
  run(f, (fetch_opts_t){.url = u}, &r);
  CHECK_EQ_INT(r.status, 200);
  char *etag = r.etag ? strdup(r.etag) : NULL;
  CHECK(etag != NULL);
  res_free(&r);
  uint64_t nm = fetch_get_stats(f).not_modified;
  run(f, (fetch_opts_t){.url = u, .if_none_match = etag}, &r);
  CHECK_EQ_INT(r.err, 0);
  CHECK_EQ_INT(r.status, 304);
  CHECK(r.msg == NULL);
  CHECK_EQ_INT(fetch_get_stats(f).not_modified, nm + 1);
  res_free(&r);
  run(f, (fetch_opts_t){.url = u, .if_modified_since = "Tue, 01 Dec 2026 00:00:00 GMT"}, &r);
  CHECK_EQ_INT(r.status, 304);
  res_free(&r);
  free(etag);
  free(u);
}

static void test_faults(fetch_t *f) {
  res_t r;
  const char *fault = env("SRV_FAULT_URL");
  /* 503 with Retry-After: 1 is retried until the deadline, then delivered. */
  char *u = url(fault, "/status/503?retry-after=1");
  uint64_t before = fetch_get_stats(f).requests, t0 = uv_now(loop);
  run(f, (fetch_opts_t){.url = u, .timeout_ms = 2500}, &r);
  CHECK_EQ_INT(r.status, 503);
  CHECK(has(r.msg, "503 Service Unavailable from http://127.0.0.1:"));
  CHECK(fetch_get_stats(f).requests >= before + 2);
  CHECK(uv_now(loop) - t0 >= 1000);
  res_free(&r);
  free(u);
  u = url(fault, "/status/429?retry-after=1");
  before = fetch_get_stats(f).requests;
  run(f, (fetch_opts_t){.url = u, .timeout_ms = 1500}, &r);
  CHECK_EQ_INT(r.status, 429);
  CHECK(fetch_get_stats(f).requests >= before + 2);
  res_free(&r);
  free(u);

  u = url(fault, "/stall");
  run(f, (fetch_opts_t){.url = u, .timeout_ms = 1000}, &r);
  CHECK_EQ_INT(r.err, UV_ETIMEDOUT);
  CHECK(has(r.msg, "timed out after 1s fetching http://127.0.0.1:"));
  res_free(&r);
  free(u);
  u = url(fault, "/drop");
  run(f, (fetch_opts_t){.url = u}, &r);
  CHECK(r.err != 0);
  CHECK(has(r.msg, "127.0.0.1:"));
  CHECK(has(r.msg, "closed the connection"));
  res_free(&r);
  free(u);
  run(f, (fetch_opts_t){.url = "https://nonexistent.invalid/index.yaml"}, &r);
  CHECK(r.err != 0);
  CHECK(has(r.msg, "cannot resolve nonexistent.invalid"));
  res_free(&r);
  u = url(env("SRV_DOWN_URL"), "/x");
  run(f, (fetch_opts_t){.url = u}, &r);
  CHECK_EQ_INT(r.err, UV_ECONNREFUSED);
  CHECK(has(r.msg, "connection refused"));
  res_free(&r);
  free(u);
  run(f, (fetch_opts_t){.url = "ftp://x/y"}, &r);
  CHECK_EQ_INT(r.err, UV_EINVAL);
  res_free(&r);
}

static void on_cancel_timer(uv_timer_t *t) { fetch_cancel(t->data); }

static void test_cancel_and_share(fetch_t *f) {
  res_t r = {0};
  char *u = url(env("SRV_FAULT_URL"), "/stall");
  fetch_opts_t o = {.url = u};
  fetch_req_t *q = fetch_request(f, &o, on_res, &r);
  static uv_timer_t t;
  uv_timer_init(loop, &t);
  t.data = q;
  uv_timer_start(&t, on_cancel_timer, 200, 0);
  while (!r.done) uv_run(loop, UV_RUN_ONCE);
  CHECK_EQ_INT(r.err, UV_ECANCELED);
  uv_close((uv_handle_t *)&t, NULL);
  res_free(&r);
  free(u);

  fetch_tls_t trust = {.ca_pem = ca, .ca_len = ca_len};
  u = url(env("SRV_HTTPS_URL"), "/index.yaml");
  fetch_stats_t s0 = fetch_get_stats(f);
  enum { N = 10, ROUNDS = 3 };
  res_t rs[N];
  for (int round = 0; round < ROUNDS; round++) {
    for (int i = 0; i < N; i++) {
      memset(&rs[i], 0, sizeof rs[i]);
      fetch_opts_t po = {.url = u, .tls = &trust};
      fetch_request(f, &po, on_res, &rs[i]);
    }
    for (int i = 0; i < N; i++) {
      while (!rs[i].done) uv_run(loop, UV_RUN_ONCE);
      CHECK_EQ_INT(rs[i].status, 200);
      res_free(&rs[i]);
    }
  }
  fetch_stats_t s1 = fetch_get_stats(f);
  fprintf(stderr, "  %d requests to one origin: %llu connections\n", N * ROUNDS,
          (unsigned long long)(s1.connections - s0.connections));
  /* The first round opens N; the client keeps 8 idle (kube_client_limits_t.max_idle), so each later
   * round opens at most N - 8 more. */
  CHECK(s1.connections - s0.connections <= N + (ROUNDS - 1) * (N - 8));
  CHECK(s1.clients <= s0.clients + 1); /* one origin for all of them */
  CHECK_EQ_INT(s1.requests - s0.requests, N * ROUNDS);
  free(u);
}

static size_t file_size(const char *p) {
  size_t n = 0;
  char *s = slurp(p, &n);
  free(s);
  return s ? n : 0;
}

static void kres(const kube_response_t *res, void *data) {
  res_t *r = data;
  r->done = 1;
  r->err = res->err;
  r->status = res->status;
  r->msg = res->errmsg ? strdup(res->errmsg) : NULL;
}

static void closed(void *data) { *(int *)data = 1; }

/* The client's own proxy support (CONNECT and absolute-form), to loopback servers: fetch never
 * sends those through a proxy (Go's rule), so the client is driven directly. */
static void test_client_proxy(void) {
  const char *proxy = env("SRV_PROXY_URL"), *log = env("SRV_PROXY_LOG");
  int pport = atoi(strrchr(proxy, ':') + 1);
  const char *targets[] = {env("SRV_HTTPS_URL"), env("SRV_HTTP_URL")};
  for (int i = 0; i < 2; i++) {
    kube_config_t cfg = {0};
    char *err = NULL;
    CHECK_EQ_INT(kube_config_set_server(&cfg, targets[i], &err), 0);
    cfg.proxy_host = strdup("127.0.0.1");
    cfg.proxy_port = pport;
    cfg.proxy_auth = strdup("Basic dTpw");
    cfg.ca_pem = strndup(ca, ca_len);
    cfg.ca_pem_len = ca_len;
    kube_client_t *c;
    CHECK_EQ_INT(kube_client_new(loop, &cfg, &c, &err), 0);
    size_t before = file_size(log);
    res_t r = {0};
    kube_req_opts_t o = {.path = "/index.yaml", .accept = "*/*"};
    kube_request(c, &o, kres, &r);
    while (!r.done) uv_run(loop, UV_RUN_ONCE);
    CHECK_EQ_INT(r.status, 200);
    if (r.msg) fprintf(stderr, "  through the proxy: %s\n", r.msg);
    uv_sleep(200); /* tinyproxy writes its log line after the connection */
    CHECK(file_size(log) > before);
    res_free(&r);
    int done = 0;
    kube_client_close(c, closed, &done);
    while (!done) uv_run(loop, UV_RUN_ONCE);
    kube_config_free(&cfg);
  }
}

/* fetch with HTTPS_PROXY/HTTP_PROXY set: loopback goes direct, other hosts to the proxy. */
static void test_fetch_proxy(void) {
  const char *proxy = env("SRV_PROXY_URL"), *log = env("SRV_PROXY_LOG");
  setenv("HTTPS_PROXY", proxy, 1);
  setenv("HTTP_PROXY", proxy, 1);
  unsetenv("NO_PROXY");
  unsetenv("no_proxy");
  fetch_t *f;
  CHECK_EQ_INT(fetch_new(loop, NULL, &f), 0);
  unsetenv("HTTPS_PROXY");
  unsetenv("HTTP_PROXY");
  res_t r;
  size_t before = file_size(log);
  fetch_tls_t trust = {.ca_pem = ca, .ca_len = ca_len};
  char *u = url(env("SRV_HTTPS_URL"), "/index.yaml");
  run(f, (fetch_opts_t){.url = u, .tls = &trust}, &r);
  CHECK_EQ_INT(r.status, 200);
  res_free(&r);
  free(u);
  uv_sleep(200);
  CHECK_EQ_INT(file_size(log), before); /* loopback: direct */
  /* A name that only the proxy would look up: the proxy refuses it (its filter allows loopback only). */
  run(f, (fetch_opts_t){.url = "https://charts.example.invalid/index.yaml", .timeout_ms = 10000}, &r);
  CHECK(r.err != 0);
  CHECK(has(r.msg, "proxy 127.0.0.1:"));
  CHECK(has(r.msg, "refused to open a tunnel to charts.example.invalid:443"));
  res_free(&r);
  run(f, (fetch_opts_t){.url = "http://charts.example.invalid/index.yaml", .timeout_ms = 10000}, &r);
  CHECK(r.status >= 400);
  fprintf(stderr, "  http through the proxy: %s\n", r.msg ? r.msg : "");
  res_free(&r);
  uv_sleep(200);
  char *l = slurp(log, NULL);
  CHECK(has(l, "charts.example.invalid"));
  free(l);
  int done = 0;
  fetch_close(f, closed, &done);
  while (!done) uv_run(loop, UV_RUN_ONCE);
}

static void test_close_in_flight(void) {
  fetch_t *f;
  CHECK_EQ_INT(fetch_new(loop, NULL, &f), 0);
  char *u = url(env("SRV_FAULT_URL"), "/stall");
  res_t rs[4];
  for (int i = 0; i < 4; i++) {
    memset(&rs[i], 0, sizeof rs[i]);
    fetch_opts_t o = {.url = u};
    CHECK(fetch_request(f, &o, on_res, &rs[i]) != NULL);
  }
  for (int k = 0; k < 20; k++) uv_run(loop, UV_RUN_NOWAIT);
  int done = 0;
  fetch_close(f, closed, &done);
  for (int i = 0; i < 4; i++) {
    CHECK(rs[i].done);
    CHECK_EQ_INT(rs[i].err, UV_ECANCELED);
    res_free(&rs[i]);
  }
  while (!done) uv_run(loop, UV_RUN_ONCE);
  free(u);
}

int main(void) {
  loop = uv_default_loop();
  ca = slurp(env("SRV_CA"), &ca_len);
  other_ca = slurp(env("SRV_OTHER_CA"), &other_ca_len);
  ccert = slurp(env("SRV_CLIENT_CERT"), &ccert_len);
  ckey = slurp(env("SRV_CLIENT_KEY"), &ckey_len);
  CHECK(ca && other_ca && ccert && ckey);
  unsetenv("HTTPS_PROXY");
  unsetenv("https_proxy");
  unsetenv("HTTP_PROXY");
  unsetenv("http_proxy");
  fetch_t *f;
  CHECK_EQ_INT(fetch_new(loop, &(fetch_limits_t){.idle_timeout_ms = 5000}, &f), 0);
  fprintf(stderr, "kinds\n");
  test_kinds(f);
  fprintf(stderr, "redirects\n");
  test_redirects(f);
  fprintf(stderr, "bodies\n");
  test_bodies(f);
  fprintf(stderr, "faults\n");
  test_faults(f);
  fprintf(stderr, "cancel and sharing\n");
  test_cancel_and_share(f);
  int done = 0;
  fetch_close(f, closed, &done);
  while (!done) uv_run(loop, UV_RUN_ONCE);
  fprintf(stderr, "client proxy\n");
  test_client_proxy();
  fprintf(stderr, "fetch proxy\n");
  test_fetch_proxy();
  fprintf(stderr, "close in flight\n");
  test_close_in_flight();
  free(ca);
  free(other_ca);
  free(ccert);
  free(ckey);
  uv_run(loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(uv_loop_close(loop), 0);
  return t_done();
}
