/* Charts pulled from real OCI registries (helm/source/source.h, source_chart_from_oci) against the
 * test servers (tests/servers: the CNCF distribution registry with htpasswd basic auth, and one
 * with token auth behind tests/servers/token.py), with the real helm as the oracle: by tag, by
 * constraint, by digest, tag lists read page by page, the cache (memory and disk) and shared
 * requests, credentials from a dockerconfigjson (user:password and an identity token), and the
 * failures (a wrong password, no credentials, an unknown chart or tag, mismatched pins).
 * Needs the env of tests/servers/up (ctest's servers fixture sources it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "base/b64.h"
#include "base/sha256.h"
#include "base/yaml.h"
#include "helm/release/release.h"
#include "helm/source/oci.h"
#include "helm/source/source.h"
#include "t.h"

static uv_loop_t *loop;
static fetch_t *F;
static const char *REG, *REGT, *USER, *PASS, *HELM, *CA, *REALM, *SERVICE;
static char *ca_pem;
static size_t ca_len;
static char tmp[256];

typedef struct {
  int done, err;
  char msg[2048];
  char name[128], version[128], digest[80], url[512];
  chart_cache_entry_t *e;
} res_t;

static void on_chart(int err, const char *message, const source_chart_t *ch, void *data) {
  res_t *r = data;
  r->done = 1;
  uv_stop(loop); /* wait_all looks at once, not after the next poll */
  r->err = err;
  snprintf(r->msg, sizeof r->msg, "%s", message ? message : "");
  if (ch) {
    snprintf(r->name, sizeof r->name, "%s", ch->name);
    snprintf(r->version, sizeof r->version, "%s", ch->version);
    snprintf(r->digest, sizeof r->digest, "%s", ch->digest);
    snprintf(r->url, sizeof r->url, "%s", ch->url);
    r->e = ch->entry;
  }
}

static int timed_out;
static void on_deadline(uv_timer_t *t) {
  (void)t;
  timed_out = 1;
}

/* Runs the loop until every flag is set (or 60 s pass). */
static void wait_all(res_t *rs, size_t n) {
  uv_timer_t t;
  uv_timer_init(loop, &t);
  timed_out = 0;
  uv_timer_start(&t, on_deadline, 60000, 0);
  for (;;) {
    size_t k = 0;
    while (k < n && rs[k].done) k++;
    if (k == n || timed_out) break;
    uv_run(loop, UV_RUN_ONCE);
  }
  CHECK(!timed_out);
  uv_timer_stop(&t);
  uv_close((uv_handle_t *)&t, NULL);
  uv_run(loop, UV_RUN_NOWAIT);
}

static source_conn_t conn_of(const char *user, const char *pass) {
  source_conn_t c = {0};
  c.tls.ca_pem = ca_pem;
  c.tls.ca_len = ca_len;
  c.auth.username = user;
  c.auth.password = pass;
  return c;
}

static res_t pull_with(source_t *s, const char *ref, const char *constraint, const source_conn_t *c) {
  res_t r;
  memset(&r, 0, sizeof r);
  source_op_t *op = source_chart_from_oci(s, ref, constraint, c, false, on_chart, &r);
  CHECK(op != NULL);
  if (op) wait_all(&r, 1);
  return r;
}

static void release_res(source_t *s, res_t *r) {
  if (r->e) source_chart_release(s, r->e);
  r->e = NULL;
}

static char *ref_of(const char *reg, const char *rest) {
  static char b[8][1024];
  static int i;
  char *p = b[i++ & 7];
  snprintf(p, 1024, "oci://%s/%s", reg, rest);
  return p;
}

/* ---- the oracle: the real helm ---- */

static char *run(const char *cmd) {
  FILE *p = popen(cmd, "r");
  if (!p) return NULL;
  buf_t b = BUF_INIT;
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, p)) > 0) buf_append(&b, chunk, n);
  int st = pclose(p);
  if (st != 0) {
    fprintf(stderr, "command failed (%d): %s\n%s\n", st, cmd, b.data ? b.data : "");
    buf_free(&b);
    return NULL;
  }
  return buf_steal(&b);
}

