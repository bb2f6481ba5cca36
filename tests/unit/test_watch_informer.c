/* The informer against a small fake API server (in-process, loopback): paginated LIST, WATCH from
 * the list's resourceVersion, events, bookmarks, re-watch after a normal end, relist on 410 (as an
 * ERROR event and as HTTP 410) with deletes/updates for what changed meanwhile, and backoff on
 * failures. */
#include "t.h"
#include "test_watch_server.h"
#include "base/textpool.h"
#include "watch/informer.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* test_watch_informer_compact.c runs all of this with the cache holding text (informer_opts_t.compact):
 * the same handler calls, objects and texts, other memory figures. */
#ifndef TEST_INFORMER_COMPACT
#define TEST_INFORMER_COMPACT false
#endif

static uv_loop_t loop;
static tsrv_t srv;

/* ---- the fake API server ---- */

#define MAXOBJ 32
typedef struct fobj_s {
  char name[32];
  int rv;       /* 0: absent */
  int gen;
  int chart;    /* 0: no spec; n > 0: spec.chart.inline, chart n; -1: an inline that is not an object */
} fobj_t;

static fobj_t objs[MAXOBJ];
static int cur_rv = 0;
static tconn_t *watcher;       /* the open watch stream, if any */
static buf_t requests;         /* "LIST limit=.. continue=..|WATCH rv=..;" */
static int fail_lists;         /* answer this many lists with 500 */
static int fail_watches;       /* answer this many watches with 500 */
static int gone_watches;       /* answer this many watches with HTTP 410 */
static uint64_t watch_times[16];
static int n_watch_times;

/* The inline chart n as the fake server sends it (spaces, escapes and numbers as a user writes them). */
static void chart_json(buf_t *b, int n) {
  if (n < 0) {
    buf_puts(b, "\"not an object\"");
    return;
  }
  buf_printf(b, "{ \"chartName\": \"c%d\", \"templates\": {\"cm.yaml\": \"kind: ConfigMap\\n# chart %d \\u00e9\\t\"}, "
                "\"values\": {\"n\": %d, \"f\": 2.50, \"big\": 1e6, \"l\": [true, null, \"x\"]} }", n, n, n);
}

static char *obj_json(const fobj_t *o) {
  buf_t b = BUF_INIT;
  buf_printf(&b,
             "{\"apiVersion\":\"rudder.dev/v1alpha1\",\"kind\":\"HelmRelease\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"ns\",\"resourceVersion\":\"%d\",\"generation\":%d}",
             o->name, o->rv, o->gen);
  if (o->chart) {
    buf_puts(&b, ",\"spec\":{\"interval\":\"1m\",\"chart\":{\"inline\":");
    chart_json(&b, o->chart);
    buf_puts(&b, "},\"values\":{\"a\":1},\"userField\":\"u\"},\"status\":{\"x\":1}");
  }
  buf_puts(&b, "}");
  return buf_steal(&b);
}

static void send_chunk(tconn_t *c, const char *s) {
  char h[24];
  snprintf(h, sizeof h, "%zx\r\n", strlen(s));
  tsrv_puts(c, h);
  tsrv_puts(c, s);
  tsrv_puts(c, "\r\n");
}

static void send_event(const char *type, const fobj_t *o) {
  if (!watcher) return;
  char *j = obj_json(o);
  buf_t e = BUF_INIT;
  buf_printf(&e, "{\"type\":\"%s\",\"object\":%s}\n", type, j);
  send_chunk(watcher, e.data);
  buf_free(&e);
  free(j);
}

/* Changes the store; broadcast says whether the watcher hears of it. */
static void put_chart(const char *name, int chart, int broadcast) {
  fobj_t *o = NULL;
  for (int i = 0; i < MAXOBJ; i++) if (objs[i].rv && !strcmp(objs[i].name, name)) o = &objs[i];
  int add = !o;
  if (add) for (int i = 0; i < MAXOBJ && !o; i++) if (!objs[i].rv) o = &objs[i];
  if (!o) abort(); /* the fake store is full */
  snprintf(o->name, sizeof o->name, "%s", name);
  o->chart = chart;
  o->rv = ++cur_rv;
  o->gen++;
  if (broadcast) send_event(add ? "ADDED" : "MODIFIED", o);
}

static void put(const char *name, int broadcast) { put_chart(name, 0, broadcast); }

