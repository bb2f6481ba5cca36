#include "helm/release/release.h"
#include "base/b64.h"
#include "base/gz.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "t.h"

/* Go json.Marshal of a Helm v4.3.1 release built from Helm's own types (tests/oracle/release sample-v4). */
static const char go_v4_json[] =
    "{\"name\":\"demo-rel\",\"info\":{\"first_deployed\":\"2024-02-29T23:59:58.123456789+05:30\",\"last_d"
    "eployed\":\"2025-07-01T08:00:00.5-07:00\",\"description\":\"Upgrade complete\",\"status\":\"deployed"
    "\",\"rollback_revision\":2,\"notes\":\"Thanks \\u0026 \\u003cenjoy\\u003e\\n\"},\"chart\":{\"metadat"
    "a\":{\"name\":\"demo\",\"home\":\"https://example.com/?a=1\\u0026b=\\u003c2\\u003e\",\"sources\":[\""
    "https://src\"],\"version\":\"1.2.3-rc.1+build\",\"description\":\"Demo \\\"chart\\\" \\u2028 é\",\"k"
    "eywords\":[\"a\",\"b\"],\"maintainers\":[{\"name\":\"Ann\",\"email\":\"ann@example.com\"},{\"name\":"
    "\"Bob\",\"url\":\"https://bob\"}],\"icon\":\"https://icon\",\"apiVersion\":\"v2\",\"condition\":\"de"
    "mo.enabled\",\"tags\":\"t1,t2\",\"appVersion\":\"10.0\",\"deprecated\":true,\"annotations\":{\"a\":\""
    "first\",\"category\":\"x\\u0026y\",\"z\":\"last\"},\"kubeVersion\":\"\\u003e=1.20.0-0\",\"dependenci"
    "es\":[{\"name\":\"dep\",\"version\":\"~1.0\",\"repository\":\"https://charts\",\"condition\":\"dep.e"
    "nabled\",\"tags\":[\"x\"],\"enabled\":true,\"import-values\":[\"data\",{\"child\":\"a\",\"parent\":\""
    "b\"}],\"alias\":\"d1\"},{\"name\":\"bare\",\"repository\":\"\"}],\"type\":\"application\"},\"lock\":"
    "{\"generated\":\"2025-07-02T09:10:11Z\",\"digest\":\"sha256:abc\",\"dependencies\":[{\"name\":\"dep\""
    ",\"version\":\"1.0.4\",\"repository\":\"https://charts\"}]},\"templates\":[{\"name\":\"templates/cm."
    "yaml\",\"data\":\"YXBpVmVyc2lvbjogdjEKa2luZDogQ29uZmlnTWFwCg==\"},{\"name\":\"templates/_helpers.tpl"
    "\",\"data\":\"\",\"modtime\":\"2025-07-02T09:10:11Z\"}],\"values\":{\"big\":1e+21,\"list\":[true,nul"
    "l,\"s\",1000000],\"name\":\"\\u003cx\\u003e\",\"neg\":-0.5,\"nested\":{\"a\":{},\"b\":\"2\"},\"repli"
    "cas\":3,\"small\":1e-7},\"schema\":\"eyJ0eXBlIjoib2JqZWN0In0=\",\"schemamodtime\":\"2025-07-02T09:10"
    ":11Z\",\"files\":[{\"name\":\"README.md\",\"data\":\"IyBoaQD/\"}],\"modtime\":\"2025-07-02T09:10:11Z"
    "\"},\"config\":{\"e\":\"\",\"image\":{\"tag\":\"v1.2\"},\"replicas\":5},\"manifest\":\"---\\n# Sourc"
    "e: demo/templates/cm.yaml\\napiVersion: v1\\nkind: ConfigMap\\n\\n\",\"hooks\":[{\"name\":\"pre\",\""
    "kind\":\"Job\",\"path\":\"demo/templates/job.yaml\",\"manifest\":\"kind: Job\\n\",\"events\":[\"pre-"
    "install\",\"pre-upgrade\"],\"last_run\":{\"started_at\":\"2024-02-29T23:59:58.123456789+05:30\",\"co"
    "mpleted_at\":\"2025-07-01T08:00:00.5-07:00\",\"phase\":\"Succeeded\"},\"weight\":-5,\"delete_policie"
    "s\":[\"before-hook-creation\"],\"output_log_policies\":[\"hook-failed\"]},{\"name\":\"t\",\"kind\":\""
    "Pod\",\"path\":\"demo/templates/t.yaml\",\"manifest\":\"kind: Pod\\n\",\"events\":[\"test\"],\"last_"
    "run\":{\"phase\":\"\"}}],\"version\":7,\"namespace\":\"apps\",\"apply_method\":\"ssa\"}";

