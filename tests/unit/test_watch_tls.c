/* TLS: the client against an mbedTLS server running in a thread of this test, with a CA, server
 * and client certificates made by the openssl CLI at test time. Checks verification with the right
 * CA, a clear error and a single attempt with the wrong one, host name and IP checks, client
 * certificate authentication, insecure mode, and a large response over many records. */
#include "t.h"
#include "watch/client.h"
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];
static uv_loop_t loop;

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...) {
  char cmd[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  int r = system(cmd);
  if (r) fprintf(stderr, "command failed (%d): %s\n", r, cmd);
  return r;
}

static int make_certs(void) {
  const char *ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  int r = 0;
  r |= sh("cd %s && openssl req -x509 %s -keyout ca.key -out ca.crt -days 2 -subj /CN=rudder-test-ca 2>/dev/null", dir, ec);
  r |= sh("cd %s && openssl req -x509 %s -keyout wrong.key -out wrong.crt -days 2 -subj /CN=someone-else 2>/dev/null",
          dir, ec);
  r |= sh("cd %s && printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\nextendedKeyUsage=serverAuth\\n' > s.ext && "
          "printf 'subjectAltName=DNS:localhost\\nextendedKeyUsage=serverAuth\\n' > dns.ext && "
          "printf 'extendedKeyUsage=clientAuth\\n' > c.ext", dir);
  const char *names[] = {"s", "dns", "c"};
  for (int i = 0; i < 3; i++)
    r |= sh("cd %s && openssl req %s -keyout %s.key -out %s.csr -subj /CN=%s 2>/dev/null && "
            "openssl x509 -req -in %s.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile %s.ext -out %s.crt "
            "2>/dev/null",
            dir, ec, names[i], names[i], i == 2 ? "system:admin" : "server", names[i], names[i], names[i]);
  return r;
}

static char *slurp(const char *name, size_t *len) {
  char p[256];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "rb");
  if (!f) return NULL;
  char *b = malloc(1 << 16);
  size_t n = fread(b, 1, (1 << 16) - 1, f);
  fclose(f);
  b[n] = 0;
  *len = n;
  return b;
}

/* ---- the server thread ---- */

typedef struct tls_srv_s {
  const char *cert, *key;
  mbedtls_net_context listen;
  int port;
  pthread_t th;
  atomic_int stop, attempts, ok;
} tls_srv_t;

static void *tls_srv_main(void *arg) {
  tls_srv_t *s = arg;
  mbedtls_ssl_config conf;
  mbedtls_x509_crt crt, ca;
  mbedtls_pk_context pk;
  mbedtls_entropy_context ent;
  mbedtls_ctr_drbg_context drbg;
  mbedtls_ssl_config_init(&conf);
  mbedtls_x509_crt_init(&crt);
  mbedtls_x509_crt_init(&ca);
  mbedtls_pk_init(&pk);
  mbedtls_entropy_init(&ent);
  mbedtls_ctr_drbg_init(&drbg);
  char p[256];
  mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &ent, NULL, 0);
  snprintf(p, sizeof p, "%s/%s", dir, s->cert);
  mbedtls_x509_crt_parse_file(&crt, p);
  snprintf(p, sizeof p, "%s/%s", dir, s->key);
#if MBEDTLS_VERSION_MAJOR >= 3
  mbedtls_pk_parse_keyfile(&pk, p, NULL, mbedtls_ctr_drbg_random, &drbg);
#else
  mbedtls_pk_parse_keyfile(&pk, p, NULL);
