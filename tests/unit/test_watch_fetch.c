/* watch/fetch against in-process servers on loopback (tests/unit/test_watch_server.h), for what
 * the real servers of e2e.watch_fetch_servers do not do: 301/303/307/308 and what each does to the
 * method and body, relative Locations, a 3xx without Location, an unusable Location, credentials
 * kept for another port of the same host and dropped for good after another host, the Host
 * header, gzip in several members, truncated and on an error page, early Content-Length limits,
 * readers that abandon or cancel from on_body, origins bounded by max_clients and closed when idle.
 * Ends with the loop closed and nothing leaked. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "base/buf.h"
#include "base/gz.h"
#include "watch/fetch.h"
#include "t.h"
#include "test_watch_server.h"

static uv_loop_t *loop;
static tsrv_t s1, s2;

static void reply(tconn_t *c, const char *head, const char *body, size_t n) {
  buf_t b = BUF_INIT;
  buf_printf(&b, "HTTP/1.1 %s\r\nContent-Length: %zu\r\n\r\n", head, n);
  buf_append(&b, body, n);
  tsrv_write(c, b.data, b.len);
  buf_free(&b);
}

static void gz_reply(tconn_t *c, const char *status, const char *text, int members, size_t cut) {
  buf_t all = BUF_INIT;
  for (int i = 0; i < members; i++) {
    unsigned char *z;
    size_t zl;
    gz_compress(text, strlen(text), -1, &z, &zl);
    buf_append(&all, z, zl);
    free(z);
  }
  buf_t h = BUF_INIT;
  buf_printf(&h, "%s\r\nContent-Encoding: gzip", status);
  reply(c, h.data, all.data, all.len - cut);
  buf_free(&h);
  buf_free(&all);
}

static void handler(tconn_t *c, const char *method, const char *url, const char *headers, const char *body,
                    size_t body_len) {
  int other = c->s == &s1 ? s2.port : s1.port, self = c->s->port;
  buf_t b = BUF_INIT;
  if (!strcmp(method, "CONNECT")) {
    /* Acting as a proxy that refuses tunnels. */
    buf_printf(&b, "CONNECT %s\n%s", url, headers);
    reply(c, "403 Forbidden", b.data, b.len);
  } else if (!strncmp(url, "http://", 7) || !strncmp(url, "/echo", 5) || !strncmp(url, "/rel/c", 6)) {
    /* /echo, and, acting as a proxy, any absolute-form request. */
    buf_printf(&b, "%s %s\n%s\n", method, url, headers);
    buf_append(&b, body, body_len);
    reply(c, "200 OK", b.data, b.len);
  } else if (!strcmp(url, "/r301") || !strcmp(url, "/r302") || !strcmp(url, "/r303") || !strcmp(url, "/r307") ||
             !strcmp(url, "/r308")) {
    buf_printf(&b, "%s Moved\r\nLocation: /echo", url + 2);
    reply(c, b.data, "", 0);
  } else if (!strcmp(url, "/rel/a/b")) {
    reply(c, "302 Found\r\nLocation: ../c?x=1", "", 0);
  } else if (!strcmp(url, "/noloc")) {
    reply(c, "302 Found", "no location", 11);
  } else if (!strcmp(url, "/badloc")) {
    reply(c, "302 Found\r\nLocation: ftp://x/", "", 0);
  } else if (!strcmp(url, "/to-port")) {
    buf_printf(&b, "302 Found\r\nLocation: http://127.0.0.1:%d/echo", other);
    reply(c, b.data, "", 0);
  } else if (!strcmp(url, "/to-other")) {
    buf_printf(&b, "302 Found\r\nLocation: http://localhost:%d/back", self);
    reply(c, b.data, "", 0);
  } else if (!strcmp(url, "/back")) {
    buf_printf(&b, "302 Found\r\nLocation: http://127.0.0.1:%d/echo", self);
    reply(c, b.data, "", 0);
  } else if (!strcmp(url, "/gz2")) {
    gz_reply(c, "200 OK", "hello ", 2, 0);
  } else if (!strcmp(url, "/gztrunc")) {
    gz_reply(c, "200 OK", "hello hello hello hello", 1, 6);
  } else if (!strcmp(url, "/gz404")) {
    gz_reply(c, "404 Not Found", "no such chart", 1, 0);
  } else if (!strcmp(url, "/bigcl")) {
    tsrv_puts(c, "HTTP/1.1 200 OK\r\nContent-Length: 10000000\r\n\r\nxx");
  } else if (!strcmp(url, "/big")) {
    char *x = malloc(100000);
    memset(x, 'x', 100000);
    reply(c, "200 OK", x, 100000);
    free(x);
  } else {
    reply(c, "404 Not Found", "", 0);
  }
  buf_free(&b);
}

