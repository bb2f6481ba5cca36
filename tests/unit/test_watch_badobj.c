/* One bad object never blinds an informer: against an in-process fake API server, a LIST whose
 * items include an object nested 1,500 levels deep, one larger than the client's body limit, a
 * malformed one and one without a name; pages split by continue tokens and made smaller when they
 * outgrow the body limit; a watch stream with bad events (nested 100,000 levels, malformed, longer
 * than the line limit, a DELETED event that cannot be parsed) between good ones. The good objects
 * are delivered, the bad ones are told to on_bad_object with their keys, cached copies of bad
 * objects are not reported deleted, and the stream is never restarted for them. */
#include "t.h"
#include "test_watch_server.h"
#include "watch/informer.h"
#include "watch/jscan.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* test_watch_badobj_compact.c runs the same with the cache holding text (informer_opts_t.compact). */
#ifndef TEST_INFORMER_COMPACT
#define TEST_INFORMER_COMPACT false
#endif

static uv_loop_t loop;
static tsrv_t srv;

#define MAX_BODY (64u << 10)
#define MAX_LINE (1u << 20)

/* ---- the fake API server: a store of raw item texts ---- */

#define MAXOBJ 16
static char *store[MAXOBJ]; /* raw JSON of each object, NULL when absent */
static int cur_rv = 100;
static int meta_first;      /* list metadata before items (as built-in lists), else after (as custom resources) */
static tconn_t *watcher;
static buf_t requests;      /* "LIST limit=.. continue=..;" and "WATCH rv=..;" */
static int broken_lists;    /* answer this many lists with a body whose structure is broken */

static char *small_obj(const char *name, int rv) {
  buf_t b = BUF_INIT;
  buf_printf(&b, "{\"apiVersion\":\"rudder.dev/v1alpha1\",\"kind\":\"HelmRelease\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"ns\",\"resourceVersion\":\"%d\"},\"spec\":{\"values\":{\"a\":[1,\"x\\\"]\",{}]}}}",
             name, rv);
  return buf_steal(&b);
}

/* An object whose spec.values nests `levels` levels (objects, or arrays when arrays is set). */
static char *deep_obj(const char *name, int rv, int levels, int arrays) {
  buf_t b = BUF_INIT;
  buf_printf(&b, "{\"apiVersion\":\"rudder.dev/v1alpha1\",\"kind\":\"HelmRelease\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"ns\",\"resourceVersion\":\"%d\"},\"spec\":{\"values\":",
             name, rv);
  for (int i = 0; i < levels; i++) buf_puts(&b, arrays ? "[" : "{\"a\":");
  buf_puts(&b, "1");
  for (int i = 0; i < levels; i++) buf_putc(&b, arrays ? ']' : '}');
  buf_puts(&b, "}}");
  return buf_steal(&b);
}

/* An object of about `bytes` bytes; its name comes after a big annotation, as it would. */
static char *big_obj(const char *name, int rv, size_t bytes) {
  buf_t b = BUF_INIT;
  buf_puts(&b, "{\"apiVersion\":\"rudder.dev/v1alpha1\",\"kind\":\"HelmRelease\",\"metadata\":{\"annotations\":{\"big\":\"");
  for (size_t i = 0; i < bytes; i++) buf_putc(&b, 'x');
  buf_printf(&b, "\"},\"name\":\"%s\",\"namespace\":\"ns\",\"resourceVersion\":\"%d\"}}", name, rv);
  return buf_steal(&b);
}

static void set(int i, char *json) {
  free(store[i]);
  store[i] = json;
}

static const char *qget(const char *url, const char *key, char *out, size_t n) {
  char k[64];
  snprintf(k, sizeof k, "%s=", key);
  const char *p = strstr(url, k);
  if (!p || (p[-1] != '?' && p[-1] != '&')) return NULL;
  p += strlen(k);
  size_t len = strcspn(p, "&");
  snprintf(out, n, "%.*s", (int)len, p);
  return out;
}

static void send_chunk(tconn_t *c, const char *s, size_t n) {
  char h[24];
  snprintf(h, sizeof h, "%zx\r\n", n);
  tsrv_puts(c, h);
  tsrv_write(c, s, n);
  tsrv_puts(c, "\r\n");
}