#endif
  snprintf(p, sizeof p, "%s/ca.crt", dir);
  mbedtls_x509_crt_parse_file(&ca, p);
  mbedtls_ssl_config_defaults(&conf, MBEDTLS_SSL_IS_SERVER, MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
  mbedtls_ssl_conf_rng(&conf, mbedtls_ctr_drbg_random, &drbg);
  mbedtls_ssl_conf_own_cert(&conf, &crt, &pk);
  mbedtls_ssl_conf_ca_chain(&conf, &ca, NULL);
  mbedtls_ssl_conf_authmode(&conf, MBEDTLS_SSL_VERIFY_REQUIRED); /* clients must present a certificate */
  static char big[300000];
  memset(big, 'b', sizeof big);
  while (!s->stop) {
    mbedtls_net_context cl;
    mbedtls_net_init(&cl);
    if (mbedtls_net_accept(&s->listen, &cl, NULL, 0, NULL)) break;
    if (s->stop) { mbedtls_net_free(&cl); break; }
    s->attempts++;
    mbedtls_ssl_context ssl;
    mbedtls_ssl_init(&ssl);
    mbedtls_ssl_setup(&ssl, &conf);
    mbedtls_ssl_set_bio(&ssl, &cl, mbedtls_net_send, mbedtls_net_recv, NULL);
    int r;
    while ((r = mbedtls_ssl_handshake(&ssl)) == MBEDTLS_ERR_SSL_WANT_READ || r == MBEDTLS_ERR_SSL_WANT_WRITE) {}
    if (r == 0) {
      s->ok++;
      char req[4096];
      size_t n = 0;
      while (n < sizeof req - 1) {
        int k = mbedtls_ssl_read(&ssl, (unsigned char *)req + n, sizeof req - 1 - n);
        if (k <= 0) break;
        n += (size_t)k;
        req[n] = 0;
        if (strstr(req, "\r\n\r\n")) break;
      }
      const char *body = strncmp(req, "GET /big ", 9) == 0 ? big : "secure";
      size_t blen = body == big ? sizeof big : strlen(body);
      char head[128];
      int h = snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n", blen);
      mbedtls_ssl_write(&ssl, (unsigned char *)head, (size_t)h);
      for (size_t off = 0; off < blen;) {
        int k = mbedtls_ssl_write(&ssl, (const unsigned char *)body + off, blen - off);
        if (k <= 0) break;
        off += (size_t)k;
      }
      mbedtls_ssl_close_notify(&ssl);
    }
    mbedtls_ssl_free(&ssl);
    mbedtls_net_free(&cl);
  }
  mbedtls_ssl_config_free(&conf);
  mbedtls_x509_crt_free(&crt);
  mbedtls_x509_crt_free(&ca);
  mbedtls_pk_free(&pk);
  mbedtls_ctr_drbg_free(&drbg);
  mbedtls_entropy_free(&ent);
  return NULL;
}

static int tls_srv_start(tls_srv_t *s, const char *cert, const char *key) {
  memset(s, 0, sizeof *s);
  s->cert = cert;
  s->key = key;
  mbedtls_net_init(&s->listen);
  if (mbedtls_net_bind(&s->listen, "127.0.0.1", "0", MBEDTLS_NET_PROTO_TCP)) return -1;
  struct sockaddr_in a;
  socklen_t len = sizeof a;
  getsockname(s->listen.fd, (struct sockaddr *)&a, &len);
  s->port = ntohs(a.sin_port);
  return pthread_create(&s->th, NULL, tls_srv_main, s);
}

static void tls_srv_stop(tls_srv_t *s) {
  s->stop = 1;
  /* A plain connection wakes the blocking accept. */
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)s->port)};
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) perror("wake connect");
  close(fd);
  pthread_join(s->th, NULL);
  mbedtls_net_free(&s->listen);
}

/* ---- client side ---- */

typedef struct rec_s {
  int calls, err, status;
  size_t body_len;
  char *errmsg, *body;
} rec_t;

static void rec_cb(const kube_response_t *res, void *data) {
  rec_t *r = data;
  r->calls++;
  r->err = res->err;
  r->status = res->status;
  r->body_len = res->body_len;
  free(r->errmsg);
  free(r->body);
  r->errmsg = res->errmsg ? strdup(res->errmsg) : NULL;
  r->body = strndup(res->body, res->body_len < 64 ? res->body_len : 64);
}

