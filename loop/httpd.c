#include "loop/httpd.h"
#include "base/log.h"
#include <arpa/inet.h>
#include <llhttp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct httpd_conn_s httpd_conn_t;

struct httpd_s {
  uv_loop_t *loop;
  uv_tcp_t listener;
  const httpd_route_t *routes;
  httpd_limits_t lim;
  llhttp_settings_t settings;
  httpd_conn_t *conns; /* open connections (doubly linked) */
  httpd_stats_t stats;
  int objects;         /* the listener and every connection not yet freed */
  int closing;
  void (*close_cb)(void *);
  void *close_data;
};

struct httpd_conn_s {
  httpd_t *h;
  httpd_conn_t *prev, *next;
  uv_tcp_t tcp;
  uv_timer_t timer;
  uv_shutdown_t shut;
  llhttp_t parser;
  buf_t url;
  size_t bytes;     /* of the request under way, as llhttp hands them over */
  unsigned headers; /* header fields of the request under way */
  int err_status;   /* a limit a callback hit: the status to answer with */
  int in_request;   /* between the first byte of a request and its end */
  int began;        /* a request began in the bytes being parsed */
  int closing;      /* closed or shutting down: no more reads or answers */
  int handles;      /* tcp and timer, until both are closed */
};

typedef struct httpd__wr_s {
  uv_write_t w;
  char data[];
} httpd__wr_t;

static const char *httpd__reason(int status) {
  switch (status) {
  case 200: return "OK";
  case 400: return "Bad Request";
  case 404: return "Not Found";
  case 405: return "Method Not Allowed";
  case 408: return "Request Timeout";
  case 413: return "Content Too Large";
  case 431: return "Request Header Fields Too Large";
  case 500: return "Internal Server Error";
  case 503: return "Service Unavailable";
  default: return "Unknown";
  }
}

/* ---- lifetime ---- */

static void httpd__object_gone(httpd_t *h) {
  if (--h->objects || !h->closing) return;
  void (*cb)(void *) = h->close_cb;
  void *data = h->close_data;
  free(h);
  if (cb) cb(data);
}

static void httpd__conn_handle_closed(uv_handle_t *hd) {
  httpd_conn_t *c = hd->data;
  if (--c->handles) return;
  httpd_t *h = c->h;
  buf_free(&c->url);
  free(c);
  httpd__object_gone(h);
}

static void httpd__conn_close(httpd_conn_t *c) {
  if (c->handles == 2 && !uv_is_closing((uv_handle_t *)&c->tcp)) {
    httpd_t *h = c->h;
    if (c->prev) c->prev->next = c->next;
    else h->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    c->prev = c->next = NULL;
    h->stats.open--;
    c->closing = 1;
    uv_close((uv_handle_t *)&c->tcp, httpd__conn_handle_closed);
    uv_close((uv_handle_t *)&c->timer, httpd__conn_handle_closed);
  }
}

static void httpd__shut_done(uv_shutdown_t *s, int status) {
  (void)status;
  httpd__conn_close(s->data);
}

/* Closes once what was written has gone out (a response that says Connection: close). */
static void httpd__conn_finish(httpd_conn_t *c) {
  if (c->closing) return;
  c->closing = 1;
  uv_read_stop((uv_stream_t *)&c->tcp);
  uv_timer_stop(&c->timer);
  c->shut.data = c;
  if (uv_shutdown(&c->shut, (uv_stream_t *)&c->tcp, httpd__shut_done)) httpd__conn_close(c);
}

/* ---- answering ---- */

static void httpd__write_cb(uv_write_t *w, int status) {
  httpd_conn_t *c = w->handle->data;
  free(w);
  if (status < 0 && status != UV_ECANCELED) httpd__conn_close(c);
}