static void send_line(const char *line) { send_chunk(watcher, line, strlen(line)); }

static const char *gone = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410}}\n";

static void send_event(const char *type, const char *obj) {
  buf_t e = BUF_INIT;
  buf_printf(&e, "{\"type\":\"%s\",\"object\":%s}\n", type, obj);
  send_chunk(watcher, e.data, e.len);
  buf_free(&e);
}

static void api(tconn_t *c, const char *method, const char *url, const char *headers, const char *body, size_t len) {
  char v[64];
  if (qget(url, "watch", v, sizeof v)) {
    char rv[32] = "";
    qget(url, "resourceVersion", rv, sizeof rv);
    buf_printf(&requests, "WATCH rv=%s;", rv);
    tsrv_puts(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
    watcher = c;
    return;
  }
  char lim[16] = "", cont[16] = "";
  qget(url, "limit", lim, sizeof lim);
  qget(url, "continue", cont, sizeof cont);
  buf_printf(&requests, "LIST limit=%s continue=%s;", lim, cont);
  if (broken_lists > 0) {
    broken_lists--;
    tsrv_respond(c, 200, "OK", "application/json", "{\"items\":[{\"metadata\":{\"name\":\"a\"}]]}");
    return;
  }
  int limit = atoi(lim), start = atoi(cont), n = 0, i, present[MAXOBJ], np = 0;
  for (i = 0; i < MAXOBJ; i++)
    if (store[i]) present[np++] = i;
  buf_t items = BUF_INIT, meta = BUF_INIT, b = BUF_INIT;
  for (i = start; i < np && n < limit; i++, n++) buf_printf(&items, "%s%s", n ? "," : "", store[present[i]]);
  buf_printf(&meta, "\"metadata\":{\"resourceVersion\":\"%d\"", cur_rv);
  if (i < np) buf_printf(&meta, ",\"continue\":\"%d\"", i);
  buf_puts(&meta, "}");
  if (meta_first)
    buf_printf(&b, "{\"kind\":\"HelmReleaseList\",\"apiVersion\":\"v1\",%s,\"items\":[%s]}", meta.data,
               items.data ? items.data : "");
  else
    buf_printf(&b, "{\"apiVersion\":\"v1\",\"items\":[%s],\"kind\":\"HelmReleaseList\",%s}",
               items.data ? items.data : "", meta.data);
  tsrv_respond(c, 200, "OK", "application/json", b.data);
  buf_free(&items);
  buf_free(&meta);
  buf_free(&b);
}

/* ---- the informer's handlers ---- */

static buf_t seen; /* "+key;" "~key;" "-key;" "!key|why;" */
static int synced_calls;

static void on_add(informer_t *i, const char *key, const cJSON *o, void *d) { buf_printf(&seen, "+%s;", key); }
static void on_update(informer_t *i, const char *key, const cJSON *old, const cJSON *o, void *d) {
  buf_printf(&seen, "~%s;", key);
}
static void on_delete(informer_t *i, const char *key, const cJSON *o, void *d) { buf_printf(&seen, "-%s;", key); }
static void on_synced(informer_t *i, void *d) { synced_calls++; }
static void on_bad(informer_t *i, const char *key, const char *message, void *d) {
  buf_printf(&seen, "!%s|%s;", key ? key : "(none)", message);
}

static int deadline;
static void deadline_cb(uv_timer_t *t) { deadline = 1; }

static int wait_for(buf_t *b, const char *want) {
  uv_timer_t t;
  uv_timer_init(&loop, &t);
  deadline = 0;
  uv_timer_start(&t, deadline_cb, 10000, 0);
  while (!(b->data && strstr(b->data, want)) && !deadline) uv_run(&loop, UV_RUN_ONCE);
  uv_close((uv_handle_t *)&t, NULL);
  uv_run(&loop, UV_RUN_NOWAIT);
  if (deadline) fprintf(stderr, "waited in vain for \"%s\" in \"%s\"\n", want, b->data ? b->data : "");
  return !deadline;
}

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

static int has(const char *s) { return seen.data && strstr(seen.data, s) != NULL; }

/* The scanner alone: structure at any depth, strings with escapes, elements split over pieces. */
static buf_t elems;
static void t_elem(watch_jscan_t *s, int end, const char *at) { buf_printf(&elems, "%c%zu", end ? ')' : '(', s->depth); }
static void test_jscan(void) {
  const char *text = "{\"items\":[{\"metadata\":{\"name\":\"a\\\"b\",\"namespace\":\"n\"}}, 12 ,\"s]\",[[]],null],"
                     "\"metadata\":{\"continue\":\"tok\"}}";
  for (size_t step = 1; step <= strlen(text); step++) {
    watch_jscan_t s;
    watch_jscan_init(&s);
    s.on_elem = t_elem;
    buf_reset(&elems);
    int r = 0;
    for (size_t off = 0; off < strlen(text) && !r; off += step)
      r = watch_jscan_feed(&s, text + off, strlen(text) - off < step ? strlen(text) - off : step);
    CHECK_EQ_INT(r, 0);
    CHECK(watch_jscan_done(&s));
    CHECK_EQ_INT(s.max_depth, 4);
    CHECK_EQ_STR(elems.data, "(2)2(2)2(2)2(2(3)3)2(2)2");
    watch_jscan_free(&s);
  }
  watch_objmeta_t m = {0};
  const char *const pre[] = {"items", NULL};
  watch_objmeta_scan(&m, text, strlen(text), 2, pre);
  CHECK_EQ_STR(m.name, "a\"b");
  CHECK_EQ_STR(m.ns, "n");
  /* 100,000 levels cost a counter, not a stack. */
  char *deep = deep_obj("d", 1, 100000, 0);
  memset(&m, 0, sizeof m);
  const char *const none[] = {NULL};
  size_t depth = watch_objmeta_scan(&m, deep, strlen(deep), 0, none);
  CHECK_EQ_INT(depth, 100002);
  CHECK_EQ_STR(m.name, "d");
  free(deep);
  /* Broken structure is found. */
  watch_jscan_t s;
  watch_jscan_init(&s);
  CHECK_EQ_INT(watch_jscan_feed(&s, "{\"a\":1]}", 8), UV_EPROTO);
  watch_jscan_free(&s);
  watch_jscan_init(&s);
  CHECK_EQ_INT(watch_jscan_feed(&s, "{\"a\" 1}", 7), UV_EPROTO);
  watch_jscan_free(&s);
  buf_free(&elems);
  /* \u0000 in a string (which cJSON would cut the string at), but not an escaped backslash before u0000. */
  static const struct { const char *t; int nul; } nuls[] = {
    {"{\"a\":\"x\\u0000y\"}", 1}, {"{\"a\":\"x\\\\u0000y\"}", 0}, {"{\"a\":\"\\\\\\u0000\"}", 1},
    {"{\"a\":\"u0000\"}", 0},       {"{\"a\":\"\\u00001\"}", 1},      {"{\"a\":\"\\u0001\"}", 0},
    {"\\u000", 0},
  };
  for (size_t i = 0; i < sizeof nuls / sizeof *nuls; i++) CHECK_EQ_INT(watch_json_has_nul(nuls[i].t, strlen(nuls[i].t)), nuls[i].nul);
}

int main(void) {
  test_jscan();
  uv_loop_init(&loop);
  if (tsrv_start(&srv, &loop, api)) return 2;
  char url[64], *err = NULL;
  snprintf(url, sizeof url, "http://127.0.0.1:%d", srv.port);
  kube_config_t cfg = {0};
  kube_config_set_server(&cfg, url, &err);
  kube_client_t *c;
  CHECK_EQ_INT(kube_client_new(&loop, &cfg, &c, &err), 0);
  kube_config_free(&cfg);
  kube_client_limits_t lim = {.max_body = MAX_BODY, .max_watch_line = MAX_LINE};
  kube_client_set_limits(c, &lim);

  set(0, small_obj("a", 1));
  set(1, deep_obj("b", 2, 1500, 0));        /* deeper than cJSON's 1,000 levels */
  set(2, big_obj("c", 3, MAX_BODY + 1000)); /* alone bigger than the body limit */
  set(3, strdup("{\"metadata\":{\"name\":\"d\",\"namespace\":\"ns\",\"resourceVersion\":\"4\"},\"spec\":{\"x\":tru}}"));
  set(4, small_obj("e", 5));
  set(5, small_obj("f", 6));
  set(6, big_obj("g", 7, MAX_BODY / 3));    /* big, but fits alone */
  set(7, big_obj("h", 8, MAX_BODY / 3));

  informer_opts_t o = {.path = "/apis/rudder.dev/v1alpha1/namespaces/ns/helmreleases", .page_size = 500,
                       .backoff_base_ms = 20, .backoff_max_ms = 200, .keep = (const char *const[]){"spec", NULL},
                       .compact = TEST_INFORMER_COMPACT};
  informer_handlers_t h = {.on_add = on_add, .on_update = on_update, .on_delete = on_delete, .on_synced = on_synced,
                           .on_bad_object = on_bad};
  informer_t *inf;
  broken_lists = 1; /* the first list's structure is broken: that list fails as a whole and is retried */
  CHECK_EQ_INT(informer_start(c, &o, &h, &inf), 0);

  /* 1. The list: good objects delivered, bad ones told with their keys, pages made smaller. */
  CHECK(wait_for(&requests, "WATCH rv=100;"));
  CHECK(informer_has_synced(inf));
  CHECK_EQ_INT(synced_calls, 1);
  CHECK_EQ_INT(informer_count(inf), 5);
  CHECK(has("+ns/a;") && has("+ns/e;") && has("+ns/f;") && has("+ns/g;") && has("+ns/h;"));
  CHECK(has("!ns/b|the object is nested 1502 levels deep, more than the limit of 999;"));
  CHECK(has("!ns/c|the object is 66681 bytes, more than the client's limit of 65536 bytes;"));
  CHECK(has("!ns/d|the object is not valid JSON;"));
  /* Each is told once, although pages were read again. */
  int bangs = 0;
  for (const char *q = seen.data; q && (q = strchr(q, '!')); q++) bangs++;
  CHECK_EQ_INT(bangs, 3);
  /* The first page outgrew the limit after two objects, so two were asked for; the object too big
   * for any page was read alone, and then pages grew again. */
  CHECK_EQ_STR(requests.data, "LIST limit=500 continue=;LIST limit=500 continue=;LIST limit=2 continue=;LIST limit=4 continue=2;"
                              "LIST limit=2 continue=2;LIST limit=1 continue=2;LIST limit=2 continue=3;"
                              "LIST limit=4 continue=5;WATCH rv=100;");
  const cJSON *a = informer_get(inf, "ns/a");
  CHECK(a && cJSON_GetObjectItem(a, "spec") && !cJSON_GetObjectItem(a, "status")); /* the projection still applies */
  CHECK(informer_get(inf, "ns/b") == NULL);

  /* 2. The watch: bad events between good ones are skipped and told; the stream goes on. */
  buf_reset(&seen);
  char *s;
  send_event("ADDED", s = small_obj("i", 101)); free(s);
  send_event("ADDED", s = deep_obj("j", 102, 1500, 0)); free(s);
  send_event("MODIFIED", s = deep_obj("a", 103, 100000, 1)); free(s); /* 100,000 levels */
  send_event("MODIFIED", s = deep_obj("e", 104, 100000, 0)); free(s);
  send_line("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"k\",\"namespace\":\"ns\"},\"x\":[1,}}\n");
  send_event("ADDED", s = big_obj("l", 105, MAX_LINE + 100)); free(s); /* longer than the line limit */
  send_event("DELETED", s = deep_obj("f", 106, 2000, 0)); free(s);     /* unreadable, but a delete */
  send_event("ADDED", s = small_obj("m", 107)); free(s);
  send_event("ADDED", s = deep_obj("n", 108, 997, 0)); free(s); /* 999 levels: the deepest read */
  send_event("ADDED", s = deep_obj("o", 109, 998, 0)); free(s); /* 1,000 levels */
  CHECK(wait_for(&seen, "!ns/o|"));
  CHECK(has("+ns/m;+ns/n;!ns/o|watch event 10: the object is nested 1000 levels deep, more than the limit of 999;"));
  CHECK(has("+ns/i;"));
  CHECK(has("!ns/j|watch event 2: the object is nested 1502 levels deep, more than the limit of 999;"));
  CHECK(has("!ns/a|watch event 3: the object is nested 100002 levels deep, more than the limit of 999;"));
  CHECK(has("!ns/e|watch event 4: the object is nested 100002 levels deep"));
  CHECK(has("!ns/k|watch event 5 is not valid JSON"));
  CHECK(has("!ns/l|watch event 6 is 1048849 bytes, longer than the limit of 1048576 bytes;"));
  CHECK(has("-ns/f;"));
  CHECK(!has("~"));
  CHECK_EQ_STR(informer_resource_version(inf), "109");
  CHECK(informer_get(inf, "ns/a") != NULL); /* the last readable copy stays */
  CHECK(informer_get(inf, "ns/f") == NULL);
  CHECK_EQ_INT(informer_count(inf), 7); /* a e g h i m n */
  unsigned lists, watches;
  informer_stats(inf, &lists, &watches);
  CHECK_EQ_INT(watches, 1);

  /* 3. A relist (410) where a cached object became unreadable: it is told, not deleted. Built-in
   * list layout this time (metadata first). */
  buf_reset(&seen);
  buf_reset(&requests);
  meta_first = 1;
  set(0, deep_obj("a", 108, 1200, 0));
  set(5, NULL); /* f */
  set(8, small_obj("i", 101));
  set(9, small_obj("m", 107));
  set(10, small_obj("e", 104));
  set(4, NULL);
  set(12, deep_obj("p", 109, 997, 0)); /* 999 levels: read in a list too */
  set(13, deep_obj("q", 109, 998, 0));
  cur_rv = 110;
  send_line(gone);
  watcher = NULL;
  CHECK(wait_for(&requests, "WATCH rv=110;"));
  CHECK(has("!ns/a|the object is nested 1202 levels deep"));
  CHECK(!has("-ns/a;"));
  CHECK(has("~ns/e;")); /* 5 -> 104 */
  CHECK(has("-ns/n;") && has("+ns/p;"));
  CHECK(has("!ns/q|the object is nested 1000 levels deep, more than the limit of 999;"));
  CHECK(informer_get(inf, "ns/a") != NULL);
  CHECK_EQ_INT(informer_count(inf), 7); /* a e g h i m p */

  /* 4. An unreadable object whose name cannot be found: no deletes are inferred from that list. */
  buf_reset(&seen);
  buf_reset(&requests);
  set(11, strdup("{\"metadata\":{\"namespace\":\"ns\"},\"spec\":nul}"));
  set(7, NULL); /* h */
  cur_rv = 111;
  send_line(gone);
  watcher = NULL;
  CHECK(wait_for(&requests, "WATCH rv=111;"));
  CHECK(has("!(none)|the object is not valid JSON;"));
  CHECK(!has("-ns/h;"));
  CHECK(informer_get(inf, "ns/h") != NULL);
  /* Once it is readable again, the next list infers the delete. */
  buf_reset(&seen);
  buf_reset(&requests);
  set(11, NULL);
  cur_rv = 112;
  send_line(gone);
  watcher = NULL;
  CHECK(wait_for(&requests, "WATCH rv=112;"));
  CHECK(has("-ns/h;"));
  CHECK(informer_get(inf, "ns/h") == NULL);

  int stopped = 0, closed = 0;
  informer_stop(inf, closed_cb, &stopped);
  settle(10);
  CHECK_EQ_INT(stopped, 1);
  kube_client_close(c, closed_cb, &closed);
  settle(10);
  CHECK_EQ_INT(closed, 1);
  tsrv_stop(&srv);
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(uv_loop_close(&loop), 0);
  for (int i = 0; i < MAXOBJ; i++) free(store[i]);
  buf_free(&seen);
  buf_free(&requests);
  free(err);
  return t_done();
}
