/* Chart sources on the loop (see source.h). */
#include "helm/source/source.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>
#include <strings.h>

#include "base/buf.h"
#include "base/log.h"
#include "base/sha256.h"
#include "helm/semver/semver.h"
#include "helm/source/oci.h"

#define SRC__DEFAULT_DISK ((size_t)1 << 30)
#define SRC__DEFAULT_ARCHIVE ((size_t)20 << 20)

typedef enum { OP_REFRESH, OP_REPO_CHART, OP_URL_CHART, OP_BYTES_CHART, OP_OCI_CHART } op_kind_t;

typedef struct oplist_s {
  source_op_t *head;
} oplist_t;

typedef struct conn_copy_s {
  source_conn_t c; /* pointers into the strings below */
  char *ca, *cert, *key, *user, *pass, *bearer;
} conn_copy_t;

typedef struct repo_s repo_t;
typedef struct dl_s dl_t;
typedef struct oci_op_s oci_op_t;       /* the OCI section at the end */
typedef struct oci_state_s oci_state_t;

struct source_op_s {
  source_t *s;
  op_kind_t kind;
  source_index_cb icb;
  source_chart_cb ccb;
  void *data;
  char *key, *name, *constraint, *url, *what;
  conn_copy_t conn;       /* OP_URL_CHART, OP_OCI_CHART */
  oci_op_t *oci;          /* OP_OCI_CHART */
  void *bytes;            /* OP_BYTES_CHART */
  size_t nbytes;
  int refetched;          /* the index was fetched again for this op's name */
  oplist_t *on;           /* the list it waits on */
  source_op_t *prev, *next;
  /* the result, once on the ready list */
  int err;
  char *msg;
  chart_cache_entry_t *entry;
  char *version, *digest, *chart_name, *from;
  source_index_info_t info;
  char *info_digest;
};

struct repo_s {
  repo_t *next;
  source_t *s;
  char *key, *url;
  conn_copy_t conn;
  index_parser_t *snap;      /* the kept index, or NULL */
  char **names;              /* chart names asked for */
  size_t nnames, snap_names; /* snap holds the first snap_names of names */
  char *etag, *last_modified;
  char digest[72];
  size_t charts, versions;
  int64_t fetched_at;
  /* the fetch in flight */
  fetch_req_t *req;
  index_parser_t *parser;
  base_sha256_ctx_t sha;
  size_t fetch_names;
  int feed_err;
  char feed_msg[512];
  oplist_t waiters;
};

struct dl_s {
  dl_t *next;
  source_t *s;
  char *url, *want;
  char ident[65]; /* the credentials it is fetched with (conn__ident): only the same ones join it */
  fetch_req_t *req;
  buf_t body;
  oplist_t waiters;
};

typedef struct disk_file_s {
  char hex[65];
  size_t size;
  uint64_t used; /* a counter: larger is more recent */
} disk_file_t;

struct source_s {
  uv_loop_t *loop;
  fetch_t *f;
  chart_cache_t *cache;
  char *dir;
  size_t max_disk, max_archive;
  index_limits_t ilim;
  repo_t *repos;
  dl_t *dls;
  oplist_t ready;
  uv_timer_t kick;
  int kick_armed;
  struct {
    void (*cb)(const char *key, void *data);
    void *data;
  } listeners[8];
  disk_file_t *files;
  size_t nfiles, capfiles;
  /* Archives whose index entry gave no digest (and direct URLs): the digest they had when
   * downloaded, so that a resync does not download them again. */
  struct url_digest_s {
    char *url;
    char ident[65]; /* the credentials it was downloaded with: an archive behind a password is
                       handed only to a request that has the same one */
    char hex[65];
  } *urls;
  size_t nurls, capurls;
  uint64_t use_clock;
  source_stats_t stats;
  oci_state_t *oci; /* registries' tokens and requests, made on first use */
  size_t oci_tag_page;
  source_walk_t *walks; /* in flight */
};

struct source_walk_s {
  source_walk_t *prev, *next;
  source_t *s;
  char *key, *url;
  conn_copy_t conn;
  fetch_req_t *req;
  index_parser_t *parser;
  base_sha256_ctx_t sha;
  int feed_err;
  char feed_msg[512];
  index_walk_cb chart_cb;
  source_walk_done_cb done;
  void *data;
};

/* ---- small helpers ---- */

static char *src__dup(const char *s) { return s ? strdup(s) : NULL; }
static char *src__dupn(const char *s, size_t n) {
  if (!s) return NULL;
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = 0;
  }
  return d;
}

static void oplist_push(oplist_t *l, source_op_t *op) {
  op->on = l;
  op->prev = NULL;
  op->next = l->head;
  if (l->head) l->head->prev = op;
  l->head = op;
}

static void oplist_remove(source_op_t *op) {
  if (!op->on) return;
  if (op->prev) op->prev->next = op->next;
  else op->on->head = op->next;
  if (op->next) op->next->prev = op->prev;
  op->on = NULL;
  op->prev = op->next = NULL;
}

static void conn_free(conn_copy_t *c) {
  free(c->ca);
  free(c->cert);
  free(c->key);
  free(c->user);
  free(c->pass);
  free(c->bearer);
  memset(c, 0, sizeof *c);
}

static int conn_copy(conn_copy_t *d, const source_conn_t *s) {
  memset(d, 0, sizeof *d);
  if (!s) return 0;
  d->c = *s;
  if (s->tls.ca_pem && !(d->ca = src__dupn(s->tls.ca_pem, s->tls.ca_len))) return -1;
  if (s->tls.cert_pem && !(d->cert = src__dupn(s->tls.cert_pem, s->tls.cert_len))) return -1;
  if (s->tls.key_pem && !(d->key = src__dupn(s->tls.key_pem, s->tls.key_len))) return -1;
  if (s->auth.username && !(d->user = strdup(s->auth.username))) return -1;
  if (s->auth.password && !(d->pass = strdup(s->auth.password))) return -1;
  if (s->auth.bearer && !(d->bearer = strdup(s->auth.bearer))) return -1;
  d->c.tls.ca_pem = d->ca;
  d->c.tls.cert_pem = d->cert;
  d->c.tls.key_pem = d->key;
  d->c.auth.username = d->user;
  d->c.auth.password = d->pass;
  d->c.auth.bearer = d->bearer;
  return 0;
}

static int src__streq(const char *a, const char *b) { return (!a && !b) || (a && b && !strcmp(a, b)); }

static int conn_same(const conn_copy_t *a, const source_conn_t *b) {
  source_conn_t none = {0};
  if (!b) b = &none;
  return src__streq(a->ca, b->tls.ca_pem) && src__streq(a->cert, b->tls.cert_pem) &&
         src__streq(a->key, b->tls.key_pem) && src__streq(a->user, b->auth.username) &&
         src__streq(a->pass, b->auth.password) && src__streq(a->bearer, b->auth.bearer) &&
         a->c.tls.insecure_skip_verify == b->tls.insecure_skip_verify && a->c.pass_credentials == b->pass_credentials &&
         a->c.timeout_ms == b->timeout_ms && a->c.plain_http == b->plain_http;
}

/* The host[:port] of an absolute URL (userinfo left out), into out. */
static void src__host(const char *url, char *out, size_t len) {
  out[0] = 0;
  const char *p = strstr(url, "://");
  if (!p) return;
  p += 3;
  size_t n = strcspn(p, "/?#");
  const char *at = memchr(p, '@', n);
  if (at) {
    n -= (size_t)(at + 1 - p);
    p = at + 1;
  }
  if (n >= len) n = len - 1;
  memcpy(out, p, n);
  out[n] = 0;
}

/* A URL for messages: userinfo and query left out. */
static void src__safe_url(const char *url, buf_t *out) {
  const char *p = strstr(url, "://");
  if (!p) {
    buf_append(out, url, strcspn(url, "?#"));
    return;
  }
  buf_append(out, url, (size_t)(p + 3 - url));
  const char *h = p + 3;
  size_t n = strcspn(h, "/?#");
  const char *at = memchr(h, '@', n);
  if (at) h = at + 1;
  buf_append(out, h, strcspn(h, "?#"));
}


static void oci__op_free(source_op_t *op);
static void oci__close(source_t *s);

/* ---- completion: every op finishes through the ready list, delivered from a timer ---- */

static void src__deliver(source_op_t *op) {
  if (op->kind == OP_REFRESH) {
    op->info.message = op->msg;
    op->info.digest = op->info_digest ? op->info_digest : "";
    if (op->icb) op->icb(&op->info, op->data);
  } else {
    source_chart_t ch = {.entry = op->entry, .name = op->chart_name ? op->chart_name : "",
                         .version = op->version ? op->version : "", .digest = op->digest ? op->digest : "",
                         .url = op->from ? op->from : ""};
    op->entry = NULL;
    if (op->ccb) op->ccb(op->err, op->err ? (op->msg ? op->msg : "failed") : NULL, op->err ? NULL : &ch, op->data);
    else if (ch.entry) chart_cache_release(op->s->cache, ch.entry);
  }
  if (op->entry) chart_cache_release(op->s->cache, op->entry);
  free(op->key);
  free(op->name);
  free(op->constraint);
  free(op->url);
  free(op->what);
  conn_free(&op->conn);
  free(op->bytes);
  free(op->msg);
  free(op->version);
  free(op->digest);
  free(op->chart_name);
  free(op->from);
  free(op->info_digest);
  oci__op_free(op);
  free(op);
}

static void src__kick_cb(uv_timer_t *t) {
  source_t *s = t->data;
  s->kick_armed = 0;
  while (s->ready.head) {
    source_op_t *op = s->ready.head;
    oplist_remove(op);
    src__deliver(op);
  }
}

static void src__complete(source_op_t *op, int err, const char *msg) {
  source_t *s = op->s;
  oplist_remove(op);
  op->err = err;
  if (msg && !op->msg) op->msg = strdup(msg);
  oplist_push(&s->ready, op);
  if (!s->kick_armed) {
    s->kick_armed = 1;
    uv_timer_start(&s->kick, src__kick_cb, 0, 0);
  }
}

