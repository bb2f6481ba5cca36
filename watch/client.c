#include "watch/client.h"
#include "watch/http1.h"
#include "watch/internal.h"
#include "watch/ndjson.h"
#include "watch/tls.h"
#include "base/log.h"
#include "base/metrics.h"
#include <arpa/inet.h>
#include <mbedtls/error.h>
#include <assert.h>
#include <netinet/in.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define KUBE__MAX_EXEC_OUTPUT (1u << 20) /* an exec credential plugin's stdout */
#define KUBE__MIN_CRED_MS 1000           /* an exec credential is used for at least this long */
#define KUBE__MAX_ERROR_BODY (1u << 20) /* a failed watch's Status body */

typedef struct kube__link_s {
  struct kube__link_s *prev, *next;
} kube__link_t;

static void link__init(kube__link_t *l) { l->prev = l->next = l; }
static int link__empty(const kube__link_t *l) { return l->next == l; }
static int link__linked(const kube__link_t *l) { return l->next && l->next != l; }
static void link__remove(kube__link_t *l) {
  l->prev->next = l->next;
  l->next->prev = l->prev;
  link__init(l);
}
static void link__push_back(kube__link_t *head, kube__link_t *l) {
  l->prev = head->prev;
  l->next = head;
  head->prev->next = l;
  head->prev = l;
}
static void link__push_front(kube__link_t *head, kube__link_t *l) {
  l->next = head->next;
  l->prev = head;
  head->next->prev = l;
  head->next = l;
}

typedef struct kube_conn_s kube_conn_t;

enum { CONN_RESOLVING, CONN_CONNECTING, CONN_TUNNEL, CONN_HANDSHAKE, CONN_READY, CONN_CLOSING };

struct kube_conn_s {
  kube_client_t *c;
  kube__link_t all;   /* in c->conns */
  kube__link_t idle;  /* in c->idle while idle */
  uv_tcp_t tcp;
  uv_connect_t connect;
  uv_getaddrinfo_t gai;
  int refs;           /* the tcp handle, plus a getaddrinfo in flight */
  int tcp_closing;    /* the handle is being closed to try the next address */
  struct sockaddr_storage addrs[8]; /* resolved addresses, tried in order */
  int n_addrs, next_addr;
  int state;
  int pooled;         /* counted in c->n_conns (watch connections are not) */
  int is_tls;
  unsigned cred_gen;  /* the client's credential generation when its TLS session started */
  watch_tls_t tls;
  watch_http_t http;
  kube_req_t *req;    /* the request being served */
  unsigned served;    /* responses completed on this connection */
  uint64_t idle_since;
};

struct kube_req_s {
  kube_client_t *c;
  uint64_t deadline;  /* uv_now() by which the request must have finished, retries included */
  buf_t payload;      /* the request body (req->out holds the head, without Authorization) */
  unsigned cred_gen;  /* the credentials' generation it was sent with */
  int retries;
  int retry_wait;     /* the timer is the wait before a retry */
  int auth_retried;
  int retry_mode;
  kube__link_t queue; /* in c->pending while waiting for a connection */
  kube__link_t all;   /* in c->reqs until finished */
  kube_conn_t *conn;
  uv_timer_t timer;
  buf_t out;          /* the serialized request, kept for one replay on a stale connection */
  buf_t body;         /* response body */
  buf_t headers;      /* response headers, taken from the connection */
  char *what;         /* "GET /path" for messages */
  kube_response_cb cb;
  void *data;
  kube_watch_t *watch;
  uint64_t timeout_ms;
  int done;
  int idempotent;
  int retried;
  int no_body;        /* HEAD */
  int (*on_body)(const char *p, size_t n, void *data); /* streams a 2xx body (kube_req_opts_t) */
  int (*on_head)(const kube_response_t *res, void *data); /* sees its headers first */
  int sinking;        /* this response's body goes to on_body */
  int sink_err;       /* on_body abandoned the response */
  int deferred_err;   /* an error to deliver from the timer, never from inside kube_request */
  char *deferred_msg;
};

struct kube_watch_s {
  kube_req_t *req;
  watch_ndjson_t nd;
  kube_watch_event_cb ev;
  kube_watch_end_cb end;
  kube_watch_bad_cb bad;
  void *data;
  int streaming;
};

struct kube_client_s {
  uv_loop_t *loop;
  kube_config_t cfg;
  int tls;
  watch_tls_conf_t tlsconf;
  char *hostport;     /* for the Host header and messages */
  char *dialport;     /* what connections go to, for messages: hostport, or "proxy host:port" */
  const char *dial_host; /* cfg.host, or cfg.proxy_host */
  int dial_port;
  int tunnel;         /* https through a proxy: CONNECT hostport first */
  int proxied_http;   /* http through a proxy: absolute-form request targets */
  struct sockaddr_storage addr;
  int have_addr;      /* dial_host is an IP literal */
  kube_client_limits_t lim;
  kube__link_t conns, idle, pending, reqs;
  size_t n_conns, n_idle;
  size_t objects;     /* conns, requests and the two timers not yet freed */
  uv_timer_t kick, sweep;
  int closing;
  void (*close_cb)(void *);
  void *close_data;
  char *token;
  uint64_t token_read_ms;
  int token_force;    /* re-read the token file before the next send */
  kube__link_t pending_watch; /* watches waiting for credentials or a token */
  double tokens;      /* client-side token bucket */
  uint64_t tb_ns;
  unsigned cred_gen;  /* bumped whenever the credentials change (token file, or an exec plugin's answer) */
  struct kube__exec_run_s *exec_run; /* the exec credential plugin running now */
  int exec_have;      /* the plugin's last answer is usable (until exec_expiry, or a 401 or refused cert) */
  char *exec_token;   /* its status.token; NULL when it returned only a certificate */
  char *exec_cert, *exec_key;   /* its client certificate and key (PEM); NULL when it returned none */
  watch_tls_conf_t *exec_conf;  /* TLS with that certificate for new connections; NULL: tlsconf */
  uint64_t exec_expiry; /* uv_now() when the plugin's credentials expire; 0: until a 401 */
  kube_client_stats_t stats;
  char rbuf[65536];   /* reads are consumed synchronously, so one buffer serves every connection */
};

/* client-go's request counter (every response, retried ones included; "<error>" when none came) and
 * the watch streams open, for the metrics endpoint. */
static metrics_family_t kube__f_requests = {
    .name = "rest_client_requests_total", .help = "Number of HTTP requests, partitioned by status code, method, and host.",
    .type = METRICS_COUNTER, .labels = {"code", "method", "host"}};
static metrics_family_t kube__f_watches = {.name = "rudder_watch_streams",
                                           .help = "Watch streams open to the API server, by host",
                                           .type = METRICS_GAUGE, .labels = {"host"}};

static void kube__count_request(const kube_req_t *req, const char *code) {
  char method[16];
  snprintf(method, sizeof method, "%.*s", (int)strcspn(req->what, " "), req->what);
  metrics_inc(metrics_get(&kube__f_requests, code, method, req->c->hostport));
}

static void kube__dispatch(kube_client_t *c);
static void kube__conn_close(kube_conn_t *conn);
static void kube__conn_send(kube_conn_t *conn);
static void kube__tunnel_read(kube_conn_t *conn, const char *p, size_t n);
static void kube__finish(kube_req_t *req, int err, const char *msg);
static void kube__exec_abort(kube_client_t *c);
static int kube__creds_ready(kube_client_t *c);
static int kube__maybe_retry(kube_req_t *req, int status);
static void kube__timer_cb(uv_timer_t *t);
static int kube__bad_text(const char *s);
static const char *kube__current_token(kube_client_t *c);

/* ---- client lifetime ---- */

static void kube__object_gone(kube_client_t *c) {
  assert(c->objects > 0);
  if (--c->objects || !c->closing) return;
  void (*cb)(void *) = c->close_cb;
  void *data = c->close_data;
  /* Every session is gone; the derived conf borrows from tlsconf, so it goes first. */
  watch_tls_conf_unref(c->exec_conf);
  if (c->tls) watch_tls_conf_free(&c->tlsconf);
  kube_config_free(&c->cfg);
  free(c->hostport);
  free(c->dialport);
  free(c->token);
  free(c->exec_token);
  free(c->exec_cert);
  free(c->exec_key);
  free(c);
  if (cb) cb(data);
}

static void kube__timer_closed(uv_handle_t *h) { kube__object_gone(h->data); }

static int kube__copy_blob(char **dst, size_t *dst_len, const char *src, size_t len) {
  if (!src) return 0;
  if (!(*dst = malloc(len + 1))) return UV_ENOMEM;
  memcpy(*dst, src, len);
  (*dst)[len] = 0;
  *dst_len = len;
  return 0;
}

static int kube__copy_config(kube_config_t *d, const kube_config_t *s) {
  memset(d, 0, sizeof *d);
  d->port = s->port;
  d->insecure_skip_tls_verify = s->insecure_skip_tls_verify;
  const char *const *from[] = {(const char *const *)&s->server, (const char *const *)&s->scheme,
                               (const char *const *)&s->host, (const char *const *)&s->base_path,
                               (const char *const *)&s->token, (const char *const *)&s->token_file,
                               (const char *const *)&s->namespace, (const char *const *)&s->tls_server_name,
                               (const char *const *)&s->source, (const char *const *)&s->context};
  char **to[] = {&d->server, &d->scheme, &d->host, &d->base_path, &d->token, &d->token_file, &d->namespace,
                 &d->tls_server_name, &d->source, &d->context};
  for (size_t i = 0; i < sizeof to / sizeof to[0]; i++)
    if (*from[i] && !(*to[i] = strdup(*from[i]))) return UV_ENOMEM;
  if (s->exec && !(d->exec = kube_exec_copy(s->exec))) return UV_ENOMEM;
  d->proxy_port = s->proxy_port;
  if ((s->proxy_host && !(d->proxy_host = strdup(s->proxy_host))) ||
      (s->proxy_auth && !(d->proxy_auth = strdup(s->proxy_auth))) ||
      (s->impersonate_user && !(d->impersonate_user = strdup(s->impersonate_user))))
    return UV_ENOMEM;
  if (kube__copy_blob(&d->ca_pem, &d->ca_pem_len, s->ca_pem, s->ca_pem_len) ||
      kube__copy_blob(&d->cert_pem, &d->cert_pem_len, s->cert_pem, s->cert_pem_len) ||
      kube__copy_blob(&d->key_pem, &d->key_pem_len, s->key_pem, s->key_pem_len))
    return UV_ENOMEM;
  return 0;
}

static void kube__sweep_cb(uv_timer_t *t) {
  kube_client_t *c = t->data;
  uint64_t now = uv_now(c->loop);
  /* Idle connections sit at the head newest first; the oldest are at the tail. */
  while (!link__empty(&c->idle)) {
    kube_conn_t *conn = WATCH__CONTAINER_OF(c->idle.prev, kube_conn_t, idle);
    if (now - conn->idle_since < c->lim.idle_timeout_ms) break;
    kube__conn_close(conn);
  }
}

static void kube__kick_cb(uv_timer_t *t) { kube__dispatch(t->data); }

