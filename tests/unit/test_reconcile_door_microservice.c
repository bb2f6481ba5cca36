/* The Microservice front door: spec.resources and spec.values into a release request (the chart
 * built from the object, names, the finalizer), the errors naming the field, and the status it
 * writes for every outcome (phase, revision, conditions, what is read back after a restart). */
#include "reconcile/conditions.h"
#include "reconcile/doors/doors.h"
#include "t.h"
#include "t_door.h"
#include <stdlib.h>
#include <string.h>

#define MS_FINALIZER "micro.hello.com/finalizer"
#define META "\"metadata\":{\"name\":\"web\",\"namespace\":\"test\",\"uid\":\"u1\",\"generation\":2,\"resourceVersion\":\"7\"}"

static int parse(const char *json, release_req_t *s, buf_t *err) { return t_door_parse(&door_microservice, json, s, err); }

static void test_row(void) {
  CHECK_EQ_STR(door_microservice.kind, "Microservice");
  CHECK_EQ_STR(door_microservice.group, "micro.hello.com");
  CHECK_EQ_STR(door_microservice.version, "v1alpha1");
  CHECK_EQ_STR(door_microservice.resource, "microservices");
  CHECK_EQ_STR(door_microservice.finalizer, MS_FINALIZER);
  int found = 0;
  for (size_t i = 0; doors[i]; i++) found += doors[i] == &door_microservice;
  CHECK_EQ_INT(found, 1);
}

static void test_mapping(void) {
  release_req_t s;
  buf_t err = BUF_INIT;
  const char *res = "apiVersion: v1\\nkind: Service\\nmetadata:\\n  name: {{ .Release.Name }}\\n  namespace: test\\n";
  buf_t json = BUF_INIT;
  buf_printf(&json, "{" META ",\"spec\":{\"resources\":\"%s\"}}", res);
  CHECK_EQ_INT(parse(json.data, &s, &err), 0);
  CHECK_EQ_STR(s.release_name, "web");
  CHECK_EQ_STR(s.target_ns, "test");
  CHECK_EQ_STR(s.storage_ns, "test");
  CHECK_EQ_STR(s.uid, "u1");
  CHECK_EQ_INT(s.generation, 2);
  CHECK_EQ_INT((int)s.src.kind, REQ_SRC_INLINE);
  CHECK(s.chart != NULL);
  if (s.chart) {
    CHECK_EQ_STR(s.chart->meta.name, "web");
    CHECK_EQ_STR(s.chart->meta.version, "0.0.0");
    CHECK_EQ_INT(s.chart->ntemplates, 1);
    CHECK_EQ_STR(s.chart->templates[0].name, "templates/web.yaml");
    CHECK_EQ_INT(s.chart->templates[0].len, strlen("apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\n  namespace: test\n"));
    CHECK(!memcmp(s.chart->templates[0].data, "apiVersion: v1\nkind: Service\n", 29));
    /* No values.yaml: the chart's values are empty, as a chart directory without one. */
    CHECK(!s.chart->has_values_file);
    CHECK(cJSON_IsObject(s.chart->values) && !s.chart->values->child);
  }
  CHECK(cJSON_IsObject(s.values) && !s.values->child);
  CHECK_EQ_INT(strlen(s.digest), 64);
  CHECK_EQ_INT(s.max_history, REQ_DEFAULT_MAX_HISTORY);
  CHECK_EQ_INT(s.timeout_ms, REQ_DEFAULT_TIMEOUT_MS);
  CHECK_EQ_INT(s.interval_ms, REQ_DEFAULT_INTERVAL_MS);
  CHECK(!s.has_finalizer && !s.deleting && !s.suspend && !s.service_account);
  char d1[65];
  memcpy(d1, s.digest, 65);
  req_free(&s);

  /* spec.values are the user's values; they change the digest, as a change of resources does. */
  buf_reset(&json);
  buf_printf(&json, "{" META ",\"spec\":{\"resources\":\"%s\",\"values\":{\"replicas\":3,\"image\":{\"tag\":\"1.25\"}}}}", res);
  CHECK_EQ_INT(parse(json.data, &s, &err), 0);
  const cJSON *rep = cJSON_GetObjectItem(s.values, "replicas");
  CHECK(cJSON_IsNumber(rep) && rep->valuedouble == 3);
  CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(s.values, "image"), "tag") != NULL);
  CHECK(strcmp(s.digest, d1) != 0);
  req_free(&s);
  buf_reset(&json);
  buf_printf(&json, "{" META ",\"spec\":{\"resources\":\"%s# edited\\n\"}}", res);
  CHECK_EQ_INT(parse(json.data, &s, &err), 0);
  CHECK(strcmp(s.digest, d1) != 0);
  req_free(&s);
  /* The same spec, the same digest (the status and metadata do not count). */
  buf_reset(&json);
  buf_printf(&json, "{\"metadata\":{\"name\":\"web\",\"namespace\":\"test\",\"generation\":5},\"spec\":{\"resources\":\"%s\"},"
                    "\"status\":{\"phase\":\"Deployed\"}}", res);
  CHECK_EQ_INT(parse(json.data, &s, &err), 0);
  CHECK_EQ_STR(s.digest, d1);
  req_free(&s);

  /* Our finalizer, and only ours, counts; a deletion is seen. */
  CHECK_EQ_INT(parse("{\"metadata\":{\"name\":\"web\",\"namespace\":\"test\",\"finalizers\":[\"rudder.dev/finalizer\"]},"
                     "\"spec\":{\"resources\":\"kind: x\"}}", &s, &err), 0);
  CHECK(!s.has_finalizer);
  req_free(&s);
  CHECK_EQ_INT(parse("{\"metadata\":{\"name\":\"web\",\"namespace\":\"test\",\"finalizers\":[\"a\",\"" MS_FINALIZER "\"],"
                     "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},\"spec\":{\"resources\":\"kind: x\"}}", &s, &err), 0);
  CHECK(s.has_finalizer && s.deleting);
  CHECK_EQ_INT(cJSON_GetArraySize(s.finalizers), 2);
  req_free(&s);
  buf_free(&json);
  buf_free(&err);
}