static void src__completef(source_op_t *op, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void src__completef(source_op_t *op, int err, const char *fmt, ...) {
  buf_t b = BUF_INIT;
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(&b, fmt, ap);
  va_end(ap);
  src__complete(op, err, b.data ? b.data : "out of memory");
  buf_free(&b);
}

static source_op_t *src__op_new(source_t *s, op_kind_t kind, void *data) {
  source_op_t *op = calloc(1, sizeof *op);
  if (!op) return NULL;
  op->s = s;
  op->kind = kind;
  op->data = data;
  return op;
}

/* A chart op succeeds with entry (one reference, handed to the op). */
static void src__chart_done(source_op_t *op, chart_cache_entry_t *e, const char *version, const char *url) {
  op->entry = e;
  const chart_t *c = e->chart;
  /* version and url may be the op's own strings: copied before the old ones are freed. */
  char *name = src__dup(c->meta.name ? c->meta.name : "");
  char *ver = src__dup(version ? version : c->meta.version ? c->meta.version : "");
  char *from = src__dup(url ? url : "");
  buf_t d = BUF_INIT;
  buf_printf(&d, "sha256:%s", e->digest_hex);
  free(op->chart_name);
  free(op->version);
  free(op->digest);
  free(op->from);
  op->chart_name = name;
  op->version = ver;
  op->digest = buf_steal(&d);
  op->from = from;
  src__complete(op, 0, NULL);
}

/* ---- the disk cache ---- */

static void disk__path(const source_t *s, const char *hex, buf_t *out) { buf_printf(out, "%s/%s.tgz", s->dir, hex); }

static uint64_t disk__total(const source_t *s) {
  uint64_t t = 0;
  for (size_t i = 0; i < s->nfiles; i++) t += s->files[i].size;
  return t;
}

static disk_file_t *disk__find(source_t *s, const char *hex) {
  for (size_t i = 0; i < s->nfiles; i++)
    if (!strcmp(s->files[i].hex, hex)) return &s->files[i];
  return NULL;
}

static void disk__evict(source_t *s) {
  while (s->nfiles > 1 && disk__total(s) > s->max_disk) {
    size_t old = 0;
    for (size_t i = 1; i < s->nfiles; i++)
      if (s->files[i].used < s->files[old].used) old = i;
    buf_t p = BUF_INIT;
    disk__path(s, s->files[old].hex, &p);
    if (p.data) unlink(p.data);
    buf_free(&p);
    s->files[old] = s->files[--s->nfiles];
  }
  s->stats.disk_files = s->nfiles;
  s->stats.disk_bytes = disk__total(s);
}

static void disk__note(source_t *s, const char *hex, size_t size) {
  disk_file_t *f = disk__find(s, hex);
  if (!f) {
    if (s->nfiles == s->capfiles) {
      size_t cap = s->capfiles ? s->capfiles * 2 : 16;
      disk_file_t *n = realloc(s->files, cap * sizeof *n);
      if (!n) return;
      s->files = n;
      s->capfiles = cap;
    }
    f = &s->files[s->nfiles++];
    memcpy(f->hex, hex, 65);
  }
  f->size = size;
  f->used = ++s->use_clock;
  disk__evict(s);
}

static void disk__scan(source_t *s) {
  DIR *d = opendir(s->dir);
  if (!d) return;
  struct dirent *de;
  while ((de = readdir(d))) {
    size_t n = strlen(de->d_name);
    if (n != 68 || strcmp(de->d_name + 64, ".tgz")) continue;
    char hex[65];
    memcpy(hex, de->d_name, 64);
    hex[64] = 0;
    if (strspn(hex, "0123456789abcdef") != 64) continue;
    buf_t p = BUF_INIT;
    disk__path(s, hex, &p);
    struct stat st;
    if (p.data && stat(p.data, &st) == 0 && S_ISREG(st.st_mode)) disk__note(s, hex, (size_t)st.st_size);
    buf_free(&p);
  }
  closedir(d);
}

/* Reads the archive hex from disk into out; 0 when there. */
static int disk__read(source_t *s, const char *hex, buf_t *out) {
  if (!s->dir || !disk__find(s, hex)) return -1;
  buf_t p = BUF_INIT;
  disk__path(s, hex, &p);
  FILE *fp = p.data ? fopen(p.data, "rb") : NULL;
  buf_free(&p);
  if (!fp) return -1;
  char chunk[16384];
  size_t n;
  int rc = 0;
  while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0)
    if (out->len + n > s->max_archive || buf_append(out, chunk, n)) {
      rc = -1;
      break;
    }
  fclose(fp);
  return rc;
}

static void disk__write(source_t *s, const char *hex, const void *p, size_t n) {
  if (!s->dir) return;
  buf_t tmp = BUF_INIT, fin = BUF_INIT;
  buf_printf(&tmp, "%s/.%s.tmp", s->dir, hex);
  disk__path(s, hex, &fin);
  FILE *fp = tmp.data && fin.data ? fopen(tmp.data, "wb") : NULL;
  if (fp) {
    int ok = fwrite(p, 1, n, fp) == n;
    ok = fclose(fp) == 0 && ok;
    if (ok && rename(tmp.data, fin.data) == 0) disk__note(s, hex, n);
    else {
      unlink(tmp.data);
      LOG_W("cannot write a chart archive to the disk cache", "path", fin.data, "error", strerror(errno));
    }
  }
  buf_free(&tmp);
  buf_free(&fin);
}

/* Loads an archive whose sha256 must be want (NULL: any) into the memory cache, then onto disk. */
static int src__load(source_t *s, const void *p, size_t n, const char *want, const char *what,
                     chart_cache_entry_t **out, buf_t *msg) {
  char err[1024] = "";
  int rc = chart_cache_load(s->cache, p, n, want, what, out, err, sizeof err);
  if (rc) {
    buf_puts(msg, err);
    return rc;
  }
  if (s->dir && !disk__find(s, (*out)->digest_hex)) disk__write(s, (*out)->digest_hex, p, n);
  return 0;
}

/* ---- archives known by URL ---- */

/* What identifies the credentials and trust of a request (a digest of them), "" when it has none. */
static void conn__ident(const conn_copy_t *c, int send_auth, char out[65]) {
  const source_conn_t *k = c ? &c->c : NULL;
  out[0] = 0;
  if (!k) return;
  const char *parts[] = {send_auth ? k->auth.username : NULL, send_auth ? k->auth.password : NULL,
                         send_auth ? k->auth.bearer : NULL};
  int any = k->tls.ca_pem || k->tls.cert_pem || k->tls.insecure_skip_verify;
  for (size_t i = 0; i < 3; i++) any |= parts[i] && *parts[i];
  if (!any) return;
  base_sha256_ctx_t h;
  base_sha256_init(&h);
  for (size_t i = 0; i < 3; i++) {
    if (parts[i]) base_sha256_update(&h, parts[i], strlen(parts[i]));
    base_sha256_update(&h, "", 1);
  }
  if (k->tls.ca_pem) base_sha256_update(&h, k->tls.ca_pem, k->tls.ca_len);
  base_sha256_update(&h, "", 1);
  if (k->tls.cert_pem) base_sha256_update(&h, k->tls.cert_pem, k->tls.cert_len);
  base_sha256_update(&h, k->tls.insecure_skip_verify ? "i" : "v", 1);
  uint8_t d[32];
  base_sha256_final(&h, d);
  base_sha256_hex(d, out);
}

static const char *urls__get(const source_t *s, const char *url, const char *ident) {
  for (size_t i = 0; i < s->nurls; i++)
    if (!strcmp(s->urls[i].url, url) && !strcmp(s->urls[i].ident, ident)) return s->urls[i].hex;
  return NULL;
}

static void urls__put(source_t *s, const char *url, const char *ident, const char *hex) {
  for (size_t i = 0; i < s->nurls; i++)
    if (!strcmp(s->urls[i].url, url) && !strcmp(s->urls[i].ident, ident)) {
      memcpy(s->urls[i].hex, hex, 65);
      return;
    }
  if (s->nurls == s->capurls) {
    size_t cap = s->capurls ? s->capurls * 2 : 16;
    struct url_digest_s *n = realloc(s->urls, cap * sizeof *n);
    if (!n) return;
    s->urls = n;
    s->capurls = cap;
  }
  char *u = strdup(url);
  if (!u) return;
  s->urls[s->nurls].url = u;
  memcpy(s->urls[s->nurls].ident, ident, 65);
  memcpy(s->urls[s->nurls].hex, hex, 65);
  s->nurls++;
}

/* ---- downloads (one per URL at a time) ---- */

static void dl__free(source_t *s, dl_t *d) {
  for (dl_t **pp = &s->dls; *pp; pp = &(*pp)->next)
    if (*pp == d) {
      *pp = d->next;
      break;
    }
  free(d->url);
  free(d->want);
  buf_free(&d->body);
  free(d);
}

static void dl__fail_all(dl_t *d, int err, const char *msg) {
  while (d->waiters.head) src__complete(d->waiters.head, err, msg);
}

static void dl__done(const fetch_response_t *res, void *data) {
  dl_t *d = data;
  source_t *s = d->s;
  d->req = NULL;
  if (!d->waiters.head || res->err == UV_ECANCELED) { /* every waiter cancelled, or the source is closing */
    dl__fail_all(d, UV_ECANCELED, "cancelled");
    dl__free(s, d);
    return;
  }
  buf_t safe = BUF_INIT;
  src__safe_url(d->url, &safe);
  if (res->err || res->status != 200) {
    buf_t m = BUF_INIT;
    if (res->errmsg) buf_printf(&m, "cannot download the chart: %s", res->errmsg);
    else buf_printf(&m, "cannot download chart %s: HTTP %d", safe.data, res->status);
    dl__fail_all(d, res->err ? res->err : -EIO, m.data);
    buf_free(&m);
  } else {
    s->stats.downloads++;
    chart_cache_entry_t *e = NULL;
    buf_t m = BUF_INIT;
    int rc = src__load(s, res->body, res->body_len, d->want, safe.data, &e, &m);
    if (rc) dl__fail_all(d, rc, m.data);
    else {
      if (!d->want) urls__put(s, d->url, d->ident, e->digest_hex);
      while (d->waiters.head) {
        source_op_t *op = d->waiters.head;
        chart_cache_addref(s->cache, e);
        src__chart_done(op, e, op->version, d->url);
      }
      chart_cache_release(s->cache, e);
    }
    buf_free(&m);
  }
  buf_free(&safe);
  dl__free(s, d);
}

/* Gets the archive at url for op (want: the digest the index gave, or NULL), from memory, disk or
 * the network; conn decides TLS and whether credentials go along. */