static void httpd__send(httpd_conn_t *c, int status, const char *ctype, const char *extra, const char *body,
                        size_t blen, int head_only, int close) {
  char head[512];
  int n = snprintf(head, sizeof head,
                   "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s%s\r\n", status,
                   httpd__reason(status), ctype ? ctype : "text/plain; charset=utf-8", blen, extra ? extra : "",
                   close ? "Connection: close\r\n" : "");
  if (n < 0 || (size_t)n >= sizeof head) {
    httpd__conn_close(c);
    return;
  }
  size_t total = (size_t)n + (head_only ? 0 : blen);
  httpd__wr_t *w = malloc(sizeof *w + total);
  if (!w) {
    httpd__conn_close(c);
    return;
  }
  memcpy(w->data, head, (size_t)n);
  if (!head_only && blen) memcpy(w->data + n, body, blen);
  uv_buf_t b = uv_buf_init(w->data, (unsigned)total);
  c->h->stats.requests++;
  if (uv_write(&w->w, (uv_stream_t *)&c->tcp, &b, 1, httpd__write_cb)) {
    free(w);
    httpd__conn_close(c);
    return;
  }
  /* A client that asks and never reads must not make the server hold its answers. */
  if (uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) > c->h->lim.max_unsent) {
    LOG_W("closing an HTTP connection whose client does not read its responses", "limit", "max_unsent");
    httpd__conn_close(c);
    return;
  }
  if (close) httpd__conn_finish(c);
}

static void httpd__error(httpd_conn_t *c, int status, const char *msg) {
  buf_t b = BUF_INIT;
  buf_printf(&b, "%s\n", msg);
  httpd__send(c, status, NULL, NULL, b.data ? b.data : "", b.len, 0, 1);
  buf_free(&b);
}

static void httpd__answer(httpd_conn_t *c) {
  httpd_t *h = c->h;
  int method = llhttp_get_method(&c->parser);
  int head = method == HTTP_HEAD;
  int keep = llhttp_should_keep_alive(&c->parser);
  const char *url = c->url.data ? c->url.data : "";
  size_t plen = strcspn(url, "?#");
  const httpd_route_t *r = h->routes;
  while (r->path && (strlen(r->path) != plen || strncmp(r->path, url, plen))) r++;
  if (!r->path) {
    static const char nf[] = "not found\n";
    httpd__send(c, 404, NULL, NULL, nf, sizeof nf - 1, head, !keep);
    return;
  }
  if (method != HTTP_GET && !head) {
    static const char na[] = "method not allowed: use GET or HEAD\n";
    httpd__send(c, 405, NULL, "Allow: GET, HEAD\r\n", na, sizeof na - 1, 0, !keep);
    return;
  }
  httpd_response_t res = {.status = 200, .body = BUF_INIT};
  r->handler(r->data, &res);
  httpd__send(c, res.status ? res.status : 200, res.content_type, NULL, res.body.data ? res.body.data : "",
              res.body.len, head, !keep);
  buf_free(&res.body);
}

/* ---- parsing ---- */

static httpd_conn_t *httpd__of(llhttp_t *p) { return p->data; }

/* Every piece llhttp hands over counts towards the request's size. */
static int httpd__count(httpd_conn_t *c, size_t n) {
  c->bytes += n;
  if (c->bytes <= c->h->lim.max_request) return 0;
  c->err_status = 431; /* on_body says 413 */
  return HPE_USER;
}

static int httpd__on_begin(llhttp_t *p) {
  httpd_conn_t *c = httpd__of(p);
  c->in_request = 1;
  c->bytes = 0;
  c->headers = 0;
  buf_reset(&c->url);
  c->began = 1; /* httpd__on_read starts its deadline, which later bytes do not move */
  return 0;
}

static int httpd__on_url(llhttp_t *p, const char *at, size_t n) {
  httpd_conn_t *c = httpd__of(p);
  if (httpd__count(c, n)) return HPE_USER;
  return buf_append(&c->url, at, n) ? HPE_USER : 0;
}

static int httpd__on_data(llhttp_t *p, const char *at, size_t n) { return httpd__count(httpd__of(p), n); }

static int httpd__on_body(llhttp_t *p, const char *at, size_t n) {
  httpd_conn_t *c = httpd__of(p);
  if (httpd__count(c, n)) {
    c->err_status = 413;
    return HPE_USER;
  }
  return 0;
}

static int httpd__on_field_done(llhttp_t *p) {
  httpd_conn_t *c = httpd__of(p);
  if (++c->headers <= c->h->lim.max_headers) return 0;
  c->err_status = 431;
  return HPE_USER;
}

