/* OCI pieces (helm/source/oci.h): references good and bad, registry paths, Helm chart
 * manifests (and what Helm refuses), tag lists and Helm's tag choice, Bearer challenges, token
 * responses, hostile sizes. */
#include "helm/source/oci.h"

#include <stdlib.h>

#include "t.h"

#define D64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void test_refs(void) {
  static const struct {
    const char *in, *registry, *repo, *tag, *digest;
  } ok[] = {
      {"oci://registry.example/charts/nginx", "registry.example", "charts/nginx", "", ""},
      {"oci://localhost:5000/nginx:1.2.3", "localhost:5000", "nginx", "1.2.3", ""},
      {"oci://r.example/a/b/c:1.0.0+build.1", "r.example", "a/b/c", "1.0.0_build.1", ""},
      {"oci://r.example/nginx@sha256:" D64, "r.example", "nginx", "", "sha256:" D64},
      {"oci://r.example/nginx:1.0.0@sha256:" D64, "r.example", "nginx", "", "sha256:" D64},
      {"oci://[::1]:5000/my_chart/x-y.z", "[::1]:5000", "my_chart/x-y.z", "", ""},
      {"oci://127.0.0.1/a__b/c--d", "127.0.0.1", "a__b/c--d", "", ""},
      {"oci://r/a:", "r", "a", "", ""}, /* an empty reference is no reference */
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    oci_ref_t r;
    char err[256];
    int rc = oci_ref_parse(ok[i].in, &r, err, sizeof err);
    CHECK_EQ_INT(rc, 0);
    if (rc) {
      fprintf(stderr, "%s: %s\n", ok[i].in, err);
      continue;
    }
    CHECK_EQ_STR(r.registry, ok[i].registry);
    CHECK_EQ_STR(r.repository, ok[i].repo);
    CHECK_EQ_STR(r.tag, ok[i].tag);
    CHECK_EQ_STR(r.digest, ok[i].digest);
    oci_ref_free(&r);
  }
  static const struct {
    const char *in, *msg;
  } bad[] = {
      {"https://r/x", "does not start with oci://"},
      {"oci://registry", "missing registry or repository"},
      {"oci://r/", "invalid repository \"\""},
      {"oci://r/Nginx", "invalid repository \"Nginx\""},
      {"oci://r/a//b", "invalid repository"},
      {"oci://r/a-", "invalid repository"},
      {"oci://r/a/:1", "invalid repository"},
      {"oci://r/a:-x", "invalid tag \"-x\""},
      {"oci://r/a:x/y", "invalid tag \"x/y\""},
      {"oci://r/a@sha256:abc", "invalid digest \"sha256:abc\""},
      {"oci://r/a@md5:" D64, "invalid digest"},
      {"oci://r/a@sha256:" D64 "0", "invalid digest"},
      {"oci://r/a@SHA256:" D64, "invalid digest"},
      {"oci://r:x/a", "invalid registry \"r:x\""},
      {"oci://r:123456/a", "invalid registry"},
      {"oci://-r/a", "invalid registry"},
      {"oci://r..x/a", "invalid registry"},
      {"oci://us er@r/a", "missing registry or repository"}, /* the digest is split off first */
      {"oci://u@r/a", "missing registry or repository"},
      {"oci:///a", "invalid registry \"\""},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    oci_ref_t r;
    char err[256] = "";
    int rc = oci_ref_parse(bad[i].in, &r, err, sizeof err);
    CHECK_EQ_INT(rc, OCI_EINVAL);
    if (!strstr(err, bad[i].msg)) {
      t_failed++;
      fprintf(stderr, "%s: error \"%s\" lacks \"%s\"\n", bad[i].in, err, bad[i].msg);
    }
    if (!rc) oci_ref_free(&r);
  }
  /* a very long tag, a very long reference */
  buf_t b = BUF_INIT;
  buf_puts(&b, "oci://r/a:");
  for (int i = 0; i < 129; i++) buf_putc(&b, 't');
  oci_ref_t r;
  char err[256];
  CHECK_EQ_INT(oci_ref_parse(b.data, &r, err, sizeof err), OCI_EINVAL);
  for (int i = 0; i < 2000; i++) buf_putc(&b, 't');
  CHECK_EQ_INT(oci_ref_parse(b.data, &r, err, sizeof err), OCI_EINVAL);
  CHECK(strstr(err, "longer than 1024 bytes") != NULL);
  buf_free(&b);
}