static char *enc(const release_t *r) {
  buf_t b = BUF_INIT;
  int rc = release_encode_json(r, &b);
  CHECK_EQ_INT(rc, 0);
  return buf_steal(&b);
}

static void time_tests(void) {
  char s[48];
  release_time_t t = {0};
  release_time_format(&t, s, sizeof s);
  CHECK_EQ_STR(s, "0001-01-01T00:00:00Z");
  t = release_time_make(1709231398, 123456789, 5 * 3600 + 1800);
  release_time_format(&t, s, sizeof s);
  CHECK_EQ_STR(s, "2024-02-29T23:59:58.123456789+05:30");
  t = release_time_make(1751382000, 500000000, -7 * 3600);
  release_time_format(&t, s, sizeof s);
  CHECK_EQ_STR(s, "2025-07-01T08:00:00.5-07:00");
  t = release_time_make(0, 1000, 0);
  release_time_format(&t, s, sizeof s);
  CHECK_EQ_STR(s, "1970-01-01T00:00:00.000001Z");
  const char *samples[] = {"2024-02-29T23:59:58.123456789+05:30", "1999-12-31T23:59:59Z", "2025-07-01T08:00:00.5-07:00",
                           "1969-07-20T20:17:40.1-00:30", "9999-12-31T23:59:59.999999999Z"};
  for (size_t i = 0; i < sizeof samples / sizeof *samples; i++) {
    CHECK_EQ_INT(release_time_parse(samples[i], &t), 0);
    release_time_format(&t, s, sizeof s);
    CHECK_EQ_STR(s, samples[i]);
  }
  /* Go normalises on re-marshal: trailing zeros, +00:00 */
  CHECK_EQ_INT(release_time_parse("2020-01-02T03:04:05.500+00:00", &t), 0);
  release_time_format(&t, s, sizeof s);
  CHECK_EQ_STR(s, "2020-01-02T03:04:05.5Z");
  CHECK_EQ_INT(release_time_parse("", &t), 0);
  CHECK(!t.set);
  CHECK_EQ_INT(release_time_parse("0001-01-01T00:00:00Z", &t), 0);
  CHECK(!t.set);
  CHECK_EQ_INT(release_time_parse("0001-01-01T01:00:00+01:00", &t), 0); /* the same instant is zero */
  CHECK(!t.set);
  CHECK_EQ_INT(release_time_parse("2021-02-29T00:00:00Z", &t), -EINVAL);
  CHECK_EQ_INT(release_time_parse("2021-01-01 00:00:00Z", &t), -EINVAL);
  CHECK_EQ_INT(release_time_parse("2021-01-01T00:00:00", &t), -EINVAL);
  t = release_time_now();
  CHECK(t.set && t.sec > 1700000000);
}

static void go_json_tests(void) {
  const char *in = "{\"b\":[1,1e21,1e20,1e-7,0.000001,-0.5,123456789012345680000,3.14,-0,5e-324,1.7976931348623157e308],"
                   "\"a\":{\"z\":\"<&>\\u2028\\u2029\\u0001\\b\\f\\n\\t\\\"\\\\\\u007f\",\"y\":null,\"x\":true,\"w\":false},"
                   "\"dup\":1,\"dup\":2,\"\":\"empty\"}";
  cJSON *j = cJSON_Parse(in);
  buf_t b = BUF_INIT;
  CHECK_EQ_INT(release_go_json_append(&b, j), 0);
  CHECK_EQ_STR(b.data, "{\"\":\"empty\",\"a\":{\"w\":false,\"x\":true,\"y\":null,\"z\":\"\\u003c\\u0026\\u003e\\u2028\\u2029\\u0001\\b\\f\\n\\t\\\"\\\\\x7f\"},"
                       "\"b\":[1,1e+21,100000000000000000000,1e-7,0.000001,-0.5,123456789012345680000,3.14,-0,5e-324,1.7976931348623157e+308],"
                       "\"dup\":2}");
  buf_free(&b);
  cJSON_Delete(j);
  /* invalid UTF-8 becomes \ufffd per byte; valid multi-byte passes */
  CHECK_EQ_INT(release_go_string_append(&b, "a\xff\xed\xa0\x80\xc3\xa9\xf0\x9f\x98\x80", 11), 0);
  CHECK_EQ_STR(b.data, "\"a\\ufffd\\ufffd\\ufffd\\ufffd\xc3\xa9\xf0\x9f\x98\x80\"");
  buf_free(&b);
  j = cJSON_CreateNumber(NAN);
  CHECK_EQ_INT(release_go_json_append(&b, j), -EINVAL);
  cJSON_Delete(j);
  buf_free(&b);
}

