/* Captain's HelmRequest front door: every spec field into the release request (defaults, the
 * chart's source, valuesFrom, dependencies, the pinned version, the rollback annotation) and every
 * bad input refused with the field's path; the status it writes (phase, conditions, version, notes,
 * lastSpecHash, syncedClusters, reason). */
#include "reconcile/conditions.h"
#include "reconcile/doors/doors.h"
#include "helm/release/release.h"
#include "t.h"
#include "t_door.h"
#include <stdlib.h>
#include <string.h>

#define META "\"metadata\":{\"name\":\"web\",\"namespace\":\"apps\",\"generation\":3,\"uid\":\"u1\"}"

static int parse_ctx(const char *json, const char *repo_ns, release_req_t *s, buf_t *err) {
  t_door_chartrepo_ns = repo_ns;
  int rc = t_door_parse(&door_helmrequest, json, s, err);
  t_door_chartrepo_ns = "captain-system";
  return rc;
}

static int parse(const char *json, release_req_t *s, buf_t *err) { return parse_ctx(json, "captain-system", s, err); }

/* parse of {META, "spec": spec} */
static int parse_spec(const char *spec, release_req_t *s, buf_t *err) {
  buf_t json = BUF_INIT;
  buf_printf(&json, "{" META ",\"spec\":%s}", spec);
  int rc = parse(json.data, s, err);
  buf_free(&json);
  return rc;
}

/* source.http / source.oci secretRef: the engine reads the credentials from that Secret. */
static void test_source_secret(void) {
  release_req_t s;
  buf_t err = BUF_INIT;
  CHECK_EQ_INT(parse_spec("{\"source\":{\"http\":{\"url\":\"https://a/x.tgz\",\"secretRef\":\"creds\"}}}", &s, &err), 0);
  CHECK_EQ_STR(s.src.secret_name, "creds");
  CHECK_EQ_STR(s.src.secret_field, "spec.source.http.secretRef");
  req_free(&s);
  CHECK_EQ_INT(parse_spec("{\"source\":{\"oci\":{\"repo\":\"oci://a/b\",\"secretRef\":\"reg\"}}}", &s, &err), 0);
  CHECK_EQ_STR(s.src.secret_name, "reg");
  CHECK_EQ_STR(s.src.secret_field, "spec.source.oci.secretRef");
  req_free(&s);
  buf_free(&err);
}

/* clusterName, installToAllClusters and targetClusters name the request's clusters ("global" and
 * empty are this cluster). */