static void del(const char *name, int broadcast) {
  for (int i = 0; i < MAXOBJ; i++)
    if (objs[i].rv && !strcmp(objs[i].name, name)) {
      objs[i].rv = ++cur_rv;
      if (broadcast) send_event("DELETED", &objs[i]);
      objs[i].rv = 0;
      objs[i].gen = 0;
    }
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

static void api(tconn_t *c, const char *method, const char *url, const char *headers, const char *body, size_t len) {
  const char *base = "/apis/rudder.dev/v1alpha1/namespaces/ns/helmreleases";
  if (strncmp(url, base, strlen(base))) { tsrv_respond(c, 404, "Not Found", "text/plain", "?"); return; }
  char v[128], sel[128];
  if (!qget(url, "labelSelector", sel, sizeof sel) || strcmp(sel, "app%3Dweb")) {
    tsrv_respond(c, 400, "Bad Request", "text/plain", "missing labelSelector");
    return;
  }
  if (qget(url, "watch", v, sizeof v)) {
    char rv[32] = "";
    qget(url, "resourceVersion", rv, sizeof rv);
    buf_printf(&requests, "WATCH rv=%s;", rv);
    if (n_watch_times < 16) watch_times[n_watch_times++] = uv_now(&loop);
    if (!qget(url, "allowWatchBookmarks", v, sizeof v) || !qget(url, "timeoutSeconds", v, sizeof v)) {
      tsrv_respond(c, 400, "Bad Request", "text/plain", "missing watch parameters");
      return;
    }
    if (fail_watches > 0) {
      fail_watches--;
      tsrv_respond(c, 500, "Internal Server Error", "application/json",
                   "{\"kind\":\"Status\",\"message\":\"etcd unavailable\",\"reason\":\"InternalError\",\"code\":500}");
      return;
    }
    if (gone_watches > 0) {
      gone_watches--;
      tsrv_respond(c, 410, "Gone", "application/json",
                   "{\"kind\":\"Status\",\"message\":\"too old resource version\",\"reason\":\"Expired\",\"code\":410}");
      return;
    }
    tsrv_puts(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
    watcher = c;
    return;
  }
  char lim[16] = "", cont[16] = "";
  qget(url, "limit", lim, sizeof lim);
  qget(url, "continue", cont, sizeof cont);
  buf_printf(&requests, "LIST limit=%s continue=%s;", lim, cont);
  if (fail_lists > 0) {
    fail_lists--;
    tsrv_respond(c, 500, "Internal Server Error", "text/plain", "boom");
    return;
  }
  int limit = atoi(lim), start = atoi(cont), n = 0, i;
  buf_t b = BUF_INIT;
  buf_printf(&b, "{\"kind\":\"HelmReleaseList\",\"items\":[");
  int present[MAXOBJ], np = 0;
  for (i = 0; i < MAXOBJ; i++) if (objs[i].rv) present[np++] = i;
  for (i = start; i < np && n < limit; i++, n++) {
    char *j = obj_json(&objs[present[i]]);
    buf_printf(&b, "%s%s", n ? "," : "", j);
    free(j);
  }
  buf_printf(&b, "],\"metadata\":{\"resourceVersion\":\"%d\"", cur_rv);
  if (i < np) buf_printf(&b, ",\"continue\":\"%d\"", i);
  buf_puts(&b, "}}");
  tsrv_respond(c, 200, "OK", "application/json", b.data);
  buf_free(&b);
}

/* Ends the open watch stream normally, or with an ERROR 410 event first. */
static void end_watch(int with_410) {
  if (!watcher) return;
  if (with_410)
    send_chunk(watcher, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"status\":\"Failure\","
                        "\"message\":\"too old resource version: 3 (40)\",\"reason\":\"Expired\",\"code\":410}}\n");
  else
    tsrv_puts(watcher, "0\r\n\r\n");
  watcher = NULL;
}

static void bookmark(int rv) {
  char e[160];
  snprintf(e, sizeof e, "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"HelmRelease\",\"metadata\":{\"resourceVersion\":\"%d\"}}}\n", rv);
  if (watcher) send_chunk(watcher, e);
}

/* ---- the informer's handlers ---- */

static buf_t seen; /* "+key@rv;" "~key@oldrv>rv;" "-key;" */
static int synced_calls;

static const char *rv_of(const cJSON *o) {
  return cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), "resourceVersion"));
}
static void on_add(informer_t *i, const char *key, const cJSON *o, void *d) { buf_printf(&seen, "+%s@%s;", key, rv_of(o)); }
static void on_update(informer_t *i, const char *key, const cJSON *old, const cJSON *o, void *d) {
  buf_printf(&seen, "~%s@%s>%s;", key, rv_of(old), rv_of(o));
}
static void on_delete(informer_t *i, const char *key, const cJSON *o, void *d) { buf_printf(&seen, "-%s;", key); }
static void on_synced(informer_t *i, void *d) { synced_calls++; }

static int deadline;
static void deadline_cb(uv_timer_t *t) { deadline = 1; }