static void kube__kick(kube_client_t *c) {
  if (!c->closing && !uv_is_active((uv_handle_t *)&c->kick)) uv_timer_start(&c->kick, kube__kick_cb, 0, 0);
}

int kube_client_new(uv_loop_t *loop, const kube_config_t *cfg, kube_client_t **out, char **errmsg) {
  *out = NULL;
  if (errmsg) *errmsg = NULL;
  if (!cfg->host || !cfg->scheme) {
    watch__errf(errmsg, "kube client: the configuration has no server");
    return UV_EINVAL;
  }
  /* A write to a connection the server has closed must fail with EPIPE, not kill the process. */
  struct sigaction sa;
  if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL) signal(SIGPIPE, SIG_IGN);
  kube_client_t *c = calloc(1, sizeof *c);
  if (!c) return UV_ENOMEM;
  c->loop = loop;
  link__init(&c->conns);
  link__init(&c->idle);
  link__init(&c->pending);
  link__init(&c->reqs);
  link__init(&c->pending_watch);
  c->lim = (kube_client_limits_t){.max_idle = 8, .max_conns = 32, .max_body = 64u << 20, .max_watch_line = 16u << 20,
                                  .default_timeout_ms = 60000, .idle_timeout_ms = 90000,
                                  .watch_connect_timeout_ms = 30000, .qps = 50, .burst = 100, .max_retries = 5,
                                  .retry_base_ms = 200, .retry_max_ms = 30000, .token_refresh_ms = 60000,
                                  .exec_timeout_ms = 60000};
  c->tokens = c->lim.burst;
  c->tb_ns = uv_hrtime();
  int r = kube__copy_config(&c->cfg, cfg);
  buf_t hp = BUF_INIT;
  if (!r) r = strchr(cfg->host, ':') ? buf_printf(&hp, "[%s]:%d", cfg->host, cfg->port)
                                     : buf_printf(&hp, "%s:%d", cfg->host, cfg->port);
  if (!r && !(c->hostport = buf_steal(&hp))) r = UV_ENOMEM;
  c->dial_host = c->cfg.host;
  c->dial_port = cfg->port;
  if (!r && cfg->proxy_host) {
    c->dial_host = c->cfg.proxy_host;
    c->dial_port = cfg->proxy_port;
    c->tunnel = strcmp(cfg->scheme, "https") == 0;
    c->proxied_http = !c->tunnel;
    r = strchr(cfg->proxy_host, ':') ? buf_printf(&hp, "proxy [%s]:%d", cfg->proxy_host, cfg->proxy_port)
                                     : buf_printf(&hp, "proxy %s:%d", cfg->proxy_host, cfg->proxy_port);
    if (!r && !(c->dialport = buf_steal(&hp))) r = UV_ENOMEM;
  } else if (!r && !(c->dialport = strdup(c->hostport))) {
    r = UV_ENOMEM;
  }
  if (!r && cfg->token && !(c->token = strdup(cfg->token))) r = UV_ENOMEM;
  if (r) {
    watch__errf(errmsg, "kube client: out of memory");
    goto fail;
  }
  c->token_read_ms = uv_now(loop);
  struct sockaddr_in *a4 = (struct sockaddr_in *)&c->addr;
  struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&c->addr;
  if (uv_ip4_addr(c->dial_host, c->dial_port, a4) == 0 && inet_pton(AF_INET, c->dial_host, &a4->sin_addr) == 1)
    c->have_addr = 1;
  else if (uv_ip6_addr(c->dial_host, c->dial_port, a6) == 0) c->have_addr = 1;
  if (strcmp(cfg->scheme, "https") == 0) {
    if ((r = watch_tls_conf_init(&c->tlsconf, cfg, errmsg))) goto fail;
    c->tls = 1;
  }
  uv_timer_init(loop, &c->kick);
  uv_timer_init(loop, &c->sweep);
  c->kick.data = c->sweep.data = c;
  c->objects = 2;
  uint64_t every = c->lim.idle_timeout_ms < 30000 ? c->lim.idle_timeout_ms : 30000;
  uv_timer_start(&c->sweep, kube__sweep_cb, every, every);
  uv_unref((uv_handle_t *)&c->sweep); /* housekeeping must not keep the loop alive */
  *out = c;
  return 0;
fail:
  buf_free(&hp);
  kube_config_free(&c->cfg);
  free(c->hostport);
  free(c->dialport);
  free(c->token);
  free(c);
  return r;
}

int kube_client_new_impersonating(kube_client_t *base, const char *user, kube_client_t **out, char **errmsg) {
  *out = NULL;
  if (errmsg) *errmsg = NULL;
  if (!user || !*user || kube__bad_text(user)) {
    watch__errf(errmsg, "kube client: bad user to impersonate");
    return UV_EINVAL;
  }
  kube_config_t cfg;
  int r = kube__copy_config(&cfg, &base->cfg);
  free(cfg.impersonate_user);
  cfg.impersonate_user = r ? NULL : strdup(user);
  if (r || !cfg.impersonate_user) {
    kube_config_free(&cfg);
    return UV_ENOMEM;
  }
  r = kube_client_new(base->loop, &cfg, out, errmsg);
  kube_config_free(&cfg);
  if (!r) {
    (*out)->lim = base->lim;
    (*out)->stats.flow_control = base->stats.flow_control;
  }
  return r;
}

void kube_client_set_limits(kube_client_t *c, const kube_client_limits_t *l) {
  if (l->max_idle) c->lim.max_idle = l->max_idle;
  if (l->max_conns) c->lim.max_conns = l->max_conns;
  if (l->max_body) c->lim.max_body = l->max_body;
  if (l->max_watch_line) c->lim.max_watch_line = l->max_watch_line;
  if (l->default_timeout_ms) c->lim.default_timeout_ms = l->default_timeout_ms;
  if (l->watch_connect_timeout_ms) c->lim.watch_connect_timeout_ms = l->watch_connect_timeout_ms;
  if (l->qps) c->lim.qps = l->qps;
  if (l->qps_auto) c->lim.qps_auto = true;
  if (l->burst) {
    c->lim.burst = l->burst;
    if (c->tokens > l->burst) c->tokens = l->burst;
  }
  if (l->max_retries) c->lim.max_retries = l->max_retries;
  if (l->retry_base_ms) c->lim.retry_base_ms = l->retry_base_ms;
  if (l->retry_max_ms) c->lim.retry_max_ms = l->retry_max_ms;
  if (l->token_refresh_ms) c->lim.token_refresh_ms = l->token_refresh_ms;
  if (l->exec_timeout_ms) c->lim.exec_timeout_ms = l->exec_timeout_ms;
  if (l->idle_timeout_ms) {
    c->lim.idle_timeout_ms = l->idle_timeout_ms;
    uint64_t every = l->idle_timeout_ms < 30000 ? l->idle_timeout_ms : 30000;
    if (!c->closing) uv_timer_start(&c->sweep, kube__sweep_cb, every, every);
  }
}

kube_client_limits_t kube_client_get_limits(const kube_client_t *c) { return c->lim; }

kube_client_stats_t kube_client_get_stats(const kube_client_t *c) { return c->stats; }

bool kube_client_is_closing(const kube_client_t *c) { return c->closing; }

uv_loop_t *kube_client_loop(const kube_client_t *c) { return c->loop; }

const kube_config_t *kube_client_config(const kube_client_t *c) { return &c->cfg; }

void kube_client_close(kube_client_t *c, void (*cb)(void *), void *data) {
  if (c->closing) return;
  c->closing = 1;
  c->close_cb = cb;
  c->close_data = data;
  /* Callbacks that run now cannot start new work: kube_request returns NULL while closing. */
  while (!link__empty(&c->reqs)) {
    kube_req_t *req = WATCH__CONTAINER_OF(c->reqs.next, kube_req_t, all);
    kube__finish(req, UV_ECANCELED, "the client was closed");
  }
  while (!link__empty(&c->conns)) kube__conn_close(WATCH__CONTAINER_OF(c->conns.next, kube_conn_t, all));
  kube__exec_abort(c);
  uv_close((uv_handle_t *)&c->kick, kube__timer_closed);
  uv_close((uv_handle_t *)&c->sweep, kube__timer_closed);
}

/* ---- responses ---- */

const char *kube_response_header(const kube_response_t *res, const char *name) {
  return res->priv ? watch_http_header(res->priv, name) : NULL;
}

bool kube_response_ok(const kube_response_t *res) { return res->err == 0 && res->status >= 200 && res->status < 300; }

bool kube_response_is_conflict(const kube_response_t *res) { return res->err == 0 && res->status == 409; }

bool kube_response_is_not_found(const kube_response_t *res) { return res->err == 0 && res->status == 404; }

/* Builds "HTTP 404 Not Found: <Status message>" from an error response. */
static void kube__http_error(kube_req_t *req, int status, const char *reason_phrase, buf_t *msg, buf_t *reason) {
  const char *phrase = reason_phrase && *reason_phrase ? reason_phrase : llhttp_status_name((llhttp_status_t)status);
  buf_printf(msg, "HTTP %d %s", status, phrase ? phrase : "");
  cJSON *j = req->body.len ? cJSON_ParseWithLength(req->body.data, req->body.len) : NULL;
  const cJSON *kind = cJSON_GetObjectItemCaseSensitive(j, "kind");
  if (cJSON_IsString(kind) && strcmp(kind->valuestring, "Status") == 0) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "message");
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(j, "reason");
    if (cJSON_IsString(m) && *m->valuestring) buf_printf(msg, ": %s", m->valuestring);
    if (cJSON_IsString(r)) buf_puts(reason, r->valuestring);
  } else if (req->body.len) {
    /* Not an API Status (a proxy, or a non-Kubernetes server): show the start of the body. */
    size_t n = req->body.len < 200 ? req->body.len : 200;
    buf_puts(msg, ": ");
    for (size_t i = 0; i < n; i++) {
      unsigned char ch = (unsigned char)req->body.data[i];
      buf_putc(msg, ch < 0x20 || ch == 0x7f ? ' ' : (char)ch);
    }
    while (msg->len && msg->data[msg->len - 1] == ' ') msg->data[--msg->len] = 0;
  }
  cJSON_Delete(j);
}

static void kube__req_closed(uv_handle_t *h) {
  kube_req_t *req = h->data;
  kube_client_t *c = req->c;
  if (req->watch) {
    watch_ndjson_free(&req->watch->nd);
    free(req->watch);
  }
  buf_free(&req->out);
  buf_free(&req->payload);
  buf_free(&req->body);
  buf_free(&req->headers);
  free(req->what);
  free(req->deferred_msg);
  free(req);
  kube__object_gone(c);
}

