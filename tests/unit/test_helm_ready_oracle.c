/* helm/action/ready.c against Helm v4's own wait readers (the kstatus oracle in tests/oracle/kstatus):
 * a hand-written corpus of objects of every kind in every state, plus thousands of generated ones,
 * judged by both in each of Helm's three waits and compared on status and message. */
#include "helm/action/ready.h"
#include "tests/oracle/kstatus/run.h"
#include <inttypes.h>
#include <time.h>
#include "t.h"

/* ---- the hand-written corpus ---------------------------------------------------------------- */

#define MD(kind, extra) "\"kind\":\"" kind "\",\"metadata\":{\"name\":\"x\",\"namespace\":\"ns\"" extra "}"
#define DEP(spec, status) \
  "{\"apiVersion\":\"apps/v1\"," MD("Deployment", ",\"generation\":2") \
  ",\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"x\"}}" spec "},\"status\":{" status "}}"
#define DEP_OK "\"observedGeneration\":2,\"replicas\":1,\"updatedReplicas\":1,\"readyReplicas\":1,\"availableReplicas\":1"
#define AVAIL "{\"type\":\"Available\",\"status\":\"True\"}"
#define PROG(st, reason) "{\"type\":\"Progressing\",\"status\":\"" st "\",\"reason\":\"" reason "\",\"message\":\"m\"}"
#define COND(t, s, m) "{\"type\":\"" t "\",\"status\":\"" s "\",\"reason\":\"R\",\"message\":\"" m "\"}"
#define CONDS(...) "\"conditions\":[" __VA_ARGS__ "]"
#define STS(spec, status) \
  "{\"apiVersion\":\"apps/v1\"," MD("StatefulSet", ",\"generation\":1") \
  ",\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"x\"}}" spec "},\"status\":{\"observedGeneration\":1" status "}}"
#define DS(md, status) "{\"apiVersion\":\"apps/v1\"," MD("DaemonSet", md) ",\"status\":{" status "}}"
#define RS(spec, status) \
  "{\"apiVersion\":\"apps/v1\"," MD("ReplicaSet", "") \
  ",\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"x\"}}" spec "},\"status\":{" status "}}"
#define POD(md, status) "{\"apiVersion\":\"v1\"," MD("Pod", md) ",\"status\":{" status "}}"
#define JOB(spec, status) "{\"apiVersion\":\"batch/v1\"," MD("Job", "") ",\"spec\":{" spec "},\"status\":{" status "}}"
#define PVC(status) "{\"apiVersion\":\"v1\"," MD("PersistentVolumeClaim", "") ",\"status\":{" status "}}"
#define SVC(spec, status) "{\"apiVersion\":\"v1\"," MD("Service", "") ",\"spec\":{" spec "},\"status\":{" status "}}"
#define CRD(status) \
  "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\"," \
  "\"metadata\":{\"name\":\"foos.example.com\",\"generation\":1},\"status\":{" status "}}"
#define CR(md, status) "{\"apiVersion\":\"example.com/v1\"," MD("Foo", md) ",\"status\":{" status "}}"
#define CRASH(name) "{\"name\":\"" name "\",\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\"}}}"

