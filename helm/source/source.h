/* Chart sources on the loop: HTTP(S) chart repositories (index.yaml, then the chart's .tgz),
 * direct .tgz URLs, and packaged charts handed in as bytes (a ConfigMap's or Secret's), all
 * ending in one shared, refcounted chart per digest (cache.h) and an on-disk cache of archives.
 *
 * Repositories are declared by key (the HelmRepository's "namespace/name") with their URL and
 * credentials; their index is fetched when asked (source_repo_refresh, on the repository's
 * interval) and kept parsed for the chart names some release asked for (index.h keeps only
 * those): asking for a chart the kept index does not hold fetches the index again with that
 * name added. An unchanged index costs one conditional request (304). Concurrent asks share
 * work: one index fetch per repository and one download per archive however many releases
 * wait for it.
 *
 * Every callback runs on the loop thread, never before the call that started it returns.
 * Messages name the URL (never its credentials) and the cause. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "helm/source/cache.h"
#include "helm/source/index.h"
#include "watch/fetch.h"

typedef struct source_s source_t;
typedef struct source_op_s source_op_t;

/* How to reach a server; every string is copied by the source. */
typedef struct source_conn_s {
  fetch_tls_t tls;
  fetch_auth_t auth;
  bool pass_credentials; /* send auth to chart URLs on another host than the repository's */
  uint64_t timeout_ms;   /* per request; 0: 60 s */
  bool plain_http;       /* oci:// repositories: talk plain HTTP to the registry (local registries only) */
} source_conn_t;

typedef struct source_opts_s {
  chart_cache_t *cache;     /* the shared chart cache (the caller's; outlives the source) */
  const char *storage_path; /* on-disk archive cache directory (created); NULL: none */
  size_t max_disk_bytes;    /* archives kept on disk (0: 1 GiB); the least recently used go first */
  size_t max_archive_bytes; /* largest .tgz downloaded or accepted (0: 20 MiB) */
  index_limits_t index_limits;
  size_t oci_tag_page;      /* tags asked for per page of an OCI tag list (0: as many as the registry gives) */
} source_opts_t;

typedef struct source_index_info_s {
  int err;               /* 0, or why the last fetch failed (the previous index, if any, is kept) */
  const char *message;   /* set when err != 0 */
  int status;            /* HTTP status of the last fetch: 200, or 304 when unchanged */
  const char *digest;    /* "sha256:<hex>" of the index as last served ("" before any) */
  size_t charts, versions; /* counted in the index */
  int64_t fetched_at;    /* unix seconds of the last successful fetch */
  bool changed;          /* this fetch found another index than the one before */
} source_index_info_t;

typedef struct source_chart_s {
  chart_cache_entry_t *entry; /* one reference, now the caller's (source_chart_release) */
  const char *name, *version; /* of the chosen chart version */
  const char *digest;         /* "sha256:<hex>" of the archive */
  const char *url;            /* where it came from ("" for bytes handed in) */
} source_chart_t;

typedef void (*source_index_cb)(const source_index_info_t *info, void *data);
/* err 0 and chart; or a negative code with message (INDEX_ENOENT: no such chart or version;
 * UV_ECANCELED when cancelled or the source is freed). */
typedef void (*source_chart_cb)(int err, const char *message, const source_chart_t *chart, void *data);

/* 0 and *out, or a negative code. f and opts->cache are the caller's and must outlive it. */
int source_new(uv_loop_t *loop, fetch_t *f, const source_opts_t *opts, source_t **out);
/* Fails what is in flight with UV_ECANCELED (callbacks run now) and frees the source. */
void source_free(source_t *s);

/* Declares or changes repository key: its URL (http://, https://, or oci://host/path: charts are
 * then pulled from the registry as URL/NAME, with no index) and credentials. A change of
 * either drops the kept index. 0, UV_EINVAL (bad URL, *message says why) or UV_ENOMEM. */
int source_repo_set(source_t *s, const char *key, const char *url, const source_conn_t *conn, char *message,
                    size_t msglen);
/* Forgets repository key; what waits on it fails with UV_ECANCELED. */
void source_repo_remove(source_t *s, const char *key);
/* True when repository key has been declared. */
bool source_repo_known(const source_t *s, const char *key);
/* Seconds since key's index was last fetched successfully; -1 when never (or key is unknown). */
int64_t source_repo_age(const source_t *s, const char *key);
/* Fetches key's index now; cb gets the outcome. NULL when key is unknown or out of memory. */
source_op_t *source_repo_refresh(source_t *s, const char *key, source_index_cb cb, void *data);
/* cb(key) runs after each fetch that found a changed index (up to 8 listeners; 0 or UV_ENOSPC). */
int source_on_index_change(source_t *s, void (*cb)(const char *key, void *data), void *data);
void source_off_index_change(source_t *s, void (*cb)(const char *key, void *data), void *data);