/* Delivers the outcome exactly once and schedules the request's memory to be freed. */
static void kube__finish(kube_req_t *req, int err, const char *msg) {
  if (req->done) return;
  req->done = 1;
  kube_client_t *c = req->c;
  link__remove(&req->queue);
  link__remove(&req->all);
  uv_timer_stop(&req->timer);
  kube_conn_t *conn = req->conn;
  if (conn) {
    /* A connection in the middle of a response cannot be reused. */
    conn->req = NULL;
    req->conn = NULL;
    kube__conn_close(conn);
  }
  int status = 0;
  buf_t m = BUF_INIT, reason = BUF_INIT;
  const char *st = req->headers.data ? watch_http_header(&req->headers, ":status") : NULL;
  if (err && err != UV_ECANCELED && !st) kube__count_request(req, "<error>");
  if (req->watch && req->watch->streaming) metrics_add(metrics_get(&kube__f_watches, c->hostport), -1);
  if (!err && st) status = (int)strtol(st, NULL, 10);
  if (err) buf_puts(&m, msg ? msg : uv_strerror(err));
  else if (status >= 400) kube__http_error(req, status, watch_http_header(&req->headers, ":reason"), &m, &reason);
  if (status == 401 && c->cfg.exec)
    buf_printf(&m, " (the server refused the credentials from exec credential plugin \"%s\")", c->cfg.exec->command);
  kube_response_t res = {
      .err = err,
      .errmsg = m.len ? m.data : NULL,
      .status = status,
      .reason = reason.data ? reason.data : "",
      .body = req->body.data ? req->body.data : "",
      .body_len = req->body.len,
      .priv = req->headers.data ? &req->headers : NULL,
  };
  if (req->watch) {
    if (req->watch->end) req->watch->end(req->watch, &res, req->watch->data);
  } else if (req->cb) {
    req->cb(&res, req->data);
  }
  buf_free(&m);
  buf_free(&reason);
  uv_close((uv_handle_t *)&req->timer, kube__req_closed);
  kube__kick(c);
}

/* ---- connections ---- */

/* The TLS configuration new connections use: with the exec plugin's client certificate when it
 * returned one. */
static watch_tls_conf_t *kube__tls_conf(kube_client_t *c) { return c->exec_conf ? c->exec_conf : &c->tlsconf; }

/* True when conn's TLS session presents credentials that have since been replaced. */
static int kube__conn_stale(const kube_conn_t *conn) {
  return conn->is_tls && conn->tls.conf && conn->tls.conf != kube__tls_conf(conn->c);
}

/* Closes idle connections made with replaced credentials; busy ones are closed when they finish. */
static void kube__drain_stale(kube_client_t *c) {
  for (kube__link_t *l = c->idle.next; l != &c->idle;) {
    kube_conn_t *conn = WATCH__CONTAINER_OF(l, kube_conn_t, idle);
    l = l->next;
    if (kube__conn_stale(conn)) kube__conn_close(conn);
  }
}

static void kube__conn_unref(kube_conn_t *conn) {
  if (--conn->refs) return;
  kube_client_t *c = conn->c;
  if (conn->is_tls) watch_tls_free(&conn->tls);
  watch_http_free(&conn->http);
  free(conn);
  kube__object_gone(c);
}

static void kube__connect_to(kube_conn_t *conn, const struct sockaddr *sa);

static void kube__tcp_closed(uv_handle_t *h) {
  kube_conn_t *conn = h->data;
  conn->tcp_closing = 0;
  if (conn->state == CONN_CONNECTING && conn->next_addr < conn->n_addrs) {
    /* A failed connect leaves the socket unusable: a fresh handle tries the next address. */
    uv_tcp_init(conn->c->loop, &conn->tcp);
    conn->tcp.data = conn;
    kube__connect_to(conn, (struct sockaddr *)&conn->addrs[conn->next_addr++]);
    return;
  }
  kube__conn_unref(conn);
}

static void kube__conn_close(kube_conn_t *conn) {
  if (conn->state == CONN_CLOSING) return;
  kube_client_t *c = conn->c;
  if (conn->req) { /* callers finish the request first; this only breaks the link */
    conn->req->conn = NULL;
    conn->req = NULL;
  }
  if (link__linked(&conn->idle)) {
    link__remove(&conn->idle);
    c->n_idle--;
  }
  link__remove(&conn->all);
  if (conn->pooled) {
    c->n_conns--;
    kube__kick(c); /* a slot is free for a queued request */
  }
  if (conn->state == CONN_RESOLVING) uv_cancel((uv_req_t *)&conn->gai);
  conn->state = CONN_CLOSING;
  /* A handle already closing for the next address finishes in kube__tcp_closed, which sees CLOSING. */
  if (!conn->tcp_closing) uv_close((uv_handle_t *)&conn->tcp, kube__tcp_closed);
}