static const char *const corpus[] = {
    /* Deployments */
    DEP("", DEP_OK "," CONDS(AVAIL "," PROG("True", "NewReplicaSetAvailable"))),
    DEP(",\"replicas\":3", "\"observedGeneration\":2,\"replicas\":3,\"updatedReplicas\":1"),
    DEP(",\"replicas\":3", "\"observedGeneration\":2,\"replicas\":4,\"updatedReplicas\":3"),
    DEP(",\"replicas\":2", "\"observedGeneration\":2,\"replicas\":2,\"updatedReplicas\":2,\"availableReplicas\":1"),
    DEP(",\"replicas\":2", "\"observedGeneration\":2,\"replicas\":2,\"updatedReplicas\":2,\"availableReplicas\":2"),
    DEP("", DEP_OK "," CONDS(AVAIL "," PROG("False", "ProgressDeadlineExceeded"))),
    DEP("", DEP_OK "," CONDS(AVAIL "," PROG("True", "ReplicaSetUpdated"))),
    DEP(",\"progressDeadlineSeconds\":600", DEP_OK "," CONDS(AVAIL)),
    DEP(",\"progressDeadlineSeconds\":2147483647", DEP_OK "," CONDS(AVAIL)),
    DEP("", DEP_OK "," CONDS(PROG("True", "NewReplicaSetAvailable"))),
    DEP(",\"paused\":true", "\"observedGeneration\":1"),
    DEP(",\"paused\":false", "\"observedGeneration\":1"),
    DEP(",\"paused\":true,\"replicas\":4000000000", "\"observedGeneration\":1"),
    DEP(",\"paused\":true,\"template\":{\"spec\":{\"containers\":\"x\"}}", "\"observedGeneration\":1"),
    DEP(",\"paused\":true,\"template\":{\"metadata\":{\"labels\":{\"app\":\"x\"}},\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"b\"}]}}", "\"observedGeneration\":2"),
    "{\"apiVersion\":\"apps/v1\"," MD("Deployment", ",\"labels\":{\"a\":5}") ",\"spec\":{\"paused\":true,\"selector\":{}}}",
    "{\"apiVersion\":\"apps/v1\"," MD("Deployment", "") ",\"spec\":{\"paused\":true,\"selector\":{\"matchLabels\":{\"a\":5}}}}",
    DEP(",\"replicas\":0", "\"observedGeneration\":2," CONDS(AVAIL "," PROG("True", "NewReplicaSetAvailable"))),
    DEP(",\"replicas\":0", "\"observedGeneration\":2"),
    DEP("", "\"observedGeneration\":1," CONDS(AVAIL)),
    DEP("", ""),
    DEP("", DEP_OK "," CONDS(AVAIL "," PROG("True", "NewReplicaSetAvailable") "," COND("Reconciling", "True", "busy"))),
    DEP("", DEP_OK "," CONDS(COND("Stalled", "True", "stuck"))),
    "{\"apiVersion\":\"apps/v1\"," MD("Deployment", ",\"generation\":1") ",\"spec\":{\"replicas\":1}}",
    "{\"apiVersion\":\"extensions/v1beta1\"," MD("Deployment", ",\"generation\":1") ",\"spec\":{\"replicas\":1}}",
    "{\"apiVersion\":\"apps/v1\"," MD("Deployment", ",\"generation\":1") ",\"spec\":{\"selector\":{\"matchLabels\":{\"a\":\"b c\"}}}}",
    "{\"apiVersion\":\"apps/v1\"," MD("Deployment", ",\"generation\":1,\"deletionTimestamp\":\"2020-01-01T00:00:00Z\"") ",\"spec\":{\"selector\":{}}}",
    /* StatefulSets */
    STS(",\"replicas\":3", ",\"replicas\":3,\"readyReplicas\":3,\"currentReplicas\":3,\"updatedReplicas\":3,\"currentRevision\":\"a\",\"updateRevision\":\"a\""),
    STS(",\"replicas\":3", ",\"replicas\":2"),
    STS(",\"replicas\":3", ",\"replicas\":3,\"readyReplicas\":1"),
    STS(",\"replicas\":3", ",\"replicas\":4,\"readyReplicas\":3"),
    STS(",\"replicas\":3", ",\"replicas\":3,\"readyReplicas\":3,\"currentReplicas\":1"),
    STS(",\"replicas\":3", ",\"replicas\":3,\"readyReplicas\":3,\"currentReplicas\":3,\"currentRevision\":\"a\",\"updateRevision\":\"b\""),
    STS(",\"replicas\":3,\"updateStrategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":{\"partition\":1}}", ",\"replicas\":3,\"readyReplicas\":3,\"updatedReplicas\":1"),
    STS(",\"replicas\":3,\"updateStrategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":{\"partition\":1}}", ",\"replicas\":3,\"readyReplicas\":3,\"updatedReplicas\":2"),
    STS(",\"updateStrategy\":{\"type\":\"OnDelete\"}", ""),
    STS(",\"replicas\":0", ""),
    /* DaemonSets */
    DS(",\"generation\":1", "\"observedGeneration\":1,\"desiredNumberScheduled\":2,\"currentNumberScheduled\":2,\"updatedNumberScheduled\":2,\"numberAvailable\":2,\"numberReady\":2"),
    DS(",\"generation\":1", "\"observedGeneration\":1,\"desiredNumberScheduled\":2,\"currentNumberScheduled\":1"),
    DS(",\"generation\":1", "\"observedGeneration\":1,\"desiredNumberScheduled\":2,\"currentNumberScheduled\":2,\"updatedNumberScheduled\":1"),
    DS(",\"generation\":1", "\"observedGeneration\":1,\"desiredNumberScheduled\":2,\"currentNumberScheduled\":2,\"updatedNumberScheduled\":2,\"numberAvailable\":1"),
    DS(",\"generation\":1", "\"observedGeneration\":1,\"desiredNumberScheduled\":2,\"currentNumberScheduled\":2,\"updatedNumberScheduled\":2,\"numberAvailable\":2"),
    DS(",\"generation\":1", "\"observedGeneration\":1"),
    DS(",\"generation\":1", ""),
    DS("", "\"observedGeneration\":1"),
    DS(",\"generation\":2", "\"observedGeneration\":1"),
    DS(",\"generation\":1", "\"observedGeneration\":1,\"desiredNumberScheduled\":0"),
    /* ReplicaSets */
    RS(",\"replicas\":2", "\"replicas\":2,\"fullyLabeledReplicas\":2,\"availableReplicas\":2,\"readyReplicas\":2"),
    RS(",\"replicas\":2", "\"replicas\":2,\"fullyLabeledReplicas\":1"),
    RS(",\"replicas\":2", "\"replicas\":2,\"fullyLabeledReplicas\":2,\"availableReplicas\":1"),
    RS(",\"replicas\":2", "\"replicas\":2,\"fullyLabeledReplicas\":2,\"availableReplicas\":2,\"readyReplicas\":1"),
    RS(",\"replicas\":2", "\"replicas\":3,\"fullyLabeledReplicas\":2,\"availableReplicas\":2,\"readyReplicas\":2"),
    RS(",\"replicas\":2", CONDS(COND("ReplicaFailure", "True", "quota"))),
    /* Pods */
    POD("", "\"phase\":\"Running\"," CONDS(COND("Ready", "True", ""))),
    POD("", "\"phase\":\"Running\"," CONDS(COND("Ready", "False", "containers not ready"))),
    POD("", "\"phase\":\"Running\",\"containerStatuses\":[" CRASH("a") ",{\"name\":\"b\",\"state\":{\"running\":{}}}," CRASH("c") "]"),
    POD("", "\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"b\",\"state\":{\"waiting\":{\"reason\":\"ImagePullBackOff\"}}}]"),
    POD("", "\"phase\":\"Pending\""),
    POD(",\"creationTimestamp\":\"2000-01-01T00:00:00Z\"", "\"phase\":\"Pending\"," CONDS("{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\"}")),
    POD(",\"creationTimestamp\":\"2999-01-01T00:00:00Z\"", "\"phase\":\"Pending\"," CONDS("{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\"}")),
    POD("", "\"phase\":\"Pending\"," CONDS("{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Other\"}")),
    POD("", "\"phase\":\"Succeeded\""),
    POD("", "\"phase\":\"Failed\""),
    POD("", "\"phase\":\"Unknown\""),
    POD("", ""),
    POD(",\"deletionTimestamp\":\"2020-01-01T00:00:00Z\"", "\"phase\":\"Succeeded\""),
    POD(",\"generation\":2", "\"observedGeneration\":1,\"phase\":\"Running\""),
    /* Jobs */
    JOB("", "\"succeeded\":1," CONDS(COND("Complete", "True", ""))),
    JOB("\"completions\":3", "\"failed\":2," CONDS(COND("Failed", "True", "BackoffLimitExceeded"))),
    JOB("\"parallelism\":2", "\"startTime\":\"2020-01-01T00:00:00Z\",\"active\":2"),
    JOB("", ""),
    JOB("", CONDS(COND("Suspended", "True", ""))),
    JOB("", CONDS(COND("Complete", "False", ""))),
    /* PersistentVolumeClaims */
    PVC("\"phase\":\"Bound\""),
    PVC("\"phase\":\"Pending\""),
    PVC(""),
    /* Services */
    SVC("\"type\":\"LoadBalancer\",\"clusterIP\":\"10.0.0.1\"", "\"loadBalancer\":{\"ingress\":[{\"ip\":\"1.2.3.4\"}]}"),
    SVC("\"type\":\"LoadBalancer\",\"clusterIP\":\"10.0.0.1\"", "\"loadBalancer\":{}"),
    SVC("\"type\":\"LoadBalancer\"", ""),
    SVC("\"type\":\"ClusterIP\",\"clusterIP\":\"None\"", ""),
    SVC("", ""),
    /* PodDisruptionBudgets */
    "{\"apiVersion\":\"policy/v1\"," MD("PodDisruptionBudget", ",\"generation\":2") ",\"status\":{\"observedGeneration\":2}}",
    "{\"apiVersion\":\"policy/v1\"," MD("PodDisruptionBudget", ",\"generation\":2") ",\"status\":{\"observedGeneration\":1}}",
    /* CustomResourceDefinitions */
    CRD(CONDS(COND("NamesAccepted", "True", "") "," COND("Established", "True", ""))),
    CRD(CONDS(COND("NamesAccepted", "False", "\\\"foos\\\" is already in use"))),
    CRD(CONDS("{\"type\":\"Established\",\"status\":\"False\",\"reason\":\"Installing\"}")),
    CRD(CONDS(COND("Established", "False", "not yet"))),
    CRD(""),
    /* custom resources and the generic rules */
    CR(",\"generation\":3", "\"observedGeneration\":3," CONDS(COND("Ready", "True", "all good"))),
    CR(",\"generation\":3", "\"observedGeneration\":3," CONDS(COND("Ready", "False", "waiting for database"))),
    CR(",\"generation\":3", "\"observedGeneration\":3," CONDS(COND("Ready", "Unknown", "reconciling"))),
    CR(",\"generation\":3", "\"observedGeneration\":2," CONDS(COND("Ready", "True", ""))),
    CR(",\"generation\":3", CONDS(COND("Reconciling", "True", "progressing"))),
    CR(",\"generation\":3", CONDS(COND("Stalled", "True", "gave up"))),
    CR(",\"generation\":3", CONDS(COND("Stalled", "False", "") "," COND("Reconciling", "False", ""))),
    CR(",\"generation\":3", CONDS(COND("Ready", "True", "") "," COND("Stalled", "True", "late"))),
    CR(",\"generation\":3", CONDS(COND("Ready", "False", "first") "," COND("Ready", "True", ""))),
    CR("", ""),
    CR(",\"deletionTimestamp\":\"2020-01-01T00:00:00Z\"", CONDS(COND("Ready", "True", ""))),
    CR(",\"deletionTimestamp\":\"\"", ""),
    CR(",\"generation\":\"3\"", ""),
    CR(",\"generation\":3", "\"conditions\":{}"),
    CR(",\"generation\":3", "\"conditions\":[{\"type\":\"Ready\",\"status\":true}]"),
    "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Foo\",\"metadata\":{\"name\":\"x\"}}",
    /* odd shapes: numbers Go does not read as integers, nulls, wrong types, no kind */
    DEP(",\"replicas\":1e20", DEP_OK),
    DEP(",\"replicas\":123456789012", DEP_OK),
    CR(",\"generation\":-4", "\"observedGeneration\":-4"),
    CR(",\"generation\":null", ""),
    CR(",\"deletionTimestamp\":null", ""),
    "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Foo\",\"metadata\":\"x\"}",
    "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Foo\",\"metadata\":null,\"status\":null}",
    "{\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"x\"}}",
    "{\"apiVersion\":\"a/b/v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\"},\"status\":{\"phase\":\"Weird\"}}",
    "{\"apiVersion\":5,\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\"},\"status\":{\"phase\":\"Weird\"}}",
    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\"},\"status\":{\"phase\":\"Running\",\"containerStatuses\":null}}",
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":5},\"status\":{\"phase\":\"Failed\"}}",
    /* kinds that are always ready */
    "{\"apiVersion\":\"v1\"," MD("ConfigMap", "") ",\"data\":{\"a\":\"b\"}}",
    "{\"apiVersion\":\"v1\"," MD("Secret", "") "}",
    "{\"apiVersion\":\"batch/v1\"," MD("CronJob", ",\"generation\":1") "}",
    "{\"apiVersion\":\"v1\"," MD("ServiceAccount", "") "}",
    "{\"apiVersion\":\"v1\"," MD("ConfigMap", ",\"deletionTimestamp\":\"2020-01-01T00:00:00Z\"") "}",
    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"x\"},\"status\":{\"phase\":\"Active\"}}",
};

/* A few verdicts spelled out, so that the words users see are visible here too. */
static const struct {
  int index;
  ready_mode_t mode;
  ready_status_t status;
  const char *message;
} spelled[] = {
    {0, READY_WAIT, READY_CURRENT, "Deployment is available. Replicas: 1"},
    {1, READY_WAIT, READY_IN_PROGRESS, "Updated: 1/3"},
    {5, READY_WAIT, READY_FAILED, "Progress deadline exceeded"},
    {10, READY_WAIT, READY_CURRENT, ""},
    {10, READY_HOOK, READY_CURRENT, "Resource is current"},
};

/* ---- generated objects ------------------------------------------------------------------------ */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng % n);
}
#define PICK(arr) (arr)[rnd(sizeof(arr) / sizeof *(arr))]