static void test_clusters(void) {
  static const struct { const char *spec; bool all; const char *want; } cases[] = {
    {"{\"chart\":\"r/c\"}", false, ""},
    {"{\"chart\":\"r/c\",\"clusterName\":\"\"}", false, ""},
    {"{\"chart\":\"r/c\",\"clusterName\":\"global\"}", false, ""},
    {"{\"chart\":\"r/c\",\"clusterName\":\"east\"}", false, "east,"},
    {"{\"chart\":\"r/c\",\"installToAllClusters\":true,\"clusterName\":\"east\"}", true, ""},
    {"{\"chart\":\"r/c\",\"targetClusters\":{\"clusterNames\":{\"names\":[\"global\",\"west\",\"west\"]}}}", false,
     ",west,"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    release_req_t s;
    buf_t err = BUF_INIT, got = BUF_INIT;
    CHECK_EQ_INT(parse_spec(cases[i].spec, &s, &err), 0);
    CHECK(s.all_clusters == cases[i].all);
    for (size_t k = 0; k < s.nclusters; k++) buf_printf(&got, "%s,", s.clusters[k]);
    CHECK_EQ_STR(got.data ? got.data : "", cases[i].want);
    buf_free(&got);
    buf_free(&err);
    req_free(&s);
  }
}

static void test_api(void) {
  CHECK_EQ_STR(door_helmrequest.group, "app.alauda.io");
  CHECK_EQ_STR(door_helmrequest.version, "v1");
  CHECK_EQ_STR(door_helmrequest.resource, "helmrequests");
  CHECK_EQ_STR(door_helmrequest.kind, "HelmRequest");
  int found = 0;
  for (size_t i = 0; doors[i]; i++) found += doors[i] == &door_helmrequest;
  CHECK_EQ_INT(found, 1);
}

static void test_defaults(void) {
  release_req_t s;
  buf_t err = BUF_INIT;
  CHECK_EQ_INT(parse_spec("{\"chart\":\"stable/nginx\"}", &s, &err), 0);
  CHECK_EQ_STR(s.release_name, "web");
  CHECK_EQ_STR(s.target_ns, "apps");
  CHECK_EQ_STR(s.storage_ns, "apps"); /* records beside the objects, as Captain and helm do */
  CHECK_EQ_INT((int)s.src.kind, REQ_SRC_REPOSITORY);
  CHECK_EQ_STR(s.src.repo_key, "chartrepo:captain-system/stable");
  CHECK_EQ_STR(s.src.name, "nginx");
  CHECK_EQ_STR(s.src.version, "");
  CHECK(s.chart == NULL);
  CHECK(cJSON_IsObject(s.values) && !s.values->child);
  CHECK_EQ_INT(s.nvalues_from, 0);
  CHECK_EQ_INT(s.ndepends_on, 0);
  CHECK_EQ_INT(s.rollback_to, 0);
  CHECK_EQ_INT(s.upgrade.retries, 0);
  CHECK_EQ_INT(s.upgrade.strategy, REQ_REMEDIATE_NONE);
  CHECK_EQ_INT(s.max_history, 10);
  CHECK_EQ_INT(s.interval_ms, REQ_DEFAULT_INTERVAL_MS);
  CHECK_EQ_INT(s.uninstall_timeout_ms, REQ_DEFAULT_TIMEOUT_MS);
  CHECK_EQ_INT(s.generation, 3);
  CHECK_EQ_INT(strlen(s.digest), 64);
  CHECK(s.door_data && strlen(s.door_data) == 64 && !strcmp(s.door_data, s.digest));
  CHECK(!s.has_finalizer && !s.deleting);
  req_free(&s);

  /* Every field set; Captain's finalizer is ours; the chart-repository namespace from the flag. */
  CHECK_EQ_INT(parse_ctx("{\"metadata\":{\"name\":\"web\",\"namespace\":\"apps\",\"finalizers\":[\"captain.cpaas.io\"],"
                         "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},\"spec\":{\"chart\":\"harbor/redis\","
                         "\"version\":\"~6.2\",\"namespace\":\"prod\",\"releaseName\":\"cache\",\"values\":{\"a\":{\"b\":1}},"
                         "\"clusterName\":\"\",\"installToAllClusters\":false,\"remediation\":{\"retries\":2}},"
                         "\"status\":{\"lastAppliedRevision\":4,\"installFailures\":1}}",
                         "repos", &s, &err),
               0);
  CHECK_EQ_STR(s.release_name, "cache");
  CHECK_EQ_STR(s.target_ns, "prod");
  CHECK_EQ_STR(s.storage_ns, "prod");
  CHECK_EQ_STR(s.src.repo_key, "chartrepo:repos/harbor");
  CHECK_EQ_STR(s.src.name, "redis");
  CHECK_EQ_STR(s.src.version, "~6.2");
  CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(s.values, "a"), "b") != NULL);
  CHECK_EQ_INT(s.upgrade.retries, 2);
  CHECK_EQ_INT(s.upgrade.strategy, REQ_REMEDIATE_ROLLBACK);
  CHECK_EQ_INT(s.install.retries, 0);
  CHECK(s.has_finalizer && s.deleting);
  CHECK_EQ_INT(s.applied_revision, 4);
  CHECK_EQ_INT(s.install_failures, 1);
  req_free(&s);
  buf_free(&err);
}

static void test_sources(void) {
  release_req_t s;
  buf_t err = BUF_INIT;
  /* A source overrides chart and version (Captain ignores them then). */
  CHECK_EQ_INT(parse_spec("{\"chart\":\"x/y\",\"version\":\"1.0.0\",\"source\":{\"http\":{\"url\":\"https://c.example/web-1.2.0.tgz\"}}}",
                          &s, &err), 0);
  CHECK_EQ_INT((int)s.src.kind, REQ_SRC_URL);
  CHECK_EQ_STR(s.src.url, "https://c.example/web-1.2.0.tgz");
  CHECK(s.src.repo_key == NULL);
  CHECK_EQ_STR(s.src.version, "");
  req_free(&s);
  CHECK_EQ_INT(parse_spec("{\"source\":{\"oci\":{\"repo\":\"harbor.example/lib/web:1.0.0\",\"secretRef\":\"\"}}}", &s, &err), 0);
  CHECK_EQ_INT((int)s.src.kind, REQ_SRC_OCI);
  CHECK_EQ_STR(s.src.url, "oci://harbor.example/lib/web:1.0.0");
  req_free(&s);
  CHECK_EQ_INT(parse_spec("{\"source\":{\"oci\":{\"repo\":\"oci://harbor.example/lib/web\"}}}", &s, &err), 0);
  CHECK_EQ_STR(s.src.url, "oci://harbor.example/lib/web");
  req_free(&s);
  buf_free(&err);
}