/* Fails the connection's request (or replays it once when a reused connection turned out stale). */
static void kube__conn_fail(kube_conn_t *conn, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void kube__conn_fail(kube_conn_t *conn, int err, const char *fmt, ...) {
  kube_req_t *req = conn->req;
  kube_client_t *c = conn->c;
  if (!req) { kube__conn_close(conn); return; }
  if (conn->served && conn->http.bytes_seen == 0 && req->idempotent && !req->retried && !req->watch &&
      (err == UV_EOF || err == UV_ECONNRESET || err == UV_EPIPE)) {
    /* The server closed a keep-alive connection as we reused it; nothing was processed. */
    req->retried = 1;
    conn->req = NULL;
    req->conn = NULL;
    kube__conn_close(conn);
    link__push_front(&c->pending, &req->queue);
    kube__kick(c);
    return;
  }
  buf_t m = BUF_INIT;
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(&m, fmt, ap);
  va_end(ap);
  kube__finish(req, err, m.data);
  buf_free(&m);
}

typedef struct kube__wr_s {
  uv_write_t w;
  char data[];
} kube__wr_t;

static void kube__write_cb(uv_write_t *w, int status) {
  kube_conn_t *conn = w->handle->data;
  free(w);
  if (status < 0 && status != UV_ECANCELED && conn->state != CONN_CLOSING)
    kube__conn_fail(conn, status, "write to %s failed: %s", conn->c->hostport, uv_strerror(status));
}

static int kube__write(kube_conn_t *conn, const char *p, size_t n) {
  if (!n) return 0;
  kube__wr_t *w = malloc(sizeof *w + n);
  if (!w) return UV_ENOMEM;
  memcpy(w->data, p, n);
  uv_buf_t b = uv_buf_init(w->data, (unsigned)n);
  int r = uv_write(&w->w, (uv_stream_t *)&conn->tcp, &b, 1, kube__write_cb);
  if (r) free(w);
  return r;
}

static int kube__tls_flush(kube_conn_t *conn) {
  int r = kube__write(conn, conn->tls.out.data, conn->tls.out.len);
  buf_reset(&conn->tls.out);
  return r;
}

static int kube__on_headers(watch_http_t *h) {
  kube_conn_t *conn = h->data;
  kube_req_t *req = conn->req;
  kube_client_t *c = conn->c;
  if (c->lim.qps_auto && !c->stats.flow_control) {
    kube_response_t hr = {.priv = &h->headers};
    if (kube_response_header(&hr, "X-Kubernetes-PF-FlowSchema-UID") ||
        kube_response_header(&hr, "X-Kubernetes-PF-PriorityLevel-UID")) {
      c->stats.flow_control = true;
      c->lim.qps = -1; /* the server queues and sheds load itself (and says 429 when it must) */
      LOG_I("the API server applies flow control (API Priority and Fairness): client-side rate limit off",
            "server", c->cfg.server);
    }
  }
  char code[16];
  snprintf(code, sizeof code, "%d", h->status);
  kube__count_request(req, code);
  if (req->watch && h->status == 200) {
    req->watch->streaming = 1;
    metrics_inc(metrics_get(&kube__f_watches, c->hostport));
    uv_timer_stop(&req->timer); /* connected: from now on the stream may be quiet for long */
    return 0;
  }
  req->sinking = req->on_body && !req->watch && h->status >= 200 && h->status < 300;
  if (req->sinking && req->on_head) {
    kube_response_t res = {.status = h->status, .reason = "", .body = "", .priv = &h->headers};
    int r = req->on_head(&res, req->data);
    if (r) req->sink_err = 1;
    return r;
  }
  if (req->sinking) return 0;
  size_t max = req->watch ? KUBE__MAX_ERROR_BODY : c->lim.max_body;
  if ((h->parser.flags & F_CONTENT_LENGTH) && h->parser.content_length > max) return UV_E2BIG;
  return 0;
}

static int kube__watch_event(watch_ndjson_t *nd, const char *type, cJSON *obj, void *data) {
  kube_watch_t *w = data;
  if (w->req->done) return UV_ECANCELED;
  w->ev(w, type, obj, w->data);
  /* The callback may have stopped the stream (or closed the client). */
  return w->req->done ? UV_ECANCELED : 0;
}

/* A response body's first block when its length is not known (chunked): most answers (an object
 * applied, a record) fit in it. */
#define KUBE__BODY_START 8192

static int kube__on_body(watch_http_t *h, const char *p, size_t n) {
  kube_conn_t *conn = h->data;
  kube_req_t *req = conn->req;
  if (!req) return UV_ECANCELED;
  if (req->watch && req->watch->streaming) return watch_ndjson_feed(&req->watch->nd, p, n);
  if (req->sinking) {
    int r = req->on_body(p, n, req->data);
    if (r) req->sink_err = 1;
    return r;
  }
  size_t max = req->watch ? KUBE__MAX_ERROR_BODY : conn->c->lim.max_body;
  if (req->body.len + n > max) return UV_E2BIG;
  if (!req->body.cap) {
    /* One block for the whole body where its length is known (what is left to read, plus this
     * piece), else room for a typical object's answer: not a doubling realloc from 64 bytes per
     * response, each a trip through malloc's large bins. */
    uint64_t want = (h->parser.flags & F_CONTENT_LENGTH) ? h->parser.content_length + n : KUBE__BODY_START;
    if (want > max) want = max;
    if (want > n && buf_reserve(&req->body, (size_t)want)) return UV_ENOMEM;
  }
  return buf_append(&req->body, p, n) ? UV_ENOMEM : 0;
}

/* A response completed on conn: hand the connection back and deliver. */
static void kube__conn_complete(kube_conn_t *conn, int reusable) {
  kube_client_t *c = conn->c;
  kube_req_t *req = conn->req;
  conn->req = NULL;
  req->conn = NULL;
  conn->served++;
  /* The headers move to the request so that they outlive the connection's reuse. */
  buf_t tmp = req->headers;
  req->headers = conn->http.headers;
  conn->http.headers = tmp;
  buf_reset(&conn->http.headers);
  char st[16];
  int conn_status = conn->http.status;
  snprintf(st, sizeof st, "%d", conn->http.status);
  /* Status and reason ride along as pseudo-headers. */
  buf_puts(&req->headers, ":status");
  buf_append(&req->headers, "", 1);
  buf_puts(&req->headers, st);
  buf_append(&req->headers, "", 1);
  buf_puts(&req->headers, ":reason");
  buf_append(&req->headers, "", 1);
  buf_append(&req->headers, conn->http.reason.data ? conn->http.reason.data : "", conn->http.reason.len);
  buf_append(&req->headers, "", 1);
  if (reusable && conn->pooled && !c->closing && !kube__conn_stale(conn)) {
    conn->idle_since = uv_now(c->loop);
    link__push_front(&c->idle, &conn->idle);
    c->n_idle++;
    kube__kick(c); /* queued requests get it first; dispatch trims the surplus */
  } else {
    kube__conn_close(conn);
  }
  if (kube__maybe_retry(req, conn_status)) return;
  kube__finish(req, 0, NULL);
}

static const char *kube__limit_text(size_t n, char *buf, size_t len) {
  if (n % (1u << 20) == 0) snprintf(buf, len, "%zu MiB", n >> 20);
  else snprintf(buf, len, "%zu bytes", n);
  return buf;
}

/* Handles plaintext from the server; returns nonzero when conn must not be touched further. */
static int kube__conn_plain(kube_conn_t *conn, const char *p, size_t n) {
  kube_client_t *c = conn->c;
  while (n) {
    kube_req_t *req = conn->req;
    if (!req) {
      /* Bytes with no request: a server timeout notice or garbage; the connection is done. */
      kube__conn_close(conn);
      return 1;
    }
    size_t used;
    int r = watch_http_feed(&conn->http, p, n, &used);
    if (conn->state == CONN_CLOSING || req->done) return 1;
    if (r == 0) return 0;
    if (r == 1) {
      int extra = used < n; /* no pipelining: leftover bytes mean the connection is confused */
      kube__conn_complete(conn, conn->http.keep_alive && !extra);
      return 1;
    }
    char lim[32];
    if (req->sink_err)
      kube__conn_fail(conn, r, "the response to %s from %s was abandoned by its reader: %s", req->what, c->hostport,
                      watch__strerror(r));
    else if (r == UV_E2BIG && req->watch && req->watch->streaming)
      kube__conn_fail(conn, r, "watch %s on %s: %s", req->what, c->hostport, req->watch->nd.err);
    else if (r == UV_E2BIG && conn->http.headers_done)
      kube__conn_fail(conn, r, "response to %s from %s is larger than the limit of %s", req->what, c->hostport,
                      kube__limit_text(req->watch ? KUBE__MAX_ERROR_BODY : c->lim.max_body, lim, sizeof lim));
    else if (r == UV_E2BIG)
      kube__conn_fail(conn, r, "response headers for %s from %s are larger than %zu bytes", req->what, c->hostport,
                      conn->http.max_headers);
    else if (r == UV_EPROTO && req->watch && req->watch->streaming && req->watch->nd.err[0])
      kube__conn_fail(conn, r, "watch %s on %s: %s", req->what, c->hostport, req->watch->nd.err);
    else if (r == UV_EPROTO)
      kube__conn_fail(conn, r, "malformed HTTP response to %s from %s: %s", req->what, c->hostport,
                      watch_http_error(&conn->http));
    else
      kube__conn_fail(conn, r, "reading the response to %s from %s failed: %s", req->what, c->hostport,
                      uv_strerror(r));
    return 1;
  }
  return 0;
}

static void kube__conn_eof(kube_conn_t *conn, int err) {
  kube_req_t *req = conn->req;
  if (!req) { kube__conn_close(conn); return; }
  if (err == UV_EOF) {
    int r = watch_http_eof(&conn->http);
    if (conn->state == CONN_CLOSING || req->done) return;
    if (r == 1) { kube__conn_complete(conn, 0); return; }
  }
  if (conn->http.bytes_seen == 0)
    kube__conn_fail(conn, err, "%s closed the connection before responding to %s%s%s", conn->c->hostport, req->what,
                    err == UV_EOF ? "" : ": ", err == UV_EOF ? "" : uv_strerror(err));
  else if (req->watch && req->watch->streaming)
    kube__conn_fail(conn, err, "watch %s: %s closed the stream mid-response%s%s", req->what, conn->c->hostport,
                    err == UV_EOF ? "" : ": ", err == UV_EOF ? "" : uv_strerror(err));
  else
    kube__conn_fail(conn, err, "%s closed the connection in the middle of the response to %s (after %llu body bytes)%s%s",
                    conn->c->hostport, req->what, (unsigned long long)conn->http.body_bytes,
                    err == UV_EOF ? "" : ": ", err == UV_EOF ? "" : uv_strerror(err));
}

/* True when the server refused a client certificate that the exec plugin returned. */
static int kube__exec_cert_refused(kube_conn_t *conn, int err) {
  return conn->c->cfg.exec && conn->tls.conf && conn->tls.conf->derived && watch_tls_cert_rejected(&conn->tls, err);
}

/* Describes a TLS failure, naming the exec plugin when it was its certificate that was refused. */
static void kube__tls_error(kube_conn_t *conn, int err, buf_t *m) {
  watch_tls_describe(&conn->tls, err, m);
  if (kube__exec_cert_refused(conn, err))
    buf_printf(m, "; the certificate came from exec credential plugin \"%s\"", conn->c->cfg.exec->command);
}

/* The server refused the client certificate an exec plugin returned: like a 401, the request goes
 * back to the queue once and the plugin is run again (unless newer credentials are there already).
 * Returns 1 when it did so. */
static int kube__cert_refused(kube_conn_t *conn, int err) {
  kube_client_t *c = conn->c;
  kube_req_t *req = conn->req;
  if (!req || req->done || req->auth_retried || c->closing || !kube__exec_cert_refused(conn, err)) return 0;
  req->auth_retried = 1;
  if (conn->tls.conf == c->exec_conf) c->exec_have = 0;
  c->stats.auth_retries++;
  buf_t m = BUF_INIT;
  kube__tls_error(conn, err, &m);
  LOG_I("the server refused the exec credential plugin's client certificate; retrying with refreshed credentials",
        "request", req->what, "error", m.data ? m.data : "");
  buf_free(&m);
  conn->req = NULL;
  req->conn = NULL;
  kube__conn_close(conn);
  buf_reset(&req->body);
  link__push_back(req->watch ? &c->pending_watch : &c->pending, &req->queue);
  kube__kick(c);
  return 1;
}

/* Runs the TLS engine over buffered ciphertext. */
static void kube__tls_pump(kube_conn_t *conn) {
  kube_client_t *c = conn->c;
  if (conn->state == CONN_HANDSHAKE) {
    int r = watch_tls_handshake(&conn->tls);
    int wr = kube__tls_flush(conn);
    if (wr) {
      kube__conn_fail(conn, wr, "TLS handshake with %s failed: write: %s", c->hostport, uv_strerror(wr));
      return;
    }
    if (r == 1) return;
    if (r) {
      if (kube__cert_refused(conn, r)) return;
      buf_t m = BUF_INIT;
      kube__tls_error(conn, r, &m);
      kube__conn_fail(conn, UV_EPROTO, "TLS handshake with %s failed: %s", c->hostport, m.data ? m.data : "");
      buf_free(&m);
      return;
    }
    conn->state = CONN_READY;
    c->stats.tls_handshakes++;
    if (!conn->tls.conf->insecure && !conn->tls.saw_cert) c->stats.tls_resumed++;
    kube__conn_send(conn);
    if (conn->state == CONN_CLOSING) return;
  }
  for (;;) {
    int r = watch_tls_read(&conn->tls, c->rbuf, sizeof c->rbuf);
    if (conn->tls.out.len) kube__tls_flush(conn); /* e.g. renegotiation or alerts */
    if (r == 0) return;
    if (r == UV_EOF) { kube__conn_eof(conn, UV_EOF); return; }
    if (r < 0) {
      /* With TLS 1.3 a refused client certificate is only heard of after the handshake. */
      if (!conn->served && !conn->http.bytes_seen && kube__cert_refused(conn, r)) return;
      buf_t m = BUF_INIT;
      kube__tls_error(conn, r, &m);
      kube__conn_fail(conn, UV_EPROTO, "TLS error from %s: %s", c->hostport, m.data ? m.data : "");
      buf_free(&m);
      return;
    }
    if (kube__conn_plain(conn, c->rbuf, (size_t)r)) return;
  }
}

static void kube__alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *b) {
  kube_conn_t *conn = h->data;
  *b = uv_buf_init(conn->c->rbuf, sizeof conn->c->rbuf);
}

static void kube__read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *b) {
  kube_conn_t *conn = s->data;
  if (conn->state == CONN_CLOSING) return;
  if (nread == 0) return;
  if (nread < 0) {
    if (conn->state == CONN_TUNNEL)
      kube__conn_fail(conn, (int)nread, "%s closed the connection before answering CONNECT %s%s%s", conn->c->dialport,
                      conn->c->hostport, nread == UV_EOF ? "" : ": ", nread == UV_EOF ? "" : uv_strerror((int)nread));
    else if (conn->state == CONN_HANDSHAKE)
      kube__conn_fail(conn, (int)nread, "TLS handshake with %s failed: the server closed the connection%s%s",
                      conn->c->hostport, nread == UV_EOF ? "" : ": ", nread == UV_EOF ? "" : uv_strerror((int)nread));
    else
      kube__conn_eof(conn, (int)nread);
    return;
  }
  if (!conn->is_tls) { kube__conn_plain(conn, b->base, (size_t)nread); return; }
  if (conn->state == CONN_TUNNEL) { kube__tunnel_read(conn, b->base, (size_t)nread); return; }
  /* Ciphertext is copied out of the shared read buffer before the engine reuses it for plaintext. */
  if (watch_tls_push(&conn->tls, b->base, (size_t)nread)) {
    kube__conn_fail(conn, UV_ENOMEM, "out of memory reading from %s", conn->c->hostport);
    return;
  }
  kube__tls_pump(conn);
}

/* Sends conn->req on a ready connection. */
static void kube__conn_send(kube_conn_t *conn) {
  kube_req_t *req = conn->req;
  if (!req) return;
  watch_http_reset(&conn->http);
  conn->http.no_body = req->no_body;
  kube_client_t *c = conn->c;
  /* Credentials go in at send time, so that a retry carries a refreshed token. */
  const char *token = kube__current_token(c);
  /* A session that presents a replaced certificate counts as the credentials it started with, so
   * that a 401 on it does not throw away their successor. */
  req->cred_gen = kube__conn_stale(conn) ? conn->cred_gen : c->cred_gen;
  buf_t wire = BUF_INIT;
  int r = buf_append(&wire, req->out.data, req->out.len);
  if (token && *token && !kube__bad_text(token)) r |= buf_printf(&wire, "Authorization: Bearer %s\r\n", token);
  r |= buf_puts(&wire, "\r\n");
  if (req->payload.len) r |= buf_append(&wire, req->payload.data, req->payload.len);
  if (r) r = UV_ENOMEM;
  c->stats.requests++;
  LOG_D("request sent", "request", req->what); /* what was sent, never with its body or headers */
  if (r) {
  } else if (conn->is_tls) {
    r = watch_tls_write(&conn->tls, wire.data, wire.len);
    if (!r) r = kube__tls_flush(conn);
  } else {
    r = kube__write(conn, wire.data, wire.len);
  }
  buf_free(&wire);
  if (r) kube__conn_fail(conn, r, "sending %s to %s failed: %s", req->what, conn->c->hostport, watch__strerror(r));
}

/* Starts the TLS session on a connected socket (or tunnel); early holds ciphertext that arrived
 * already (after a proxy's CONNECT answer). */
static void kube__tls_start(kube_conn_t *conn, const char *early, size_t n) {
  kube_client_t *c = conn->c;
  conn->state = CONN_HANDSHAKE;
  conn->cred_gen = c->cred_gen;
  int r = watch_tls_init(&conn->tls, kube__tls_conf(c));
  if (r) {
    conn->is_tls = 0; /* nothing to free */
    kube__conn_fail(conn, r, "TLS setup for %s failed: %s", c->hostport, watch__strerror(r));
    conn->is_tls = 1;
    return;
  }
  if (n && watch_tls_push(&conn->tls, early, n)) {
    kube__conn_fail(conn, UV_ENOMEM, "out of memory reading from %s", c->dialport);
    return;
  }
  kube__tls_pump(conn);
}