static void rec_free(rec_t *r) {
  free(r->errmsg);
  free(r->body);
  memset(r, 0, sizeof *r);
}

static int deadline;
static void deadline_cb(uv_timer_t *t) { deadline = 1; }

static void run_until(int *flag, uint64_t ms) {
  uv_timer_t t;
  uv_timer_init(&loop, &t);
  deadline = 0;
  uv_timer_start(&t, deadline_cb, ms, 0);
  while ((!flag || !*flag) && !deadline) uv_run(&loop, UV_RUN_ONCE);
  uv_close((uv_handle_t *)&t, NULL);
  uv_run(&loop, UV_RUN_NOWAIT);
}

static void closed_cb(void *d) { (*(int *)d)++; }

typedef struct opts_s {
  const char *host;
  int port;
  const char *ca;
  int client_cert;
  const char *sni;
  int insecure;
  const char *path;
  const char *exec_mode; /* credentials from the exec plugin script run with this mode */
} opts_t;

static kube_client_stats_t last_stats;
static char plugin[128];

/* An exec credential plugin: prints the client certificate and key that its second argument names. */
static const char plugin_text[] =
    "#!/bin/sh\n"
    "d=$1\n"
    "echo \"$2\" >> \"$d/runs\"\n"
    "pem() { awk '{printf \"%s\\\\n\", $0}' \"$d/$1\"; }\n"
    "case $2 in\n"
    "  good) c=$(pem c.crt); k=$(pem c.key);;\n"
    "  wrong) c=$(pem wrong.crt); k=$(pem wrong.key);;\n"
    "  mismatch) c=$(pem c.crt); k=$(pem wrong.key);;\n"
    "  nokey) c=$(pem c.crt); k=;;\n"
    "  badpem) c='-----BEGIN CERTIFICATE-----\\nbm90IGEgY2VydGlmaWNhdGU=\\n-----END CERTIFICATE-----\\n'; k=$(pem c.key);;\n"
    "esac\n"
    "printf '{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1\",\"status\":"
    "{\"clientCertificateData\":\"%s\",\"clientKeyData\":\"%s\"}}' \"$c\" \"$k\"\n";