typedef struct {
  int done, err, status;
  char *msg, *body, *url;
  size_t streamed;
  int abort_with, cancel_in_body;
  fetch_req_t *self;
} res_t;

static void res_free(res_t *r) {
  free(r->msg);
  free(r->body);
  free(r->url);
  memset(r, 0, sizeof *r);
}

static void on_res(const fetch_response_t *res, void *data) {
  res_t *r = data;
  r->done = 1;
  r->err = res->err;
  r->status = res->status;
  r->msg = res->errmsg ? strdup(res->errmsg) : NULL;
  r->body = strndup(res->body, res->body_len);
  r->url = strdup(res->url);
}

static int on_chunk(const char *p, size_t n, void *data) {
  res_t *r = data;
  r->streamed += n;
  if (r->cancel_in_body) fetch_cancel(r->self);
  return r->abort_with;
}

static void run(fetch_t *f, fetch_opts_t o, res_t *r) {
  int abort_with = r->abort_with, cib = r->cancel_in_body;
  memset(r, 0, sizeof *r);
  r->abort_with = abort_with;
  r->cancel_in_body = cib;
  r->self = fetch_request(f, &o, on_res, r);
  CHECK(r->self != NULL);
  while (r->self && !r->done) uv_run(loop, UV_RUN_ONCE);
}

static char *u1(const char *path) {
  buf_t b = BUF_INIT;
  buf_printf(&b, "http://127.0.0.1:%d%s", s1.port, path);
  return buf_steal(&b);
}

static bool has(const char *s, const char *sub) {
  bool ok = s && strstr(s, sub);
  if (!ok) fprintf(stderr, "  \"%s\" does not contain \"%s\"\n", s ? s : "(null)", sub);
  return ok;
}

static void test_methods(fetch_t *f) {
  res_t r = {0};
  char *u;
  /* 307 and 308 keep the method and the body; 301/302 turn a POST into a GET, 303 a PUT. */
  const char *keep[] = {"/r307", "/r308"};
  for (int i = 0; i < 2; i++) {
    u = u1(keep[i]);
    run(f, (fetch_opts_t){.url = u, .method = "POST", .body = "payload", .body_len = 7, .content_type = "text/x"}, &r);
    CHECK_EQ_INT(r.status, 200);
    CHECK(has(r.body, "POST /echo"));
    CHECK(has(r.body, "payload"));
    CHECK(has(r.body, "Content-Type: text/x"));
    res_free(&r);
    free(u);
  }
  const char *to_get[] = {"/r301", "/r302", "/r303"};
  for (int i = 0; i < 3; i++) {
    u = u1(to_get[i]);
    run(f, (fetch_opts_t){.url = u, .method = i == 2 ? "PUT" : "POST", .body = "payload", .body_len = 7,
                          .content_type = "text/x"}, &r);
    CHECK_EQ_INT(r.status, 200);
    CHECK(has(r.body, "GET /echo"));
    CHECK(!strstr(r.body, "payload") && !strstr(r.body, "text/x"));
    res_free(&r);
    free(u);
  }
  /* A relative Location, and the Host header as the URL writes it. */
  u = u1("/rel/a/b");
  run(f, (fetch_opts_t){.url = u}, &r);
  CHECK_EQ_INT(r.status, 200);
  CHECK(has(r.body, "GET /rel/c?x=1"));
  char host[64];
  snprintf(host, sizeof host, "Host: 127.0.0.1:%d\n", s1.port);
  CHECK(has(r.body, host));
  CHECK(!strstr(r.body, "Authorization"));
  CHECK(has(r.url, "/rel/c?x=1"));
  CHECK_EQ_INT(fetch_get_stats(f).redirects >= 6, 1);
  res_free(&r);
  free(u);
  u = u1("/noloc");
  run(f, (fetch_opts_t){.url = u}, &r);
  CHECK_EQ_INT(r.status, 302);
  CHECK_EQ_STR(r.body, "no location");
  res_free(&r);
  free(u);
  u = u1("/badloc");
  run(f, (fetch_opts_t){.url = u}, &r);
  CHECK_EQ_INT(r.err, UV_EINVAL);
  CHECK(has(r.msg, "unusable Location: the scheme is not http or https"));
  res_free(&r);
  free(u);
}