/* What the status said last time is read back (the engine needs it after a restart). */
static void test_status_read_back(void) {
  release_req_t s;
  buf_t err = BUF_INIT;
  char d[65];
  memset(d, 'a', 64);
  d[64] = 0;
  buf_t json = BUF_INIT;
  buf_printf(&json, "{" META ",\"spec\":{\"resources\":\"kind: x\"},\"status\":{\"revision\":4,\"lastAppliedDigest\":\"%s\","
                    "\"lastAttemptedDigest\":\"%s\",\"installFailures\":1,\"upgradeFailures\":2,"
                    "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}", d, d);
  CHECK_EQ_INT(parse(json.data, &s, &err), 0);
  CHECK_EQ_INT(s.applied_revision, 4);
  CHECK_EQ_STR(s.applied_digest, d);
  CHECK_EQ_STR(s.failed_digest, d);
  CHECK_EQ_INT(s.install_failures, 1);
  CHECK_EQ_INT(s.upgrade_failures, 2);
  CHECK(cond_find(s.conditions, "Ready") != NULL);
  req_free(&s);
  /* Nonsense in the status is ignored, not trusted. */
  CHECK_EQ_INT(parse("{" META ",\"spec\":{\"resources\":\"kind: x\"},\"status\":{\"revision\":-3,\"lastAppliedDigest\":\"short\","
                     "\"installFailures\":\"x\"}}", &s, &err), 0);
  CHECK_EQ_INT(s.applied_revision, 0);
  CHECK_EQ_STR(s.applied_digest, "");
  CHECK_EQ_INT(s.install_failures, 0);
  req_free(&s);
  buf_free(&json);
  buf_free(&err);
}

