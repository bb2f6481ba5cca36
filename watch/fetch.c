#include "watch/fetch.h"
#include "watch/internal.h"
#include "watch/proxyenv.h"
#include "watch/url.h"
#include "base/b64.h"
#include "base/buf.h"
#include "base/gz.h"
#include "base/sha256.h"
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

typedef struct fetch__link_s {
  struct fetch__link_s *prev, *next;
} fetch__link_t;

static void fl__init(fetch__link_t *l) { l->prev = l->next = l; }
static int fl__empty(const fetch__link_t *l) { return l->next == l; }
static void fl__remove(fetch__link_t *l) {
  l->prev->next = l->next;
  l->next->prev = l->prev;
  fl__init(l);
}
static void fl__push_back(fetch__link_t *head, fetch__link_t *l) {
  l->prev = head->prev;
  l->next = head;
  head->prev->next = l;
  head->prev = l;
}

/* One kube_client_t per (scheme, host, port, TLS identity, proxy). */
typedef struct fetch__origin_s {
  fetch_t *f;
  char *key;
  kube_client_t *c;
  size_t active;       /* requests in flight on it */
  uint64_t last_used;
  fetch__link_t link;  /* in f->origins, least recently used first */
} fetch__origin_t;

struct fetch_s {
  uv_loop_t *loop;
  fetch_limits_t lim;
  watch_proxy_env_t px;
  watch_map_t by_key;  /* key -> origin */
  fetch__link_t origins, reqs;
  size_t n_origins;
  size_t objects;      /* origins closing, requests not yet freed, the sweep timer */
  uv_timer_t sweep;
  int closing;
  void (*close_cb)(void *);
  void *close_data;
  fetch_stats_t stats; /* requests, connections: of origins already closed */
};

struct fetch_req_s {
  fetch_t *f;
  fetch__link_t link;  /* in f->reqs until finished */
  fetch_cb cb;
  void *data;
  char *method;
  buf_t body;
  int has_body;
  char *content_type, *accept, *inm, *ims;
  kube_header_t *headers;
  size_t n_headers;
  char *ca, *cert, *key;
  size_t ca_len, cert_len, key_len;
  int has_tls, insecure;
  char *user, *pass, *bearer;
  int strip_auth;      /* a redirect went to another host: no credentials from now on */
  int pass_credentials, max_redirects, redirects;
  uint64_t timeout_ms, deadline;
  size_t max_body;
  int gzip;
  int (*on_body)(const char *p, size_t n, void *data);
  watch_url_t url;
  char *first_authority, *first_hostname;
  buf_t seen;          /* URLs requested so far, NUL-separated, for the loop message */
  fetch__origin_t *origin;
  kube_req_t *kreq;
  uv_timer_t timer;
  /* the response body */
  z_stream z;
  int z_on, z_end;
  buf_t out;
  size_t decoded;
  int limit_hit, reader_err, in_body, cancel_pending, done;
  int deferred_err;
  char *deferred_msg;
};

static void fetch__finish(fetch_req_t *r, int err, const char *msg, const kube_response_t *kres);
static void fetch__origin_close(fetch__origin_t *o);

/* ---- lifetime ---- */

static void fetch__object_gone(fetch_t *f) {
  assert(f->objects > 0);
  if (--f->objects || !f->closing) return;
  void (*cb)(void *) = f->close_cb;
  void *data = f->close_data;
  watch_proxy_env_free(&f->px);
  watch_map_free(&f->by_key);
  free(f);
  if (cb) cb(data);
}

static void fetch__sweep_closed(uv_handle_t *h) { fetch__object_gone(h->data); }

static void fetch__sweep_cb(uv_timer_t *t) {
  fetch_t *f = t->data;
  uint64_t now = uv_now(f->loop);
  for (fetch__link_t *l = f->origins.next; l != &f->origins;) {
    fetch__origin_t *o = WATCH__CONTAINER_OF(l, fetch__origin_t, link);
    l = l->next;
    if (!o->active && now - o->last_used >= f->lim.idle_timeout_ms) fetch__origin_close(o);
  }
}