static void test_paths(void) {
  oci_ref_t r;
  char err[256];
  CHECK_EQ_INT(oci_ref_parse("oci://r.example:5000/charts/nginx:1.0.0_b", &r, err, sizeof err), 0);
  buf_t b = BUF_INIT;
  oci_path_manifest(&r, NULL, &b);
  CHECK_EQ_STR(b.data, "/v2/charts/nginx/manifests/1.0.0_b");
  buf_reset(&b);
  oci_path_manifest(&r, "sha256:" D64, &b);
  CHECK_EQ_STR(b.data, "/v2/charts/nginx/manifests/sha256:" D64);
  buf_reset(&b);
  oci_path_blob(&r, "sha256:" D64, &b);
  CHECK_EQ_STR(b.data, "/v2/charts/nginx/blobs/sha256:" D64);
  buf_reset(&b);
  oci_path_tags(&r, 0, NULL, &b);
  CHECK_EQ_STR(b.data, "/v2/charts/nginx/tags/list");
  buf_reset(&b);
  oci_path_tags(&r, 100, "1.0.0_b", &b);
  CHECK_EQ_STR(b.data, "/v2/charts/nginx/tags/list?n=100&last=1.0.0_b");
  buf_reset(&b);
  oci_path_tags(&r, 0, "a b", &b);
  CHECK_EQ_STR(b.data, "/v2/charts/nginx/tags/list?last=a+b");
  oci_ref_free(&r);
  CHECK_EQ_INT(oci_ref_parse("oci://r/x@sha256:" D64, &r, err, sizeof err), 0);
  buf_reset(&b);
  oci_path_manifest(&r, NULL, &b);
  CHECK_EQ_STR(b.data, "/v2/x/manifests/sha256:" D64);
  oci_ref_free(&r);
  /* paging */
  buf_reset(&b);
  CHECK_EQ_INT(oci_link_next("</v2/x/tags/list?n=2&last=b>; rel=\"next\"", &b), 0);
  CHECK_EQ_STR(b.data, "/v2/x/tags/list?n=2&last=b");
  buf_reset(&b);
  CHECK_EQ_INT(oci_link_next("</p>; rel=\"prev\", </n?last=c>; rel=next", &b), 0);
  CHECK_EQ_STR(b.data, "/n?last=c");
  CHECK_EQ_INT(oci_link_next("</p>; rel=\"prev\"", &b), OCI_ENOENT);
  CHECK_EQ_INT(oci_link_next("garbage <", &b), OCI_ENOENT);
  CHECK_EQ_INT(oci_link_next("", &b), OCI_ENOENT);
  buf_free(&b);
}

#define CONFIG "{\"mediaType\": \"" OCI_MEDIA_HELM_CONFIG "\", \"digest\": \"sha256:" D64 "\", \"size\": 117}"
#define LAYER(mt, sz) "{\"mediaType\": \"" mt "\", \"digest\": \"sha256:" D64 "\", \"size\": " sz "}"

static int manifest(const char *json, oci_manifest_t *m, char *err) {
  int rc = oci_manifest_parse(json, strlen(json), m, err, 256);
  return rc;
}

