/* A TCP proxy inside the test process (loopback only) for fault injection between the client and a
 * real API server: it forwards bytes both ways (TLS passes through untouched), and can cut every
 * connection now, cut at random intervals, or refuse connections while "down". */
#pragma once
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

typedef struct tproxy_s tproxy_t;

typedef struct tpconn_s {
  tproxy_t *p;
  uv_tcp_t a, b;        /* a: the client side, b: the server side */
  uv_connect_t connect;
  int refs, closing, connected;
  struct tpconn_s *next;
} tpconn_t;

struct tproxy_s {
  uv_loop_t *loop;
  uv_tcp_t listen;
  uv_timer_t chaos;
  int port, target_port;
  int down;             /* refuse (accept and close) new connections */
  int accepted, cuts;
  uint64_t chaos_min_ms, chaos_max_ms;
  tpconn_t *conns;
  unsigned seed;
};

static inline void tp__freed(uv_handle_t *h) {
  tpconn_t *c = h->data;
  if (--c->refs == 0) free(c);
}

static inline void tp_close(tpconn_t *c) {
  if (c->closing) return;
  c->closing = 1;
  for (tpconn_t **pp = &c->p->conns; *pp; pp = &(*pp)->next)
    if (*pp == c) { *pp = c->next; break; }
  uv_close((uv_handle_t *)&c->a, tp__freed);
  uv_close((uv_handle_t *)&c->b, tp__freed);
}

typedef struct tpw_s {
  uv_write_t w;
  char data[];
} tpw_t;

static inline void tp__wrote(uv_write_t *w, int status) { free(w); }

static inline void tp__alloc(uv_handle_t *h, size_t hint, uv_buf_t *b) {
  b->base = malloc(65536);
  b->len = b->base ? 65536 : 0;
}

static inline void tp__read(uv_stream_t *s, ssize_t n, const uv_buf_t *b) {
  tpconn_t *c = s->data;
  if (n < 0 || c->closing) {
    free(b->base);
    if (n < 0) tp_close(c);
    return;
  }
  if (n > 0) {
    uv_stream_t *to = s == (uv_stream_t *)&c->a ? (uv_stream_t *)&c->b : (uv_stream_t *)&c->a;
    tpw_t *w = malloc(sizeof *w + (size_t)n);
    memcpy(w->data, b->base, (size_t)n);
    uv_buf_t wb = uv_buf_init(w->data, (unsigned)n);
    if (uv_write(&w->w, to, &wb, 1, tp__wrote)) { free(w); tp_close(c); }
  }
  free(b->base);
}

static inline void tp__connected(uv_connect_t *r, int status) {
  tpconn_t *c = r->data;
  if (c->closing) return;
  if (status < 0) { tp_close(c); return; }
  c->connected = 1;
  uv_read_start((uv_stream_t *)&c->a, tp__alloc, tp__read);
  uv_read_start((uv_stream_t *)&c->b, tp__alloc, tp__read);
}

static inline void tp__accept(uv_stream_t *l, int status) {
  tproxy_t *p = l->data;
  if (status < 0) return;
  tpconn_t *c = calloc(1, sizeof *c);
  c->p = p;
  uv_tcp_init(p->loop, &c->a);
  uv_tcp_init(p->loop, &c->b);
  c->a.data = c->b.data = c->connect.data = c;
  c->refs = 2;
  c->next = p->conns;
  p->conns = c;
  if (uv_accept(l, (uv_stream_t *)&c->a) || p->down) { tp_close(c); return; }
  p->accepted++;
  struct sockaddr_in a;
  uv_ip4_addr("127.0.0.1", p->target_port, &a);
  if (uv_tcp_connect(&c->connect, &c->b, (struct sockaddr *)&a, tp__connected)) tp_close(c);
}

/* Cuts every open connection (both sides see a reset or EOF). */
static inline void tproxy_cut(tproxy_t *p) {
  while (p->conns) {
    p->cuts++;
    tp_close(p->conns);
  }
}

static inline void tp__chaos(uv_timer_t *t) {
  tproxy_t *p = t->data;
  tproxy_cut(p);
  uint64_t span = p->chaos_max_ms - p->chaos_min_ms + 1;
  uv_timer_start(&p->chaos, tp__chaos, p->chaos_min_ms + (uint64_t)rand_r(&p->seed) % span, 0);
}

/* Cuts every connection at random intervals between min_ms and max_ms; 0, 0 stops. */
static inline void tproxy_chaos(tproxy_t *p, uint64_t min_ms, uint64_t max_ms) {
  p->chaos_min_ms = min_ms;
  p->chaos_max_ms = max_ms < min_ms ? min_ms : max_ms;
  if (!min_ms) { uv_timer_stop(&p->chaos); return; }
  uv_timer_start(&p->chaos, tp__chaos, min_ms, 0);
}

/* Listens on 127.0.0.1 (a free port) and forwards to 127.0.0.1:target_port. */
static inline int tproxy_start(tproxy_t *p, uv_loop_t *lp, int target_port) {
  memset(p, 0, sizeof *p);
  signal(SIGPIPE, SIG_IGN);
  p->loop = lp;
  p->target_port = target_port;
  p->seed = (unsigned)uv_hrtime();
  uv_tcp_init(lp, &p->listen);
  uv_timer_init(lp, &p->chaos);
  p->listen.data = p->chaos.data = p;
  struct sockaddr_in a;
  uv_ip4_addr("127.0.0.1", 0, &a);
  int r = uv_tcp_bind(&p->listen, (struct sockaddr *)&a, 0);
  if (!r) r = uv_listen((uv_stream_t *)&p->listen, 128, tp__accept);
  struct sockaddr_storage ss;
  int len = sizeof ss;
  if (!r) r = uv_tcp_getsockname(&p->listen, (struct sockaddr *)&ss, &len);
  if (!r) p->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
  return r;
}

static inline void tproxy_stop(tproxy_t *p) {
  tproxy_cut(p);
  uv_close((uv_handle_t *)&p->listen, NULL);
  uv_close((uv_handle_t *)&p->chaos, NULL);
}
