/* Leader election against the real API server: of two candidates only one leads; a clean stop
 * releases the lease and the other takes over at once; killing the leader (SIGKILL, another
 * process) hands over within the lease time; a leader cut off from the API server (a proxy that
 * drops everything) stops leading within the renew deadline, before anyone else can start. */
#include "test_watch_kube.h"
#include "test_watch_proxy.h"
#include "loop/leader.h"
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

typedef struct cand_s {
  const char *id;
  int started, stopped;
  uint64_t started_at, stopped_at;
} cand_t;

static int leading_now, overlap;

static void on_started(leader_t *l, void *data) {
  cand_t *c = data;
  c->started++;
  c->started_at = uv_now(&loop);
  if (++leading_now > 1) overlap++;
}
static void on_stopped(leader_t *l, void *data) {
  cand_t *c = data;
  c->stopped++;
  c->stopped_at = uv_now(&loop);
  leading_now--;
}

static int child_fd;
static void child_started(leader_t *l, void *data) {
  if (write(child_fd, "L", 1) != 1) _exit(3);
}

/* The other process: campaigns for the lease and holds it until killed. */
static void child_main(const char *lease, int fd) {
  child_fd = fd;
  uv_loop_init(&loop);
  kube_client_t *c = k_client(0);
  leader_t *l;
  leader_opts_t o = {.namespace = "default", .name = lease, .identity = "child", .lease_ms = 4000, .renew_ms = 3000,
                     .retry_ms = 1000};
  if (leader_start(&loop, c, &o, child_started, NULL, NULL, &l)) _exit(2);
  uv_run(&loop, UV_RUN_DEFAULT);
  _exit(0);
}

static void stop_wait(leader_t *l) {
  int done = 0;
  leader_stop(l, k_closed_cb, &done);
  RUN_UNTIL(done, 10000);
  CHECK_EQ_INT(done, 1);
}

static cJSON *get_lease(kube_client_t *c, const char *name) {
  char path[256];
  snprintf(path, sizeof path, "/apis/coordination.k8s.io/v1/namespaces/default/leases/%s", name);
  kres_t r = k_do(c, "GET", path, NULL);
  cJSON *j = k_ok(&r) ? cJSON_Parse(r.body) : NULL;
  kres_free(&r);
  return j;
}

static const char *spec_str(cJSON *lease, const char *k) {
  return cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(lease, "spec"), k));
}