static void test_manifest(void) {
  oci_manifest_t m;
  char err[256];
  const char *good = "{\"schemaVersion\": 2, \"mediaType\": \"" OCI_MEDIA_MANIFEST "\", \"config\": " CONFIG
                     ", \"layers\": [" LAYER(OCI_MEDIA_HELM_CHART, "3456") ", " LAYER(OCI_MEDIA_HELM_PROV, "10")
                     ", " LAYER("application/x-other", "1") "], \"annotations\": {\"a\": \"b\"}}";
  CHECK_EQ_INT(manifest(good, &m, err), 0);
  CHECK_EQ_STR(m.config.media_type, OCI_MEDIA_HELM_CONFIG);
  CHECK_EQ_INT(m.config.size, 117);
  CHECK_EQ_STR(m.chart.digest, "sha256:" D64);
  CHECK_EQ_INT(m.chart.size, 3456);
  CHECK_EQ_INT(m.prov.size, 10);
  CHECK_EQ_INT(m.legacy, 0);
  oci_manifest_free(&m);
  /* no mediaType field is fine (older pushes); the legacy layer type is accepted */
  const char *legacy = "{\"schemaVersion\": 2, \"config\": " CONFIG ", \"layers\": [" LAYER(OCI_MEDIA_HELM_CHART_LEGACY, "9") "]}";
  CHECK_EQ_INT(manifest(legacy, &m, err), 0);
  CHECK_EQ_INT(m.legacy, 1);
  CHECK_EQ_STR(m.prov.digest, "");
  oci_manifest_free(&m);
  static const struct {
    const char *json, *msg;
    int code;
  } bad[] = {
      {"", "not valid JSON", OCI_EINVAL},
      {"{\"schemaVersion\": 2", "not valid JSON", OCI_EINVAL},
      {"[]", "not a JSON object", OCI_EINVAL},
      {"{\"schemaVersion\": 2, \"mediaType\": \"application/vnd.oci.image.index.v1+json\", \"manifests\": []}",
       "is not an image manifest", OCI_EINVAL},
      {"{\"schemaVersion\": 1, \"config\": " CONFIG ", \"layers\": []}", "schemaVersion is not 2", OCI_EINVAL},
      {"{\"schemaVersion\": 2, \"config\": " CONFIG "}", "layers is not a list", OCI_EINVAL},
      {"{\"schemaVersion\": 2, \"layers\": []}", "config is not an object", OCI_EINVAL},
      {"{\"schemaVersion\": 2, \"config\": " LAYER("application/vnd.oci.image.config.v1+json", "2") ", \"layers\": []}",
       "could not load config with mediatype " OCI_MEDIA_HELM_CONFIG, OCI_ENOENT},
      {"{\"schemaVersion\": 2, \"config\": " CONFIG ", \"layers\": [" LAYER("application/x", "1") "]}",
       "manifest does not contain a layer with mediatype " OCI_MEDIA_HELM_CHART, OCI_ENOENT},
      {"{\"schemaVersion\": 2, \"config\": " CONFIG ", \"layers\": [" LAYER(OCI_MEDIA_HELM_CHART, "-1") "]}",
       "layers[0] has no valid size", OCI_EINVAL},
      {"{\"schemaVersion\": 2, \"config\": " CONFIG ", \"layers\": [" LAYER(OCI_MEDIA_HELM_CHART, "1.5") "]}",
       "layers[0] has no valid size", OCI_EINVAL},
      {"{\"schemaVersion\": 2, \"config\": " CONFIG ", \"layers\": [{\"mediaType\": \"" OCI_MEDIA_HELM_CHART
       "\", \"digest\": \"sha256:12\", \"size\": 1}]}",
       "layers[0] has no valid digest", OCI_EINVAL},
      {"{\"schemaVersion\": 2, \"config\": " CONFIG ", \"layers\": [7]}", "layers[0] is not an object", OCI_EINVAL},
      {"{\"schemaVersion\": 2, \"config\": " CONFIG ", \"layers\": [{\"digest\": \"sha256:" D64 "\", \"size\": 1}]}",
       "layers[0] has no mediaType", OCI_EINVAL},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err[0] = 0;
    int rc = manifest(bad[i].json, &m, err);
    CHECK_EQ_INT(rc, bad[i].code);
    if (!strstr(err, bad[i].msg)) {
      t_failed++;
      fprintf(stderr, "manifest %zu: error \"%s\" lacks \"%s\"\n", i, err, bad[i].msg);
    }
  }
  /* too many layers, too big */
  buf_t b = BUF_INIT;
  buf_puts(&b, "{\"schemaVersion\": 2, \"config\": " CONFIG ", \"layers\": [");
  for (int i = 0; i < 300; i++) buf_puts(&b, i ? ", " LAYER("a/b", "1") : LAYER("a/b", "1"));
  buf_puts(&b, "]}");
  CHECK_EQ_INT(oci_manifest_parse(b.data, b.len, &m, err, sizeof err), OCI_E2BIG);
  CHECK(strstr(err, "300 layers (the limit is 256)") != NULL);
  CHECK_EQ_INT(oci_manifest_parse(b.data, OCI_MAX_JSON + 1, &m, err, sizeof err), OCI_E2BIG);
  /* deep nesting: cJSON refuses it (its nesting limit), no crash */
  buf_reset(&b);
  for (int i = 0; i < 100000; i++) buf_putc(&b, '[');
  CHECK_EQ_INT(oci_manifest_parse(b.data, b.len, &m, err, sizeof err), OCI_EINVAL);
  buf_free(&b);
}