int fetch_new(uv_loop_t *loop, const fetch_limits_t *lim, fetch_t **out) {
  *out = NULL;
  fetch_t *f = calloc(1, sizeof *f);
  if (!f) return UV_ENOMEM;
  f->loop = loop;
  f->lim = (fetch_limits_t){.max_clients = 64, .max_body = 64u << 20, .default_timeout_ms = 60000,
                            .idle_timeout_ms = 90000};
  if (lim) {
    if (lim->max_clients) f->lim.max_clients = lim->max_clients;
    if (lim->max_body) f->lim.max_body = lim->max_body;
    if (lim->default_timeout_ms) f->lim.default_timeout_ms = lim->default_timeout_ms;
    if (lim->idle_timeout_ms) f->lim.idle_timeout_ms = lim->idle_timeout_ms;
  }
  if (watch_proxy_env_from_environ(&f->px)) {
    free(f);
    return UV_ENOMEM;
  }
  fl__init(&f->origins);
  fl__init(&f->reqs);
  uv_timer_init(loop, &f->sweep);
  f->sweep.data = f;
  f->objects = 1;
  uint64_t every = f->lim.idle_timeout_ms < 10000 ? f->lim.idle_timeout_ms : 10000;
  uv_timer_start(&f->sweep, fetch__sweep_cb, every, every);
  uv_unref((uv_handle_t *)&f->sweep);
  *out = f;
  return 0;
}

static void fetch__origin_closed(void *data) {
  fetch__origin_t *o = data;
  fetch_t *f = o->f;
  free(o->key);
  free(o);
  fetch__object_gone(f);
}

/* Closes an origin's client (requests on it must be finished first). */
static void fetch__origin_close(fetch__origin_t *o) {
  fetch_t *f = o->f;
  kube_client_stats_t st = kube_client_get_stats(o->c);
  f->stats.requests += st.requests;
  f->stats.connections += st.connects;
  watch_map_del(&f->by_key, o->key);
  fl__remove(&o->link);
  f->n_origins--;
  kube_client_close(o->c, fetch__origin_closed, o);
}

void fetch_close(fetch_t *f, void (*cb)(void *data), void *data) {
  if (f->closing) return;
  f->closing = 1;
  f->close_cb = cb;
  f->close_data = data;
  while (!fl__empty(&f->reqs))
    fetch__finish(WATCH__CONTAINER_OF(f->reqs.next, fetch_req_t, link), UV_ECANCELED, "the fetcher was closed", NULL);
  while (!fl__empty(&f->origins)) fetch__origin_close(WATCH__CONTAINER_OF(f->origins.next, fetch__origin_t, link));
  uv_close((uv_handle_t *)&f->sweep, fetch__sweep_closed);
}

fetch_stats_t fetch_get_stats(const fetch_t *f) {
  fetch_stats_t s = f->stats;
  s.clients = f->n_origins;
  for (const fetch__link_t *l = f->origins.next; l != &f->origins; l = l->next) {
    const fetch__origin_t *o = WATCH__CONTAINER_OF(l, fetch__origin_t, link);
    kube_client_stats_t st = kube_client_get_stats(o->c);
    s.requests += st.requests;
    s.connections += st.connects;
  }
  return s;
}

const char *fetch_response_header(const fetch_response_t *res, const char *name) {
  return res->priv ? kube_response_header(res->priv, name) : NULL;
}

/* ---- messages ---- */

static const char *fetch__phrase(int st) {
  switch (st) {
  case 400: return "Bad Request";
  case 401: return "Unauthorized";
  case 402: return "Payment Required";
  case 403: return "Forbidden";
  case 404: return "Not Found";
  case 405: return "Method Not Allowed";
  case 406: return "Not Acceptable";
  case 407: return "Proxy Authentication Required";
  case 408: return "Request Timeout";
  case 409: return "Conflict";
  case 410: return "Gone";
  case 413: return "Content Too Large";
  case 416: return "Range Not Satisfiable";
  case 429: return "Too Many Requests";
  case 500: return "Internal Server Error";
  case 501: return "Not Implemented";
  case 502: return "Bad Gateway";
  case 503: return "Service Unavailable";
  case 504: return "Gateway Timeout";
  default: return "";
  }
}

const char *fetch_status_text(int status) { return fetch__phrase(status); }

