/* Events against an in-process fake API server: one Event per object+type+reason+message, repeats
 * aggregated into count via PATCH (also while a write is in flight), a new Event once the window
 * has passed or when the old one expired (404), per-object rate limiting, bad input, and closing
 * with writes in flight. */
#include "t.h"
#include "test_watch_server.h"
#include "watch/events.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uv_loop_t loop;
static tsrv_t srv;
static buf_t log_;     /* "POST name count;" "PATCH name count;" */
static int expire_next; /* answer the next PATCH with 404 */
static int hold;        /* do not answer (to keep writes in flight) */

static void handler(tconn_t *c, const char *method, const char *url, const char *headers, const char *body,
                    size_t body_len) {
  cJSON *b = cJSON_ParseWithLength(body, body_len);
  const cJSON *count = cJSON_GetObjectItemCaseSensitive(b, "count");
  if (!strcmp(method, "POST")) {
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(b, "metadata"), "name"));
    const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "message"));
    const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(b, "metadata"), "namespace"));
    buf_printf(&log_, "POST %s %s %s %d;", url, ns ? ns : "?", msg ? msg : "?", count ? count->valueint : -1);
    (void)name;
    if (!hold) {
      char *out = cJSON_PrintUnformatted(b);
      tsrv_respond(c, 201, "Created", "application/json", out);
      free(out);
    }
  } else {
    const char *slash = strrchr(url, '/');
    buf_printf(&log_, "PATCH %.*s %d;", (int)(slash - url), url, count ? count->valueint : -1);
    if (expire_next) {
      expire_next = 0;
      tsrv_respond(c, 404, "Not Found", "application/json", "{\"kind\":\"Status\",\"code\":404,\"reason\":\"NotFound\"}");
    } else if (!hold) {
      tsrv_respond(c, 200, "OK", "application/json", "{}");
    }
  }
  cJSON_Delete(b);
}

static int deadline;
static void deadline_cb(uv_timer_t *t) { deadline = 1; }
static void settle(uint64_t ms) {
  uv_timer_t t;
  uv_timer_init(&loop, &t);
  deadline = 0;
  uv_timer_start(&t, deadline_cb, ms, 0);
  while (!deadline) uv_run(&loop, UV_RUN_ONCE);
  uv_close((uv_handle_t *)&t, NULL);
  uv_run(&loop, UV_RUN_NOWAIT);
}
static void closed_cb(void *d) { (*(int *)d)++; }