static void test_values_from_and_dependencies(void) {
  release_req_t s;
  buf_t err = BUF_INIT;
  CHECK_EQ_INT(parse_spec("{\"chart\":\"r/c\",\"valuesFrom\":[{\"configMapKeyRef\":{\"name\":\"base\"}},"
                          "{\"secretKeyRef\":{\"name\":\"creds\",\"key\":\"prod.yaml\",\"optional\":true}}],"
                          "\"dependencies\":[\"db\",\"cache\"]}",
                          &s, &err), 0);
  CHECK_EQ_INT(s.nvalues_from, 2);
  if (s.nvalues_from == 2) {
    CHECK(!s.values_from[0].secret && !s.values_from[0].optional);
    CHECK_EQ_STR(s.values_from[0].ns, "apps");
    CHECK_EQ_STR(s.values_from[0].name, "base");
    CHECK_EQ_STR(s.values_from[0].key, "values.yaml");
    CHECK(s.values_from[0].target_path == NULL);
    CHECK_EQ_STR(s.values_from[0].field, "spec.valuesFrom[0]");
    CHECK(s.values_from[1].secret && s.values_from[1].optional);
    CHECK_EQ_STR(s.values_from[1].name, "creds");
    CHECK_EQ_STR(s.values_from[1].key, "prod.yaml");
    CHECK_EQ_STR(s.values_from[1].field, "spec.valuesFrom[1]");
  }
  CHECK_EQ_INT(s.ndepends_on, 2);
  if (s.ndepends_on == 2) {
    CHECK_EQ_STR(s.depends_on[0], "apps/db");
    CHECK_EQ_STR(s.depends_on[1], "apps/cache");
  }
  req_free(&s);
  buf_free(&err);
}

/* The spec hash parse_spec gives spec (door_data's first 64 characters). */
static void spec_hash(const char *spec, char out[65]) {
  release_req_t s;
  buf_t err = BUF_INIT;
  CHECK_EQ_INT(parse_spec(spec, &s, &err), 0);
  snprintf(out, 65, "%s", s.door_data ? s.door_data : "");
  req_free(&s);
  buf_free(&err);
}

/* status.version is kept for the spec it was installed from (lastSpecHash), not for another. */
static void test_pinned_version(void) {
  static const struct { const char *spec, *hashed, *installed, *want; } cases[] = {
    {"{\"chart\":\"r/c\"}", "{\"chart\":\"r/c\"}", "1.4.0", "1.4.0"},                     /* the same spec: kept */
    {"{\"chart\":\"r/c\",\"values\":{\"x\":1}}", "{\"chart\":\"r/c\"}", "1.4.0", ""},     /* another: the newest */
    {"{\"chart\":\"r/c\",\"version\":\"2.x\"}", "{\"chart\":\"r/c\",\"version\":\"2.x\"}", "2.1.0", "2.x"}, /* asked */
    {"{\"source\":{\"oci\":{\"repo\":\"oci://h/c\"}}}", "{\"source\":{\"oci\":{\"repo\":\"oci://h/c\"}}}", "1.0.0", "1.0.0"},
    {"{\"source\":{\"oci\":{\"repo\":\"oci://h/c:2.0.0\"}}}", "{\"source\":{\"oci\":{\"repo\":\"oci://h/c:2.0.0\"}}}", "2.0.0",
     ""}, /* the reference names its tag */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char hash[65];
    spec_hash(cases[i].hashed, hash);
    release_req_t s;
    buf_t err = BUF_INIT, j = BUF_INIT;
    buf_printf(&j, "{" META ",\"spec\":%s,\"status\":{\"version\":\"%s\",\"lastSpecHash\":\"%s\"}}", cases[i].spec,
               cases[i].installed, hash);
    CHECK_EQ_INT(parse(j.data, &s, &err), 0);
    CHECK_EQ_STR(s.src.version, cases[i].want);
    /* The pin changes nothing that is installed: the digest is the spec's. */
    CHECK_EQ_INT(!strcmp(s.digest, hash), !strcmp(cases[i].spec, cases[i].hashed));
    req_free(&s);
    buf_free(&j);
    buf_free(&err);
  }
}