static void roundtrip_go_bytes(void) {
  /* Go's own bytes decode and re-encode to the same bytes. */
  release_t *r;
  char err[200];
  int rc = release_decode_json(go_v4_json, strlen(go_v4_json), &r, err, sizeof err);
  CHECK_EQ_INT(rc, 0);
  if (rc) {
    fprintf(stderr, "%s\n", err);
    return;
  }
  CHECK_EQ_STR(r->name, "demo-rel");
  CHECK_EQ_INT(r->version, 7);
  CHECK_EQ_STR(r->info->status, "deployed");
  CHECK_EQ_INT(r->info->rollback_revision, 2);
  CHECK_EQ_STR(r->chart->metadata->maintainers[1].url, "https://bob");
  CHECK_EQ_INT(r->chart->files[0].len, 6);
  CHECK(memcmp(r->chart->files[0].data, "# hi\0\xff", 6) == 0);
  CHECK(r->chart->templates[1].data_nonnil && r->chart->templates[1].len == 0);
  CHECK_EQ_INT(r->hooks[0].weight, -5);
  CHECK_EQ_STR(r->apply_method, "ssa");
  char *s = enc(r);
  CHECK_EQ_STR(s, go_v4_json);
  free(s);

  /* Through the storage Secret and back. */
  release_secret_opts_t o = {.storage_namespace = "store", .created_at = 1700000000};
  r->labels = cJSON_Parse("{\"team\":\"blue\",\"owner\":\"someone-else\"}");
  cJSON *sec;
  CHECK_EQ_INT(release_secret_json(r, &o, &sec), 0);
  char *sj = cJSON_PrintUnformatted(sec);
  CHECK(strstr(sj, "\"metadata\":{\"name\":\"sh.helm.release.v1.demo-rel.v7\",\"namespace\":\"store\",\"labels\":"
                   "{\"createdAt\":\"1700000000\",\"name\":\"demo-rel\",\"owner\":\"helm\",\"status\":\"deployed\","
                   "\"team\":\"blue\",\"version\":\"7\"}}") != NULL);
  CHECK(strstr(sj, "\"type\":\"helm.sh/release.v1\"") != NULL);
  free(sj);
  /* data.release is base64(base64(gzip(json))) */
  const char *d = cJSON_GetObjectItem(cJSON_GetObjectItem(sec, "data"), "release")->valuestring;
  unsigned char *l1, *l2, *js;
  size_t n1, n2, nj;
  CHECK_EQ_INT(b64_decode_alloc(d, strlen(d), &l1, &n1, NULL, 0), 0);
  CHECK_EQ_INT(b64_decode_alloc((char *)l1, n1, &l2, &n2, NULL, 0), 0);
  CHECK(gz_is_gzip(l2, n2));
  CHECK_EQ_INT(gz_decompress(l2, n2, 1 << 20, &js, &nj, NULL, 0), 0);
  CHECK_EQ_STR((char *)js, go_v4_json);
  free(l1);
  free(l2);
  free(js);
  release_t *back;
  CHECK_EQ_INT(release_secret_decode(sec, 0, &back, err, sizeof err), 0);
  s = enc(back);
  CHECK_EQ_STR(s, go_v4_json);
  free(s);
  char *labels = cJSON_PrintUnformatted(back->labels);
  CHECK_EQ_STR(labels, "{\"team\":\"blue\"}");
  free(labels);
  release_free(back);
  /* a small limit refuses the inflated JSON */
  CHECK_EQ_INT(release_secret_decode(sec, 100, &back, err, sizeof err), -EFBIG);
  CHECK(strstr(err, "limit") != NULL);
  cJSON_Delete(sec);
  release_free(r);
}