/* Asks the proxy for a tunnel to the server: CONNECT host:port, its answer read with the response
 * parser (told that it has no body) and its callbacks off. */
static void kube__tunnel_start(kube_conn_t *conn) {
  kube_client_t *c = conn->c;
  conn->state = CONN_TUNNEL;
  watch_http_reset(&conn->http);
  conn->http.on_headers = NULL;
  conn->http.on_body = NULL;
  conn->http.no_body = 1;
  buf_t w = BUF_INIT;
  int r = buf_printf(&w, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: rudder\r\n", c->hostport, c->hostport);
  if (c->cfg.proxy_auth) r |= buf_printf(&w, "Proxy-Authorization: %s\r\n", c->cfg.proxy_auth);
  r |= buf_puts(&w, "\r\n");
  r = r ? UV_ENOMEM : kube__write(conn, w.data, w.len);
  buf_free(&w);
  if (r) kube__conn_fail(conn, r, "sending CONNECT %s to %s failed: %s", c->hostport, c->dialport, watch__strerror(r));
}

/* Reads the proxy's answer to CONNECT; a 2xx opens the tunnel and TLS starts inside it. */
static void kube__tunnel_read(kube_conn_t *conn, const char *p, size_t n) {
  kube_client_t *c = conn->c;
  size_t used;
  int r = watch_http_feed(&conn->http, p, n, &used);
  if (r == 0) return;
  if (r < 0) {
    kube__conn_fail(conn, r, "malformed answer from %s to CONNECT %s: %s", c->dialport, c->hostport,
                    r == UV_EPROTO ? watch_http_error(&conn->http) : watch__strerror(r));
    return;
  }
  int st = conn->http.status;
  if (st < 200 || st > 299) {
    const char *phrase = conn->http.reason.len ? conn->http.reason.data : llhttp_status_name((llhttp_status_t)st);
    kube__conn_fail(conn, UV_ECONNREFUSED, "%s refused to open a tunnel to %s: HTTP %d %s", c->dialport, c->hostport,
                    st, phrase ? phrase : "");
    return;
  }
  conn->http.on_headers = kube__on_headers;
  conn->http.on_body = kube__on_body;
  watch_http_reset(&conn->http);
  kube__tls_start(conn, p + used, n - used);
}

static void kube__connect_cb(uv_connect_t *cr, int status) {
  kube_conn_t *conn = cr->data;
  if (status == UV_ECANCELED || conn->state == CONN_CLOSING) return;
  kube_client_t *c = conn->c;
  if (status < 0) {
    if (conn->next_addr < conn->n_addrs) {
      conn->tcp_closing = 1;
      uv_close((uv_handle_t *)&conn->tcp, kube__tcp_closed);
      return;
    }
    kube__conn_fail(conn, status, "connect to %s failed: %s", c->dialport, uv_strerror(status));
    return;
  }
  uv_tcp_nodelay(&conn->tcp, 1);
  /* Dead peers on quiet watch streams are found by TCP keep-alive. */
  uv_tcp_keepalive(&conn->tcp, 1, 30);
  int r = uv_read_start((uv_stream_t *)&conn->tcp, kube__alloc_cb, kube__read_cb);
  if (r) {
    kube__conn_fail(conn, r, "reading from %s failed: %s", c->hostport, uv_strerror(r));
    return;
  }
  if (!conn->is_tls) {
    conn->state = CONN_READY;
    kube__conn_send(conn);
    return;
  }
  if (c->tunnel) {
    kube__tunnel_start(conn);
    return;
  }
  kube__tls_start(conn, NULL, 0);
}

static void kube__connect_to(kube_conn_t *conn, const struct sockaddr *sa) {
  conn->state = CONN_CONNECTING;
  conn->connect.data = conn;
  int r = uv_tcp_connect(&conn->connect, &conn->tcp, sa, kube__connect_cb);
  if (r && conn->next_addr < conn->n_addrs) {
    conn->tcp_closing = 1;
    uv_close((uv_handle_t *)&conn->tcp, kube__tcp_closed);
    return;
  }
  if (r) kube__conn_fail(conn, r, "connect to %s failed: %s", conn->c->dialport, uv_strerror(r));
}

static void kube__gai_cb(uv_getaddrinfo_t *g, int status, struct addrinfo *res) {
  kube_conn_t *conn = g->data;
  if (conn->state == CONN_CLOSING) {
    uv_freeaddrinfo(res);
    kube__conn_unref(conn);
    return;
  }
  kube__conn_unref(conn); /* still held by its tcp handle */
  if (status < 0 || !res) {
    kube__conn_fail(conn, status ? status : UV_EAI_NONAME, "cannot resolve %s%s: %s",
                    conn->c->tunnel || conn->c->proxied_http ? "proxy " : "", conn->c->dial_host,
                    uv_strerror(status ? status : UV_EAI_NONAME));
    uv_freeaddrinfo(res);
    return;
  }
  conn->n_addrs = 0;
  for (struct addrinfo *ai = res; ai && conn->n_addrs < 8; ai = ai->ai_next)
    if ((ai->ai_family == AF_INET || ai->ai_family == AF_INET6) && ai->ai_addrlen <= sizeof conn->addrs[0])
      memcpy(&conn->addrs[conn->n_addrs++], ai->ai_addr, ai->ai_addrlen);
  uv_freeaddrinfo(res);
  if (!conn->n_addrs) {
    kube__conn_fail(conn, UV_EAI_NONAME, "cannot resolve %s%s: no IPv4 or IPv6 address",
                    conn->c->tunnel || conn->c->proxied_http ? "proxy " : "", conn->c->dial_host);
    return;
  }
  conn->next_addr = 1;
  kube__connect_to(conn, (struct sockaddr *)&conn->addrs[0]);
}

/* Opens a connection for req; failures are delivered to req. */
static kube_conn_t *kube__conn_open(kube_client_t *c, kube_req_t *req, int pooled) {
  kube_conn_t *conn = calloc(1, sizeof *conn);
  if (!conn) {
    kube__finish(req, UV_ENOMEM, "out of memory opening a connection");
    return NULL;
  }
  conn->c = c;
  link__init(&conn->all);
  link__init(&conn->idle);
  watch_http_init(&conn->http);
  conn->http.on_headers = kube__on_headers;
  conn->http.on_body = kube__on_body;
  conn->http.data = conn;
  conn->is_tls = c->tls;
  conn->pooled = pooled;
  uv_tcp_init(c->loop, &conn->tcp);
  conn->tcp.data = conn;
  conn->refs = 1;
  c->objects++;
  c->stats.connects++;
  link__push_back(&c->conns, &conn->all);
  if (pooled) c->n_conns++;
  conn->req = req;
  req->conn = conn;
  if (c->have_addr) {
    kube__connect_to(conn, (struct sockaddr *)&c->addr);
    return conn;
  }
  conn->state = CONN_RESOLVING;
  conn->gai.data = conn;
  char port[8];
  snprintf(port, sizeof port, "%d", c->dial_port);
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
  int r = uv_getaddrinfo(c->loop, &conn->gai, kube__gai_cb, c->dial_host, port, &hints);
  if (r) {
    conn->state = CONN_CONNECTING; /* nothing to cancel */
    kube__conn_fail(conn, r, "cannot resolve %s%s: %s", c->tunnel || c->proxied_http ? "proxy " : "", c->dial_host,
                    uv_strerror(r));
    return NULL;
  }
  conn->refs++;
  return conn;
}

/* Gives queued requests to idle connections or new ones, within the limits. Runs only from loop
 * callbacks, so a failure here never reaches a callback inside kube_request. */
/* Takes a token from the client-side bucket; when there is none, arms the kick timer for when
 * one will be there and returns 0. */
static int kube__take_token(kube_client_t *c) {
  if (c->lim.qps <= 0) return 1;
  uint64_t now = uv_hrtime();
  c->tokens += (double)(now - c->tb_ns) / 1e9 * c->lim.qps;
  c->tb_ns = now;
  if (c->tokens > c->lim.burst) c->tokens = c->lim.burst;
  if (c->tokens >= 1) {
    c->tokens -= 1;
    return 1;
  }
  c->stats.throttled++;
  uint64_t wait = (uint64_t)ceil((1 - c->tokens) / c->lim.qps * 1000);
  uv_timer_start(&c->kick, kube__kick_cb, wait ? wait : 1, 0);
  return 0;
}

static void kube__dispatch(kube_client_t *c) {
  if (c->closing) return;
  /* Every request waits while an exec credential plugin runs. */
  if ((!link__empty(&c->pending) || !link__empty(&c->pending_watch)) && !kube__creds_ready(c)) return;
  /* Watches have their own connections; they wait only for credentials and the token bucket. */
  while (!c->closing && !link__empty(&c->pending_watch)) {
    if (!kube__take_token(c)) return;
    kube_req_t *req = WATCH__CONTAINER_OF(c->pending_watch.next, kube_req_t, queue);
    link__remove(&req->queue);
    kube__conn_open(c, req, 0);
  }
  while (!c->closing && !link__empty(&c->pending)) {
    kube_req_t *req = WATCH__CONTAINER_OF(c->pending.next, kube_req_t, queue);
    if (link__empty(&c->idle) && c->n_conns >= c->lim.max_conns) break;
    if (!kube__take_token(c)) break;
    if (!link__empty(&c->idle)) {
      kube_conn_t *conn = WATCH__CONTAINER_OF(c->idle.next, kube_conn_t, idle);
      link__remove(&conn->idle);
      c->n_idle--;
      link__remove(&req->queue);
      conn->req = req;
      req->conn = conn;
      kube__conn_send(conn);
    } else if (c->n_conns < c->lim.max_conns) {
      link__remove(&req->queue);
      kube__conn_open(c, req, 1);
    } else {
      break;
    }
  }
  /* Only now, with queued requests served, are surplus idle connections closed. */
  while (c->n_idle > c->lim.max_idle) kube__conn_close(WATCH__CONTAINER_OF(c->idle.prev, kube_conn_t, idle));
}

/* ---- requests ---- */

static void kube__timer_cb(uv_timer_t *t) {
  kube_req_t *req = t->data;
  kube_client_t *c = req->c;
  if (req->deferred_err) {
    kube__finish(req, req->deferred_err, req->deferred_msg);
    return;
  }
  if (req->retry_wait) {
    req->retry_wait = 0;
    uint64_t now = uv_now(c->loop);
    uv_timer_start(&req->timer, kube__timer_cb, req->deadline > now ? req->deadline - now : 1, 0);
    link__push_back(&c->pending, &req->queue);
    kube__kick(c);
    return;
  }
  buf_t m = BUF_INIT;
  const char *phase = req->conn ? (req->conn->state == CONN_RESOLVING    ? "resolving the host"
                                   : req->conn->state == CONN_CONNECTING ? "connecting"
                                   : req->conn->state == CONN_TUNNEL     ? "waiting for the proxy to open a tunnel"
                                   : req->conn->state == CONN_HANDSHAKE  ? "in the TLS handshake"
                                                                         : "waiting for the response")
                                : "waiting for a free connection";
  buf_printf(&m, "%s on %s timed out after %llu ms (%s)", req->what, c->hostport, (unsigned long long)req->timeout_ms,
             phase);
  kube__finish(req, UV_ETIMEDOUT, m.data);
  buf_free(&m);
}

static int kube__bad_text(const char *s) { return s && strpbrk(s, "\r\n") != NULL; }

static int kube__refresh_token(kube_client_t *c) {
  if (!c->cfg.token_file) return 0;
  if (!c->token_force && uv_now(c->loop) - c->token_read_ms < c->lim.token_refresh_ms) return 0;
  c->token_force = 0;
  c->token_read_ms = uv_now(c->loop);
  char *t;
  size_t n;
  /* A small read from a projected-volume tmpfs, once a minute at most. */
  int r = watch__read_file(c->cfg.token_file, 1u << 20, &t, &n);
  if (r) {
    LOG_W("cannot re-read the bearer token file; keeping the previous token", "file", c->cfg.token_file, "error",
          uv_strerror(r));
    return 0;
  }
  while (n && (t[n - 1] == '\n' || t[n - 1] == '\r' || t[n - 1] == ' ')) t[--n] = 0;
  if (!c->token || strcmp(c->token, t)) c->cred_gen++;
  free(c->token);
  c->token = t;
  return 0;
}

static const char *kube__current_token(kube_client_t *c) {
  if (c->cfg.exec) return c->exec_token;
  kube__refresh_token(c);
  return c->token;
}

static kube_req_t *kube__req_new(kube_client_t *c, const kube_req_opts_t *o, kube_response_cb cb, void *data) {
  if (c->closing) return NULL;
  kube_req_t *req = calloc(1, sizeof *req);
  if (!req) return NULL;
  req->c = c;
  req->cb = cb;
  req->data = data;
  link__init(&req->queue);
  link__init(&req->all);
  const char *method = o->method ? o->method : "GET";
  const char *path = o->path ? o->path : "/";
  req->idempotent = !strcmp(method, "GET") || !strcmp(method, "HEAD") || !strcmp(method, "PUT") ||
                    !strcmp(method, "DELETE") || !strcmp(method, "OPTIONS");
  req->no_body = !strcmp(method, "HEAD");
  req->timeout_ms = o->timeout_ms ? o->timeout_ms : c->lim.default_timeout_ms;
  req->deadline = uv_now(c->loop) + req->timeout_ms;
  req->retry_mode = o->retry;
  req->on_body = o->on_body;
  req->on_head = o->on_head;
  buf_t w = BUF_INIT;
  int bad = kube__bad_text(method) || kube__bad_text(path) || kube__bad_text(o->content_type) ||
            kube__bad_text(o->accept) || strchr(method, ' ') || strchr(path, ' ') || path[0] != '/';
  for (size_t i = 0; i < o->n_headers; i++)
    bad |= !o->headers[i].name || !o->headers[i].value || kube__bad_text(o->headers[i].name) ||
           kube__bad_text(o->headers[i].value) || strchr(o->headers[i].name, ':');
  int r = buf_printf(&w, "%s %s", method, path);
  if (r || !(req->what = buf_steal(&w))) { free(req); buf_free(&w); return NULL; }
  buf_t *b = &req->out;
  /* The caller may name the host (as its URL spells it) and itself. */
  const char *host = c->hostport, *agent = "rudder";
  for (size_t i = 0; !bad && i < o->n_headers; i++) {
    if (!strcasecmp(o->headers[i].name, "Host")) host = o->headers[i].value;
    else if (!strcasecmp(o->headers[i].name, "User-Agent")) agent = o->headers[i].value;
  }
  /* Through a proxy, plain http names the whole URL in the request line. */
  r |= buf_printf(b, "%s %s%s%s%s HTTP/1.1\r\nHost: %s\r\nUser-Agent: %s\r\nAccept: %s\r\n", method,
                  c->proxied_http ? "http://" : "", c->proxied_http ? host : "", c->cfg.base_path ? c->cfg.base_path : "",
                  path, host, agent, o->accept ? o->accept : "application/json");
  if (c->proxied_http && c->cfg.proxy_auth) r |= buf_printf(b, "Proxy-Authorization: %s\r\n", c->cfg.proxy_auth);
  if (c->cfg.impersonate_user) r |= buf_printf(b, "Impersonate-User: %s\r\n", c->cfg.impersonate_user);
  if (o->body || !strcmp(method, "POST") || !strcmp(method, "PUT") || !strcmp(method, "PATCH")) {
    if (o->body) r |= buf_printf(b, "Content-Type: %s\r\n", o->content_type ? o->content_type : "application/json");
    r |= buf_printf(b, "Content-Length: %zu\r\n", o->body ? o->body_len : 0);
  }
  for (size_t i = 0; !bad && i < o->n_headers; i++)
    if (strcasecmp(o->headers[i].name, "Host") && strcasecmp(o->headers[i].name, "User-Agent"))
      r |= buf_printf(b, "%s: %s\r\n", o->headers[i].name, o->headers[i].value);
  /* The blank line and the body are added at send time, after the Authorization header. */
  if (o->body) r |= buf_append(&req->payload, o->body, o->body_len);
  if (r) {
    buf_free(b);
    buf_free(&req->payload);
    free(req->what);
    free(req);
    return NULL;
  }
  uv_timer_init(c->loop, &req->timer);
  req->timer.data = req;
  c->objects++;
  link__push_back(&c->reqs, &req->all);
  if (bad) {
    /* Reported through the callback like any failure, but never from inside kube_request. */
    req->deferred_err = UV_EINVAL;
    buf_t m = BUF_INIT;
    buf_printf(&m, "invalid request %s: method, path and headers must not contain line breaks, and the path must "
               "start with '/'", req->what);
    req->deferred_msg = buf_steal(&m);
    uv_timer_start(&req->timer, kube__timer_cb, 0, 0);
  } else {
    uv_timer_start(&req->timer, kube__timer_cb, req->timeout_ms, 0);
  }
  return req;
}

kube_req_t *kube_request(kube_client_t *c, const kube_req_opts_t *o, kube_response_cb cb, void *data) {
  kube_req_t *req = kube__req_new(c, o, cb, data);
  if (!req) return NULL;
  if (!req->deferred_err) {
    link__push_back(&c->pending, &req->queue);
    kube__kick(c);
  }
  return req;
}

void kube_request_cancel(kube_req_t *req) {
  if (!req || req->done) return;
  kube__finish(req, UV_ECANCELED, "the request was cancelled");
}

kube_req_t *kube_get(kube_client_t *c, const char *path, kube_response_cb cb, void *data) {
  kube_req_opts_t o = {.method = "GET", .path = path};
  return kube_request(c, &o, cb, data);
}

static kube_req_t *kube__send_json_mode(kube_client_t *c, const char *method, const char *path, const char *ctype,
                                        const char *json, int retry, kube_response_cb cb, void *data) {
  kube_req_opts_t o = {.method = method, .path = path, .content_type = ctype, .body = json,
                       .body_len = json ? strlen(json) : 0, .retry = retry};
  return kube_request(c, &o, cb, data);
}

static kube_req_t *kube__send_json(kube_client_t *c, const char *method, const char *path, const char *ctype,
                                   const char *json, kube_response_cb cb, void *data) {
  return kube__send_json_mode(c, method, path, ctype, json, KUBE_RETRY_AUTO, cb, data);
}

kube_req_t *kube_apply(kube_client_t *c, const char *path, const char *json, const char *field_manager, bool force,
                       kube_response_cb cb, void *data) {
  buf_t p = BUF_INIT;
  int r = buf_puts(&p, path);
  r |= kube_query_add(&p, "fieldManager", field_manager ? field_manager : "rudder");
  if (force) r |= kube_query_add(&p, "force", "true");
  /* Applying the same configuration twice is harmless: server errors are retried like a PUT's. */
  kube_req_t *req = r ? NULL : kube__send_json_mode(c, "PATCH", p.data, "application/apply-patch+yaml", json,
                                                    KUBE_RETRY_ALWAYS, cb, data);
  buf_free(&p);
  return req;
}

kube_req_t *kube_merge_patch(kube_client_t *c, const char *path, const char *json, kube_response_cb cb, void *data) {
  return kube__send_json(c, "PATCH", path, "application/merge-patch+json", json, cb, data);
}

kube_req_t *kube_create(kube_client_t *c, const char *path, const char *json, kube_response_cb cb, void *data) {
  return kube__send_json(c, "POST", path, "application/json", json, cb, data);
}

kube_req_t *kube_update(kube_client_t *c, const char *path, const char *json, kube_response_cb cb, void *data) {
  return kube__send_json(c, "PUT", path, "application/json", json, cb, data);
}

kube_req_t *kube_delete(kube_client_t *c, const char *path, const char *propagation, kube_response_cb cb, void *data) {
  kube_delete_opts_t o = {.propagation = propagation, .grace_period_seconds = -1};
  return kube_delete_ex(c, path, &o, cb, data);
}

kube_req_t *kube_delete_ex(kube_client_t *c, const char *path, const kube_delete_opts_t *d, kube_response_cb cb,
                           void *data) {
  if (!d || (!d->propagation && !d->precondition_uid && !d->precondition_rv && d->grace_period_seconds < 0 &&
             !d->dry_run))
    return kube__send_json(c, "DELETE", path, NULL, NULL, cb, data);
  cJSON *o = cJSON_CreateObject(), *pre = NULL;
  char *json = NULL;
  int ok = o && cJSON_AddStringToObject(o, "kind", "DeleteOptions") && cJSON_AddStringToObject(o, "apiVersion", "v1");
  if (ok && d->propagation) ok = cJSON_AddStringToObject(o, "propagationPolicy", d->propagation) != NULL;
  if (ok && d->grace_period_seconds >= 0)
    ok = cJSON_AddNumberToObject(o, "gracePeriodSeconds", (double)d->grace_period_seconds) != NULL;
  if (ok && d->dry_run) {
    cJSON *dr = cJSON_AddArrayToObject(o, "dryRun");
    ok = dr && cJSON_AddItemToArray(dr, cJSON_CreateString("All"));
  }
  if (ok && (d->precondition_uid || d->precondition_rv)) {
    ok = (pre = cJSON_AddObjectToObject(o, "preconditions")) != NULL;
    if (ok && d->precondition_uid) ok = cJSON_AddStringToObject(pre, "uid", d->precondition_uid) != NULL;
    if (ok && d->precondition_rv) ok = cJSON_AddStringToObject(pre, "resourceVersion", d->precondition_rv) != NULL;
  }
  if (ok) json = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  if (!json) return NULL;
  kube_req_t *req = kube__send_json(c, "DELETE", path, "application/json", json, cb, data);
  free(json);
  return req;
}

kube_req_t *kube_json_patch(kube_client_t *c, const char *path, const char *json, kube_response_cb cb, void *data) {
  return kube__send_json(c, "PATCH", path, "application/json-patch+json", json, cb, data);
}

int kube_status_path(buf_t *b, const char *path) {
  size_t n = strcspn(path, "?");
  int r = buf_append(b, path, n);
  r |= buf_puts(b, "/status");
  r |= buf_puts(b, path + n);
  return r ? UV_ENOMEM : 0;
}

kube_req_t *kube_update_status(kube_client_t *c, const char *path, const char *json, kube_response_cb cb, void *data) {
  buf_t p = BUF_INIT;
  kube_req_t *req = kube_status_path(&p, path) ? NULL : kube_update(c, p.data, json, cb, data);
  buf_free(&p);
  return req;
}

kube_req_t *kube_merge_patch_status(kube_client_t *c, const char *path, const char *json, kube_response_cb cb,
                                    void *data) {
  buf_t p = BUF_INIT;
  kube_req_t *req = kube_status_path(&p, path) ? NULL : kube_merge_patch(c, p.data, json, cb, data);
  buf_free(&p);
  return req;
}

kube_req_t *kube_apply_status(kube_client_t *c, const char *path, const char *json, const char *field_manager,
                              bool force, kube_response_cb cb, void *data) {
  buf_t p = BUF_INIT;
  kube_req_t *req = kube_status_path(&p, path) ? NULL : kube_apply(c, p.data, json, field_manager, force, cb, data);
  buf_free(&p);
  return req;
}

/* ---- retries ---- */

/* Retry-After in seconds (the only form the API server sends) or as an HTTP date (registries and
 * CDNs may send one: the seconds until then, 0 when it is past); -1 when absent or unparsable. */
static long kube__retry_after(const kube_req_t *req) {
  const char *v = watch_http_header(&req->headers, "retry-after");
  if (!v) return -1;
  char *end;
  long n = strtol(v, &end, 10);
  while (*end == ' ') end++;
  if (end != v && !*end) return n < 0 ? -1 : n;
  /* IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT" */
  struct tm tm = {0};
  char wd[4], mon[4];
  int used = 0;
  static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
  if (sscanf(v, "%3[A-Za-z], %2d %3[A-Za-z] %4d %2d:%2d:%2d GMT%n", wd, &tm.tm_mday, mon, &tm.tm_year, &tm.tm_hour,
             &tm.tm_min, &tm.tm_sec, &used) != 7 || v[used] || strlen(wd) != 3)
    return -1;
  const char *m = strstr(months, mon);
  if (strlen(mon) != 3 || !m || (m - months) % 3) return -1;
  tm.tm_mon = (int)((m - months) / 3);
  tm.tm_year -= 1900;
  int64_t at = (int64_t)timegm(&tm), now = (int64_t)time(NULL);
  return at > now ? (long)(at - now) : 0;
}

/* Decides whether a complete response is retried instead of delivered: a 401 once with fresh
 * credentials, and 429/5xx with backoff (or Retry-After) while the deadline allows. */
static int kube__maybe_retry(kube_req_t *req, int status) {
  kube_client_t *c = req->c;
  if (req->watch || c->closing) return 0;
  if (status == 401 && !req->auth_retried && (c->cfg.exec || c->cfg.token_file)) {
    req->auth_retried = 1;
    /* Only the first 401 for a token throws it away; requests still in flight with it must not
     * throw away its successor. */
    if (req->cred_gen == c->cred_gen) {
      if (c->cfg.exec) {
        c->exec_have = 0;
      } else {
        c->token_force = 1;
      }
    }
    c->stats.auth_retries++;
    LOG_I("401 Unauthorized; retrying with refreshed credentials", "request", req->what);
    buf_reset(&req->body);
    link__push_back(&c->pending, &req->queue);
    kube__kick(c);
    return 1;
  }
  if (req->retry_mode == KUBE_RETRY_NEVER || c->lim.max_retries < 0 || req->retries >= c->lim.max_retries) return 0;
  int server_error = status == 500 || status == 502 || status == 503 || status == 504;
  if (!(status == 429 || (server_error && (req->retry_mode == KUBE_RETRY_ALWAYS || req->idempotent)))) return 0;
  uint64_t delay;
  long ra = kube__retry_after(req);
  if (ra >= 0) {
    delay = (uint64_t)ra * 1000;
  } else {
    delay = c->lim.retry_base_ms << (req->retries < 20 ? req->retries : 20);
    if (delay > c->lim.retry_max_ms) delay = c->lim.retry_max_ms;
    delay = delay / 2 + (uint64_t)rand() % (delay / 2 + 1); /* jitter: 50-100% */
  }
  if (delay > c->lim.retry_max_ms) delay = c->lim.retry_max_ms;
  uint64_t now = uv_now(c->loop);
  if (now + delay >= req->deadline) return 0; /* no time left: the caller gets this response */
  req->retries++;
  c->stats.retries++;
  char st[16], ms[32];
  snprintf(st, sizeof st, "%d", status);
  snprintf(ms, sizeof ms, "%llu", (unsigned long long)delay);
  LOG_D("retrying a request", "request", req->what, "status", st, "delay_ms", ms);
  buf_reset(&req->body);
  req->retry_wait = 1;
  uv_timer_start(&req->timer, kube__timer_cb, delay, 0);
  return 1;
}

/* ---- exec credential plugins ---- */

typedef struct kube__exec_run_s {
  kube_client_t *c;   /* NULL once the client gave up on it */
  uv_process_t proc;
  uv_pipe_t out, err;
  uv_timer_t timer;
  buf_t obuf, ebuf;
  int refs;           /* handles not yet closed */
  int exited, out_eof, err_eof, closing, timed_out, spawn_err;
  int64_t exit_status;
  int term_signal;
} kube__exec_run_t;

/* Fails every request waiting to be sent (used when credentials cannot be had). */
static void kube__fail_waiting(kube_client_t *c, int err, const char *msg) {
  kube__link_t *lists[] = {&c->pending_watch, &c->pending};
  for (int i = 0; i < 2; i++)
    while (!link__empty(lists[i])) kube__finish(WATCH__CONTAINER_OF(lists[i]->next, kube_req_t, queue), err, msg);
}

/* Parses an RFC 3339 time ("2006-01-02T15:04:05Z", fractions and offsets allowed); -1 when invalid. */
static int64_t kube__parse_time(const char *s) {
  struct tm tm = {0};
  int n = 0;
  if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
             &tm.tm_sec, &n) != 6)
    return -1;
  const char *p = s + n;
  if (*p == '.') for (p++; *p >= '0' && *p <= '9'; p++) {}
  long off = 0;
  if (*p == 'Z' || *p == 'z') p++;
  else if (*p == '+' || *p == '-') {
    int oh, om;
    if (sscanf(p + 1, "%2d:%2d", &oh, &om) != 2) return -1;
    off = (oh * 3600L + om * 60L) * (*p == '-' ? -1 : 1);
    p += 6;
  } else return -1;
  if (*p) return -1;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return (int64_t)timegm(&tm) - off;
}

