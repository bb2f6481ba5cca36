/* On a private control plane (tests/cluster/up --name ...): an informer's watch survives the
 * kube-apiserver being stopped and started again (changes made afterwards arrive, the cache equals
 * a fresh list), and etcd compaction while the informer is cut off (a proxy) makes its watch fail
 * with 410 Gone, so it relists and converges. The API server comes back with --watch-cache=false
 * so that watches are served by etcd and compaction is seen as it would be on a busy cluster. */
#include "test_watch_kube.h"
#include "test_watch_proxy.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

static char state[512];

static void cluster_down(void) {
  if (!*state) return;
  const char *src = getenv("RUDDER_SOURCE_DIR");
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "%s/tests/cluster/down %s >/dev/null 2>&1", src ? src : ".", state);
  if (system(cmd) != 0) fprintf(stderr, "cluster down failed\n");
}

static int cluster_up(void) {
  const char *src = getenv("RUDDER_SOURCE_DIR");
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "%s/tests/cluster/up --name rudder-restart-%d", src ? src : ".", (int)getpid());
  FILE *f = popen(cmd, "r");
  if (!f) return -1;
  char line[1200];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    if (!strncmp(line, "export KUBECONFIG=", 18)) setenv("KUBECONFIG", line + 18, 1);
    if (!strncmp(line, "export RUDDER_CLUSTER_STATE=", 28)) snprintf(state, sizeof state, "%.500s", line + 28);
  }
  return pclose(f) == 0 && *state ? 0 : -1;
}

static int read_int_file(const char *path) {
  FILE *f = fopen(path, "r");
  int v = -1;
  if (f) { if (fscanf(f, "%d", &v) != 1) v = -1; fclose(f); }
  return v;
}

static int etcd_port(void) {
  char p[700], line[128];
  snprintf(p, sizeof p, "%s/ports", state);
  FILE *f = fopen(p, "r");
  int port = -1;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "etcd=", 5)) port = atoi(line + 5);
  if (f) fclose(f);
  return port;
}

/* Stops kube-apiserver and starts it again with the same command line plus extra. */
static int restart_apiserver(const char *extra) {
  char pidfile[700];
  snprintf(pidfile, sizeof pidfile, "%s/pids/02-kube-apiserver.pid", state);
  int pid = read_int_file(pidfile);
  if (pid <= 0) return -1;
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
  static char cmdline[65536];
  int fd = open(path, O_RDONLY);
  ssize_t n = fd >= 0 ? read(fd, cmdline, sizeof cmdline - 1) : -1;
  if (fd >= 0) close(fd);
  if (n <= 0) return -1;
  char *argv[256];
  int argc = 0;
  for (char *p = cmdline; p < cmdline + n && argc < 250; p += strlen(p) + 1) argv[argc++] = p;
  if (extra) argv[argc++] = (char *)extra;
  argv[argc] = NULL;
  kill(pid, SIGTERM);
  for (int i = 0; i < 50 && kill(pid, 0) == 0; i++) usleep(100000); /* 5 s of grace, then a crash */
  if (kill(pid, 0) == 0) kill(pid, SIGKILL);
  usleep(200000);
  /* Double fork: the new server belongs to init, in its own session, logging where the old one did. */
  int pfd[2];
  if (pipe(pfd)) return -1;
  pid_t c = fork();
  if (c == 0) {
    pid_t g = fork();
    if (g == 0) {
      setsid();
      char log[700];
      snprintf(log, sizeof log, "%s/logs/kube-apiserver.log", state);
      int lf = open(log, O_WRONLY | O_APPEND | O_CREAT, 0644);
      int nul = open("/dev/null", O_RDONLY);
      dup2(nul, 0);
      dup2(lf, 1);
      dup2(lf, 2);
      execv(argv[0], argv);
      _exit(127);
    }
    if (write(pfd[1], &g, sizeof g) != sizeof g) _exit(1);
    _exit(0);
  }
  pid_t g = -1;
  if (read(pfd[0], &g, sizeof g) != sizeof g) g = -1;
  waitpid(c, NULL, 0);
  close(pfd[0]);
  close(pfd[1]);
  FILE *f = fopen(pidfile, "w");
  if (f) { fprintf(f, "%d\n", (int)g); fclose(f); }
  return g > 0 ? 0 : -1;
}

static int synced;
static void on_synced(informer_t *i, void *d) { synced = 1; }

static int pending;
static void write_cb(const kube_response_t *res, void *data) { pending--; }

static void create_some(kube_client_t *w, const char *coll, int from, int n) {
  for (int i = from; i < from + n; i++) {
    char body[256];
    snprintf(body, sizeof body, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm-%d\"}}", i);
    if (kube_create(w, coll, body, write_cb, NULL)) pending++;
  }
  RUN_UNTIL(pending == 0, 30000);
}

static int converged(kube_client_t *w, informer_t *inf, const char *coll, int ms) {
  char *list = k_list_rvs(w, coll);
  int same = 0;
  for (int waited = 0; waited <= ms && !same; waited += 200) {
    char *cache = k_cache_rvs(inf);
    same = !strcmp(cache, list);
    free(cache);
    if (!same) {
      run_for(200);
      if (waited % 2000 == 0) { free(list); list = k_list_rvs(w, coll); }
    }
  }
  free(list);
  return same;
}