static void test_tags(void) {
  char **tags;
  size_t n;
  char err[256];
  const char *j = "{\"name\": \"charts/nginx\", \"tags\": [\"1.0.0\", \"1.1.0_build.2\", \"latest\", \"2.0.0-rc.1\"]}";
  CHECK_EQ_INT(oci_tags_parse(j, strlen(j), &tags, &n, err, sizeof err), 0);
  CHECK_EQ_INT(n, 4);
  buf_t out = BUF_INIT;
  CHECK_EQ_INT(oci_tags_select((const char *const *)tags, n, "", &out, err, sizeof err), 0);
  CHECK_EQ_STR(out.data, "1.1.0+build.2");
  buf_reset(&out);
  CHECK_EQ_INT(oci_tags_select((const char *const *)tags, n, ">=2.0.0-0", &out, err, sizeof err), 0);
  CHECK_EQ_STR(out.data, "2.0.0-rc.1");
  buf_reset(&out);
  CHECK_EQ_INT(oci_tags_select((const char *const *)tags, n, "1.1.0+build.2", &out, err, sizeof err), 0);
  CHECK_EQ_STR(out.data, "1.1.0+build.2");
  buf_reset(&out);
  CHECK_EQ_INT(oci_tags_select((const char *const *)tags, n, "~1.0", &out, err, sizeof err), 0);
  CHECK_EQ_STR(out.data, "1.0.0");
  CHECK_EQ_INT(oci_tags_select((const char *const *)tags, n, "^3", &out, err, sizeof err), OCI_ENOENT);
  CHECK_EQ_STR(err, "could not locate a version matching provided version string ^3");
  CHECK_EQ_INT(oci_tags_select((const char *const *)tags, n, "latest", &out, err, sizeof err), OCI_EINVAL);
  CHECK_EQ_STR(err, "improper constraint: \"latest\"");
  CHECK_EQ_INT(oci_tags_select(NULL, 0, "", &out, err, sizeof err), OCI_ENOENT);
  oci_tags_free(tags, n);
  buf_free(&out);
  const char *none = "{\"name\": \"x\", \"tags\": null}";
  CHECK_EQ_INT(oci_tags_parse(none, strlen(none), &tags, &n, err, sizeof err), 0);
  CHECK_EQ_INT(n, 0);
  const char *bad1 = "{\"tags\": [1]}", *bad2 = "{\"tags\": \"x\"}";
  CHECK_EQ_INT(oci_tags_parse(bad1, strlen(bad1), &tags, &n, err, sizeof err), OCI_EINVAL);
  CHECK_EQ_STR(err, "tags list: tags[0] is not a string");
  CHECK_EQ_INT(oci_tags_parse(bad2, strlen(bad2), &tags, &n, err, sizeof err), OCI_EINVAL);
  CHECK_EQ_INT(oci_tags_parse("{", 1, &tags, &n, err, sizeof err), OCI_EINVAL);
}

