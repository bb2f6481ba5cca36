/* source_chart_from_oci against an in-process registry and token service on loopback (plain
 * HTTP, so plain_http is what they are reached with): the cases the real test registries cannot
 * be made to show (e2e.helm_source_oci_servers has those). Tag lists paged by the registry's Link
 * (relative and absolute; another host refused), no credentials until a challenge, basic sent up
 * front once a registry asked for it, tokens kept and reused, a token the registry stops taking
 * (fetched again, one retry), an expired token not sent, the OAuth2 refresh-token grant of an
 * identity token, 403, a pinned manifest or a blob that is not what its digest says, a layer over
 * the size limit, the legacy layer media type, '_' tags for '+' versions, cancellation and a
 * source freed with a token request in flight. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "base/gz.h"
#include "base/sha256.h"
#include "helm/source/oci.h"
#include "helm/source/source.h"
#include "t.h"
#include "test_watch_server.h"

static uv_loop_t *loop;
static fetch_t *F;
static tsrv_t reg, tok;

/* ---- charts ---- */

static size_t tar_add(unsigned char *buf, size_t off, const char *name, const char *data, size_t len) {
  unsigned char *h = buf + off;
  memset(h, 0, 512);
  strncpy((char *)h, name, 100);
  memcpy(h + 100, "0000644", 7);
  snprintf((char *)h + 124, 12, "%011zo", len);
  h[156] = '0';
  memcpy(h + 257, "ustar\0" "00", 8);
  memset(h + 148, ' ', 8);
  unsigned sum = 0;
  for (int i = 0; i < 512; i++) sum += h[i];
  snprintf((char *)h + 148, 8, "%06o", sum);
  off += 512;
  if (len) memcpy(buf + off, data, len);
  return off + ((len + 511) & ~(size_t)511);
}

typedef struct {
  const char *tag, *version;
  unsigned char *tgz;
  size_t len;
  char digest[72];
} chart_t_;

static chart_t_ charts[] = {
    {.tag = "0.1.0", .version = "0.1.0"},
    {.tag = "0.2.0", .version = "0.2.0"},
    {.tag = "0.3.0-rc.1", .version = "0.3.0-rc.1"},
    {.tag = "1.0.0_build.1", .version = "1.0.0+build.1"},
    {.tag = "latest", .version = "0.2.0"},
};
#define NCHARTS (sizeof charts / sizeof *charts)

static void hexdig(const void *p, size_t n, char out[72]) {
  uint8_t d[32];
  base_sha256(p, n, d);
  strcpy(out, "sha256:");
  for (int i = 0; i < 32; i++) snprintf(out + 7 + 2 * i, 3, "%02x", d[i]);
}

static void make_charts(void) {
  for (size_t i = 0; i < NCHARTS; i++) {
    unsigned char *tar = calloc(1, 8192);
    char cy[256];
    snprintf(cy, sizeof cy, "apiVersion: v2\nname: chart\nversion: %s\n", charts[i].version);
    size_t off = tar_add(tar, 0, "chart/Chart.yaml", cy, strlen(cy));
    const char *cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n";
    off = tar_add(tar, off, "chart/templates/cm.yaml", cm, strlen(cm));
    off += 1024;
    CHECK_EQ_INT(gz_compress(tar, off, -1, &charts[i].tgz, &charts[i].len), 0);
    free(tar);
    hexdig(charts[i].tgz, charts[i].len, charts[i].digest);
  }
}

static const chart_t_ *chart_by_tag(const char *t) {
  for (size_t i = 0; i < NCHARTS; i++)
    if (!strcmp(charts[i].tag, t)) return &charts[i];
  return NULL;
}

static const chart_t_ *chart_by_digest(const char *d) {
  for (size_t i = 0; i < NCHARTS; i++)
    if (!strcmp(charts[i].digest, d)) return &charts[i];
  return NULL;
}

static void manifest_of(const chart_t_ *c, const char *media, unsigned long long size, buf_t *out) {
  buf_printf(out,
             "{\"schemaVersion\":2,\"mediaType\":\"" OCI_MEDIA_MANIFEST "\",\"config\":{\"mediaType\":\"" OCI_MEDIA_HELM_CONFIG
             "\",\"digest\":\"sha256:%064d\",\"size\":2},\"layers\":[{\"mediaType\":\"%s\",\"digest\":\"%s\",\"size\":%llu}]}",
             0, media, c->digest, size ? size : (unsigned long long)c->len);
}