static void httpd__on_idle(uv_timer_t *t);

static int httpd__on_complete(llhttp_t *p) {
  httpd_conn_t *c = httpd__of(p);
  c->in_request = 0;
  httpd__answer(c);
  if (c->closing) return HPE_PAUSED; /* the rest of what it sent is not read */
  uv_timer_start(&c->timer, httpd__on_idle, c->h->lim.idle_ms, 0);
  return 0;
}

static void httpd__on_timer(uv_timer_t *t) {
  httpd_conn_t *c = t->data;
  c->h->stats.timeouts++;
  if (c->in_request) httpd__error(c, 408, "request timeout: the request did not arrive in time");
  else httpd__conn_close(c);
}

static void httpd__on_idle(uv_timer_t *t) { httpd__on_timer(t); }

static void httpd__alloc(uv_handle_t *hd, size_t suggested, uv_buf_t *b) {
  static char buf[16384]; /* reads are parsed at once, so one buffer serves every connection */
  (void)hd;
  (void)suggested;
  *b = uv_buf_init(buf, sizeof buf);
}

static void httpd__on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *b) {
  httpd_conn_t *c = s->data;
  if (nread == 0 || c->closing) return;
  if (nread < 0) {
    httpd__conn_close(c);
    return;
  }
  c->began = 0;
  llhttp_errno_t e = llhttp_execute(&c->parser, b->base, (size_t)nread);
  if (c->closing) return;
  if (e == HPE_OK) {
    /* A request began in these bytes and is not complete: it has request_ms from now, in all. */
    if (c->in_request && c->began) uv_timer_start(&c->timer, httpd__on_timer, c->h->lim.request_ms, 0);
    return;
  }
  if (e == HPE_PAUSED) return;
  if (c->err_status == 413) httpd__error(c, 413, "request too large");
  else if (c->err_status == 431) httpd__error(c, 431, "request headers too large or too many");
  else {
    buf_t m = BUF_INIT;
    buf_printf(&m, "bad request: %s", llhttp_get_error_reason(&c->parser));
    httpd__error(c, 400, m.data ? m.data : "bad request");
    buf_free(&m);
  }
}

/* ---- accepting ---- */

static void httpd__on_conn(uv_stream_t *ls, int status) {
  httpd_t *h = ls->data;
  if (status < 0 || h->closing) return;
  httpd_conn_t *c = calloc(1, sizeof *c);
  if (!c) return; /* the connection waits in the backlog; it is taken when memory allows */
  c->h = h;
  uv_tcp_init(h->loop, &c->tcp);
  uv_timer_init(h->loop, &c->timer);
  c->tcp.data = c->timer.data = c;
  c->handles = 2;
  h->objects++;
  c->next = h->conns;
  if (h->conns) h->conns->prev = c;
  h->conns = c;
  h->stats.open++;
  if (uv_accept(ls, (uv_stream_t *)&c->tcp)) {
    httpd__conn_close(c);
    return;
  }
  if (h->stats.open > h->lim.max_conns) {
    h->stats.refused++;
    httpd__error(c, 503, "too many connections");
    return;
  }
  h->stats.connections++;
  llhttp_init(&c->parser, HTTP_REQUEST, &h->settings);
  c->parser.data = c;
  uv_tcp_nodelay(&c->tcp, 1);
  uv_timer_start(&c->timer, httpd__on_idle, h->lim.idle_ms, 0);
  if (uv_read_start((uv_stream_t *)&c->tcp, httpd__alloc, httpd__on_read)) httpd__conn_close(c);
}

