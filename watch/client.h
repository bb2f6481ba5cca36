/* Kubernetes API client on a libuv loop: HTTP/1.1 over TCP or TLS, a bounded keep-alive
 * connection pool, request timeouts and cancellation, and watch streams. Never blocks.
 *
 * Callbacks run on the loop thread. A request handle stays valid until its callback has
 * returned; a watch handle until its end callback has returned. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>
#include <cjson/cJSON.h>
#include "base/buf.h"
#include "watch/kubeconfig.h"

typedef struct kube_client_s kube_client_t;
typedef struct kube_req_s kube_req_t;
typedef struct kube_watch_s kube_watch_t;

typedef struct kube_response_s kube_response_t;

typedef struct kube_header_s {
  const char *name;
  const char *value;
} kube_header_t;

/* Which failed responses a request retries (kube_req_opts_t.retry). */
enum {
  KUBE_RETRY_AUTO = 0, /* 429 always (the server did not process it); 500/502/503/504 when idempotent (not POST/PATCH) */
  KUBE_RETRY_NEVER,    /* deliver every response as it comes */
  KUBE_RETRY_ALWAYS,   /* 429 and 500/502/503/504 for any method (for requests known to be idempotent) */
};

typedef struct kube_req_opts_s {
  const char *method;       /* default "GET" */
  const char *path;         /* URL path with query, e.g. "/api/v1/namespaces?limit=500" */
  const char *content_type; /* for the body; default "application/json" when there is one */
  const char *accept;       /* default "application/json" */
  const char *body;         /* copied; may be NULL */
  size_t body_len;
  uint64_t timeout_ms;      /* whole request incl. queueing and connecting; 0: the client default */
  const kube_header_t *headers; /* extra request headers; a Host or User-Agent among them replaces the client's own */
  size_t n_headers;
  int retry;                /* KUBE_RETRY_*; retries wait with backoff or Retry-After, within timeout_ms */
  /* Optional: receives the body of a 2xx response piece by piece as it arrives, instead of
   * res->body (which is then empty); max_body does not apply. It must not call into the client;
   * nonzero abandons the response and fails the request with that code. Other responses are
   * buffered as usual. data is the request's callback data. */
  int (*on_body)(const char *p, size_t n, void *data);
  /* Optional, with on_body: called once the headers of a 2xx response that goes to on_body are in,
   * before its body; res carries only status and headers (kube_response_header). Same rules as
   * on_body; nonzero abandons the response. */
  int (*on_head)(const kube_response_t *res, void *data);
} kube_req_opts_t;

struct kube_response_s {
  int err;             /* 0 when an HTTP response arrived; else a negative UV_E* code */
  const char *errmsg;  /* what went wrong and where; set when err != 0 or status >= 400, else NULL */
  int status;          /* HTTP status, 0 when none arrived */
  const char *reason;  /* for API errors, the Status reason (e.g. "NotFound", "Conflict"); else "" */
  const char *body;    /* NUL-terminated; valid during the callback only */
  size_t body_len;
  const void *priv;    /* for kube_response_header */
};

typedef void (*kube_response_cb)(const kube_response_t *res, void *data);
/* Receives one watch event: type is ADDED, MODIFIED, DELETED, BOOKMARK or ERROR; object is
 * borrowed (take it with kube_watch_take_object). */
typedef void (*kube_watch_event_cb)(kube_watch_t *w, const char *type, cJSON *object, void *data);
/* Receives a watch event that was skipped because it cannot be delivered (longer than
 * max_watch_line, nested deeper than cJSON's limit, not JSON, not an event): type, namespace,
 * name and resourceVersion as a light scan of its text found them ("" when not found), and why. */
typedef void (*kube_watch_bad_cb)(kube_watch_t *w, const char *type, const char *ns, const char *name,
                                  const char *rv, const char *why, void *data);
/* Called once when the stream ends: err 0 and status 200 for a normal end, else why. */
typedef void (*kube_watch_end_cb)(kube_watch_t *w, const kube_response_t *res, void *data);