static void src__get_archive(source_t *s, source_op_t *op, const char *url, const char *want,
                             const conn_copy_t *conn, int send_auth) {
  uint8_t dg[32];
  char known[72];
  const char *index_want = want && *want ? want : NULL; /* what a download must match */
  char ident[65];
  conn__ident(conn, send_auth, ident);
  if (!want || !*want) {
    const char *hex = urls__get(s, url, ident);
    if (hex) {
      snprintf(known, sizeof known, "sha256:%s", hex);
      want = known;
    }
  }
  if (want && *want && chart_cache_digest_parse(want, dg) == 0) {
    chart_cache_entry_t *e = chart_cache_lookup(s->cache, dg);
    if (e) {
      s->stats.memory_hits++;
      src__chart_done(op, e, op->version, url);
      return;
    }
    char hex[65];
    base_sha256_hex(dg, hex);
    buf_t b = BUF_INIT;
    if (disk__read(s, hex, &b) == 0) {
      buf_t m = BUF_INIT;
      if (src__load(s, b.data ? b.data : "", b.len, want, url, &e, &m) == 0) {
        s->stats.disk_hits++;
        disk__note(s, hex, b.len);
        buf_free(&b);
        buf_free(&m);
        src__chart_done(op, e, op->version, url);
        return;
      }
      buf_free(&m); /* a bad file on disk: fetched again below */
    }
    buf_free(&b);
  }
  want = index_want;
  for (dl_t *d = s->dls; d; d = d->next)
    if (!strcmp(d->url, url) && src__streq(d->want, want) && !strcmp(d->ident, ident)) {
      oplist_push(&d->waiters, op);
      return;
    }
  dl_t *d = calloc(1, sizeof *d);
  if (!d || !(d->url = strdup(url)) || (want && !(d->want = strdup(want)))) {
    if (d) free(d->url);
    free(d);
    src__complete(op, UV_ENOMEM, "out of memory");
    return;
  }
  d->s = s;
  memcpy(d->ident, ident, sizeof d->ident);
  d->next = s->dls;
  s->dls = d;
  oplist_push(&d->waiters, op);
  fetch_auth_t none = {0};
  fetch_opts_t fo = {.url = url,
                     .accept = "application/gzip, application/octet-stream, */*",
                     .tls = &conn->c.tls,
                     .auth = send_auth ? &conn->c.auth : &none,
                     .pass_credentials = conn->c.pass_credentials,
                     .timeout_ms = conn->c.timeout_ms,
                     .max_body = s->max_archive};
  d->req = fetch_request(s->f, &fo, dl__done, d);
  if (!d->req) {
    dl__fail_all(d, UV_ENOMEM, "out of memory starting a download");
    dl__free(s, d);
  }
}

/* ---- repositories ---- */

static repo_t *repo__find(const source_t *s, const char *key) {
  for (repo_t *r = s->repos; r; r = r->next)
    if (!strcmp(r->key, key)) return r;
  return NULL;
}

static void repo__drop_index(repo_t *r) {
  index_parser_free(r->snap);
  r->snap = NULL;
  r->snap_names = 0;
  free(r->etag);
  free(r->last_modified);
  r->etag = r->last_modified = NULL;
}

static void repo__cancel_fetch(repo_t *r) {
  if (r->req) {
    fetch_req_t *q = r->req;
    r->req = NULL;
    fetch_cancel(q);
  }
  index_parser_free(r->parser);
  r->parser = NULL;
}

static void repo__free(repo_t *r) {
  repo__cancel_fetch(r);
  while (r->waiters.head) src__complete(r->waiters.head, UV_ECANCELED, "the repository was removed");
  repo__drop_index(r);
  for (size_t i = 0; i < r->nnames; i++) free(r->names[i]);
  free(r->names);
  free(r->key);
  free(r->url);
  conn_free(&r->conn);
  free(r);
}

static int repo__want(repo_t *r, const char *name) {
  for (size_t i = 0; i < r->nnames; i++)
    if (!strcmp(r->names[i], name)) return 0;
  char **n = realloc(r->names, (r->nnames + 1) * sizeof *n);
  if (!n) return -1;
  r->names = n;
  if (!(r->names[r->nnames] = strdup(name))) return -1;
  r->nnames++;
  return 0;
}

static int repo__has_name(const repo_t *r, const char *name) {
  for (size_t i = 0; i < r->snap_names; i++)
    if (!strcmp(r->names[i], name)) return 1;
  return 0;
}

static void repo__index_url(const repo_t *r, buf_t *out) {
  const char *q = strchr(r->url, '?');
  size_t n = q ? (size_t)(q - r->url) : strlen(r->url);
  while (n && r->url[n - 1] == '/') n--;
  buf_append(out, r->url, n);
  buf_puts(out, "/index.yaml");
  if (q) buf_puts(out, q);
}

static void repo__select(source_t *s, repo_t *r, source_op_t *op);
static void repo__fetch(source_t *s, repo_t *r);

/* How an index is fetched: streamed to on_body, gzip accepted, at most the index limit. */
static fetch_opts_t repo__index_opts(const source_t *s, const conn_copy_t *conn, const char *url,
                                     int (*on_body)(const char *p, size_t n, void *data)) {
  return (fetch_opts_t){.url = url ? url : "",
                        .accept = "application/x-yaml, application/yaml, text/yaml, */*",
                        .tls = &conn->c.tls,
                        .auth = &conn->c.auth,
                        .pass_credentials = conn->c.pass_credentials,
                        .timeout_ms = conn->c.timeout_ms,
                        .max_body = s->ilim.max_bytes,
                        .gzip = true,
                        .on_body = on_body};
}

static int repo__on_body(const char *p, size_t n, void *data) {
  repo_t *r = data;
  base_sha256_update(&r->sha, p, n);
  if (r->feed_err) return r->feed_err;
  int rc = index_parser_feed(r->parser, p, n, r->feed_msg, sizeof r->feed_msg);
  if (rc) r->feed_err = rc; /* the rest is not read: the index is refused as it stands */
  return rc;
}

static void repo__fetched(const fetch_response_t *res, void *data) {
  repo_t *r = data;
  source_t *s = r->s;
  if (!r->req) return; /* cancelled by repo__cancel_fetch */
  r->req = NULL;
  index_parser_t *p = r->parser;
  r->parser = NULL;
  buf_t safe = BUF_INIT, m = BUF_INIT;
  buf_t iu = BUF_INIT;
  repo__index_url(r, &iu);
  src__safe_url(iu.data ? iu.data : r->url, &safe);
  buf_free(&iu);
  int err = 0, changed = 0;
  if (r->feed_err) {
    err = r->feed_err;
    buf_printf(&m, "the index %s is not valid: %s", safe.data, r->feed_msg);
  } else if (res->err || (res->status != 200 && res->status != 304)) {
    err = res->err ? res->err : -EIO;
    if (res->errmsg) buf_printf(&m, "cannot fetch the repository index: %s", res->errmsg);
    else buf_printf(&m, "cannot fetch the index %s: HTTP %d", safe.data, res->status);
  } else if (res->status == 304 && r->snap) {
    r->fetched_at = (int64_t)time(NULL);
  } else if (res->status == 304) {
    err = -EIO;
    buf_printf(&m, "the index %s answered 304 Not Modified to an unconditional request", safe.data);
  } else {
    char msg[512] = "";
    int rc = r->feed_err;
    if (!rc) rc = index_parser_finish(p, msg, sizeof msg);
    else snprintf(msg, sizeof msg, "%s", r->feed_msg);
    if (rc) {
      err = rc;
      buf_printf(&m, "the index %s is not valid: %s", safe.data, msg);
    } else {
      uint8_t dg[32];
      base_sha256_final(&r->sha, dg);
      char hex[65], nd[72];
      base_sha256_hex(dg, hex);
      snprintf(nd, sizeof nd, "sha256:%s", hex);
      changed = strcmp(nd, r->digest) != 0;
      memcpy(r->digest, nd, sizeof nd);
      index_counts_t ct = index_parser_counts(p);
      r->charts = ct.charts;
      r->versions = ct.versions;
      index_parser_free(r->snap);
      r->snap = p;
      p = NULL;
      r->snap_names = r->fetch_names;
      r->fetched_at = (int64_t)time(NULL);
      free(r->etag);
      free(r->last_modified);
      r->etag = src__dup(fetch_response_header(res, "ETag"));
      r->last_modified = src__dup(fetch_response_header(res, "Last-Modified"));
    }
  }
  index_parser_free(p);
  buf_free(&safe);
  s->stats.index_fetches++;
  if (!err && res->status == 304) s->stats.index_not_modified++;
  /* Waiters: refreshes get the outcome; chart ops choose their version (or fail). Chart ops that
   * need a name this fetch did not carry start another fetch. */
  oplist_t w = r->waiters;
  r->waiters.head = NULL;
  for (source_op_t *op = w.head; op; op = op->next) op->on = &w;
  while (w.head) {
    source_op_t *op = w.head;
    oplist_remove(op);
    if (op->kind == OP_REFRESH) {
      op->info.err = err;
      op->info.status = err ? res->status : res->status == 304 ? 304 : 200;
      op->info_digest = src__dup(r->digest);
      op->info.charts = r->charts;
      op->info.versions = r->versions;
      op->info.fetched_at = r->fetched_at;
      op->info.changed = changed;
      src__complete(op, err, err ? m.data : NULL);
    } else if (err && !r->snap) {
      src__complete(op, err, m.data);
    } else {
      repo__select(s, r, op);
    }
  }
  buf_free(&m);
  if (changed)
    for (size_t i = 0; i < sizeof s->listeners / sizeof *s->listeners; i++)
      if (s->listeners[i].cb) s->listeners[i].cb(r->key, s->listeners[i].data);
}

static void repo__fetch(source_t *s, repo_t *r) {
  if (r->req) return;
  r->fetch_names = r->nnames;
  int conditional = r->snap && r->snap_names == r->nnames;
  if (index_parser_new((const char *const *)r->names, r->nnames, &s->ilim, &r->parser)) {
    while (r->waiters.head) src__complete(r->waiters.head, UV_ENOMEM, "out of memory");
    return;
  }
  base_sha256_init(&r->sha);
  r->feed_err = 0;
  r->feed_msg[0] = 0;
  buf_t u = BUF_INIT;
  repo__index_url(r, &u);
  fetch_opts_t fo = repo__index_opts(s, &r->conn, u.data, repo__on_body);
  fo.if_none_match = conditional ? r->etag : NULL;
  fo.if_modified_since = conditional ? r->last_modified : NULL;
  r->req = fetch_request(s->f, &fo, repo__fetched, r);
  buf_free(&u);
  if (!r->req) {
    index_parser_free(r->parser);
    r->parser = NULL;
    while (r->waiters.head) src__complete(r->waiters.head, UV_ENOMEM, "out of memory fetching an index");
  }
}