/* ---- the fake registry ---- */

static struct {
  int unauthenticated, authenticated; /* requests to the registry with and without Authorization */
  int tag_pages, manifests, blobs;
  int token_gets, token_posts;
  int valid_from;       /* tokens tok-N with N >= valid_from are taken */
  int next_token;
  int token_ttl;        /* expires_in of the tokens issued */
  int token_delay_ms;
  int stale_token_sent; /* a token the registry no longer takes arrived */
  char last_post[1024];
} fk;

static const char *hdr(const char *headers, const char *name, char *out, size_t n) {
  size_t k = strlen(name);
  for (const char *p = headers; *p;) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len > k + 2 && !strncasecmp(p, name, k) && p[k] == ':') {
      const char *v = p + k + 1;
      while (*v == ' ') v++;
      size_t vn = len - (size_t)(v - p);
      if (vn >= n) vn = n - 1;
      memcpy(out, v, vn);
      out[vn] = 0;
      return out;
    }
    p = e ? e + 1 : p + len;
  }
  return NULL;
}

static void reply(tconn_t *c, int status, const char *extra, const char *ctype, const void *body, size_t n) {
  buf_t b = BUF_INIT;
  buf_printf(&b, "HTTP/1.1 %d X\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s\r\n", status, ctype, n, extra ? extra : "");
  buf_append(&b, body, n);
  tsrv_write(c, b.data, b.len);
  buf_free(&b);
}

static void reply_err(tconn_t *c, int status, const char *extra, const char *code) {
  char body[256];
  snprintf(body, sizeof body, "{\"errors\":[{\"code\":\"%s\",\"message\":\"%s\"}]}", code, "fake says no");
  reply(c, status, extra, "application/json", body, strlen(body));
}

/* "secret" is the password of user "u" (basic registry, token service) */
#define BASIC_OK "Basic dTpzZWNyZXQ="

static int authorized(tconn_t *c, const char *repo, const char *headers) {
  char a[512];
  const char *auth = hdr(headers, "Authorization", a, sizeof a);
  if (auth) fk.authenticated++;
  else fk.unauthenticated++;
  if (!strncmp(repo, "basic/", 6)) {
    if (auth && !strcmp(auth, BASIC_OK)) return 1;
    reply_err(c, 401, "WWW-Authenticate: Basic realm=\"fake\"\r\n", "UNAUTHORIZED");
    return 0;
  }
  if (!strncmp(repo, "bearer/", 7)) {
    int n;
    if (auth && sscanf(auth, "Bearer tok-%d", &n) == 1) {
      if (n >= fk.valid_from) return 1;
      fk.stale_token_sent++;
    }
    char ch[512];
    snprintf(ch, sizeof ch,
             "WWW-Authenticate: Bearer realm=\"http://127.0.0.1:%d/token\",service=\"fake\",scope=\"repository:%s:pull\"\r\n",
             tok.port, "bearer/chart");
    reply_err(c, 401, ch, "UNAUTHORIZED");
    return 0;
  }
  if (!strncmp(repo, "deny/", 5)) {
    reply_err(c, 403, NULL, "DENIED");
    return 0;
  }
  return 1;
}