typedef struct kube_client_limits_s {
  size_t max_idle;             /* idle keep-alive connections kept (default 8) */
  size_t max_conns;            /* connections for requests, busy or idle (default 32); watches are extra */
  size_t max_body;             /* largest response body (default 64 MiB) */
  size_t max_watch_line;       /* largest watch event (default 16 MiB) */
  uint64_t default_timeout_ms; /* for requests without their own (default 60 s) */
  uint64_t idle_timeout_ms;    /* idle connections are closed after this (default 90 s) */
  uint64_t watch_connect_timeout_ms; /* a watch must get its response headers within this (default 30 s) */
  double qps;                  /* client-side token bucket: requests and watch opens per second (default 50);
                                  < 0 disables it (the --qps flag) */
  unsigned burst;              /* token bucket size (default 100; the --burst flag) */
  bool qps_auto;               /* drop the qps limit once the server shows it applies its own flow control
                                  (API Priority and Fairness: X-Kubernetes-PF-FlowSchema-UID on a response),
                                  as Flux's controllers decide; 429s with Retry-After still slow it down */
  int max_retries;             /* retries of a 429/5xx response (default 5); < 0 disables retries */
  uint64_t retry_base_ms;      /* first retry delay without Retry-After, doubling, jittered (default 200 ms) */
  uint64_t retry_max_ms;       /* cap on any one retry delay, Retry-After included (default 30 s) */
  uint64_t token_refresh_ms;   /* how often a token file is re-read (default 60 s, as client-go); also on a 401 */
  uint64_t exec_timeout_ms;    /* an exec credential plugin is killed after this (default 60 s) */
} kube_client_limits_t;

/* Counters for tests and metrics. */
typedef struct kube_client_stats_s {
  uint64_t requests;    /* requests sent on a connection (retries and watch opens included) */
  uint64_t retries;     /* 429/5xx responses retried */
  uint64_t throttled;   /* times the token bucket made a request wait */
  uint64_t exec_runs;   /* exec credential plugin runs */
  uint64_t auth_retries; /* 401 responses retried with refreshed credentials */
  bool flow_control;     /* the server answered with flow-control headers (qps_auto then dropped the limit) */
  uint64_t connects;    /* connections opened (watch connections included) */
  uint64_t tls_handshakes; /* TLS handshakes completed */
  uint64_t tls_resumed;    /* of them, sessions resumed (no certificate from the server: verifying clients only) */
} kube_client_stats_t;

/* Creates a client for cfg (which is copied); 0 or a negative code with *errmsg (malloc'd).
 * Sets SIGPIPE to ignored if it was at its default, so broken connections fail instead of killing. */
int kube_client_new(uv_loop_t *loop, const kube_config_t *cfg, kube_client_t **out, char **errmsg);
/* A client with base's configuration and limits that acts as user (Impersonate-User on every
 * request; the API server checks base's identity may impersonate it): for what a tenant's release
 * applies. 0 or a negative code with *errmsg (malloc'd). */
int kube_client_new_impersonating(kube_client_t *base, const char *user, kube_client_t **out, char **errmsg);
/* Replaces the limits; zero fields keep their current values. */
void kube_client_set_limits(kube_client_t *c, const kube_client_limits_t *l);
/* Returns the current limits. */
kube_client_limits_t kube_client_get_limits(const kube_client_t *c);
/* Returns the client's counters. */
kube_client_stats_t kube_client_get_stats(const kube_client_t *c);
/* True once kube_client_close has been called (new requests then return NULL). */
bool kube_client_is_closing(const kube_client_t *c);
/* The loop the client runs on. */
uv_loop_t *kube_client_loop(const kube_client_t *c);
/* The configuration the client runs with. */
const kube_config_t *kube_client_config(const kube_client_t *c);
/* Closes every connection, fails in-flight requests and watches with UV_ECANCELED, then calls cb
 * once every handle is closed and the client is freed. */
void kube_client_close(kube_client_t *c, void (*cb)(void *data), void *data);

/* Starts a request; cb runs exactly once, never before this returns. NULL when out of memory or
 * the client is closing (then cb never runs). */
kube_req_t *kube_request(kube_client_t *c, const kube_req_opts_t *o, kube_response_cb cb, void *data);
/* Cancels a request whose callback has not yet run: the callback runs now with UV_ECANCELED. */
void kube_request_cancel(kube_req_t *req);
/* Looks a response header up by name (case-insensitive); NULL when absent. */
const char *kube_response_header(const kube_response_t *res, const char *name);
/* True when the request got a 2xx response. */
bool kube_response_ok(const kube_response_t *res);
/* True for a 409 Conflict (a stale resourceVersion on update, or AlreadyExists on create): re-read and retry. */
bool kube_response_is_conflict(const kube_response_t *res);
/* True for a 404 Not Found. */
bool kube_response_is_not_found(const kube_response_t *res);

/* GET path. */
kube_req_t *kube_get(kube_client_t *c, const char *path, kube_response_cb cb, void *data);
/* Server-side apply: PATCH application/apply-patch+yaml with fieldManager (and force=true). */
kube_req_t *kube_apply(kube_client_t *c, const char *path, const char *json, const char *field_manager, bool force,
                       kube_response_cb cb, void *data);