int main(void) {
  char ab[64], kill_lease[64], cut[64];
  snprintf(ab, sizeof ab, "rudder-test-ab-%d", (int)getpid());
  snprintf(kill_lease, sizeof kill_lease, "rudder-test-kill-%d", (int)getpid());
  snprintf(cut, sizeof cut, "rudder-test-cut-%d", (int)getpid());
  if (!getenv("KUBECONFIG")) {
    fprintf(stderr, "FAIL: KUBECONFIG is unset: this test needs the local control plane\n");
    return 1;
  }
  /* Fork before this process has a loop, so that the child starts clean. */
  int fds[2];
  if (pipe(fds)) return 2;
  pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    child_main(kill_lease, fds[1]);
  }
  close(fds[1]);
  uv_loop_init(&loop);
  kube_client_t *c = k_client(0);

  /* Bad options. */
  leader_t *l;
  CHECK_EQ_INT(leader_start(&loop, c, &(leader_opts_t){.namespace = "default"}, NULL, NULL, NULL, &l), UV_EINVAL);
  CHECK_EQ_INT(leader_start(&loop, c, &(leader_opts_t){.namespace = "default", .name = "x", .renew_ms = 20000},
                            NULL, NULL, NULL, &l), UV_EINVAL);

  /* 1. Two candidates: A leads, B waits; A stops cleanly and B takes over at once. */
  cand_t a = {.id = "cand-a"}, b = {.id = "cand-b"};
  leader_opts_t oa = {.namespace = "default", .name = ab, .identity = "cand-a", .lease_ms = 4000, .renew_ms = 3000,
                      .retry_ms = 500};
  leader_opts_t ob = oa;
  ob.identity = "cand-b";
  leader_t *la, *lb;
  CHECK_EQ_INT(leader_start(&loop, c, &oa, on_started, on_stopped, &a, &la), 0);
  CHECK(RUN_UNTIL(a.started, 10000));
  CHECK(leader_is_leader(la));
  CHECK_EQ_INT(leader_start(&loop, c, &ob, on_started, on_stopped, &b, &lb), 0);
  run_for(5000); /* longer than the lease: A keeps renewing, so B must never lead */
  CHECK_EQ_INT(b.started, 0);
  CHECK_EQ_STR(leader_holder(lb), "cand-a");
  cJSON *lease = get_lease(c, ab);
  CHECK_EQ_STR(spec_str(lease, "holderIdentity"), "cand-a");
  cJSON_Delete(lease);
  uint64_t t0 = uv_now(&loop);
  stop_wait(la);
  CHECK_EQ_INT(a.stopped, 1);
  CHECK(RUN_UNTIL(b.started, 10000));
  /* Released: B needs only its next try (retry 0.5 s, jittered up to 2.2x), not the 4 s lease. */
  CHECK(b.started_at - t0 < 2500);
  printf("clean handover after %llu ms\n", (unsigned long long)(b.started_at - t0));
  lease = get_lease(c, ab);
  CHECK_EQ_STR(spec_str(lease, "holderIdentity"), "cand-b");
  CHECK_EQ_INT(cJSON_GetObjectItem(cJSON_GetObjectItem(lease, "spec"), "leaseTransitions")->valueint, 1);
  cJSON_Delete(lease);
  stop_wait(lb);
  lease = get_lease(c, ab);
  CHECK_EQ_STR(spec_str(lease, "holderIdentity"), "");
  CHECK_EQ_INT(cJSON_GetObjectItem(cJSON_GetObjectItem(lease, "spec"), "leaseDurationSeconds")->valueint, 1);
  cJSON_Delete(lease);
  CHECK_EQ_INT(overlap, 0);

  /* 2. The leader is another process, killed with SIGKILL: no release, so the lease must expire. */
  struct pollfd pf = {.fd = fds[0], .events = POLLIN};
  char ch = 0;
  CHECK(poll(&pf, 1, 20000) == 1 && read(fds[0], &ch, 1) == 1 && ch == 'L');
  cand_t d = {.id = "cand-d"};
  leader_opts_t od = {.namespace = "default", .name = kill_lease, .identity = "cand-d", .lease_ms = 4000,
                      .renew_ms = 3000, .retry_ms = 1000};
  leader_t *ld;
  CHECK_EQ_INT(leader_start(&loop, c, &od, on_started, on_stopped, &d, &ld), 0);
  run_for(5000);
  CHECK_EQ_INT(d.started, 0);
  CHECK_EQ_STR(leader_holder(ld), "child");
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  t0 = uv_now(&loop);
  CHECK(RUN_UNTIL(d.started, 15000));
  uint64_t dt = d.started_at - t0;
  printf("handover after the leader was killed: %llu ms (lease 4000 ms)\n", (unsigned long long)dt);
  /* After the lease as this candidate observed it, a jittered retry (up to 2.2 s) and a request.
   * The bound allows three retries and slow requests: CI runs this under ASan next to other tests,
   * and the point is that the lease, not some longer timeout, decides the handover. */
  CHECK(dt <= 4000 + 3 * 2200 + 3000);
  stop_wait(ld);

  /* 3. A leader cut off from the API server stops leading within the renew deadline, and the
   * other candidate starts only after that. */
  tproxy_t px;
  CHECK_EQ_INT(tproxy_start(&px, &loop, k_server_port()), 0);
  kube_client_t *cp = k_client(px.port);
  cand_t e = {.id = "cand-e"}, f = {.id = "cand-f"};
  leader_opts_t oe = {.namespace = "default", .name = cut, .identity = "cand-e", .lease_ms = 4000, .renew_ms = 3000,
                      .retry_ms = 500};
  leader_opts_t of = oe;
  of.identity = "cand-f";
  leader_t *le, *lf;
  CHECK_EQ_INT(leader_start(&loop, cp, &oe, on_started, on_stopped, &e, &le), 0);
  CHECK(RUN_UNTIL(e.started, 10000));
  CHECK_EQ_INT(leader_start(&loop, c, &of, on_started, on_stopped, &f, &lf), 0);
  run_for(1500);
  CHECK_EQ_INT(f.started, 0);
  px.down = 1;
  tproxy_cut(&px);
  t0 = uv_now(&loop);
  CHECK(RUN_UNTIL(f.started, 15000));
  CHECK_EQ_INT(e.stopped, 1);
  CHECK(e.stopped_at < f.started_at);
  CHECK(e.stopped_at - t0 <= 3000 + 600);
  printf("cut-off leader stopped after %llu ms; the other started after %llu ms\n",
         (unsigned long long)(e.stopped_at - t0), (unsigned long long)(f.started_at - t0));
  CHECK_EQ_INT(overlap, 0);
  stop_wait(le); /* cannot release (cut off): it just stops */
  stop_wait(lf);
  k_client_close(cp);
  tproxy_stop(&px);

  /* Clean up the leases. */
  const char *names[] = {ab, kill_lease, cut};
  for (int i = 0; i < 3; i++) {
    char path[256];
    snprintf(path, sizeof path, "/apis/coordination.k8s.io/v1/namespaces/default/leases/%s", names[i]);
    kres_t r = k_do(c, "DELETE", path, NULL);
    kres_free(&r);
  }
  k_client_close(c);
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(uv_loop_close(&loop), 0);
  close(fds[0]);
  return t_done();
}
