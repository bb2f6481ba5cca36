/* Pure parsing pieces: path building, the HTTP response parser and NDJSON watch events fed in every
 * split (down to one byte at a time), the string map and base64. */
#include "t.h"
#include "watch/client.h"
#include "watch/http1.h"
#include "watch/internal.h"
#include "watch/ndjson.h"
#include <stdlib.h>
#include <string.h>

static void test_paths(void) {
  buf_t b = BUF_INIT;
  CHECK_EQ_INT(kube_path(&b, "", "v1", "namespaces", NULL, NULL, NULL), 0);
  CHECK_EQ_STR(b.data, "/api/v1/namespaces");
  buf_reset(&b);
  CHECK_EQ_INT(kube_path(&b, NULL, "v1", "pods", "kube-system", "coredns-1", "status"), 0);
  CHECK_EQ_STR(b.data, "/api/v1/namespaces/kube-system/pods/coredns-1/status");
  buf_reset(&b);
  CHECK_EQ_INT(kube_path(&b, "rudder.dev", "v1alpha1", "helmreleases", "team a", "x/y?z", NULL), 0);
  CHECK_EQ_STR(b.data, "/apis/rudder.dev/v1alpha1/namespaces/team%20a/helmreleases/x%2Fy%3Fz");
  buf_reset(&b);
  CHECK_EQ_INT(kube_path(&b, "apps", "v1", "deployments", NULL, NULL, NULL), 0);
  CHECK_EQ_STR(b.data, "/apis/apps/v1/deployments");
  CHECK_EQ_INT(kube_query_add(&b, "labelSelector", "app=web,tier in (a,b)"), 0);
  CHECK_EQ_INT(kube_query_add(&b, "limit", "500"), 0);
  CHECK_EQ_STR(b.data, "/apis/apps/v1/deployments?labelSelector=app%3Dweb%2Ctier%20in%20%28a%2Cb%29&limit=500");
  /* Segments that would change the URL's meaning are refused, and the buffer is left as it was. */
  buf_reset(&b);
  buf_puts(&b, "keep");
  CHECK_EQ_INT(kube_path(&b, "apps", "v1", "deployments", "ns", "..", NULL), UV_EINVAL);
  CHECK_EQ_STR(b.data, "keep");
  CHECK_EQ_INT(kube_path(&b, "apps", "v1", "deployments", "", NULL, NULL), UV_EINVAL);
  CHECK_EQ_INT(kube_path(&b, "apps", "v1", "deployments", NULL, NULL, "status"), UV_EINVAL);
  CHECK_EQ_STR(b.data, "keep");
  buf_reset(&b);
  kube_url_escape(&b, "a-b_c.d~e é/");
  CHECK_EQ_STR(b.data, "a-b_c.d~e%20%C3%A9%2F");
  buf_free(&b);
}

typedef struct events_s {
  buf_t log; /* "TYPE name;" per event */
  int stop_after;
  cJSON *taken;
} events_t;

static int on_event(watch_ndjson_t *nd, const char *type, cJSON *obj, void *data) {
  events_t *e = data;
  const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(md, "name");
  buf_printf(&e->log, "%s %s;", type, cJSON_IsString(name) ? name->valuestring : "?");
  if (!strcmp(type, "MODIFIED") && !e->taken) e->taken = watch_ndjson_take(nd);
  if (e->stop_after && nd->events >= (size_t)e->stop_after) return -99;
  return 0;
}

static const char *events_body[] = {
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}}}\n",
    "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"b\",\"resourceVersion\":\"2\"},"
    "\"data\":{\"k\":\"\\u00e9 \\n multi-byte é\"}}}\n",
    "\n", /* keep-alive blank line */
    "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"3\"}}}\r\n",
    "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"4\"}}}\n",
    "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"metadata\":{\"name\":\"gone\"}}}\n",
};
static const char *events_want = "ADDED a;MODIFIED b;BOOKMARK ?;DELETED a;ERROR gone;";