/* JSON merge patch (application/merge-patch+json). */
kube_req_t *kube_merge_patch(kube_client_t *c, const char *path, const char *json, kube_response_cb cb, void *data);
/* POST json to a collection path. */
kube_req_t *kube_create(kube_client_t *c, const char *path, const char *json, kube_response_cb cb, void *data);
/* PUT json to an object path. */
kube_req_t *kube_update(kube_client_t *c, const char *path, const char *json, kube_response_cb cb, void *data);
/* DELETE with DeleteOptions.propagationPolicy (Foreground, Background, Orphan) unless NULL. */
kube_req_t *kube_delete(kube_client_t *c, const char *path, const char *propagation, kube_response_cb cb, void *data);

/* JSON patch (application/json-patch+json), e.g. [{"op":"test",...},{"op":"replace",...}]. */
kube_req_t *kube_json_patch(kube_client_t *c, const char *path, const char *json, kube_response_cb cb, void *data);

typedef struct kube_delete_opts_s {
  const char *propagation;      /* Foreground, Background, Orphan, or NULL for the server's default */
  const char *precondition_uid; /* fail with 409 unless the object still has this uid */
  const char *precondition_rv;  /* fail with 409 unless the object is still at this resourceVersion */
  long grace_period_seconds;    /* < 0: the object's default */
  bool dry_run;
} kube_delete_opts_t;
/* DELETE with DeleteOptions (propagation, preconditions, grace period, dry run). */
kube_req_t *kube_delete_ex(kube_client_t *c, const char *path, const kube_delete_opts_t *o, kube_response_cb cb,
                           void *data);

/* The status subresource of an object path (which may carry a query): PUT json to .../status. */
kube_req_t *kube_update_status(kube_client_t *c, const char *path, const char *json, kube_response_cb cb, void *data);
/* JSON merge patch of .../status. */
kube_req_t *kube_merge_patch_status(kube_client_t *c, const char *path, const char *json, kube_response_cb cb,
                                    void *data);
/* Server-side apply of .../status. */
kube_req_t *kube_apply_status(kube_client_t *c, const char *path, const char *json, const char *field_manager,
                              bool force, kube_response_cb cb, void *data);
/* Appends path with "/status" inserted before any query; 0 or UV_ENOMEM. */
int kube_status_path(buf_t *b, const char *path);

/* Appends /api/v1/... (empty or NULL group) or /apis/group/version/... with optional namespace,
 * name and subresource, each URL-escaped; 0 or UV_ENOMEM/UV_EINVAL. */
int kube_path(buf_t *b, const char *group, const char *version, const char *resource, const char *ns,
              const char *name, const char *subresource);
/* Appends the value of key in obj's data to out: a Secret's base64-decoded (secret), a ConfigMap's
 * as text. 1; 0 when obj has no such key (as a string); -1 when a Secret's value is not base64 or
 * out of memory (err, when given, says which). */
int kube_data_value(const cJSON *obj, const char *key, bool secret, buf_t *out, char *err, size_t errlen);
/* Appends "?key=value" or "&key=value" (depending on whether b has a '?'), URL-escaped. */
int kube_query_add(buf_t *b, const char *key, const char *value);
/* Appends s percent-encoded except for RFC 3986 unreserved characters. */
int kube_url_escape(buf_t *b, const char *s);

/* Opens a watch stream on its own connection; path carries ?watch=1&resourceVersion=...
 * NULL when out of memory or the client is closing. */
kube_watch_t *kube_watch_start(kube_client_t *c, const char *path, kube_watch_event_cb ev, kube_watch_end_cb end,
                               void *data);
/* The same with an Accept header of the caller's (e.g. metadata only: "application/json;
 * as=PartialObjectMetadata;g=meta.k8s.io;v=v1"); NULL is "application/json". */
kube_watch_t *kube_watch_start_accept(kube_client_t *c, const char *path, const char *accept, kube_watch_event_cb ev,
                                      kube_watch_end_cb end, void *data);
/* Makes the stream skip events it cannot deliver and report them to cb, instead of ending with
 * UV_EPROTO or UV_E2BIG; call it right after kube_watch_start. */
void kube_watch_on_bad_event(kube_watch_t *w, kube_watch_bad_cb cb);
/* Makes the stream leave each object's metadata.managedFields out before parsing it (for readers
 * that never look at it; see watch_ndjson_drop_managed_fields); call it right after kube_watch_start. */
void kube_watch_drop_managed_fields(kube_watch_t *w);
/* Stops a watch whose end callback has not yet run: end runs now with UV_ECANCELED. */
void kube_watch_stop(kube_watch_t *w);
/* During an event callback, takes ownership of the event's object (caller frees it). */
cJSON *kube_watch_take_object(kube_watch_t *w);