/* A value for an integer field: mostly small numbers, sometimes a special or the wrong type. */
static cJSON *gen_int(void) {
  switch (rnd(20)) {
  case 0: return cJSON_CreateString("2");
  case 1: return cJSON_CreateNumber(1.5);
  case 2: return cJSON_CreateNull();
  case 3: return cJSON_CreateNumber(-1);
  case 4: return cJSON_CreateNumber(2147483647);
  case 5: return cJSON_CreateNumber(4000000000.0);
  default: return cJSON_CreateNumber(rnd(4));
  }
}

/* The value most integer fields of one object share, so that generated workloads also reach their
 * later rules (all counts equal: available, complete) and not only the first mismatch. */
static int shared_count;

/* Sets an integer field with probability 2/3: the shared count or any value. */
static void maybe_int(cJSON *o, const char *k) {
  if (!rnd(3)) return;
  if (rnd(5) < 3) cJSON_AddNumberToObject(o, k, shared_count);
  else cJSON_AddItemToObject(o, k, gen_int());
}

static void maybe_str(cJSON *o, const char *k, const char *const *vals, int n) {
  if (!rnd(4)) return;
  int i = (int)rnd((uint32_t)n + 1);
  if (i == n) cJSON_AddItemToObject(o, k, rnd(2) ? cJSON_CreateNull() : cJSON_CreateNumber(7));
  else cJSON_AddStringToObject(o, k, vals[i]);
}
#define MAYBE_STR(o, k, ...) \
  maybe_str(o, k, (const char *const[]){__VA_ARGS__}, sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *))

