/* Helpers for the tests that run against a real API server (test_*_cluster.c): a loop, clients
 * from $KUBECONFIG (optionally pointed at another port, e.g. a fault-injecting proxy), blocking
 * request helpers that run the loop, and namespaces. */
#pragma once
#include "t.h"
#include "watch/client.h"
#include "watch/informer.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uv_loop_t loop;

typedef struct kres_s {
  int done, err, status;
  char *body, *errmsg;
} kres_t;

static inline void kres_free(kres_t *r) {
  free(r->body);
  free(r->errmsg);
  memset(r, 0, sizeof *r);
}

static inline void kres_cb(const kube_response_t *res, void *data) {
  kres_t *r = data;
  free(r->body);
  free(r->errmsg);
  r->done++;
  r->err = res->err;
  r->status = res->status;
  r->body = strndup(res->body, res->body_len);
  r->errmsg = res->errmsg ? strdup(res->errmsg) : NULL;
}

static int k_deadline;
static inline void k_deadline_cb(uv_timer_t *t) { k_deadline = 1; }

/* Runs the loop until cond() is true or ms pass; returns cond(). */
#define RUN_UNTIL(cond, ms)                                              \
  ({                                                                     \
    uv_timer_t _t;                                                       \
    uv_timer_init(&loop, &_t);                                           \
    k_deadline = 0;                                                      \
    uv_timer_start(&_t, k_deadline_cb, (ms), 0);                         \
    while (!(cond) && !k_deadline) uv_run(&loop, UV_RUN_ONCE);           \
    uv_close((uv_handle_t *)&_t, NULL);                                  \
    uv_run(&loop, UV_RUN_NOWAIT);                                        \
    (cond);                                                              \
  })

static inline void run_for(uint64_t ms) {
  int never = 0;
  RUN_UNTIL(never, ms);
}

/* Loads $KUBECONFIG; when port > 0 the server is rewritten to https://127.0.0.1:port. */
static inline kube_client_t *k_client(int port) {
  const char *kc = getenv("KUBECONFIG");
  if (!kc || !*kc) {
    fprintf(stderr, "FAIL: KUBECONFIG is unset: this test needs the local control plane (ctest runs it with the "
                    "e2e.cluster-up fixture; by hand: eval \"$(tests/cluster/up)\")\n");
    exit(1);
  }
  kube_config_t cfg;
  char *err = NULL;
  if (kube_config_load(NULL, NULL, &cfg, &err)) {
    fprintf(stderr, "FAIL: kubeconfig: %s\n", err);
    exit(1);
  }
  if (port > 0) {
    char url[64];
    snprintf(url, sizeof url, "https://127.0.0.1:%d", port);
    kube_config_set_server(&cfg, url, &err);
  }
  kube_client_t *c;
  if (kube_client_new(&loop, &cfg, &c, &err)) {
    fprintf(stderr, "FAIL: client: %s\n", err);
    exit(1);
  }
  kube_config_free(&cfg);
  return c;
}

/* The API server's port from $KUBECONFIG. */
static inline int k_server_port(void) {
  kube_config_t cfg;
  char *err = NULL;
  if (kube_config_load(NULL, NULL, &cfg, &err)) return -1;
  int p = cfg.port;
  kube_config_free(&cfg);
  return p;
}

/* A blocking request: method, path, JSON body (or NULL). */
static inline kres_t k_do(kube_client_t *c, const char *method, const char *path, const char *body) {
  kres_t r = {0};
  kube_req_opts_t o = {.method = method, .path = path, .body = body, .body_len = body ? strlen(body) : 0,
                       .content_type = method && !strcmp(method, "PATCH") ? "application/merge-patch+json" : NULL};
  if (!kube_request(c, &o, kres_cb, &r)) {
    r.err = UV_ENOMEM;
    return r;
  }
  RUN_UNTIL(r.done, 60000);
  return r;
}

static inline int k_ok(kres_t *r) { return r->err == 0 && r->status >= 200 && r->status < 300; }