static int ready(kube_client_t *w) {
  kres_t r = k_do(w, "GET", "/readyz", NULL);
  int ok = k_ok(&r);
  kres_free(&r);
  return ok;
}

/* etcd's current revision, from its HTTP JSON gateway. */
static long long etcd_revision(kube_client_t *e) {
  kres_t r = k_do(e, "POST", "/v3/kv/range", "{\"key\":\"Lw==\"}");
  cJSON *j = k_ok(&r) ? cJSON_Parse(r.body) : NULL;
  if (!j) fprintf(stderr, "etcd range: %s\n", r.errmsg ? r.errmsg : r.body);
  kres_free(&r);
  const char *rev = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "header"), "revision"));
  long long v = rev ? atoll(rev) : -1;
  cJSON_Delete(j);
  return v;
}

int main(void) {
  if (cluster_up()) {
    fprintf(stderr, "FAIL: could not start a private cluster with tests/cluster/up\n");
    cluster_down();
    return 1;
  }
  uv_loop_init(&loop);
  tproxy_t px;
  CHECK_EQ_INT(tproxy_start(&px, &loop, k_server_port()), 0);
  kube_client_t *c = k_client(px.port), *w = k_client(0);
  kube_client_limits_t l = {.qps = -1};
  kube_client_set_limits(w, &l);
  const char *ns = "restart";
  char coll[128];
  snprintf(coll, sizeof coll, "/api/v1/namespaces/%s/configmaps", ns);
  k_namespace(w, ns);
  create_some(w, coll, 0, 20);
  informer_opts_t o = {.path = coll, .backoff_base_ms = 200, .backoff_max_ms = 2000};
  informer_handlers_t h = {.on_synced = on_synced};
  informer_t *inf;
  CHECK_EQ_INT(informer_start(c, &o, &h, &inf), 0);
  CHECK(RUN_UNTIL(synced, 20000));
  CHECK(converged(w, inf, coll, 5000));

  /* 1. The API server restarts. */
  unsigned lists0, watches0;
  informer_stats(inf, &lists0, &watches0);
  CHECK_EQ_INT(restart_apiserver("--watch-cache=false"), 0);
  uint64_t t0 = uv_now(&loop);
  int up = 0;
  while (!up && uv_now(&loop) - t0 < 90000) {
    up = ready(w);
    if (!up) run_for(500);
  }
  CHECK(up);
  printf("kube-apiserver back after %llu ms\n", (unsigned long long)(uv_now(&loop) - t0));
  create_some(w, coll, 100, 30);
  CHECK(converged(w, inf, coll, 30000));
  unsigned lists1, watches1;
  informer_stats(inf, &lists1, &watches1);
  printf("after the restart: %u lists, %u watches (were %u, %u)\n", lists1, watches1, lists0, watches0);
  CHECK(watches1 > watches0);

  /* 2. Compaction while the informer is cut off: its watch gets 410 Gone and it relists. */
  kube_config_t ecfg = {0};
  char url[64], *err = NULL;
  snprintf(url, sizeof url, "http://127.0.0.1:%d", etcd_port());
  kube_config_set_server(&ecfg, url, &err);
  kube_client_t *e;
  CHECK_EQ_INT(kube_client_new(&loop, &ecfg, &e, &err), 0);
  kube_config_free(&ecfg);
  px.down = 1;
  tproxy_cut(&px);
  run_for(300);
  create_some(w, coll, 200, 30);
  for (int i = 0; i < 10; i++) {
    char path[200];
    snprintf(path, sizeof path, "%s/cm-%d", coll, i);
    kres_t r = k_do(w, "DELETE", path, NULL);
    kres_free(&r);
  }
  long long rev = etcd_revision(e);
  CHECK(rev > 0);
  char body[128];
  snprintf(body, sizeof body, "{\"revision\":\"%lld\",\"physical\":true}", rev);
  kres_t r = k_do(e, "POST", "/v3/kv/compaction", body);
  CHECK(k_ok(&r));
  if (!k_ok(&r)) fprintf(stderr, "compaction: %s %s\n", r.errmsg ? r.errmsg : "", r.body ? r.body : "");
  kres_free(&r);
  printf("compacted etcd at revision %lld\n", rev);
  informer_stats(inf, &lists1, &watches1);
  px.down = 0;
  CHECK(converged(w, inf, coll, 30000));
  unsigned lists2, watches2;
  informer_stats(inf, &lists2, &watches2);
  printf("after compaction: %u lists, %u watches\n", lists2, watches2);
  CHECK(lists2 > lists1); /* the 410 made it list again */
  CHECK_EQ_INT(informer_count(inf), 20 + 30 + 30 - 10 + 1); /* + kube-root-ca.crt */

  k_informer_stop(inf);
  k_client_close(e);
  k_client_close(c);
  k_client_close(w);
  tproxy_stop(&px);
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(uv_loop_close(&loop), 0);
  cluster_down();
  return t_done();
}