static void on_registry(tconn_t *c, const char *method, const char *url, const char *headers, const char *body,
                        size_t body_len) {
  char repo[128] = "", rest[512] = "";
  if (strncmp(url, "/v2/", 4)) return reply_err(c, 404, NULL, "NOT_FOUND");
  const char *p = url + 4;
  const char *m = strstr(p, "/manifests/"), *b = strstr(p, "/blobs/"), *t = strstr(p, "/tags/list");
  const char *end = m ? m : b ? b : t;
  if (!end || (size_t)(end - p) >= sizeof repo) return reply_err(c, 404, NULL, "NOT_FOUND");
  memcpy(repo, p, (size_t)(end - p));
  size_t rl = strlen(repo);
  if (rl < 6 || strcmp(repo + rl - 6, "/chart")) return reply_err(c, 404, NULL, "NAME_UNKNOWN");
  snprintf(rest, sizeof rest, "%s", m ? m + 11 : b ? b + 7 : t + 10);
  if (!authorized(c, repo, headers)) return;
  const char *mt = !strncmp(repo, "legacy/", 7) ? OCI_MEDIA_HELM_CHART_LEGACY : OCI_MEDIA_HELM_CHART;
  if (t) { /* pages of two: a relative Link, then an absolute one */
    fk.tag_pages++;
    int page = 0;
    if (strstr(rest, "last=0.2.0")) page = 1;
    else if (strstr(rest, "last=1.0.0_build.1")) page = 2;
    buf_t js = BUF_INIT, link = BUF_INIT;
    buf_printf(&js, "{\"name\":\"%s\",\"tags\":[", repo);
    for (size_t i = (size_t)page * 2; i < NCHARTS && i < (size_t)page * 2 + 2; i++)
      buf_printf(&js, "%s\"%s\"", i % 2 ? "," : "", charts[i].tag);
    buf_puts(&js, "]}");
    if (page == 0) {
      if (!strncmp(repo, "evil/", 5)) buf_printf(&link, "Link: <http://127.0.0.2:1/v2/%s/tags/list?last=0.2.0>; rel=\"next\"\r\n", repo);
      else buf_printf(&link, "Link: </v2/%s/tags/list?n=2&last=0.2.0>; rel=\"next\"\r\n", repo);
    } else if (page == 1)
      buf_printf(&link, "Link: <http://127.0.0.1:%d/v2/%s/tags/list?n=2&last=1.0.0_build.1>; rel=\"next\"\r\n", reg.port, repo);
    reply(c, 200, link.data, "application/json", js.data, js.len);
    buf_free(&js);
    buf_free(&link);
    return;
  }
  if (m) {
    fk.manifests++;
    const chart_t_ *ch = !strncmp(rest, "sha256:", 7) ? NULL : chart_by_tag(rest);
    buf_t js = BUF_INIT;
    if (!strncmp(rest, "sha256:", 7)) { /* by digest: the manifest whose digest it is */
      for (size_t i = 0; i < NCHARTS && !ch; i++) {
        buf_reset(&js);
        manifest_of(&charts[i], mt, 0, &js);
        char d[72];
        hexdig(js.data, js.len, d);
        if (!strcmp(d, rest) || !strncmp(repo, "badpin/", 7)) ch = &charts[i];
      }
    }
    if (!ch) {
      buf_free(&js);
      return reply_err(c, 404, NULL, "MANIFEST_UNKNOWN");
    }
    buf_reset(&js);
    manifest_of(ch, mt, !strncmp(repo, "big/", 4) ? 100u << 20 : 0, &js);
    if (!strncmp(repo, "badpin/", 7) && !strncmp(rest, "sha256:", 7)) buf_puts(&js, " ");
    char d[72], dh[128];
    hexdig(js.data, js.len, d);
    if (!strncmp(repo, "baddcd/", 7)) d[10] = d[10] == '0' ? '1' : '0';
    snprintf(dh, sizeof dh, "Docker-Content-Digest: %s\r\n", d);
    reply(c, 200, dh, OCI_MEDIA_MANIFEST, js.data, js.len);
    buf_free(&js);
    return;
  }
  fk.blobs++;
  const chart_t_ *ch = chart_by_digest(rest);
  if (!ch) return reply_err(c, 404, NULL, "BLOB_UNKNOWN");
  if (!strncmp(repo, "badblob/", 8)) {
    const chart_t_ *other = ch == &charts[0] ? &charts[1] : &charts[0];
    return reply(c, 200, NULL, "application/octet-stream", other->tgz, other->len);
  }
  reply(c, 200, NULL, "application/octet-stream", ch->tgz, ch->len);
}