static void test_credentials(fetch_t *f) {
  res_t r = {0};
  fetch_auth_t basic = {.username = "u", .password = "p"};
  kube_header_t h[] = {{"Cookie", "c=1"}, {"X-Extra", "yes"}};
  /* Another port of the same host keeps them (Go compares host names). */
  char *u = u1("/to-port");
  run(f, (fetch_opts_t){.url = u, .auth = &basic, .headers = h, .n_headers = 2}, &r);
  CHECK_EQ_INT(r.status, 200);
  CHECK(has(r.body, "Authorization: Basic dTpw"));
  CHECK(has(r.body, "Cookie: c=1"));
  res_free(&r);
  free(u);
  /* Another host drops them, and they stay dropped when a redirect comes back. */
  u = u1("/to-other");
  run(f, (fetch_opts_t){.url = u, .auth = &basic, .headers = h, .n_headers = 2}, &r);
  CHECK_EQ_INT(r.status, 200);
  CHECK(!strstr(r.body, "Authorization") && !strstr(r.body, "Cookie"));
  CHECK(has(r.body, "X-Extra: yes"));
  res_free(&r);
  run(f, (fetch_opts_t){.url = u, .auth = &basic, .pass_credentials = true}, &r);
  CHECK(has(r.body, "Authorization: Basic dTpw"));
  res_free(&r);
  free(u);
  /* Userinfo in the URL: basic auth, never in messages or the answered URL. */
  buf_t b = BUF_INIT;
  buf_printf(&b, "http://us%%40er:s3cret@127.0.0.1:%d/missing?sig=abc", s1.port);
  run(f, (fetch_opts_t){.url = b.data}, &r);
  CHECK_EQ_INT(r.status, 404);
  CHECK(has(r.msg, "404 Not Found from http://127.0.0.1:"));
  CHECK(has(r.msg, "/missing?sig=xxxxx"));
  CHECK(!strstr(r.msg, "s3cret") && !strstr(r.msg, "abc") && !strstr(r.url, "s3cret"));
  res_free(&r);
  buf_free(&b);
}