static void build_in_c(void) {
  /* What rudder writes after an install, with Go's zero-value rules. */
  release_t r = {0};
  r.name = strdup("web");
  r.namespace = strdup("apps");
  r.version = 1;
  r.apply_method = strdup("ssa");
  r.manifest = strdup("---\n# Source: c/templates/a.yaml\na: <b>\n\n");
  r.info = calloc(1, sizeof *r.info);
  r.info->first_deployed = r.info->last_deployed = release_time_make(1700000000, 0, 3600);
  r.info->description = strdup("Install complete");
  r.info->status = strdup("deployed");
  r.chart = calloc(1, sizeof *r.chart);
  r.chart->metadata = calloc(1, sizeof *r.chart->metadata);
  r.chart->metadata->name = strdup("c");
  r.chart->metadata->version = strdup("1.0.0");
  r.chart->metadata->api_version = strdup("v2");
  r.chart->has_templates = true;
  r.chart->values = cJSON_Parse("{\"replicas\":1000000}");
  r.config = cJSON_CreateObject(); /* empty config is omitted */
  char *s = enc(&r);
  CHECK_EQ_STR(s, "{\"name\":\"web\",\"info\":{\"first_deployed\":\"2023-11-14T23:13:20+01:00\",\"last_deployed\":"
                  "\"2023-11-14T23:13:20+01:00\",\"description\":\"Install complete\",\"status\":\"deployed\"},"
                  "\"chart\":{\"metadata\":{\"name\":\"c\",\"version\":\"1.0.0\",\"apiVersion\":\"v2\"},\"lock\":null,"
                  "\"templates\":[],\"values\":{\"replicas\":1000000},\"schema\":null,\"schemamodtime\":"
                  "\"0001-01-01T00:00:00Z\",\"files\":null},\"manifest\":\"---\\n# Source: c/templates/a.yaml\\na: "
                  "\\u003cb\\u003e\\n\\n\",\"version\":1,\"namespace\":\"apps\",\"apply_method\":\"ssa\"}");
  free(s);
  buf_t name = BUF_INIT;
  CHECK_EQ_INT(release_secret_name(&r, &name), 0);
  CHECK_EQ_STR(name.data, "sh.helm.release.v1.web.v1");
  buf_free(&name);
  release_clear(&r);
  CHECK(r.name == NULL);
  release_t empty = {0};
  s = enc(&empty);
  CHECK_EQ_STR(s, "{}");
  free(s);
}

static void v3_record(void) {
  /* Helm v3 wrote zero times as "" (helm's time type) or 0001-01-01, "deleted" always, no apply_method. */
  const char *v3 = "{\"name\":\"old\",\"info\":{\"first_deployed\":\"2020-05-06T07:08:09.1+02:00\",\"last_deployed\":"
                   "\"2020-05-06T07:08:09.1+02:00\",\"deleted\":\"\",\"description\":\"Install complete\",\"status\":"
                   "\"deployed\"},\"chart\":{\"metadata\":{\"name\":\"old\",\"version\":\"0.1.0\",\"apiVersion\":\"v1\"},"
                   "\"lock\":null,\"templates\":[{\"name\":\"templates/a.yaml\",\"data\":\"a2luZDogQQo=\"}],\"values\":"
                   "{\"a\":1},\"schema\":null,\"files\":[]},\"config\":{},\"manifest\":\"m\",\"hooks\":[{\"name\":\"h\","
                   "\"kind\":\"Job\",\"path\":\"p\",\"manifest\":\"x\",\"events\":[\"post-install\"],\"last_run\":"
                   "{\"started_at\":\"0001-01-01T00:00:00Z\",\"completed_at\":\"\",\"phase\":\"\"}}],\"version\":3,"
                   "\"namespace\":\"legacy\",\"Unknown\":{\"ignored\":[1]}}";
  release_t *r;
  char err[200];
  CHECK_EQ_INT(release_decode_json(v3, strlen(v3), &r, err, sizeof err), 0);
  char *s = enc(r);
  CHECK_EQ_STR(s, "{\"name\":\"old\",\"info\":{\"first_deployed\":\"2020-05-06T07:08:09.1+02:00\",\"last_deployed\":"
                  "\"2020-05-06T07:08:09.1+02:00\",\"description\":\"Install complete\",\"status\":\"deployed\"},"
                  "\"chart\":{\"metadata\":{\"name\":\"old\",\"version\":\"0.1.0\",\"apiVersion\":\"v1\"},\"lock\":null,"
                  "\"templates\":[{\"name\":\"templates/a.yaml\",\"data\":\"a2luZDogQQo=\"}],\"values\":{\"a\":1},"
                  "\"schema\":null,\"schemamodtime\":\"0001-01-01T00:00:00Z\",\"files\":[]},\"manifest\":\"m\","
                  "\"hooks\":[{\"name\":\"h\",\"kind\":\"Job\",\"path\":\"p\",\"manifest\":\"x\",\"events\":"
                  "[\"post-install\"],\"last_run\":{\"phase\":\"\"}}],\"version\":3,\"namespace\":\"legacy\"}");
  free(s);
  release_free(r);
  /* Go matches field names case-insensitively */
  CHECK_EQ_INT(release_decode_json("{\"NAME\":\"x\",\"Version\":2}", 24, &r, err, sizeof err), 0);
  CHECK_EQ_STR(r->name, "x");
  CHECK_EQ_INT(r->version, 2);
  release_free(r);
}