static void on_token(tconn_t *c, const char *method, const char *url, const char *headers, const char *body,
                     size_t body_len) {
  char a[512];
  int ok;
  if (!strcmp(method, "POST")) {
    fk.token_posts++;
    snprintf(fk.last_post, sizeof fk.last_post, "%.*s", (int)body_len, body);
    ok = strstr(body, "grant_type=refresh_token") && strstr(body, "refresh_token=RT-good");
  } else {
    fk.token_gets++;
    const char *auth = hdr(headers, "Authorization", a, sizeof a);
    ok = auth && !strcmp(auth, BASIC_OK) && strstr(url, "scope=repository%3Abearer%2Fchart%3Apull") &&
         strstr(url, "service=fake");
  }
  buf_t b = BUF_INIT, r = BUF_INIT;
  if (ok)
    buf_printf(&b, "{\"%s\":\"tok-%d\",\"expires_in\":%d}", !strcmp(method, "POST") ? "access_token" : "token",
               fk.next_token++, fk.token_ttl);
  else buf_puts(&b, "{\"errors\":[{\"code\":\"UNAUTHORIZED\"}]}");
  buf_printf(&r, "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s", ok ? 200 : 401,
             b.len, b.data);
  tsrv_later(c, (uint64_t)fk.token_delay_ms, r.data, r.len);
  buf_free(&b);
  buf_free(&r);
}

/* ---- pulls ---- */

typedef struct {
  int done, err;
  char msg[2048], version[64], digest[80], url[256];
  chart_cache_entry_t *e;
} res_t;

static void on_chart(int err, const char *message, const source_chart_t *ch, void *data) {
  res_t *r = data;
  r->done = 1;
  uv_stop(loop); /* wait_all looks at once, not after the next poll */
  r->err = err;
  snprintf(r->msg, sizeof r->msg, "%s", message ? message : "");
  if (ch) {
    snprintf(r->version, sizeof r->version, "%s", ch->version);
    snprintf(r->digest, sizeof r->digest, "%s", ch->digest);
    snprintf(r->url, sizeof r->url, "%s", ch->url);
    r->e = ch->entry;
  }
}

static void wait_all(res_t *rs, size_t n) {
  uint64_t until = uv_now(loop) + 20000;
  for (;;) {
    size_t k = 0;
    while (k < n && rs[k].done) k++;
    if (k == n || uv_now(loop) > until) break;
    uv_run(loop, UV_RUN_ONCE);
  }
  for (size_t k = 0; k < n; k++) CHECK(rs[k].done);
}

static char *ref(const char *repo_tag) {
  static char b[4][256];
  static int i;
  char *p = b[i++ & 3];
  snprintf(p, 256, "oci://127.0.0.1:%d/%s", reg.port, repo_tag);
  return p;
}

static res_t pull(source_t *s, const char *r, const char *constraint, const char *user, const char *pass) {
  res_t res;
  memset(&res, 0, sizeof res);
  source_conn_t c = {.auth = {.username = user, .password = pass}};
  CHECK(source_chart_from_oci(s, r, constraint, &c, true, on_chart, &res) != NULL);
  wait_all(&res, 1);
  if (res.e) source_chart_release(s, res.e);
  res.e = NULL;
  return res;
}

static void ok(res_t *r, const char *version, const char *what) {
  CHECK_EQ_INT(r->err, 0);
  if (r->err) fprintf(stderr, "%s: %s\n", what, r->msg);
  else CHECK_EQ_STR(r->version, version);
}

static void bad(res_t *r, int code, const char *part, const char *secret) {
  fprintf(stderr, "  %s\n", r->msg);
  CHECK_EQ_INT(r->err, code);
  if (!strstr(r->msg, part)) {
    t_failed++;
    fprintf(stderr, "message \"%s\" lacks \"%s\"\n", r->msg, part);
  }
  if (secret && strstr(r->msg, secret)) {
    t_failed++;
    fprintf(stderr, "message \"%s\" tells \"%s\"\n", r->msg, secret);
  }
}

static void noop_timer(uv_timer_t *t) { (void)t; }

static void sleep_ms(uint64_t ms) {
  uint64_t until = uv_now(loop) + ms;
  uv_timer_t t;
  uv_timer_init(loop, &t);
  while (uv_now(loop) < until) {
    uv_timer_start(&t, noop_timer, until - uv_now(loop), 0);
    uv_run(loop, UV_RUN_ONCE);
  }
  uv_close((uv_handle_t *)&t, NULL);
  uv_run(loop, UV_RUN_NOWAIT);
}