static void test_bodies(fetch_t *f) {
  res_t r = {0};
  char *u = u1("/gz2");
  run(f, (fetch_opts_t){.url = u, .gzip = true}, &r);
  CHECK_EQ_INT(r.status, 200);
  CHECK_EQ_STR(r.body, "hello hello ");
  res_free(&r);
  run(f, (fetch_opts_t){.url = u}, &r); /* not asked for: delivered as sent */
  CHECK(r.body && (unsigned char)r.body[0] == 0x1f);
  res_free(&r);
  free(u);
  u = u1("/gztrunc");
  run(f, (fetch_opts_t){.url = u, .gzip = true}, &r);
  CHECK_EQ_INT(r.err, UV_EPROTO);
  CHECK(has(r.msg, "ends in the middle of its gzip stream"));
  res_free(&r);
  free(u);
  u = u1("/gz404");
  run(f, (fetch_opts_t){.url = u, .gzip = true}, &r);
  CHECK_EQ_INT(r.status, 404);
  CHECK_EQ_STR(r.body, "no such chart");
  res_free(&r);
  free(u);
  u = u1("/bigcl");
  run(f, (fetch_opts_t){.url = u, .max_body = 1000}, &r);
  CHECK_EQ_INT(r.err, UV_E2BIG);
  CHECK(has(r.msg, "larger than the limit of 1000 bytes"));
  res_free(&r);
  free(u);
  u = u1("/big");
  r.abort_with = UV_ECONNABORTED;
  run(f, (fetch_opts_t){.url = u, .on_body = on_chunk}, &r);
  CHECK_EQ_INT(r.err, UV_ECONNABORTED);
  CHECK(has(r.msg, "abandoned"));
  res_free(&r);
  r.cancel_in_body = 1;
  run(f, (fetch_opts_t){.url = u, .on_body = on_chunk}, &r);
  CHECK_EQ_INT(r.err, UV_ECANCELED);
  CHECK(r.streamed > 0 && r.streamed < 100000);
  res_free(&r);
  free(u);
}

static void on_timer(uv_timer_t *t) { (void)t; }

static void test_origins(void) {
  fetch_t *f;
  CHECK_EQ_INT(fetch_new(loop, &(fetch_limits_t){.max_clients = 1, .idle_timeout_ms = 200}, &f), 0);
  res_t r = {0};
  char *a = u1("/echo");
  buf_t b = BUF_INIT;
  buf_printf(&b, "http://127.0.0.1:%d/echo", s2.port);
  run(f, (fetch_opts_t){.url = a}, &r);
  res_free(&r);
  run(f, (fetch_opts_t){.url = b.data}, &r);
  res_free(&r);
  CHECK_EQ_INT(fetch_get_stats(f).clients, 1); /* the first origin, idle, made room */
  static uv_timer_t t;
  uv_timer_init(loop, &t);
  uv_timer_start(&t, on_timer, 600, 0);
  while (uv_is_active((uv_handle_t *)&t)) uv_run(loop, UV_RUN_ONCE);
  uv_close((uv_handle_t *)&t, NULL);
  CHECK_EQ_INT(fetch_get_stats(f).clients, 0); /* idle for longer than idle_timeout_ms */
  CHECK_EQ_INT(fetch_get_stats(f).requests, 2);
  free(a);
  buf_free(&b);
  fetch_close(f, NULL, NULL);
}

