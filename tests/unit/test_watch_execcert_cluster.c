/* Exec credential plugins that return client certificates, against the real API server: the
 * cluster's admin certificate from a plugin (requests and a watch work); a certificate whose
 * credential expires is replaced by the plugin's next one for new connections while an open watch
 * goes on over the old one; a certificate from a CA the server does not trust gets one clear 401
 * after a single re-run; a missing key and bad PEM are clear errors with no request sent; a token
 * and a certificate together are both sent. The plugin is a shell script that prints the answer
 * the test wrote for its Nth run and counts its runs in a file. */
#include "test_watch_kube.h"
#include <stdarg.h>
#include <sys/stat.h>
#include <time.h>

static char dir[64], ns[64], pki[256];

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

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot read %s\n", path);
    return NULL;
  }
  buf_t b = BUF_INIT;
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) buf_append(&b, chunk, n);
  fclose(f);
  buf_puts(&b, "");
  return buf_steal(&b);
}

static void write_file(const char *path, const char *text, int mode) {
  char tmp[300];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  fputs(text, f);
  fclose(f);
  chmod(tmp, (mode_t)mode);
  rename(tmp, path);
}

/* A client certificate for CN=name, O=system:masters, signed by the CA in ca_dir (ca.crt, ca.key),
 * written to dir/name.crt and dir/name.key. */
static int make_cert(const char *ca_dir, const char *name) {
  return sh("cd %s && printf 'extendedKeyUsage=clientAuth\\n' > %s.ext && "
            "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout %s.key -out %s.csr "
            "-subj /O=system:masters/CN=%s 2>/dev/null && "
            "openssl x509 -req -in %s.csr -CA %s/ca.crt -CAkey %s/ca.key -CAcreateserial -CAserial %s.srl -days 1 "
            "-extfile %s.ext -out %s.crt 2>/dev/null",
            dir, name, name, name, name, name, ca_dir, ca_dir, name, name, name);
}

/* The plugin answer for run n (0: every run without its own) in phase directory ph: an
 * ExecCredential with the named certificate and key files (NULL: leave out), a token (NULL: none)
 * and an expiry in seconds from now (0: none). cert may also be literal PEM text. */
static void answer(const char *ph, int n, const char *cert, const char *key, const char *token, int expires_in) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "kind", "ExecCredential");
  cJSON_AddStringToObject(j, "apiVersion", "client.authentication.k8s.io/v1");
  cJSON *st = cJSON_AddObjectToObject(j, "status");
  char p[300];
  if (cert) {
    snprintf(p, sizeof p, "%s/%s.crt", dir, cert);
    char *pem = strncmp(cert, "-----", 5) ? slurp(p) : strdup(cert);
    cJSON_AddStringToObject(st, "clientCertificateData", pem ? pem : "");
    free(pem);
  }
  if (key) {
    snprintf(p, sizeof p, "%s/%s.key", dir, key);
    char *pem = slurp(p);
    cJSON_AddStringToObject(st, "clientKeyData", pem ? pem : "");
    free(pem);
  }
  if (token) cJSON_AddStringToObject(st, "token", token);
  if (expires_in) {
    time_t t = time(NULL) + expires_in;
    char ts[32];
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    cJSON_AddStringToObject(st, "expirationTimestamp", ts);
  }
  char *text = cJSON_Print(j);
  cJSON_Delete(j);
  if (n) snprintf(p, sizeof p, "%s/%s/answer-%d.json", dir, ph, n);
  else snprintf(p, sizeof p, "%s/%s/answer.json", dir, ph);
  write_file(p, text, 0600);
  free(text);
}

static char plugin[128];

