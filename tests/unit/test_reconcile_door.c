/* The HelmRelease front door: spec parsing into a release request, defaults and errors; status
 * conditions and messages. */
#include "reconcile/conditions.h"
#include "reconcile/doors/doors.h"
#include "t.h"
#include "t_door.h"
#include <stdlib.h>
#include <string.h>

#define HR_FINALIZER "rudder.dev/finalizer"

static int parse(const char *json, release_req_t *s, buf_t *err) { return t_door_parse(&door_helmrelease, json, s, err); }

#define META "\"metadata\":{\"name\":\"web\",\"namespace\":\"apps\",\"generation\":3,\"resourceVersion\":\"42\"}"

static void test_durations(void) {
  CHECK_EQ_INT(req_duration_ms("5m"), 300000);
  CHECK_EQ_INT(req_duration_ms("1h30m"), 5400000);
  CHECK_EQ_INT(req_duration_ms("90s"), 90000);
  CHECK_EQ_INT(req_duration_ms("500ms"), 500);
  CHECK_EQ_INT(req_duration_ms("1.5s"), 1500);
  CHECK_EQ_INT(req_duration_ms(""), -1);
  CHECK_EQ_INT(req_duration_ms("5"), -1);
  CHECK_EQ_INT(req_duration_ms("m5"), -1);
  CHECK_EQ_INT(req_duration_ms("5d"), -1);
  CHECK_EQ_INT(req_duration_ms("-5m"), -1);
}

static void test_defaults(void) {
  release_req_t s;
  buf_t err = BUF_INIT;
  int rc = parse("{" META ",\"spec\":{\"chart\":{\"inline\":{\"templates\":{\"a.yaml\":\"x: 1\\n\"}}}}}", &s, &err);
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_STR(s.release_name, "web");
  CHECK_EQ_STR(s.target_ns, "apps");
  CHECK_EQ_STR(s.storage_ns, "apps");
  CHECK_EQ_STR(s.chart->meta.name, "web");
  CHECK_EQ_STR(s.chart->meta.version, "0.1.0");
  CHECK(cJSON_IsObject(s.chart->values) && !s.chart->values->child);
  CHECK_EQ_INT(s.install.crds, ACT_CRDS_CREATE);
  CHECK_EQ_INT(s.upgrade.crds, ACT_CRDS_CREATE_REPLACE);
  CHECK_EQ_INT(s.install.retries, 0);
  CHECK_EQ_INT(strlen(s.digest), 64);
  CHECK(cJSON_IsObject(s.values) && !s.values->child);
  CHECK_EQ_INT(s.max_history, 10);
  CHECK_EQ_INT(s.interval_ms, REQ_DEFAULT_INTERVAL_MS);
  CHECK_EQ_INT(s.generation, 3);
  CHECK_EQ_STR(s.resource_version, "42");
  CHECK(!s.has_finalizer && !s.deleting && !s.suspend);
  req_free(&s);

  rc = parse("{\"metadata\":{\"name\":\"web\",\"namespace\":\"apps\",\"finalizers\":[\"other\",\"" HR_FINALIZER "\"],"
             "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},\"spec\":{\"releaseName\":\"front\",\"targetNamespace\":\"prod\","
             "\"storageNamespace\":\"records\",\"maxHistory\":0,\"interval\":\"1m\",\"suspend\":true,\"values\":{\"a\":1},"
             "\"chart\":{\"inline\":{\"chartName\":\"site\",\"chartVersion\":\"2.0.0\",\"appVersion\":\"9\","
             "\"values\":{\"b\":2},\"templates\":{\"a.yaml\":\"x\"}}}},\"status\":{\"lastAppliedRevision\":4}}",
             &s, &err);
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_STR(s.release_name, "front");
  CHECK_EQ_STR(s.target_ns, "prod");
  CHECK_EQ_STR(s.storage_ns, "records");
  CHECK_EQ_STR(s.chart->meta.name, "site");
  CHECK_EQ_STR(s.chart->meta.version, "2.0.0");
  CHECK_EQ_STR(s.chart->meta.app_version, "9");
  CHECK_EQ_INT(s.max_history, 0);
  CHECK_EQ_INT(s.interval_ms, 60000);
  CHECK(s.suspend && s.deleting && s.has_finalizer);
  CHECK_EQ_INT(s.applied_revision, 4);
  CHECK(cJSON_IsObject(s.chart->values) && cJSON_GetObjectItem(s.chart->values, "b"));
  CHECK(!s.prev_release_name);
  req_free(&s);

  /* Without releaseName, a target namespace names the release "<targetNamespace>-<name>" (as Flux);
   * longer than 53 characters: its first 40, '-', 12 hex digits of its SHA-256 (expected value from
   * Python's hashlib). The status's releaseName and storageNamespace, when different, are the
   * release managed before. */
  rc = parse("{" META ",\"spec\":{\"targetNamespace\":\"prod\",\"chart\":{\"inline\":{\"templates\":{\"a\":\"x\"}}}},"
             "\"status\":{\"releaseName\":\"web\",\"storageNamespace\":\"apps\"}}", &s, &err);
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_STR(s.release_name, "prod-web");
  CHECK_EQ_STR(s.prev_release_name, "web");
  CHECK_EQ_STR(s.prev_storage_ns, "apps");
  req_free(&s);
  rc = parse("{\"metadata\":{\"name\":\"which-is-longer-than-53-characters\",\"namespace\":\"apps\"},\"spec\":{"
             "\"targetNamespace\":\"release-name-with-very-long-name\",\"chart\":{\"inline\":{\"templates\":{\"a\":\"x\"}}}},"
             "\"status\":{\"releaseName\":\"release-name-with-very-long-name-which-i-788ca0d0d7b0\",\"storageNamespace\":\"apps\"}}",
             &s, &err);
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_STR(s.release_name, "release-name-with-very-long-name-which-i-788ca0d0d7b0");
  CHECK(!s.prev_release_name);
  req_free(&s);
  buf_free(&err);
}