/* A complete chunked watch response: each event is its own chunk, and one event spans two chunks. */
static void build_response(buf_t *r) {
  buf_puts(r, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
              "X-Split-Header: yes\r\n\r\n");
  for (size_t i = 0; i < sizeof events_body / sizeof events_body[0]; i++) {
    const char *e = events_body[i];
    size_t n = strlen(e);
    if (i == 1) { /* split the MODIFIED event across chunks, mid multi-byte character */
      size_t h = n - 8;
      buf_printf(r, "%zx\r\n", h);
      buf_append(r, e, h);
      buf_printf(r, "\r\n%zx;ext=1\r\n", n - h);
      buf_append(r, e + h, n - h);
      buf_puts(r, "\r\n");
    } else {
      buf_printf(r, "%zx\r\n%s\r\n", n, e);
    }
  }
  buf_puts(r, "0\r\n\r\n");
}

typedef struct feed_s {
  watch_http_t h;
  watch_ndjson_t nd;
  events_t ev;
} feed_t;

static int on_body(watch_http_t *h, const char *p, size_t n) {
  feed_t *f = h->data;
  return watch_ndjson_feed(&f->nd, p, n);
}

/* Feeds resp in pieces of `step` bytes; returns the final feed result. */
static int feed_in_steps(feed_t *f, const buf_t *resp, size_t step) {
  watch_http_init(&f->h);
  f->h.on_body = on_body;
  f->h.data = f;
  memset(&f->ev, 0, sizeof f->ev);
  watch_ndjson_init(&f->nd, 4096, on_event, &f->ev);
  int r = 0;
  size_t off = 0;
  while (off < resp->len) {
    size_t n = resp->len - off < step ? resp->len - off : step, used;
    r = watch_http_feed(&f->h, resp->data + off, n, &used);
    off += used;
    if (r) break;
  }
  return r;
}

static void feed_done(feed_t *f) {
  watch_http_free(&f->h);
  watch_ndjson_free(&f->nd);
  buf_free(&f->ev.log);
  cJSON_Delete(f->ev.taken);
}

static void test_watch_stream(void) {
  buf_t resp = BUF_INIT;
  build_response(&resp);
  size_t steps[] = {1, 2, 3, 7, 13, 64, 100000};
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    feed_t f;
    int r = feed_in_steps(&f, &resp, steps[i]);
    CHECK_EQ_INT(r, 1); /* complete */
    CHECK_EQ_INT(f.h.status, 200);
    CHECK(f.h.keep_alive);
    CHECK_EQ_STR(f.ev.log.data, events_want);
    CHECK_EQ_STR(watch_http_header(&f.h.headers, "x-split-header"), "yes");
    CHECK_EQ_STR(watch_http_header(&f.h.headers, "Content-Type"), "application/json");
    CHECK(watch_http_header(&f.h.headers, "missing") == NULL);
    /* The taken object survives its event and kept its multi-byte text intact. */
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(f.ev.taken, "data");
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(d, "k");
    CHECK(cJSON_IsString(k) && !strcmp(k->valuestring, "\xc3\xa9 \n multi-byte \xc3\xa9"));
    feed_done(&f);
  }

  /* A callback can stop the stream: its code comes back. */
  feed_t f;
  watch_http_init(&f.h);
  f.h.on_body = on_body;
  f.h.data = &f;
  memset(&f.ev, 0, sizeof f.ev);
  f.ev.stop_after = 2;
  watch_ndjson_init(&f.nd, 4096, on_event, &f.ev);
  size_t used;
  CHECK_EQ_INT(watch_http_feed(&f.h, resp.data, resp.len, &used), -99);
  CHECK_EQ_STR(f.ev.log.data, "ADDED a;MODIFIED b;");
  feed_done(&f);
  buf_free(&resp);
}

static void test_ndjson_errors(void) {
  events_t ev = {BUF_INIT, 0, NULL};
  watch_ndjson_t nd;
  watch_ndjson_init(&nd, 64, on_event, &ev);
  /* An overlong line is refused whether it arrives whole or in pieces. */
  char big[200];
  memset(big, 'x', sizeof big);
  for (size_t i = 0; i < sizeof big; i += 10) {
    int r = watch_ndjson_feed(&nd, big + i, 10);
    if (r) { CHECK_EQ_INT(r, UV_E2BIG); break; }
    CHECK(i < 64);
  }
  CHECK(strstr(nd.err, "longer than the limit of 64 bytes") != NULL);
  watch_ndjson_free(&nd);

  watch_ndjson_init(&nd, 64, on_event, &ev);
  CHECK_EQ_INT(watch_ndjson_feed(&nd, "{\"type\":\"ADDED\",\"object\":{}}\n{nope}\n", 37), UV_EPROTO);
  CHECK(strstr(nd.err, "event 2 is not valid JSON") != NULL);
  watch_ndjson_free(&nd);

  watch_ndjson_init(&nd, 64, on_event, &ev);
  CHECK_EQ_INT(watch_ndjson_feed(&nd, "{\"type\":1,\"object\":{}}\n", 23), UV_EPROTO);
  CHECK(strstr(nd.err, "lacks") != NULL);
  watch_ndjson_free(&nd);
  buf_free(&ev.log);
}

