/* HTTP(S) requests to servers outside the cluster (chart repositories, OCI registries, token
 * endpoints), on the same client as the API server's (client.h): one kube_client_t per origin
 * and TLS identity, created on first use and shared by every request to it, so connection
 * pooling, TLS (mbedTLS, verification on), asynchronous DNS, timeouts, retries with backoff and
 * Retry-After all come from one implementation. Never blocks; callbacks run on the loop thread.
 *
 * On top of the API client this adds what the outside world needs: absolute URLs, redirects
 * (bounded, credentials dropped on a change of host unless pass_credentials), basic and bearer
 * auth, gzip transfer decoding (bounded: a gzip bomb fails with a limit error), conditional
 * requests (ETag / Last-Modified), trust per request (extra CA, client certificate, or
 * verification off), and proxies from the environment (HTTPS_PROXY, HTTP_PROXY, NO_PROXY as Go's
 * net/http reads them; https through CONNECT). Errors name the URL's host and the cause (the
 * resolver's answer, the x509 reason, "401 Unauthorized", "timed out after 30s", ...);
 * credentials never appear in any message.
 *
 * As it ended up (watch/fetch.c):
 * - Origins: one kube_client_t per scheme, host, port, TLS identity (a hash of CA, certificate, key
 *   and insecure_skip_verify) and proxy, qps limit off, idle_timeout_ms for its connections; an
 *   origin idle for idle_timeout_ms is closed; past max_clients idle origins are closed least
 *   recently used first (busy ones are kept, so the bound may be exceeded while they are busy).
 * - Requests: the URL's path and query as the request target (spaces and non-ASCII bytes
 *   percent-encoded), Host as the URL writes it, no API-server credentials ever; userinfo in the
 *   URL is basic auth unless o->auth is given. Retries: the client's (429 always, 5xx for
 *   idempotent methods, Retry-After in seconds), within timeout_ms.
 * - Redirects as Go's http.Client: 301/302/303 turn a method other than GET/HEAD into GET and drop
 *   the body (for good); 307/308 keep both; a 3xx without Location is delivered; after max_redirects
 *   the request fails with UV_ELOOP ("stopped after 10 redirects at URL", saying when it is a loop).
 *   Authorization (and the user's Cookie, Proxy-Authorization, ... headers) are dropped for good
 *   once a redirect leaves the first URL's host:port for a host that is not it or a subdomain of it,
 *   unless pass_credentials. No Referer is sent.
 * - gzip: Content-Encoding gzip is decoded as it streams (every member), max_body bounding the
 *   decoded bytes in both modes; Content-Length over max_body fails before the body. Other bodies
 *   (>= 300) are buffered by the client, bounded by the fetcher's max_body.
 * - Proxies: watch/proxyenv.h has the exact rules (Go's); note that, as in Go, "localhost" and
 *   loopback IPs are never proxied. https goes through CONNECT host:port (TLS inside verifies the
 *   target's name), http as an absolute-form request; Proxy-Authorization from the proxy URL's
 *   userinfo. Only http:// proxies.
 * - Messages show URLs without userinfo or fragment and with query values replaced ("?token=xxxxx"). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>
#include "watch/client.h"

typedef struct fetch_s fetch_t;
typedef struct fetch_req_s fetch_req_t;

/* Whom to trust and what to present. All PEM (or DER), copied; NULL/0 when absent. */
typedef struct fetch_tls_s {
  const char *ca_pem;   /* trust these CAs instead of the system bundle */
  size_t ca_len;
  const char *cert_pem; /* client certificate and key for mutual TLS */
  size_t cert_len;
  const char *key_pem;
  size_t key_len;
  bool insecure_skip_verify; /* no verification at all (the caller warns the user) */
} fetch_tls_t;

typedef struct fetch_auth_s {
  const char *username, *password; /* HTTP basic, when username is set */
  const char *bearer;              /* Authorization: Bearer, when set (wins over basic) */
} fetch_auth_t;

