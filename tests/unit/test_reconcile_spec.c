/* HelmRelease spec parsing, defaults and errors; status conditions. */
#include "reconcile/hr_spec.h"
#include "reconcile/hr_status.h"
#include "t.h"
#include <stdlib.h>

static int parse(const char *json, hr_spec_t *s, buf_t *err) {
  cJSON *o = cJSON_Parse(json);
  if (!o) { fprintf(stderr, "bad test JSON: %s\n", json); exit(2); }
  buf_reset(err);
  int rc = hr_spec_parse(o, s, err);
  cJSON_Delete(o);
  return rc;
}

#define META "\"metadata\":{\"name\":\"web\",\"namespace\":\"apps\",\"generation\":3,\"resourceVersion\":\"42\"}"

static void test_durations(void) {
  CHECK_EQ_INT(hr_duration_ms("5m"), 300000);
  CHECK_EQ_INT(hr_duration_ms("1h30m"), 5400000);
  CHECK_EQ_INT(hr_duration_ms("90s"), 90000);
  CHECK_EQ_INT(hr_duration_ms("500ms"), 500);
  CHECK_EQ_INT(hr_duration_ms("1.5s"), 1500);
  CHECK_EQ_INT(hr_duration_ms(""), -1);
  CHECK_EQ_INT(hr_duration_ms("5"), -1);
  CHECK_EQ_INT(hr_duration_ms("m5"), -1);
  CHECK_EQ_INT(hr_duration_ms("5d"), -1);
  CHECK_EQ_INT(hr_duration_ms("-5m"), -1);
}

static void test_defaults(void) {
  hr_spec_t s;
  buf_t err = BUF_INIT;
  int rc = parse("{" META ",\"spec\":{\"chart\":{\"inline\":{\"templates\":{\"a.yaml\":\"x: 1\\n\"}}}}}", &s, &err);
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_STR(s.release_name, "web");
  CHECK_EQ_STR(s.target_ns, "apps");
  CHECK_EQ_STR(s.storage_ns, "apps");
  CHECK_EQ_STR(s.chart_name, "web");
  CHECK_EQ_STR(s.chart_version, "0.1.0");
  CHECK(s.chart_values == NULL);
  CHECK(cJSON_IsObject(s.values) && !s.values->child);
  CHECK_EQ_INT(s.max_history, 10);
  CHECK_EQ_INT(s.interval_ms, HR_DEFAULT_INTERVAL_MS);
  CHECK_EQ_INT(s.generation, 3);
  CHECK_EQ_STR(s.resource_version, "42");
  CHECK(!s.has_finalizer && !s.deleting && !s.suspend);
  hr_spec_free(&s);

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
  CHECK_EQ_STR(s.chart_name, "site");
  CHECK_EQ_STR(s.chart_version, "2.0.0");
  CHECK_EQ_STR(s.app_version, "9");
  CHECK_EQ_INT(s.max_history, 0);
  CHECK_EQ_INT(s.interval_ms, 60000);
  CHECK(s.suspend && s.deleting && s.has_finalizer);
  CHECK_EQ_INT(s.last_applied_revision, 4);
  CHECK(cJSON_IsObject(s.chart_values));
  hr_spec_free(&s);
  buf_free(&err);
}

static void test_errors(void) {
  static const struct { const char *spec; int rc; const char *msg; } cases[] = {
    {"{\"chart\":{\"url\":\"https://charts.example/\",\"name\":\"x\"}}", -95,
     "spec.chart.url: this rudder version installs only inline charts (spec.chart.inline)"},
    {"{\"chart\":{}}", -22, "spec.chart: no chart source set (inline, repository, url, configMapRef or secretRef)"},
    {"{}", -22, "spec.chart is missing"},
    {"{\"chart\":{\"inline\":{\"templates\":{}}}}", -22, "spec.chart.inline.templates: must map at least one file name to its text"},
    {"{\"chart\":{\"inline\":{\"templates\":{\"a.yaml\":3}}}}", -22, "spec.chart.inline.templates[a.yaml]: must be a string"},
    {"{\"chart\":{\"inline\":{\"templates\":{\"../x.yaml\":\"a\"}}}}", -22,
     "spec.chart.inline.templates: \"../x.yaml\" is not a plain file name"},
    {"{\"interval\":\"soon\",\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22,
     "spec.interval: \"soon\" is not a positive duration like 5m or 1h"},
    {"{\"maxHistory\":-1,\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22, "spec.maxHistory: must not be negative"},
    {"{\"values\":[1],\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}", -22, "spec.values: must be an object"},
    {"{\"releaseName\":\"a123456789b123456789c123456789d123456789e123456789f1234\",\"chart\":{\"inline\":{\"templates\":{\"a\":\"b\"}}}}",
     -22, "release name \"a123456789b123456789c123456789d123456789e123456789f1234\" is longer than 53 characters"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    hr_spec_t s;
    buf_t err = BUF_INIT;
    buf_t json = BUF_INIT;
    buf_printf(&json, "{" META ",\"spec\":%s}", cases[i].spec);
    int rc = parse(json.data, &s, &err);
    CHECK_EQ_INT(rc, cases[i].rc);
    CHECK_EQ_STR(err.data, cases[i].msg);
    /* Identity is filled even for a bad spec, so status can be written. */
    CHECK_EQ_STR(s.name, "web");
    CHECK_EQ_STR(s.ns, "apps");
    hr_spec_free(&s);
    buf_free(&err);
    buf_free(&json);
  }
}

static void test_conditions(void) {
  cJSON *prev = cJSON_Parse("[{\"type\":\"Ready\",\"status\":\"True\",\"lastTransitionTime\":\"2020-01-01T00:00:00Z\","
                            "\"reason\":\"InstallSucceeded\",\"message\":\"m\"}]");
  /* Same status: the transition time is kept. */
  cJSON *c = hr_condition_set(cJSON_Duplicate(prev, 1), prev, "Ready", "True", "UpgradeSucceeded", "x", 7, "2026-01-01T00:00:00Z");
  const cJSON *r = hr_condition_find(c, "Ready");
  CHECK_EQ_STR(cJSON_GetObjectItem(r, "lastTransitionTime")->valuestring, "2020-01-01T00:00:00Z");
  CHECK_EQ_STR(cJSON_GetObjectItem(r, "reason")->valuestring, "UpgradeSucceeded");
  CHECK_EQ_INT(cJSON_GetObjectItem(r, "observedGeneration")->valuedouble, 7);
  CHECK_EQ_INT(cJSON_GetArraySize(c), 1);
  /* A flip takes the new time; a new type is appended. */
  c = hr_condition_set(c, prev, "Ready", "False", "UpgradeFailed", "y", 8, "2026-02-02T00:00:00Z");
  c = hr_condition_set(c, prev, "Released", "False", "UpgradeFailed", "y", 8, "2026-02-02T00:00:00Z");
  r = hr_condition_find(c, "Ready");
  CHECK_EQ_STR(cJSON_GetObjectItem(r, "lastTransitionTime")->valuestring, "2026-02-02T00:00:00Z");
  CHECK_EQ_INT(cJSON_GetArraySize(c), 2);
  CHECK(hr_condition_find(c, "Released") != NULL);
  CHECK(hr_condition_find(c, "Stalled") == NULL);
  cJSON_Delete(c);
  cJSON_Delete(prev);
}

int main(void) {
  test_durations();
  test_defaults();
  test_errors();
  test_conditions();
  return t_done();
}
