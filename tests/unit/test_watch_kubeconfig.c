/* kubeconfig loading: inline data, file references, contexts, in-cluster, and clear errors. */
#include "t.h"
#include "watch/kubeconfig.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

static char dir[64];

static void write_file(const char *name, const char *text) {
  char p[256];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  if (!f) { perror(p); exit(2); }
  fputs(text, f);
  fclose(f);
}

static char *path_of(const char *name) {
  static char p[256];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  return p;
}

/* base64 of "-----BEGIN CERTIFICATE-----\nCA\n" etc. are not needed: any bytes decode. */
#define B64_HELLO "aGVsbG8gY2E="      /* "hello ca" */
#define B64_CERT "Y2xpZW50IGNlcnQ="   /* "client cert" */
#define B64_KEY "Y2xpZW50IGtleQ=="    /* "client key" */

static const char *inline_cfg =
    "apiVersion: v1\n"
    "kind: Config\n"
    "current-context: dev\n"
    "clusters:\n"
    "- name: other\n"
    "  cluster:\n"
    "    server: http://10.9.9.9:80\n"
    "- name: local\n"
    "  cluster:\n"
    "    server: https://127.0.0.1:6443\n"
    "    certificate-authority-data: " B64_HELLO "\n"
    "contexts:\n"
    "- name: dev\n"
    "  context:\n"
    "    cluster: local\n"
    "    user: admin\n"
    "    namespace: team-a\n"
    "- name: plain\n"
    "  context:\n"
    "    cluster: other\n"
    "users:\n"
    "- name: admin\n"
    "  user:\n"
    "    client-certificate-data: " B64_CERT "\n"
    "    client-key-data: |\n"
    "      Y2xpZW50\n"
    "      IGtleQ==\n"
    "    token: abc.def\n";

static void test_inline(void) {
  write_file("inline.yaml", inline_cfg);
  kube_config_t c;
  char *err = NULL;
  int r = kube_config_load(path_of("inline.yaml"), NULL, &c, &err);
  CHECK_EQ_INT(r, 0);
  if (r) { fprintf(stderr, "error: %s\n", err); free(err); return; }
  CHECK_EQ_STR(c.scheme, "https");
  CHECK_EQ_STR(c.host, "127.0.0.1");
  CHECK_EQ_INT(c.port, 6443);
  CHECK_EQ_STR(c.base_path, "");
  CHECK_EQ_STR(c.ca_pem, "hello ca");
  CHECK_EQ_INT(c.ca_pem_len, 8);
  CHECK_EQ_STR(c.cert_pem, "client cert");
  CHECK_EQ_STR(c.key_pem, "client key"); /* base64 split across lines */
  CHECK_EQ_STR(c.token, "abc.def");
  CHECK_EQ_STR(c.namespace, "team-a");
  CHECK_EQ_STR(c.context, "dev");
  CHECK(!c.insecure_skip_tls_verify);
  kube_config_free(&c);
  CHECK(c.host == NULL);

  /* A context override picks another cluster, with no user and the default namespace. */
  r = kube_config_load(path_of("inline.yaml"), "plain", &c, &err);
  CHECK_EQ_INT(r, 0);
  CHECK_EQ_STR(c.scheme, "http");
  CHECK_EQ_STR(c.host, "10.9.9.9");
  CHECK_EQ_INT(c.port, 80);
  CHECK(c.token == NULL && c.cert_pem == NULL && c.ca_pem == NULL);
  CHECK_EQ_STR(c.namespace, "default");
  kube_config_free(&c);
}