/* Takes the plugin's checked answer: the token (or none), and the certificate and key (or none)
 * with conf built for them when they are new. expires is a Unix time, 0 when the answer does not
 * expire. */
static void kube__exec_apply(kube_client_t *c, const char *tok, const char *cert, const char *key,
                             watch_tls_conf_t *conf, int64_t expires, buf_t *m) {
  char *t = tok ? strdup(tok) : NULL, *ct = conf ? strdup(cert) : NULL, *k = conf ? strdup(key) : NULL;
  if ((tok && !t) || (conf && (!ct || !k))) {
    free(t); free(ct); free(k);
    watch_tls_conf_unref(conf);
    buf_puts(m, "out of memory");
    return;
  }
  if (cert && !c->tls)
    LOG_W("exec credential plugin returned a client certificate for a server without TLS; it is not used", "plugin",
          c->cfg.exec->command, "server", c->cfg.server ? c->cfg.server : "");
  /* Every answer is new credentials: a 401 for a request sent before it must not throw it away. */
  c->cred_gen++;
  free(c->exec_token);
  c->exec_token = t;
  watch_tls_conf_t *old = c->exec_conf;
  if (conf || (!cert && old)) {
    /* New connections present the new certificate (or, when the plugin stopped returning one, the
     * kubeconfig's own); idle ones with the old go now, busy ones when their response is done. */
    free(c->exec_cert);
    free(c->exec_key);
    c->exec_cert = ct;
    c->exec_key = k;
    c->exec_conf = conf;
    watch_tls_conf_unref(old); /* sessions still on it keep it alive */
    kube__drain_stale(c);
    LOG_I(conf ? "using the client certificate from the exec credential plugin for new connections"
               : "the exec credential plugin returned no client certificate; new connections use the kubeconfig's",
          "plugin", c->cfg.exec->command);
  }
  c->exec_have = 1;
  c->exec_expiry = 0;
  if (expires) {
    int64_t left = (expires - (int64_t)time(NULL)) * 1000;
    c->exec_expiry = uv_now(c->loop) + (uint64_t)(left > KUBE__MIN_CRED_MS ? left : KUBE__MIN_CRED_MS);
  }
}