static void test_open(source_t *s) {
  res_t r = pull(s, ref("open/chart:0.1.0"), "", NULL, NULL);
  ok(&r, "0.1.0", "by tag");
  char want[256];
  snprintf(want, sizeof want, "oci://127.0.0.1:%d/open/chart:0.1.0", reg.port);
  CHECK_EQ_STR(r.url, want);
  CHECK_EQ_STR(r.digest, charts[0].digest);
  int pages = fk.tag_pages;
  r = pull(s, ref("open/chart"), "~0.2", NULL, NULL);
  ok(&r, "0.2.0", "~0.2 over three pages");
  CHECK_EQ_INT(fk.tag_pages, pages + 3);
  r = pull(s, ref("open/chart"), "", NULL, NULL);
  ok(&r, "1.0.0+build.1", "newest ('_' read as '+')");
  r = pull(s, ref("open/chart"), ">=0.3.0-0 <1", NULL, NULL);
  ok(&r, "0.3.0-rc.1", "prerelease asked for");
  pages = fk.tag_pages;
  r = pull(s, ref("open/chart"), "1.0.0+build.1", NULL, NULL);
  ok(&r, "1.0.0+build.1", "a version with '+': its '_' tag, no tag list");
  CHECK_EQ_INT(fk.tag_pages, pages);
  r = pull(s, ref("open/chart:1.0.0+build.1"), "", NULL, NULL);
  ok(&r, "1.0.0+build.1", "a reference with '+'");
  CHECK_EQ_INT(fk.authenticated, 0); /* nothing asked for credentials: none were sent */
  r = pull(s, ref("evil/chart"), "", "u", "secret");
  bad(&r, UV_EINVAL, "the tag list's next page is not on registry", NULL);
  r = pull(s, ref("legacy/chart:0.2.0"), "", NULL, NULL);
  ok(&r, "0.2.0", "legacy layer media type");
}

static void test_basic(source_t *s) {
  res_t r = pull(s, ref("basic/chart:0.1.0"), "", NULL, NULL);
  bad(&r, UV_EACCES, "401 Unauthorized: registry 127.0.0.1", NULL);
  CHECK(strstr(r.msg, "wants credentials for repository basic/chart") != NULL);
  r = pull(s, ref("basic/chart:0.1.0"), "", "u", "wrong-one");
  bad(&r, UV_EACCES, "refused the credentials for repository basic/chart", "wrong-one");
  int unauth = fk.unauthenticated;
  r = pull(s, ref("basic/chart:0.1.0"), "", "u", "secret");
  ok(&r, "0.1.0", "basic");
  CHECK_EQ_INT(fk.unauthenticated, unauth + 1); /* asked once, then the retry with credentials */
  unauth = fk.unauthenticated;
  r = pull(s, ref("basic/chart"), "~0.2", "u", "secret");
  ok(&r, "0.2.0", "basic, tag list");
  CHECK_EQ_INT(fk.unauthenticated, unauth); /* the registry is known to want them: sent at once */
  r = pull(s, ref("deny/chart:0.1.0"), "", "u", "secret");
  bad(&r, UV_EACCES, "403 Forbidden: registry 127.0.0.1", NULL);
  CHECK(strstr(r.msg, "denied access to repository deny/chart") != NULL);
}