/* With r's index in hand: choose op's version and get its archive. */
static void repo__select(source_t *s, repo_t *r, source_op_t *op) {
  if (!repo__has_name(r, op->name)) {
    if (op->refetched || repo__want(r, op->name)) {
      src__completef(op, INDEX_ENOENT, "chart %s not found in repository %s", op->name, r->key);
      return;
    }
    op->refetched = 1;
    oplist_push(&r->waiters, op);
    repo__fetch(s, r);
    return;
  }
  const index_chart_t *ch = index_parser_chart(r->snap, op->name);
  const index_version_t *v = NULL;
  char err[512] = "";
  int rc = index_chart_select(ch, op->constraint ? op->constraint : "", &v, err, sizeof err);
  if (rc) {
    src__completef(op, rc, "repository %s: %s", r->key, err);
    return;
  }
  if (!v->nurls) {
    src__completef(op, INDEX_EINVAL, "repository %s: chart %s version %s has no URL in the index", r->key, op->name,
                   v->version);
    return;
  }
  buf_t u = BUF_INIT;
  if (index_url_resolve(r->url, v->urls[0], &u, err, sizeof err)) {
    buf_free(&u);
    src__completef(op, INDEX_EINVAL, "repository %s: chart %s version %s: %s", r->key, op->name, v->version, err);
    return;
  }
  free(op->version);
  op->version = src__dup(v->version);
  char rh[300], ch_host[300];
  src__host(r->url, rh, sizeof rh);
  src__host(u.data, ch_host, sizeof ch_host);
  int send_auth = r->conn.c.pass_credentials || !strcmp(rh, ch_host);
  src__get_archive(s, op, u.data, v->digest, &r->conn, send_auth);
  buf_free(&u);
}

/* ---- walks: every chart of an index, streamed ---- */

static void walk__free(source_walk_t *w) {
  source_t *s = w->s;
  if (w->prev) w->prev->next = w->next;
  else s->walks = w->next;
  if (w->next) w->next->prev = w->prev;
  index_parser_free(w->parser);
  conn_free(&w->conn);
  free(w->key);
  free(w->url);
  free(w);
}

static int walk__on_body(const char *p, size_t n, void *data) {
  source_walk_t *w = data;
  base_sha256_update(&w->sha, p, n);
  int rc = index_parser_feed(w->parser, p, n, w->feed_msg, sizeof w->feed_msg);
  if (rc) w->feed_err = rc;
  return rc;
}

static void walk__fetched(const fetch_response_t *res, void *data) {
  source_walk_t *w = data;
  if (!w->req) { /* cancelled (source_walk_cancel): fetch_cancel runs this at once */
    walk__free(w);
    return;
  }
  w->req = NULL;
  buf_t iu = BUF_INIT, safe = BUF_INIT, m = BUF_INIT;
  repo_t fake = {.url = w->url};
  repo__index_url(&fake, &iu);
  src__safe_url(iu.data ? iu.data : w->url, &safe);
  int err = 0;
  char msg[512] = "", digest[72] = "";
  if (w->feed_err) {
    err = w->feed_err;
    buf_printf(&m, "the index %s is not valid: %s", safe.data, w->feed_msg);
  } else if (res->err || res->status != 200) {
    err = res->err ? res->err : -EIO;
    if (res->errmsg) buf_printf(&m, "cannot fetch the repository index: %s", res->errmsg);
    else buf_printf(&m, "cannot fetch the index %s: HTTP %d", safe.data, res->status);
  } else if ((err = index_parser_finish(w->parser, msg, sizeof msg))) {
    buf_printf(&m, "the index %s is not valid: %s", safe.data, msg);
  } else {
    uint8_t dg[32];
    char hex[65];
    base_sha256_final(&w->sha, dg);
    base_sha256_hex(dg, hex);
    snprintf(digest, sizeof digest, "sha256:%s", hex);
  }
  buf_free(&iu);
  buf_free(&safe);
  source_walk_done_cb done = w->done;
  void *d = w->data;
  walk__free(w);
  done(err, err ? (m.data ? m.data : "out of memory") : NULL, digest, d);
  buf_free(&m);
}

source_walk_t *source_repo_walk(source_t *s, const char *key, index_walk_cb chart_cb, source_walk_done_cb done,
                                void *data) {
  repo_t *r = repo__find(s, key);
  if (!r || !strncmp(r->url, "oci://", 6)) return NULL;
  source_walk_t *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->s = s;
  w->chart_cb = chart_cb;
  w->done = done;
  w->data = data;
  w->next = s->walks;
  if (s->walks) s->walks->prev = w;
  s->walks = w;
  if (!(w->key = strdup(key)) || !(w->url = strdup(r->url)) || conn_copy(&w->conn, &r->conn.c) ||
      index_parser_new_walk(&s->ilim, chart_cb, data, &w->parser)) {
    walk__free(w);
    return NULL;
  }
  base_sha256_init(&w->sha);
  buf_t u = BUF_INIT;
  repo__index_url(r, &u);
  fetch_opts_t fo = repo__index_opts(s, &w->conn, u.data, walk__on_body);
  w->req = fetch_request(s->f, &fo, walk__fetched, w);
  buf_free(&u);
  if (!w->req) {
    walk__free(w);
    return NULL;
  }
  return w;
}

void source_walk_cancel(source_walk_t *w) {
  fetch_req_t *q = w->req;
  w->req = NULL;
  if (q) fetch_cancel(q); /* walk__fetched frees it */
  else walk__free(w);
}

/* ---- public ---- */

int source_new(uv_loop_t *loop, fetch_t *f, const source_opts_t *o, source_t **out) {
  *out = NULL;
  source_t *s = calloc(1, sizeof *s);
  if (!s) return UV_ENOMEM;
  s->loop = loop;
  s->f = f;
  s->cache = o->cache;
  s->max_disk = o->max_disk_bytes ? o->max_disk_bytes : SRC__DEFAULT_DISK;
  s->max_archive = o->max_archive_bytes ? o->max_archive_bytes : SRC__DEFAULT_ARCHIVE;
  s->ilim = o->index_limits;
  s->oci_tag_page = o->oci_tag_page;
  index_limits_defaults(&s->ilim);
  if (o->storage_path && *o->storage_path) {
    if (!(s->dir = strdup(o->storage_path))) {
      free(s);
      return UV_ENOMEM;
    }
    if (mkdir(s->dir, 0700) && errno != EEXIST)
      LOG_W("cannot create the chart storage directory; charts are kept in memory only", "path", s->dir, "error",
            strerror(errno));
    disk__scan(s);
  }
  uv_timer_init(loop, &s->kick);
  s->kick.data = s;
  *out = s;
  return 0;
}

static void src__kick_closed(uv_handle_t *h) {
  source_t *s = h->data;
  for (size_t i = 0; i < s->nurls; i++) free(s->urls[i].url);
  free(s->urls);
  free(s->files);
  free(s->dir);
  free(s);
}

void source_free(source_t *s) {
  if (!s) return;
  while (s->walks) {
    source_walk_t *w = s->walks;
    source_walk_done_cb done = w->done;
    void *d = w->data;
    source_walk_cancel(w);
    done(UV_ECANCELED, "the chart source was closed", "", d);
  }
  while (s->repos) {
    repo_t *r = s->repos;
    s->repos = r->next;
    repo__free(r);
  }
  while (s->dls) {
    dl_t *d = s->dls;
    dl__fail_all(d, UV_ECANCELED, "cancelled");
    if (d->req) fetch_cancel(d->req); /* dl__done frees it */
    else dl__free(s, d);
  }
  oci__close(s);
  src__kick_cb(&s->kick);
  uv_close((uv_handle_t *)&s->kick, src__kick_closed);
}

int source_repo_set(source_t *s, const char *key, const char *url, const source_conn_t *conn, char *message,
                    size_t msglen) {
  if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8) && strncmp(url, "oci://", 6)) {
    snprintf(message, msglen, "the repository URL must start with http://, https:// or oci://");
    return UV_EINVAL;
  }
  repo_t *r = repo__find(s, key);
  if (r && !strcmp(r->url, url) && conn_same(&r->conn, conn)) return 0;
  if (!r) {
    if (!(r = calloc(1, sizeof *r)) || !(r->key = strdup(key))) {
      free(r);
      return UV_ENOMEM;
    }
    r->s = s;
    r->next = s->repos;
    s->repos = r;
  }
  char *u = strdup(url);
  conn_copy_t c;
  if (!u || conn_copy(&c, conn)) {
    free(u);
    conn_free(&c);
    return UV_ENOMEM;
  }
  free(r->url);
  r->url = u;
  conn_free(&r->conn);
  r->conn = c;
  /* A fetch under the old URL or credentials is not trusted: start again. */
  int had_fetch = r->req != NULL;
  repo__cancel_fetch(r);
  repo__drop_index(r);
  r->digest[0] = 0;
  if (had_fetch && r->waiters.head) repo__fetch(s, r);
  return 0;
}

void source_repo_remove(source_t *s, const char *key) {
  for (repo_t **pp = &s->repos; *pp; pp = &(*pp)->next)
    if (!strcmp((*pp)->key, key)) {
      repo_t *r = *pp;
      *pp = r->next;
      repo__free(r);
      return;
    }
}

bool source_repo_known(const source_t *s, const char *key) { return repo__find(s, key) != NULL; }

int64_t source_repo_age(const source_t *s, const char *key) {
  const repo_t *r = repo__find(s, key);
  if (!r || !r->snap) return -1;
  int64_t age = (int64_t)time(NULL) - r->fetched_at;
  return age < 0 ? 0 : age;
}

source_op_t *source_repo_refresh(source_t *s, const char *key, source_index_cb cb, void *data) {
  repo_t *r = repo__find(s, key);
  if (!r) return NULL;
  source_op_t *op = src__op_new(s, OP_REFRESH, data);
  if (!op) return NULL;
  op->icb = cb;
  if (!strncmp(r->url, "oci://", 6)) { /* no index: charts are pulled by reference when asked */
    op->info.status = 200;
    src__complete(op, 0, NULL);
    return op;
  }
  oplist_push(&r->waiters, op);
  repo__fetch(s, r);
  return op;
}

int source_on_index_change(source_t *s, void (*cb)(const char *key, void *data), void *data) {
  for (size_t i = 0; i < sizeof s->listeners / sizeof *s->listeners; i++)
    if (!s->listeners[i].cb) {
      s->listeners[i].cb = cb;
      s->listeners[i].data = data;
      return 0;
    }
  return UV_ENOSPC;
}

void source_off_index_change(source_t *s, void (*cb)(const char *key, void *data), void *data) {
  for (size_t i = 0; i < sizeof s->listeners / sizeof *s->listeners; i++)
    if (s->listeners[i].cb == cb && s->listeners[i].data == data) s->listeners[i].cb = NULL;
}