/* Go's time.Duration formatting for whole milliseconds: "30s", "1.5s", "250ms", "2m0s". */
static void fetch__duration(uint64_t ms, char *b, size_t n) {
  if (ms < 1000) snprintf(b, n, "%llums", (unsigned long long)ms);
  else if (ms < 60000) {
    if (ms % 1000 == 0) snprintf(b, n, "%llus", (unsigned long long)(ms / 1000));
    else {
      char t[32];
      snprintf(t, sizeof t, "%llu.%03llu", (unsigned long long)(ms / 1000), (unsigned long long)(ms % 1000));
      size_t k = strlen(t);
      while (t[k - 1] == '0') t[--k] = 0;
      snprintf(b, n, "%ss", t);
    }
  } else {
    snprintf(b, n, "%llum%llus", (unsigned long long)(ms / 60000), (unsigned long long)(ms % 60000 / 1000));
  }
}

static const char *fetch__size(size_t n, char *b, size_t len) {
  if (n % (1u << 20) == 0) snprintf(b, len, "%zu MiB", n >> 20);
  else snprintf(b, len, "%zu bytes", n);
  return b;
}

/* ---- requests ---- */

static void fetch__req_closed(uv_handle_t *h) {
  fetch_req_t *r = h->data;
  fetch_t *f = r->f;
  free(r->method);
  buf_free(&r->body);
  free(r->content_type);
  free(r->accept);
  free(r->inm);
  free(r->ims);
  for (size_t i = 0; i < r->n_headers; i++) {
    free((char *)r->headers[i].name);
    free((char *)r->headers[i].value);
  }
  free(r->headers);
  free(r->ca);
  free(r->cert);
  free(r->key);
  free(r->user);
  free(r->pass);
  free(r->bearer);
  watch_url_free(&r->url);
  free(r->first_authority);
  free(r->first_hostname);
  buf_free(&r->seen);
  if (r->z_on) inflateEnd(&r->z);
  buf_free(&r->out);
  free(r->deferred_msg);
  free(r);
  fetch__object_gone(f);
}

static void fetch__release_kreq(fetch_req_t *r) {
  fetch__origin_t *o = r->origin;
  r->origin = NULL;
  if (o) {
    assert(o->active > 0);
    o->active--;
    o->last_used = uv_now(r->f->loop);
    /* Most recently used go last. */
    fl__remove(&o->link);
    fl__push_back(&r->f->origins, &o->link);
  }
}

/* Delivers the outcome once (kres: the response it is about, for headers) and frees r afterwards. */
static void fetch__finish(fetch_req_t *r, int err, const char *msg, const kube_response_t *kres) {
  if (r->done) return;
  r->done = 1;
  fetch_t *f = r->f;
  fl__remove(&r->link);
  uv_timer_stop(&r->timer);
  kube_req_t *k = r->kreq;
  r->kreq = NULL;
  if (k) kube_request_cancel(k); /* its callback sees r->kreq NULL and returns */
  fetch__release_kreq(r);
  buf_t m = BUF_INIT;
  int status = err ? 0 : kres ? kres->status : 0;
  if (err) {
    buf_puts(&m, msg ? msg : uv_strerror(err));
  } else if (status >= 400) {
    const char *reason = kres ? kube_response_header(kres, ":reason") : NULL;
    if (!reason || !*reason) reason = fetch__phrase(status);
    buf_printf(&m, "%d%s%s from %s", status, *reason ? " " : "", reason, r->url.shown);
  }
  if (status == 304) f->stats.not_modified++;
  fetch_response_t res = {
      .err = err,
      .errmsg = m.len ? m.data : NULL,
      .status = status,
      .url = r->url.clean ? r->url.clean : "",
      .body = r->out.data ? r->out.data : "",
      .body_len = r->out.len,
      .priv = err ? NULL : kres,
  };
  r->cb(&res, r->data);
  buf_free(&m);
  uv_close((uv_handle_t *)&r->timer, fetch__req_closed);
}