static const char *const times[] = {"2000-01-01T00:00:00Z", "2999-12-31T23:59:59Z", "2020-06-01T12:00:00.5+02:00",
                                    "yesterday", ""};

static void gen_conditions(cJSON *status, const char *const *types, int ntypes) {
  int r = (int)rnd(40);
  if (r == 0) {
    cJSON_AddItemToObject(status, "conditions", rnd(2) ? cJSON_CreateObject() : cJSON_CreateString("x"));
    return;
  }
  if (r < 6) return;
  cJSON *cs = cJSON_AddArrayToObject(status, "conditions");
  int n = (int)rnd(4);
  static const char *const generic[] = {"Ready", "Reconciling", "Stalled", "Other"};
  static const char *const sts[] = {"True", "False", "Unknown", "", "true"};
  static const char *const reasons[] = {"NewReplicaSetAvailable", "ProgressDeadlineExceeded", "Unschedulable",
                                        "Installing", "R"};
  static const char *const msgs[] = {"waiting for it", "", "done — all fine", "a \"quoted\" message"};
  for (int i = 0; i < n; i++) {
    if (!rnd(60)) {
      cJSON_AddItemToArray(cs, rnd(2) ? cJSON_CreateNull() : cJSON_CreateNumber(5));
      continue;
    }
    cJSON *c = cJSON_CreateObject();
    const char *type = rnd(3) && ntypes ? types[rnd((uint32_t)ntypes)] : PICK(generic);
    if (rnd(20)) cJSON_AddStringToObject(c, "type", type);
    if (rnd(20)) cJSON_AddStringToObject(c, "status", PICK(sts));
    else if (!rnd(3)) cJSON_AddBoolToObject(c, "status", 1);
    if (rnd(2)) cJSON_AddStringToObject(c, "reason", PICK(reasons));
    if (rnd(3)) cJSON_AddStringToObject(c, "message", PICK(msgs));
    cJSON_AddItemToArray(cs, c);
  }
}

