/* REST mapping and server version against a fake discovery server (in-process, loopback):
 * core and named groups, cache hits without requests, one refresh for an unknown kind (a CRD
 * installed later), 404 group-versions, bad input, and cancellation on close. */
#include "t.h"
#include "test_watch_server.h"
#include "watch/discovery.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uv_loop_t loop;
static tsrv_t srv;
static int crd_installed;
static buf_t log_;

static void api(tconn_t *c, const char *method, const char *url, const char *headers, const char *body, size_t len) {
  buf_printf(&log_, "%s;", url);
  if (!strcmp(url, "/api/v1")) {
    tsrv_respond(c, 200, "OK", "application/json",
                 "{\"kind\":\"APIResourceList\",\"groupVersion\":\"v1\",\"resources\":["
                 "{\"name\":\"pods\",\"singularName\":\"pod\",\"namespaced\":true,\"kind\":\"Pod\"},"
                 "{\"name\":\"pods/status\",\"namespaced\":true,\"kind\":\"Pod\"},"
                 "{\"name\":\"namespaces\",\"namespaced\":false,\"kind\":\"Namespace\"}]}");
  } else if (!strcmp(url, "/apis/apps/v1")) {
    tsrv_respond(c, 200, "OK", "application/json",
                 "{\"resources\":[{\"name\":\"deployments\",\"namespaced\":true,\"kind\":\"Deployment\"}]}");
  } else if (!strcmp(url, "/apis/rudder.dev/v1alpha1")) {
    tsrv_respond(c, 200, "OK", "application/json",
                 crd_installed ? "{\"resources\":[{\"name\":\"helmreleases\",\"namespaced\":true,\"kind\":\"HelmRelease\"}]}"
                               : "{\"resources\":[]}");
  } else if (!strcmp(url, "/version")) {
    tsrv_respond(c, 200, "OK", "application/json", "{\"major\":\"1\",\"minor\":\"34\",\"gitVersion\":\"v1.34.1\"}");
  } else if (!strcmp(url, "/apis/slow/v1")) {
    /* never answers */
  } else {
    tsrv_respond(c, 404, "Not Found", "application/json",
                 "{\"kind\":\"Status\",\"message\":\"the server could not find the requested resource\",\"code\":404}");
  }
}

typedef struct res_s {
  int calls, err, namespaced;
  char resource[64], group[64], msg[256];
} res_t;

static void map_cb(int err, const char *errmsg, const discovery_mapping_t *m, void *data) {
  res_t *r = data;
  r->calls++;
  r->err = err;
  snprintf(r->msg, sizeof r->msg, "%s", errmsg ? errmsg : "");
  if (m) {
    snprintf(r->resource, sizeof r->resource, "%s", m->resource);
    snprintf(r->group, sizeof r->group, "%s", m->group);
    r->namespaced = m->namespaced;
  }
}

static char ver[64];
static int ver_calls, ver_err;
static void ver_cb(int err, const char *errmsg, const discovery_version_t *v, void *data) {
  ver_calls++;
  ver_err = err;
  if (v) snprintf(ver, sizeof ver, "%s.%s %s", v->major, v->minor, v->git_version);
}

static int deadline;
static void deadline_cb(uv_timer_t *t) { deadline = 1; }
static void run_until(int *flag) {
  uv_timer_t t;
  uv_timer_init(&loop, &t);
  deadline = 0;
  uv_timer_start(&t, deadline_cb, 5000, 0);
  while (!*flag && !deadline) uv_run(&loop, UV_RUN_ONCE);
  uv_close((uv_handle_t *)&t, NULL);
  uv_run(&loop, UV_RUN_NOWAIT);
}
static void closed_cb(void *d) { (*(int *)d)++; }

/* Resolves and waits. */
static void resolve(discovery_t *d, const char *av, const char *kind, res_t *r) {
  memset(r, 0, sizeof *r);
  CHECK_EQ_INT(discovery_resolve(d, av, kind, map_cb, r), 0);
  CHECK_EQ_INT(r->calls, 0); /* never inside the call, even from the cache */
  run_until(&r->calls);
  CHECK_EQ_INT(r->calls, 1);
}