/* Runs until buf (or requests when NULL) contains want, or 5 s pass. */
static int wait_for(buf_t *b, const char *want) {
  uv_timer_t t;
  uv_timer_init(&loop, &t);
  deadline = 0;
  uv_timer_start(&t, deadline_cb, 5000, 0);
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

/* The projection keeps the identity fields and the chosen paths, merging overlapping ones. */
static void test_project(void) {
  const char *text =
      "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\",\"namespace\":\"n\","
      "\"uid\":\"u\",\"resourceVersion\":\"7\",\"labels\":{\"x\":\"1\"},\"annotations\":{\"big\":\"...\"},"
      "\"managedFields\":[{\"manager\":\"kubectl\"}]},\"data\":{\"k\":\"v\",\"other\":\"w\"},"
      "\"status\":{\"conditions\":[{\"type\":\"Ready\"}],\"history\":[1,2,3]}}";
  const char *keep[] = {"metadata.labels", "data.k", "status.conditions", "metadata", "spec.missing", NULL};
  cJSON *p = informer_project(cJSON_Parse(text), keep);
  char *out = cJSON_PrintUnformatted(p);
  CHECK_EQ_STR(out, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\",\"namespace\":\"n\","
                    "\"uid\":\"u\",\"resourceVersion\":\"7\",\"labels\":{\"x\":\"1\"},\"annotations\":{\"big\":\"...\"},"
                    "\"managedFields\":[{\"manager\":\"kubectl\"}]},\"data\":{\"k\":\"v\"},"
                    "\"status\":{\"conditions\":[{\"type\":\"Ready\"}]}}");
  free(out);
  cJSON_Delete(p);
  const char *lean[] = {"status.conditions", NULL};
  p = informer_project(cJSON_Parse(text), lean);
  out = cJSON_PrintUnformatted(p);
  CHECK_EQ_STR(out, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\",\"namespace\":\"n\","
                    "\"uid\":\"u\",\"resourceVersion\":\"7\"},\"status\":{\"conditions\":[{\"type\":\"Ready\"}]}}");
  free(out);
  cJSON_Delete(p);
  /* No keep list: the object itself. */
  cJSON *o = cJSON_Parse(text);
  CHECK(informer_project(o, NULL) == o);
  cJSON_Delete(o);
}

/* The estimate of one tree: 80 bytes per node (sizeof(cJSON) = 64, plus glibc's 8, rounded to 16)
 * and a block of at least 32 bytes per key and per string value. */
static void test_object_bytes(void) {
  CHECK_EQ_INT(sizeof(cJSON), 64);
  CHECK_EQ_INT(INFORMER_BLOCK_BYTES(1), 32);
  CHECK_EQ_INT(INFORMER_BLOCK_BYTES(24), 32);
  CHECK_EQ_INT(INFORMER_BLOCK_BYTES(25), 48);
  CHECK_EQ_INT(INFORMER_BLOCK_BYTES(64), 80);
  CHECK_EQ_INT(informer_object_bytes(NULL), 0);
  cJSON *o = cJSON_Parse("{\"a\":\"bc\"}");
  CHECK_EQ_INT(informer_object_bytes(o), 80 + 80 + 32 + 32); /* {}, "a": node, key, value */
  cJSON_Delete(o);
  /* Numbers, booleans and null hold no string; an array's elements have no keys. */
  o = cJSON_Parse("[1,true,null,\"\"]");
  CHECK_EQ_INT(informer_object_bytes(o), 5 * 80 + 32);
  cJSON_Delete(o);
  /* A key of 30 bytes: a block of 48; a value of 100 bytes: 101 + 8 rounded up to 112. */
  char text[200];
  snprintf(text, sizeof text, "{\"%030d\":\"%0100d\"}", 0, 0);
  o = cJSON_Parse(text);
  CHECK_EQ_INT(informer_object_bytes(o), 80 + 80 + 48 + 112);
  /* Only obj and below it: a child alone is its node, its key and its value. */
  CHECK_EQ_INT(informer_object_bytes(o->child), 80 + 48 + 112);
  cJSON_Delete(o);
  /* A constant key costs nothing; a reference's value is not its own. */
  o = cJSON_CreateObject();
  cJSON_AddItemToObjectCS(o, "k", cJSON_CreateNumber(1));
  CHECK_EQ_INT(informer_object_bytes(o), 2 * 80);
  cJSON *s = cJSON_CreateString("shared text");
  cJSON_AddItemReferenceToObject(o, "r", s);
  CHECK_EQ_INT(informer_object_bytes(o), 3 * 80 + 32);
  cJSON_Delete(o);
  cJSON_Delete(s);
}

static size_t n_keep_text; /* of the informer being checked */

/* The raw nodes of o and below: how many, and their texts' length. */
static void raw_nodes(const cJSON *o, size_t *n, size_t *len) {
  for (const cJSON *c = o->child; c; c = c->next) {
    if (cJSON_IsRaw(c)) {
      (*n)++;
      *len += strlen(c->valuestring);
    }
    raw_nodes(c, n, len);
  }
}

/* What a compact cache holds for obj: one block of its length, a pointer per keep_text path and its
 * text, printed with null for each pooled text. */
static size_t compact_bytes(const cJSON *obj) {
  char *text = cJSON_PrintUnformatted(obj);
  size_t n = 0, len = 0;
  raw_nodes(obj, &n, &len);
  size_t b = INFORMER_BLOCK_BYTES(sizeof(size_t) + n_keep_text * sizeof(void *) + strlen(text) - len + 4 * n + 1);
  free(text);
  return b;
}

/* The cache's figures are the sums over what it holds, every time they are read. */
static void check_memory(informer_t *inf) {
  informer_memory_t m = informer_memory(inf);
  size_t it = 0, count = 0, ob = 0, kb = 0, trees = 0;
  const char *key;
  const cJSON *obj;
  while (informer_next(inf, &it, &key, &obj)) {
    count++;
    size_t want = TEST_INFORMER_COMPACT ? compact_bytes(obj) : informer_object_bytes(obj);
    CHECK_EQ_INT(informer_cached_bytes(inf, key), want);
    ob += want;
    trees += informer_object_bytes(obj);
    kb += INFORMER_BLOCK_BYTES(strlen(key) + 1);
  }
  CHECK_EQ_INT(m.objects, count);
  CHECK_EQ_INT(m.objects, informer_count(inf));
  CHECK_EQ_INT(m.object_bytes, ob);
  /* Text is smaller than the trees (even those of the parse, whose keys are their own). */
  if (TEST_INFORMER_COMPACT && count) CHECK(m.object_bytes * 2 < trees);
  CHECK_EQ_INT(m.key_bytes, kb);
  CHECK(m.table_bytes > 0);
  CHECK_EQ_INT(m.bytes, m.object_bytes + m.key_bytes + m.table_bytes + m.text_bytes);
}

/* ---- subtrees kept as text (keep_text) ---- */

static const cJSON *at(const cJSON *o, const char *a, const char *b, const char *c) {
  o = cJSON_GetObjectItemCaseSensitive(o, a);
  if (b) o = cJSON_GetObjectItemCaseSensitive(o, b);
  if (c) o = cJSON_GetObjectItemCaseSensitive(o, c);
  return o;
}
static const cJSON *inline_of(const cJSON *o) { return at(o, "spec", "chart", "inline"); }
static const char *text_of(const cJSON *x) { return cJSON_IsRaw(x) ? x->valuestring : NULL; }

/* The chart name read from a cached object's text (which must be alive), or "-". */
static void chart_name(buf_t *b, const cJSON *o) {
  cJSON *t = text_of(inline_of(o)) ? cJSON_Parse(text_of(inline_of(o))) : NULL;
  const char *n = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "chartName"));
  buf_puts(b, n ? n : "-");
  cJSON_Delete(t);
}
static void text_on_add(informer_t *i, const char *key, const cJSON *o, void *d) {
  buf_printf(&seen, "+%s:", key);
  chart_name(&seen, o);
  buf_puts(&seen, ";");
}
static void text_on_update(informer_t *i, const char *key, const cJSON *old, const cJSON *o, void *d) {
  buf_printf(&seen, "~%s:", key);
  chart_name(&seen, old);
  buf_puts(&seen, ">");
  chart_name(&seen, o);
  buf_puts(&seen, ";");
}
static void text_on_delete(informer_t *i, const char *key, const cJSON *o, void *d) {
  buf_printf(&seen, "-%s:", key);
  chart_name(&seen, o);
  buf_puts(&seen, ";");
}

