/* Shared watches for waits on single objects (watch/waits.h) against the real API server: the first
 * wait of a resource is declined while the hub lists for a resourceVersion and opens its watch;
 * later waits see every change made after they began, newest first and only what is newer than
 * the caller's state; an object that leaves the label selector breaks its wait; the watch stops
 * when idle and starts again; a resource the server does not serve is refused and not asked for
 * again at once; freeing the hub with waits and a watch open leaks nothing. ConfigMaps stand in
 * for the objects (the hub does not care about the kind). */
#include "test_watch_kube.h"
#include "watch/waits.h"

#define NS "rudder-waits-test"
#define SEL "app.kubernetes.io/managed-by=Helm"

static int changes;
static void changed_cb(kwait_t *w, void *data) {
  (void)w;
  (*(int *)data)++;
}

static char *rv_of(const char *json) {
  cJSON *o = cJSON_Parse(json);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "metadata"), "resourceVersion");
  char *s = cJSON_IsString(v) ? strdup(v->valuestring) : NULL;
  cJSON_Delete(o);
  return s;
}

static const char *data_v(const cJSON *o) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "data"), "v");
  return cJSON_IsString(v) ? v->valuestring : "";
}

/* Creates configmap name (labelled for the hub when labelled) with data.v; returns its resourceVersion. */
static char *cm_create(kube_client_t *c, const char *name, int labelled, const char *v) {
  char body[512];
  snprintf(body, sizeof body,
           "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\"%s},\"data\":{\"v\":\"%s\"}}",
           name, labelled ? ",\"labels\":{\"app.kubernetes.io/managed-by\":\"Helm\"}" : "", v);
  kres_t r = k_do(c, "POST", "/api/v1/namespaces/" NS "/configmaps", body);
  CHECK(k_ok(&r));
  char *rv = k_ok(&r) ? rv_of(r.body) : NULL;
  kres_free(&r);
  return rv;
}

static char *cm_patch(kube_client_t *c, const char *name, const char *patch) {
  char path[256];
  snprintf(path, sizeof path, "/api/v1/namespaces/" NS "/configmaps/%s", name);
  kres_t r = k_do(c, "PATCH", path, patch);
  CHECK(k_ok(&r));
  char *rv = k_ok(&r) ? rv_of(r.body) : NULL;
  kres_free(&r);
  return rv;
}

static kwait_t *begin(kwaits_t *h, const char *name) { return kwait_begin(h, "", "v1", "configmaps", NS, name); }