static void bad_input(void) {
  release_t *r = (release_t *)1;
  char err[200];
  struct { const char *json, *want; } cases[] = {
      {"{\"name\":", "syntax error"},
      {"[]", "expected an object, found array"},
      {"{\"name\":5}", "name: expected a string, found number"},
      {"{\"version\":1.5}", "version: expected an integer"},
      {"{\"info\":{\"last_deployed\":\"yesterday\"}}", "info.last_deployed: not an RFC 3339 time"},
      {"{\"chart\":{\"templates\":[{\"name\":\"a\",\"data\":\"!!\"}]}}", "chart.templates[0].data: base64: illegal data"},
      {"{\"chart\":{\"metadata\":{\"annotations\":{\"a\":1}}}}", "chart.metadata.annotations.a: expected a string"},
      {"{\"hooks\":[{\"events\":[\"a\",3]}]}", "hooks[0].events[1]: expected a string"},
      {"{\"config\":[1]}", "config: expected an object, found array"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    err[0] = 0;
    CHECK(release_decode_json(cases[i].json, strlen(cases[i].json), &r, err, sizeof err) < 0);
    CHECK(r == NULL);
    if (!strstr(err, cases[i].want)) fprintf(stderr, "case %zu: got \"%s\", want \"%s\"\n", i, err, cases[i].want);
    CHECK(strstr(err, cases[i].want) != NULL);
  }
  /* Secrets: missing data, bad base64, uncompressed JSON (allowed), a gzip bomb */
  cJSON *sec = cJSON_Parse("{\"data\":{}}");
  CHECK_EQ_INT(release_secret_decode(sec, 0, &r, err, sizeof err), -EINVAL);
  cJSON_Delete(sec);
  sec = cJSON_Parse("{\"data\":{\"release\":\"***\"}}");
  CHECK_EQ_INT(release_secret_decode(sec, 0, &r, err, sizeof err), -EINVAL);
  CHECK(strstr(err, "base64") != NULL);
  cJSON_Delete(sec);
  char *b1, *b2;
  const char *plain = "{\"name\":\"p\",\"info\":{\"status\":\"failed\"},\"version\":2}";
  b64_encode_alloc(plain, strlen(plain), &b1, NULL);
  b64_encode_alloc(b1, strlen(b1), &b2, NULL);
  sec = cJSON_CreateObject();
  cJSON_AddStringToObject(cJSON_AddObjectToObject(sec, "data"), "release", b2);
  CHECK_EQ_INT(release_secret_decode(sec, 0, &r, err, sizeof err), 0);
  CHECK_EQ_STR(r->info->status, "failed");
  CHECK(r->labels == NULL);
  release_free(r);
  cJSON_Delete(sec);
  free(b1);
  free(b2);
  size_t big = 8u << 20;
  char *zeros = malloc(big);
  memset(zeros, ' ', big);
  zeros[0] = '{';
  zeros[big - 1] = '}';
  unsigned char *z;
  size_t zlen;
  gz_compress(zeros, big, 9, &z, &zlen);
  free(zeros);
  b64_encode_alloc(z, zlen, &b1, NULL);
  b64_encode_alloc(b1, strlen(b1), &b2, NULL);
  free(z);
  sec = cJSON_CreateObject();
  cJSON_AddStringToObject(cJSON_AddObjectToObject(sec, "data"), "release", b2);
  CHECK_EQ_INT(release_secret_decode(sec, 1 << 20, &r, err, sizeof err), -EFBIG);
  CHECK_EQ_INT(release_secret_decode(sec, 16 << 20, &r, err, sizeof err), 0);
  release_free(r);
  cJSON_Delete(sec);
  free(b1);
  free(b2);
  /* encoding refuses what JSON cannot hold, and a secret needs a name and info */
  release_t x = {0};
  x.config = cJSON_Parse("{\"a\":1}");
  cJSON_GetObjectItem(x.config, "a")->valuedouble = INFINITY;
  buf_t b = BUF_INIT;
  CHECK_EQ_INT(release_encode_json(&x, &b), -EINVAL);
  CHECK_EQ_INT(b.len, 0);
  buf_free(&b);
  cJSON *s;
  CHECK_EQ_INT(release_secret_json(&x, NULL, &s), -EINVAL);
  release_clear(&x);
}

int main(void) {
  time_tests();
  go_json_tests();
  roundtrip_go_bytes();
  build_in_c();
  v3_record();
  bad_input();
  return t_done();
}