static void kube__exec_result(kube_client_t *c, kube__exec_run_t *run) {
  const kube_exec_t *e = c->cfg.exec;
  buf_t m = BUF_INIT;
  if (run->spawn_err) {
    buf_printf(&m, "exec credential plugin \"%s\" could not be run: %s", e->command, uv_strerror(run->spawn_err));
    if (e->install_hint) buf_printf(&m, " (%s)", e->install_hint);
  } else if (run->timed_out) {
    buf_printf(&m, "exec credential plugin \"%s\" did not finish within %llu ms and was killed", e->command,
               (unsigned long long)c->lim.exec_timeout_ms);
  } else if (run->exit_status || run->term_signal) {
    if (run->term_signal) buf_printf(&m, "exec credential plugin \"%s\" was killed by signal %d", e->command, run->term_signal);
    else buf_printf(&m, "exec credential plugin \"%s\" exited with status %lld", e->command, (long long)run->exit_status);
    if (run->ebuf.len) {
      while (run->ebuf.len && (run->ebuf.data[run->ebuf.len - 1] == '\n' || run->ebuf.data[run->ebuf.len - 1] == ' '))
        run->ebuf.data[--run->ebuf.len] = 0;
      buf_printf(&m, ": %.*s", (int)(run->ebuf.len < 500 ? run->ebuf.len : 500), run->ebuf.data);
    }
  } else {
    cJSON *j = run->obuf.len ? cJSON_ParseWithLength(run->obuf.data, run->obuf.len) : NULL;
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "kind"));
    const char *api = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "apiVersion"));
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "status");
    const cJSON *jtok = cJSON_GetObjectItemCaseSensitive(st, "token");
    const cJSON *jcert = cJSON_GetObjectItemCaseSensitive(st, "clientCertificateData");
    const cJSON *jkey = cJSON_GetObjectItemCaseSensitive(st, "clientKeyData");
    const cJSON *jexp = cJSON_GetObjectItemCaseSensitive(st, "expirationTimestamp");
    /* As client-go reads it, an empty string is the same as a missing field. */
    const char *tok = cJSON_GetStringValue(jtok), *cert = cJSON_GetStringValue(jcert);
    const char *key = cJSON_GetStringValue(jkey), *exp = cJSON_GetStringValue(jexp);
    if (tok && !*tok) tok = NULL;
    if (cert && !*cert) cert = NULL;
    if (key && !*key) key = NULL;
    int64_t expt = exp ? kube__parse_time(exp) : 0;
    const char *nonstr = jtok && !cJSON_IsString(jtok) && !cJSON_IsNull(jtok)       ? "token"
                         : jcert && !cJSON_IsString(jcert) && !cJSON_IsNull(jcert) ? "clientCertificateData"
                         : jkey && !cJSON_IsString(jkey) && !cJSON_IsNull(jkey)    ? "clientKeyData"
                         : jexp && !cJSON_IsString(jexp) && !cJSON_IsNull(jexp)    ? "expirationTimestamp"
                                                                                   : NULL;
    watch_tls_conf_t *conf = NULL;
    if (!j) buf_printf(&m, "exec credential plugin \"%s\" printed no valid JSON", e->command);
    else if (!kind || strcmp(kind, "ExecCredential"))
      buf_printf(&m, "exec credential plugin \"%s\" printed kind \"%s\", not ExecCredential", e->command, kind ? kind : "");
    else if (!api || strcmp(api, e->api_version))
      buf_printf(&m, "exec credential plugin \"%s\" printed apiVersion \"%s\", want \"%s\"", e->command, api ? api : "",
                 e->api_version);
    else if (!cJSON_IsObject(st))
      buf_printf(&m, "exec credential plugin \"%s\" printed no status object", e->command);
    else if (nonstr)
      buf_printf(&m, "exec credential plugin \"%s\" returned a status.%s that is not a string", e->command, nonstr);
    else if (!tok && !cert && !key)
      buf_printf(&m, "exec credential plugin \"%s\" returned neither status.token nor status.clientCertificateData "
                 "with status.clientKeyData", e->command);
    else if (cert && !key)
      buf_printf(&m, "exec credential plugin \"%s\" returned status.clientCertificateData without "
                 "status.clientKeyData (a client certificate needs its key)", e->command);
    else if (key && !cert)
      buf_printf(&m, "exec credential plugin \"%s\" returned status.clientKeyData without "
                 "status.clientCertificateData (a client key needs its certificate)", e->command);
    else if (tok && kube__bad_text(tok))
      buf_printf(&m, "exec credential plugin \"%s\" returned no usable status.token (it holds a line break)", e->command);
    else if (expt < 0)
      buf_printf(&m, "exec credential plugin \"%s\" returned an invalid status.expirationTimestamp \"%s\"", e->command, exp);
    else if (cert && c->tls && (!c->exec_cert || strcmp(c->exec_cert, cert) || strcmp(c->exec_key, key))) {
      /* A new certificate: sessions with it share the kubeconfig's CA and verification settings. */
      char *err = NULL;
      if (watch_tls_conf_with_cert(&conf, &c->tlsconf, cert, strlen(cert), key, strlen(key), &err)) {
        const char *why = err ? err : "out of memory";
        if (!strncmp(why, "TLS: ", 5)) why += 5;
        buf_printf(&m, "exec credential plugin \"%s\" returned an unusable client certificate or key: %s", e->command,
                   why);
      }
      free(err);
    }
    if (!m.len) kube__exec_apply(c, tok, cert, key, conf, exp ? expt : 0, &m);
    cJSON_Delete(j);
  }
  if (m.len) {
    LOG_W("exec credential plugin failed", "error", m.data);
    kube__fail_waiting(c, UV_EACCES, m.data);
  }
  buf_free(&m);
  kube__kick(c);
}

