/* Credentials and connection failures against the real API server: a rotating service-account
 * token file (picked up on a 401 and on the refresh interval), an exec credential plugin (a shell
 * script), a wrong CA (a clear TLS error and no retry storm), and unreachable servers. */
#include "test_watch_kube.h"
#include "test_watch_proxy.h"
#include <sys/stat.h>

static char dir[64], ns[64];

static void write_file(const char *path, const char *text, int mode) {
  char tmp[300];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  fputs(text, f);
  fclose(f);
  chmod(tmp, (mode_t)mode);
  rename(tmp, path);
}

/* A token for service account sa (created when missing). */
static char *sa_token(kube_client_t *c, const char *sa) {
  char path[256], body[256];
  snprintf(path, sizeof path, "/api/v1/namespaces/%s/serviceaccounts", ns);
  snprintf(body, sizeof body, "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\"%s\"}}", sa);
  kres_t r = k_do(c, "POST", path, body);
  kres_free(&r);
  snprintf(path, sizeof path, "/api/v1/namespaces/%s/serviceaccounts/%s/token", ns, sa);
  r = k_do(c, "POST", path, "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenRequest\",\"spec\":{\"expirationSeconds\":3600}}");
  cJSON *j = k_ok(&r) ? cJSON_Parse(r.body) : NULL;
  if (!j) fprintf(stderr, "token request: %s\n", r.errmsg ? r.errmsg : "?");
  kres_free(&r);
  char *t = j ? strdup(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "status"), "token"))) : NULL;
  cJSON_Delete(j);
  return t;
}

/* A client for the same server and CA, with credentials set up by the caller. */
static kube_client_t *client_with(void (*setup)(kube_config_t *cfg, void *d), void *d) {
  kube_config_t cfg;
  char *err = NULL;
  kube_config_load(NULL, NULL, &cfg, &err);
  free(cfg.cert_pem);
  free(cfg.key_pem);
  cfg.cert_pem = cfg.key_pem = NULL;
  setup(&cfg, d);
  kube_client_t *c = NULL;
  if (kube_client_new(&loop, &cfg, &c, &err)) {
    fprintf(stderr, "client: %s\n", err);
    exit(1);
  }
  kube_config_free(&cfg);
  return c;
}

/* Who the server thinks we are ("" on failure; status in *status). */
static char *whoami(kube_client_t *c, int *status) {
  kres_t r = k_do(c, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                  "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"SelfSubjectReview\"}");
  *status = r.status;
  cJSON *j = k_ok(&r) ? cJSON_Parse(r.body) : NULL;
  kres_free(&r);
  const char *u = cJSON_GetStringValue(
      cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "status"), "userInfo"), "username"));
  char *out = strdup(u ? u : "");
  cJSON_Delete(j);
  return out;
}

static char token_path[128];
static void setup_token_file(kube_config_t *cfg, void *d) {
  cfg->token_file = strdup(token_path);
  cfg->token = strdup("not-a-token");
}

static void setup_exec(kube_config_t *cfg, void *d) {
  kube_exec_t *e = calloc(1, sizeof *e);
  e->command = strdup(d);
  e->args = calloc(1, sizeof *e->args);
  e->env = calloc(1, sizeof *e->env);
  e->api_version = strdup("client.authentication.k8s.io/v1");
  cfg->exec = e;
}

static void setup_bad_ca(kube_config_t *cfg, void *d) {
  /* Trust some other CA: the system bundle does not know the test cluster's CA. */
  free(cfg->ca_pem);
  char *err = NULL;
  (void)err;
  FILE *f = fopen("/etc/ssl/certs/ca-certificates.crt", "r");
  buf_t b = BUF_INIT;
  char chunk[4096];
  size_t n;
  while (f && (n = fread(chunk, 1, sizeof chunk, f)) > 0) buf_append(&b, chunk, n);
  if (f) fclose(f);
  cfg->ca_pem_len = b.len;
  cfg->ca_pem = buf_steal(&b);
  char url[64];
  snprintf(url, sizeof url, "https://127.0.0.1:%d", *(int *)d);
  kube_config_set_server(cfg, url, &err);
}

static void never_accept(uv_stream_t *s, int status) {}

static int resumed_events;
static void resumed_event(kube_watch_t *w, const char *type, cJSON *obj, void *d) {
  if (!strcmp(type, "ADDED")) resumed_events++;
}
static void resumed_end(kube_watch_t *w, const kube_response_t *res, void *d) {}