/* helm pull: the manifest digest helm reports, and the sha256 of the .tgz it wrote. */
static int helm_pull(const char *reg, const char *version, char mdigest[80], char tgz_digest[80]) {
  char cmd[2048], dir[300];
  snprintf(dir, sizeof dir, "%s/helm-pull-%s", tmp, version);
  mkdir(dir, 0700);
  snprintf(cmd, sizeof cmd, "'%s' pull oci://%s/charts/podlike --version '%s' --ca-file '%s' --username '%s' --password '%s' -d '%s' 2>&1",
           HELM, reg, version, CA, USER, PASS, dir);
  char *out = run(cmd);
  if (!out) return -1;
  const char *d = strstr(out, "Digest: ");
  int rc = -1;
  if (d && sscanf(d + 8, "%79s", mdigest) == 1) rc = 0;
  free(out);
  char path[400];
  snprintf(path, sizeof path, "%s/podlike-%s.tgz", dir, version);
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  buf_t b = BUF_INIT;
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) buf_append(&b, chunk, n);
  fclose(f);
  uint8_t dg[32];
  base_sha256(b.data ? b.data : "", b.len, dg);
  buf_free(&b);
  strcpy(tgz_digest, "sha256:");
  for (int i = 0; i < 32; i++) snprintf(tgz_digest + 7 + 2 * i, 3, "%02x", dg[i]);
  return rc;
}

/* The chart's metadata as the release record keeps it (Chart.yaml as Helm parsed it) against
 * what `helm show chart` prints for the same reference. */
static void check_metadata(const char *reg, const char *version, const chart_t *c) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' show chart oci://%s/charts/podlike --version '%s' --ca-file '%s' --username '%s' --password '%s' 2>/dev/null",
           HELM, reg, version, CA, USER, PASS);
  char *out = run(cmd);
  CHECK(out != NULL);
  if (!out) return;
  cJSON *want = NULL;
  CHECK_EQ_INT(yaml_to_json(out, strlen(out), NULL, &want, NULL), 0);
  release_t rel;
  memset(&rel, 0, sizeof rel);
  CHECK_EQ_INT(release_set_chart(&rel, c, release_time_now()), 0);
  buf_t js = BUF_INIT;
  CHECK_EQ_INT(release_encode_json(&rel, &js), 0);
  cJSON *rec = cJSON_Parse(js.data ? js.data : "");
  const cJSON *got = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rec, "chart"), "metadata");
  int same = want && got && cJSON_Compare(want, got, 1);
  CHECK(same);
  if (!same) {
    char *a = got ? cJSON_PrintUnformatted(got) : NULL, *b = want ? cJSON_PrintUnformatted(want) : NULL;
    fprintf(stderr, "metadata of %s:%s\n  ours: %s\n  helm: %s\n", reg, version, a ? a : "(none)", b ? b : "(none)");
    free(a);
    free(b);
  }
  cJSON_Delete(rec);
  cJSON_Delete(want);
  buf_free(&js);
  release_clear(&rel);
  free(out);
}

static void expect_ok(res_t *r, const char *version, const char *what) {
  CHECK_EQ_INT(r->err, 0);
  if (r->err) fprintf(stderr, "%s: %s\n", what, r->msg);
  else {
    CHECK_EQ_STR(r->name, "podlike");
    CHECK_EQ_STR(r->version, version);
    CHECK(r->e && r->e->chart && r->e->chart->meta.version && !strcmp(r->e->chart->meta.version, version));
  }
}

static void expect_fail(res_t *r, int code, const char *const *parts, const char *what) {
  fprintf(stderr, "  %s: %s\n", what, r->msg);
  if (code) CHECK_EQ_INT(r->err, code);
  else CHECK(r->err != 0);
  for (size_t i = 0; parts[i]; i++)
    if (!strstr(r->msg, parts[i])) {
      t_failed++;
      fprintf(stderr, "%s: message \"%s\" lacks \"%s\"\n", what, r->msg, parts[i]);
    }
  if (strstr(r->msg, PASS) || strstr(r->msg, "wrong-password")) {
    t_failed++;
    fprintf(stderr, "%s: message \"%s\" tells a password\n", what, r->msg);
  }
  CHECK(r->e == NULL);
}

