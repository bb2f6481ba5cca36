/* An in-process HTTP/1.1 test server on a uv_tcp_t (loopback only) for the watch module's tests.
 * Each complete request goes to a handler that answers with tsrv_write/tsrv_later/tsrv_close. */
#pragma once
#include "base/buf.h"
#include <llhttp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

typedef struct tsrv_s tsrv_t;
typedef struct tconn_s tconn_t;

typedef void (*tsrv_handler)(tconn_t *c, const char *method, const char *url, const char *headers, const char *body,
                             size_t body_len);

typedef struct tstep_s {
  struct tstep_s *next;
  uint64_t delay_ms;
  int close;      /* close the connection instead of writing */
  size_t len;
  char data[];
} tstep_t;

struct tconn_s {
  uv_tcp_t tcp;
  uv_timer_t timer;
  tsrv_t *s;
  llhttp_t p;
  llhttp_settings_t set;
  buf_t method, url, hdrs, body;
  tstep_t *steps, *last; /* scripted writes, run in order by the timer */
  int refs, closing;
  tconn_t *next;
  void *user;
};

struct tsrv_s {
  uv_loop_t *loop;
  uv_tcp_t listen;
  int port;
  int accepted, requests, peer_closed, open_now, max_open;
  tsrv_handler h;
  tconn_t *conns;
  int stopping;
  buf_t last_headers;
};

static inline void tconn_free_cb(uv_handle_t *h) {
  tconn_t *c = h->data;
  if (--c->refs) return;
  while (c->steps) { tstep_t *n = c->steps->next; free(c->steps); c->steps = n; }
  buf_free(&c->method); buf_free(&c->url); buf_free(&c->hdrs); buf_free(&c->body);
  free(c);
}

static inline void tsrv_close(tconn_t *c) {
  if (c->closing) return;
  c->closing = 1;
  c->s->open_now--;
  tsrv_t *s = c->s;
  for (tconn_t **pp = &s->conns; *pp; pp = &(*pp)->next)
    if (*pp == c) { *pp = c->next; break; }
  uv_close((uv_handle_t *)&c->tcp, tconn_free_cb);
  uv_close((uv_handle_t *)&c->timer, tconn_free_cb);
}

static inline void tsrv_write_cb(uv_write_t *w, int status) { free(w); }

static inline void tsrv_write(tconn_t *c, const char *p, size_t n) {
  if (c->closing || !n) return;
  uv_write_t *w = malloc(sizeof *w + n);
  memcpy(w + 1, p, n);
  uv_buf_t b = uv_buf_init((char *)(w + 1), (unsigned)n);
  if (uv_write(w, (uv_stream_t *)&c->tcp, &b, 1, tsrv_write_cb)) free(w);
}

static inline void tsrv_puts(tconn_t *c, const char *s) { tsrv_write(c, s, strlen(s)); }

static inline void tsrv_run_steps(uv_timer_t *t);

static inline void tsrv_schedule(tconn_t *c) {
  if (c->steps && !c->closing && !uv_is_active((uv_handle_t *)&c->timer))
    uv_timer_start(&c->timer, tsrv_run_steps, c->steps->delay_ms, 0);
}

static inline void tsrv_run_steps(uv_timer_t *t) {
  tconn_t *c = t->data;
  tstep_t *st = c->steps;
  if (!st) return;
  c->steps = st->next;
  if (!c->steps) c->last = NULL;
  if (st->close) tsrv_close(c);
  else tsrv_write(c, st->data, st->len);
  free(st);
  tsrv_schedule(c);
}

/* Queues a write (or, with p == NULL, a close) delay_ms after the previous queued step. */
static inline void tsrv_later(tconn_t *c, uint64_t delay_ms, const char *p, size_t n) {
  tstep_t *st = calloc(1, sizeof *st + n);
  st->delay_ms = delay_ms;
  st->close = p == NULL;
  st->len = n;
  if (p) memcpy(st->data, p, n);
  if (c->last) c->last->next = st;
  else c->steps = st;
  c->last = st;
  tsrv_schedule(c);
}

static inline void tsrv_respond(tconn_t *c, int status, const char *reason, const char *ctype, const char *body) {
  buf_t b = BUF_INIT;
  buf_printf(&b, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n\r\n%s", status, reason, ctype,
             strlen(body), body);
  tsrv_write(c, b.data, b.len);
  buf_free(&b);
}