static int count_of(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; p && (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

int main(void) {
  uv_loop_init(&loop);
  if (tsrv_start(&srv, &loop, handler)) return 2;
  char url[64], *err = NULL;
  snprintf(url, sizeof url, "http://127.0.0.1:%d", srv.port);
  kube_config_t cfg = {0};
  kube_config_set_server(&cfg, url, &err);
  kube_client_t *c;
  CHECK_EQ_INT(kube_client_new(&loop, &cfg, &c, &err), 0);
  kube_config_free(&cfg);
  events_t *ev = events_new(c, "rudder");
  CHECK(ev != NULL);

  cJSON *obj = cJSON_Parse("{\"apiVersion\":\"rudder.dev/v1alpha1\",\"kind\":\"HelmRelease\",\"metadata\":"
                           "{\"name\":\"web\",\"namespace\":\"apps\",\"uid\":\"u1\",\"resourceVersion\":\"5\"}}");
  /* The first event creates; the repeat (after the create finished) patches count 2. */
  CHECK_EQ_INT(events_emit(ev, obj, "Normal", "InstallSucceeded", "installed web-1.0.0"), 0);
  settle(100);
  CHECK_EQ_INT(events_emit(ev, obj, "Normal", "InstallSucceeded", "installed web-1.0.0"), 0);
  settle(100);
  CHECK(log_.data && strstr(log_.data, "POST /api/v1/namespaces/apps/events apps installed web-1.0.0 1;"));
  CHECK(log_.data && strstr(log_.data, ";PATCH /api/v1/namespaces/apps/events 2;"));
  /* Repeats while a write is in flight are folded into one later patch. */
  buf_reset(&log_);
  for (int i = 0; i < 5; i++) events_emit(ev, obj, "Normal", "InstallSucceeded", "installed web-1.0.0");
  settle(150);
  CHECK_EQ_STR(log_.data, "PATCH /api/v1/namespaces/apps/events 3;PATCH /api/v1/namespaces/apps/events 7;");
  /* A different message is a different Event. */
  buf_reset(&log_);
  events_emit(ev, obj, "Warning", "UpgradeFailed", "boom");
  settle(100);
  CHECK_EQ_STR(log_.data, "POST /api/v1/namespaces/apps/events apps boom 1;");
  /* An expired Event (404 on patch) is created again with the running count. */
  buf_reset(&log_);
  expire_next = 1;
  events_emit(ev, obj, "Warning", "UpgradeFailed", "boom");
  settle(150);
  CHECK_EQ_STR(log_.data, "PATCH /api/v1/namespaces/apps/events 2;POST /api/v1/namespaces/apps/events apps boom 2;");
  events_stats_t st = events_get_stats(ev);
  CHECK_EQ_INT(st.created, 3);
  CHECK_EQ_INT(st.patched, 3);

  /* Rate limit: 25 per object, then dropped; another object has its own bucket. */
  buf_reset(&log_);
  int dropped = 0;
  char msg[32];
  for (int i = 0; i < 40; i++) {
    snprintf(msg, sizeof msg, "m%d", i);
    if (events_emit(ev, obj, "Normal", "Spam", msg) == UV_EBUSY) dropped++;
  }
  /* Every emit takes a token: 9 were used above, so 16 of these go through. */
  CHECK_EQ_INT(dropped, 40 - (25 - 9));
  events_ref_t other = {.kind = "ConfigMap", .name = "cm", .api_version = "v1"};
  CHECK_EQ_INT(events_emit_ref(ev, &other, "Normal", "Spam", "x"), 0);
  settle(200);
  CHECK(strstr(log_.data, "POST /api/v1/namespaces/default/events default x 1;") != NULL);
  CHECK_EQ_INT(events_get_stats(ev).dropped, dropped);

  /* Bad input. */
  CHECK_EQ_INT(events_emit(ev, obj, "Info", "X", "y"), UV_EINVAL);
  events_ref_t noname = {.kind = "ConfigMap"};
  CHECK_EQ_INT(events_emit_ref(ev, &noname, "Normal", "X", "y"), UV_EINVAL);

  /* Bounded bookkeeping: many objects, few entries kept. */
  events_limits_t l = {.max_tracked = 8};
  events_set_limits(ev, &l);
  for (int i = 0; i < 30; i++) {
    char name[16];
    snprintf(name, sizeof name, "o%d", i);
    events_ref_t r = {.kind = "ConfigMap", .name = name, .namespace = "apps"};
    events_emit_ref(ev, &r, "Normal", "Made", "made");
  }
  settle(300);
  CHECK_EQ_INT(count_of(log_.data, "made 1;"), 30);
  /* What is held stays bounded: entries with a write in flight are kept until the next new entry
   * trims them to 8 of each kind, a few hundred bytes each (the Event kept as text, not as a tree of
   * some 25 nodes of 80 bytes). */
  st = events_get_stats(ev);
  CHECK(st.aggregates <= 30);
  CHECK_EQ_INT(st.buckets, 8);
  events_ref_t r29 = {.kind = "ConfigMap", .name = "o29", .namespace = "apps"};
  events_emit_ref(ev, &r29, "Normal", "Made", "again");
  settle(100);
  st = events_get_stats(ev);
  CHECK_EQ_INT(st.aggregates, 8);
  CHECK_EQ_INT(st.buckets, 8);
  CHECK(st.bytes > 8 * 400 && st.bytes < 8 * 1200 + 2048);

  /* Closing with writes in flight. */
  hold = 1;
  events_ref_t r2 = {.kind = "ConfigMap", .name = "last", .namespace = "apps"};
  events_emit_ref(ev, &r2, "Normal", "Made", "last");
  settle(50);
  int evclosed = 0, closed = 0;
  events_close(ev, closed_cb, &evclosed);
  CHECK_EQ_INT(evclosed, 1);
  kube_client_close(c, closed_cb, &closed);
  settle(20);
  CHECK_EQ_INT(closed, 1);
  cJSON_Delete(obj);
  tsrv_stop(&srv);
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(uv_loop_close(&loop), 0);
  buf_free(&log_);
  free(err);
  return t_done();
}
