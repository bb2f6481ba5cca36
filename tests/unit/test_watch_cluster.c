/* Against a real API server, when KUBECONFIG names one (eval "$(tests/cluster/up)"): list
 * namespaces, discovery, server-side apply, merge patch and delete of a ConfigMap, and an informer
 * that sees those changes. Without KUBECONFIG it fails, saying what is missing; ctest runs it as an end-to-end test. */
#include "t.h"
#include "watch/discovery.h"
#include "watch/informer.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uv_loop_t loop;

typedef struct rec_s {
  int calls, err, status;
  char *body, *errmsg;
} rec_t;

static void rec_cb(const kube_response_t *res, void *data) {
  rec_t *r = data;
  r->calls++;
  r->err = res->err;
  r->status = res->status;
  free(r->body);
  free(r->errmsg);
  r->body = strndup(res->body, res->body_len);
  r->errmsg = res->errmsg ? strdup(res->errmsg) : NULL;
  if (res->errmsg) fprintf(stderr, "response: %s\n", res->errmsg);
}

static void rec_free(rec_t *r) {
  free(r->body);
  free(r->errmsg);
  memset(r, 0, sizeof *r);
}

static int deadline;
static void deadline_cb(uv_timer_t *t) { deadline = 1; }
static void run_until(int *flag) {
  uv_timer_t t;
  uv_timer_init(&loop, &t);
  deadline = 0;
  uv_timer_start(&t, deadline_cb, 20000, 0);
  while (!*flag && !deadline) uv_run(&loop, UV_RUN_ONCE);
  uv_close((uv_handle_t *)&t, NULL);
  uv_run(&loop, UV_RUN_NOWAIT);
  if (deadline) fprintf(stderr, "run_until: deadline passed\n");
}

static buf_t seen;
static int synced;
static const char *cm_value(const cJSON *o) {
  return cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "data"), "k"));
}
static void on_add(informer_t *i, const char *key, const cJSON *o, void *d) { buf_printf(&seen, "+%s=%s;", key, cm_value(o)); }
static void on_update(informer_t *i, const char *key, const cJSON *old, const cJSON *o, void *d) {
  buf_printf(&seen, "~%s=%s;", key, cm_value(o));
}
static void on_delete(informer_t *i, const char *key, const cJSON *o, void *d) { buf_printf(&seen, "-%s;", key); }
static void on_synced(informer_t *i, void *d) { synced = 1; }

static int seen_has(const char *s) { return seen.data && strstr(seen.data, s) != NULL; }
static void wait_seen(const char *s) {
  int ok = 0;
  uv_timer_t t;
  uv_timer_init(&loop, &t);
  deadline = 0;
  uv_timer_start(&t, deadline_cb, 20000, 0);
  while (!(ok = seen_has(s)) && !deadline) uv_run(&loop, UV_RUN_ONCE);
  uv_close((uv_handle_t *)&t, NULL);
  uv_run(&loop, UV_RUN_NOWAIT);
  CHECK(ok);
  if (!ok) fprintf(stderr, "informer never saw \"%s\" (saw \"%s\")\n", s, seen.data ? seen.data : "");
}

typedef struct map_s {
  int calls, err, namespaced;
  char resource[64];
} map_t;
static void map_cb(int err, const char *msg, const discovery_mapping_t *m, void *data) {
  map_t *r = data;
  r->calls++;
  r->err = err;
  if (m) {
    snprintf(r->resource, sizeof r->resource, "%s", m->resource);
    r->namespaced = m->namespaced;
  }
}
static int vcalls;
static char gitv[64];
static void ver_cb(int err, const char *msg, const discovery_version_t *v, void *data) {
  vcalls++;
  if (v) snprintf(gitv, sizeof gitv, "%s", v->git_version);
}
static void closed_cb(void *d) { (*(int *)d)++; }
static void on_synced2(informer_t *i, void *d) { (*(int *)d)++; }