/* Proxies from the environment, read at fetch_new: s1 plays the proxy. */
static void test_env_proxies(void) {
  res_t r = {0};
  buf_t px = BUF_INIT;
  buf_printf(&px, "http://pu:pp@127.0.0.1:%d", s1.port);
  setenv("HTTP_PROXY", px.data, 1);
  setenv("HTTPS_PROXY", px.data, 1);
  setenv("NO_PROXY", "skip.test, .direct.test", 1);
  fetch_t *f;
  CHECK_EQ_INT(fetch_new(loop, NULL, &f), 0);
  unsetenv("HTTP_PROXY");
  unsetenv("HTTPS_PROXY");
  unsetenv("NO_PROXY");
  /* http: the absolute form, Host as the URL writes it, Proxy-Authorization from the userinfo. */
  run(f, (fetch_opts_t){.url = "http://charts.example.test:8080/index.yaml?x=1"}, &r);
  CHECK_EQ_INT(r.status, 200);
  CHECK(has(r.body, "GET http://charts.example.test:8080/index.yaml?x=1\n"));
  CHECK(has(r.body, "Host: charts.example.test:8080\n"));
  CHECK(has(r.body, "Proxy-Authorization: Basic cHU6cHA=\n"));
  res_free(&r);
  /* https: CONNECT host:port, refused here; the message names the proxy (not its password). */
  run(f, (fetch_opts_t){.url = "https://charts.example.test/index.yaml"}, &r);
  CHECK_EQ_INT(r.err, UV_ECONNREFUSED);
  char want[128];
  snprintf(want, sizeof want, "proxy 127.0.0.1:%d refused to open a tunnel to charts.example.test:443: HTTP 403", s1.port);
  CHECK(has(r.msg, want));
  CHECK(!strstr(r.msg, "pp"));
  res_free(&r);
  /* NO_PROXY and loopback go direct (here: to a name that does not resolve, and to s2). */
  run(f, (fetch_opts_t){.url = "http://a.direct.test/x", .timeout_ms = 20000}, &r);
  CHECK(has(r.msg, "cannot resolve a.direct.test"));
  res_free(&r);
  buf_t d = BUF_INIT;
  buf_printf(&d, "http://localhost:%d/echo", s2.port);
  int before = s1.requests;
  run(f, (fetch_opts_t){.url = d.data}, &r);
  CHECK_EQ_INT(r.status, 200);
  CHECK(has(r.body, "GET /echo"));
  CHECK_EQ_INT(s1.requests, before);
  res_free(&r);
  buf_free(&d);
  fetch_close(f, NULL, NULL);

  /* Only http:// proxies; and in a CGI environment HTTP_PROXY is refused, as Go refuses it. */
  setenv("HTTPS_PROXY", "socks5://127.0.0.1:1080", 1);
  setenv("HTTP_PROXY", px.data, 1);
  setenv("REQUEST_METHOD", "GET", 1);
  CHECK_EQ_INT(fetch_new(loop, NULL, &f), 0);
  unsetenv("HTTPS_PROXY");
  unsetenv("HTTP_PROXY");
  unsetenv("REQUEST_METHOD");
  run(f, (fetch_opts_t){.url = "https://charts.example.test/"}, &r);
  CHECK_EQ_INT(r.err, UV_EINVAL);
  CHECK(has(r.msg, "proxy socks5://127.0.0.1:1080 (from HTTPS_PROXY): only http:// proxies are supported"));
  res_free(&r);
  run(f, (fetch_opts_t){.url = "http://charts.example.test/"}, &r);
  CHECK_EQ_INT(r.err, UV_EINVAL);
  CHECK(has(r.msg, "refusing to use HTTP_PROXY value in CGI environment"));
  res_free(&r);
  /* A CA that does not parse: said when the origin is made. */
  buf_t hu = BUF_INIT;
  buf_printf(&hu, "https://127.0.0.1:%d/", s2.port);
  static const char bad_ca[] = "-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n";
  fetch_tls_t bad = {.ca_pem = bad_ca, .ca_len = sizeof bad_ca - 1};
  run(f, (fetch_opts_t){.url = hu.data, .tls = &bad}, &r);
  CHECK(r.err != 0);
  CHECK(has(r.msg, "cannot parse the certificate authority data"));
  res_free(&r);
  buf_free(&hu);
  fetch_close(f, NULL, NULL);
  buf_free(&px);
}

int main(void) {
  loop = uv_default_loop();
  unsetenv("HTTP_PROXY");
  unsetenv("http_proxy");
  unsetenv("no_proxy");
  unsetenv("https_proxy");
  CHECK_EQ_INT(tsrv_start(&s1, loop, handler), 0);
  CHECK_EQ_INT(tsrv_start(&s2, loop, handler), 0);
  fetch_t *f;
  CHECK_EQ_INT(fetch_new(loop, NULL, &f), 0);
  test_methods(f);
  test_credentials(f);
  test_bodies(f);
  fetch_close(f, NULL, NULL);
  test_origins();
  test_env_proxies();
  tsrv_stop(&s1);
  tsrv_stop(&s2);
  uv_run(loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(uv_loop_close(loop), 0);
  return t_done();
}