static void gen_selector(cJSON *spec) {
  switch (rnd(12)) {
  case 0: return;
  case 1: cJSON_AddStringToObject(spec, "selector", "app=x"); return;
  case 2: cJSON_AddItemToObject(spec, "selector", cJSON_CreateObject()); return;
  case 3: {
    cJSON *s = cJSON_AddObjectToObject(spec, "selector");
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "key", "app");
    cJSON_AddStringToObject(e, "operator", PICK(((const char *const[]){"In", "Exists", "Bad", "NotIn"})));
    if (rnd(2)) cJSON_AddItemToObject(e, "values", cJSON_CreateStringArray((const char *const[]){"x"}, 1));
    cJSON_AddItemToArray(cJSON_AddArrayToObject(s, "matchExpressions"), e);
    return;
  }
  case 4: {
    cJSON *ml = cJSON_AddObjectToObject(cJSON_AddObjectToObject(spec, "selector"), "matchLabels");
    cJSON_AddStringToObject(ml, PICK(((const char *const[]){"app", "example.com/app", "-bad", "a/b/c"})),
                            PICK(((const char *const[]){"x", "", "b c", "-x"})));
    return;
  }
  default:
    cJSON_AddStringToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(spec, "selector"), "matchLabels"), "app",
                            "x");
  }
}