int main(void) {
  const char *kc = getenv("KUBECONFIG");
  if (!kc || !*kc) {
    fprintf(stderr, "FAIL: KUBECONFIG is unset: this test needs the local control plane (ctest runs it with the e2e.cluster-up fixture; by hand: eval \"$(tests/cluster/up)\")\n");
    return 1;
  }
  kube_config_t cfg;
  char *err = NULL;
  int r = kube_config_load(NULL, NULL, &cfg, &err);
  CHECK_EQ_INT(r, 0);
  if (r) {
    fprintf(stderr, "kubeconfig: %s\n", err);
    free(err);
    return t_done();
  }
  uv_loop_init(&loop);
  kube_client_t *c;
  r = kube_client_new(&loop, &cfg, &c, &err);
  kube_config_free(&cfg);
  CHECK_EQ_INT(r, 0);
  if (r) { fprintf(stderr, "client: %s\n", err); free(err); return t_done(); }

  /* List namespaces. */
  rec_t q = {0};
  kube_get(c, "/api/v1/namespaces", rec_cb, &q);
  run_until(&q.calls);
  CHECK_EQ_INT(q.err, 0);
  CHECK_EQ_INT(q.status, 200);
  CHECK(q.body && strstr(q.body, "\"name\":\"default\"") && strstr(q.body, "\"name\":\"kube-system\""));
  rec_free(&q);

  /* Discovery and version. */
  discovery_t *d;
  discovery_new(c, &d);
  map_t m = {0};
  discovery_resolve(d, "v1", "ConfigMap", map_cb, &m);
  run_until(&m.calls);
  CHECK_EQ_INT(m.err, 0);
  CHECK_EQ_STR(m.resource, "configmaps");
  CHECK_EQ_INT(m.namespaced, 1);
  memset(&m, 0, sizeof m);
  discovery_resolve(d, "apps/v1", "Deployment", map_cb, &m);
  run_until(&m.calls);
  CHECK_EQ_STR(m.resource, "deployments");
  discovery_server_version(d, ver_cb, NULL);
  run_until(&vcalls);
  CHECK(gitv[0] == 'v');
  printf("server %s\n", gitv);

  /* An informer on labelled ConfigMaps sees apply, patch and delete. */
  char label[24], sel[80], name[64], path[160], body[512];
  snprintf(label, sizeof label, "w%d", (int)getpid());
  snprintf(sel, sizeof sel, "rudder-test=%s", label);
  snprintf(name, sizeof name, "rudder-watch-%s", label);
  informer_opts_t io = {.path = "/api/v1/namespaces/default/configmaps", .label_selector = sel, .page_size = 2};
  informer_handlers_t h = {on_add, on_update, on_delete, on_synced, NULL, NULL};
  informer_t *inf;
  CHECK_EQ_INT(informer_start(c, &io, &h, &inf), 0);
  run_until(&synced);
  CHECK(informer_has_synced(inf));

  buf_t p = BUF_INIT;
  kube_path(&p, "", "v1", "configmaps", "default", name, NULL);
  snprintf(path, sizeof path, "%s", p.data);
  buf_free(&p);
  snprintf(body, sizeof body,
           "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\","
           "\"labels\":{\"rudder-test\":\"%s\"}},\"data\":{\"k\":\"one\"}}", name, label);
  kube_apply(c, path, body, "rudder-test", true, rec_cb, &q);
  run_until(&q.calls);
  CHECK_EQ_INT(q.status, 201); /* apply that creates answers 201 Created */
  rec_free(&q);
  char want[160];
  snprintf(want, sizeof want, "+default/%s=one;", name);
  wait_seen(want);

  kube_merge_patch(c, path, "{\"data\":{\"k\":\"two\"}}", rec_cb, &q);
  run_until(&q.calls);
  CHECK_EQ_INT(q.status, 200);
  rec_free(&q);
  snprintf(want, sizeof want, "~default/%s=two;", name);
  wait_seen(want);

  /* A bad apply: the API's Status message reaches errmsg. */
  kube_apply(c, path, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"other-name\"}}", "rudder-test",
             true, rec_cb, &q);
  run_until(&q.calls);
  CHECK(q.status >= 400);
  CHECK(q.errmsg && strstr(q.errmsg, "HTTP 4"));
  rec_free(&q);

  kube_delete(c, path, "Background", rec_cb, &q);
  run_until(&q.calls);
  CHECK_EQ_INT(q.status, 200);
  rec_free(&q);
  snprintf(want, sizeof want, "-default/%s;", name);
  wait_seen(want);

  kube_get(c, path, rec_cb, &q);
  run_until(&q.calls);
  CHECK_EQ_INT(q.status, 404);
  CHECK(q.errmsg && strstr(q.errmsg, "HTTP 404 Not Found: configmaps") && strstr(q.errmsg, "not found"));
  rec_free(&q);

  /* Pagination with real continue tokens: every namespace has a kube-root-ca.crt ConfigMap. */
  int synced2 = 0;
  informer_opts_t all = {.path = "/api/v1/configmaps", .page_size = 1};
  informer_handlers_t h2 = {.on_synced = on_synced2, .data = &synced2};
  informer_t *inf2;
  CHECK_EQ_INT(informer_start(c, &all, &h2, &inf2), 0);
  run_until(&synced2);
  CHECK(informer_get(inf2, "default/kube-root-ca.crt") != NULL);
  CHECK(informer_get(inf2, "kube-system/kube-root-ca.crt") != NULL);
  unsigned lists = 0;
  informer_stats(inf2, &lists, NULL);
  CHECK_EQ_INT(lists, 1);
  int stopped2 = 0;
  informer_stop(inf2, closed_cb, &stopped2);
  run_until(&stopped2);

  int stopped = 0, dclosed = 0, closed = 0;
  informer_stop(inf, closed_cb, &stopped);
  discovery_close(d, closed_cb, &dclosed);
  run_until(&stopped);
  run_until(&dclosed);
  kube_client_close(c, closed_cb, &closed);
  run_until(&closed);
  CHECK_EQ_INT(closed, 1);
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(uv_loop_close(&loop), 0);
  buf_free(&seen);
  return t_done();
}