static inline void k_namespace(kube_client_t *c, const char *ns) {
  char body[256];
  snprintf(body, sizeof body, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}", ns);
  kres_t r = k_do(c, "POST", "/api/v1/namespaces", body);
  if (!k_ok(&r) && r.status != 409) fprintf(stderr, "creating namespace %s: %s\n", ns, r.errmsg ? r.errmsg : "?");
  kres_free(&r);
}

static inline void k_delete_namespace(kube_client_t *c, const char *ns) {
  char path[256];
  snprintf(path, sizeof path, "/api/v1/namespaces/%s", ns);
  kres_t r = k_do(c, "DELETE", path, NULL);
  kres_free(&r);
}

static inline void k_closed_cb(void *d) { (*(int *)d)++; }

static inline void k_client_close(kube_client_t *c) {
  int closed = 0;
  kube_client_close(c, k_closed_cb, &closed);
  RUN_UNTIL(closed, 10000);
  CHECK_EQ_INT(closed, 1);
}

static inline void k_informer_stop(informer_t *inf) {
  int stopped = 0;
  informer_stop(inf, k_closed_cb, &stopped);
  RUN_UNTIL(stopped, 10000);
  CHECK_EQ_INT(stopped, 1);
}

/* Lists a collection fully (paginated) into name -> resourceVersion lines "name=rv\n", sorted. */
static int k__cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
static inline char *k_list_rvs(kube_client_t *c, const char *coll) {
  char **lines = NULL;
  size_t n = 0, cap = 0;
  char *cont = NULL;
  do {
    buf_t p = BUF_INIT;
    buf_puts(&p, coll);
    kube_query_add(&p, "limit", "500");
    if (cont) kube_query_add(&p, "continue", cont);
    free(cont);
    cont = NULL;
    kres_t r = k_do(c, "GET", p.data, NULL);
    buf_free(&p);
    if (!k_ok(&r)) { fprintf(stderr, "list %s: %s\n", coll, r.errmsg ? r.errmsg : "?"); kres_free(&r); break; }
    cJSON *j = cJSON_Parse(r.body);
    kres_free(&r);
    cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(j, "items")) {
      const cJSON *md = cJSON_GetObjectItem(it, "metadata");
      char line[400];
      snprintf(line, sizeof line, "%s=%s", cJSON_GetStringValue(cJSON_GetObjectItem(md, "name")),
               cJSON_GetStringValue(cJSON_GetObjectItem(md, "resourceVersion")));
      if (n == cap) lines = realloc(lines, (cap = cap ? cap * 2 : 256) * sizeof *lines);
      lines[n++] = strdup(line);
    }
    const char *ct = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "metadata"), "continue"));
    if (ct && *ct) cont = strdup(ct);
    cJSON_Delete(j);
  } while (cont);
  qsort(lines, n, sizeof *lines, k__cmp);
  buf_t out = BUF_INIT;
  buf_puts(&out, "");
  for (size_t i = 0; i < n; i++) {
    buf_printf(&out, "%s\n", lines[i]);
    free(lines[i]);
  }
  free(lines);
  return buf_steal(&out);
}

/* The same from an informer's cache (names only, as keys are "ns/name"). */
static inline char *k_cache_rvs(informer_t *inf) {
  size_t n = informer_count(inf), i = 0, it = 0;
  char **lines = calloc(n + 1, sizeof *lines);
  const char *key;
  const cJSON *obj;
  while (informer_next(inf, &it, &key, &obj) && i < n) {
    const cJSON *md = cJSON_GetObjectItem(obj, "metadata");
    char line[400];
    snprintf(line, sizeof line, "%s=%s", cJSON_GetStringValue(cJSON_GetObjectItem(md, "name")),
             cJSON_GetStringValue(cJSON_GetObjectItem(md, "resourceVersion")));
    lines[i++] = strdup(line);
  }
  qsort(lines, i, sizeof *lines, k__cmp);
  buf_t out = BUF_INIT;
  buf_puts(&out, "");
  for (size_t k = 0; k < i; k++) {
    buf_printf(&out, "%s\n", lines[k]);
    free(lines[k]);
  }
  free(lines);
  return buf_steal(&out);
}
