/* Schema documents over HTTP (schema_http.h): one GET on a private loop. */
#include "helm/source/schema_http.h"

#include <stdbool.h>
#include <string.h>
#include <uv.h>

#include "helm/values/schema.h"
#include "watch/fetch.h"

typedef struct {
  const char *url;
  buf_t *doc, *err;
  uint64_t timeout_ms;
  uv_loop_t *loop;
  int rc;
  bool done;
} schema_http__req_t;

/* What Go's net/http says after `Get "URL": ` for a failure before any answer. */
static void schema_http__cause(const schema_http__req_t *q, const fetch_response_t *res, buf_t *err) {
  if (res->err == UV_ETIMEDOUT) {
    buf_puts(err, "context deadline exceeded (Client.Timeout exceeded while awaiting headers)");
    return;
  }
  if (res->err == UV_ECONNREFUSED) {
    /* "dial tcp HOST:PORT: connect: connection refused", the port the URL's or the scheme's */
    const char *h = strstr(q->url, "://");
    h = h ? h + 3 : q->url;
    size_t hn = strcspn(h, "/?#");
    const char *at = memchr(h, '@', hn);
    if (at) hn -= (size_t)(at + 1 - h), h = at + 1;
    const char *close = h[0] == '[' ? memchr(h, ']', hn) : NULL;
    const char *colon = close ? (close + 1 < h + hn && close[1] == ':' ? close + 1 : NULL) : memchr(h, ':', hn);
    buf_puts(err, "dial tcp ");
    buf_append(err, h, hn);
    if (!colon) buf_puts(err, strncmp(q->url, "https:", 6) ? ":80" : ":443");
    buf_puts(err, ": connect: connection refused");
    return;
  }
  buf_puts(err, res->errmsg ? res->errmsg : uv_strerror(res->err));
}

static void schema_http__done(const fetch_response_t *res, void *data) {
  schema_http__req_t *q = data;
  q->done = true;
  uv_stop(q->loop); /* the pooled connection would keep the loop running until its idle timeout */
  q->rc = SCHEMA_EINVAL;
  if (res->err) {
    buf_printf(q->err, "HTTP request failed for %s: Get \"%s\": ", q->url, q->url);
    schema_http__cause(q, res, q->err);
  } else if (res->status != 200) {
    buf_printf(q->err, "HTTP request to %s returned status %d (%s)", q->url, res->status, fetch_status_text(res->status));
  } else {
    q->rc = buf_append(q->doc, res->body ? res->body : "", res->body_len) ? SCHEMA_ENOMEM : 0;
  }
}

static void schema_http__closed(void *data) { *(bool *)data = true; }

int schema_http_load(void *ctx, const char *url, buf_t *doc, buf_t *err) {
  const schema_http_t *h = ctx;
  uint64_t timeout = h && h->timeout_ms ? h->timeout_ms : 15000;
  size_t max_body = h && h->max_body ? h->max_body : SCHEMA_MAX_DOC_BYTES;
  uv_loop_t loop;
  if (uv_loop_init(&loop)) return SCHEMA_ENOMEM;
  fetch_limits_t lim = {.max_clients = 4, .max_body = max_body, .default_timeout_ms = timeout};
  fetch_t *f = NULL;
  schema_http__req_t q = {.url = url, .doc = doc, .err = err, .timeout_ms = timeout, .loop = &loop, .rc = SCHEMA_ENOMEM};
  if (!fetch_new(&loop, &lim, &f)) {
    fetch_opts_t o = {.url = url, .timeout_ms = timeout, .max_body = max_body, .gzip = true};
    if (fetch_request(f, &o, schema_http__done, &q)) uv_run(&loop, UV_RUN_DEFAULT);
    bool closed = false;
    fetch_close(f, schema_http__closed, &closed);
    while (!closed && uv_run(&loop, UV_RUN_ONCE)) {
    }
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  return q.done ? q.rc : SCHEMA_ENOMEM;
}
