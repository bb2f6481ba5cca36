/* 5,000 ConfigMaps created concurrently while an informer (with a lean projection) watches their
 * namespace: every key is delivered exactly once as an add, and at the end the cache equals a
 * fresh list (names and resourceVersions), holding only the projected fields. */
#include "test_watch_kube.h"

#define N 5000

static unsigned char added[N];
static int adds, dup_adds, updates, deletes, synced;

static int index_of(const char *key) {
  const char *p = strrchr(key, '-');
  return p ? atoi(p + 1) : -1;
}
static void on_add(informer_t *i, const char *key, const cJSON *o, void *d) {
  int k = index_of(key);
  if (k < 0 || k >= N) return;
  if (added[k]++) dup_adds++;
  adds++;
}
static void on_update(informer_t *i, const char *key, const cJSON *old, const cJSON *o, void *d) { updates++; }
static void on_delete(informer_t *i, const char *key, const cJSON *o, void *d) { deletes++; }
static void on_synced(informer_t *i, void *d) { synced = 1; }

static int created, failed;
static void created_cb(const kube_response_t *res, void *data) {
  if (kube_response_ok(res)) created++;
  else {
    failed++;
    if (failed < 5) fprintf(stderr, "create failed: %s\n", res->errmsg ? res->errmsg : "?");
  }
}

int main(void) {
  uv_loop_init(&loop);
  kube_client_t *c = k_client(0), *w = k_client(0);
  /* The writer goes as fast as the server lets it; the informer's client keeps the defaults. */
  kube_client_limits_t l = {.qps = -1, .max_conns = 64};
  kube_client_set_limits(w, &l);
  char ns[64], coll[128];
  snprintf(ns, sizeof ns, "rudder-scale-%d", (int)getpid());
  snprintf(coll, sizeof coll, "/api/v1/namespaces/%s/configmaps", ns);
  k_namespace(w, ns);

  static const char *keep[] = {"data.k", NULL};
  informer_opts_t o = {.path = coll, .label_selector = "rudder-test=scale", .page_size = 500, .keep = keep};
  informer_handlers_t h = {on_add, on_update, on_delete, on_synced, NULL, NULL};
  informer_t *inf;
  CHECK_EQ_INT(informer_start(c, &o, &h, &inf), 0);
  CHECK(RUN_UNTIL(synced, 20000));

  uint64_t t0 = uv_now(&loop);
  for (int i = 0; i < N; i++) {
    char body[512];
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm-%05d\",\"labels\":"
             "{\"rudder-test\":\"scale\"},\"annotations\":{\"note\":\"not kept in the cache\"}},"
             "\"data\":{\"k\":\"v%d\",\"other\":\"dropped by the projection\"}}",
             i, i);
    CHECK(kube_create(w, coll, body, created_cb, NULL) != NULL);
  }
  CHECK(RUN_UNTIL(created + failed == N, 240000));
  CHECK_EQ_INT(created, N);
  CHECK_EQ_INT(failed, 0);
  uint64_t t1 = uv_now(&loop);
  CHECK(RUN_UNTIL(adds >= N && informer_count(inf) == N, 60000));
  uint64_t t2 = uv_now(&loop);
  printf("created %d ConfigMaps in %llu ms; the informer had them all %llu ms after the last create\n", created,
         (unsigned long long)(t1 - t0), (unsigned long long)(t2 - t1));
  int missing = 0;
  for (int i = 0; i < N; i++) missing += !added[i];
  CHECK_EQ_INT(missing, 0);
  CHECK_EQ_INT(dup_adds, 0);
  CHECK_EQ_INT(deletes, 0);
  CHECK_EQ_INT(informer_count(inf), N);

  char sel[200];
  snprintf(sel, sizeof sel, "%s?labelSelector=rudder-test%%3Dscale", coll);
  char *cache = k_cache_rvs(inf), *list = k_list_rvs(w, sel);
  CHECK(!strcmp(cache, list));
  if (strcmp(cache, list)) fprintf(stderr, "cache and list differ (%zu vs %zu bytes)\n", strlen(cache), strlen(list));
  free(cache);
  free(list);

  /* The projection: identity and data.k only. */
  char key[128];
  snprintf(key, sizeof key, "%s/cm-01234", ns);
  const cJSON *obj = informer_get(inf, key);
  CHECK(obj != NULL);
  const cJSON *data = cJSON_GetObjectItem(obj, "data");
  CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(data, "k")), "v1234");
  CHECK(cJSON_GetObjectItem(data, "other") == NULL);
  CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "metadata"), "managedFields") == NULL);
  CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "metadata"), "annotations") == NULL);
  char *text = cJSON_PrintUnformatted(obj);
  printf("cached object: %zu bytes of JSON: %s\n", strlen(text), text);
  free(text);

  k_informer_stop(inf);
  k_delete_namespace(w, ns);
  kube_client_stats_t st = kube_client_get_stats(w);
  printf("writer: %llu requests, %llu retried\n", (unsigned long long)st.requests, (unsigned long long)st.retries);
  k_client_close(c);
  k_client_close(w);
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(uv_loop_close(&loop), 0);
  return t_done();
}