source_op_t *source_chart_from_repo(source_t *s, const char *key, const char *name, const char *constraint,
                                    source_chart_cb cb, void *data) {
  repo_t *oci = repo__find(s, key);
  if (oci && !strncmp(oci->url, "oci://", 6)) { /* a registry: the chart is URL/NAME, pulled by reference */
    buf_t ref = BUF_INIT;
    size_t n = strlen(oci->url);
    while (n > 6 && oci->url[n - 1] == '/') n--;
    buf_append(&ref, oci->url, n);
    buf_printf(&ref, "/%s", name);
    source_op_t *o = ref.data ? source_chart_from_oci(s, ref.data, constraint, &oci->conn.c, oci->conn.c.plain_http,
                                                      cb, data)
                              : NULL;
    buf_free(&ref);
    return o;
  }
  source_op_t *op = src__op_new(s, OP_REPO_CHART, data);
  if (!op) return NULL;
  op->ccb = cb;
  if (!(op->key = strdup(key)) || !(op->name = strdup(name)) || !(op->constraint = strdup(constraint ? constraint : ""))) {
    src__complete(op, UV_ENOMEM, "out of memory");
    return op;
  }
  repo_t *r = repo__find(s, key);
  if (!r) {
    src__completef(op, UV_ENOENT, "HelmRepository %s is not known (missing, or not reconciled yet)", key);
    return op;
  }
  if (r->snap && repo__has_name(r, name)) {
    repo__select(s, r, op);
    return op;
  }
  if (repo__want(r, name)) {
    src__complete(op, UV_ENOMEM, "out of memory");
    return op;
  }
  op->refetched = 1;
  oplist_push(&r->waiters, op);
  repo__fetch(s, r);
  return op;
}

source_op_t *source_chart_from_url(source_t *s, const char *url, const source_conn_t *conn, source_chart_cb cb,
                                   void *data) {
  source_op_t *op = src__op_new(s, OP_URL_CHART, data);
  if (!op) return NULL;
  op->ccb = cb;
  if (!(op->url = strdup(url)) || conn_copy(&op->conn, conn)) {
    src__complete(op, UV_ENOMEM, "out of memory");
    return op;
  }
  src__get_archive(s, op, url, NULL, &op->conn, 1);
  return op;
}

source_op_t *source_chart_from_bytes(source_t *s, const void *tgz, size_t len, const char *what, source_chart_cb cb,
                                     void *data) {
  source_op_t *op = src__op_new(s, OP_BYTES_CHART, data);
  if (!op) return NULL;
  op->ccb = cb;
  if (len > s->max_archive) {
    src__completef(op, UV_E2BIG, "%s: the chart archive is %zu bytes, more than the limit of %zu", what, len,
                   s->max_archive);
    return op;
  }
  uint8_t dg[32];
  base_sha256(tgz, len, dg);
  chart_cache_entry_t *e = chart_cache_lookup(s->cache, dg);
  if (e) {
    s->stats.memory_hits++;
    src__chart_done(op, e, NULL, "");
    return op;
  }
  char err[1024] = "";
  int rc = chart_cache_load(s->cache, tgz, len, NULL, what, &e, err, sizeof err);
  if (rc) src__complete(op, rc, err);
  else src__chart_done(op, e, NULL, "");
  return op;
}

void source_cancel(source_op_t *op) {
  if (!op) return;
  oplist_remove(op);
  if (op->entry) {
    chart_cache_release(op->s->cache, op->entry);
    op->entry = NULL;
  }
  op->err = UV_ECANCELED;
  free(op->msg);
  op->msg = strdup("cancelled");
  op->info.err = UV_ECANCELED;
  src__deliver(op);
}

void source_chart_release(source_t *s, chart_cache_entry_t *e) {
  if (e) chart_cache_release(s->cache, e);
}

source_stats_t source_get_stats(const source_t *s) { return s->stats; }

/* ==== OCI registries ==========================================================================
 * source_chart_from_oci: (tags →) manifest → chart layer. Each step is a registry request (oj_t)
 * shared by every op that needs the same URL with the same credentials at once, so concurrent
 * pulls of one chart cost one request per step. Auth is per request, as ORAS does it: no
 * credentials until the registry asks, then a token from the Bearer challenge's realm (or basic
 * credentials for a Basic challenge), then one retry. Tokens are kept per registry, scope and
 * credentials (a fingerprint, never the credentials themselves) until they expire; a registry
 * that asked for basic credentials gets them up front the next time. */

#define OCI__MAX_PAGES 1000            /* tag list pages followed */
#define OCI__MAX_TOKENS 256            /* tokens (and basic-auth registries) kept */
#define OCI__TOKEN_BODY ((size_t)1 << 20)

typedef enum { OJ_TAGS, OJ_MANIFEST, OJ_BLOB } oj_kind_t;

typedef struct oj_s oj_t;
typedef struct oci_treq_s oci_treq_t;
struct oj_s {
  oj_t *next;
  source_t *s;
  oj_kind_t kind;
  char *url;                  /* what is fetched */
  char *registry, *repository;
  char *what;                 /* names it in messages: oci://registry/repository[:tag|@digest] */
  char *want_digest;          /* OJ_BLOB: the layer digest the body must have */
  char *scope;                /* the token scope asked for: repository:<name>:pull */
  char fp[65];                /* fingerprint of the credentials and TLS settings */
  conn_copy_t conn;
  fetch_req_t *req;
  int token_phase;            /* waiting for a token (on a token request's list, by tnext) */
  oj_t *tnext;
  int retried;                /* the one retry after a challenge is spent */
  int basic;                  /* send conn's basic credentials */
  char *bearer;               /* send this token */
  oplist_t waiters;
};

typedef struct oci_tok_s {
  struct oci_tok_s *next;
  char *registry, *scope; /* scope "" with token NULL: the registry takes basic credentials */
  char fp[65];
  char *token;
  uint64_t expires; /* uv_now() milliseconds */
} oci_tok_t;

struct oci_state_s {
  oj_t *jobs;
  oci_treq_t *treqs; /* token requests in flight */
  oci_tok_t *toks;
  size_t ntoks;
  int closing;
};

struct oci_op_s {
  oci_ref_t ref;
  char *constraint;
  char fp[65];
  char *base;       /* https://registry (or http://) */
  char *name;       /* oci://registry/repository */
  char *from;       /* the reference pulled: name:tag or name@digest */
  char **tags;
  size_t ntags, captags;
  int pages;
  int verify_tag;   /* the manifest in flight is the constraint's tag, checked against the pinned digest */
};

static void oci__op_free(source_op_t *op) {
  oci_op_t *o = op->oci;
  if (!o) return;
  oci_ref_free(&o->ref);
  free(o->constraint);
  free(o->base);
  free(o->name);
  free(o->from);
  oci_tags_free(o->tags, o->ntags);
  free(o);
  op->oci = NULL;
}

/* The fingerprint of how a request is made: credentials and trust (hex of a sha256). */
static void oci__fp(const source_conn_t *c, char out[65]) {
  base_sha256_ctx_t h;
  base_sha256_init(&h);
  const char *parts[] = {c->auth.username, c->auth.password, c->auth.bearer};
  for (size_t i = 0; i < 3; i++) {
    size_t n = parts[i] ? strlen(parts[i]) + 1 : 0;
    base_sha256_update(&h, &n, sizeof n);
    if (n) base_sha256_update(&h, parts[i], n);
  }
  const struct {
    const char *p;
    size_t n;
  } pem[] = {{c->tls.ca_pem, c->tls.ca_len}, {c->tls.cert_pem, c->tls.cert_len}, {c->tls.key_pem, c->tls.key_len}};
  for (size_t i = 0; i < 3; i++) {
    size_t n = pem[i].p ? pem[i].n + 1 : 0;
    base_sha256_update(&h, &n, sizeof n);
    if (n) base_sha256_update(&h, pem[i].p, pem[i].n);
  }
  uint8_t flags[2] = {c->tls.insecure_skip_verify, c->pass_credentials};
  base_sha256_update(&h, flags, sizeof flags);
  uint8_t d[32];
  base_sha256_final(&h, d);
  base_sha256_hex(d, out);
}

/* ---- tokens ---- */

static void tok__free(oci_tok_t *t) {
  free(t->registry);
  free(t->scope);
  if (t->token) {
    memset(t->token, 0, strlen(t->token));
    free(t->token);
  }
  free(t);
}

static oci_tok_t *tok__find(source_t *s, const char *registry, const char *scope, const char *fp) {
  oci_state_t *st = s->oci;
  uint64_t now = uv_now(s->loop);
  for (oci_tok_t **pp = &st->toks; *pp;) {
    oci_tok_t *t = *pp;
    if (t->expires <= now) { /* expired: gone */
      *pp = t->next;
      st->ntoks--;
      tok__free(t);
      continue;
    }
    if (!strcmp(t->registry, registry) && !strcmp(t->scope, scope) && !strcmp(t->fp, fp)) return t;
    pp = &t->next;
  }
  return NULL;
}

static void tok__drop(source_t *s, const char *registry, const char *scope, const char *fp) {
  oci_state_t *st = s->oci;
  for (oci_tok_t **pp = &st->toks; *pp; pp = &(*pp)->next)
    if (!strcmp((*pp)->registry, registry) && !strcmp((*pp)->scope, scope) && !strcmp((*pp)->fp, fp)) {
      oci_tok_t *t = *pp;
      *pp = t->next;
      st->ntoks--;
      tok__free(t);
      return;
    }
}

/* Keeps token (NULL: the registry takes basic credentials) for ttl_ms; the oldest go first. */
static void tok__put(source_t *s, const char *registry, const char *scope, const char *fp, const char *token,
                     uint64_t ttl_ms) {
  oci_state_t *st = s->oci;
  tok__drop(s, registry, scope, fp);
  oci_tok_t *t = calloc(1, sizeof *t);
  if (!t || !(t->registry = strdup(registry)) || !(t->scope = strdup(scope)) || (token && !(t->token = strdup(token)))) {
    if (t) tok__free(t);
    return; /* not kept: the next request asks again */
  }
  memcpy(t->fp, fp, 65);
  t->expires = uv_now(s->loop) + ttl_ms;
  t->next = st->toks;
  st->toks = t;
  if (++st->ntoks > OCI__MAX_TOKENS) {
    oci_tok_t **pp = &st->toks;
    while ((*pp)->next) pp = &(*pp)->next;
    tok__free(*pp);
    *pp = NULL;
    st->ntoks--;
  }
}

/* ---- registry requests ---- */

