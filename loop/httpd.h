/* A small HTTP/1.1 server on the loop, for the metrics and health endpoints: GET and HEAD of a
 * fixed table of paths, keep-alive and pipelining, requests parsed by llhttp.
 *
 * Limits (httpd_limits_t) bound what a client can make it hold: the request's size and header
 * count (431 or 413, then closed), open connections (one more is answered 503 and closed), the
 * time a request may take to arrive from its first byte (a slow client gets 408 and is closed)
 * and the time an idle keep-alive connection is kept, and the responses queued to a client that
 * does not read them. An unknown path is 404, another method 405 (with Allow).
 *
 * Memory: one block per connection (about 600 bytes) plus its request's URL while it arrives and
 * its responses until the kernel takes them. Handlers run on the loop and answer at once. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>
#include "base/buf.h"

typedef struct httpd_s httpd_t;

typedef struct httpd_limits_s {
  size_t max_request;   /* bytes of request line, headers and body (default 8 KiB) */
  unsigned max_headers; /* header fields (default 32) */
  unsigned max_conns;   /* connections open at once (default 32) */
  uint64_t request_ms;  /* a request must arrive whole within this from its first byte (default 10 s) */
  uint64_t idle_ms;     /* a connection with no request under way is closed after this (default 60 s) */
  size_t max_unsent;    /* response bytes queued to a client that does not read; more closes it (default 16 MiB) */
} httpd_limits_t;

/* What a handler answers: status (default 200), content type (default text/plain), body. */
typedef struct httpd_response_s {
  int status;
  const char *content_type;
  buf_t body;
} httpd_response_t;

typedef void (*httpd_handler_cb)(void *data, httpd_response_t *res);

/* One path served; a table of them ends with a NULL path. */
typedef struct httpd_route_s {
  const char *path;
  httpd_handler_cb handler;
  void *data;
} httpd_route_t;

/* Counters, for tests. */
typedef struct httpd_stats_s {
  uint64_t connections; /* accepted and served */
  uint64_t refused;     /* answered 503 for being one too many */
  uint64_t requests;    /* answered, errors included */
  uint64_t timeouts;    /* closed for taking too long (408) or idling */
  unsigned open;        /* connections open now */
} httpd_stats_t;

/* Parses a listen address: ":8080" (every IPv4 interface), "127.0.0.1:8080", "[::1]:8080",
 * "localhost:8080" (127.0.0.1); port 0 picks a free one. 1 for "0" (disabled), 0 with *out set,
 * or -22 with err saying what is wrong. */
int httpd_parse_addr(const char *addr, struct sockaddr_storage *out, char *err, size_t errlen);
/* Listens on sa and serves routes (kept by pointer: they must outlive the server); lim NULL or 0
 * fields: the defaults. 0 and *out, or a negative UV_E* code (e.g. UV_EADDRINUSE). */
int httpd_start(uv_loop_t *loop, const struct sockaddr *sa, const httpd_route_t *routes, const httpd_limits_t *lim,
                httpd_t **out);
/* The address it listens on ("127.0.0.1:41234", "[::1]:8080"); 0 or a negative code. */
int httpd_address(const httpd_t *h, char *out, size_t len);
/* The server's counters. */
httpd_stats_t httpd_get_stats(const httpd_t *h);
/* Stops listening and closes every connection; cb (may be NULL) runs once all is freed. */
void httpd_close(httpd_t *h, void (*cb)(void *data), void *data);