/* Makes one request with a fresh client and records the outcome. */
static void one(const opts_t *o, rec_t *r) {
  kube_config_t cfg = {0};
  char url[128], *err = NULL;
  snprintf(url, sizeof url, "https://%s:%d", o->host, o->port);
  kube_config_set_server(&cfg, url, &err);
  cfg.ca_pem = slurp(o->ca, &cfg.ca_pem_len);
  if (o->client_cert) {
    cfg.cert_pem = slurp("c.crt", &cfg.cert_pem_len);
    cfg.key_pem = slurp("c.key", &cfg.key_pem_len);
  }
  cfg.tls_server_name = o->sni ? strdup(o->sni) : NULL;
  cfg.insecure_skip_tls_verify = o->insecure;
  if (o->exec_mode) {
    kube_exec_t *e = calloc(1, sizeof *e);
    e->command = strdup(plugin);
    e->n_args = 2;
    e->args = calloc(2, sizeof *e->args);
    e->args[0] = strdup(dir);
    e->args[1] = strdup(o->exec_mode);
    e->env = calloc(1, sizeof *e->env);
    e->api_version = strdup("client.authentication.k8s.io/v1");
    cfg.exec = e;
  }
  kube_client_t *c = NULL;
  int rc = kube_client_new(&loop, &cfg, &c, &err);
  CHECK_EQ_INT(rc, 0);
  kube_config_free(&cfg);
  if (rc) {
    fprintf(stderr, "kube_client_new: %s\n", err);
    free(err);
    return;
  }
  kube_get(c, o->path ? o->path : "/", rec_cb, r);
  run_until(&r->calls, 10000);
  last_stats = kube_client_get_stats(c);
  int closed = 0;
  kube_client_close(c, closed_cb, &closed);
  run_until(&closed, 5000);
  CHECK_EQ_INT(closed, 1);
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  snprintf(dir, sizeof dir, "/tmp/rudder-tls-XXXXXX");
  if (!mkdtemp(dir)) return 2;
  if (make_certs()) {
    fprintf(stderr, "openssl could not make the test certificates\n");
    return 2;
  }
  uv_loop_init(&loop);
  tls_srv_t full, dnsonly;
  CHECK_EQ_INT(tls_srv_start(&full, "s.crt", "s.key"), 0);
  CHECK_EQ_INT(tls_srv_start(&dnsonly, "dns.crt", "dns.key"), 0);
  rec_t r = {0};
  char want[160];

  /* The right CA, an IP host checked against the IP SAN, and a client certificate. */
  opts_t o = {.host = "127.0.0.1", .port = full.port, .ca = "ca.crt", .client_cert = 1};
  one(&o, &r);
  CHECK_EQ_INT(r.err, 0);
  CHECK_EQ_INT(r.status, 200);
  CHECK_EQ_STR(r.body, "secure");
  if (r.err) fprintf(stderr, "right CA: %s\n", r.errmsg);
  rec_free(&r);

  /* A large body over many TLS records. */
  o.path = "/big";
  one(&o, &r);
  CHECK_EQ_INT(r.status, 200);
  CHECK_EQ_INT(r.body_len, 300000);
  rec_free(&r);
  o.path = NULL;

  /* The wrong CA: a clear error, and exactly one attempt (no retry storm). */
  int before = full.attempts;
  o.ca = "wrong.crt";
  one(&o, &r);
  CHECK_EQ_INT(r.calls, 1);
  CHECK_EQ_INT(r.err, UV_EPROTO);
  snprintf(want, sizeof want, "TLS handshake with 127.0.0.1:%d failed: server certificate verification failed", full.port);
  CHECK(r.errmsg && strstr(r.errmsg, want) && strstr(r.errmsg, "not correctly signed by the trusted CA"));
  if (r.errmsg) printf("wrong CA: %s\n", r.errmsg);
  rec_free(&r);
  run_until(NULL, 300);
  CHECK_EQ_INT(full.attempts - before, 1);

  /* Insecure mode accepts the same server (with a warning). */
  o.insecure = 1;
  one(&o, &r);
  CHECK_EQ_INT(r.status, 200);
  rec_free(&r);
  o.insecure = 0;
  o.ca = "ca.crt";

  /* Host name checks through tls-server-name. */
  o.sni = "wrong.example";
  one(&o, &r);
  CHECK_EQ_INT(r.err, UV_EPROTO);
  CHECK(r.errmsg && strstr(r.errmsg, "not valid for host name wrong.example"));
  if (r.errmsg) printf("wrong name: %s\n", r.errmsg);
  rec_free(&r);
  o.sni = "localhost";
  one(&o, &r);
  CHECK_EQ_INT(r.status, 200);
  rec_free(&r);
  o.sni = NULL;

  /* A certificate without the server's IP is refused when connecting by IP ... */
  o.port = dnsonly.port;
  one(&o, &r);
  CHECK_EQ_INT(r.err, UV_EPROTO);
  CHECK(r.errmsg && strstr(r.errmsg, "not valid for IP 127.0.0.1"));
  if (r.errmsg) printf("IP not in SAN: %s\n", r.errmsg);
  rec_free(&r);
  /* ... and accepted by name, resolved asynchronously. */
  o.host = "localhost";
  one(&o, &r);
  CHECK_EQ_INT(r.status, 200);
  if (r.err) fprintf(stderr, "localhost: %s\n", r.errmsg);
  rec_free(&r);

  /* Without a client certificate the server refuses the handshake. */
  o.host = "127.0.0.1";
  o.port = full.port;
  o.client_cert = 0;
  one(&o, &r);
  CHECK(r.err < 0);
  CHECK(r.errmsg && strstr(r.errmsg, "TLS") && strstr(r.errmsg, "127.0.0.1"));
  if (r.errmsg) printf("no client cert: %s\n", r.errmsg);
  rec_free(&r);

  /* Client certificates from an exec credential plugin, presented on the handshake. */
  snprintf(plugin, sizeof plugin, "%s/plugin.sh", dir);
  FILE *pf = fopen(plugin, "w");
  fputs(plugin_text, pf);
  fclose(pf);
  chmod(plugin, 0755);
  o.exec_mode = "good";
  one(&o, &r);
  CHECK_EQ_INT(r.status, 200);
  CHECK_EQ_STR(r.body, "secure");
  CHECK_EQ_INT(last_stats.exec_runs, 1);
  if (r.err) fprintf(stderr, "exec cert: %s\n", r.errmsg);
  rec_free(&r);

  /* A certificate the server does not trust: refused on the handshake, the plugin is run once
   * more, then one clear error naming the plugin; two handshakes in all. */
  before = full.attempts;
  o.exec_mode = "wrong";
  one(&o, &r);
  CHECK_EQ_INT(r.calls, 1);
  CHECK_EQ_INT(r.err, UV_EPROTO);
  CHECK(r.errmsg && strstr(r.errmsg, "TLS handshake with 127.0.0.1:") && strstr(r.errmsg, "unknown_ca") &&
        strstr(r.errmsg, "refused the client certificate") && strstr(r.errmsg, plugin));
  if (r.errmsg) printf("exec cert refused: %s\n", r.errmsg);
  CHECK_EQ_INT(last_stats.exec_runs, 2);
  CHECK_EQ_INT(last_stats.auth_retries, 1);
  rec_free(&r);
  run_until(NULL, 300);
  CHECK_EQ_INT(full.attempts - before, 2);

  /* Unusable answers: one clear error naming the plugin and what is wrong, no connection at all. */
  struct {
    const char *mode, *want;
  } bad[] = {
      {"nokey", "returned status.clientCertificateData without status.clientKeyData"},
      {"badpem", "returned an unusable client certificate or key: cannot parse the client certificate"},
      {"mismatch", "returned an unusable client certificate or key: the client certificate and key do not go together"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    before = full.attempts;
    o.exec_mode = bad[i].mode;
    one(&o, &r);
    CHECK_EQ_INT(r.calls, 1);
    CHECK_EQ_INT(r.err, UV_EACCES);
    CHECK(r.errmsg && strstr(r.errmsg, plugin) && strstr(r.errmsg, bad[i].want));
    if (r.errmsg) printf("exec %s: %s\n", bad[i].mode, r.errmsg);
    else fprintf(stderr, "exec %s: no error\n", bad[i].mode);
    CHECK_EQ_INT(last_stats.exec_runs, 1);
    rec_free(&r);
    run_until(NULL, 100);
    CHECK_EQ_INT(full.attempts - before, 0);
  }
  o.exec_mode = NULL;

  /* A bad CA bundle is reported when the client is made. */
  kube_config_t cfg = {0};
  char *err = NULL;
  kube_config_set_server(&cfg, "https://127.0.0.1:1", &err);
  cfg.ca_pem = strdup("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n");
  cfg.ca_pem_len = strlen(cfg.ca_pem);
  kube_client_t *c = NULL;
  CHECK(kube_client_new(&loop, &cfg, &c, &err) < 0);
  CHECK(c == NULL);
  CHECK(err && strstr(err, "certificate authority"));
  free(err);
  kube_config_free(&cfg);

  tls_srv_stop(&full);
  tls_srv_stop(&dnsonly);
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(uv_loop_close(&loop), 0);
  sh("rm -rf %s", dir);
  return t_done();
}