/* watch_ndjson_drop_managed_fields: an event's object prints as cJSON's own parse of the same
 * event with object.metadata.managedFields (that path only) deleted; anything the quick scan does
 * not follow is parsed whole. */
static int on_print(watch_ndjson_t *nd, const char *type, cJSON *obj, void *data) {
  (void)nd; (void)type;
  char *t = cJSON_PrintUnformatted(obj);
  buf_puts(data, t ? t : "(null)");
  buf_putc(data, ';');
  free(t);
  return 0;
}

/* The object of event text ev as printed, with object.metadata.managedFields deleted when cut. */
static char *oracle_print(const char *ev, int cut) {
  cJSON *e = cJSON_Parse(ev), *o = cJSON_GetObjectItemCaseSensitive(e, "object");
  if (cut) cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "metadata"), "managedFields");
  char *t = cJSON_PrintUnformatted(o);
  cJSON_Delete(e);
  return t;
}

static void managed_case(const char *ev, int drop, int want_cut, size_t step) {
  buf_t got = BUF_INIT, line = BUF_INIT;
  buf_puts(&line, ev);
  buf_putc(&line, '\n');
  watch_ndjson_t nd;
  watch_ndjson_init(&nd, 0, on_print, &got);
  watch_ndjson_drop_managed_fields(&nd, drop);
  int r = 0;
  for (size_t i = 0; !r && i < line.len; i += step)
    r = watch_ndjson_feed(&nd, line.data + i, i + step <= line.len ? step : line.len - i);
  CHECK_EQ_INT(r, 0);
  char *want = oracle_print(ev, want_cut);
  buf_t w = BUF_INIT;
  buf_puts(&w, want);
  buf_putc(&w, ';');
  if (strcmp(got.data ? got.data : "", w.data)) fprintf(stderr, "event: %s\n", ev);
  CHECK_EQ_STR(got.data ? got.data : "", w.data);
  free(want);
  buf_free(&w);
  buf_free(&got);
  buf_free(&line);
  watch_ndjson_free(&nd);
}

/* One event fed to a decoder with the cut on: delivered, its object printing as want. */
static void dropped_case(const char *ev, const char *want) {
  buf_t got = BUF_INIT;
  watch_ndjson_t nd;
  watch_ndjson_init(&nd, 0, on_print, &got);
  watch_ndjson_drop_managed_fields(&nd, 1);
  CHECK_EQ_INT(watch_ndjson_feed(&nd, ev, strlen(ev)), 0);
  CHECK_EQ_STR(got.data ? got.data : "", want);
  watch_ndjson_free(&nd);
  buf_free(&got);
}