static void oj__set_bearer(oj_t *j, const char *token) {
  if (j->bearer) {
    memset(j->bearer, 0, strlen(j->bearer));
    free(j->bearer);
  }
  j->bearer = token ? strdup(token) : NULL; /* NULL when out of memory: the request goes without, and fails plainly */
}

static void oj__free(oj_t *j) {
  oci_state_t *st = j->s->oci;
  for (oj_t **pp = &st->jobs; *pp; pp = &(*pp)->next)
    if (*pp == j) {
      *pp = j->next;
      break;
    }
  free(j->url);
  free(j->registry);
  free(j->repository);
  free(j->what);
  free(j->want_digest);
  free(j->scope);
  oj__set_bearer(j, NULL);
  conn_free(&j->conn);
  free(j);
}

static void oj__fail_all(oj_t *j, int err, const char *msg) {
  while (j->waiters.head) src__complete(j->waiters.head, err, msg);
}

static void oj__done(const fetch_response_t *res, void *data);

static const char *oj__accept(oj_kind_t k) {
  return k == OJ_MANIFEST ? OCI_MEDIA_MANIFEST : k == OJ_TAGS ? "application/json" : "*/*";
}

/* Sends j's request with what it knows of the registry's auth. Frees j when it cannot start. */
static void oj__send(oj_t *j) {
  source_t *s = j->s;
  const source_conn_t *c = &j->conn.c;
  fetch_auth_t auth = {0};
  if (c->auth.bearer) auth.bearer = c->auth.bearer;
  else if (j->bearer) auth.bearer = j->bearer;
  else if (j->basic && c->auth.username && strcmp(c->auth.username, OCI_TOKEN_USER)) {
    auth.username = c->auth.username;
    auth.password = c->auth.password ? c->auth.password : "";
  }
  fetch_opts_t fo = {.url = j->url,
                     .accept = oj__accept(j->kind),
                     .tls = &c->tls,
                     .auth = &auth,
                     .pass_credentials = c->pass_credentials,
                     .timeout_ms = c->timeout_ms,
                     .max_body = j->kind == OJ_BLOB ? s->max_archive : OCI_MAX_JSON};
  s->stats.oci_requests++;
  j->token_phase = 0;
  j->req = fetch_request(s->f, &fo, oj__done, j);
  if (!j->req) {
    oj__fail_all(j, UV_ENOMEM, "out of memory starting a registry request");
    oj__free(j);
  }
}

static int form__escape(buf_t *b, const char *v) {
  static const char hx[] = "0123456789ABCDEF";
  for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
    int rc;
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("-_.~", *p))
      rc = buf_putc(b, (char)*p);
    else rc = buf_putc(b, '%') || buf_putc(b, hx[*p >> 4]) || buf_putc(b, hx[*p & 15]);
    if (rc) return -1;
  }
  return 0;
}

/* A token request in flight, shared by every registry request that waits for a token of the
 * same registry, scope and credentials (they wait on j->tnext). */
struct oci_treq_s {
  oci_treq_t *next;
  source_t *s;
  char *registry, *repository, *scope;
  char fp[65];
  int anonymous;
  fetch_req_t *req;
  oj_t *jobs;
};

static void treq__done(const fetch_response_t *res, void *data);

/* j waits for a token from the challenge's realm: GET with conn's basic credentials (anonymous
 * without), or an OAuth2 refresh-token POST when the credentials are an identity token; a request
 * for the same token already in flight is joined. */
static void oj__get_token(oj_t *j, const oci_challenge_t *ch, const char *scope) {
  source_t *s = j->s;
  oci_state_t *st = s->oci;
  j->token_phase = 1;
  for (oci_treq_t *t = st->treqs; t; t = t->next)
    if (!strcmp(t->registry, j->registry) && !strcmp(t->scope, j->scope) && !strcmp(t->fp, j->fp)) {
      j->tnext = t->jobs;
      t->jobs = j;
      return;
    }
  const source_conn_t *c = &j->conn.c;
  int refresh = c->auth.username && !strcmp(c->auth.username, OCI_TOKEN_USER);
  buf_t url = BUF_INIT, body = BUF_INIT;
  fetch_auth_t auth = {0};
  int bad = 0;
  if (refresh) {
    bad = buf_puts(&url, ch->realm) || buf_puts(&body, "grant_type=refresh_token&client_id=rudder&refresh_token=") ||
          form__escape(&body, c->auth.password ? c->auth.password : "") ||
          (*ch->service && (buf_puts(&body, "&service=") || form__escape(&body, ch->service))) ||
          (*scope && (buf_puts(&body, "&scope=") || form__escape(&body, scope)));
  } else {
    bad = oci_challenge_token_url(ch, scope, &url) != 0;
    if (c->auth.username) {
      auth.username = c->auth.username;
      auth.password = c->auth.password ? c->auth.password : "";
    }
  }
  oci_treq_t *t = bad ? NULL : calloc(1, sizeof *t);
  if (t && (!(t->registry = strdup(j->registry)) || !(t->repository = strdup(j->repository)) ||
            !(t->scope = strdup(j->scope)))) {
    free(t->registry), free(t->repository), free(t->scope), free(t);
    t = NULL;
  }
  if (t) {
    t->s = s;
    memcpy(t->fp, j->fp, 65);
    t->anonymous = !c->auth.username;
    t->jobs = j;
    j->tnext = NULL;
    fetch_opts_t fo = {.url = url.data ? url.data : "",
                       .method = refresh ? "POST" : "GET",
                       .body = body.data,
                       .body_len = body.len,
                       .content_type = refresh ? "application/x-www-form-urlencoded" : NULL,
                       .accept = "application/json",
                       .tls = &c->tls,
                       .auth = &auth,
                       .timeout_ms = c->timeout_ms,
                       .max_body = OCI__TOKEN_BODY};
    s->stats.oci_tokens++;
    t->req = fetch_request(s->f, &fo, treq__done, t);
    if (t->req) {
      t->next = st->treqs;
      st->treqs = t;
    } else {
      free(t->registry), free(t->repository), free(t->scope), free(t);
      t = NULL;
    }
  }
  if (body.data) memset(body.data, 0, body.len);
  buf_free(&body);
  buf_free(&url);
  if (!t) {
    oj__fail_all(j, UV_ENOMEM, "out of memory asking for a registry token");
    oj__free(j);
  }
}

/* A 401 with a challenge: 1 when a retry (or a token request) has started, or j is gone; 0 when
 * there is nothing to try (the 401 stands). */
static int oj__challenge(oj_t *j, const fetch_response_t *res) {
  const char *h = fetch_response_header(res, "WWW-Authenticate");
  if (!h || j->conn.c.auth.bearer) return 0;
  oci_challenge_t ch;
  char err[256];
  if (oci_challenge_parse(h, &ch, err, sizeof err)) return 0;
  j->retried = 1;
  const source_conn_t *c = &j->conn.c;
  if (!strcasecmp(ch.scheme, "Basic")) {
    oci_challenge_free(&ch);
    if (j->basic || !c->auth.username || !strcmp(c->auth.username, OCI_TOKEN_USER)) return 0;
    j->basic = 1;
    oj__set_bearer(j, NULL);
    tok__put(j->s, j->registry, "", j->fp, NULL, UINT64_MAX / 4);
    oj__send(j);
    return 1;
  }
  if (strcasecmp(ch.scheme, "Bearer")) {
    oci_challenge_free(&ch);
    return 0;
  }
  /* A token that came while this request was out (another request asked for it) is tried
   * first; the one that was sent, if any, is not good. */
  const oci_tok_t *t = tok__find(j->s, j->registry, j->scope, j->fp);
  if (t && t->token && (!j->bearer || strcmp(j->bearer, t->token))) {
    oci_challenge_free(&ch);
    oj__set_bearer(j, t->token);
    j->basic = 0;
    oj__send(j);
    return 1;
  }
  tok__drop(j->s, j->registry, j->scope, j->fp);
  oj__get_token(j, &ch, *ch.scope ? ch.scope : j->scope);
  oci_challenge_free(&ch);
  return 1;
}

/* Appends the registry's own reason (distribution's {"errors": [{"code", "message"}]}), if any. */
static void oci__registry_reason(const fetch_response_t *res, buf_t *m) {
  if (!res->body || !res->body_len || res->body_len > 65536) return;
  cJSON *r = cJSON_ParseWithLength(res->body, res->body_len);
  const cJSON *es = r ? cJSON_GetObjectItemCaseSensitive(r, "errors") : NULL;
  const cJSON *e = cJSON_IsArray(es) ? cJSON_GetArrayItem(es, 0) : NULL;
  const cJSON *code = e ? cJSON_GetObjectItemCaseSensitive(e, "code") : NULL;
  const cJSON *msg = e ? cJSON_GetObjectItemCaseSensitive(e, "message") : NULL;
  if (cJSON_IsString(code)) {
    buf_t t = BUF_INIT;
    buf_printf(&t, "%.100s", code->valuestring);
    if (cJSON_IsString(msg) && *msg->valuestring) buf_printf(&t, ": %.200s", msg->valuestring);
    for (size_t i = 0; t.data && i < t.len; i++)
      if ((unsigned char)t.data[i] < 0x20 || t.data[i] == 0x7f) t.data[i] = ' ';
    if (t.data) buf_printf(m, " (%s)", t.data);
    buf_free(&t);
  }
  cJSON_Delete(r);
}

/* The message (and code) for a registry answer that is not 200. */
static int oj__error(const oj_t *j, const fetch_response_t *res, buf_t *m) {
  const source_conn_t *c = &j->conn.c;
  int creds = c->auth.username || c->auth.bearer;
  if (res->err) {
    buf_printf(m, "%s: %s", j->what, res->errmsg ? res->errmsg : uv_strerror(res->err));
    return res->err;
  }
  int rc = -EIO;
  switch (res->status) {
  case 401:
    if (creds)
      buf_printf(m, "%s: 401 Unauthorized: registry %s refused the credentials for repository %s", j->what, j->registry,
                 j->repository);
    else
      buf_printf(m, "%s: 401 Unauthorized: registry %s wants credentials for repository %s", j->what, j->registry,
                 j->repository);
    rc = UV_EACCES;
    break;
  case 403:
    buf_printf(m, "%s: 403 Forbidden: registry %s denied access to repository %s", j->what, j->registry, j->repository);
    rc = UV_EACCES;
    break;
  case 404:
    if (j->kind == OJ_TAGS)
      buf_printf(m, "%s: not found: registry %s has no repository %s", j->what, j->registry, j->repository);
    else if (j->kind == OJ_MANIFEST) buf_printf(m, "%s: not found in registry %s", j->what, j->registry);
    else buf_printf(m, "%s: the chart layer is not found in registry %s", j->what, j->registry);
    rc = INDEX_ENOENT;
    break;
  default:
    if (res->errmsg) buf_printf(m, "%s: %s", j->what, res->errmsg);
    else buf_printf(m, "%s: registry %s answered HTTP %d", j->what, j->registry, res->status);
  }
  oci__registry_reason(res, m);
  return rc;
}