typedef struct source_walk_s source_walk_t;
/* A walk's end: err 0 and the digest ("sha256:<hex>") of the index walked; or why it failed
 * (the fetch, the index, or the chart callback's own code), with message. */
typedef void (*source_walk_done_cb)(int err, const char *message, const char *digest, void *data);
/* Downloads repository key's index once more and streams it through a walking parser
 * (index_parser_new_walk): chart_cb gets every chart as its entry arrives (during the download,
 * one chart in memory at a time), then done runs once. The walk copies the repository's URL and
 * credentials: removing the repository does not stop it. NULL when key is unknown, an OCI
 * registry (no index) or out of memory. */
source_walk_t *source_repo_walk(source_t *s, const char *key, index_walk_cb chart_cb, source_walk_done_cb done,
                                void *data);
/* Stops a walk whose done has not run; neither callback runs after this. */
void source_walk_cancel(source_walk_t *w);

/* Chart name at the version Helm picks for constraint ("" = "*") from repository key: the
 * archive from memory, disk or the chart URL (its digest checked against the index's), loaded
 * once. NULL only when out of memory. */
source_op_t *source_chart_from_repo(source_t *s, const char *key, const char *name, const char *constraint,
                                    source_chart_cb cb, void *data);
/* The packaged chart at url (http(s)://.../x.tgz), fetched with conn (may be NULL). */
source_op_t *source_chart_from_url(source_t *s, const char *url, const source_conn_t *conn, source_chart_cb cb,
                                   void *data);
/* A packaged chart handed in as bytes (copied); what names it in messages. */
source_op_t *source_chart_from_bytes(source_t *s, const void *tgz, size_t len, const char *what, source_chart_cb cb,
                                     void *data);
/* A chart from an OCI registry, as `helm pull oci://...` gets it. ref is
 * oci://host[:port]/path/name[:tag][@sha256:<hex>]; constraint is Helm's --version ("" or NULL:
 * none). A digest pins the manifest (with a constraint too, a tag of that name must point at the
 * same digest when it exists); else a tag in ref (a constraint must then equal it: "chart
 * reference and version mismatch"); else a constraint that is a version is the tag; else the
 * tag list (every page, as the registry's Link header gives them) and the version Helm picks
 * from it (oci.h's oci_tags_select: prereleases only when asked, '_' read as '+'). Then the
 * manifest (Helm's config and chart layer media types), then the chart layer by its digest:
 * from memory, from the disk cache, or downloaded and checked against that digest; one request
 * per URL and credentials is shared by every op that needs it at once.
 * Auth as ORAS (Helm's registry client) does it: no credentials until the registry asks; a
 * `Bearer` challenge gets a token from its realm (with conn's basic credentials, or an OAuth2
 * refresh token when conn's username is OCI_TOKEN_USER; anonymously without credentials),
 * kept per registry, scope and credentials until it expires; a `Basic` challenge is answered
 * with conn's credentials (and the registry remembered as wanting them); conn's bearer, when
 * set, is sent as the registry token. One retry; a 401 or 403 after it fails with a message
 * naming the registry and repository, never a credential. https unless plain_http.
 * chart->url is the reference pulled (oci://host/repo:tag or @digest). NULL only when out of memory. */
source_op_t *source_chart_from_oci(source_t *s, const char *ref, const char *constraint, const source_conn_t *conn,
                                   bool plain_http, source_chart_cb cb, void *data);
/* Cancels an op whose callback has not run: it runs now with UV_ECANCELED. */
void source_cancel(source_op_t *op);
/* Drops a reference source_chart_* handed out. */
void source_chart_release(source_t *s, chart_cache_entry_t *e);

typedef struct source_stats_s {
  uint64_t index_fetches, index_not_modified, downloads, disk_hits, memory_hits;
  uint64_t disk_bytes, disk_files;
  uint64_t oci_requests; /* registry requests (tag pages, manifests, blobs; retries included) */
  uint64_t oci_tokens;   /* tokens fetched from a registry's token service */
} source_stats_t;
source_stats_t source_get_stats(const source_t *s);