/* parse of {"chart": "r/c"} with the rollback annotation set to v; its digest into digest. */
static int parse_rollback(const char *v, release_req_t *s, char digest[65]) {
  buf_t err = BUF_INIT, j = BUF_INIT;
  buf_printf(&j, "{\"metadata\":{\"name\":\"web\",\"namespace\":\"apps\",\"annotations\":{\"app.alauda.io/rollback-to\":\"%s\"}},"
                 "\"spec\":{\"chart\":\"r/c\"}}", v);
  int rc = parse(j.data, s, &err);
  memcpy(digest, s->digest, 65);
  buf_free(&j);
  buf_free(&err);
  return rc;
}

static void test_rollback_annotation(void) {
  char plain[65], two[65], three[65], none[65];
  spec_hash("{\"chart\":\"r/c\"}", plain);
  release_req_t s;
  CHECK_EQ_INT(parse_rollback("2", &s, two), 0);
  CHECK_EQ_INT(s.rollback_to, 2);
  CHECK(!strncmp(s.door_data, plain, 64)); /* not a change of the spec */
  req_free(&s);
  CHECK_EQ_INT(parse_rollback("3", &s, three), 0);
  CHECK_EQ_INT(s.rollback_to, 3);
  req_free(&s);
  CHECK_EQ_INT(parse_rollback("", &s, none), 0);
  CHECK_EQ_INT(s.rollback_to, 0);
  req_free(&s);
  /* but setting, changing and removing it are changes of the inputs */
  CHECK(strcmp(two, plain) != 0 && strcmp(three, two) != 0);
  CHECK_EQ_STR(none, plain);
}