static int synced;
static void on_synced(informer_t *i, void *d) { synced = 1; }

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/rudder-auth-XXXXXX");
  if (!mkdtemp(dir)) return 2;
  uv_loop_init(&loop);
  kube_client_t *admin = k_client(0);
  snprintf(ns, sizeof ns, "rudder-auth-%d", (int)getpid());
  k_namespace(admin, ns);
  char *t1 = sa_token(admin, "one"), *t2 = sa_token(admin, "two");
  CHECK(t1 && t2);
  char want1[128], want2[128];
  snprintf(want1, sizeof want1, "system:serviceaccount:%s:one", ns);
  snprintf(want2, sizeof want2, "system:serviceaccount:%s:two", ns);

  /* 0. TLS sessions are resumed: the first handshake's session ticket is offered by the next
   * connection (a watch here, which takes a connection of its own), the server takes it (no
   * certificate sent), and the resumed connection is still the client certificate's identity. */
  {
    kube_client_t *rc = k_client(0);
    int rst;
    char *rwho = whoami(rc, &rst);
    CHECK_EQ_INT(rst, 201);
    kube_client_stats_t s0 = kube_client_get_stats(rc);
    CHECK_EQ_INT(s0.tls_handshakes, 1);
    CHECK_EQ_INT(s0.tls_resumed, 0);
    char wpath[160];
    snprintf(wpath, sizeof wpath, "/api/v1/namespaces/%s/configmaps?watch=1&fieldSelector=metadata.name%%3Dresumed", ns);
    resumed_events = 0;
    kube_watch_t *w = kube_watch_start(rc, wpath, resumed_event, resumed_end, NULL);
    CHECK(w != NULL);
    run_for(500);
    char cpath[128];
    snprintf(cpath, sizeof cpath, "/api/v1/namespaces/%s/configmaps", ns);
    kres_t cr = k_do(admin, "POST", cpath, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"resumed\"}}");
    CHECK_EQ_INT(cr.status, 201);
    kres_free(&cr);
    RUN_UNTIL(resumed_events >= 1, 10000);
    CHECK_EQ_INT(resumed_events, 1); /* the watch was served: authenticated and authorized as rc */
    kube_client_stats_t s1 = kube_client_get_stats(rc);
    CHECK_EQ_INT(s1.tls_handshakes, 2);
    CHECK_EQ_INT(s1.tls_resumed, 1);
    char *rwho2 = whoami(rc, &rst); /* the first connection again */
    CHECK_EQ_STR(rwho2, rwho);
    free(rwho);
    free(rwho2);
    if (w) kube_watch_stop(w);
    k_client_close(rc);
  }

  /* 1. Token file: a bad token is refused (after one re-read), a rotated one is picked up on the
   * 401, and with a short refresh interval without any 401. */
  snprintf(token_path, sizeof token_path, "%s/token", dir);
  write_file(token_path, "not-a-token\n", 0600);
  kube_client_t *c = client_with(setup_token_file, NULL);
  int st;
  char *who = whoami(c, &st);
  CHECK_EQ_INT(st, 401);
  free(who);
  buf_t tb = BUF_INIT;
  buf_printf(&tb, "%s\n", t1);
  write_file(token_path, tb.data, 0600);
  who = whoami(c, &st);
  CHECK_EQ_INT(st, 201);
  CHECK_EQ_STR(who, want1);
  free(who);
  kube_client_limits_t l = {.token_refresh_ms = 100};
  kube_client_set_limits(c, &l);
  buf_reset(&tb);
  buf_printf(&tb, "%s\n", t2);
  write_file(token_path, tb.data, 0600);
  run_for(150);
  uint64_t before = kube_client_get_stats(c).auth_retries;
  who = whoami(c, &st);
  CHECK_EQ_STR(who, want2);
  CHECK_EQ_INT(kube_client_get_stats(c).auth_retries, before); /* seen without a 401 */
  free(who);
  buf_free(&tb);
  k_client_close(c);

  /* 2. An exec plugin: a script prints an ExecCredential with the token of its Nth run
   * (exec-token-N). The first is refused: the 401 re-runs it; then it is cached. */
  char script[128], text[4096];
  snprintf(script, sizeof script, "%s/cred.sh", dir);
  snprintf(text, sizeof text,
           "#!/bin/sh\nd=%s\necho run >> $d/runs\nn=$(wc -l < $d/runs)\n"
           "printf '{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1\","
           "\"status\":{\"token\":\"%%s\"}}' \"$(cat $d/exec-token-$n)\"\n",
           dir);
  write_file(script, text, 0755);
  char etp[128];
  snprintf(etp, sizeof etp, "%s/exec-token-1", dir);
  write_file(etp, "revoked-token", 0600);
  snprintf(etp, sizeof etp, "%s/exec-token-2", dir);
  write_file(etp, t1, 0600);
  c = client_with(setup_exec, script);
  who = whoami(c, &st);
  CHECK_EQ_STR(who, want1);
  free(who);
  who = whoami(c, &st);
  CHECK_EQ_STR(who, want1);
  free(who);
  CHECK_EQ_INT(kube_client_get_stats(c).exec_runs, 2);
  CHECK_EQ_INT(kube_client_get_stats(c).auth_retries, 1);
  k_client_close(c);
  kres_t r;

  /* 3. A wrong CA: a clear TLS error; an informer backs off instead of storming. */
  tproxy_t px;
  CHECK_EQ_INT(tproxy_start(&px, &loop, k_server_port()), 0);
  c = client_with(setup_bad_ca, &px.port);
  r = k_do(c, "GET", "/api/v1/namespaces", NULL);
  CHECK_EQ_INT(r.err, UV_EPROTO);
  CHECK(r.errmsg && strstr(r.errmsg, "TLS handshake with 127.0.0.1:") && strstr(r.errmsg, "verification failed"));
  printf("bad CA: %s\n", r.errmsg ? r.errmsg : "");
  kres_free(&r);
  CHECK_EQ_INT(px.accepted, 1);
  informer_t *inf;
  informer_opts_t io = {.path = "/api/v1/namespaces", .backoff_base_ms = 500, .backoff_max_ms = 30000};
  informer_handlers_t h = {.on_synced = on_synced};
  CHECK_EQ_INT(informer_start(c, &io, &h, &inf), 0);
  run_for(4000);
  CHECK(!synced);
  printf("bad CA: %d connections in 4 s\n", px.accepted - 1);
  /* 0.5, 1, 2 s doubling with jitter: at most 5 attempts. */
  CHECK(px.accepted - 1 >= 2 && px.accepted - 1 <= 5);
  k_informer_stop(inf);
  k_client_close(c);
  tproxy_stop(&px);

  /* 4. Unreachable servers: refused at once; a black hole times out with what it was doing. */
  int port = 1;
  c = client_with(setup_bad_ca, &port);
  r = k_do(c, "GET", "/version", NULL);
  CHECK_EQ_INT(r.err, UV_ECONNREFUSED);
  CHECK(r.errmsg && strstr(r.errmsg, "connect to 127.0.0.1:1 failed: connection refused"));
  kres_free(&r);
  k_client_close(c);
  {
    /* A listener that never accepts: the kernel completes the connection, nobody answers. */
    static uv_tcp_t hole; /* outlives this block until its close completes */
    uv_tcp_init(&loop, &hole);
    struct sockaddr_in a;
    uv_ip4_addr("127.0.0.1", 0, &a);
    uv_tcp_bind(&hole, (struct sockaddr *)&a, 0);
    uv_listen((uv_stream_t *)&hole, 8, never_accept);
    struct sockaddr_storage ss;
    int len = sizeof ss;
    uv_tcp_getsockname(&hole, (struct sockaddr *)&ss, &len);
    char url[64];
    snprintf(url, sizeof url, "https://127.0.0.1:%d", ntohs(((struct sockaddr_in *)&ss)->sin_port));
    kube_config_t cfg = {0};
    char *err = NULL;
    kube_config_set_server(&cfg, url, &err);
    cfg.insecure_skip_tls_verify = true;
    kube_client_new(&loop, &cfg, &c, &err);
    kube_config_free(&cfg);
    kube_req_opts_t o = {.path = "/version", .timeout_ms = 1500};
    kres_t rr = {0};
    uint64_t t0 = uv_now(&loop);
    kube_request(c, &o, kres_cb, &rr);
    RUN_UNTIL(rr.done, 10000);
    CHECK_EQ_INT(rr.err, UV_ETIMEDOUT);
    CHECK(uv_now(&loop) - t0 <= 2500);
    printf("silent server: %s\n", rr.errmsg ? rr.errmsg : "");
    CHECK(rr.errmsg && strstr(rr.errmsg, "timed out after 1500 ms (in the TLS handshake)") != NULL);
    kres_free(&rr);
    k_client_close(c);
    uv_close((uv_handle_t *)&hole, NULL);
  }

  k_delete_namespace(admin, ns);
  k_client_close(admin);
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(uv_loop_close(&loop), 0);
  free(t1);
  free(t2);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
  return t_done();
}