static void fetch__finishf(fetch_req_t *r, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fetch__finishf(fetch_req_t *r, int err, const char *fmt, ...) {
  buf_t m = BUF_INIT;
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(&m, fmt, ap);
  va_end(ap);
  fetch__finish(r, err, m.data, NULL);
  buf_free(&m);
}

static void fetch__timer_cb(uv_timer_t *t) {
  fetch_req_t *r = t->data;
  if (r->deferred_err) {
    fetch__finish(r, r->deferred_err, r->deferred_msg, NULL);
    return;
  }
  char d[32];
  fetch__duration(r->timeout_ms, d, sizeof d);
  fetch__finishf(r, UV_ETIMEDOUT, "timed out after %s fetching %s", d, r->url.shown);
}

static void fetch__hex(const void *p, size_t n, buf_t *b) {
  uint8_t h[32];
  base_sha256(p ? p : "", p ? n : 0, h);
  for (int i = 0; i < 8; i++) buf_printf(b, "%02x", h[i]);
}

/* The origin for r's URL through proxy (or NULL), created on first use. 0, or an error with *msg. */
static int fetch__origin_get(fetch_req_t *r, const watch_proxy_url_t *proxy, fetch__origin_t **out, buf_t *msg) {
  fetch_t *f = r->f;
  const watch_url_t *u = &r->url;
  int https = !strcmp(u->scheme, "https");
  buf_t key = BUF_INIT;
  buf_printf(&key, "%s|%s|%d|", u->scheme, u->host, u->port);
  if (https && r->has_tls) {
    buf_printf(&key, "%d|", r->insecure);
    fetch__hex(r->ca, r->ca_len, &key);
    buf_putc(&key, '|');
    fetch__hex(r->cert, r->cert_len, &key);
    buf_putc(&key, '|');
    fetch__hex(r->key, r->key_len, &key);
  }
  buf_putc(&key, '|');
  if (proxy) {
    buf_puts(&key, proxy->shown);
    if (proxy->auth) fetch__hex(proxy->auth, strlen(proxy->auth), &key);
  }
  if (!key.data) return UV_ENOMEM;
  fetch__origin_t *o = watch_map_get(&f->by_key, key.data);
  if (o) {
    buf_free(&key);
    *out = o;
    return 0;
  }
  /* Room for one more: idle origins go first, least recently used first. Busy ones stay (the
   * bound is then exceeded until they finish). */
  for (fetch__link_t *l = f->origins.next; f->n_origins >= f->lim.max_clients && l != &f->origins;) {
    fetch__origin_t *x = WATCH__CONTAINER_OF(l, fetch__origin_t, link);
    l = l->next;
    if (!x->active) fetch__origin_close(x);
  }
  kube_config_t cfg = {0};
  buf_t srv = BUF_INIT;
  buf_printf(&srv, "%s://%s%s%s:%d", u->scheme, strchr(u->host, ':') ? "[" : "", u->host,
             strchr(u->host, ':') ? "]" : "", u->port);
  cfg.server = srv.data;
  cfg.scheme = u->scheme;
  cfg.host = u->host;
  cfg.port = u->port;
  cfg.base_path = "";
  if (https && r->has_tls) {
    cfg.ca_pem = r->ca;
    cfg.ca_pem_len = r->ca_len;
    cfg.cert_pem = r->cert;
    cfg.cert_pem_len = r->cert_len;
    cfg.key_pem = r->key;
    cfg.key_pem_len = r->key_len;
    cfg.insecure_skip_tls_verify = r->insecure;
  }
  if (proxy) {
    cfg.proxy_host = proxy->host;
    cfg.proxy_port = proxy->port;
    cfg.proxy_auth = proxy->auth;
  }
  o = calloc(1, sizeof *o);
  char *err = NULL;
  int rc = o ? kube_client_new(f->loop, &cfg, &o->c, &err) : UV_ENOMEM;
  buf_free(&srv);
  if (rc) {
    buf_printf(msg, "fetching %s: %s", u->shown, err ? err : uv_strerror(rc));
    free(err);
    free(o);
    buf_free(&key);
    return rc;
  }
  kube_client_limits_t kl = {.max_body = f->lim.max_body, .default_timeout_ms = f->lim.default_timeout_ms,
                             .idle_timeout_ms = f->lim.idle_timeout_ms, .qps = -1};
  kube_client_set_limits(o->c, &kl);
  o->f = f;
  o->key = buf_steal(&key);
  o->last_used = uv_now(f->loop);
  fl__push_back(&f->origins, &o->link);
  void *old;
  if (!o->key || watch_map_put(&f->by_key, o->key, o, &old)) {
    f->n_origins++;
    f->objects++;
    fetch__origin_close(o);
    return UV_ENOMEM;
  }
  f->n_origins++;
  f->objects++;
  *out = o;
  return 0;
}

static int fetch__khead(const kube_response_t *res, void *data) {
  fetch_req_t *r = data;
  if (r->done || r->cancel_pending) return UV_ECANCELED;
  const char *ce = kube_response_header(res, "content-encoding");
  if (r->gzip && ce && (!strcasecmp(ce, "gzip") || !strcasecmp(ce, "x-gzip"))) {
    memset(&r->z, 0, sizeof r->z);
    if (inflateInit2(&r->z, 16 + MAX_WBITS) != Z_OK) return UV_ENOMEM;
    r->z_on = 1;
    return 0;
  }
  const char *cl = kube_response_header(res, "content-length");
  if (cl && strcmp(r->method, "HEAD") && strtoull(cl, NULL, 10) > r->max_body) {
    r->limit_hit = 1;
    return UV_E2BIG;
  }
  return 0;
}

/* Takes n decoded bytes: counted against max_body, then to the reader or the buffer. */
static int fetch__deliver(fetch_req_t *r, const char *p, size_t n) {
  if (!n) return 0;
  if (r->decoded + n > r->max_body) {
    r->limit_hit = 1;
    return UV_E2BIG;
  }
  r->decoded += n;
  r->f->stats.bytes += n;
  if (!r->on_body) return buf_append(&r->out, p, n) ? UV_ENOMEM : 0;
  r->in_body = 1;
  int rc = r->on_body(p, n, r->data);
  r->in_body = 0;
  if (r->cancel_pending) return UV_ECANCELED;
  if (rc) r->reader_err = rc;
  return rc;
}

static int fetch__kbody(const char *p, size_t n, void *data) {
  fetch_req_t *r = data;
  if (r->done || r->cancel_pending) return UV_ECANCELED;
  if (!r->z_on) return fetch__deliver(r, p, n);
  char tmp[16384];
  r->z.next_in = (Bytef *)p;
  r->z.avail_in = (uInt)n;
  while (r->z.avail_in) {
    if (r->z_end) {
      /* Another gzip member follows (Go's reader reads them all). */
      if (inflateReset(&r->z) != Z_OK) return UV_EPROTO;
      r->z_end = 0;
    }
    r->z.next_out = (Bytef *)tmp;
    r->z.avail_out = sizeof tmp;
    int zr = inflate(&r->z, Z_NO_FLUSH);
    if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
      r->reader_err = UV_EPROTO;
      return UV_EPROTO;
    }
    int rc = fetch__deliver(r, tmp, sizeof tmp - r->z.avail_out);
    if (rc) return rc;
    if (zr == Z_STREAM_END) r->z_end = 1;
    else if (zr == Z_BUF_ERROR && r->z.avail_out) break;
  }
  return 0;
}