/* Text that is not a local file (a Secret's): inline data is used, files and commands refused. */
static void test_parse_text(void) {
  kube_config_t c;
  char *err = NULL;
  int r = kube_config_parse(inline_cfg, strlen(inline_cfg), "Secret ns/cl key kubeconfig", &c, &err);
  CHECK_EQ_INT(r, 0);
  if (!r) {
    CHECK_EQ_STR(c.host, "127.0.0.1");
    CHECK_EQ_STR(c.ca_pem, "hello ca");
    CHECK_EQ_STR(c.token, "abc.def");
    CHECK_EQ_STR(c.source, "Secret ns/cl key kubeconfig");
    kube_config_free(&c);
  }
  static const struct { const char *user; int rc; const char *msg; } cases[] = {
    {"    client-certificate: /etc/shadow\n    client-key-data: " B64_KEY "\n", UV_EINVAL,
     "kubeconfig s: users[\"u\"].user.client-certificate: files are not read for a kubeconfig that is not a local "
     "file; give client-certificate-data"},
    {"    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token\n", UV_EINVAL,
     "kubeconfig s: users[\"u\"].user.tokenFile: files are not read for a kubeconfig that is not a local file; give token"},
    {"    exec:\n      command: /bin/sh\n      apiVersion: client.authentication.k8s.io/v1\n", UV_ENOTSUP,
     "kubeconfig s: users[\"u\"].user.exec: credential plugins are not run for a kubeconfig that is not a local file "
     "(unless the controller runs with --insecure-kubeconfig-exec); give a token or a client certificate"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char text[1024];
    snprintf(text, sizeof text,
             "current-context: c\nclusters:\n- name: k\n  cluster:\n    server: https://10.0.0.1:6443\n"
             "contexts:\n- name: c\n  context: {cluster: k, user: u}\nusers:\n- name: u\n  user:\n%s",
             cases[i].user);
    err = NULL;
    r = kube_config_parse(text, strlen(text), "s", &c, &err);
    CHECK_EQ_INT(r, cases[i].rc);
    CHECK_EQ_STR(err, cases[i].msg);
    free(err);
  }
  /* certificate-authority as a file is refused too. */
  const char *ca = "current-context: c\nclusters:\n- name: k\n  cluster:\n    server: https://10.0.0.1:6443\n"
                   "    certificate-authority: /etc/ssl/private/x\ncontexts:\n- name: c\n  context: {cluster: k}\n";
  err = NULL;
  r = kube_config_parse(ca, strlen(ca), "s", &c, &err);
  CHECK_EQ_INT(r, UV_EINVAL);
  CHECK(err && strstr(err, "clusters[\"k\"].cluster.certificate-authority: files are not read"));
  free(err);
}

static void test_files(void) {
  write_file("ca.crt", "CA FILE\n");
  write_file("client.crt", "CERT FILE\n");
  write_file("client.key", "KEY FILE\n");
  write_file("token", "tok-from-file\n");
  write_file("files.yaml",
             "current-context: c\n"
             "clusters: [{name: k, cluster: {server: 'https://[::1]:8443/k8s/clusters/c-1/', certificate-authority: ca.crt,"
             " tls-server-name: api.internal}}]\n"
             "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
             "users: [{name: u, user: {client-certificate: client.crt, client-key: DIR/client.key, tokenFile: token}}]\n");
  /* An absolute path must be used as is: rewrite DIR into the real directory. */
  char text[1024];
  FILE *f = fopen(path_of("files.yaml"), "r");
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  char fixed[1200], *d = strstr(text, "DIR");
  snprintf(fixed, sizeof fixed, "%.*s%s%s", (int)(d - text), text, dir, d + 3);
  write_file("files.yaml", fixed);

  kube_config_t c;
  char *err = NULL;
  int r = kube_config_load(path_of("files.yaml"), NULL, &c, &err);
  CHECK_EQ_INT(r, 0);
  if (r) { fprintf(stderr, "error: %s\n", err); free(err); return; }
  CHECK_EQ_STR(c.host, "::1");
  CHECK_EQ_INT(c.port, 8443);
  CHECK_EQ_STR(c.base_path, "/k8s/clusters/c-1");
  CHECK_EQ_STR(c.ca_pem, "CA FILE\n");
  CHECK_EQ_STR(c.cert_pem, "CERT FILE\n");
  CHECK_EQ_STR(c.key_pem, "KEY FILE\n");
  CHECK_EQ_STR(c.token, "tok-from-file");
  CHECK(c.token_file && strstr(c.token_file, "/token"));
  CHECK_EQ_STR(c.tls_server_name, "api.internal");
  CHECK_EQ_STR(c.source, path_of("files.yaml"));
  kube_config_free(&c);

  /* $KUBECONFIG: only its first entry is read. */
  char env[600];
  snprintf(env, sizeof env, "%s:/nonexistent/other", path_of("files.yaml"));
  setenv("KUBECONFIG", env, 1);
  r = kube_config_load(NULL, NULL, &c, &err);
  CHECK_EQ_INT(r, 0);
  CHECK_EQ_STR(c.host, "::1");
  kube_config_free(&c);
  unsetenv("KUBECONFIG");
}

/* An exec credential plugin: command resolved against the kubeconfig's directory, args, env. */
static void test_exec(void) {
  write_file("exec.yaml",
             "current-context: c\n"
             "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:6443'}}]\n"
             "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
             "users: [{name: u, user: {exec: {command: ./bin/cred, args: [get, --x], apiVersion: "
             "client.authentication.k8s.io/v1, env: [{name: A, value: b}, {name: C}], installHint: 'install cred'}}}]\n");
  kube_config_t c;
  char *err = NULL;
  int r = kube_config_load(path_of("exec.yaml"), NULL, &c, &err);
  CHECK_EQ_INT(r, 0);
  if (r) { fprintf(stderr, "error: %s\n", err); free(err); return; }
  CHECK(c.exec != NULL);
  if (c.exec) {
    char want[256];
    snprintf(want, sizeof want, "%s/./bin/cred", dir);
    CHECK_EQ_STR(c.exec->command, want);
    CHECK_EQ_INT(c.exec->n_args, 2);
    CHECK_EQ_STR(c.exec->args[1], "--x");
    CHECK_EQ_INT(c.exec->n_env, 2);
    CHECK_EQ_STR(c.exec->env[0], "A=b");
    CHECK_EQ_STR(c.exec->env[1], "C=");
    CHECK_EQ_STR(c.exec->install_hint, "install cred");
    kube_exec_t *copy = kube_exec_copy(c.exec);
    CHECK(copy && !strcmp(copy->args[0], "get") && copy->n_env == 2);
    kube_exec_free(copy);
  }
  CHECK(c.token == NULL);
  kube_config_free(&c);
  /* A bare command name is looked up in PATH, not in the kubeconfig's directory. */
  write_file("exec2.yaml",
             "current-context: c\n"
             "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:6443'}}]\n"
             "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
             "users: [{name: u, user: {exec: {command: aws}}}]\n");
  r = kube_config_load(path_of("exec2.yaml"), NULL, &c, &err);
  CHECK_EQ_INT(r, 0);
  CHECK(c.exec && !strcmp(c.exec->command, "aws") && !strcmp(c.exec->api_version, "client.authentication.k8s.io/v1"));
  kube_config_free(&c);
}

/* Loads text as a kubeconfig and expects an error containing each of the needles. */
static void expect_error(const char *text, const char *ctx, const char *n1, const char *n2) {
  write_file("bad.yaml", text);
  kube_config_t c;
  char *err = NULL;
  int r = kube_config_load(path_of("bad.yaml"), ctx, &c, &err);
  CHECK(r < 0);
  CHECK(err != NULL);
  if (!err) return;
  CHECK(strstr(err, path_of("bad.yaml")) != NULL); /* every message names the file */
  if (!strstr(err, n1) || (n2 && !strstr(err, n2))) {
    fprintf(stderr, "message \"%s\" lacks \"%s\" / \"%s\"\n", err, n1, n2 ? n2 : "");
    CHECK(0);
  }
  CHECK(c.host == NULL && c.token == NULL); /* nothing leaks out of a failed load */
  free(err);
}

static void test_errors(void) {
  expect_error("current-context: nope\ncontexts: []\n", NULL, "context \"nope\" not found", NULL);
  expect_error("contexts: []\n", NULL, "current-context is not set", NULL);
  expect_error("current-context: a\ncontexts: [{name: a, context: {cluster: x}}]\n", NULL, "cluster \"x\"", "not found");
  expect_error("current-context: a\ncontexts: [{name: a, context: {cluster: x}}]\nclusters: [{name: x, cluster: {}}]\n",
               NULL, "server is not set", NULL);
  expect_error("current-context: a\ncontexts: [{name: a, context: {cluster: x}}]\n"
               "clusters: [{name: x, cluster: {server: 'https://h', certificate-authority-data: '!!notbase64'}}]\n",
               NULL, "clusters[\"x\"].cluster.certificate-authority-data", "not valid base64");
  expect_error("current-context: a\ncontexts: [{name: a, context: {cluster: x}}]\n"
               "clusters: [{name: x, cluster: {server: 'https://h', certificate-authority: missing-ca.pem}}]\n",
               NULL, "certificate-authority", "missing-ca.pem");
  expect_error("current-context: a\ncontexts: [{name: a, context: {cluster: x, user: u}}]\n"
               "clusters: [{name: x, cluster: {server: 'https://h'}}]\n", NULL, "user \"u\"", "not found");
  expect_error("current-context: a\ncontexts: [{name: a, context: {cluster: x, user: u}}]\n"
               "clusters: [{name: x, cluster: {server: 'https://h'}}]\n"
               "users: [{name: u, user: {auth-provider: {name: gcp}}}]\n", NULL, "auth-provider", "not supported");
  expect_error("current-context: a\ncontexts: [{name: a, context: {cluster: x, user: u}}]\n"
               "clusters: [{name: x, cluster: {server: 'https://h'}}]\n"
               "users: [{name: u, user: {exec: {args: [x]}}}]\n", NULL, "exec.command", "not set");
  expect_error("current-context: a\ncontexts: [{name: a, context: {cluster: x, user: u}}]\n"
               "clusters: [{name: x, cluster: {server: 'https://h'}}]\n"
               "users: [{name: u, user: {exec: {command: aws, apiVersion: client.authentication.k8s.io/v1alpha1}}}]\n",
               NULL, "exec.apiVersion", "not supported");
  expect_error("current-context: a\ncontexts: [{name: a, context: {cluster: x, user: u}}]\n"
               "clusters: [{name: x, cluster: {server: 'https://h'}}]\n"
               "users: [{name: u, user: {client-certificate-data: " B64_CERT "}}]\n", NULL, "no client key", NULL);
  expect_error("current-context: a\ncontexts: [{name: a, context: {cluster: x}}]\n"
               "clusters: [{name: x, cluster: {server: 'ftp://h'}}]\n", NULL, "server", "scheme");
  expect_error("current-context: a\ncontexts: [{name: a, context: {cluster: x}}]\n"
               "clusters: [{name: x, cluster: {server: 'https://h:99999'}}]\n", NULL, "invalid port", NULL);
  expect_error("clusters: [unclosed\n", NULL, "YAML error at line", NULL);
  expect_error("- just\n- a list\n", NULL, "not a YAML mapping", NULL);
  expect_error("current-context: {a: b}\n", NULL, "current-context must be a string", NULL);

  kube_config_t c;
  char *err = NULL;
  CHECK_EQ_INT(kube_config_load(path_of("does-not-exist"), NULL, &c, &err), UV_ENOENT);
  CHECK(err && strstr(err, "does-not-exist") && strstr(err, "cannot read"));
  free(err);
}

static void test_server_urls(void) {
  kube_config_t c = {0};
  char *err = NULL;
  CHECK_EQ_INT(kube_config_set_server(&c, "example.com", &err), 0);
  CHECK_EQ_STR(c.scheme, "https");
  CHECK_EQ_STR(c.host, "example.com");
  CHECK_EQ_INT(c.port, 443);
  CHECK_EQ_INT(kube_config_set_server(&c, "HTTP://Example.com/x/y?q=1", &err), 0);
  CHECK_EQ_STR(c.scheme, "http");
  CHECK_EQ_INT(c.port, 80);
  CHECK_EQ_STR(c.base_path, "/x/y");
  CHECK_EQ_INT(kube_config_set_server(&c, "https://[fe80::1]", &err), 0);
  CHECK_EQ_STR(c.host, "fe80::1");
  CHECK_EQ_INT(c.port, 443);
  CHECK_EQ_INT(kube_config_set_server(&c, "https://[::1", &err), UV_EINVAL);
  CHECK(err && strstr(err, "IPv6"));
  CHECK_EQ_INT(kube_config_set_server(&c, "https://:443", &err), UV_EINVAL);
  CHECK(err && strstr(err, "host"));
  CHECK_EQ_INT(kube_config_set_server(&c, "https://h:12x", &err), UV_EINVAL);
  free(err);
  CHECK_EQ_STR(c.host, "fe80::1"); /* failures leave the previous value */
  kube_config_free(&c);
}

static void test_in_cluster(void) {
  write_file("sa-token", "sa-tok\n");
  char sa[128];
  snprintf(sa, sizeof sa, "%s/sa", dir);
  mkdir(sa, 0700);
  write_file("sa/token", "sa-tok\n");
  write_file("sa/ca.crt", "SA CA");
  write_file("sa/namespace", "kube-system\n");
  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  kube_config_t c;
  char *err = NULL;
  int r = kube_config_in_cluster(sa, &c, &err);
  CHECK_EQ_INT(r, 0);
  if (!r) {
    CHECK_EQ_STR(c.server, "https://10.96.0.1:443");
    CHECK_EQ_STR(c.token, "sa-tok");
    CHECK_EQ_STR(c.ca_pem, "SA CA");
    CHECK_EQ_STR(c.namespace, "kube-system");
    CHECK_EQ_STR(c.source, "in-cluster");
    CHECK(c.token_file && strstr(c.token_file, "/sa/token"));
    kube_config_free(&c);
  }
  setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  r = kube_config_in_cluster(sa, &c, &err);
  CHECK_EQ_INT(r, 0);
  if (!r) {
    CHECK_EQ_STR(c.host, "fd00::1");
    kube_config_free(&c);
  }
  /* A missing token file is named in the error. */
  char nosa[160];
  snprintf(nosa, sizeof nosa, "%s/none", dir);
  r = kube_config_in_cluster(nosa, &c, &err);
  CHECK(r < 0);
  CHECK(err && strstr(err, "none/token"));
  free(err);
  err = NULL;
  unsetenv("KUBERNETES_SERVICE_HOST");
  r = kube_config_in_cluster(sa, &c, &err);
  CHECK_EQ_INT(r, UV_EINVAL);
  CHECK(err && strstr(err, "KUBERNETES_SERVICE_HOST"));
  free(err);
  unsetenv("KUBERNETES_SERVICE_PORT");

  /* With nothing configured, the fallback is ~/.kube/config, named in the error when absent. */
  unsetenv("KUBECONFIG");
  setenv("HOME", dir, 1);
  err = NULL;
  r = kube_config_load(NULL, NULL, &c, &err);
  CHECK_EQ_INT(r, UV_ENOENT);
  CHECK(err && strstr(err, ".kube/config"));
  free(err);
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/rudder-kc-XXXXXX");
  if (!mkdtemp(dir)) { perror("mkdtemp"); return 2; }
  test_inline();
  test_parse_text();
  test_files();
  test_exec();
  test_errors();
  test_server_urls();
  test_in_cluster();
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", dir);
  return t_done();
}