static void test_errors(void) {
  static const struct { const char *spec; int rc; const char *msg; } cases[] = {
    {"{}", -22, "spec.chart: must be <repository>/<chart> (a ChartRepo name and a chart in it)"},
    {"{\"chart\":\"nginx\"}", -22, "spec.chart: must be <repository>/<chart> (a ChartRepo name and a chart in it), got \"nginx\""},
    {"{\"chart\":\"/nginx\"}", -22, "spec.chart: must be <repository>/<chart> (a ChartRepo name and a chart in it), got \"/nginx\""},
    {"{\"chart\":\"stable/\"}", -22, "spec.chart: must be <repository>/<chart> (a ChartRepo name and a chart in it), got \"stable/\""},
    {"{\"chart\":\"a/b/c\"}", -22, "spec.chart: must be <repository>/<chart> (a ChartRepo name and a chart in it), got \"a/b/c\""},
    {"{\"chart\":\"Stable!/c\"}", -22,
     "spec.chart (its repository part): \"Stable!\" must be a name of at most 253 lowercase letters, digits, '-' and '.', "
     "starting and ending with a letter or digit"},
    {"{\"chart\":3}", -22, "spec.chart: must be a string"},
    {"{\"chart\":\"r/c\",\"version\":1.2}", -22, "spec.version: must be a string"},
    {"{\"chart\":\"r/c\",\"releaseName\":\"a123456789b123456789c123456789d123456789e123456789f1234\"}", -22,
     "spec.releaseName: \"a123456789b123456789c123456789d123456789e123456789f1234\" must be a name of at most 53 lowercase "
     "letters, digits, '-' and '.', starting and ending with a letter or digit"},
    {"{\"chart\":\"r/c\",\"releaseName\":\"Web\"}", -22,
     "spec.releaseName: \"Web\" must be a name of at most 53 lowercase letters, digits, '-' and '.', starting and ending "
     "with a letter or digit"},
    {"{\"chart\":\"r/c\",\"releaseName\":[\"x\"]}", -22, "spec.releaseName: must be a string"},
    {"{\"chart\":\"r/c\",\"namespace\":\"Prod\"}", -22,
     "spec.namespace: \"Prod\" must be a name of at most 63 lowercase letters, digits, '-' and '.', starting and ending "
     "with a letter or digit"},
    {"{\"chart\":\"r/c\",\"namespace\":5}", -22, "spec.namespace: must be a string"},
    {"{\"chart\":\"r/c\",\"values\":[1]}", -22, "spec.values: must be an object"},
    {"{\"chart\":\"r/c\",\"values\":\"a: 1\"}", -22, "spec.values: must be an object"},
    {"{\"chart\":\"r/c\",\"valuesFrom\":{}}", -22, "spec.valuesFrom: must be a list of {configMapKeyRef} or {secretKeyRef}"},
    {"{\"chart\":\"r/c\",\"valuesFrom\":[{}]}", -22, "spec.valuesFrom[0]: set exactly one of configMapKeyRef and secretKeyRef"},
    {"{\"chart\":\"r/c\",\"valuesFrom\":[{\"configMapKeyRef\":{\"name\":\"a\"}},{\"configMapKeyRef\":{\"name\":\"a\"},"
     "\"secretKeyRef\":{\"name\":\"b\"}}]}",
     -22, "spec.valuesFrom[1]: set exactly one of configMapKeyRef and secretKeyRef"},
    {"{\"chart\":\"r/c\",\"valuesFrom\":[\"cm\"]}", -22, "spec.valuesFrom[0]: set exactly one of configMapKeyRef and secretKeyRef"},
    {"{\"chart\":\"r/c\",\"valuesFrom\":[{\"configMapKeyRef\":{}}]}", -22,
     "spec.valuesFrom[0].configMapKeyRef.name: must be a name of at most 253 lowercase letters, digits, '-' and '.', "
     "starting and ending with a letter or digit"},
    {"{\"chart\":\"r/c\",\"valuesFrom\":[{\"secretKeyRef\":{\"name\":7}}]}", -22, "spec.valuesFrom[0].secretKeyRef.name: must be a string"},
    {"{\"chart\":\"r/c\",\"valuesFrom\":[{\"secretKeyRef\":{\"name\":\"s\",\"key\":\"a/b\"}}]}", -22,
     "spec.valuesFrom[0].secretKeyRef.key: a data key is letters, digits, '-', '_' and '.' (at most 253)"},
    {"{\"chart\":\"r/c\",\"valuesFrom\":[{\"configMapKeyRef\":{\"name\":\"s\",\"optional\":\"yes\"}}]}", -22,
     "spec.valuesFrom[0].configMapKeyRef.optional: must be true or false"},
    {"{\"chart\":\"r/c\",\"dependencies\":\"db\"}", -22, "spec.dependencies: must be a list of HelmRequest names"},
    {"{\"chart\":\"r/c\",\"dependencies\":[\"db\",3]}", -22,
     "spec.dependencies[1]: must be a name of at most 253 lowercase letters, digits, '-' and '.', starting and ending with "
     "a letter or digit"},
    {"{\"chart\":\"r/c\",\"dependencies\":[\"web\"]}", -22, "spec.dependencies[0]: a HelmRequest cannot depend on itself"},
    {"{\"chart\":\"r/c\",\"remediation\":{\"retries\":-1}}", -22, "spec.remediation.retries: must be a whole number, 0 or more"},
    {"{\"chart\":\"r/c\",\"remediation\":{\"retries\":1.5}}", -22, "spec.remediation.retries: must be a whole number, 0 or more"},
    {"{\"chart\":\"r/c\",\"remediation\":{\"retries\":\"2\"}}", -22, "spec.remediation.retries: must be a whole number, 0 or more"},
    {"{\"chart\":\"r/c\",\"remediation\":3}", -22, "spec.remediation: must be an object"},
    {"{\"source\":{}}", -22, "spec.source: set exactly one of http and oci"},
    {"{\"source\":{\"http\":{\"url\":\"https://a/x.tgz\"},\"oci\":{\"repo\":\"oci://a/b\"}}}", -22,
     "spec.source: set exactly one of http and oci"},
    {"{\"source\":\"https://a/x.tgz\"}", -22, "spec.source: set exactly one of http and oci"},
    {"{\"source\":{\"http\":{\"url\":\"ftp://a/x.tgz\"}}}", -22,
     "spec.source.http.url: must be the http:// or https:// URL of a packaged chart"},
    {"{\"source\":{\"http\":{}}}", -22, "spec.source.http.url: must be the http:// or https:// URL of a packaged chart"},
    {"{\"source\":{\"http\":{\"url\":true}}}", -22, "spec.source.http.url: must be a string"},
    {"{\"source\":{\"oci\":{\"repo\":\"\"}}}", -22,
     "spec.source.oci.repo: must be an OCI reference like oci://registry/path/chart[:tag]"},
    {"{\"source\":{\"http\":{\"url\":\"https://a/x.tgz\",\"secretRef\":\"Creds!\"}}}", -22,
     "spec.source.http.secretRef: \"Creds!\" must be a name of at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"},
    {"{\"source\":{\"oci\":{\"repo\":\"oci://a/b\",\"secretRef\":{\"name\":\"creds\"}}}}", -22,
     "spec.source.oci.secretRef: must be a string"},
    {"{\"chart\":\"r/c\",\"clusterName\":\"East_1\"}", -22,
     "spec.clusterName: \"East_1\" must be a name of at most 63 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"},
    {"{\"chart\":\"r/c\",\"clusterName\":1}", -22, "spec.clusterName: must be a string"},
    {"{\"chart\":\"r/c\",\"installToAllClusters\":\"true\"}", -22, "spec.installToAllClusters: must be true or false"},
    {"{\"chart\":\"r/c\",\"targetClusters\":{\"clusterNames\":{\"names\":[\"a\", 3]}}}", -22,
     "spec.targetClusters.clusterNames.names[1]: must be a name of at most 63 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"},
    {"{\"chart\":\"r/c\",\"targetClusters\":{\"clusterLabels\":{\"labelSelector\":{\"env\":\"prod\"}}}}", -95,
     "spec.targetClusters.clusterLabels: selecting clusters by labels is not supported by this rudder version"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    release_req_t s;
    buf_t err = BUF_INIT;
    int rc = parse_spec(cases[i].spec, &s, &err);
    CHECK_EQ_INT(rc, cases[i].rc);
    CHECK_EQ_STR(err.data, cases[i].msg);
    if (rc != cases[i].rc || !err.data || strcmp(err.data, cases[i].msg)) fprintf(stderr, "  case %zu: %s\n", i, cases[i].spec);
    /* Identity is filled even for a bad spec, so that status can be written; the door data says why. */
    CHECK_EQ_STR(s.name, "web");
    CHECK_EQ_STR(s.ns, "apps");
    CHECK(s.door_data && strlen(s.door_data) > 65);
    CHECK_EQ_STR(s.door_data ? s.door_data + 65 : NULL, cases[i].rc == -95 ? "NotSupported" : "InvalidSpec");
    req_free(&s);
    buf_free(&err);
  }
  /* Errors outside the spec. */
  release_req_t s;
  buf_t err = BUF_INIT;
  CHECK_EQ_INT(parse("{" META "}", &s, &err), -22);
  CHECK_EQ_STR(err.data, "spec is missing");
  CHECK_EQ_STR(s.door_data, "- InvalidSpec");
  req_free(&s);
  CHECK_EQ_INT(parse("{\"metadata\":{\"name\":\"a123456789b123456789c123456789d123456789e123456789f1234\",\"namespace\":\"apps\"},"
                     "\"spec\":{\"chart\":\"r/c\"}}",
                     &s, &err), -22);
  CHECK_EQ_STR(err.data, "metadata.name (the default spec.releaseName): \"a123456789b123456789c123456789d123456789e123456789f1234\" "
                         "must be a name of at most 53 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit");
  req_free(&s);
  CHECK_EQ_INT(parse("{\"metadata\":{\"name\":\"web\",\"namespace\":\"apps\",\"annotations\":{\"app.alauda.io/rollback-to\":\"two\"}},"
                     "\"spec\":{\"chart\":\"r/c\"}}",
                     &s, &err), -22);
  CHECK_EQ_STR(err.data, "metadata.annotations[app.alauda.io/rollback-to]: must be a revision number (1 or more), got \"two\"");
  req_free(&s);
  CHECK_EQ_INT(parse("{\"metadata\":{\"name\":\"web\",\"namespace\":\"apps\",\"annotations\":{\"app.alauda.io/rollback-to\":\"-1\"}},"
                     "\"spec\":{\"chart\":\"r/c\"}}",
                     &s, &err), -22);
  req_free(&s);
  CHECK_EQ_INT(parse("{\"spec\":{\"chart\":\"r/c\"}}", &s, &err), -22);
  CHECK_EQ_STR(err.data, "object has no metadata.namespace or metadata.name");
  req_free(&s);
  buf_free(&err);
}

/* ---- status ---- */

static cJSON *status_of(const release_outcome_t *o) { return t_door_status(&door_helmrequest, o); }

static const char *sfield(const cJSON *st, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(st, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const cJSON *cond(const cJSON *st, const char *type) {
  return cond_find(cJSON_GetObjectItemCaseSensitive(st, "conditions"), type);
}

static const char *cfield(const cJSON *st, const char *type, const char *k) {
  return sfield(cond(st, type), k);
}

static void test_status(void) {
  release_req_t s;
  buf_t err = BUF_INIT;
  CHECK_EQ_INT(parse_spec("{\"chart\":\"r/c\"}", &s, &err), 0);
  char hash[65];
  memcpy(hash, s.door_data, 65);
  /* Two revisions; the newest deployed. */
  release_metadata_t m1 = {.name = "c", .version = "1.0.0"}, m2 = {.name = "c", .version = "1.1.0"};
  release_chart_t c1 = {.metadata = &m1}, c2 = {.metadata = &m2};
  release_info_t i1 = {.notes = "old notes"}, i2 = {.notes = "web is installed in apps.\n"};
  release_t r1 = {.name = "web", .info = &i1, .chart = &c1, .version = 1}, r2 = {.name = "web", .info = &i2, .chart = &c2, .version = 2};
  record_t hist[] = {{.version = 2, .status = "deployed", .rel = &r2}, {.version = 1, .status = "superseded", .rel = &r1}};
  release_outcome_t o = {.req = &s, .ready = "True", .reason = "UpgradeSucceeded", .message = "Helm release apps/web.v2 is deployed",
                         .released = "True", .applied_revision = 2, .applied_digest = s.digest, .history = hist, .nhistory = 2};
  cJSON *st = status_of(&o);
  CHECK_EQ_STR(sfield(st, "phase"), "Synced");
  CHECK_EQ_STR(sfield(st, "version"), "1.1.0");
  CHECK_EQ_STR(sfield(st, "notes"), "web is installed in apps.\n");
  CHECK_EQ_STR(sfield(st, "lastSpecHash"), hash);
  CHECK_EQ_STR(sfield(st, "reason"), "");
  const cJSON *sc = cJSON_GetObjectItemCaseSensitive(st, "syncedClusters");
  CHECK(cJSON_GetArraySize(sc) == 1 && !strcmp(cJSON_GetArrayItem(sc, 0)->valuestring, "global"));
  CHECK_EQ_INT(cJSON_GetObjectItemCaseSensitive(st, "observedGeneration")->valuedouble, 3);
  CHECK_EQ_INT(cJSON_GetObjectItemCaseSensitive(st, "lastAppliedRevision")->valuedouble, 2);
  CHECK_EQ_STR(sfield(st, "lastAppliedDigest"), s.digest);
  CHECK_EQ_STR(cfield(st, "Ready", "status"), "True");
  CHECK_EQ_STR(cfield(st, "Ready", "reason"), "UpgradeSucceeded");
  CHECK_EQ_STR(cfield(st, "Validated", "status"), "True");
  CHECK_EQ_STR(cfield(st, "Initialized", "status"), "True");
  CHECK_EQ_STR(cfield(st, "Initialized", "message"), "Helm release apps/web exists (revision 2)");
  cJSON_Delete(st);

  /* A failed upgrade: Failed with the reason; the spec hash is not claimed; the deployed version shown. */
  hist[0].status = "failed";
  hist[1].status = "deployed";
  o = (release_outcome_t){.req = &s, .ready = "False", .reason = "UpgradeFailed", .message = "Helm upgrade failed: boom",
                          .history = hist, .nhistory = 2};
  st = status_of(&o);
  CHECK_EQ_STR(sfield(st, "phase"), "Failed");
  CHECK_EQ_STR(sfield(st, "reason"), "Helm upgrade failed: boom");
  CHECK_EQ_STR(sfield(st, "version"), "1.0.0");
  CHECK_EQ_STR(sfield(st, "notes"), "old notes");
  CHECK(cJSON_GetObjectItemCaseSensitive(st, "lastSpecHash") == NULL);
  CHECK(cJSON_GetObjectItemCaseSensitive(st, "syncedClusters") == NULL);
  CHECK_EQ_STR(cfield(st, "Validated", "status"), "True");
  CHECK_EQ_STR(cfield(st, "Ready", "status"), "False");
  cJSON_Delete(st);

  /* Waiting on a lock or a dependency: Pending. Progress: Pending, only the conditions besides. */
  o = (release_outcome_t){.req = &s, .ready = "Unknown", .reason = "ReleaseLocked", .message = "locked"};
  st = status_of(&o);
  CHECK_EQ_STR(sfield(st, "phase"), "Pending");
  CHECK_EQ_STR(cfield(st, "Initialized", "status"), "False");
  CHECK_EQ_STR(cfield(st, "Initialized", "reason"), "NotInstalled");
  cJSON_Delete(st);
  o = (release_outcome_t){.req = &s, .ready = "False", .reason = "DependencyNotReady", .message = "apps/db is not Ready"};
  st = status_of(&o);
  CHECK_EQ_STR(sfield(st, "phase"), "Pending");
  CHECK_EQ_STR(sfield(st, "reason"), "");
  cJSON_Delete(st);
  o = (release_outcome_t){.req = &s, .progressing = "installing"};
  st = status_of(&o);
  CHECK_EQ_STR(sfield(st, "phase"), "Pending");
  CHECK_EQ_STR(cfield(st, "Reconciling", "status"), "True");
  CHECK(cJSON_GetArraySize(st) == 2); /* phase and conditions */
  cJSON_Delete(st);

  /* Synced by a rollback: lastSpecHash removed (leaving the rollback resolves the spec again). */
  s.rollback_to = 1;
  hist[0].status = "deployed";
  o = (release_outcome_t){.req = &s, .ready = "True", .reason = "RollbackSucceeded", .message = "rolled back", .history = hist,
                          .nhistory = 2};
  st = status_of(&o);
  CHECK_EQ_STR(sfield(st, "phase"), "Synced");
  CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(st, "lastSpecHash")));
  cJSON_Delete(st);
  s.rollback_to = 0;

  /* Deleting: Uninstalling, no cluster synced any more. */
  s.deleting = 1;
  o = (release_outcome_t){.req = &s, .ready = "Unknown", .reason = "Uninstalling", .message = "uninstalling"};
  st = status_of(&o);
  CHECK_EQ_STR(sfield(st, "phase"), "Uninstalling");
  CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(st, "syncedClusters")), 0);
  cJSON_Delete(st);
  req_free(&s);

  /* Refused by the door: Failed, Validated=False with the reason and message; an Initialized=True of
   * an installed release stays. */
  CHECK_EQ_INT(parse("{" META ",\"spec\":{\"chart\":\"nginx\"},\"status\":{\"conditions\":[{\"type\":\"Initialized\",\"status\":\"True\","
                     "\"reason\":\"ReleaseCreated\",\"message\":\"m\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]}}",
                     &s, &err), -22);
  o = (release_outcome_t){.req = &s, .ready = "False", .reason = "InvalidSpec", .message = err.data, .stalled = "True"};
  st = status_of(&o);
  CHECK_EQ_STR(sfield(st, "phase"), "Failed");
  CHECK_EQ_STR(sfield(st, "reason"), err.data);
  CHECK_EQ_STR(cfield(st, "Validated", "status"), "False");
  CHECK_EQ_STR(cfield(st, "Validated", "reason"), "InvalidSpec");
  CHECK_EQ_STR(cfield(st, "Validated", "message"), err.data);
  CHECK_EQ_STR(cfield(st, "Initialized", "status"), "True");
  CHECK(cJSON_GetObjectItemCaseSensitive(st, "version") == NULL);
  cJSON_Delete(st);
  req_free(&s);
  /* Not supported: Validated=False, NotSupported (the engine's Ready reason is its own). */
  CHECK_EQ_INT(parse_spec("{\"chart\":\"r/c\",\"targetClusters\":{\"clusterLabels\":{\"labelSelector\":{\"a\":\"b\"}}}}", &s, &err), -95);
  o = (release_outcome_t){.req = &s, .ready = "False", .reason = "ArtifactFailed", .message = err.data, .stalled = "True"};
  st = status_of(&o);
  CHECK_EQ_STR(cfield(st, "Validated", "status"), "False");
  CHECK_EQ_STR(cfield(st, "Validated", "reason"), "NotSupported");
  CHECK_EQ_STR(sfield(st, "reason"), err.data);
  cJSON_Delete(st);
  req_free(&s);
  /* An object the informer could not read (no door data). */
  release_req_t bare = {0};
  bare.ns = strdup("apps");
  bare.name = strdup("web");
  o = (release_outcome_t){.req = &bare, .ready = "False", .reason = "InvalidSpec", .message = "the object cannot be read: x"};
  st = status_of(&o);
  CHECK_EQ_STR(sfield(st, "phase"), "Failed");
  CHECK_EQ_STR(cfield(st, "Validated", "status"), "False");
  cJSON_Delete(st);
  req_free(&bare);
  buf_free(&err);
}

int main(void) {
  test_clusters();
  test_source_secret();
  test_api();
  test_defaults();
  test_sources();
  test_values_from_and_dependencies();
  test_pinned_version();
  test_rollback_annotation();
  test_errors();
  test_status();
  return t_done();
}