/* ---- the tests ---- */

static void test_tags_and_constraints(source_t *s, const char *reg) {
  source_conn_t c = conn_of(USER, PASS);
  static const struct {
    const char *ref, *constraint, *version;
  } cases[] = {
      {"charts/podlike:0.1.0", "", "0.1.0"},      /* the reference's tag */
      {"charts/podlike:0.1.0", "0.1.0", "0.1.0"}, /* the same given twice */
      {"charts/podlike", "0.2.0", "0.2.0"},       /* a version is the tag (no tag list) */
      {"charts/podlike", "~0.1", "0.1.0"},        /* ranges: the tag list */
      {"charts/podlike", "*", "0.2.0"},           /* no prerelease unless asked */
      {"charts/podlike", "", "0.2.0"},
      {"charts/podlike", ">=1.0.0-0", "1.0.0-rc.1"},
      {"charts/podlike", "^0.1.0 || ^0.2.0", "0.2.0"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char what[600];
    snprintf(what, sizeof what, "%s --version '%s'", ref_of(reg, cases[i].ref), cases[i].constraint);
    res_t r = pull_with(s, ref_of(reg, cases[i].ref), cases[i].constraint, &c);
    expect_ok(&r, cases[i].version, what);
    char want_url[600];
    snprintf(want_url, sizeof want_url, "oci://%s/charts/podlike:%s", reg, cases[i].version);
    if (!r.err) CHECK_EQ_STR(r.url, want_url);
    release_res(s, &r);
  }
}

/* The archive is the one helm pulls, the digest pin works, and the metadata is helm's. */
static void test_against_helm(source_t *s, const char *reg) {
  source_conn_t c = conn_of(USER, PASS);
  static const char *const versions[] = {"0.1.0", "0.2.0", "1.0.0-rc.1"};
  for (size_t i = 0; i < 3; i++) {
    char mdig[80] = "", tdig[80] = "";
    CHECK_EQ_INT(helm_pull(reg, versions[i], mdig, tdig), 0);
    char ref[600];
    snprintf(ref, sizeof ref, "charts/podlike:%s", versions[i]);
    res_t r = pull_with(s, ref_of(reg, ref), "", &c);
    expect_ok(&r, versions[i], ref);
    CHECK_EQ_STR(r.digest, tdig); /* the same chart archive as helm's */
    if (r.e) check_metadata(reg, versions[i], r.e->chart);
    release_res(s, &r);
    /* pinned by the manifest digest helm reported */
    snprintf(ref, sizeof ref, "charts/podlike@%s", mdig);
    r = pull_with(s, ref_of(reg, ref), "", &c);
    expect_ok(&r, versions[i], ref);
    CHECK_EQ_STR(r.digest, tdig);
    CHECK_EQ_STR(r.url, ref_of(reg, ref));
    release_res(s, &r);
    /* a digest with the version as well: the tag must point at it */
    r = pull_with(s, ref_of(reg, ref), versions[i], &c);
    expect_ok(&r, versions[i], ref);
    release_res(s, &r);
    r = pull_with(s, ref_of(reg, ref), i ? "0.1.0" : "0.2.0", &c);
    expect_fail(&r, 0, (const char *const[]){"chart reference digest mismatch", mdig, NULL}, ref);
    release_res(s, &r);
    /* a digest no manifest has */
    snprintf(ref, sizeof ref, "charts/podlike@sha256:%064d", 0);
    r = pull_with(s, ref_of(reg, ref), "", &c);
    expect_fail(&r, INDEX_ENOENT, (const char *const[]){"not found", reg, NULL}, ref);
    release_res(s, &r);
  }
}

static void test_failures(source_t *s, const char *reg) {
  source_conn_t wrong = conn_of(USER, "wrong-password"), none = conn_of(NULL, NULL), c = conn_of(USER, PASS);
  const char *repo_msg[] = {"401", reg, "charts/podlike", NULL};
  res_t r = pull_with(s, ref_of(reg, "charts/podlike:0.1.0"), "", &wrong);
  expect_fail(&r, UV_EACCES, repo_msg, "wrong password, by tag");
  r = pull_with(s, ref_of(reg, "charts/podlike"), "~0.1", &wrong);
  expect_fail(&r, UV_EACCES, repo_msg, "wrong password, tag list");
  r = pull_with(s, ref_of(reg, "charts/podlike:0.1.0"), "", &none);
  expect_fail(&r, UV_EACCES, repo_msg, "no credentials");
  r = pull_with(s, ref_of(reg, "charts/podlike:0.1.0"), "", NULL);
  expect_fail(&r, 0, (const char *const[]){reg, NULL}, "no CA"); /* the test CA is not trusted */
  /* unknown chart, unknown tag, no matching version */
  r = pull_with(s, ref_of(reg, "charts/nope"), "", &c);
  expect_fail(&r, INDEX_ENOENT, (const char *const[]){"not found", reg, "charts/nope", NULL}, "unknown chart");
  r = pull_with(s, ref_of(reg, "charts/nope:0.1.0"), "", &c);
  expect_fail(&r, INDEX_ENOENT, (const char *const[]){"not found", "charts/nope:0.1.0", NULL}, "unknown chart, tag");
  r = pull_with(s, ref_of(reg, "charts/podlike:9.9.9"), "", &c);
  expect_fail(&r, INDEX_ENOENT, (const char *const[]){"not found", "charts/podlike:9.9.9", NULL}, "unknown tag");
  r = pull_with(s, ref_of(reg, "charts/podlike"), "~9", &c);
  expect_fail(&r, INDEX_ENOENT, (const char *const[]){"could not locate a version matching provided version string ~9", NULL},
              "no match");
  r = pull_with(s, ref_of(reg, "charts/podlike"), "zz!", &c);
  expect_fail(&r, UV_EINVAL, (const char *const[]){"zz!", NULL}, "bad constraint");
  /* refused before any request */
  r = pull_with(s, ref_of(reg, "charts/podlike:0.1.0"), "0.2.0", &c);
  expect_fail(&r, UV_EINVAL, (const char *const[]){"chart reference and version mismatch: 0.2.0 is not 0.1.0", NULL},
              "tag and version");
  r = pull_with(s, ref_of(reg, "charts/Podlike"), "", &c);
  expect_fail(&r, UV_EINVAL, (const char *const[]){"invalid reference", NULL}, "bad reference");
  /* https is the default: plain HTTP to a TLS registry fails */
  memset(&r, 0, sizeof r);
  CHECK(source_chart_from_oci(s, ref_of(reg, "charts/podlike:0.1.0"), "", &c, true, on_chart, &r) != NULL);
  wait_all(&r, 1);
  expect_fail(&r, 0, (const char *const[]){reg, NULL}, "plain http");
}

/* A second pull comes from the cache; a token is asked for once. */
static void test_cache(source_t *s, const char *reg, int token) {
  source_conn_t c = conn_of(USER, PASS);
  res_t r = pull_with(s, ref_of(reg, "charts/podlike:0.2.0"), "", &c);
  expect_ok(&r, "0.2.0", "first pull");
  release_res(s, &r);
  source_stats_t a = source_get_stats(s);
  r = pull_with(s, ref_of(reg, "charts/podlike:0.2.0"), "", &c);
  expect_ok(&r, "0.2.0", "second pull");
  release_res(s, &r);
  source_stats_t b = source_get_stats(s);
  CHECK_EQ_INT(b.downloads, a.downloads);
  CHECK_EQ_INT(b.memory_hits, a.memory_hits + 1);
  CHECK_EQ_INT(b.oci_requests, a.oci_requests + 1); /* the manifest, with the auth already known */
  CHECK_EQ_INT(b.oci_tokens, a.oci_tokens);
  (void)token;
}

/* A fresh source (empty chart cache): concurrent pulls share every request; then another fresh
 * source on the same storage directory finds the archive on disk. */
static void test_shared_and_disk(const char *reg, const char *dir) {
  chart_cache_t *cache;
  CHECK_EQ_INT(chart_cache_new(NULL, &cache), 0);
  source_opts_t so = {.cache = cache, .storage_path = dir};
  source_t *s;
  CHECK_EQ_INT(source_new(loop, F, &so, &s), 0);
  source_conn_t c = conn_of(USER, PASS);
  res_t rs[6];
  memset(rs, 0, sizeof rs);
  for (int i = 0; i < 6; i++)
    CHECK(source_chart_from_oci(s, ref_of(reg, "charts/podlike"), i < 3 ? "~0.1" : "0.1.0", &c, false, on_chart,
                                &rs[i]) != NULL);
  wait_all(rs, 6);
  for (int i = 0; i < 6; i++) {
    expect_ok(&rs[i], "0.1.0", "concurrent pull");
    if (i) CHECK(rs[i].e == rs[0].e);
  }
  for (int i = 0; i < 6; i++) release_res(s, &rs[i]);
  source_stats_t st = source_get_stats(s);
  CHECK_EQ_INT(st.downloads, 1);
  /* one tag list, one manifest, one blob, and the auth retries: at most 2 each */
  CHECK(st.oci_requests <= 6);
  fprintf(stderr, "%s: 6 concurrent pulls, %llu registry requests, %llu tokens\n", reg,
          (unsigned long long)st.oci_requests, (unsigned long long)st.oci_tokens);
  CHECK(st.oci_tokens <= 1);
  source_free(s);
  uv_run(loop, UV_RUN_NOWAIT);
  chart_cache_free(cache);

  CHECK_EQ_INT(chart_cache_new(NULL, &cache), 0);
  so.cache = cache;
  CHECK_EQ_INT(source_new(loop, F, &so, &s), 0);
  res_t r = pull_with(s, ref_of(reg, "charts/podlike:0.1.0"), "", &c);
  expect_ok(&r, "0.1.0", "from disk");
  release_res(s, &r);
  st = source_get_stats(s);
  CHECK_EQ_INT(st.downloads, 0);
  CHECK_EQ_INT(st.disk_hits, 1);
  source_free(s);
  uv_run(loop, UV_RUN_NOWAIT);
  chart_cache_free(cache);
}

/* Tag lists one tag per page: the Link header is followed to the end. */
static void test_pages(const char *reg) {
  chart_cache_t *cache;
  CHECK_EQ_INT(chart_cache_new(NULL, &cache), 0);
  source_opts_t so = {.cache = cache, .oci_tag_page = 1};
  source_t *s;
  CHECK_EQ_INT(source_new(loop, F, &so, &s), 0);
  source_conn_t c = conn_of(USER, PASS);
  res_t r = pull_with(s, ref_of(reg, "charts/podlike"), ">=1.0.0-0", &c);
  expect_ok(&r, "1.0.0-rc.1", "paged tag list");
  release_res(s, &r);
  r = pull_with(s, ref_of(reg, "charts/podlike"), "~0.1", &c);
  expect_ok(&r, "0.1.0", "paged tag list");
  release_res(s, &r);
  source_stats_t st = source_get_stats(s);
  CHECK(st.oci_requests >= 8); /* 3 pages (and an empty fourth or none) twice, 2 manifests, blobs */
  source_free(s);
  uv_run(loop, UV_RUN_NOWAIT);
  chart_cache_free(cache);
}

/* Credentials from a dockerconfigjson: auth (user:password) for the basic registry, an identity
 * token (OAuth2 refresh token) for the token registry. */
static void on_fetch(const fetch_response_t *res, void *data) {
  char **out = data;
  cJSON *j = res->err || res->status != 200 ? NULL : cJSON_ParseWithLength(res->body, res->body_len);
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "refresh_token");
  *out = strdup(cJSON_IsString(t) ? t->valuestring : "");
  cJSON_Delete(j);
}