/* A client for the cluster with no credentials of its own but the plugin, run for phase ph. */
static kube_client_t *exec_client(const char *ph) {
  char p[300];
  snprintf(p, sizeof p, "%s/%s", dir, ph);
  mkdir(p, 0700);
  kube_config_t cfg;
  char *err = NULL;
  if (kube_config_load(NULL, NULL, &cfg, &err)) {
    fprintf(stderr, "kubeconfig: %s\n", err);
    exit(1);
  }
  free(cfg.cert_pem);
  free(cfg.key_pem);
  cfg.cert_pem = cfg.key_pem = NULL;
  kube_exec_t *e = calloc(1, sizeof *e);
  e->command = strdup(plugin);
  e->n_args = 1;
  e->args = calloc(1, sizeof *e->args);
  e->args[0] = strdup(p);
  e->env = calloc(1, sizeof *e->env);
  e->api_version = strdup("client.authentication.k8s.io/v1");
  cfg.exec = e;
  kube_client_t *c = NULL;
  if (kube_client_new(&loop, &cfg, &c, &err)) {
    fprintf(stderr, "client: %s\n", err);
    exit(1);
  }
  kube_config_free(&cfg);
  return c;
}

/* Lines in phase ph's run log: how often the plugin ran. */
static int runs(const char *ph) {
  char p[300];
  snprintf(p, sizeof p, "%s/%s/runs", dir, ph);
  char *t = slurp(p);
  int n = 0;
  for (char *s = t; s && *s; s++) n += *s == '\n';
  free(t);
  return n;
}

/* Who the server thinks we are ("" on failure); the response in *r when r is not NULL. */
static char *whoami(kube_client_t *c, kres_t *out) {
  kres_t r = k_do(c, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                  "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"SelfSubjectReview\"}");
  cJSON *j = k_ok(&r) ? cJSON_Parse(r.body) : NULL;
  const char *u = cJSON_GetStringValue(
      cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "status"), "userInfo"), "username"));
  char *who = strdup(u ? u : "");
  cJSON_Delete(j);
  if (out) *out = r;
  else kres_free(&r);
  return who;
}

/* A service account's token. */
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
  const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "status"), "token"));
  char *out = t ? strdup(t) : NULL;
  cJSON_Delete(j);
  return out;
}

static void make_configmap(kube_client_t *c, const char *name) {
  char path[256], body[256];
  snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps", ns);
  snprintf(body, sizeof body, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\"}}", name);
  kres_t r = k_do(c, "POST", path, body);
  CHECK_EQ_INT(r.status, 201);
  if (!k_ok(&r)) fprintf(stderr, "create configmap %s: %s\n", name, r.errmsg ? r.errmsg : "?");
  kres_free(&r);
}

/* A watch on the namespace's configmaps that records the names it was told about. */
typedef struct seen_s {
  buf_t names;
  int ended;
  char *end_msg;
} seen_t;

static void seen_ev(kube_watch_t *w, const char *type, cJSON *obj, void *data) {
  seen_t *s = data;
  const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "metadata"), "name"));
  if (!strcmp(type, "ADDED") && name) buf_printf(&s->names, "%s\n", name);
}

static void seen_end(kube_watch_t *w, const kube_response_t *res, void *data) {
  seen_t *s = data;
  s->ended = 1;
  s->end_msg = res->errmsg ? strdup(res->errmsg) : NULL;
}

static int seen_has(seen_t *s, const char *name) {
  char line[128];
  snprintf(line, sizeof line, "%s\n", name);
  return s->names.data && strstr(s->names.data, line) != NULL;
}