/* The compact text of chart n, as cJSON prints it. */
static char *chart_text(int n) {
  buf_t b = BUF_INIT;
  chart_json(&b, n);
  cJSON *t = cJSON_Parse(b.data);
  char *s = cJSON_PrintUnformatted(t);
  cJSON_Delete(t);
  buf_free(&b);
  return s;
}

/* refs of the cached text of key's inline chart (0 when it is not text). */
static size_t refs_of(informer_t *inf, const char *key) {
  const char *t = text_of(inline_of(informer_get(inf, key)));
  return t ? textpool_refs(t) : 0;
}

/* What the pool holds: its 16 buckets and a block per distinct text (header and text). */
static size_t pool_bytes(const char *const *texts) {
  size_t b = INFORMER_BLOCK_BYTES(16 * sizeof(void *));
  for (size_t i = 0; texts[i]; i++) b += INFORMER_BLOCK_BYTES(32 + strlen(texts[i]) + 1);
  return b;
}

static void test_keep_text(kube_client_t *c) {
  watcher = NULL; /* the first informer's stream is gone */
  for (int i = 0; i < MAXOBJ; i++) objs[i].rv = objs[i].gen = objs[i].chart = 0;
  put_chart("t1", 1, 0);
  put_chart("t2", 1, 0);
  put_chart("t3", 2, 0);
  put_chart("t4", -1, 0);
  put_chart("t5", 0, 0);
  static const char *const keep[] = {"spec", NULL};
  static const char *const text[] = {"spec.chart.inline", "spec.values", "spec.none.deeper", "status", NULL};
  informer_opts_t o = {.path = "/apis/rudder.dev/v1alpha1/namespaces/ns/helmreleases", .label_selector = "app=web",
                       .page_size = 2, .keep = keep, .keep_text = text, .compact = TEST_INFORMER_COMPACT};
  n_keep_text = 4;
  informer_handlers_t h = {text_on_add, text_on_update, text_on_delete, NULL, NULL, NULL};
  informer_t *inf;
  buf_reset(&seen);
  buf_reset(&requests);
  CHECK_EQ_INT(informer_start(c, &o, &h, &inf), 0);
  CHECK(wait_for(&requests, "WATCH rv="));
  /* Handlers see the text (read here from it): t4's inline is no object, t5 has no chart. */
  CHECK_EQ_STR(seen.data, "+ns/t1:c1;+ns/t2:c1;+ns/t3:c2;+ns/t4:-;+ns/t5:-;");
  char *c1 = chart_text(1), *c2 = chart_text(2), *c3 = chart_text(3), *c4 = chart_text(4);
  /* Read again at each use: a compact informer's trees live for INFORMER_RING reads. */
#define t1 informer_get(inf, "ns/t1")
#define t2 informer_get(inf, "ns/t2")
#define t3 informer_get(inf, "ns/t3")
  /* Each subtree is one raw node holding the compact text, the same copy for the same text. */
  CHECK(cJSON_IsRaw(inline_of(t1)) && (inline_of(t1)->type & cJSON_IsReference));
  CHECK_EQ_STR(text_of(inline_of(t1)), c1);
  CHECK_EQ_STR(text_of(inline_of(t3)), c2);
  CHECK(text_of(inline_of(t1)) == text_of(inline_of(t2)));
  CHECK_EQ_INT(refs_of(inf, "ns/t1"), 2);
  CHECK_EQ_INT(refs_of(inf, "ns/t3"), 1);
  CHECK_EQ_STR(text_of(at(t1, "spec", "values", NULL)), "{\"a\":1}");
  CHECK_EQ_INT(textpool_refs(text_of(at(t1, "spec", "values", NULL))), 4); /* t1..t4 */
  CHECK(cJSON_IsString(inline_of(informer_get(inf, "ns/t4"))));           /* not an object: left alone */
  CHECK(at(informer_get(inf, "ns/t5"), "spec", NULL, NULL) == NULL);
  CHECK(at(t1, "status", NULL, NULL) == NULL); /* projected away before */
  /* The object prints as its projection did: a digest of the spec is the same either way. */
  {
    fobj_t f = {.name = "t1", .rv = atoi(rv_of(t1)), .gen = 1, .chart = 1};
    char *j = obj_json(&f);
    cJSON *fresh = informer_project(cJSON_Parse(j), keep);
    char *want = cJSON_PrintUnformatted(fresh), *got = cJSON_PrintUnformatted(t1);
    CHECK_EQ_STR(got, want);
    /* And the text parses back to the tree it was. */
    cJSON *back = cJSON_Parse(text_of(inline_of(t1)));
    CHECK(cJSON_Compare(back, inline_of(fresh), 1));
    cJSON_Delete(back);
    free(want);
    free(got);
    cJSON_Delete(fresh);
    free(j);
  }
  /* The raw node is its node (its key "inline" is a shared one, but not in a tree parsed from a
   * compact cache's text); the texts are counted once, in text_bytes. A key the informer does not
   * share is the node's own. */
  CHECK_EQ_INT(informer_object_bytes(inline_of(t1)), TEST_INFORMER_COMPACT ? 80 + 32 : 80);
  CHECK_EQ_INT(informer_object_bytes(at(t1, "spec", "values", NULL)), TEST_INFORMER_COMPACT ? 80 + 32 : 80);
  const cJSON *own = at(t1, "spec", "userField", NULL);
  CHECK(own && !(own->type & cJSON_StringIsConst));
  CHECK_EQ_INT(informer_object_bytes(own), 80 + 32 + 32);
  check_memory(inf);
  informer_memory_t m = informer_memory(inf);
  CHECK_EQ_INT(m.texts, 3);
  {
    const char *texts[] = {c1, c2, "{\"a\":1}", NULL};
    CHECK_EQ_INT(m.text_bytes, pool_bytes(texts));
  }

  /* Updates: the new object holds its text before the old one lets go (the handler reads both). */
  buf_reset(&seen);
  put_chart("t2", 2, 1);
  CHECK(wait_for(&seen, "~ns/t2:"));
  CHECK_EQ_STR(seen.data, "~ns/t2:c1>c2;");
  CHECK_EQ_INT(refs_of(inf, "ns/t1"), 1);
  CHECK_EQ_INT(refs_of(inf, "ns/t2"), 2);
  CHECK(text_of(inline_of(informer_get(inf, "ns/t2"))) == text_of(inline_of(informer_get(inf, "ns/t3"))));
  buf_reset(&seen);
  put_chart("t1", 3, 1); /* chart 1's last holder: its text goes */
  CHECK(wait_for(&seen, "~ns/t1:"));
  CHECK_EQ_STR(seen.data, "~ns/t1:c1>c3;");
  CHECK_EQ_INT(informer_memory(inf).texts, 3);
  {
    const char *texts[] = {c2, c3, "{\"a\":1}", NULL};
    CHECK_EQ_INT(informer_memory(inf).text_bytes, pool_bytes(texts));
  }
  /* A delete: the handler sees the last state as text too; the holds go with the object. */
  buf_reset(&seen);
  del("t3", 1);
  CHECK(wait_for(&seen, "-ns/t3:"));
  CHECK_EQ_STR(seen.data, "-ns/t3:c2;");
  CHECK_EQ_INT(refs_of(inf, "ns/t2"), 1);
  check_memory(inf);

  /* A relist after 410 with changes the watch did not tell: a delete, an update, an add. */
  buf_reset(&seen);
  buf_reset(&requests);
  del("t2", 0);
  put_chart("t4", 3, 0);
  put_chart("t6", 4, 0);
  end_watch(1);
  CHECK(wait_for(&requests, "WATCH rv="));
  CHECK(seen.data && strstr(seen.data, "-ns/t2:c2;") && strstr(seen.data, "~ns/t4:->c3;") &&
        strstr(seen.data, "+ns/t6:c4;"));
  CHECK_EQ_INT(seen.len, strlen("-ns/t2:c2;~ns/t4:->c3;+ns/t6:c4;"));
  CHECK_EQ_INT(refs_of(inf, "ns/t1"), 2); /* t1, t4 */
  CHECK_EQ_INT(refs_of(inf, "ns/t6"), 1);
  CHECK_EQ_STR(text_of(inline_of(informer_get(inf, "ns/t6"))), c4);
  CHECK_EQ_INT(textpool_refs(text_of(at(informer_get(inf, "ns/t1"), "spec", "values", NULL))), 3); /* t1, t4, t6 */
  m = informer_memory(inf);
  CHECK_EQ_INT(m.texts, 3);
  {
    const char *texts[] = {c3, c4, "{\"a\":1}", NULL};
    CHECK_EQ_INT(m.text_bytes, pool_bytes(texts));
  }
  check_memory(inf);
  /* A relist with nothing changed: the listed copies are dropped, their holds with them. */
  buf_reset(&seen);
  buf_reset(&requests);
  end_watch(1);
  CHECK(wait_for(&requests, "WATCH rv="));
  CHECK(seen.data == NULL || seen.len == 0);
  CHECK_EQ_INT(refs_of(inf, "ns/t1"), 2);
  CHECK_EQ_INT(refs_of(inf, "ns/t6"), 1);
  CHECK_EQ_INT(informer_memory(inf).text_bytes, m.text_bytes);
#undef t1
#undef t2
#undef t3

  /* informer_has answers without a parse. */
  CHECK(informer_has(inf, "ns/t1") && informer_has(inf, "ns/t6") && !informer_has(inf, "ns/t2"));
  if (TEST_INFORMER_COMPACT) {
    /* The last INFORMER_RING trees read live together, each its own parse of the same text (the
     * sanitizer build sees a freed one read); the pooled texts are held once per cached object, not
     * per tree. */
    const cJSON *r[INFORMER_RING];
    for (int i = 0; i < INFORMER_RING; i++) r[i] = informer_get(inf, "ns/t1");
    for (int i = 1; i < INFORMER_RING; i++) CHECK(r[i] != r[0] && cJSON_Compare(r[i], r[0], 1));
    for (int i = 0; i < INFORMER_RING; i++) CHECK_EQ_STR(text_of(inline_of(r[i])), c3);
    CHECK_EQ_INT(textpool_refs(text_of(inline_of(r[0]))), 2);
  }

  /* Stopped with objects cached: everything is freed (the sanitizer build checks). */
  int stopped = 0;
  informer_stop(inf, closed_cb, &stopped);
  settle(10);
  CHECK_EQ_INT(stopped, 1);
  free(c1);
  free(c2);
  free(c3);
  free(c4);
}