static cJSON *gen_object(void) {
  static const struct {
    const char *api, *kind;
  } kinds[] = {{"apps/v1", "Deployment"},   {"apps/v1", "Deployment"},
               {"apps/v1", "StatefulSet"},  {"apps/v1", "DaemonSet"},
               {"apps/v1", "ReplicaSet"},   {"v1", "Pod"},
               {"v1", "Pod"},               {"batch/v1", "Job"},
               {"batch/v1", "Job"},         {"v1", "PersistentVolumeClaim"},
               {"v1", "Service"},           {"policy/v1", "PodDisruptionBudget"},
               {"apiextensions.k8s.io/v1", "CustomResourceDefinition"},
               {"example.com/v1", "Foo"},   {"example.com/v1", "Foo"},
               {"v1", "ConfigMap"},         {"v1", "Secret"},
               {"batch/v1", "CronJob"},     {"extensions/v1beta1", "Deployment"},
               {"extensions/v1beta1", "DaemonSet"}, {"v1", "Namespace"},
               {"apps/v1beta2", "Deployment"}, {"extensions/v1beta1", "ReplicaSet"},
               {"autoscaling/v2", "HorizontalPodAutoscaler"}, {"networking.k8s.io/v1", "Ingress"},
               {"v1", "Job"},               {"example.com/v1", "Pod"}};
  int k = (int)rnd(sizeof kinds / sizeof *kinds);
  shared_count = (int)rnd(4);
  const char *kind = kinds[k].kind;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "apiVersion", kinds[k].api);
  cJSON_AddStringToObject(o, "kind", kind);
  cJSON *md = cJSON_AddObjectToObject(o, "metadata");
  cJSON_AddStringToObject(md, "name", PICK(((const char *const[]){"web", "db-0", "hook"})));
  cJSON_AddStringToObject(md, "namespace", "ns");
  int gen = (int)rnd(4);
  if (rnd(3)) {
    if (!rnd(25)) cJSON_AddStringToObject(md, "generation", "2");
    else cJSON_AddNumberToObject(md, "generation", gen);
  }
  if (!rnd(8)) cJSON_AddStringToObject(md, "deletionTimestamp", PICK(times));
  else if (!rnd(80)) cJSON_AddNumberToObject(md, "deletionTimestamp", 5);
  if (rnd(2)) cJSON_AddStringToObject(md, "creationTimestamp", PICK(times));

  if (!rnd(40)) {
    cJSON_AddStringToObject(o, "status", "broken");
    return o;
  }
  cJSON *spec = cJSON_AddObjectToObject(o, "spec");
  cJSON *st = cJSON_AddObjectToObject(o, "status");
  if (rnd(2)) cJSON_AddNumberToObject(st, "observedGeneration", rnd(3) ? gen : (int)rnd(4));

  if (!strcmp(kind, "Deployment")) {
    gen_selector(spec);
    maybe_int(spec, "replicas");
    if (!rnd(3)) cJSON_AddNumberToObject(spec, "progressDeadlineSeconds", rnd(2) ? 600 : 2147483647);
    if (!rnd(4)) {
      if (!rnd(10)) cJSON_AddStringToObject(spec, "paused", "true");
      else cJSON_AddBoolToObject(spec, "paused", rnd(3) != 0);
    }
    if (!rnd(8)) {
      cJSON *tpl = cJSON_AddObjectToObject(spec, "template");
      cJSON *c = cJSON_CreateObject();
      cJSON_AddStringToObject(c, "name", "app");
      if (rnd(4)) cJSON_AddStringToObject(c, "image", "nginx");
      else cJSON_AddNumberToObject(c, "image", 1);
      cJSON_AddItemToArray(cJSON_AddArrayToObject(cJSON_AddObjectToObject(tpl, "spec"), "containers"), c);
    }
    if (!rnd(12)) cJSON_AddNumberToObject(cJSON_AddObjectToObject(md, "labels"), "app", 5);
    maybe_int(st, "replicas");
    maybe_int(st, "updatedReplicas");
    maybe_int(st, "readyReplicas");
    maybe_int(st, "availableReplicas");
    if (!rnd(4)) maybe_int(st, "unavailableReplicas");
    if (!rnd(4)) maybe_int(st, "terminatingReplicas");
    if (!rnd(6)) maybe_int(spec, "minReadySeconds");
    gen_conditions(st, (const char *const[]){"Available", "Progressing", "ReplicaFailure"}, 3);
  } else if (!strcmp(kind, "StatefulSet")) {
    gen_selector(spec);
    maybe_int(spec, "replicas");
    if (rnd(2)) {
      cJSON *us = cJSON_AddObjectToObject(spec, "updateStrategy");
      MAYBE_STR(us, "type", "RollingUpdate", "OnDelete");
      if (rnd(2)) maybe_int(cJSON_AddObjectToObject(us, "rollingUpdate"), "partition");
    }
    maybe_int(st, "replicas");
    maybe_int(st, "readyReplicas");
    maybe_int(st, "currentReplicas");
    maybe_int(st, "updatedReplicas");
    MAYBE_STR(st, "currentRevision", "web-1", "web-2");
    MAYBE_STR(st, "updateRevision", "web-1", "web-2");
    if (!rnd(3)) maybe_int(st, "availableReplicas");
    if (!rnd(6)) MAYBE_STR(spec, "podManagementPolicy", "OrderedReady", "Parallel");
    gen_conditions(st, NULL, 0);
  } else if (!strcmp(kind, "DaemonSet")) {
    maybe_int(st, "desiredNumberScheduled");
    maybe_int(st, "currentNumberScheduled");
    maybe_int(st, "updatedNumberScheduled");
    maybe_int(st, "numberAvailable");
    maybe_int(st, "numberReady");
    if (!rnd(4)) maybe_int(st, "numberUnavailable");
    if (!rnd(4)) maybe_int(st, "numberMisscheduled");
    gen_conditions(st, NULL, 0);
  } else if (!strcmp(kind, "ReplicaSet")) {
    gen_selector(spec);
    maybe_int(spec, "replicas");
    maybe_int(st, "replicas");
    maybe_int(st, "readyReplicas");
    maybe_int(st, "availableReplicas");
    maybe_int(st, "fullyLabeledReplicas");
    if (!rnd(4)) maybe_int(st, "terminatingReplicas");
    gen_conditions(st, (const char *const[]){"ReplicaFailure"}, 1);
  } else if (!strcmp(kind, "Pod")) {
    MAYBE_STR(st, "phase", "Pending", "Running", "Running", "Succeeded", "Failed", "", "Weird");
    if (rnd(2)) {
      cJSON *css = cJSON_AddArrayToObject(st, "containerStatuses");
      int n = (int)rnd(3);
      for (int i = 0; i < n; i++) {
        cJSON *cs = cJSON_CreateObject();
        cJSON_AddStringToObject(cs, "name", PICK(((const char *const[]){"app", "sidecar", "init"})));
        cJSON *state = cJSON_AddObjectToObject(cs, "state");
        if (rnd(2))
          cJSON_AddStringToObject(cJSON_AddObjectToObject(state, "waiting"), "reason",
                                  PICK(((const char *const[]){"CrashLoopBackOff", "ImagePullBackOff"})));
        else cJSON_AddObjectToObject(state, "running");
        cJSON_AddItemToArray(css, cs);
      }
    }
    gen_conditions(st, (const char *const[]){"Ready", "PodScheduled", "ContainersReady"}, 3);
  } else if (!strcmp(kind, "Job")) {
    maybe_int(spec, "parallelism");
    maybe_int(spec, "completions");
    maybe_int(st, "succeeded");
    maybe_int(st, "active");
    maybe_int(st, "failed");
    MAYBE_STR(st, "startTime", "2020-01-01T00:00:00Z", "");
    if (!rnd(4)) maybe_int(st, "ready");
    if (!rnd(4)) maybe_int(st, "terminating");
    if (!rnd(5)) cJSON_AddBoolToObject(spec, "suspend", rnd(2));
    if (!rnd(5)) MAYBE_STR(st, "completionTime", "2020-01-01T00:01:00Z");
    gen_conditions(st, (const char *const[]){"Complete", "Failed", "Suspended"}, 3);
  } else if (!strcmp(kind, "PersistentVolumeClaim")) {
    MAYBE_STR(st, "phase", "Bound", "Pending", "Lost");
    gen_conditions(st, (const char *const[]){"Resizing", "FileSystemResizePending"}, 2);
  } else if (!strcmp(kind, "Service")) {
    MAYBE_STR(spec, "type", "ClusterIP", "LoadBalancer", "LoadBalancer", "NodePort");
    MAYBE_STR(spec, "clusterIP", "10.0.0.1", "", "None");
    if (rnd(2)) {
      cJSON *ing = cJSON_AddArrayToObject(cJSON_AddObjectToObject(st, "loadBalancer"), "ingress");
      if (rnd(2)) {
        cJSON *i = cJSON_CreateObject();
        cJSON_AddStringToObject(i, "ip", "1.2.3.4");
        cJSON_AddItemToArray(ing, i);
      }
    }
  } else if (!strcmp(kind, "PodDisruptionBudget")) {
    maybe_int(st, "disruptionsAllowed");
    gen_conditions(st, (const char *const[]){"DisruptionAllowed"}, 1);
  } else if (!strcmp(kind, "CustomResourceDefinition")) {
    gen_conditions(st, (const char *const[]){"Established", "NamesAccepted", "NonStructuralSchema"}, 3);
  } else {
    gen_conditions(st, NULL, 0);
  }
  return o;
}