static void test_auth(void) {
  oci_challenge_t c;
  char err[256];
  CHECK_EQ_INT(oci_challenge_parse("Bearer realm=\"https://auth.example/token\",service=\"registry.example\","
                                   "scope=\"repository:charts/nginx:pull\"",
                                   &c, err, sizeof err),
               0);
  CHECK_EQ_STR(c.scheme, "Bearer");
  CHECK_EQ_STR(c.realm, "https://auth.example/token");
  CHECK_EQ_STR(c.service, "registry.example");
  CHECK_EQ_STR(c.scope, "repository:charts/nginx:pull");
  buf_t b = BUF_INIT;
  oci_challenge_token_url(&c, NULL, &b);
  CHECK_EQ_STR(b.data, "https://auth.example/token?service=registry.example&scope=repository%3Acharts%2Fnginx%3Apull");
  buf_reset(&b);
  oci_challenge_token_url(&c, "repository:x:pull,push", &b);
  CHECK_EQ_STR(b.data, "https://auth.example/token?service=registry.example&scope=repository%3Ax%3Apull%2Cpush");
  oci_challenge_free(&c);
  /* spaces, case, unquoted values, escapes, unknown params, a realm with a query */
  CHECK_EQ_INT(oci_challenge_parse("  bearer  Realm = https://a/t?x=1 , error=\"insufficient_scope\", "
                                   "scope=\"a\\\"b\"",
                                   &c, err, sizeof err),
               0);
  CHECK_EQ_STR(c.scheme, "bearer");
  CHECK_EQ_STR(c.realm, "https://a/t?x=1");
  CHECK_EQ_STR(c.service, "");
  CHECK_EQ_STR(c.scope, "a\"b");
  buf_reset(&b);
  oci_challenge_token_url(&c, NULL, &b);
  CHECK_EQ_STR(b.data, "https://a/t?x=1&scope=a%22b");
  oci_challenge_free(&c);
  CHECK_EQ_INT(oci_challenge_parse("Basic realm=\"Registry\"", &c, err, sizeof err), 0);
  CHECK_EQ_STR(c.scheme, "Basic");
  oci_challenge_free(&c);
  /* only the first challenge */
  CHECK_EQ_INT(oci_challenge_parse("Bearer realm=\"r\", Basic realm=\"x\"", &c, err, sizeof err), 0);
  CHECK_EQ_STR(c.realm, "r");
  oci_challenge_free(&c);
  static const struct {
    const char *h, *msg;
  } bad[] = {
      {"", "no auth scheme"},
      {"Bearer", "a Bearer challenge without realm"},
      {"Bearer service=\"x\"", "a Bearer challenge without realm"},
      {"Bearer realm=\"unterminated", "unterminated quoted value"},
      {"Bearer =x", "expected name=value"},
      {"Bearer realm=\"a\" junk", "expected ','"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err[0] = 0;
    CHECK_EQ_INT(oci_challenge_parse(bad[i].h, &c, err, sizeof err), OCI_EINVAL);
    if (!strstr(err, bad[i].msg)) {
      t_failed++;
      fprintf(stderr, "challenge \"%s\": error \"%s\" lacks \"%s\"\n", bad[i].h, err, bad[i].msg);
    }
  }
  buf_t big = BUF_INIT;
  buf_puts(&big, "Bearer realm=\"");
  for (int i = 0; i < 10000; i++) buf_putc(&big, 'a');
  CHECK_EQ_INT(oci_challenge_parse(big.data, &c, err, sizeof err), OCI_E2BIG);
  buf_free(&big);
  /* token responses */
  uint64_t ex;
  buf_reset(&b);
  const char *t1 = "{\"token\": \"abc\", \"expires_in\": 300}";
  CHECK_EQ_INT(oci_token_parse(t1, strlen(t1), &b, &ex, err, sizeof err), 0);
  CHECK_EQ_STR(b.data, "abc");
  CHECK_EQ_INT(ex, 300);
  buf_reset(&b);
  const char *t2 = "{\"access_token\": \"def\", \"token\": \"abc\"}";
  CHECK_EQ_INT(oci_token_parse(t2, strlen(t2), &b, &ex, err, sizeof err), 0);
  CHECK_EQ_STR(b.data, "def");
  CHECK_EQ_INT(ex, 60);
  const char *t3 = "{\"expires_in\": 5}";
  CHECK_EQ_INT(oci_token_parse(t3, strlen(t3), &b, &ex, err, sizeof err), OCI_EINVAL);
  CHECK_EQ_STR(err, "token response: no token or access_token");
  CHECK_EQ_INT(oci_token_parse("nope", 4, &b, &ex, err, sizeof err), OCI_EINVAL);
  buf_free(&b);
}

/* ---- dockerconfigjson ---- */

static int dc(const char *json, const char *registry, char **u, char **p, char *err) {
  err[0] = 0;
  return oci_dockerconfig_creds(json, strlen(json), registry, u, p, err, 256);
}

static void dc_ok(const char *json, const char *registry, const char *user, const char *pass) {
  char *u = NULL, *p = NULL, err[256];
  int rc = dc(json, registry, &u, &p, err);
  CHECK_EQ_INT(rc, 0);
  if (rc) fprintf(stderr, "%s @ %s: %s\n", json, registry, err);
  else {
    CHECK_EQ_STR(u, user);
    CHECK_EQ_STR(p, pass);
  }
  free(u);
  free(p);
}

static void dc_bad(const char *json, const char *registry, int code, const char *msg, const char *secret) {
  char *u = (char *)1, *p = (char *)1, err[256];
  int rc = dc(json, registry, &u, &p, err);
  CHECK_EQ_INT(rc, code);
  CHECK(u == NULL && p == NULL);
  if (!strstr(err, msg)) {
    t_failed++;
    fprintf(stderr, "%s @ %s: error \"%s\" lacks \"%s\"\n", json, registry, err, msg);
  }
  if (secret && strstr(err, secret)) {
    t_failed++;
    fprintf(stderr, "%s @ %s: error \"%s\" tells the secret\n", json, registry, err);
  }
}

static void test_dockerconfig(void) {
  /* auth is base64(user:password) */
  dc_ok("{\"auths\":{\"registry.example:5000\":{\"auth\":\"YWxpY2U6czNjcmV0\"}}}", "registry.example:5000", "alice",
        "s3cret");
  /* the fields */
  dc_ok("{\"auths\":{\"r.example\":{\"username\":\"bob\",\"password\":\"hunter2\",\"email\":\"b@x\"}}}", "r.example",
        "bob", "hunter2");
  /* field names match case-insensitively, as encoding/json */
  dc_ok("{\"auths\":{\"r.example\":{\"Username\":\"bob\",\"PASSWORD\":\"hunter2\"}}}", "r.example", "bob", "hunter2");
  /* auth wins over the fields */
  dc_ok("{\"auths\":{\"r\":{\"username\":\"x\",\"password\":\"y\",\"auth\":\"YWxpY2U6czNjcmV0\"}}}", "r", "alice",
        "s3cret");
  /* an empty auth leaves the fields */
  dc_ok("{\"auths\":{\"r\":{\"username\":\"x\",\"password\":\"y\",\"auth\":\"\"}}}", "r", "x", "y");
  /* split at the first colon; an empty password */
  dc_ok("{\"auths\":{\"r\":{\"auth\":\"dTpwOnE=\"}}}", "r", "u", "p:q");
  dc_ok("{\"auths\":{\"r\":{\"auth\":\"dTo=\"}}}", "r", "u", "");
  /* base64 with a line break, as Go skips CR and LF */
  dc_ok("{\"auths\":{\"r\":{\"auth\":\"YWxpY2U6\\nczNjcmV0\"}}}", "r", "alice", "s3cret");
  /* an identity token (refresh token) */
  dc_ok("{\"auths\":{\"r\":{\"auth\":\"MDAwMDA6\",\"identitytoken\":\"eyJhbGciOi.refresh\"}}}", "r", OCI_TOKEN_USER,
        "eyJhbGciOi.refresh");
  /* keys with a scheme and a path (legacy docker config files) */
  dc_ok("{\"auths\":{\"https://registry.example/v1/\":{\"auth\":\"YWxpY2U6czNjcmV0\"}}}", "registry.example", "alice",
        "s3cret");
  dc_ok("{\"auths\":{\"http://localhost:5000\":{\"auth\":\"Ym9iOmh1bnRlcjI=\"}}}", "localhost:5000", "bob", "hunter2");
  /* the exact key wins over an earlier key that only matches as a host */
  dc_ok("{\"auths\":{\"https://r.example\":{\"auth\":\"Ym9iOmh1bnRlcjI=\"},\"r.example\":{\"auth\":\"YWxpY2U6czNjcmV0\"}}}",
        "r.example", "alice", "s3cret");
  /* docker.io is stored under Docker Hub's old index address */
  dc_ok("{\"auths\":{\"docker.io\":{\"auth\":\"Ym9iOmh1bnRlcjI=\"},"
        "\"https://index.docker.io/v1/\":{\"auth\":\"YWxpY2U6czNjcmV0\"}}}",
        "docker.io", "alice", "s3cret");
  /* other top-level fields are ignored */
  dc_ok("{\"credsStore\":\"desktop\",\"HttpHeaders\":{\"a\":\"b\"},\"auths\":{\"r\":{\"auth\":\"dTo=\"}}}", "r", "u", "");
  /* nothing for the registry: anonymous */
  dc_bad("{\"auths\":{\"registry.example\":{\"auth\":\"YWxpY2U6czNjcmV0\"}}}", "registry.example:5000", OCI_ENOENT,
         "no credentials for registry registry.example:5000", NULL);
  dc_bad("{\"auths\":{\"registry.example:5000\":{\"auth\":\"YWxpY2U6czNjcmV0\"}}}", "registry.example", OCI_ENOENT,
         "no credentials", NULL);
  dc_bad("{\"auths\":{\"sub.r.example\":{\"auth\":\"YWxpY2U6czNjcmV0\"}}}", "r.example", OCI_ENOENT, "no credentials", NULL);
  dc_bad("{\"auths\":{\"R.example\":{\"auth\":\"YWxpY2U6czNjcmV0\"}}}", "r.example", OCI_ENOENT, "no credentials", NULL);
  dc_bad("{}", "r", OCI_ENOENT, "no credentials", NULL);
  dc_bad("{\"auths\":null}", "r", OCI_ENOENT, "no credentials", NULL);
  dc_bad("{\"auths\":{\"r\":null}}", "r", OCI_ENOENT, "no credentials", NULL);
  dc_bad("{\"auths\":{\"r\":{}}}", "r", OCI_ENOENT, "holds no credentials", NULL);
  dc_bad("{\"auths\":{\"r\":{\"email\":\"x@y\",\"registrytoken\":\"t\"}}}", "r", OCI_ENOENT, "holds no credentials", NULL);
  /* malformed */
  dc_bad("", "r", OCI_EINVAL, "dockerconfigjson: not valid JSON", NULL);
  dc_bad("{\"auths\":", "r", OCI_EINVAL, "not valid JSON", NULL);
  dc_bad("[]", "r", OCI_EINVAL, "not a JSON object", NULL);
  dc_bad("{\"auths\":[]}", "r", OCI_EINVAL, "auths is not an object", NULL);
  dc_bad("{\"auths\":{\"r\":\"YWxpY2U6czNjcmV0\"}}", "r", OCI_EINVAL, "the auths entry for r is not an object", NULL);
  dc_bad("{\"auths\":{\"r\":{\"password\":12345}}}", "r", OCI_EINVAL, "password is not a string", NULL);
  dc_bad("{\"auths\":{\"r\":{\"auth\":\"not base64!\"}}}", "r", OCI_EINVAL, "auth is not valid base64", "not base64!");
  dc_bad("{\"auths\":{\"r\":{\"auth\":\"YWxpY2U6czNjcmV0\"}}}x", "r", OCI_EINVAL, "not valid JSON", NULL);
  /* base64 of "nocolon-secret": the message never says what it decoded to */
  dc_bad("{\"auths\":{\"r\":{\"auth\":\"bm9jb2xvbi1zZWNyZXQ=\"}}}", "r", OCI_EINVAL,
         "auth is not base64 of username:password", "nocolon-secret");
  /* a NUL byte inside (base64 of "a\0:b") */
  dc_bad("{\"auths\":{\"r\":{\"auth\":\"YQA6Yg==\"}}}", "r", OCI_EINVAL, "NUL byte", NULL);
  /* oversized */
  {
    size_t n = OCI_MAX_JSON + 10;
    char *big = malloc(n + 1);
    memset(big, ' ', n);
    memcpy(big, "{\"auths\":{}", 11);
    big[n - 1] = '}';
    big[n] = 0;
    char *u, *p, err[256];
    CHECK_EQ_INT(oci_dockerconfig_creds(big, n, "r", &u, &p, err, sizeof err), OCI_E2BIG);
    free(big);
  }
  /* every truncation of a valid document fails cleanly with a message */
  const char *doc = "{\"auths\":{\"https://r.example/v1/\":{\"auth\":\"YWxpY2U6czNjcmV0\",\"identitytoken\":\"\"}}}";
  for (size_t k = 0; k < strlen(doc); k++) {
    char *u = NULL, *p = NULL, err[256] = "";
    int rc = oci_dockerconfig_creds(doc, k, "r.example", &u, &p, err, sizeof err);
    CHECK(rc != 0 && err[0] && !u && !p);
  }
}

int main(void) {
  test_refs();
  test_paths();
  test_manifest();
  test_tags();
  test_auth();
  test_dockerconfig();
  return t_done();
}