int httpd_parse_addr(const char *addr, struct sockaddr_storage *out, char *err, size_t errlen) {
  if (!strcmp(addr, "0")) return 1;
  memset(out, 0, sizeof *out);
  const char *colon = strrchr(addr, ':');
  char host[64];
  const char *why = NULL;
  long port = -1;
  if (!colon) {
    why = "no port";
  } else {
    char *end;
    port = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || port < 0 || port > 65535) why = "the port is not a number from 0 to 65535";
  }
  size_t hl = colon ? (size_t)(colon - addr) : 0;
  if (!why && hl >= sizeof host) why = "the host is too long";
  if (!why) {
    memcpy(host, addr, hl);
    host[hl] = 0;
    struct sockaddr_in *a4 = (struct sockaddr_in *)out;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)out;
    if (!hl) {
      uv_ip4_addr("0.0.0.0", (int)port, a4);
    } else if (!strcmp(host, "localhost")) {
      uv_ip4_addr("127.0.0.1", (int)port, a4);
    } else if (host[0] == '[' && host[hl - 1] == ']') {
      host[hl - 1] = 0;
      if (uv_ip6_addr(host + 1, (int)port, a6)) why = "not an IPv6 address in brackets";
    } else if (uv_ip4_addr(host, (int)port, a4) || strchr(host, ':')) {
      why = "the host is not an IP address or localhost (an IPv6 address goes in brackets)";
    }
  }
  if (why) {
    snprintf(err, errlen, "\"%s\": %s; give HOST:PORT such as :8080 or 127.0.0.1:8080, or 0 to disable", addr, why);
    return -22;
  }
  return 0;
}

static void httpd__listener_closed(uv_handle_t *hd) { httpd__object_gone(hd->data); }

int httpd_start(uv_loop_t *loop, const struct sockaddr *sa, const httpd_route_t *routes, const httpd_limits_t *lim,
                httpd_t **out) {
  httpd_t *h = calloc(1, sizeof *h);
  if (!h) return UV_ENOMEM;
  h->loop = loop;
  h->routes = routes;
  if (lim) h->lim = *lim;
  if (!h->lim.max_request) h->lim.max_request = 8192;
  if (!h->lim.max_headers) h->lim.max_headers = 32;
  if (!h->lim.max_conns) h->lim.max_conns = 32;
  if (!h->lim.request_ms) h->lim.request_ms = 10000;
  if (!h->lim.idle_ms) h->lim.idle_ms = 60000;
  if (!h->lim.max_unsent) h->lim.max_unsent = 16u << 20;
  llhttp_settings_init(&h->settings);
  h->settings.on_message_begin = httpd__on_begin;
  h->settings.on_url = httpd__on_url;
  h->settings.on_method = httpd__on_data;
  h->settings.on_version = httpd__on_data;
  h->settings.on_header_field = httpd__on_data;
  h->settings.on_header_value = httpd__on_data;
  h->settings.on_header_field_complete = httpd__on_field_done;
  h->settings.on_body = httpd__on_body;
  h->settings.on_message_complete = httpd__on_complete;
  uv_tcp_init(loop, &h->listener);
  h->listener.data = h;
  h->objects = 1;
  int rc = uv_tcp_bind(&h->listener, sa, 0);
  if (!rc) rc = uv_listen((uv_stream_t *)&h->listener, 128, httpd__on_conn);
  if (rc) {
    h->closing = 1; /* h is freed once the loop has closed the handle */
    uv_close((uv_handle_t *)&h->listener, httpd__listener_closed);
    return rc;
  }
  *out = h;
  return 0;
}

int httpd_address(const httpd_t *h, char *out, size_t len) {
  struct sockaddr_storage ss;
  int n = sizeof ss;
  int rc = uv_tcp_getsockname(&h->listener, (struct sockaddr *)&ss, &n);
  if (rc) return rc;
  char ip[64];
  if (ss.ss_family == AF_INET6) {
    uv_ip6_name((struct sockaddr_in6 *)&ss, ip, sizeof ip);
    snprintf(out, len, "[%s]:%d", ip, ntohs(((struct sockaddr_in6 *)&ss)->sin6_port));
  } else {
    uv_ip4_name((struct sockaddr_in *)&ss, ip, sizeof ip);
    snprintf(out, len, "%s:%d", ip, ntohs(((struct sockaddr_in *)&ss)->sin_port));
  }
  return 0;
}

httpd_stats_t httpd_get_stats(const httpd_t *h) { return h->stats; }

void httpd_close(httpd_t *h, void (*cb)(void *data), void *data) {
  if (h->closing) return;
  h->closing = 1;
  h->close_cb = cb;
  h->close_data = data;
  while (h->conns) httpd__conn_close(h->conns);
  uv_close((uv_handle_t *)&h->listener, httpd__listener_closed);
}