static void test_dockerconfig(source_t *s) {
  char *auth = NULL, up[256];
  snprintf(up, sizeof up, "%s:%s", USER, PASS);
  size_t al;
  CHECK_EQ_INT(b64_encode_alloc(up, strlen(up), &auth, &al), 0);
  buf_t js = BUF_INIT;
  buf_printf(&js, "{\"auths\":{\"https://%s\":{\"auth\":\"%s\"}}}", REG, auth);
  char *u = NULL, *p = NULL, err[256];
  CHECK_EQ_INT(oci_dockerconfig_creds(js.data, js.len, REG, &u, &p, err, sizeof err), 0);
  source_conn_t c = conn_of(u, p);
  res_t r = pull_with(s, ref_of(REG, "charts/podlike"), "~0.1", &c);
  expect_ok(&r, "0.1.0", "dockerconfigjson auth");
  release_res(s, &r);
  free(u);
  free(p);
  free(auth);
  buf_free(&js);

  /* a refresh token from the token service, as `docker login` keeps one */
  char *rt = NULL;
  buf_t url = BUF_INIT;
  buf_printf(&url, "%s?service=%s&scope=repository:charts/podlike:pull&offline_token=true", REALM, SERVICE);
  fetch_tls_t tls = {.ca_pem = ca_pem, .ca_len = ca_len};
  fetch_auth_t fa = {.username = USER, .password = PASS};
  fetch_opts_t fo = {.url = url.data, .tls = &tls, .auth = &fa};
  CHECK(fetch_request(F, &fo, on_fetch, &rt) != NULL);
  while (!rt) uv_run(loop, UV_RUN_ONCE);
  buf_free(&url);
  CHECK(rt[0] != 0);
  buf_printf(&js, "{\"auths\":{\"%s\":{\"identitytoken\":\"%s\"}}}", REGT, rt);
  CHECK_EQ_INT(oci_dockerconfig_creds(js.data, js.len, REGT, &u, &p, err, sizeof err), 0);
  CHECK_EQ_STR(u, OCI_TOKEN_USER);
  source_stats_t a = source_get_stats(s);
  c = conn_of(u, p);
  r = pull_with(s, ref_of(REGT, "charts/podlike"), ">=1.0.0-0", &c);
  expect_ok(&r, "1.0.0-rc.1", "dockerconfigjson identitytoken");
  release_res(s, &r);
  CHECK(source_get_stats(s).oci_tokens > a.oci_tokens);
  free(u);
  free(p);
  /* a refresh token the service never issued */
  c = conn_of(OCI_TOKEN_USER, "not-a-refresh-token");
  r = pull_with(s, ref_of(REGT, "charts/podlike:0.1.0"), "", &c);
  expect_fail(&r, UV_EACCES, (const char *const[]){"401", REGT, "charts/podlike", NULL}, "bad refresh token");
  if (strstr(r.msg, "not-a-refresh-token")) {
    t_failed++;
    fprintf(stderr, "the message tells the refresh token: %s\n", r.msg);
  }
  free(rt);
  buf_free(&js);
}