static void test_errors(void) {
  static const struct { const char *spec; int rc; const char *msg; } cases[] = {
    {"{\"chart\":{\"configMapRef\":{}}}", -22, "spec.chart.configMapRef.name: must name a ConfigMap in the release's namespace"},
    {"{\"chart\":{\"url\":\"ftp://charts.example/x.tgz\"}}", -22,
     "spec.chart.url: \"ftp://charts.example/x.tgz\" must start with https://, http:// or oci://"},
    {"{\"chart\":{\"repository\":{\"name\":\"r\"}}}", -22,
     "spec.chart.name: the chart's name in the repository is required with spec.chart.repository"},
    {"{\"chart\":{\"repository\":{},\"name\":\"x\"}}", -22, "spec.chart.repository.name: must name a HelmRepository"},
    {"{\"chart\":{\"repository\":{\"name\":\"r\",\"namespace\":\"flux-system\"},\"name\":\"x\"}}", -22,
     "spec.chart.repository.namespace: flux-system is another namespace, and this controller refuses references across namespaces (--allow-cross-namespace-refs)"},
    {"{\"chart\":{\"repository\":{\"name\":\"r\"},\"url\":\"https://x/\",\"name\":\"x\"}}", -22,
     "spec.chart: set exactly one of inline, repository, url, configMapRef or secretRef"},
    {"{\"chart\":{}}", -22, "spec.chart: no chart source set (inline, repository, url, configMapRef or secretRef)"},
    {"{}", -22, "spec.chart is missing"},
    {"{\"chart\":{\"inline\":{\"templates\":{}}}}", -22, "spec.chart.inline.templates: must map at least one file name to its text"},
    {"{\"chart\":{\"inline\":{\"templates\":{\"a.yaml\":3}}}}", -22, "spec.chart.inline.templates[a.yaml]: must be a string"},
    {"{\"chart\":{\"inline\":{\"templates\":{\"../x.yaml\":\"a\"}}}}", -22,
     "spec.chart.inline.templates: a file name must be a plain printable name without '/' (got \"../x.yaml\")"},
    /* A newline in a name would write an extra document into the stored manifest. */
    {"{\"chart\":{\"inline\":{\"templates\":{\"a.yaml\\n---\\nkind: Secret\":\"a\"}}}}", -22,
     "spec.chart.inline.templates: a file name must be a plain printable name without '/' (got \"a.yaml\\n---\\nkind: Secret\")"},
    {"{\"interval\":\"1ms\",\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22,
     "spec.interval: 1ms is shorter than the minimum of 10s"},
    {"{\"serviceAccountName\":\"Tenant!\",\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22,
     "spec.serviceAccountName: must be a service account name (lowercase letters, digits, '-' and '.')"},
    {"{\"createNamespace\":1,\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22,
     "spec.createNamespace: must be true or false"},
    {"{\"install\":{\"crds\":\"Always\"},\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22,
     "spec.install.crds: \"Always\" is not Create, CreateReplace or Skip"},
    {"{\"install\":{\"remediation\":{\"strategy\":\"rollback\"}},\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}",
     -22, "spec.install.remediation.strategy: a failed install can only be remediated by uninstall"},
    {"{\"rollback\":{\"toRevision\":0},\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22,
     "spec.rollback.toRevision: must be a revision number (1 or more)"},
    {"{\"uninstall\":{\"timeout\":\"10ms\"},\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22,
     "spec.uninstall.timeout: \"10ms\" is not a duration of at least 1s like 5m"},
    {"{\"uninstall\":{\"disableWait\":\"no\"},\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22,
     "spec.uninstall.disableWait: must be true or false"},
    {"{\"upgrade\":{\"cleanupOnFail\":1},\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22,
     "spec.upgrade.cleanupOnFail: must be true or false"},
    {"{\"upgrade\":{\"force\":\"yes\"},\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22,
     "spec.upgrade.force: must be true or false"},
    {"{\"interval\":\"soon\",\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22,
     "spec.interval: \"soon\" is not a positive duration like 5m or 1h"},
    {"{\"maxHistory\":-1,\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22, "spec.maxHistory: must not be negative"},
    {"{\"values\":[1],\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22, "spec.values: must be an object"},
    {"{\"valuesFrom\":{},\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22, "spec.valuesFrom: must be a list of {kind, name, valuesKey, targetPath, optional}"},
    {"{\"valuesFrom\":[3],\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22, "spec.valuesFrom[0]: must be an object {kind, name, valuesKey, targetPath, optional}"},
    {"{\"valuesFrom\":[{\"kind\":\"Pod\",\"name\":\"a\"}],\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22, "spec.valuesFrom[0].kind: must be ConfigMap or Secret"},
    {"{\"valuesFrom\":[{\"kind\":\"Secret\",\"name\":\"a\"},{\"kind\":\"ConfigMap\",\"name\":\"Bad_Name\"}],\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22,
     "spec.valuesFrom[1].name: \"Bad_Name\" must be a name of at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"},
    {"{\"valuesFrom\":[{\"kind\":\"Secret\",\"name\":\"a\",\"valuesKey\":\"a/b\"}],\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22,
     "spec.valuesFrom[0].valuesKey: \"a/b\" is not a valid data key (letters, digits, '-', '_' and '.')"},
    {"{\"valuesFrom\":[{\"kind\":\"Secret\",\"name\":\"a\",\"optional\":\"yes\"}],\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22,
     "spec.valuesFrom[0].optional: must be true or false"},
    {"{\"releaseName\":\"Web_1\",\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22,
     "spec.releaseName: \"Web_1\" is not a valid release name: at most 53 characters, lowercase letters, digits, '-' and '.', each part between dots starting and ending with a letter or digit"},
    {"{\"releaseName\":\"a.-b\",\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22,
     "spec.releaseName: \"a.-b\" is not a valid release name: at most 53 characters, lowercase letters, digits, '-' and '.', each part between dots starting and ending with a letter or digit"},
    {"{\"targetNamespace\":\"a.b\",\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22,
     "spec.targetNamespace: \"a.b\" is not a namespace name: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit"},
    {"{\"storageNamespace\":\"x-\",\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22,
     "spec.storageNamespace: \"x-\" is not a namespace name: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit"},
    {"{\"kubeConfig\":{\"secretRef\":{}},\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22,
     "spec.kubeConfig.secretRef.name: must be a name of at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"},
    {"{\"kubeConfig\":{\"secretRef\":{\"name\":\"kc\",\"key\":\"a b\"}},\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22,
     "spec.kubeConfig.secretRef.key: \"a b\" is not a valid data key (letters, digits, '-', '_' and '.')"},
    {"{\"dependsOn\":[{}],\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22,
     "spec.dependsOn[0].name: must be a name of at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"},
    {"{\"dependsOn\":[{\"name\":\"db\",\"namespace\":\"other\"}],\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22,
     "spec.dependsOn[0].namespace: other is another namespace, and this controller refuses references across namespaces (--allow-cross-namespace-refs)"},
    {"{\"dependsOn\":[{\"name\":\"web\"}],\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22, "spec.dependsOn[0]: a HelmRelease cannot depend on itself"},
    {"{\"releaseName\":\"a123456789b123456789c123456789d123456789e123456789f1234\",\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}",
     -22, "spec.releaseName: release name \"a123456789b123456789c123456789d123456789e123456789f1234\" is longer than 53 characters"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    release_req_t s;
    buf_t err = BUF_INIT;
    buf_t json = BUF_INIT;
    buf_printf(&json, "{" META ",\"spec\":%s}", cases[i].spec);
    int rc = parse(json.data, &s, &err);
    CHECK_EQ_INT(rc, cases[i].rc);
    CHECK_EQ_STR(err.data, cases[i].msg);
    /* Identity is filled even for a bad spec, so status can be written. */
    CHECK_EQ_STR(s.name, "web");
    CHECK_EQ_STR(s.ns, "apps");
    req_free(&s);
    buf_free(&err);
    buf_free(&json);
  }
}

static void test_values_from_depends_on(void) {
  release_req_t s;
  buf_t err = BUF_INIT;
  int rc = parse("{" META ",\"spec\":{\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}},"
                 "\"valuesFrom\":[{\"kind\":\"ConfigMap\",\"name\":\"base\"},"
                 "{\"kind\":\"Secret\",\"name\":\"creds\",\"valuesKey\":\"pw\",\"targetPath\":\"db.password\",\"optional\":true}],"
                 "\"dependsOn\":[{\"name\":\"db\"},{\"name\":\"cache\",\"namespace\":\"apps\"}]}}",
                 &s, &err);
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_INT((long long)s.nvalues_from, 2);
  if (s.nvalues_from == 2) {
    CHECK(!s.values_from[0].secret && !s.values_from[0].optional && !s.values_from[0].target_path);
    CHECK_EQ_STR(s.values_from[0].key, "values.yaml");
    CHECK_EQ_STR(s.values_from[0].ns, "apps");
    CHECK_EQ_STR(s.values_from[0].field, "spec.valuesFrom[0]");
    CHECK(s.values_from[1].secret && s.values_from[1].optional);
    CHECK_EQ_STR(s.values_from[1].key, "pw");
    CHECK_EQ_STR(s.values_from[1].target_path, "db.password");
  }
  CHECK_EQ_INT((long long)s.nclusters, 0);
  CHECK_EQ_INT((long long)s.ndepends_on, 2);
  if (s.ndepends_on == 2) {
    CHECK_EQ_STR(s.depends_on[0], "apps/db");
    CHECK_EQ_STR(s.depends_on[1], "apps/cache");
  }
  req_free(&s);
  buf_free(&err);
}

static void test_conditions(void) {
  cJSON *prev = cJSON_Parse("[{\"type\":\"Ready\",\"status\":\"True\",\"lastTransitionTime\":\"2020-01-01T00:00:00Z\","
                            "\"reason\":\"InstallSucceeded\",\"message\":\"m\"}]");
  /* Same status: the transition time is kept. */
  cJSON *c = cond_set(cJSON_Duplicate(prev, 1), prev, "Ready", "True", "UpgradeSucceeded", "x", 7, "2026-01-01T00:00:00Z");
  const cJSON *r = cond_find(c, "Ready");
  CHECK_EQ_STR(cJSON_GetObjectItem(r, "lastTransitionTime")->valuestring, "2020-01-01T00:00:00Z");
  CHECK_EQ_STR(cJSON_GetObjectItem(r, "reason")->valuestring, "UpgradeSucceeded");
  CHECK_EQ_INT(cJSON_GetObjectItem(r, "observedGeneration")->valuedouble, 7);
  CHECK_EQ_INT(cJSON_GetArraySize(c), 1);
  /* A flip takes the new time; a new type is appended. */
  c = cond_set(c, prev, "Ready", "False", "UpgradeFailed", "y", 8, "2026-02-02T00:00:00Z");
  c = cond_set(c, prev, "Released", "False", "UpgradeFailed", "y", 8, "2026-02-02T00:00:00Z");
  r = cond_find(c, "Ready");
  CHECK_EQ_STR(cJSON_GetObjectItem(r, "lastTransitionTime")->valuestring, "2026-02-02T00:00:00Z");
  CHECK_EQ_INT(cJSON_GetArraySize(c), 2);
  CHECK(cond_find(c, "Released") != NULL);
  CHECK(cond_find(c, "Stalled") == NULL);
  cJSON_Delete(c);
  cJSON_Delete(prev);
}

static void test_options(void) {
  release_req_t s;
  buf_t err = BUF_INIT;
  int rc = parse("{" META ",\"spec\":{\"install\":{\"crds\":\"Skip\",\"disableHooks\":true,\"takeOwnership\":true,"
                 "\"remediation\":{\"retries\":3}},\"upgrade\":{"
                 "\"force\":true,\"cleanupOnFail\":true,\"remediation\":{\"retries\":-1,\"strategy\":\"uninstall\",\"remediateLastFailure\":true}},"
                 "\"rollback\":{\"toRevision\":2},\"uninstall\":{\"keepHistory\":true,\"deletionPropagation\":\"foreground\",\"disableWait\":true},"
                 "\"timeout\":\"90s\",\"chart\":{\"inline\":{\"templates\":{\"b.yaml\":\"b\",\"a.yaml\":\"a\"}}}}}",
                 &s, &err);
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_INT(s.install.crds, ACT_CRDS_SKIP);
  CHECK(s.install.disable_hooks && s.install.take_ownership);
  CHECK_EQ_INT(s.install.retries, 3);
  CHECK_EQ_INT(s.install.strategy, REQ_REMEDIATE_UNINSTALL);
  CHECK(s.force && s.cleanup_on_fail && s.upgrade.remediate_last);
  CHECK_EQ_INT(s.upgrade.retries, -1);
  CHECK_EQ_INT(s.upgrade.strategy, REQ_REMEDIATE_UNINSTALL);
  CHECK_EQ_INT(s.rollback_to, 2);
  CHECK(s.keep_history);
  CHECK_EQ_STR(s.deletion_propagation, "Foreground");
  CHECK_EQ_INT(s.timeout_ms, 90000);
  CHECK_EQ_INT(s.uninstall_timeout_ms, 90000); /* spec.timeout unless set */
  CHECK(s.uninstall_disable_wait);
  /* templates are loaded in name order, as Helm reads a directory */
  CHECK_EQ_INT(s.chart->ntemplates, 2);
  CHECK_EQ_STR(s.chart->templates[0].name, "templates/a.yaml");
  char d1[65];
  memcpy(d1, s.digest, 65);
  req_free(&s);
  /* the digest follows the inputs, not the interval */
  rc = parse("{" META ",\"spec\":{\"interval\":\"1h\",\"values\":{\"x\":1},\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}}",
             &s, &err);
  memcpy(d1, s.digest, 65);
  req_free(&s);
  rc = parse("{" META ",\"spec\":{\"interval\":\"2h\",\"values\":{\"x\":1},\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}}",
             &s, &err);
  CHECK_EQ_STR(s.digest, d1);
  req_free(&s);
  rc = parse("{" META ",\"spec\":{\"interval\":\"2h\",\"values\":{\"x\":2},\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}}",
             &s, &err);
  CHECK(strcmp(s.digest, d1) != 0);
  req_free(&s);
  buf_free(&err);
}

static void test_messages(void) {
  char buf[64];
  CHECK_EQ_STR(cond_message("short", buf, sizeof buf), "short");
  char big[200];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = 0;
  memcpy(big, "file.yaml:3: ", 13);
  const char *m = cond_message(big, buf, sizeof buf);
  CHECK(strlen(m) < sizeof buf);
  CHECK(!strncmp(m, "file.yaml:3: ", 13));
  CHECK(strstr(m, "bytes cut)") != NULL);
}

/* spec.chart.repository / url: where the engine fetches the chart from. */
static void test_chart_sources(void) {
  static const struct { const char *chart; int kind; const char *repo, *name, *version, *url; } cases[] = {
    {"{\"repository\":{\"name\":\"r\"},\"name\":\"web\",\"version\":\"~1.2\"}", REQ_SRC_REPOSITORY, "apps/r", "web",
     "~1.2", NULL},
    {"{\"repository\":{\"name\":\"r\",\"namespace\":\"shared\"},\"name\":\"web\"}", REQ_SRC_REPOSITORY, "shared/r",
     "web", "", NULL},
    {"{\"url\":\"https://charts.example/c\",\"name\":\"web\"}", REQ_SRC_REPOSITORY, "url:https://charts.example/c",
     "web", "", "https://charts.example/c"},
    {"{\"url\":\"https://charts.example/web-1.0.0.tgz\"}", REQ_SRC_URL, NULL, "", "",
     "https://charts.example/web-1.0.0.tgz"},
    {"{\"url\":\"oci://registry.example/charts/web\",\"version\":\"1.x\"}", REQ_SRC_OCI, NULL, "", "1.x",
     "oci://registry.example/charts/web"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    release_req_t s;
    buf_t err = BUF_INIT, json = BUF_INIT;
    buf_printf(&json, "{" META ",\"spec\":{\"chart\":%s}}", cases[i].chart);
    CHECK_EQ_INT(parse(json.data, &s, &err), 0);
    CHECK_EQ_INT((int)s.src.kind, cases[i].kind);
    CHECK(s.chart == NULL);
    if (cases[i].repo) CHECK_EQ_STR(s.src.repo_key, cases[i].repo);
    else CHECK(s.src.repo_key == NULL);
    CHECK_EQ_STR(s.src.name, cases[i].name);
    CHECK_EQ_STR(s.src.version, cases[i].version);
    if (cases[i].url) CHECK_EQ_STR(s.src.url, cases[i].url);
    req_free(&s);
    buf_free(&err);
    buf_free(&json);
  }
}

int main(void) {
  test_durations();
  t_door_allow_xns = true; /* one case names a repository of another namespace */
  test_chart_sources();
  t_door_allow_xns = false;
  test_defaults();
  test_errors();
  test_values_from_depends_on();
  test_conditions();
  test_options();
  test_messages();
  return t_done();
}