static int fetch__send(fetch_req_t *r, buf_t *msg);

static int fetch__is_redirect(int st) { return st == 301 || st == 302 || st == 303 || st == 307 || st == 308; }

/* Go's isDomainOrSubdomain. */
static int fetch__domain_or_sub(const char *sub, const char *parent) {
  if (!strcmp(sub, parent)) return 1;
  if (strpbrk(sub, ":%")) return 0;
  size_t s = strlen(sub), p = strlen(parent);
  return s > p && !strcmp(sub + s - p, parent) && sub[s - p - 1] == '.';
}

static int fetch__seen(const fetch_req_t *r, const char *url) {
  for (size_t i = 0; i < r->seen.len; i += strlen(r->seen.data + i) + 1)
    if (!strcmp(r->seen.data + i, url)) return 1;
  return 0;
}

/* Follows a redirect as Go's http.Client does; returns 1 when r goes on (or was finished). */
static int fetch__redirect(fetch_req_t *r, const kube_response_t *res) {
  const char *loc = kube_response_header(res, "location");
  if (!loc || !*loc) return 0; /* delivered as it is, as Go does */
  char *next = NULL;
  const char *why = NULL;
  int rc = watch_url_resolve(r->url.clean, loc, &next, &why);
  watch_url_t nu;
  if (!rc) rc = watch_url_parse(next, &nu, &why);
  free(next);
  if (rc) {
    fetch__finishf(r, rc, "%d redirect from %s to an unusable Location: %s", res->status, r->url.shown, why);
    return 1;
  }
  if (r->redirects >= r->max_redirects) {
    int loop = fetch__seen(r, nu.clean);
    fetch__finishf(r, UV_ELOOP, "stopped after %d redirects at %s%s%s", r->redirects, r->url.shown,
                   loop ? ": a redirect loop, it leads back to " : "", loop ? nu.shown : "");
    watch_url_free(&nu);
    return 1;
  }
  r->redirects++;
  r->f->stats.redirects++;
  int st = res->status;
  if ((st == 301 || st == 302 || st == 303) && strcmp(r->method, "GET") && strcmp(r->method, "HEAD")) {
    free(r->method);
    r->method = strdup("GET");
    r->has_body = 0; /* and never again */
    if (!r->method) {
      watch_url_free(&nu);
      fetch__finish(r, UV_ENOMEM, "out of memory", NULL);
      return 1;
    }
  } else if (st == 301 || st == 302 || st == 303) {
    r->has_body = 0;
  }
  if (!r->pass_credentials && !r->strip_auth && strcmp(r->first_authority, nu.authority) &&
      !fetch__domain_or_sub(nu.hostname, r->first_hostname))
    r->strip_auth = 1;
  watch_url_free(&r->url);
  r->url = nu;
  buf_reset(&r->out);
  r->decoded = 0;
  buf_t m = BUF_INIT;
  rc = fetch__send(r, &m);
  if (rc) fetch__finish(r, rc, m.data, NULL);
  buf_free(&m);
  return 1;
}