/* ---- comparing -------------------------------------------------------------------------------- */

static const char *mode_name(ready_mode_t m) {
  return m == READY_WAIT ? "wait" : m == READY_WAIT_JOBS ? "wait-jobs" : "hook";
}

static int mismatches;

/* Compares our verdict on one object with the oracle's line. */
static void compare(const char *objtext, const cJSON *obj, const cJSON *want, ready_mode_t mode, int64_t now) {
  ready_result_t r;
  buf_t msg = BUF_INIT;
  CHECK_EQ_INT(ready_compute(obj, mode, now, &r, &msg), 0);
  const cJSON *ws = cJSON_GetObjectItemCaseSensitive(want, "status");
  const cJSON *wm = cJSON_GetObjectItemCaseSensitive(want, "message");
  const cJSON *we = cJSON_GetObjectItemCaseSensitive(want, "error");
  int wskip = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(want, "skipped"));
  const char *wstatus = cJSON_IsString(ws) ? ws->valuestring : "";
  const char *wmsg = cJSON_IsString(wm) ? wm->valuestring : "";
  /* A decode error in Go (no kind) is Unknown with an error here. */
  int werr = cJSON_IsString(we) && *we->valuestring;
  if (werr && !*wstatus) wstatus = "Unknown";
  int same;
  if (wskip) same = r.skipped;
  else
    same = !r.skipped && strcmp(ready_status_name(r.status), wstatus) == 0 && strcmp(msg.data ? msg.data : "", wmsg) == 0 &&
           werr == (r.error[0] != 0);
  if (same) {
    t_passed++;
  } else {
    t_failed++;
    if (++mismatches <= 40)
      fprintf(stderr, "MISMATCH (%s) %s\n  go:   skipped=%d %s \"%s\" error=%s\n  ours: skipped=%d %s \"%s\" error=%s\n",
              mode_name(mode), objtext, wskip, wstatus, wmsg, werr ? we->valuestring : "", r.skipped,
              ready_status_name(r.status), msg.data ? msg.data : "", r.error);
  }
  buf_free(&msg);
}

/* Sends every object through the oracle in one mode and compares each answer with ours. */
static void run_mode(const char *oracle, char **texts, int n, ready_mode_t mode) {
  buf_t in = BUF_INIT;
  for (int i = 0; i < n; i++) {
    buf_puts(&in, texts[i]);
    buf_putc(&in, '\n');
  }
  int64_t now = (int64_t)time(NULL);
  char *out = kstatus_oracle_run(oracle, mode_name(mode), in.data, in.len);
  buf_free(&in);
  CHECK(out != NULL);
  if (!out) return;
  char *line = out;
  int i = 0;
  while (i < n && *line) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = 0;
    cJSON *want = cJSON_Parse(line);
    cJSON *obj = cJSON_Parse(texts[i]);
    CHECK(want != NULL && obj != NULL);
    if (want && obj) compare(texts[i], obj, want, mode, now);
    cJSON_Delete(want);
    cJSON_Delete(obj);
    i++;
    if (!nl) break;
    line = nl + 1;
  }
  CHECK_EQ_INT(i, n);
  free(out);
}