static inline tconn_t *tsrv__of(llhttp_t *p) { return (tconn_t *)((char *)p - offsetof(tconn_t, p)); }
static inline int tsrv__url(llhttp_t *p, const char *a, size_t n) { return buf_append(&tsrv__of(p)->url, a, n); }
static inline int tsrv__method(llhttp_t *p, const char *a, size_t n) { return buf_append(&tsrv__of(p)->method, a, n); }
static inline int tsrv__hf(llhttp_t *p, const char *a, size_t n) { return buf_append(&tsrv__of(p)->hdrs, a, n); }
static inline int tsrv__hfc(llhttp_t *p) { return buf_puts(&tsrv__of(p)->hdrs, ": "); }
static inline int tsrv__hvc(llhttp_t *p) { return buf_puts(&tsrv__of(p)->hdrs, "\n"); }
static inline int tsrv__body(llhttp_t *p, const char *a, size_t n) { return buf_append(&tsrv__of(p)->body, a, n); }
static inline int tsrv__done(llhttp_t *p) {
  tconn_t *c = tsrv__of(p);
  c->s->requests++;
  buf_reset(&c->s->last_headers);
  if (c->hdrs.data) buf_puts(&c->s->last_headers, c->hdrs.data);
  c->s->h(c, c->method.data ? c->method.data : "", c->url.data ? c->url.data : "", c->hdrs.data ? c->hdrs.data : "",
          c->body.data ? c->body.data : "", c->body.len);
  buf_reset(&c->method); buf_reset(&c->url); buf_reset(&c->hdrs); buf_reset(&c->body);
  return c->closing ? HPE_PAUSED : 0;
}

static inline void tsrv_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b) {
  static char buf[65536];
  *b = uv_buf_init(buf, sizeof buf);
}

static inline void tsrv_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b) {
  tconn_t *c = st->data;
  if (c->closing) return;
  if (n < 0) {
    c->s->peer_closed++;
    tsrv_close(c);
    return;
  }
  if (n > 0 && llhttp_execute(&c->p, b->base, (size_t)n) != HPE_OK && !c->closing) tsrv_close(c);
}

static inline void tsrv_accept(uv_stream_t *l, int status) {
  tsrv_t *s = l->data;
  if (status < 0) return;
  tconn_t *c = calloc(1, sizeof *c);
  c->s = s;
  uv_tcp_init(s->loop, &c->tcp);
  uv_timer_init(s->loop, &c->timer);
  c->tcp.data = c->timer.data = c;
  c->refs = 2;
  if (uv_accept(l, (uv_stream_t *)&c->tcp)) {
    c->closing = 1;
    uv_close((uv_handle_t *)&c->tcp, tconn_free_cb);
    uv_close((uv_handle_t *)&c->timer, tconn_free_cb);
    return;
  }
  llhttp_settings_init(&c->set);
  c->set.on_url = tsrv__url;
  c->set.on_method = tsrv__method;
  c->set.on_header_field = tsrv__hf;
  c->set.on_header_value = tsrv__hf;
  c->set.on_header_field_complete = tsrv__hfc;
  c->set.on_header_value_complete = tsrv__hvc;
  c->set.on_body = tsrv__body;
  c->set.on_message_complete = tsrv__done;
  llhttp_init(&c->p, HTTP_REQUEST, &c->set);
  c->next = s->conns;
  s->conns = c;
  s->accepted++;
  if (++s->open_now > s->max_open) s->max_open = s->open_now;
  uv_read_start((uv_stream_t *)&c->tcp, tsrv_alloc, tsrv_read);
}

/* Listens on 127.0.0.1 on a free port. */
static inline int tsrv_start(tsrv_t *s, uv_loop_t *loop, tsrv_handler h) {
  memset(s, 0, sizeof *s);
  signal(SIGPIPE, SIG_IGN); /* writes to clients that went away must not kill the test */
  s->loop = loop;
  s->h = h;
  uv_tcp_init(loop, &s->listen);
  s->listen.data = s;
  struct sockaddr_in a;
  uv_ip4_addr("127.0.0.1", 0, &a);
  int r = uv_tcp_bind(&s->listen, (struct sockaddr *)&a, 0);
  if (!r) r = uv_listen((uv_stream_t *)&s->listen, 64, tsrv_accept);
  struct sockaddr_storage ss;
  int len = sizeof ss;
  if (!r) r = uv_tcp_getsockname(&s->listen, (struct sockaddr *)&ss, &len);
  if (!r) s->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
  return r;
}

/* Closes the listener and every connection. */
static inline void tsrv_stop(tsrv_t *s) {
  if (s->stopping) return;
  s->stopping = 1;
  while (s->conns) tsrv_close(s->conns);
  uv_close((uv_handle_t *)&s->listen, NULL);
  buf_free(&s->last_headers);
}