static void fetch__kcb(const kube_response_t *res, void *data) {
  fetch_req_t *r = data;
  if (!r->kreq) return; /* cancelled by fetch__finish */
  r->kreq = NULL;
  fetch__release_kreq(r);
  char lim[32];
  if (res->err) {
    if (r->cancel_pending) fetch__finish(r, UV_ECANCELED, "the request was cancelled", NULL);
    else if (r->limit_hit)
      fetch__finishf(r, UV_E2BIG, "the body of %s is larger than the limit of %s%s", r->url.shown,
                     fetch__size(r->max_body, lim, sizeof lim), r->z_on ? " (after gzip decoding)" : "");
    else if (r->reader_err == UV_EPROTO && r->z_on)
      fetch__finishf(r, UV_EPROTO, "the body of %s is not valid gzip: %s", r->url.shown,
                     r->z.msg ? r->z.msg : "corrupt data");
    else if (r->reader_err)
      fetch__finishf(r, r->reader_err, "the reader of %s abandoned it: %s", r->url.shown,
                     watch__strerror(r->reader_err));
    else if (res->err == UV_ETIMEDOUT) {
      char d[32];
      fetch__duration(r->timeout_ms, d, sizeof d);
      fetch__finishf(r, UV_ETIMEDOUT, "timed out after %s fetching %s", d, r->url.shown);
    } else
      fetch__finishf(r, res->err, "fetching %s: %s", r->url.shown, res->errmsg ? res->errmsg : uv_strerror(res->err));
    return;
  }
  if (fetch__is_redirect(res->status) && r->max_redirects >= 0 && fetch__redirect(r, res)) return;
  if (res->status >= 200 && res->status < 300) {
    if (r->z_on && !r->z_end) {
      fetch__finishf(r, UV_EPROTO, "the body of %s ends in the middle of its gzip stream", r->url.shown);
      return;
    }
  } else if (res->body_len) {
    /* Other answers were buffered by the client (bounded by max_body); decoded here. */
    const char *ce = kube_response_header(res, "content-encoding");
    if (r->gzip && ce && !strcasecmp(ce, "gzip") && gz_is_gzip(res->body, res->body_len)) {
      unsigned char *d = NULL;
      size_t dl = 0;
      char e[128];
      if (!gz_decompress(res->body, res->body_len, r->max_body, &d, &dl, e, sizeof e)) buf_append(&r->out, d, dl);
      free(d);
    } else {
      buf_append(&r->out, res->body, res->body_len);
    }
  }
  fetch__finish(r, 0, NULL, res);
}

static int fetch__add_header(kube_header_t *h, size_t *n, const char *name, const char *value) {
  h[(*n)++] = (kube_header_t){name, value};
  return 0;
}