static void kube__exec_closed(uv_handle_t *h) {
  kube__exec_run_t *run = h->data;
  if (--run->refs) return;
  kube_client_t *c = run->c;
  if (c) {
    c->exec_run = NULL;
    if (!c->closing) kube__exec_result(c, run);
  }
  buf_free(&run->obuf);
  buf_free(&run->ebuf);
  free(run);
  /* The client counted the run as one of its objects whether or not it still cares. */
  if (c) kube__object_gone(c);
}

static void kube__exec_close(kube__exec_run_t *run) {
  if (run->closing) return;
  run->closing = 1;
  uv_close((uv_handle_t *)&run->proc, kube__exec_closed);
  uv_close((uv_handle_t *)&run->out, kube__exec_closed);
  uv_close((uv_handle_t *)&run->err, kube__exec_closed);
  uv_close((uv_handle_t *)&run->timer, kube__exec_closed);
}

static void kube__exec_maybe_done(kube__exec_run_t *run) {
  if (run->exited && run->out_eof && run->err_eof) kube__exec_close(run);
}

static void kube__exec_exit_cb(uv_process_t *p, int64_t status, int sig) {
  kube__exec_run_t *run = p->data;
  run->exited = 1;
  run->exit_status = status;
  run->term_signal = sig;
  kube__exec_maybe_done(run);
}

static void kube__exec_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b) {
  static char tmp[16384]; /* consumed synchronously in the read callback */
  *b = uv_buf_init(tmp, sizeof tmp);
}

static void kube__exec_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b) {
  kube__exec_run_t *run = s->data;
  int is_out = s == (uv_stream_t *)&run->out;
  buf_t *dst = is_out ? &run->obuf : &run->ebuf;
  if (n > 0) {
    size_t max = is_out ? KUBE__MAX_EXEC_OUTPUT : 65536;
    if (dst->len + (size_t)n <= max) buf_append(dst, b->base, (size_t)n);
    return;
  }
  if (n == 0) return;
  uv_read_stop(s);
  if (is_out) run->out_eof = 1;
  else run->err_eof = 1;
  kube__exec_maybe_done(run);
}

static void kube__exec_timeout(uv_timer_t *t) {
  kube__exec_run_t *run = t->data;
  run->timed_out = 1;
  if (!run->exited) uv_process_kill(&run->proc, SIGKILL);
  kube__exec_close(run);
}

extern char **environ;

/* Starts the plugin; requests wait in the queues until it has answered. */
static void kube__exec_start(kube_client_t *c) {
  const kube_exec_t *e = c->cfg.exec;
  kube__exec_run_t *run = calloc(1, sizeof *run);
  size_t nenv = 0;
  while (environ[nenv]) nenv++;
  char **args = calloc(e->n_args + 2, sizeof *args);
  char **env = calloc(nenv + e->n_env + 2, sizeof *env);
  buf_t info = BUF_INIT;
  if (!run || !args || !env ||
      buf_printf(&info, "KUBERNETES_EXEC_INFO={\"kind\":\"ExecCredential\",\"apiVersion\":\"%s\",\"spec\":{\"interactive\":false}}",
                 e->api_version)) {
    free(run); free(args); free(env); buf_free(&info);
    kube__fail_waiting(c, UV_ENOMEM, "out of memory starting the exec credential plugin");
    return;
  }
  args[0] = e->command;
  for (size_t i = 0; i < e->n_args; i++) args[i + 1] = e->args[i];
  size_t k = 0;
  for (size_t i = 0; i < nenv; i++) env[k++] = environ[i];
  for (size_t i = 0; i < e->n_env; i++) env[k++] = e->env[i];
  env[k++] = info.data;
  run->c = c;
  c->exec_run = run;
  c->objects++;
  c->stats.exec_runs++;
  uv_pipe_init(c->loop, &run->out, 0);
  uv_pipe_init(c->loop, &run->err, 0);
  uv_timer_init(c->loop, &run->timer);
  run->proc.data = run->out.data = run->err.data = run->timer.data = run;
  run->refs = 4;
  uv_stdio_container_t stdio[3] = {
      {.flags = UV_IGNORE},
      {.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE, .data.stream = (uv_stream_t *)&run->out},
      {.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE, .data.stream = (uv_stream_t *)&run->err},
  };
  uv_process_options_t po = {.exit_cb = kube__exec_exit_cb, .file = e->command, .args = args, .env = env,
                             .stdio_count = 3, .stdio = stdio};
  int r = uv_spawn(c->loop, &run->proc, &po);
  free(args);
  free(env);
  buf_free(&info);
  if (r) {
    run->spawn_err = r;
    kube__exec_close(run);
    return;
  }
  uv_read_start((uv_stream_t *)&run->out, kube__exec_alloc, kube__exec_read);
  uv_read_start((uv_stream_t *)&run->err, kube__exec_alloc, kube__exec_read);
  uv_timer_start(&run->timer, kube__exec_timeout, c->lim.exec_timeout_ms, 0);
}

/* True when requests can be sent now; otherwise starts the plugin (once) and returns 0. */
static int kube__creds_ready(kube_client_t *c) {
  if (!c->cfg.exec) return 1;
  if (c->exec_run) return 0;
  if (c->exec_have && (!c->exec_expiry || uv_now(c->loop) < c->exec_expiry)) return 1;
  kube__exec_start(c);
  return 0;
}

/* The client is closing: kill a running plugin and forget it. */
static void kube__exec_abort(kube_client_t *c) {
  kube__exec_run_t *run = c->exec_run;
  if (!run) return;
  if (!run->exited && !run->closing && !run->spawn_err) uv_process_kill(&run->proc, SIGKILL);
  kube__exec_close(run);
}

/* ---- watches ---- */

kube_watch_t *kube_watch_start(kube_client_t *c, const char *path, kube_watch_event_cb ev, kube_watch_end_cb end,
                               void *data) {
  return kube_watch_start_accept(c, path, NULL, ev, end, data);
}

kube_watch_t *kube_watch_start_accept(kube_client_t *c, const char *path, const char *accept, kube_watch_event_cb ev,
                                      kube_watch_end_cb end, void *data) {
  kube_watch_t *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  kube_req_opts_t o = {.method = "GET", .path = path, .accept = accept, .timeout_ms = c->lim.watch_connect_timeout_ms};
  kube_req_t *req = kube__req_new(c, &o, NULL, NULL);
  if (!req) { free(w); return NULL; }
  w->req = req;
  w->ev = ev;
  w->end = end;
  w->data = data;
  watch_ndjson_init(&w->nd, c->lim.max_watch_line, kube__watch_event, w);
  req->watch = w;
  req->idempotent = 0; /* a watch that broke is the informer's to restart, from its resourceVersion */
  if (!req->deferred_err) {
    /* A dedicated connection outside the pool, opened from the loop rather than from inside this call. */
    link__push_back(&c->pending_watch, &req->queue);
    kube__kick(c);
  }
  return w;
}

static int kube__watch_bad(watch_ndjson_t *nd, const watch_objmeta_t *m, const char *why, void *data) {
  kube_watch_t *w = data;
  if (w->req->done) return UV_ECANCELED;
  w->bad(w, m->type, m->ns, m->name, m->rv, why, w->data);
  return w->req->done ? UV_ECANCELED : 0;
}

void kube_watch_on_bad_event(kube_watch_t *w, kube_watch_bad_cb cb) {
  w->bad = cb;
  w->nd.bad = cb ? kube__watch_bad : NULL;
}

void kube_watch_drop_managed_fields(kube_watch_t *w) { watch_ndjson_drop_managed_fields(&w->nd, 1); }

void kube_watch_stop(kube_watch_t *w) {
  if (!w || w->req->done) return;
  kube__finish(w->req, UV_ECANCELED, "the watch was stopped");
}

cJSON *kube_watch_take_object(kube_watch_t *w) { return watch_ndjson_take(&w->nd); }