/* Cancelled ops and a source freed with requests in flight. */
static void test_cancel(void) {
  chart_cache_t *cache;
  CHECK_EQ_INT(chart_cache_new(NULL, &cache), 0);
  source_opts_t so = {.cache = cache};
  source_t *s;
  CHECK_EQ_INT(source_new(loop, F, &so, &s), 0);
  source_conn_t c = conn_of(USER, PASS);
  res_t r[3];
  memset(r, 0, sizeof r);
  source_op_t *op = source_chart_from_oci(s, ref_of(REGT, "charts/podlike"), "", &c, false, on_chart, &r[0]);
  source_chart_from_oci(s, ref_of(REGT, "charts/podlike"), "", &c, false, on_chart, &r[1]);
  source_cancel(op);
  CHECK(r[0].done && r[0].err == UV_ECANCELED);
  wait_all(&r[1], 1);
  expect_ok(&r[1], "0.2.0", "beside a cancelled op");
  release_res(s, &r[1]);
  source_chart_from_oci(s, ref_of(REG, "charts/podlike:0.1.0"), "", &c, false, on_chart, &r[2]);
  source_free(s);
  CHECK(r[2].done && r[2].err == UV_ECANCELED);
  uv_run(loop, UV_RUN_NOWAIT);
  chart_cache_free(cache);
}