typedef struct fetch_opts_s {
  const char *url;              /* absolute http:// or https:// URL */
  const char *method;           /* default "GET" */
  const kube_header_t *headers; /* extra request headers */
  size_t n_headers;
  const char *body;             /* copied; may be NULL */
  size_t body_len;
  const char *content_type;
  const char *accept;           /* default "*\/\*" */
  const fetch_tls_t *tls;       /* NULL: the system bundle, verification on */
  const fetch_auth_t *auth;     /* NULL: none */
  bool pass_credentials;        /* keep auth when a redirect goes to another host */
  int max_redirects;            /* 0: 10; < 0: redirects are delivered, not followed */
  uint64_t timeout_ms;          /* whole request, redirects included; 0: the fetcher's default */
  size_t max_body;              /* largest body after decoding; 0: the fetcher's default */
  const char *if_none_match;    /* conditional request: an ETag seen before */
  const char *if_modified_since;/* conditional request: a Last-Modified seen before */
  bool gzip;                    /* send Accept-Encoding: gzip and decode the answer */
  /* Optional: receives the decoded body of a 2xx response as it arrives instead of res->body;
   * nonzero abandons the response and fails the request with that code. */
  int (*on_body)(const char *p, size_t n, void *data);
} fetch_opts_t;

typedef struct fetch_response_s {
  int err;             /* 0 when an HTTP response arrived; else a negative UV_E* code */
  const char *errmsg;  /* what went wrong, naming the host; set when err != 0 or status >= 400 */
  int status;          /* HTTP status (304 for an unchanged conditional request), 0 when none */
  const char *url;     /* the URL finally answered (after redirects) */
  const char *body;    /* decoded, NUL-terminated; valid during the callback only */
  size_t body_len;
  const void *priv;    /* for fetch_response_header */
} fetch_response_t;

typedef void (*fetch_cb)(const fetch_response_t *res, void *data);

typedef struct fetch_limits_s {
  size_t max_clients;          /* origins (with their TLS identities) kept at once (default 64); idle ones are dropped first */
  size_t max_body;             /* default 64 MiB */
  uint64_t default_timeout_ms; /* default 60 s */
  uint64_t idle_timeout_ms;    /* an origin with no request for this long is closed (default 90 s) */
} fetch_limits_t;

typedef struct fetch_stats_s {
  uint64_t requests;    /* requests sent, redirects and retries included */
  uint64_t redirects;
  uint64_t not_modified; /* 304 answers */
  uint64_t clients;     /* origins open now */
  uint64_t bytes;       /* body bytes received after decoding */
  uint64_t connections; /* TCP connections opened (requests to one origin share them) */
} fetch_stats_t;

/* A fetcher on loop; lim NULL: defaults. Proxies are read from the environment now. 0 or UV_ENOMEM. */
int fetch_new(uv_loop_t *loop, const fetch_limits_t *lim, fetch_t **out);
/* Closes every origin, fails requests in flight with UV_ECANCELED, then calls cb (may be NULL). */
void fetch_close(fetch_t *f, void (*cb)(void *data), void *data);
/* Starts a request; cb runs exactly once, never before this returns (a URL that is not absolute
 * http(s) is delivered to cb as UV_EINVAL with a message). NULL when out of memory or the fetcher
 * is closing (then cb never runs). */
fetch_req_t *fetch_request(fetch_t *f, const fetch_opts_t *o, fetch_cb cb, void *data);
/* Cancels a request whose callback has not yet run: it runs now with UV_ECANCELED (from inside
 * the request's own on_body: as soon as on_body returns). */
void fetch_cancel(fetch_req_t *r);
/* A response header by name (case-insensitive), NULL when absent. */
const char *fetch_response_header(const fetch_response_t *res, const char *name);
fetch_stats_t fetch_get_stats(const fetch_t *f);
/* Go's http.StatusText for the common client and server errors, "" for others. */
const char *fetch_status_text(int status);