/* Sends r->url on its origin. 0, or an error with *msg (nothing was started). */
static int fetch__send(fetch_req_t *r, buf_t *msg) {
  fetch_t *f = r->f;
  const watch_url_t *u = &r->url;
  int https = !strcmp(u->scheme, "https");
  const char *perr;
  const watch_proxy_url_t *proxy = watch_proxy_env_for(&f->px, https, u->hostname, u->port, &perr);
  if (perr) {
    buf_printf(msg, "fetching %s: %s", u->shown, perr);
    return UV_EINVAL;
  }
  if (proxy && strcmp(proxy->scheme, "http")) {
    buf_printf(msg, "fetching %s: proxy %s (from %s): only http:// proxies are supported", u->shown, proxy->shown,
               proxy->from);
    return UV_EINVAL;
  }
  uint64_t now = uv_now(f->loop);
  if (now >= r->deadline) {
    char d[32];
    fetch__duration(r->timeout_ms, d, sizeof d);
    buf_printf(msg, "timed out after %s fetching %s", d, u->shown);
    return UV_ETIMEDOUT;
  }
  fetch__origin_t *o;
  int rc = fetch__origin_get(r, proxy, &o, msg);
  if (rc) return rc;
  buf_printf(&r->seen, "%s", u->clean);
  buf_append(&r->seen, "", 1);
  kube_header_t *h = calloc(r->n_headers + 8, sizeof *h);
  if (!h) { buf_puts(msg, "out of memory"); return UV_ENOMEM; }
  size_t n = 0;
  buf_t auth = BUF_INIT;
  fetch__add_header(h, &n, "Host", u->authority);
  if (!r->strip_auth) {
    if (r->bearer) buf_printf(&auth, "Bearer %s", r->bearer);
    else if (r->user) {
      buf_t up = BUF_INIT;
      char *enc = NULL;
      size_t el;
      buf_printf(&up, "%s:%s", r->user, r->pass ? r->pass : "");
      if (up.data && !b64_encode_alloc(up.data, up.len, &enc, &el)) buf_printf(&auth, "Basic %s", enc);
      free(enc);
      buf_free(&up);
    }
    if (auth.len) fetch__add_header(h, &n, "Authorization", auth.data);
  }
  if (r->inm) fetch__add_header(h, &n, "If-None-Match", r->inm);
  if (r->ims) fetch__add_header(h, &n, "If-Modified-Since", r->ims);
  if (r->gzip) fetch__add_header(h, &n, "Accept-Encoding", "gzip");
  for (size_t i = 0; i < r->n_headers; i++) {
    const char *name = r->headers[i].name;
    /* Go drops these on a redirect to another host, and body headers with the body. */
    if (r->strip_auth && (!strcasecmp(name, "Authorization") || !strcasecmp(name, "Www-Authenticate") ||
                          !strcasecmp(name, "Cookie") || !strcasecmp(name, "Cookie2") ||
                          !strcasecmp(name, "Proxy-Authorization") || !strcasecmp(name, "Proxy-Authenticate")))
      continue;
    if (!r->has_body && (!strcasecmp(name, "Content-Encoding") || !strcasecmp(name, "Content-Language") ||
                         !strcasecmp(name, "Content-Location") || !strcasecmp(name, "Content-Type")))
      continue;
    h[n++] = r->headers[i];
  }
  kube_req_opts_t ko = {
      .method = r->method,
      .path = u->target,
      .accept = r->accept ? r->accept : "*/*",
      .content_type = r->has_body ? r->content_type : NULL,
      .body = r->has_body ? (r->body.data ? r->body.data : "") : NULL,
      .body_len = r->has_body ? r->body.len : 0,
      .timeout_ms = r->deadline - now,
      .headers = h,
      .n_headers = n,
      .retry = KUBE_RETRY_AUTO,
      .on_body = fetch__kbody,
      .on_head = fetch__khead,
  };
  if (r->z_on) {
    inflateEnd(&r->z);
    r->z_on = r->z_end = 0;
  }
  r->limit_hit = r->reader_err = 0;
  r->kreq = kube_request(o->c, &ko, fetch__kcb, r);
  free(h);
  buf_free(&auth);
  if (!r->kreq) {
    buf_puts(msg, "out of memory");
    return UV_ENOMEM;
  }
  r->origin = o;
  o->active++;
  return 0;
}

static char *fetch__dup(const char *s) { return s ? strdup(s) : NULL; }

static char *fetch__blob(const char *p, size_t n) {
  if (!p) return NULL;
  char *o = malloc(n + 1);
  if (o) {
    memcpy(o, p, n);
    o[n] = 0;
  }
  return o;
}

