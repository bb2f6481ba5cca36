/* One bad object never blinds an informer, against the real API server: HelmReleases whose
 * spec.values nest 1,500 levels (the server stores them) and one larger than the client's body
 * limit sit among good ones. The informer syncs with the good ones and tells the bad ones by key;
 * through the watch, an update that makes a good object unreadable is told and its cached copy
 * kept, a new good object still arrives, and deleting an unreadable object deletes it. */
#include "test_watch_kube.h"
#include <unistd.h>

#define MAX_BODY (64u << 10)

static buf_t seen;
static int synced;
static void on_add(informer_t *i, const char *key, const cJSON *o, void *d) { buf_printf(&seen, "+%s;", key); }
static void on_update(informer_t *i, const char *key, const cJSON *old, const cJSON *o, void *d) {
  buf_printf(&seen, "~%s;", key);
}
static void on_delete(informer_t *i, const char *key, const cJSON *o, void *d) { buf_printf(&seen, "-%s;", key); }
static void on_synced(informer_t *i, void *d) { synced = 1; }
static void on_bad(informer_t *i, const char *key, const char *message, void *d) {
  buf_printf(&seen, "!%s|%s;", key ? key : "(none)", message);
}
static int has(const char *s) { return seen.data && strstr(seen.data, s) != NULL; }

/* A HelmRelease; values nest `levels` levels, and `pad` bytes of annotation make it big. */
static char *hr(const char *ns, const char *name, int levels, size_t pad) {
  buf_t b = BUF_INIT;
  buf_printf(&b, "{\"apiVersion\":\"rudder.dev/v1alpha1\",\"kind\":\"HelmRelease\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"%s\"", name, ns);
  if (pad) {
    buf_puts(&b, ",\"annotations\":{\"pad\":\"");
    for (size_t i = 0; i < pad; i++) buf_putc(&b, 'p');
    buf_puts(&b, "\"}");
  }
  buf_puts(&b, "},\"spec\":{\"chart\":{\"inline\":{\"templates\":{\"a.yaml\":\"x\"}}},\"values\":");
  for (int i = 0; i < levels; i++) buf_puts(&b, "{\"a\":");
  buf_puts(&b, "{}");
  for (int i = 0; i < levels; i++) buf_putc(&b, '}');
  buf_puts(&b, "}}");
  return buf_steal(&b);
}

static void create(kube_client_t *c, const char *coll, const char *ns, const char *name, int levels, size_t pad) {
  char *j = hr(ns, name, levels, pad);
  kres_t r = k_do(c, "POST", coll, j);
  CHECK(k_ok(&r));
  if (!k_ok(&r)) fprintf(stderr, "creating %s: %s\n", name, r.errmsg ? r.errmsg : "?");
  kres_free(&r);
  free(j);
}

int main(void) {
  uv_loop_init(&loop);
  kube_client_t *c = k_client(0);
  char ns[64], coll[160], key[96];
  snprintf(ns, sizeof ns, "badobj-%d", (int)getpid());
  k_namespace(c, ns);
  snprintf(coll, sizeof coll, "/apis/rudder.dev/v1alpha1/namespaces/%s/helmreleases", ns);
  create(c, coll, ns, "a", 2, 0);
  create(c, coll, ns, "b", 1500, 0);          /* deeper than cJSON reads */
  create(c, coll, ns, "c", 2, MAX_BODY + 100); /* alone larger than the body limit */
  create(c, coll, ns, "d", 2, 0);

  kube_client_limits_t l = {.max_body = MAX_BODY, .max_watch_line = MAX_BODY};
  kube_client_set_limits(c, &l);
  informer_opts_t o = {.path = coll, .page_size = 500, .keep = (const char *const[]){"spec", NULL}};
  informer_handlers_t h = {.on_add = on_add, .on_update = on_update, .on_delete = on_delete, .on_synced = on_synced,
                           .on_bad_object = on_bad};
  informer_t *inf;
  CHECK_EQ_INT(informer_start(c, &o, &h, &inf), 0);
  CHECK(RUN_UNTIL(synced, 30000));
  CHECK_EQ_INT(informer_count(inf), 2);
  snprintf(key, sizeof key, "+%s/a;", ns);
  CHECK(has(key));
  snprintf(key, sizeof key, "+%s/d;", ns);
  CHECK(has(key));
  snprintf(key, sizeof key, "!%s/b|the object is nested ", ns);
  CHECK(has(key));
  snprintf(key, sizeof key, "!%s/c|the object is ", ns);
  CHECK(has(key));
  if (t_failed) fprintf(stderr, "seen: %s\n", seen.data ? seen.data : "");

  /* Through the watch: a good object made unreadable, a new good one, an unreadable one deleted. */
  buf_reset(&seen);
  char path[256], *j = hr(ns, "a", 1200, 0);
  snprintf(path, sizeof path, "%s/a", coll);
  kres_t r = k_do(c, "PUT", path, j);
  free(j);
  /* PUT needs the resourceVersion; a merge patch of spec does not. */
  if (!k_ok(&r)) {
    kres_free(&r);
    buf_t p = BUF_INIT;
    buf_puts(&p, "{\"spec\":{\"values\":");
    for (int i = 0; i < 1200; i++) buf_puts(&p, "{\"a\":");
    buf_puts(&p, "{}");
    for (int i = 0; i < 1200; i++) buf_putc(&p, '}');
    buf_puts(&p, "}}");
    r = k_do(c, "PATCH", path, p.data);
    buf_free(&p);
  }
  CHECK(k_ok(&r));
  kres_free(&r);
  create(c, coll, ns, "e", 2, 0);
  snprintf(path, sizeof path, "%s/b", coll);
  r = k_do(c, "DELETE", path, NULL);
  CHECK(k_ok(&r));
  kres_free(&r);
  snprintf(key, sizeof key, "+%s/e;", ns);
  CHECK(RUN_UNTIL(has(key), 30000));
  snprintf(key, sizeof key, "!%s/a|watch event ", ns);
  CHECK(has(key));
  snprintf(key, sizeof key, "~%s/a;", ns);
  CHECK(!has(key));
  snprintf(key, sizeof key, "%s/a", ns);
  CHECK(informer_get(inf, key) != NULL); /* its last readable copy */
  CHECK_EQ_INT(informer_count(inf), 3);
  unsigned lists, watches;
  informer_stats(inf, &lists, &watches);
  CHECK_EQ_INT(lists, 1);
  CHECK_EQ_INT(watches, 1);
  if (t_failed) fprintf(stderr, "seen: %s\n", seen.data ? seen.data : "");

  k_informer_stop(inf);
  k_delete_namespace(c, ns);
  k_client_close(c);
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(uv_loop_close(&loop), 0);
  buf_free(&seen);
  return t_done();
}