int main(void) {
  /* RUDDER_READY_SEED and RUDDER_READY_COUNT explore beyond the fixed run (6,000 from one seed). */
  const char *seed = getenv("RUDDER_READY_SEED"), *count = getenv("RUDDER_READY_COUNT");
  if (seed && *seed) rng = strtoull(seed, NULL, 0) | 1;
  int generated = count && *count ? atoi(count) : 6000;
  int ncorpus = (int)(sizeof corpus / sizeof *corpus);
  int n = ncorpus + generated;
  char **texts = calloc((size_t)n, sizeof *texts);
  for (int i = 0; i < ncorpus; i++) {
    cJSON *o = cJSON_Parse(corpus[i]);
    if (!o) fprintf(stderr, "corpus entry %d does not parse: %s\n", i, corpus[i]);
    CHECK(o != NULL);
    texts[i] = o ? cJSON_PrintUnformatted(o) : strdup("{}");
    cJSON_Delete(o);
  }
  for (int i = ncorpus; i < n; i++) {
    cJSON *o = gen_object();
    texts[i] = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
  }

  /* RUDDER_READY_CORPUS=file keeps the objects (JSON lines) for running the oracle by hand. */
  const char *keep = getenv("RUDDER_READY_CORPUS");
  FILE *kf = keep && *keep ? fopen(keep, "w") : NULL;
  for (int i = 0; kf && i < n; i++) fprintf(kf, "%s\n", texts[i]);
  if (kf) fclose(kf);

  /* The spelled-out verdicts hold without the oracle. */
  for (size_t i = 0; i < sizeof spelled / sizeof *spelled; i++) {
    cJSON *o = cJSON_Parse(corpus[spelled[i].index]);
    ready_result_t r;
    buf_t msg = BUF_INIT;
    CHECK_EQ_INT(ready_compute(o, spelled[i].mode, 0, &r, &msg), 0);
    CHECK_EQ_STR(ready_status_name(r.status), ready_status_name(spelled[i].status));
    CHECK_EQ_STR(msg.data ? msg.data : "", spelled[i].message);
    buf_free(&msg);
    cJSON_Delete(o);
  }
  /* An unschedulable Pod: InProgress for 15 s after its creation (and says when to look again),
   * then Failed. */
  {
    const char *pod = POD(",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"",
                          "\"phase\":\"Pending\"," CONDS("{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\"}"));
    cJSON *o = cJSON_Parse(pod);
    ready_result_t r;
    buf_t msg = BUF_INIT;
    int64_t created = 1767225600; /* 2026-01-01T00:00:00Z */
    CHECK_EQ_INT(ready_compute(o, READY_WAIT, created + 5, &r, &msg), 0);
    CHECK_EQ_STR(ready_status_name(r.status), "InProgress");
    CHECK_EQ_STR(msg.data, "Pod has not been scheduled");
    CHECK_EQ_INT(r.recheck_at, created + 15);
    CHECK_EQ_INT(ready_compute(o, READY_WAIT, created + 15, &r, &msg), 0);
    CHECK_EQ_STR(ready_status_name(r.status), "Failed");
    CHECK_EQ_STR(msg.data, "Pod could not be scheduled");
    CHECK_EQ_INT(r.recheck_at, 0);
    buf_free(&msg);
    cJSON_Delete(o);
  }
  CHECK_EQ_INT(ready_kind_needs_watch("", "ConfigMap", READY_WAIT), 0);
  CHECK_EQ_INT(ready_kind_needs_watch("apps", "Deployment", READY_WAIT), 1);
  CHECK_EQ_INT(ready_kind_needs_watch("example.com", "Foo", READY_WAIT), 1);
  CHECK_EQ_INT(ready_kind_needs_watch("apps", "Deployment", READY_HOOK), 0);
  CHECK_EQ_INT(ready_kind_needs_watch("batch", "Job", READY_HOOK), 1);
  buf_t d = BUF_INIT;
  CHECK_EQ_INT(ready_describe("Deployment", "ns", "web", READY_IN_PROGRESS, "Updated: 1/3", &d), 0);
  CHECK_EQ_STR(d.data, "resource Deployment/ns/web not ready. status: InProgress, message: Updated: 1/3");
  buf_reset(&d);
  CHECK_EQ_INT(ready_describe_undeleted("Pod", "ns", "web", READY_TERMINATING, "Resource scheduled for deletion", &d), 0);
  CHECK_EQ_STR(d.data, "resource Pod/ns/web still exists. status: Terminating, message: Resource scheduled for deletion");
  buf_free(&d);

  const char *oracle = kstatus_oracle_path();
  CHECK(oracle != NULL);
  if (oracle) {
    run_mode(oracle, texts, n, READY_WAIT);
    run_mode(oracle, texts, n, READY_WAIT_JOBS);
    run_mode(oracle, texts, n, READY_HOOK);
    if (mismatches) fprintf(stderr, "%d of %d verdicts differ from Helm's\n", mismatches, 3 * n);
  }
  for (int i = 0; i < n; i++) free(texts[i]);
  free(texts);
  return t_done();
}