int main(void) {
  CHECK_EQ_INT(uv_loop_init(&loop), 0);
  kube_client_t *c = k_client(0);
  k_delete_namespace(c, NS);
  for (int i = 0; i < 60; i++) { /* a namespace left by an earlier run is gone first */
    kres_t r = k_do(c, "GET", "/api/v1/namespaces/" NS, NULL);
    int gone = r.status == 404;
    kres_free(&r);
    if (gone) break;
    run_for(1000);
  }
  k_namespace(c, NS);

  kwaits_opts_t o = {.label_selector = SEL, .idle_ms = 500, .refused_ms = 60000};
  kwaits_t *h = kwaits_new(c, &o);
  CHECK(h != NULL);

  /* 1. The first wait is declined: the hub lists for a resourceVersion, then watches. */
  CHECK(begin(h, "a") == NULL);
  CHECK_EQ_INT((int)kwaits_stats(h).declined, 1);
  CHECK_EQ_INT((int)kwaits_stats(h).lists, 1);
  CHECK(RUN_UNTIL(kwaits_stats(h).watching == 1, 10000));
  CHECK_EQ_INT((int)kwaits_stats(h).watches, 1);

  /* 2. A wait begun before the create sees the create and the change after it; the caller takes
   * only what is newer than the state it has, the newest of what arrived. */
  kwait_t *w = begin(h, "a");
  CHECK(w != NULL);
  changes = 0;
  kwait_notify(w, changed_cb, &changes);
  char *rv1 = cm_create(c, "a", 1, "one");
  char *rv2 = cm_patch(c, "a", "{\"data\":{\"v\":\"two\"}}");
  CHECK(RUN_UNTIL(changes >= 2, 10000));
  CHECK(!kwait_broken(w));
  cJSON *got = kwait_take(w, rv1);
  CHECK(got != NULL);
  CHECK_EQ_STR(data_v(got), "two");
  char *got_rv = got ? strdup(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(got, "metadata"),
                                                                 "resourceVersion")->valuestring)
                     : NULL;
  CHECK_EQ_STR(got_rv ? got_rv : "", rv2 ? rv2 : "?");
  cJSON_Delete(got);
  free(got_rv);
  CHECK(kwait_take(w, rv1) == NULL); /* taken once */

  /* 3. A state no newer than the caller's is passed over. */
  char *rv3 = cm_patch(c, "a", "{\"data\":{\"v\":\"three\"}}");
  CHECK(RUN_UNTIL(changes >= 3, 10000));
  CHECK(kwait_take(w, rv3) == NULL);

  /* 4. Objects outside the selector and other objects do not reach the wait. */
  int before = changes;
  char *rvx = cm_create(c, "unlabelled", 0, "x");
  char *rvb = cm_create(c, "b", 1, "b");
  run_for(1000);
  CHECK_EQ_INT(changes, before);
  free(rvx);
  free(rvb);

  /* 5. Two waits on one object both hear of a change. */
  kwait_t *w2 = begin(h, "a");
  CHECK(w2 != NULL);
  int changes2 = 0;
  kwait_notify(w2, changed_cb, &changes2);
  char *rv4 = cm_patch(c, "a", "{\"data\":{\"v\":\"four\"}}");
  CHECK(RUN_UNTIL(changes >= before + 1 && changes2 >= 1, 10000));
  got = kwait_take(w2, rv3);
  CHECK_EQ_STR(got ? data_v(got) : "", "four");
  cJSON_Delete(got);
  got = kwait_take(w, rv3);
  CHECK_EQ_STR(got ? data_v(got) : "", "four");
  cJSON_Delete(got);
  kwait_end(w2);

  /* 6. An object that leaves the selector breaks its wait (the caller watches it on its own). */
  changes = 0;
  char *rv5 = cm_patch(c, "a", "{\"metadata\":{\"labels\":{\"app.kubernetes.io/managed-by\":\"someone\"}}}");
  CHECK(RUN_UNTIL(changes >= 1, 10000));
  CHECK(kwait_broken(w));
  CHECK(kwait_take(w, rv5) == NULL);
  CHECK_EQ_INT((int)kwaits_stats(h).broken, 1);
  kwait_end(w);

  /* 7. Idle: the watch stops once no wait is left; the next wait is declined and starts it again. */
  CHECK(RUN_UNTIL(kwaits_stats(h).watching == 0, 5000));
  CHECK(begin(h, "c") == NULL);
  CHECK_EQ_INT((int)kwaits_stats(h).lists, 2);
  CHECK(RUN_UNTIL(kwaits_stats(h).watching == 1, 10000));
  kwait_t *wc = begin(h, "c");
  CHECK(wc != NULL);
  changes = 0;
  kwait_notify(wc, changed_cb, &changes);
  char *rvc = cm_create(c, "c", 1, "c");
  CHECK(RUN_UNTIL(changes >= 1, 10000));
  got = kwait_take(wc, "1"); /* any state after the create's is newer than "1" */
  CHECK_EQ_STR(got ? data_v(got) : "", "c");
  cJSON_Delete(got);
  /* A caller's state without a comparable version: broken at once. */
  CHECK(kwait_take(wc, "not-a-number") == NULL);
  CHECK(kwait_broken(wc));
  kwait_end(wc);

  /* 8. A resource the server does not serve: refused, and not listed again within refused_ms. */
  CHECK(kwait_begin(h, "nope.example.com", "v1", "things", NS, "x") == NULL);
  uint64_t lists = kwaits_stats(h).lists;
  run_for(1000);
  CHECK(kwait_begin(h, "nope.example.com", "v1", "things", NS, "x") == NULL);
  CHECK_EQ_INT((int)kwaits_stats(h).lists, (int)lists);

  /* 9. Freed with a wait begun and the watch open: nothing leaks, nothing runs later. (The watch
   * idled out during 8: the first begin starts it again.) */
  kwait_t *wd = NULL;
  CHECK(RUN_UNTIL((wd = begin(h, "d")) != NULL, 10000));
  kwait_notify(wd, changed_cb, &changes);
  kwaits_free(h);
  run_for(200);

  free(rv1); free(rv2); free(rv3); free(rv4); free(rv5); free(rvc);
  k_delete_namespace(c, NS);
  k_client_close(c);
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(uv_loop_close(&loop), 0);
  return t_done();
}