static void test_bearer(source_t *s) {
  fk.token_ttl = 300;
  int gets = fk.token_gets;
  source_stats_t a = source_get_stats(s);
  res_t r = pull(s, ref("bearer/chart:0.1.0"), "", "u", "secret");
  ok(&r, "0.1.0", "bearer");
  CHECK_EQ_INT(fk.token_gets, gets + 1);
  r = pull(s, ref("bearer/chart"), "~0.2", "u", "secret");
  ok(&r, "0.2.0", "bearer, the token kept");
  CHECK_EQ_INT(fk.token_gets, gets + 1);
  CHECK_EQ_INT(source_get_stats(s).oci_tokens, a.oci_tokens + 1);
  /* the registry stops taking the token: a new one, one retry */
  fk.valid_from = fk.next_token;
  r = pull(s, ref("bearer/chart:0.1.0"), "", "u", "secret");
  ok(&r, "0.1.0", "bearer, token refused");
  CHECK_EQ_INT(fk.token_gets, gets + 2);
  CHECK_EQ_INT(fk.stale_token_sent, 1);
  /* a token that expires: not sent once it has */
  fk.token_ttl = 1;
  fk.valid_from = fk.next_token;
  r = pull(s, ref("bearer/chart:0.1.0"), "", "u", "secret");
  ok(&r, "0.1.0", "bearer, short token");
  int stale = fk.stale_token_sent;
  sleep_ms(1100);
  fk.valid_from = fk.next_token; /* the registry agrees it expired */
  r = pull(s, ref("bearer/chart:0.1.0"), "", "u", "secret");
  ok(&r, "0.1.0", "bearer, after the token expired");
  CHECK_EQ_INT(fk.stale_token_sent, stale);
  fk.token_ttl = 300;
  /* wrong credentials at the token service */
  r = pull(s, ref("bearer/chart:0.1.0"), "", "u", "not-it");
  bad(&r, UV_EACCES, "the token service 127.0.0.1", "not-it");
  CHECK(strstr(r.msg, "refused the credentials for repository bearer/chart") != NULL);
  /* an identity token: the OAuth2 refresh-token grant */
  int posts = fk.token_posts;
  r = pull(s, ref("bearer/chart:0.2.0"), "", OCI_TOKEN_USER, "RT-good");
  ok(&r, "0.2.0", "identity token");
  CHECK_EQ_INT(fk.token_posts, posts + 1);
  CHECK(strstr(fk.last_post, "service=fake") && strstr(fk.last_post, "scope=repository%3Abearer%2Fchart%3Apull"));
  r = pull(s, ref("bearer/chart:0.1.0"), "", OCI_TOKEN_USER, "RT-bad");
  bad(&r, UV_EACCES, "401 Unauthorized", "RT-bad");
  /* concurrent pulls needing one token ask for it once */
  fk.valid_from = fk.next_token;
  gets = fk.token_gets;
  fk.token_delay_ms = 50;
  res_t rs[4];
  memset(rs, 0, sizeof rs);
  source_conn_t c = {.auth = {.username = "u", .password = "secret"}};
  for (int i = 0; i < 4; i++)
    source_chart_from_oci(s, ref(i % 2 ? "bearer/chart:0.1.0" : "bearer/chart"), i % 2 ? "" : "~0.1", &c, true,
                          on_chart, &rs[i]);
  wait_all(rs, 4);
  for (int i = 0; i < 4; i++) {
    ok(&rs[i], "0.1.0", "concurrent");
    if (rs[i].e) source_chart_release(s, rs[i].e);
  }
  CHECK_EQ_INT(fk.token_gets, gets + 1);
  fk.token_delay_ms = 0;
}

static void test_broken(source_t *s) {
  res_t r = pull(s, ref("open/chart@sha256:0000000000000000000000000000000000000000000000000000000000000000"), "",
                 NULL, NULL);
  bad(&r, INDEX_ENOENT, "not found in registry", NULL);
  /* pinned: the manifest must have the digest asked for */
  buf_t js = BUF_INIT;
  manifest_of(&charts[1], OCI_MEDIA_HELM_CHART, 0, &js);
  char d[72], rr[200];
  hexdig(js.data, js.len, d);
  buf_free(&js);
  snprintf(rr, sizeof rr, "open/chart@%s", d);
  r = pull(s, ref(rr), "", NULL, NULL);
  ok(&r, "0.2.0", "pinned");
  r = pull(s, ref(rr), "0.2.0", NULL, NULL);
  ok(&r, "0.2.0", "pinned, the tag agrees");
  r = pull(s, ref(rr), "latest", NULL, NULL);
  ok(&r, "0.2.0", "pinned, latest is the same manifest");
  r = pull(s, ref(rr), "0.1.0", NULL, NULL);
  bad(&r, CHART_CACHE_EDIGEST, "chart reference digest mismatch", NULL);
  r = pull(s, ref(rr), "9.9.9", NULL, NULL);
  ok(&r, "0.2.0", "pinned, the version is no tag: no check");
  snprintf(rr, sizeof rr, "badpin/chart@%s", d);
  r = pull(s, ref(rr), "", NULL, NULL);
  bad(&r, CHART_CACHE_EDIGEST, "digest mismatch: the registry's manifest is sha256:", NULL);
  /* a blob that is not its digest: refused before it is loaded (a fresh cache, or it would
   * come from memory) */
  {
    chart_cache_t *cache;
    CHECK_EQ_INT(chart_cache_new(NULL, &cache), 0);
    source_opts_t so = {.cache = cache};
    source_t *s2;
    CHECK_EQ_INT(source_new(loop, F, &so, &s2), 0);
    int blobs = fk.blobs;
    r = pull(s2, ref("badblob/chart:0.3.0-rc.1"), "", NULL, NULL);
    bad(&r, CHART_CACHE_EDIGEST, "digest mismatch", NULL);
    CHECK_EQ_INT(fk.blobs, blobs + 1);
    CHECK_EQ_INT(chart_cache_stats(cache).entries, 0);
    source_free(s2);
    uv_run(loop, UV_RUN_NOWAIT);
    chart_cache_free(cache);
  }
  r = pull(s, ref("baddcd/chart:0.2.0"), "", NULL, NULL);
  bad(&r, CHART_CACHE_EDIGEST, "digest mismatch: the registry says the manifest is sha256:", NULL);
  r = pull(s, ref("big/chart:0.2.0"), "", NULL, NULL);
  bad(&r, UV_E2BIG, "the chart layer is 104857600 bytes, more than the limit", NULL);
  r = pull(s, ref("open/nothing"), "", NULL, NULL);
  bad(&r, INDEX_ENOENT, "has no repository open/nothing", NULL);
}