static void oci__on_tags(source_op_t *op, const oj_t *j, const fetch_response_t *res);
static void oci__on_manifest(source_op_t *op, const oj_t *j, const fetch_response_t *res);

/* The token service answered: every registry request that waited goes on with the token, or
 * fails with the reason. */
static void treq__done(const fetch_response_t *res, void *data) {
  oci_treq_t *t = data;
  source_t *s = t->s;
  oci_state_t *st = s->oci;
  for (oci_treq_t **pp = &st->treqs; *pp; pp = &(*pp)->next)
    if (*pp == t) {
      *pp = t->next;
      break;
    }
  buf_t m = BUF_INIT, tok = BUF_INIT;
  char host[300];
  src__host(res->url && *res->url ? res->url : "", host, sizeof host);
  int err = 0;
  if (res->err == UV_ECANCELED || st->closing) {
    err = UV_ECANCELED;
    buf_puts(&m, "cancelled");
  } else if (res->err) {
    err = res->err;
    buf_printf(&m, "cannot get a token for repository %s of registry %s: %s", t->repository, t->registry,
               res->errmsg ? res->errmsg : uv_strerror(res->err));
  } else if (res->status == 401 || res->status == 403) {
    err = UV_EACCES;
    buf_printf(&m, "%d %s: the token service %s of registry %s %s for repository %s", res->status,
               res->status == 401 ? "Unauthorized" : "Forbidden", host, t->registry,
               t->anonymous ? "wants credentials" : "refused the credentials", t->repository);
  } else if (res->status != 200) {
    err = -EIO;
    buf_printf(&m, "the token service %s answered HTTP %d for registry %s, repository %s", host, res->status,
               t->registry, t->repository);
  } else {
    uint64_t ttl = 60;
    char e[256];
    if (oci_token_parse(res->body ? res->body : "", res->body_len, &tok, &ttl, e, sizeof e)) {
      err = UV_EINVAL;
      buf_printf(&m, "the token service %s for registry %s: %s", host, t->registry, e);
    } else {
      uint64_t ms = ttl * 1000;
      ms -= ttl > 20 ? 10000 : ms / 4; /* renewed a little before the registry would refuse it */
      tok__put(s, t->registry, t->scope, t->fp, tok.data, ms);
    }
  }
  while (t->jobs) {
    oj_t *j = t->jobs;
    t->jobs = j->tnext;
    j->tnext = NULL;
    j->token_phase = 0;
    if (!j->waiters.head) oj__free(j);
    else if (err) {
      buf_t jm = BUF_INIT;
      if (err == UV_ECANCELED) buf_puts(&jm, "cancelled");
      else buf_printf(&jm, "%s: %s", j->what, m.data ? m.data : "out of memory");
      oj__fail_all(j, err, jm.data ? jm.data : "out of memory");
      buf_free(&jm);
      oj__free(j);
    } else {
      oj__set_bearer(j, tok.data ? tok.data : "");
      j->basic = 0;
      oj__send(j);
    }
  }
  if (tok.data) memset(tok.data, 0, tok.len);
  buf_free(&tok);
  buf_free(&m);
  free(t->registry);
  free(t->repository);
  free(t->scope);
  free(t);
}

static void oci__blob_done(oj_t *j, const fetch_response_t *res) {
  source_t *s = j->s;
  buf_t m = BUF_INIT;
  if (res->err || res->status != 200) {
    int rc = oj__error(j, res, &m);
    oj__fail_all(j, rc, m.data ? m.data : "out of memory");
  } else {
    s->stats.downloads++;
    chart_cache_entry_t *e = NULL;
    int rc = src__load(s, res->body ? res->body : "", res->body_len, j->want_digest, j->what, &e, &m);
    if (rc) oj__fail_all(j, rc, m.data ? m.data : "out of memory");
    else {
      while (j->waiters.head) {
        source_op_t *op = j->waiters.head;
        chart_cache_addref(s->cache, e);
        src__chart_done(op, e, NULL, op->oci->from);
      }
      chart_cache_release(s->cache, e);
    }
  }
  buf_free(&m);
}

static void oj__done(const fetch_response_t *res, void *data) {
  oj_t *j = data;
  source_t *s = j->s;
  j->req = NULL;
  if (!j->waiters.head || res->err == UV_ECANCELED || s->oci->closing) {
    oj__fail_all(j, UV_ECANCELED, "cancelled");
    oj__free(j);
    return;
  }
  if (!res->err && res->status == 401 && !j->retried && oj__challenge(j, res)) return;
  /* The answer stands: no new op joins j from here on. */
  oci_state_t *st = s->oci;
  for (oj_t **pp = &st->jobs; *pp; pp = &(*pp)->next)
    if (*pp == j) {
      *pp = j->next;
      break;
    }
  j->next = NULL;
  if (j->kind == OJ_BLOB) oci__blob_done(j, res);
  else
    while (j->waiters.head) {
      source_op_t *op = j->waiters.head;
      oplist_remove(op);
      if (j->kind == OJ_TAGS) oci__on_tags(op, j, res);
      else oci__on_manifest(op, j, res);
    }
  oj__free(j);
}

/* op waits for url (of kind, named what in messages), joining a request in flight for the same
 * URL and credentials, else starting one. */
static void oj__join(source_t *s, source_op_t *op, oj_kind_t kind, const char *url, const char *what,
                     const char *want) {
  oci_op_t *o = op->oci;
  for (oj_t *j = s->oci->jobs; j; j = j->next)
    if (j->kind == kind && !strcmp(j->url, url) && !strcmp(j->fp, o->fp)) {
      oplist_push(&j->waiters, op);
      return;
    }
  oj_t *j = calloc(1, sizeof *j);
  buf_t sc = BUF_INIT;
  buf_printf(&sc, "repository:%s:pull", o->ref.repository);
  if (!j || !(j->url = strdup(url)) || !(j->registry = strdup(o->ref.registry)) ||
      !(j->repository = strdup(o->ref.repository)) || !(j->what = strdup(what)) || !sc.data ||
      (want && !(j->want_digest = strdup(want))) || conn_copy(&j->conn, &op->conn.c)) {
    if (j) {
      free(j->url), free(j->registry), free(j->repository), free(j->what), free(j->want_digest);
      conn_free(&j->conn);
      free(j);
    }
    buf_free(&sc);
    src__complete(op, UV_ENOMEM, "out of memory");
    return;
  }
  j->scope = buf_steal(&sc);
  j->s = s;
  j->kind = kind;
  memcpy(j->fp, o->fp, 65);
  j->next = s->oci->jobs;
  s->oci->jobs = j;
  oplist_push(&j->waiters, op);
  /* What is known of this registry's auth goes along at once. */
  const oci_tok_t *t = tok__find(s, j->registry, j->scope, j->fp);
  if (t && t->token) oj__set_bearer(j, t->token);
  else if ((t = tok__find(s, j->registry, "", j->fp)) && !t->token) j->basic = 1;
  oj__send(j);
}

static void oci__close(source_t *s) {
  oci_state_t *st = s->oci;
  if (!st) return;
  st->closing = 1;
  while (st->treqs) fetch_cancel(st->treqs->req); /* treq__done fails and frees its jobs */
  while (st->jobs) {
    oj_t *j = st->jobs;
    oj__fail_all(j, UV_ECANCELED, "cancelled");
    if (j->req) fetch_cancel(j->req); /* oj__done frees it */
    else oj__free(j);
  }
  while (st->toks) {
    oci_tok_t *t = st->toks;
    st->toks = t->next;
    tok__free(t);
  }
  free(st);
  s->oci = NULL;
}

/* ---- the steps of a pull ---- */

static void oci__manifest(source_t *s, source_op_t *op, const char *reference, int verify_tag);

static int oci__tag_ok(const char *t) {
  size_t n = strlen(t);
  if (!n || n > 128) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = t[i];
    int w = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!w && (i == 0 || (c != '.' && c != '-'))) return 0;
  }
  return 1;
}

/* A version as a tag: '+' becomes '_' (tags cannot hold '+'). */
static char *oci__as_tag(const char *v) {
  char *t = strdup(v);
  if (t)
    for (char *p = t; *p; p++)
      if (*p == '+') *p = '_';
  return t;
}

static void oci__tags_page(source_t *s, source_op_t *op, const char *url) {
  oj__join(s, op, OJ_TAGS, url, op->oci->name, NULL);
}

static void oci__on_tags(source_op_t *op, const oj_t *j, const fetch_response_t *res) {
  source_t *s = op->s;
  oci_op_t *o = op->oci;
  if (res->err || res->status != 200) {
    buf_t m = BUF_INIT;
    int rc = oj__error(j, res, &m);
    src__complete(op, rc, m.data ? m.data : "out of memory");
    buf_free(&m);
    return;
  }
  char err[512];
  char **tags;
  size_t n;
  int rc = oci_tags_parse(res->body ? res->body : "", res->body_len, &tags, &n, err, sizeof err);
  if (rc) {
    src__completef(op, rc == OCI_ENOMEM ? UV_ENOMEM : UV_EINVAL, "%s: %s", o->name, err);
    return;
  }
  if (o->ntags + n > OCI_MAX_TAGS) {
    oci_tags_free(tags, n);
    src__completef(op, UV_E2BIG, "%s: more than %d tags", o->name, OCI_MAX_TAGS);
    return;
  }
  if (o->ntags + n > o->captags) {
    size_t cap = o->captags ? o->captags : 64;
    while (cap < o->ntags + n) cap *= 2;
    char **nt = realloc(o->tags, cap * sizeof *nt);
    if (!nt) {
      oci_tags_free(tags, n);
      src__complete(op, UV_ENOMEM, "out of memory");
      return;
    }
    o->tags = nt;
    o->captags = cap;
  }
  if (n) memcpy(o->tags + o->ntags, tags, n * sizeof *tags);
  o->ntags += n;
  free(tags);
  /* The next page, as the registry's Link header says. */
  const char *link = fetch_response_header(res, "Link");
  buf_t next = BUF_INIT;
  if (link && oci_link_next(link, &next) == 0 && next.data) {
    buf_t u = BUF_INIT;
    size_t bn = strlen(o->base);
    if (next.data[0] == '/') buf_printf(&u, "%s%s", o->base, next.data);
    else if (!strncmp(next.data, o->base, bn) && next.data[bn] == '/') buf_puts(&u, next.data);
    buf_free(&next);
    if (!u.data) {
      src__completef(op, UV_EINVAL, "%s: the tag list's next page is not on registry %s", o->name, o->ref.registry);
    } else if (++o->pages >= OCI__MAX_PAGES) {
      src__completef(op, UV_E2BIG, "%s: the tag list has more than %d pages", o->name, OCI__MAX_PAGES);
    } else {
      oci__tags_page(s, op, u.data);
    }
    buf_free(&u);
    return;
  }
  buf_free(&next);
  if (!o->ntags) {
    src__completef(op, INDEX_ENOENT, "%s: unable to locate any tags in provided repository", o->name);
    return;
  }
  buf_t v = BUF_INIT;
  rc = oci_tags_select((const char *const *)o->tags, o->ntags, o->constraint, &v, err, sizeof err);
  if (rc) {
    buf_free(&v);
    src__completef(op, rc == OCI_ENOENT ? INDEX_ENOENT : rc == OCI_ENOMEM ? UV_ENOMEM : UV_EINVAL, "%s: %s", o->name,
                   err);
    return;
  }
  char *tag = oci__as_tag(v.data);
  buf_free(&v);
  if (!tag) {
    src__complete(op, UV_ENOMEM, "out of memory");
    return;
  }
  oci__manifest(s, op, tag, 0);
  free(tag);
}