int main(void) {
  uv_loop_init(&loop);
  if (tsrv_start(&srv, &loop, api)) return 2;
  char url[64], *err = NULL;
  snprintf(url, sizeof url, "http://127.0.0.1:%d", srv.port);
  kube_config_t cfg = {0};
  kube_config_set_server(&cfg, url, &err);
  kube_client_t *c;
  CHECK_EQ_INT(kube_client_new(&loop, &cfg, &c, &err), 0);
  kube_config_free(&cfg);
  discovery_t *d;
  CHECK_EQ_INT(discovery_new(c, &d), 0);
  res_t r, r2;

  resolve(d, "v1", "Pod", &r);
  CHECK_EQ_INT(r.err, 0);
  CHECK_EQ_STR(r.resource, "pods");
  CHECK_EQ_STR(r.group, "");
  CHECK_EQ_INT(r.namespaced, 1);
  resolve(d, "v1", "Namespace", &r);
  CHECK_EQ_STR(r.resource, "namespaces");
  CHECK_EQ_INT(r.namespaced, 0);
  CHECK_EQ_STR(log_.data, "/api/v1;"); /* the second came from the cache */
  discovery_mapping_t m;
  CHECK_EQ_INT(discovery_lookup(d, "v1", "Pod", &m), 0);
  CHECK_EQ_STR(m.resource, "pods");
  CHECK_EQ_INT(discovery_lookup(d, "apps/v1", "Deployment", &m), UV_ENOENT);

  /* Two look-ups in one group-version share a single request. */
  buf_reset(&log_);
  memset(&r, 0, sizeof r);
  memset(&r2, 0, sizeof r2);
  discovery_resolve(d, "apps/v1", "Deployment", map_cb, &r);
  discovery_resolve(d, "apps/v1", "Deployment", map_cb, &r2);
  run_until(&r2.calls);
  run_until(&r.calls);
  CHECK_EQ_STR(r.resource, "deployments");
  CHECK_EQ_STR(r2.resource, "deployments");
  CHECK_EQ_STR(r.group, "apps");
  CHECK_EQ_STR(log_.data, "/apis/apps/v1;");

  /* An unknown kind: one fetch, then a clear error; after the CRD appears, one refresh finds it. */
  buf_reset(&log_);
  resolve(d, "rudder.dev/v1alpha1", "HelmRelease", &r);
  CHECK_EQ_INT(r.err, UV_ENOENT);
  CHECK_EQ_STR(r.msg, "kind HelmRelease is not served in apiVersion rudder.dev/v1alpha1 (is its CRD installed?)");
  CHECK_EQ_STR(log_.data, "/apis/rudder.dev/v1alpha1;");
  crd_installed = 1;
  resolve(d, "rudder.dev/v1alpha1", "HelmRelease", &r);
  CHECK_EQ_INT(r.err, 0);
  CHECK_EQ_STR(r.resource, "helmreleases");
  CHECK_EQ_STR(log_.data, "/apis/rudder.dev/v1alpha1;/apis/rudder.dev/v1alpha1;");
  resolve(d, "rudder.dev/v1alpha1", "Bogus", &r); /* cached group: exactly one refresh */
  CHECK_EQ_INT(r.err, UV_ENOENT);
  CHECK_EQ_STR(log_.data, "/apis/rudder.dev/v1alpha1;/apis/rudder.dev/v1alpha1;/apis/rudder.dev/v1alpha1;");

  /* A group-version the server does not serve, and malformed apiVersions. */
  resolve(d, "nope.io/v1", "Thing", &r);
  CHECK_EQ_INT(r.err, UV_ENOENT);
  CHECK_EQ_STR(r.msg, "apiVersion nope.io/v1 is not served by the API server (HTTP 404)");
  resolve(d, "a/b/c", "X", &r);
  CHECK_EQ_INT(r.err, UV_EINVAL);
  CHECK(strstr(r.msg, "invalid apiVersion \"a/b/c\""));
  resolve(d, "/v1", "X", &r);
  CHECK_EQ_INT(r.err, UV_EINVAL);

  /* Server version, fetched once. */
  buf_reset(&log_);
  CHECK_EQ_INT(discovery_server_version(d, ver_cb, NULL), 0);
  run_until(&ver_calls);
  CHECK_EQ_INT(ver_err, 0);
  CHECK_EQ_STR(ver, "1.34 v1.34.1");
  ver_calls = 0;
  discovery_server_version(d, ver_cb, NULL);
  run_until(&ver_calls);
  CHECK_EQ_STR(log_.data, "/version;");

  /* Invalidation forces a fetch. */
  discovery_invalidate(d);
  buf_reset(&log_);
  resolve(d, "v1", "Pod", &r);
  CHECK_EQ_STR(r.resource, "pods");
  CHECK_EQ_STR(log_.data, "/api/v1;");

  /* Closing cancels look-ups in flight. */
  memset(&r, 0, sizeof r);
  discovery_resolve(d, "slow/v1", "X", map_cb, &r);
  uv_run(&loop, UV_RUN_NOWAIT);
  int dclosed = 0, cclosed = 0;
  discovery_close(d, closed_cb, &dclosed);
  CHECK_EQ_INT(r.calls, 1);
  CHECK_EQ_INT(r.err, UV_ECANCELED);
  run_until(&dclosed);
  CHECK_EQ_INT(dclosed, 1);
  kube_client_close(c, closed_cb, &cclosed);
  run_until(&cclosed);
  CHECK_EQ_INT(cclosed, 1);
  tsrv_stop(&srv);
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(uv_loop_close(&loop), 0);
  buf_free(&log_);
  return t_done();
}