static void test_ndjson_managed_fields(void) {
  static const char mf[] = "[{\"manager\":\"rudder\",\"operation\":\"Apply\",\"fieldsV1\":{\"f:spec\":{\"f:replicas\":{}}}},"
                           "{\"manager\":\"kcm\",\"operation\":\"Update\",\"subresource\":\"status\",\"fieldsV1\":"
                           "{\"f:status\":{\"f:conditions\":{\".\":{},\"k:{\\\"type\\\":\\\"Available\\\"}\":{}}}}}]";
  char ev[4096];
  /* As the API server writes it: managedFields last in metadata. */
  snprintf(ev, sizeof ev,
           "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Deployment\",\"apiVersion\":\"apps/v1\",\"metadata\":"
           "{\"name\":\"a\",\"namespace\":\"n\",\"labels\":{\"x\":\"y\"},\"managedFields\":%s},\"spec\":{\"replicas\":0},"
           "\"status\":{\"observedGeneration\":2}}}", mf);
  managed_case(ev, 1, 1, 4096);
  managed_case(ev, 1, 1, 1); /* carried over between feeds, a byte at a time */
  managed_case(ev, 1, 1, 7);
  managed_case(ev, 0, 0, 4096); /* off: kept */
  /* First, only, in the middle; with white space everywhere JSON allows it. */
  snprintf(ev, sizeof ev, "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"managedFields\":%s,\"name\":\"a\"}}}", mf);
  managed_case(ev, 1, 1, 4096);
  managed_case("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"managedFields\":[]}}}", 1, 1, 4096);
  snprintf(ev, sizeof ev, "{\"object\":{\"metadata\":{\"name\":\"a\",\"managedFields\":%s,\"uid\":\"u\"}},\"type\":\"ADDED\"}", mf);
  managed_case(ev, 1, 1, 4096);
  managed_case(" { \"type\" : \"ADDED\" ,\t\"object\" : { \"metadata\" : { \"name\" : \"a\" , \"managedFields\" :\r"
               " [ { \"m\" : \"]}\\\"{,\" } ] } , \"data\" : { } } } ", 1, 1, 4096);
  managed_case("{\"type\":\"ADDED\",\"object\":{\"metadata\":{ \"managedFields\" : [ 1 ] , \"name\":\"a\"}}}", 1, 1, 4096);
  /* Not that path: kept. */
  managed_case("{\"type\":\"ADDED\",\"object\":{\"managedFields\":[1],\"metadata\":{\"name\":\"a\",\"labels\":"
               "{\"managedFields\":\"x\"}},\"spec\":{\"metadata\":{\"managedFields\":[2]}}}}", 1, 0, 4096);
  managed_case("{\"type\":\"ADDED\",\"object\":{\"spec\":{\"metadata\":{\"managedFields\":[2]}},"
               "\"data\":{\"k\":\"\\\"metadata\\\":{\\\"managedFields\\\":[]}\"}}}", 1, 0, 4096);
  managed_case("{\"type\":\"ADDED\",\"object\":{\"metadata\":[{\"managedFields\":[2]}]}}", 1, 0, 4096);
  managed_case("{\"type\":\"ADDED\",\"object\":{\"metadata\":\"managedFields\",\"managedFields\":[2]}}", 1, 0, 4096);
  /* The same path, but the key written with an escape: not followed, so kept (parsed whole). */
  dropped_case("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"man\\u0061gedFields\":[3]}}}\n",
               "{\"metadata\":{\"name\":\"a\",\"managedFields\":[3]}};");
  /* Not an array: not followed, so kept. */
  managed_case("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"managedFields\":{\"m\":[1]}}}}", 1, 0, 4096);
  /* Broken only inside the cut array: skipped unread, the event delivered without it (documented). */
  dropped_case("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"managedFields\":[,1,]}}}\n",
               "{\"metadata\":{\"name\":\"a\"}};");
  /* Broken text elsewhere is judged by the parse as before: cut or not, the stream says it is not JSON. */
  static const char *broken[] = {
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"managedFields\":[{\"m\":1}\n",
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"managedFields\":[{\"m\":1}],\"name\":}}}\n",
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"managedFields\":[{\"m\":1}] \"name\":\"a\"}}}\n",
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"managedFields\":[\"]}}}\n",
  };
  for (size_t i = 0; i < sizeof broken / sizeof *broken; i++) {
    buf_t got = BUF_INIT;
    watch_ndjson_t nd;
    watch_ndjson_init(&nd, 0, on_print, &got);
    watch_ndjson_drop_managed_fields(&nd, 1);
    CHECK_EQ_INT(watch_ndjson_feed(&nd, broken[i], strlen(broken[i])), UV_EPROTO);
    CHECK(strstr(nd.err, "is not valid JSON") != NULL);
    CHECK(got.data == NULL);
    watch_ndjson_free(&nd);
    buf_free(&got);
  }
}

