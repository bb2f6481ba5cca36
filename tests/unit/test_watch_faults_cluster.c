/* An informer behind a TCP proxy that cuts every connection at random (200-800 ms) while a writer
 * creates, updates and deletes ConfigMaps: the state rebuilt from the handlers' add/update/delete
 * calls never sees a duplicate add, an update from an unknown version or a delete of an unknown
 * key, and at the end both it and the cache equal a fresh list. */
#include "test_watch_kube.h"
#include "test_watch_proxy.h"
#include "watch/internal.h"

static watch_map_t model = WATCH_MAP_INIT; /* key -> resourceVersion, from the handlers only */
static int dup_adds, bad_updates, bad_deletes, synced, events;

static const char *rv_of(const cJSON *o) {
  return cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), "resourceVersion"));
}
static void on_add(informer_t *i, const char *key, const cJSON *o, void *d) {
  void *old = NULL;
  watch_map_put(&model, key, strdup(rv_of(o)), &old);
  if (old) { dup_adds++; free(old); }
  events++;
}
static void on_update(informer_t *i, const char *key, const cJSON *old, const cJSON *o, void *d) {
  char *have = watch_map_get(&model, key);
  if (!have || strcmp(have, rv_of(old))) bad_updates++;
  void *prev = NULL;
  watch_map_put(&model, key, strdup(rv_of(o)), &prev);
  free(prev);
  events++;
}
static void on_delete(informer_t *i, const char *key, const cJSON *o, void *d) {
  char *have = watch_map_del(&model, key);
  if (!have) bad_deletes++;
  free(have);
  events++;
}
static void on_synced(informer_t *i, void *d) { synced = 1; }

static char *model_rvs(void) {
  size_t it = 0;
  const char *k;
  void *v;
  char **lines = calloc(model.len + 1, sizeof *lines);
  size_t n = 0;
  while (watch_map_next(&model, &it, &k, &v)) {
    char line[400];
    const char *slash = strchr(k, '/');
    snprintf(line, sizeof line, "%s=%s", slash ? slash + 1 : k, (char *)v);
    lines[n++] = strdup(line);
  }
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

static int pending;
static void write_cb(const kube_response_t *res, void *data) {
  pending--;
  if (!kube_response_ok(res) && res->status != 404)
    fprintf(stderr, "write failed: %s\n", res->errmsg ? res->errmsg : "?");
}

int main(void) {
  uv_loop_init(&loop);
  tproxy_t px;
  CHECK_EQ_INT(tproxy_start(&px, &loop, k_server_port()), 0);
  kube_client_t *c = k_client(px.port), *w = k_client(0);
  kube_client_limits_t l = {.qps = -1};
  kube_client_set_limits(w, &l);
  char ns[64], coll[128];
  snprintf(ns, sizeof ns, "rudder-faults-%d", (int)getpid());
  snprintf(coll, sizeof coll, "/api/v1/namespaces/%s/configmaps", ns);
  k_namespace(w, ns);

  informer_opts_t o = {.path = coll, .page_size = 50, .backoff_base_ms = 50, .backoff_max_ms = 1000};
  informer_handlers_t h = {on_add, on_update, on_delete, on_synced, NULL, NULL};
  informer_t *inf;
  CHECK_EQ_INT(informer_start(c, &o, &h, &inf), 0);
  CHECK(RUN_UNTIL(synced, 20000));

  tproxy_chaos(&px, 200, 800);
  /* At least 40 rounds of 100 ms, and on until the proxy has cut 12 connections (the cuts are
   * random, so a fixed duration would sometimes see too few): each round creates 10, updates 5
   * and deletes 3 of the older ones. */
  int next = 0;
  for (int round = 0; round < 40 || (px.cuts < 12 && round < 400); round++) {
    for (int i = 0; i < 10; i++, next++) {
      char body[256];
      snprintf(body, sizeof body, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm-%d\"},"
                                  "\"data\":{\"v\":\"0\"}}", next);
      if (kube_create(w, coll, body, write_cb, NULL)) pending++;
    }
    for (int i = 0; i < 5 && next > 20; i++) {
      char path[200], body[64];
      snprintf(path, sizeof path, "%s/cm-%d", coll, rand() % (next - 10));
      snprintf(body, sizeof body, "{\"data\":{\"v\":\"%d\"}}", round);
      if (kube_merge_patch(w, path, body, write_cb, NULL)) pending++;
    }
    for (int i = 0; i < 3 && next > 20; i++) {
      char path[200];
      snprintf(path, sizeof path, "%s/cm-%d", coll, rand() % (next - 10));
      if (kube_delete(w, path, NULL, write_cb, NULL)) pending++;
    }
    run_for(100);
  }
  CHECK(RUN_UNTIL(pending == 0, 60000));
  tproxy_chaos(&px, 0, 0);
  unsigned lists, watches;
  informer_stats(inf, &lists, &watches);
  printf("proxy cut %d connections; informer: %u lists, %u watches, %d events\n", px.cuts, lists, watches, events);
  CHECK(px.cuts >= 10);
  CHECK(watches >= 5);

  /* Converges: the cache and the handlers' view both equal a fresh list. */
  char *list = k_list_rvs(w, coll);
  int same = 0;
  for (int tries = 0; tries < 100 && !same; tries++) {
    char *cache = k_cache_rvs(inf);
    same = !strcmp(cache, list);
    free(cache);
    if (!same) run_for(200);
  }
  CHECK(same);
  char *m = model_rvs();
  CHECK(!strcmp(m, list));
  free(m);
  free(list);
  CHECK_EQ_INT(dup_adds, 0);
  CHECK_EQ_INT(bad_updates, 0);
  CHECK_EQ_INT(bad_deletes, 0);

  k_informer_stop(inf);
  k_delete_namespace(w, ns);
  k_client_close(c);
  k_client_close(w);
  tproxy_stop(&px);
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(uv_loop_close(&loop), 0);
  size_t it = 0;
  const char *k;
  void *v;
  while (watch_map_next(&model, &it, &k, &v)) free(v);
  watch_map_free(&model);
  return t_done();
}