/* Cancelled while a token is being fetched; a source freed with a token request in flight. */
static void test_cancel(void) {
  chart_cache_t *cache;
  CHECK_EQ_INT(chart_cache_new(NULL, &cache), 0);
  source_opts_t so = {.cache = cache};
  source_t *s;
  CHECK_EQ_INT(source_new(loop, F, &so, &s), 0);
  fk.valid_from = fk.next_token;
  fk.token_delay_ms = 300;
  source_conn_t c = {.auth = {.username = "u", .password = "secret"}};
  res_t r[3];
  memset(r, 0, sizeof r);
  source_op_t *a = source_chart_from_oci(s, ref("bearer/chart:0.1.0"), "", &c, true, on_chart, &r[0]);
  source_chart_from_oci(s, ref("bearer/chart:0.1.0"), "", &c, true, on_chart, &r[1]);
  int posts = fk.token_gets;
  while (fk.token_gets == posts) uv_run(loop, UV_RUN_ONCE); /* the token request is out */
  source_cancel(a);
  CHECK(r[0].done && r[0].err == UV_ECANCELED);
  wait_all(&r[1], 1);
  ok(&r[1], "0.1.0", "beside a cancelled op");
  if (r[1].e) source_chart_release(s, r[1].e);
  fk.valid_from = fk.next_token;
  source_chart_from_oci(s, ref("bearer/chart:0.2.0"), "", &c, true, on_chart, &r[2]);
  posts = fk.token_gets;
  while (fk.token_gets == posts) uv_run(loop, UV_RUN_ONCE);
  source_free(s);
  CHECK(r[2].done && r[2].err == UV_ECANCELED);
  fk.token_delay_ms = 0;
  sleep_ms(400); /* the token service's late answer goes to a closed connection */
  chart_cache_free(cache);
}

static void on_closed(void *data) { *(int *)data = 1; }

int main(void) {
  unsetenv("HTTP_PROXY"), unsetenv("http_proxy"), unsetenv("HTTPS_PROXY"), unsetenv("https_proxy");
  loop = uv_default_loop();
  make_charts();
  CHECK_EQ_INT(tsrv_start(&reg, loop, on_registry), 0);
  CHECK_EQ_INT(tsrv_start(&tok, loop, on_token), 0);
  fk.token_ttl = 300;
  CHECK_EQ_INT(fetch_new(loop, NULL, &F), 0);
  chart_cache_t *cache;
  CHECK_EQ_INT(chart_cache_new(NULL, &cache), 0);
  source_opts_t so = {.cache = cache, .max_archive_bytes = 1 << 20};
  source_t *s;
  CHECK_EQ_INT(source_new(loop, F, &so, &s), 0);
  test_open(s);
  test_basic(s);
  test_bearer(s);
  test_broken(s);
  test_cancel();
  source_free(s);
  int closed = 0;
  fetch_close(F, on_closed, &closed);
  while (!closed) uv_run(loop, UV_RUN_ONCE);
  tsrv_stop(&reg);
  tsrv_stop(&tok);
  uv_run(loop, UV_RUN_DEFAULT);
  chart_cache_free(cache);
  for (size_t i = 0; i < NCHARTS; i++) free(charts[i].tgz);
  uv_loop_close(loop);
  return t_done();
}