static void test_http_cases(void) {
  /* Content-Length body, split header names, and "Connection: close". */
  const char *resp = "HTTP/1.1 404 Not Found\r\nConTent-LengTH: 5\r\nConnection: close\r\n\r\nhelloEXTRA";
  watch_http_t h;
  watch_http_init(&h);
  buf_t body = BUF_INIT;
  size_t used = 0, off = 0;
  int r = 0;
  while (off < strlen(resp) && r == 0) {
    r = watch_http_feed(&h, resp + off, 1, &used);
    off += used;
  }
  CHECK_EQ_INT(r, 1);
  CHECK_EQ_INT(h.status, 404);
  CHECK_EQ_STR(h.reason.data, "Not Found");
  CHECK_EQ_INT(h.keep_alive, 0);
  CHECK_EQ_INT(h.body_bytes, 5);
  CHECK_EQ_INT(off, strlen(resp) - 5); /* stopped right after the message */
  CHECK_EQ_STR(watch_http_header(&h.headers, "content-length"), "5");

  /* Reset and parse a read-until-EOF response, then an interim 100 Continue. */
  watch_http_reset(&h);
  const char *eof = "HTTP/1.0 200 OK\r\n\r\nuntil eof";
  CHECK_EQ_INT(watch_http_feed(&h, eof, strlen(eof), &used), 0);
  CHECK_EQ_INT(watch_http_eof(&h), 1);
  CHECK_EQ_INT(h.body_bytes, 9);
  watch_http_reset(&h);
  const char *cont = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\nX-A: 1\r\n\r\n";
  CHECK_EQ_INT(watch_http_feed(&h, cont, strlen(cont), &used), 1);
  CHECK_EQ_INT(h.status, 204);
  CHECK_EQ_STR(watch_http_header(&h.headers, "x-a"), "1");

  /* Truncated bodies fail at EOF; garbage is a protocol error. */
  watch_http_reset(&h);
  const char *trunc = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc";
  CHECK_EQ_INT(watch_http_feed(&h, trunc, strlen(trunc), &used), 0);
  CHECK_EQ_INT(watch_http_eof(&h), UV_EOF);
  watch_http_reset(&h);
  CHECK_EQ_INT(watch_http_feed(&h, "SSH-2.0-OpenSSH\r\n", 17, &used), UV_EPROTO);
  CHECK(strlen(watch_http_error(&h)) > 0);

  /* The header block is bounded. */
  watch_http_reset(&h);
  h.max_headers = 64;
  buf_t big = BUF_INIT;
  buf_puts(&big, "HTTP/1.1 200 OK\r\nX-Big: ");
  for (int i = 0; i < 100; i++) buf_puts(&big, "abcdef");
  buf_puts(&big, "\r\n\r\n");
  CHECK_EQ_INT(watch_http_feed(&h, big.data, big.len, &used), UV_E2BIG);
  buf_free(&big);
  buf_free(&body);
  watch_http_free(&h);
}

static void test_map_and_b64(void) {
  watch_map_t m = WATCH_MAP_INIT;
  char k[32];
  int fails = 0;
  for (long i = 0; i < 5000; i++) {
    snprintf(k, sizeof k, "ns/obj-%ld", i);
    fails += watch_map_put(&m, k, (void *)(i + 1), NULL) != 0;
  }
  CHECK_EQ_INT(fails, 0);
  CHECK_EQ_INT(m.len, 5000);
  int bad = 0;
  for (long i = 0; i < 5000; i += 2) {
    snprintf(k, sizeof k, "ns/obj-%ld", i);
    bad += watch_map_del(&m, k) != (void *)(i + 1);
  }
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(m.len, 2500);
  CHECK(watch_map_get(&m, "ns/obj-1") == (void *)2);
  CHECK(watch_map_get(&m, "ns/obj-2") == NULL);
  void *old;
  CHECK_EQ_INT(watch_map_put(&m, "ns/obj-1", (void *)7, &old), 0);
  CHECK(old == (void *)2);
  size_t it = 0, n = 0;
  const char *key;
  void *v;
  while (watch_map_next(&m, &it, &key, &v)) n++;
  CHECK_EQ_INT(n, 2500);
  watch_map_free(&m);

  char *out;
  size_t len;
  CHECK_EQ_INT(watch__b64_decode("aGk=", 4, &out, &len), 0);
  CHECK_EQ_STR(out, "hi");
  free(out);
  CHECK_EQ_INT(watch__b64_decode("aGk", 3, &out, &len), 0); /* unpadded */
  CHECK_EQ_INT(len, 2);
  free(out);
  CHECK_EQ_INT(watch__b64_decode("a", 1, &out, &len), UV_EINVAL);
  CHECK_EQ_INT(watch__b64_decode("aG=k", 4, &out, &len), UV_EINVAL);
  CHECK_EQ_INT(watch__b64_decode("a*bc", 4, &out, &len), UV_EINVAL);
}

int main(void) {
  test_paths();
  test_watch_stream();
  test_ndjson_errors();
  test_ndjson_managed_fields();
  test_http_cases();
  test_map_and_b64();
  return t_done();
}