fetch_req_t *fetch_request(fetch_t *f, const fetch_opts_t *o, fetch_cb cb, void *data) {
  if (f->closing) return NULL;
  fetch_req_t *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->f = f;
  r->cb = cb;
  r->data = data;
  fl__init(&r->link);
  int bad = 0;
  r->method = strdup(o->method ? o->method : "GET");
  bad |= !r->method;
  if (o->body) {
    r->has_body = 1;
    bad |= buf_append(&r->body, o->body, o->body_len) != 0;
  }
  bad |= (o->content_type && !(r->content_type = strdup(o->content_type))) || (o->accept && !(r->accept = strdup(o->accept))) ||
         (o->if_none_match && !(r->inm = strdup(o->if_none_match))) ||
         (o->if_modified_since && !(r->ims = strdup(o->if_modified_since)));
  if (o->n_headers && !(r->headers = calloc(o->n_headers, sizeof *r->headers))) bad = 1;
  for (size_t i = 0; !bad && i < o->n_headers; i++) {
    r->headers[i].name = fetch__dup(o->headers[i].name ? o->headers[i].name : "");
    r->headers[i].value = fetch__dup(o->headers[i].value ? o->headers[i].value : "");
    r->n_headers++;
    bad |= !r->headers[i].name || !r->headers[i].value;
  }
  if (o->tls) {
    r->has_tls = 1;
    r->insecure = o->tls->insecure_skip_verify;
    r->ca_len = o->tls->ca_len;
    r->cert_len = o->tls->cert_len;
    r->key_len = o->tls->key_len;
    bad |= (o->tls->ca_pem && !(r->ca = fetch__blob(o->tls->ca_pem, o->tls->ca_len))) ||
           (o->tls->cert_pem && !(r->cert = fetch__blob(o->tls->cert_pem, o->tls->cert_len))) ||
           (o->tls->key_pem && !(r->key = fetch__blob(o->tls->key_pem, o->tls->key_len)));
  }
  if (o->auth && o->auth->bearer) bad |= !(r->bearer = strdup(o->auth->bearer));
  else if (o->auth && o->auth->username)
    bad |= !(r->user = strdup(o->auth->username)) || (o->auth->password && !(r->pass = strdup(o->auth->password)));
  r->pass_credentials = o->pass_credentials;
  r->max_redirects = o->max_redirects ? o->max_redirects : 10;
  r->timeout_ms = o->timeout_ms ? o->timeout_ms : f->lim.default_timeout_ms;
  r->deadline = uv_now(f->loop) + r->timeout_ms;
  r->max_body = o->max_body ? o->max_body : f->lim.max_body;
  r->gzip = o->gzip;
  r->on_body = o->on_body;
  const char *why = NULL;
  int rc = o->url ? watch_url_parse(o->url, &r->url, &why) : UV_EINVAL;
  if (!o->url) why = "no URL";
  if (rc == UV_ENOMEM) bad = 1;
  if (!rc && !r->bearer && !r->user && r->url.user) {
    /* Userinfo in the URL is basic auth (as Go's client does), under the same redirect rules. */
    bad |= !(r->user = strdup(r->url.user)) || (r->url.pass && !(r->pass = strdup(r->url.pass)));
  }
  if (!rc) bad |= !(r->first_authority = strdup(r->url.authority)) || !(r->first_hostname = strdup(r->url.hostname));
  if (bad) {
    r->timer.data = NULL;
    f->objects++; /* balanced by fetch__req_closed */
    uv_timer_init(f->loop, &r->timer);
    r->timer.data = r;
    r->done = 1;
    uv_close((uv_handle_t *)&r->timer, fetch__req_closed);
    return NULL;
  }
  uv_timer_init(f->loop, &r->timer);
  r->timer.data = r;
  f->objects++;
  fl__push_back(&f->reqs, &r->link);
  buf_t m = BUF_INIT;
  if (rc) {
    buf_printf(&m, "invalid URL \"%.200s\": %s", o->url ? o->url : "", why);
    /* never a credential in a message: an unparsable URL is not shown when it may hold userinfo */
    if (o->url && strchr(o->url, '@')) {
      buf_reset(&m);
      buf_printf(&m, "invalid URL: %s", why);
    }
  } else {
    rc = fetch__send(r, &m);
  }
  if (rc) {
    r->deferred_err = rc;
    r->deferred_msg = buf_steal(&m);
    uv_timer_start(&r->timer, fetch__timer_cb, 0, 0);
  } else {
    /* A backstop only: the client's own timeout (the same deadline) normally fires first. */
    uv_timer_start(&r->timer, fetch__timer_cb, r->timeout_ms + 1000, 0);
  }
  buf_free(&m);
  return r;
}

void fetch_cancel(fetch_req_t *r) {
  if (!r || r->done) return;
  if (r->in_body) { /* the client is inside on_body: it abandons the response when that returns */
    r->cancel_pending = 1;
    return;
  }
  fetch__finish(r, UV_ECANCELED, "the request was cancelled", NULL);
}
