#include "watch/http1.h"
#include "watch/internal.h"
#include <string.h>
#include <strings.h>
#include <uv.h>

static watch_http_t *http__of(llhttp_t *p) { return WATCH__CONTAINER_OF(p, watch_http_t, parser); }

static int http__status(llhttp_t *p, const char *at, size_t n) {
  watch_http_t *h = http__of(p);
  if (h->reason.len + n > 256) return 0; /* a reason phrase is for display only */
  return buf_append(&h->reason, at, n) ? HPE_USER : 0;
}

static int http__hdr_bytes(watch_http_t *h, const char *at, size_t n, int lower) {
  if (h->headers.len + n + 2 > h->max_headers) {
    h->cb_err = UV_E2BIG;
    return HPE_USER;
  }
  size_t at_len = h->headers.len;
  if (buf_append(&h->headers, at, n)) { h->cb_err = UV_ENOMEM; return HPE_USER; }
  if (lower)
    for (size_t i = at_len; i < h->headers.len; i++) {
      char c = h->headers.data[i];
      if (c >= 'A' && c <= 'Z') h->headers.data[i] = (char)(c + 32);
    }
  return 0;
}

static int http__field(llhttp_t *p, const char *at, size_t n) { return http__hdr_bytes(http__of(p), at, n, 1); }
static int http__value(llhttp_t *p, const char *at, size_t n) { return http__hdr_bytes(http__of(p), at, n, 0); }

static int http__nul(llhttp_t *p) {
  watch_http_t *h = http__of(p);
  /* The terminator goes in the buffer itself: pairs are stored back to back. */
  if (buf_reserve(&h->headers, 1)) { h->cb_err = UV_ENOMEM; return HPE_USER; }
  h->headers.len++;
  h->headers.data[h->headers.len] = 0;
  return 0;
}

static int http__headers_complete(llhttp_t *p) {
  watch_http_t *h = http__of(p);
  h->status = p->status_code;
  /* 1xx interim responses carry no body and are followed by the real one. */
  if (h->status >= 100 && h->status < 200) return 0;
  h->headers_done = 1;
  if (h->on_headers) {
    int r = h->on_headers(h);
    if (r) { h->cb_err = r; return -1; }
  }
  return h->no_body ? 1 : 0; /* 1 tells llhttp there is no body (HEAD) */
}

static int http__body(llhttp_t *p, const char *at, size_t n) {
  watch_http_t *h = http__of(p);
  h->body_bytes += n;
  if (h->on_body) {
    int r = h->on_body(h, at, n);
    if (r) { h->cb_err = r; return HPE_USER; }
  }
  return 0;
}

static int http__message_complete(llhttp_t *p) {
  watch_http_t *h = http__of(p);
  if (!h->headers_done) { /* end of an interim 1xx response: start over */
    buf_reset(&h->headers);
    buf_reset(&h->reason);
    return 0;
  }
  h->complete = 1;
  h->keep_alive = llhttp_should_keep_alive(p);
  return HPE_PAUSED; /* stop right after this response; no pipelining */
}

void watch_http_init(watch_http_t *h) {
  memset(h, 0, sizeof *h);
  llhttp_settings_init(&h->settings);
  h->settings.on_status = http__status;
  h->settings.on_header_field = http__field;
  h->settings.on_header_value = http__value;
  h->settings.on_header_field_complete = http__nul;
  h->settings.on_header_value_complete = http__nul;
  h->settings.on_headers_complete = http__headers_complete;
  h->settings.on_body = http__body;
  h->settings.on_message_complete = http__message_complete;
  h->max_headers = 1u << 20;
  llhttp_init(&h->parser, HTTP_RESPONSE, &h->settings);
}

void watch_http_reset(watch_http_t *h) {
  llhttp_init(&h->parser, HTTP_RESPONSE, &h->settings);
  buf_reset(&h->reason);
  buf_reset(&h->headers);
  h->status = 0;
  h->headers_done = h->complete = h->keep_alive = h->no_body = 0;
  h->body_bytes = 0;
  h->bytes_seen = 0;
  h->cb_err = 0;
}

void watch_http_free(watch_http_t *h) {
  buf_free(&h->reason);
  buf_free(&h->headers);
}

int watch_http_feed(watch_http_t *h, const char *p, size_t n, size_t *used) {
  *used = n;
  if (!n) return 0;
  llhttp_errno_t e = llhttp_execute(&h->parser, p, n);
  if (e == HPE_OK) { h->bytes_seen += n; return 0; }
  const char *pos = llhttp_get_error_pos(&h->parser);
  if (pos && pos >= p && pos <= p + n) *used = (size_t)(pos - p);
  h->bytes_seen += *used;
  if (e == HPE_PAUSED && h->complete) return 1;
  if (h->cb_err) return h->cb_err;
  return UV_EPROTO;
}

int watch_http_eof(watch_http_t *h) {
  if (h->complete) return 1;
  if (h->bytes_seen == 0) return UV_EOF;
  llhttp_errno_t e = llhttp_finish(&h->parser);
  if (h->complete) return 1;
  (void)e;
  return UV_EOF;
}

const char *watch_http_error(watch_http_t *h) {
  const char *r = llhttp_get_error_reason(&h->parser);
  return r ? r : llhttp_errno_name(llhttp_get_errno(&h->parser));
}

const char *watch_http_header(const buf_t *headers, const char *name) {
  const char *p = headers->data, *end = p + headers->len;
  while (p && p < end) {
    const char *v = p + strlen(p) + 1;
    if (v >= end) break;
    if (strcasecmp(p, name) == 0) return v;
    p = v + strlen(v) + 1;
  }
  return NULL;
}
