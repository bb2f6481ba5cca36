/* One HTTP/1.1 response at a time, parsed with llhttp from bytes in any split. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <llhttp.h>
#include "base/buf.h"

typedef struct watch_http_s watch_http_t;

struct watch_http_s {
  llhttp_t parser;
  llhttp_settings_t settings;
  int status;
  buf_t reason;        /* status line reason phrase */
  buf_t headers;       /* "name\0value\0" pairs, names lower-cased */
  size_t max_headers;  /* bound on the header block */
  int headers_done;
  int complete;
  int keep_alive;      /* valid once complete */
  int no_body;         /* set before feeding for HEAD requests */
  uint64_t body_bytes;
  size_t bytes_seen;   /* every byte fed for this response */
  /* Called once headers are in; nonzero aborts with that code. */
  int (*on_headers)(watch_http_t *h);
  /* Called with each piece of the (de-chunked) body; nonzero aborts with that code. */
  int (*on_body)(watch_http_t *h, const char *p, size_t n);
  void *data;
  int cb_err;          /* the code a callback aborted with */
};

/* Prepares a parser; callbacks and data may be set afterwards. */
void watch_http_init(watch_http_t *h);
/* Forgets the current response so that the next one can be parsed. */
void watch_http_reset(watch_http_t *h);
/* Frees the parser's memory. */
void watch_http_free(watch_http_t *h);
/* Feeds bytes: 0 needs more, 1 the response is complete (*used says how much was consumed),
 * else a negative UV_E* code (UV_EPROTO for malformed input; a callback's own code). */
int watch_http_feed(watch_http_t *h, const char *p, size_t n, size_t *used);
/* The transport closed: 1 when that completes the response (read-to-EOF bodies), else UV_EOF. */
int watch_http_eof(watch_http_t *h);
/* llhttp's explanation of the last parse error. */
const char *watch_http_error(watch_http_t *h);
/* Case-insensitive header lookup in the current response; NULL when absent. */
const char *watch_http_header(const buf_t *headers, const char *name);