static const char *env(const char *k) {
  const char *v = getenv(k);
  if (!v || !*v) {
    fprintf(stderr, "%s is not set: run under ctest's servers fixture, or source tests/servers/up's env\n", k);
    exit(1);
  }
  return v;
}

static void on_fetch_closed(void *data) { *(int *)data = 1; }

int main(void) {
  REG = env("SRV_REGISTRY");
  REGT = env("SRV_REGISTRY_TOKEN");
  USER = env("SRV_USER");
  PASS = env("SRV_PASS");
  HELM = env("SRV_HELM");
  CA = env("SRV_CA");
  REALM = env("SRV_TOKEN_REALM");
  SERVICE = env("SRV_TOKEN_SERVICE");
  FILE *f = fopen(CA, "rb");
  if (!f) return perror(CA), 1;
  buf_t b = BUF_INIT;
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) buf_append(&b, chunk, n);
  fclose(f);
  ca_len = b.len;
  ca_pem = buf_steal(&b);
  snprintf(tmp, sizeof tmp, "/tmp/rudder-oci-XXXXXX");
  if (!mkdtemp(tmp)) return perror("mkdtemp"), 1;
  /* helm's own state in the scratch directory, away from the user's */
  char h[400];
  snprintf(h, sizeof h, "%s/helm/config", tmp), setenv("HELM_CONFIG_HOME", h, 1);
  snprintf(h, sizeof h, "%s/helm/cache", tmp), setenv("HELM_CACHE_HOME", h, 1);
  snprintf(h, sizeof h, "%s/helm/data", tmp), setenv("HELM_DATA_HOME", h, 1);
  snprintf(h, sizeof h, "%s/helm/registry.json", tmp), setenv("HELM_REGISTRY_CONFIG", h, 1);

  loop = uv_default_loop();
  CHECK_EQ_INT(fetch_new(loop, NULL, &F), 0);
  chart_cache_t *cache;
  CHECK_EQ_INT(chart_cache_new(NULL, &cache), 0);
  char store[300];
  snprintf(store, sizeof store, "%s/store", tmp);
  source_opts_t so = {.cache = cache, .storage_path = store};
  source_t *s;
  CHECK_EQ_INT(source_new(loop, F, &so, &s), 0);

  const char *regs[] = {REG, REGT};
  for (int i = 0; i < 2; i++) {
    fprintf(stderr, "== %s (%s auth)\n", regs[i], i ? "token" : "basic");
    test_tags_and_constraints(s, regs[i]);
    test_against_helm(s, regs[i]);
    test_failures(s, regs[i]);
    test_cache(s, regs[i], i);
    test_pages(regs[i]);
    char dir[300];
    snprintf(dir, sizeof dir, "%s/store-%d", tmp, i);
    test_shared_and_disk(regs[i], dir);
  }
  test_dockerconfig(s);
  test_cancel();
  source_stats_t st = source_get_stats(s);
  fprintf(stderr, "main source: %llu registry requests, %llu tokens, %llu downloads, %llu memory hits\n",
          (unsigned long long)st.oci_requests, (unsigned long long)st.oci_tokens, (unsigned long long)st.downloads,
          (unsigned long long)st.memory_hits);

  source_free(s);
  int closed = 0;
  fetch_close(F, on_fetch_closed, &closed);
  while (!closed) uv_run(loop, UV_RUN_ONCE);
  uv_run(loop, UV_RUN_NOWAIT);
  chart_cache_free(cache);
  free(ca_pem);
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
  if (system(cmd)) fprintf(stderr, "cannot remove %s\n", tmp);
  uv_loop_close(loop);
  return t_done();
}