int main(void) {
  const char *state = getenv("RUDDER_CLUSTER_STATE");
  if (!state || !*state) {
    fprintf(stderr, "FAIL: RUDDER_CLUSTER_STATE is unset: this test needs the local control plane's PKI "
                    "(ctest runs it with the e2e.cluster-up fixture; by hand: eval \"$(tests/cluster/up)\")\n");
    return 1;
  }
  snprintf(pki, sizeof pki, "%s/pki", state);
  snprintf(dir, sizeof dir, "/tmp/rudder-execcert-XXXXXX");
  if (!mkdtemp(dir)) return 2;
  /* Two users of the cluster's CA, and a CA of our own that the server does not trust. */
  if (make_cert(pki, "user-1") || make_cert(pki, "user-2") ||
      sh("cd %s && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key "
         "-out ca.crt -days 1 -subj /CN=not-the-cluster-ca 2>/dev/null", dir) ||
      make_cert(dir, "foreign")) {
    fprintf(stderr, "openssl could not make the test certificates\n");
    return 2;
  }
  snprintf(plugin, sizeof plugin, "%s/plugin.sh", dir);
  write_file(plugin,
             "#!/bin/sh\n"
             "d=$1\n"
             "echo run >> \"$d/runs\"\n"
             "n=$(wc -l < \"$d/runs\")\n"
             "if [ -f \"$d/answer-$n.json\" ]; then cat \"$d/answer-$n.json\"; else cat \"$d/answer.json\"; fi\n",
             0755);
  uv_loop_init(&loop);
  kube_client_t *admin = k_client(0);
  snprintf(ns, sizeof ns, "rudder-execcert-%d", (int)getpid());
  k_namespace(admin, ns);
  char path[256];
  snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps", ns);

  /* 1. The kubeconfig's own admin certificate, handed out by the plugin: requests and a watch
   * work, and the plugin ran once. */
  {
    kube_config_t cfg;
    char *err = NULL;
    CHECK_EQ_INT(kube_config_load(NULL, NULL, &cfg, &err), 0);
    char p[300];
    snprintf(p, sizeof p, "%s/admin.crt", dir);
    write_file(p, cfg.cert_pem, 0600);
    snprintf(p, sizeof p, "%s/admin.key", dir);
    write_file(p, cfg.key_pem, 0600);
    kube_config_free(&cfg);
  }
  kube_client_t *c = exec_client("admin");
  answer("admin", 0, "admin", "admin", NULL, 0);
  char *who = whoami(c, NULL);
  CHECK_EQ_STR(who, "rudder-admin");
  free(who);
  kres_t r = k_do(c, "GET", path, NULL);
  CHECK_EQ_INT(r.status, 200);
  kres_free(&r);
  seen_t s1 = {BUF_INIT, 0, NULL};
  char wpath[300];
  snprintf(wpath, sizeof wpath, "%s?watch=1", path);
  kube_watch_t *w = kube_watch_start(c, wpath, seen_ev, seen_end, &s1);
  CHECK(w != NULL);
  run_for(300); /* the stream is open before the object is made */
  make_configmap(admin, "first");
  CHECK(RUN_UNTIL(seen_has(&s1, "first"), 10000));
  kube_watch_stop(w);
  CHECK(s1.ended);
  CHECK_EQ_INT(runs("admin"), 1);
  CHECK_EQ_INT(kube_client_get_stats(c).exec_runs, 1);
  buf_free(&s1.names);
  free(s1.end_msg);
  k_client_close(c);

  /* 2. Rotation: the first answer expires in 2 s. The next request after that re-runs the plugin,
   * whose new certificate is presented on a new connection (the idle one with the old certificate
   * is not reused), while the watch opened before goes on over its old connection, and so does a
   * slow request (a watch read as one response that the server ends after 8 s), whose connection
   * is then closed instead of going back to the pool. */
  c = exec_client("rotate");
  answer("rotate", 1, "user-1", "user-1", NULL, 2);
  answer("rotate", 0, "user-2", "user-2", NULL, 3600);
  who = whoami(c, NULL);
  CHECK_EQ_STR(who, "user-1");
  free(who);
  seen_t s2 = {BUF_INIT, 0, NULL};
  w = kube_watch_start(c, wpath, seen_ev, seen_end, &s2);
  CHECK(RUN_UNTIL(seen_has(&s2, "first"), 10000)); /* the initial ADDED: the stream is open */
  char slow_path[300];
  snprintf(slow_path, sizeof slow_path, "%s?watch=1&timeoutSeconds=8", path);
  kres_t slow = {0};
  kube_req_opts_t so = {.path = slow_path, .timeout_ms = 30000};
  CHECK(kube_request(c, &so, kres_cb, &slow) != NULL);
  run_for(2500);
  CHECK_EQ_INT(runs("rotate"), 1);
  who = whoami(c, NULL);
  CHECK_EQ_STR(who, "user-2");
  free(who);
  CHECK_EQ_INT(runs("rotate"), 2);
  who = whoami(c, NULL);
  CHECK_EQ_STR(who, "user-2");
  free(who);
  CHECK_EQ_INT(runs("rotate"), 2); /* cached until its expiry */
  CHECK(!slow.done); /* still on its connection with the old certificate */
  CHECK(RUN_UNTIL(slow.done, 20000));
  CHECK_EQ_INT(slow.status, 200);
  kres_free(&slow);
  who = whoami(c, NULL);
  CHECK_EQ_STR(who, "user-2");
  free(who);
  make_configmap(admin, "second");
  CHECK(RUN_UNTIL(seen_has(&s2, "second"), 10000));
  CHECK(!s2.ended);
  kube_watch_stop(w);
  /* A watch opened now presents the new certificate. */
  seen_t s3 = {BUF_INIT, 0, NULL};
  w = kube_watch_start(c, wpath, seen_ev, seen_end, &s3);
  CHECK(RUN_UNTIL(seen_has(&s3, "second"), 10000));
  kube_watch_stop(w);
  CHECK_EQ_INT(kube_client_get_stats(c).auth_retries, 0);
  buf_free(&s2.names);
  free(s2.end_msg);
  buf_free(&s3.names);
  free(s3.end_msg);
  k_client_close(c);

  /* 3. A certificate from a CA the server does not trust: a 401, the plugin is run once more,
   * the second 401 is delivered with the plugin's name. Two requests in all. */
  c = exec_client("foreign");
  answer("foreign", 0, "foreign", "foreign", NULL, 0);
  who = whoami(c, &r);
  CHECK_EQ_STR(who, "");
  free(who);
  CHECK_EQ_INT(r.status, 401);
  CHECK(r.errmsg && strstr(r.errmsg, "HTTP 401") && strstr(r.errmsg, "exec credential plugin") &&
        strstr(r.errmsg, plugin));
  printf("untrusted certificate: %s\n", r.errmsg ? r.errmsg : "");
  kres_free(&r);
  CHECK_EQ_INT(runs("foreign"), 2);
  CHECK_EQ_INT(kube_client_get_stats(c).auth_retries, 1);
  CHECK_EQ_INT(kube_client_get_stats(c).requests, 2);
  k_client_close(c);

  /* 4. A certificate without its key, and a certificate that is not PEM: one clear error each,
   * naming the plugin and the problem; the plugin ran once and nothing was sent. */
  struct {
    const char *ph, *cert, *key, *want;
  } bad[] = {
      {"nokey", "user-1", NULL, "returned status.clientCertificateData without status.clientKeyData"},
      {"nocert", NULL, "user-1", "returned status.clientKeyData without status.clientCertificateData"},
      {"badpem", "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n", "user-1",
       "returned an unusable client certificate or key: cannot parse the client certificate"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    c = exec_client(bad[i].ph);
    answer(bad[i].ph, 0, bad[i].cert, bad[i].key, NULL, 0);
    r = k_do(c, "GET", path, NULL);
    CHECK_EQ_INT(r.err, UV_EACCES);
    CHECK(r.errmsg && strstr(r.errmsg, plugin) && strstr(r.errmsg, bad[i].want));
    printf("%s: %s\n", bad[i].ph, r.errmsg ? r.errmsg : "(no error)");
    kres_free(&r);
    CHECK_EQ_INT(runs(bad[i].ph), 1);
    CHECK_EQ_INT(kube_client_get_stats(c).requests, 0);
    k_client_close(c);
  }

  /* 5. A token and a certificate together: both are sent. The server tries the certificate
   * first, so a trusted one decides; with an untrusted one the token does. */
  char *tok = sa_token(admin, "both");
  char want_sa[128];
  snprintf(want_sa, sizeof want_sa, "system:serviceaccount:%s:both", ns);
  CHECK(tok != NULL);
  c = exec_client("both-trusted");
  answer("both-trusted", 0, "user-1", "user-1", tok, 0);
  who = whoami(c, NULL);
  CHECK_EQ_STR(who, "user-1");
  free(who);
  k_client_close(c);
  c = exec_client("both-foreign");
  answer("both-foreign", 0, "foreign", "foreign", tok, 0);
  who = whoami(c, NULL);
  CHECK_EQ_STR(who, want_sa);
  free(who);
  CHECK_EQ_INT(kube_client_get_stats(c).auth_retries, 0);
  k_client_close(c);
  free(tok);

  k_delete_namespace(admin, ns);
  k_client_close(admin);
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(uv_loop_close(&loop), 0);
  sh("rm -rf %s", dir);
  return t_done();
}