int main(void) {
  test_project();
  test_object_bytes();
  uv_loop_init(&loop);
  if (tsrv_start(&srv, &loop, api)) return 2;
  char url[64], *err = NULL;
  snprintf(url, sizeof url, "http://127.0.0.1:%d", srv.port);
  kube_config_t cfg = {0};
  kube_config_set_server(&cfg, url, &err);
  kube_client_t *c;
  CHECK_EQ_INT(kube_client_new(&loop, &cfg, &c, &err), 0);
  kube_config_free(&cfg);

  for (int i = 1; i <= 5; i++) {
    char n[16];
    snprintf(n, sizeof n, "r%d", i);
    put(n, 0);
  }
  fail_lists = 1; /* the first list fails: the informer retries after a backoff */
  informer_opts_t o = {.path = "/apis/rudder.dev/v1alpha1/namespaces/ns/helmreleases", .label_selector = "app=web",
                       .page_size = 2, .backoff_base_ms = 20, .backoff_max_ms = 200, .compact = TEST_INFORMER_COMPACT};
  n_keep_text = 0;
  informer_handlers_t h = {on_add, on_update, on_delete, on_synced, NULL, NULL};
  informer_t *inf;
  CHECK_EQ_INT(informer_start(c, &o, &h, &inf), 0);
  CHECK(!informer_has_synced(inf));

  /* 1. Paginated list (after one failure), then a watch from the list's resourceVersion. */
  CHECK(wait_for(&requests, "WATCH rv=5;"));
  CHECK_EQ_STR(requests.data, "LIST limit=2 continue=;LIST limit=2 continue=;LIST limit=2 continue=2;"
                              "LIST limit=2 continue=4;WATCH rv=5;");
  CHECK_EQ_STR(seen.data, "+ns/r1@1;+ns/r2@2;+ns/r3@3;+ns/r4@4;+ns/r5@5;");
  CHECK(informer_has_synced(inf));
  CHECK_EQ_INT(synced_calls, 1);
  CHECK_EQ_INT(informer_count(inf), 5);
  CHECK_EQ_STR(informer_resource_version(inf), "5");
  CHECK_EQ_STR(rv_of(informer_get(inf, "ns/r3")), "3");
  CHECK(informer_get(inf, "ns/none") == NULL);
  check_memory(inf);
  /* One object of the fake server is its text, parsed: 5 such objects and keys "ns/rN". */
  {
    informer_memory_t m = informer_memory(inf);
    cJSON *one = cJSON_Parse("{\"apiVersion\":\"rudder.dev/v1alpha1\",\"kind\":\"HelmRelease\",\"metadata\":"
                             "{\"name\":\"r1\",\"namespace\":\"ns\",\"resourceVersion\":\"1\",\"generation\":1}}");
    /* 8 nodes; 7 keys (apiVersion ... resourceVersion, 16 bytes with its NUL: 16 + 8 fits in 32)
     * and 5 string values ("rudder.dev/v1alpha1", 20 bytes, ... "1"): a block of 32 each. */
    CHECK_EQ_INT(informer_object_bytes(one), 8 * 80 + 7 * 32 + 5 * 32);
    if (TEST_INFORMER_COMPACT) {
      /* Compact: one block per object, its length and its text (as cJSON prints it: 136 bytes). */
      char *t = cJSON_PrintUnformatted(one);
      CHECK_EQ_INT(strlen(t), 136);
      CHECK_EQ_INT(m.object_bytes, 5 * INFORMER_BLOCK_BYTES(8 + 136 + 1));
      CHECK_EQ_INT(INFORMER_BLOCK_BYTES(8 + 136 + 1), 160);
      free(t);
      /* What readers get prints as the tree did. */
      t = cJSON_PrintUnformatted(informer_get(inf, "ns/r1"));
      char *w = cJSON_PrintUnformatted(one);
      CHECK_EQ_STR(t, w);
      free(t);
      free(w);
    } else {
      /* The cache holds those keys once for the process (constant keys): only nodes and values. */
      CHECK_EQ_INT(m.object_bytes, 5 * (8 * 80 + 5 * 32));
      const cJSON *r1 = informer_get(inf, "ns/r1");
      CHECK(r1 && (r1->child->type & cJSON_StringIsConst) && !strcmp(r1->child->string, "apiVersion"));
      CHECK(r1 && r1->child->string == informer_get(inf, "ns/r3")->child->string);
    }
    CHECK_EQ_INT(m.key_bytes, 5 * 32);
    cJSON_Delete(one);
  }

  /* 2. Watch events and a bookmark. */
  buf_reset(&seen);
  put("r6", 1);
  put("r1", 1);
  del("r2", 1);
  bookmark(20);
  CHECK(wait_for(&seen, "-ns/r2;"));
  CHECK_EQ_STR(seen.data, "+ns/r6@6;~ns/r1@1>7;-ns/r2;");
  CHECK_EQ_INT(informer_count(inf), 5);
  CHECK(informer_get(inf, "ns/r2") == NULL);
  CHECK_EQ_STR(rv_of(informer_get(inf, "ns/r1")), "7");
  check_memory(inf);
  settle(20);
  CHECK_EQ_STR(informer_resource_version(inf), "20");
  cur_rv = 20;

  /* 3. A normal end of the stream: re-watch at once from the last resourceVersion. */
  buf_reset(&requests);
  end_watch(0);
  CHECK(wait_for(&requests, "WATCH rv=20;"));
  CHECK_EQ_STR(requests.data, "WATCH rv=20;");

  /* 4. ERROR 410: relist; what changed unseen is delivered as delete/update/add. */
  buf_reset(&seen);
  buf_reset(&requests);
  del("r3", 0);
  put("r4", 0);
  put("r7", 0);
  end_watch(1);
  CHECK(wait_for(&requests, "WATCH rv=23;"));
  CHECK_EQ_STR(requests.data, "LIST limit=2 continue=;LIST limit=2 continue=2;LIST limit=2 continue=4;WATCH rv=23;");
  /* Order within a relist follows the cache, so check the pieces. */
  CHECK(seen.data && strstr(seen.data, "-ns/r3;") && strstr(seen.data, "~ns/r4@4>22;") && strstr(seen.data, "+ns/r7@23;"));
  CHECK_EQ_INT(seen.len, strlen("-ns/r3;~ns/r4@4>22;+ns/r7@23;")); /* and nothing for unchanged objects */
  CHECK_EQ_INT(informer_count(inf), 5);
  CHECK_EQ_INT(synced_calls, 1);
  check_memory(inf);

  /* 5. Watch failures back off (jittered, growing) and resume from the same resourceVersion. */
  buf_reset(&requests);
  n_watch_times = 0;
  fail_watches = 3;
  tsrv_close(watcher); /* the stream breaks mid-way */
  watcher = NULL;
  CHECK(wait_for(&requests, "WATCH rv=23;WATCH rv=23;WATCH rv=23;WATCH rv=23;"));
  CHECK_EQ_INT(n_watch_times, 4);
  if (n_watch_times == 4) {
    uint64_t d1 = watch_times[1] - watch_times[0], d2 = watch_times[2] - watch_times[1],
             d3 = watch_times[3] - watch_times[2];
    /* 20, 40, 80 ms with 50-100% jitter: the lower bounds show the growth; the upper ones are loose
     * for busy machines. */
    CHECK(d1 >= 9 && d1 <= 1500);
    CHECK(d2 >= 19 && d2 <= 1500);
    CHECK(d3 >= 39 && d3 <= 2000);
    CHECK(d3 > d1);
  }

  /* 6. HTTP 410 on a watch: relist. */
  buf_reset(&requests);
  gone_watches = 1;
  end_watch(0);
  CHECK(wait_for(&requests, "LIST limit=2 continue=4;WATCH rv=23;"));
  CHECK_EQ_STR(requests.data, "WATCH rv=23;LIST limit=2 continue=;LIST limit=2 continue=2;LIST limit=2 continue=4;WATCH rv=23;");
  unsigned lists, watches;
  informer_stats(inf, &lists, &watches);
  CHECK_EQ_INT(lists, 3);

  /* Iteration sees every cached object. */
  size_t it = 0, n = 0;
  const char *key;
  const cJSON *obj;
  while (informer_next(inf, &it, &key, &obj)) n += obj != NULL && strncmp(key, "ns/r", 4) == 0;
  CHECK_EQ_INT(n, 5);
  check_memory(inf);

  /* Deleting everything (two by watch events, the rest seen missing by a relist) brings the
   * figures back to zero; only the hash table stays. */
  {
    informer_memory_t before = informer_memory(inf);
    CHECK(before.object_bytes > 0);
    const char *names[MAXOBJ];
    int nn = 0;
    for (int i = 0; i < MAXOBJ; i++) if (objs[i].rv) names[nn++] = objs[i].name;
    char copy[MAXOBJ][32];
    for (int i = 0; i < nn; i++) snprintf(copy[i], sizeof copy[i], "%s", names[i]);
    buf_reset(&seen);
    del(copy[0], 1);
    del(copy[1], 1);
    CHECK(wait_for(&seen, "-ns/"));
    settle(20);
    CHECK_EQ_INT(informer_count(inf), nn - 2);
    check_memory(inf);
    for (int i = 2; i < nn; i++) del(copy[i], 0);
    buf_reset(&requests);
    end_watch(1);
    CHECK(wait_for(&requests, "WATCH rv="));
    CHECK_EQ_INT(informer_count(inf), 0);
    informer_memory_t m = informer_memory(inf);
    CHECK_EQ_INT(m.objects, 0);
    CHECK_EQ_INT(m.object_bytes, 0);
    CHECK_EQ_INT(m.key_bytes, 0);
    CHECK_EQ_INT(m.table_bytes, before.table_bytes);
    CHECK_EQ_INT(m.bytes, m.table_bytes);
    /* And adding one back counts it again. */
    buf_reset(&seen);
    put("r1", 1);
    CHECK(wait_for(&seen, "+ns/r1@"));
    check_memory(inf);
    CHECK_EQ_INT(informer_memory(inf).objects, 1);
  }

  /* Stop with a watch open; then close the client; the loop must end clean. */
  int stopped = 0, closed = 0;
  informer_stop(inf, closed_cb, &stopped);
  settle(10);
  CHECK_EQ_INT(stopped, 1);
  test_keep_text(c);
  kube_client_close(c, closed_cb, &closed);
  settle(10);
  CHECK_EQ_INT(closed, 1);
  tsrv_stop(&srv);
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(uv_loop_close(&loop), 0);
  buf_free(&seen);
  buf_free(&requests);
  free(err);
  return t_done();
}