/* The chart layer by digest: from memory, from disk, else from the registry. */
static void oci__layer(source_t *s, source_op_t *op, const char *digest) {
  oci_op_t *o = op->oci;
  uint8_t dg[32];
  if (strncmp(digest, "sha256:", 7) || chart_cache_digest_parse(digest, dg)) {
    src__completef(op, UV_EINVAL, "%s: the chart layer's digest %.100s is not sha256 (the only kind supported)",
                   o->from, digest);
    return;
  }
  chart_cache_entry_t *e = chart_cache_lookup(s->cache, dg);
  if (e) {
    s->stats.memory_hits++;
    src__chart_done(op, e, NULL, o->from);
    return;
  }
  char hex[65];
  base_sha256_hex(dg, hex);
  buf_t b = BUF_INIT;
  if (disk__read(s, hex, &b) == 0) {
    buf_t m = BUF_INIT;
    int rc = src__load(s, b.data ? b.data : "", b.len, digest, o->from, &e, &m);
    buf_free(&m);
    if (rc == 0) {
      s->stats.disk_hits++;
      disk__note(s, hex, b.len);
      buf_free(&b);
      src__chart_done(op, e, NULL, o->from);
      return;
    } /* a bad file on disk: fetched again */
  }
  buf_free(&b);
  buf_t path = BUF_INIT, u = BUF_INIT, what = BUF_INIT;
  oci_path_blob(&o->ref, digest, &path);
  buf_printf(&u, "%s%s", o->base, path.data ? path.data : "");
  buf_printf(&what, "%s@%s", o->name, digest);
  if (!path.data || !u.data || !what.data) src__complete(op, UV_ENOMEM, "out of memory");
  else oj__join(s, op, OJ_BLOB, u.data, what.data, digest);
  buf_free(&path);
  buf_free(&u);
  buf_free(&what);
}

static void oci__on_manifest(source_op_t *op, const oj_t *j, const fetch_response_t *res) {
  source_t *s = op->s;
  oci_op_t *o = op->oci;
  int ok = !res->err && res->status == 200;
  char got[72] = "";
  if (ok) {
    uint8_t d[32];
    base_sha256(res->body ? res->body : "", res->body_len, d);
    char hex[65];
    base_sha256_hex(d, hex);
    snprintf(got, sizeof got, "sha256:%s", hex);
  }
  if (o->verify_tag) {
    /* As Helm: a tag named by the version must point at the pinned digest when it exists; any
     * failure to resolve it is no error (the chart need not be tagged). */
    o->verify_tag = 0;
    if (ok && strcmp(got, o->ref.digest)) {
      src__completef(op, CHART_CACHE_EDIGEST, "%s@%s: chart reference digest mismatch: %s is not %s", o->name,
                     o->ref.digest, got, o->ref.digest);
      return;
    }
    oci__manifest(s, op, o->ref.digest, 0);
    return;
  }
  if (!ok) {
    buf_t m = BUF_INIT;
    int rc = oj__error(j, res, &m);
    src__complete(op, rc, m.data ? m.data : "out of memory");
    buf_free(&m);
    return;
  }
  if (*o->ref.digest && strcmp(got, o->ref.digest)) {
    src__completef(op, CHART_CACHE_EDIGEST, "%s: digest mismatch: the registry's manifest is %s", o->from, got);
    return;
  }
  /* The registry's own word for what it sent, when it gives one, must be what arrived (as ORAS
   * checks content against its descriptor). */
  const char *dcd = fetch_response_header(res, "Docker-Content-Digest");
  if (dcd && !strncmp(dcd, "sha256:", 7) && strcmp(dcd, got)) {
    src__completef(op, CHART_CACHE_EDIGEST, "%s: digest mismatch: the registry says the manifest is %.80s, it is %s",
                   o->from, dcd, got);
    return;
  }
  oci_manifest_t m;
  char err[512];
  int rc = oci_manifest_parse(res->body ? res->body : "", res->body_len, &m, err, sizeof err);
  if (rc) {
    src__completef(op, rc == OCI_ENOMEM ? UV_ENOMEM : rc == OCI_E2BIG ? UV_E2BIG : UV_EINVAL, "%s: %s", o->from, err);
    return;
  }
  if (m.legacy)
    LOG_W("the chart layer has the deprecated media type " OCI_MEDIA_HELM_CHART_LEGACY, "chart", o->from);
  if (m.chart.size > s->max_archive)
    src__completef(op, UV_E2BIG, "%s: the chart layer is %llu bytes, more than the limit of %zu", o->from,
                   (unsigned long long)m.chart.size, s->max_archive);
  else oci__layer(s, op, m.chart.digest);
  oci_manifest_free(&m);
}

/* The manifest for reference (a tag, or the pinned digest). */
static void oci__manifest(source_t *s, source_op_t *op, const char *reference, int verify_tag) {
  oci_op_t *o = op->oci;
  buf_t path = BUF_INIT, u = BUF_INIT, from = BUF_INIT;
  oci_path_manifest(&o->ref, reference, &path);
  buf_printf(&u, "%s%s", o->base, path.data ? path.data : "");
  buf_printf(&from, "%s%c%s", o->name, !strncmp(reference, "sha256:", 7) ? '@' : ':', reference);
  if (!path.data || !u.data || !from.data) {
    buf_free(&path), buf_free(&u), buf_free(&from);
    src__complete(op, UV_ENOMEM, "out of memory");
    return;
  }
  o->verify_tag = verify_tag;
  if (!verify_tag) {
    free(o->from);
    o->from = buf_steal(&from);
  }
  oj__join(s, op, OJ_MANIFEST, u.data, verify_tag ? from.data : o->from, NULL);
  buf_free(&path);
  buf_free(&u);
  buf_free(&from);
}

source_op_t *source_chart_from_oci(source_t *s, const char *ref, const char *constraint, const source_conn_t *conn,
                                   bool plain_http, source_chart_cb cb, void *data) {
  source_op_t *op = src__op_new(s, OP_OCI_CHART, data);
  if (!op) return NULL;
  op->ccb = cb;
  if (!constraint) constraint = "";
  oci_op_t *o = NULL;
  if ((!s->oci && !(s->oci = calloc(1, sizeof *s->oci))) || !(o = op->oci = calloc(1, sizeof *o)) ||
      conn_copy(&op->conn, conn) || !(o->constraint = strdup(constraint))) {
    src__complete(op, UV_ENOMEM, "out of memory");
    return op;
  }
  char err[512];
  int rc = oci_ref_parse(ref, &o->ref, err, sizeof err);
  if (rc) {
    src__complete(op, rc == OCI_ENOMEM ? UV_ENOMEM : UV_EINVAL, err);
    return op;
  }
  oci__fp(&op->conn.c, o->fp);
  buf_t b = BUF_INIT, n = BUF_INIT;
  buf_printf(&b, "%s://%s", plain_http ? "http" : "https", o->ref.registry);
  buf_printf(&n, "oci://%s/%s", o->ref.registry, o->ref.repository);
  if (!b.data || !n.data) {
    buf_free(&b), buf_free(&n);
    src__complete(op, UV_ENOMEM, "out of memory");
    return op;
  }
  o->base = buf_steal(&b);
  o->name = buf_steal(&n);
  if (*o->ref.digest) { /* pinned */
    if (strncmp(o->ref.digest, "sha256:", 7)) {
      src__completef(op, UV_EINVAL, "%s@%s: only sha256 digests are supported", o->name, o->ref.digest);
      return op;
    }
    char *t = *constraint ? oci__as_tag(constraint) : NULL;
    if (*constraint && !t) {
      src__complete(op, UV_ENOMEM, "out of memory");
      return op;
    }
    oci__manifest(s, op, t && oci__tag_ok(t) ? t : o->ref.digest, t && oci__tag_ok(t));
    free(t);
    return op;
  }
  char *want = *constraint ? oci__as_tag(constraint) : NULL;
  if (*constraint && !want) {
    src__complete(op, UV_ENOMEM, "out of memory");
    return op;
  }
  if (*o->ref.tag) { /* the reference's tag; a version given too must be the same */
    if (want && strcmp(want, o->ref.tag))
      src__completef(op, UV_EINVAL, "%s:%s: chart reference and version mismatch: %s is not %s", o->name, o->ref.tag,
                     constraint, o->ref.tag);
    else oci__manifest(s, op, o->ref.tag, 0);
  } else if (want && semver_valid(constraint, strlen(constraint))) { /* a version: the tag itself */
    if (!oci__tag_ok(want))
      src__completef(op, UV_EINVAL, "invalid reference: invalid tag \"%.200s\"", constraint);
    else oci__manifest(s, op, want, 0);
  } else { /* a range, or nothing: the newest the tag list has for it */
    buf_t path = BUF_INIT, u = BUF_INIT;
    oci_path_tags(&o->ref, s->oci_tag_page, NULL, &path);
    buf_printf(&u, "%s%s", o->base, path.data ? path.data : "");
    if (!path.data || !u.data) src__complete(op, UV_ENOMEM, "out of memory");
    else oci__tags_page(s, op, u.data);
    buf_free(&path);
    buf_free(&u);
  }
  free(want);
  return op;
}