static void test_errors(void) {
  static const struct { const char *obj; int rc; const char *msg; } cases[] = {
    {"{" META "}", -22, "spec.resources: is required: a string holding one or more Kubernetes YAML documents"},
    {"{" META ",\"spec\":{}}", -22, "spec.resources: is required: a string holding one or more Kubernetes YAML documents"},
    {"{" META ",\"spec\":{\"resources\":null}}", -22,
     "spec.resources: is required: a string holding one or more Kubernetes YAML documents"},
    {"{" META ",\"spec\":{\"resources\":\"\"}}", -22,
     "spec.resources: is empty: it must hold at least one Kubernetes YAML document"},
    {"{" META ",\"spec\":{\"resources\":\" \\n\\t\\n\"}}", -22,
     "spec.resources: is empty: it must hold at least one Kubernetes YAML document"},
    {"{" META ",\"spec\":{\"resources\":[\"kind: x\"]}}", -22,
     "spec.resources: must be a string holding one or more Kubernetes YAML documents"},
    {"{" META ",\"spec\":{\"resources\":{\"kind\":\"x\"}}}", -22,
     "spec.resources: must be a string holding one or more Kubernetes YAML documents"},
    {"{" META ",\"spec\":{\"resources\":\"kind: x\",\"values\":[1]}}", -22,
     "spec.values: must be an object (the values the template actions in spec.resources see)"},
    {"{" META ",\"spec\":{\"resources\":\"kind: x\",\"values\":\"replicas: 2\"}}", -22,
     "spec.values: must be an object (the values the template actions in spec.resources see)"},
    {"{\"metadata\":{\"name\":\"a123456789b123456789c123456789d123456789e123456789f1234\",\"namespace\":\"test\"},"
     "\"spec\":{\"resources\":\"kind: x\"}}", -22,
     "metadata.name: \"a123456789b123456789c123456789d123456789e123456789f1234\" is longer than 53 characters, the longest "
     "name a Helm release may have (the release is named after the Microservice)"},
    {"{\"metadata\":{\"name\":\"web\"},\"spec\":{\"resources\":\"kind: x\"}}", -22,
     "object has no metadata.namespace or metadata.name"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    release_req_t s;
    buf_t err = BUF_INIT;
    int rc = parse(cases[i].obj, &s, &err);
    CHECK_EQ_INT(rc, cases[i].rc);
    CHECK_EQ_STR(err.data, cases[i].msg);
    CHECK(s.chart == NULL);
    if (s.ns) {
      /* Identity and the release's names are filled even for a bad spec: the status can be written
       * and a deletion finds the records. */
      CHECK(s.name && s.release_name && !strcmp(s.release_name, s.name));
      CHECK_EQ_STR(s.storage_ns, "test");
    }
    req_free(&s);
    buf_free(&err);
  }
  /* A name of exactly 53 characters is a release name. */
  release_req_t s;
  buf_t err = BUF_INIT;
  CHECK_EQ_INT(parse("{\"metadata\":{\"name\":\"a123456789b123456789c123456789d123456789e123456789f12\",\"namespace\":\"t\"},"
                     "\"spec\":{\"resources\":\"kind: x\"}}", &s, &err), 0);
  CHECK_EQ_STR(s.chart ? s.chart->templates[0].name : "", "templates/a123456789b123456789c123456789d123456789e123456789f12.yaml");
  req_free(&s);
  buf_free(&err);
}

/* The status patch for an outcome, parsed back. */
static cJSON *status_of(const release_outcome_t *o) { return t_door_status(&door_microservice, o); }

static const char *str_of(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItem(o, k);
  return cJSON_IsString(v) ? v->valuestring : "(none)";
}

static void test_status(void) {
  release_req_t r = {0};
  r.name = "web";
  r.ns = "test";
  r.generation = 3;
  r.conditions = cJSON_Parse("[{\"type\":\"Ready\",\"status\":\"Unknown\",\"lastTransitionTime\":\"2020-01-01T00:00:00Z\","
                             "\"reason\":\"Progressing\",\"message\":\"m\"}]");
  char dg[65];
  memset(dg, 'b', 64);
  dg[64] = 0;

  /* Deployed: phase, revision, observedGeneration, Ready True with the engine's reason. */
  release_outcome_t o = {.req = &r, .ready = "True", .reason = "UpgradeSucceeded", .message = "Helm upgrade succeeded",
                         .released = "True", .applied_revision = 2, .attempted_revision = 2, .applied_digest = dg,
                         .attempted_digest = dg};
  cJSON *st = status_of(&o);
  CHECK_EQ_STR(str_of(st, "phase"), "Deployed");
  CHECK_EQ_INT(cJSON_GetObjectItem(st, "revision")->valuedouble, 2);
  CHECK_EQ_INT(cJSON_GetObjectItem(st, "observedGeneration")->valuedouble, 3);
  CHECK_EQ_STR(str_of(st, "lastAppliedDigest"), dg);
  const cJSON *ready = cond_find(cJSON_GetObjectItem(st, "conditions"), "Ready");
  CHECK_EQ_STR(str_of(ready, "status"), "True");
  CHECK_EQ_STR(str_of(ready, "reason"), "UpgradeSucceeded");
  CHECK_EQ_STR(str_of(ready, "message"), "Helm upgrade succeeded");
  CHECK(cond_find(cJSON_GetObjectItem(st, "conditions"), "Released") != NULL);
  CHECK(cond_find(cJSON_GetObjectItem(st, "conditions"), "Stalled") == NULL);
  cJSON_Delete(st);

  /* Failed: the reason and message say why; the deployed revision is kept. */
  o = (release_outcome_t){.req = &r, .ready = "False", .reason = "InvalidSpec", .stalled = "True",
                          .message = "spec.resources: is empty: it must hold at least one Kubernetes YAML document",
                          .applied_revision = 2, .install_failures = 0, .upgrade_failures = 1};
  st = status_of(&o);
  CHECK_EQ_STR(str_of(st, "phase"), "Failed");
  CHECK_EQ_INT(cJSON_GetObjectItem(st, "revision")->valuedouble, 2);
  CHECK_EQ_INT(cJSON_GetObjectItem(st, "upgradeFailures")->valuedouble, 1);
  ready = cond_find(cJSON_GetObjectItem(st, "conditions"), "Ready");
  CHECK_EQ_STR(str_of(ready, "status"), "False");
  CHECK_EQ_STR(str_of(ready, "reason"), "InvalidSpec");
  CHECK_EQ_STR(str_of(ready, "message"), "spec.resources: is empty: it must hold at least one Kubernetes YAML document");
  CHECK_EQ_STR(str_of(cond_find(cJSON_GetObjectItem(st, "conditions"), "Stalled"), "status"), "True");
  cJSON_Delete(st);

  /* Nothing deployed yet: no revision is written (a merge patch keeps what is there). */
  o = (release_outcome_t){.req = &r, .ready = "Unknown", .reason = "ReleaseLocked", .message = "another operation"};
  st = status_of(&o);
  CHECK_EQ_STR(str_of(st, "phase"), "Pending");
  CHECK(cJSON_GetObjectItem(st, "revision") == NULL);
  cJSON_Delete(st);

  /* A progress report: the phase and Reconciling only, nothing else changes. */
  o = (release_outcome_t){.req = &r, .progressing = "Running 'install' action with timeout of 5m0s"};
  st = status_of(&o);
  CHECK_EQ_STR(str_of(st, "phase"), "Pending");
  CHECK(cJSON_GetObjectItem(st, "observedGeneration") == NULL && cJSON_GetObjectItem(st, "revision") == NULL);
  const cJSON *rec = cond_find(cJSON_GetObjectItem(st, "conditions"), "Reconciling");
  CHECK_EQ_STR(str_of(rec, "status"), "True");
  CHECK_EQ_STR(str_of(rec, "reason"), "Progressing");
  CHECK_EQ_STR(str_of(rec, "message"), "Running 'install' action with timeout of 5m0s");
  cJSON_Delete(st);

  /* Being deleted: Deleting, while the uninstall runs and whatever it ends with. */
  r.deleting = true;
  o = (release_outcome_t){.req = &r, .progressing = "Running 'uninstall' action with timeout of 5m0s"};
  st = status_of(&o);
  CHECK_EQ_STR(str_of(st, "phase"), "Deleting");
  cJSON_Delete(st);
  o = (release_outcome_t){.req = &r, .ready = "False", .reason = "UninstallFailed", .message = "resource still exists"};
  st = status_of(&o);
  CHECK_EQ_STR(str_of(st, "phase"), "Deleting");
  CHECK_EQ_STR(str_of(cond_find(cJSON_GetObjectItem(st, "conditions"), "Ready"), "reason"), "UninstallFailed");
  cJSON_Delete(st);
  cJSON_Delete(r.conditions);
}

int main(void) {
  test_row();
  test_mapping();
  test_status_read_back();
  test_errors();
  test_status();
  return t_done();
}
