/* Readiness as Helm 4's watcher wait judges it (kstatus rules plus Helm's own readers); see ready.h
 * and README.md. Field lookups follow the Go accessors kstatus uses, because their corner cases
 * decide verdicts: a missing field takes the rule's default, a field of the wrong type is either a
 * default (GetIntField, GetStringField) or an error that makes the object Unknown (NestedInt64,
 * NestedString, the typed conversion of status.conditions). A JSON number counts as an integer when
 * its value is integral and fits int64, which is what Go's decoder does with every number the API
 * server writes. */
#include "helm/action/ready.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* How long a Pod may stay unschedulable before kstatus calls it Failed (its ScheduleWindow). */
#define READY__SCHEDULE_WINDOW 15

typedef struct {
  const cJSON *obj;
  ready_result_t *r;
  buf_t *msg;
  int64_t now;
  int nomem;
} rd_t;

/* ---- the Go accessors ---------------------------------------------------------------------- */

enum { NF_MISSING, NF_FOUND, NF_ERROR };

static int rd__is_int(const cJSON *v) {
  if (!cJSON_IsNumber(v)) return 0;
  double d = v->valuedouble;
  return d == floor(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0;
}

static const char *rd__type_name(const cJSON *v) {
  if (cJSON_IsString(v)) return "string";
  if (cJSON_IsBool(v)) return "bool";
  if (cJSON_IsNumber(v)) return rd__is_int(v) ? "int64" : "float64";
  if (cJSON_IsArray(v)) return "[]interface {}";
  if (cJSON_IsObject(v)) return "map[string]interface {}";
  return "<nil>";
}

static void rd__err(rd_t *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rd__err(rd_t *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->r->error, sizeof d->r->error, fmt, ap);
  va_end(ap);
}

/* unstructured.NestedFieldNoCopy: a null or missing step is "missing"; a step through something that
 * is not an object is an error. */
static int rd__nested(rd_t *d, const cJSON *o, const cJSON **out, int n, const char *const *path) {
  const cJSON *v = o;
  *out = NULL;
  for (int i = 0; i < n; i++) {
    if (!v || cJSON_IsNull(v)) return NF_MISSING;
    if (!cJSON_IsObject(v)) {
      if (d) rd__err(d, ".%s accessor error: value is of the type %s, expected map[string]interface{}", path[i],
                     rd__type_name(v));
      return NF_ERROR;
    }
    v = cJSON_GetObjectItemCaseSensitive(v, path[i]);
    if (!v) return NF_MISSING;
  }
  *out = v;
  return NF_FOUND;
}

#define RD_PATH(...) (sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *)), \
                     ((const char *const[]){__VA_ARGS__})

/* kstatus's GetIntField: anything but an integer at the path gives the default. */
static int64_t rd__int(const cJSON *o, int64_t def, int n, const char *const *path) {
  const cJSON *v;
  if (rd__nested(NULL, o, &v, n, path) != NF_FOUND || !rd__is_int(v)) return def;
  return (int64_t)v->valuedouble;
}
#define RD_INT(o, def, ...) rd__int(o, def, RD_PATH(__VA_ARGS__))

/* kstatus's GetStringField. */
static const char *rd__str(const cJSON *o, const char *def, int n, const char *const *path) {
  const cJSON *v;
  if (rd__nested(NULL, o, &v, n, path) != NF_FOUND || !cJSON_IsString(v)) return def;
  return v->valuestring;
}
#define RD_STR(o, def, ...) rd__str(o, def, RD_PATH(__VA_ARGS__))

/* unstructured.NestedInt64: NF_MISSING, NF_FOUND (*val set) or NF_ERROR (message in d->r->error). */
static int rd__nested_int64(rd_t *d, const char *what, int64_t *val, int n, const char *const *path) {
  const cJSON *v;
  int rc = rd__nested(d, d->obj, &v, n, path);
  if (rc == NF_FOUND && !rd__is_int(v)) {
    rd__err(d, "looking up %s from resource: accessor error: value is of the type %s, expected int64", what,
            rd__type_name(v));
    return NF_ERROR;
  }
  if (rc == NF_FOUND) *val = (int64_t)v->valuedouble;
  return rc;
}

/* unstructured's getNestedString (GetKind, GetName): "" unless a string is there. */
static const char *rd__meta_str(const cJSON *o, const char *a, const char *b) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
  if (b) v = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, b) : NULL;
  return cJSON_IsString(v) ? v->valuestring : "";
}

/* The typed view of status.conditions kstatus converts to (type, status, reason, message strings):
 * 0, or -1 with the reason in d->r->error when the conversion fails. */
static int rd__conditions_ok(rd_t *d) {
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(d->obj, "status");
  if (!st || cJSON_IsNull(st)) return 0;
  if (!cJSON_IsObject(st)) {
    rd__err(d, "cannot restore struct from: %s", rd__type_name(st));
    return -1;
  }
  const cJSON *cs = cJSON_GetObjectItemCaseSensitive(st, "conditions");
  if (!cs || cJSON_IsNull(cs)) return 0;
  if (!cJSON_IsArray(cs)) {
    rd__err(d, "cannot restore slice from %s", cJSON_IsObject(cs) ? "map" : rd__type_name(cs));
    return -1;
  }
  static const char *const fields[] = {"type", "status", "reason", "message"};
  const cJSON *c;
  cJSON_ArrayForEach(c, cs) {
    if (cJSON_IsNull(c)) continue;
    if (!cJSON_IsObject(c)) {
      rd__err(d, "cannot restore struct from: %s", rd__type_name(c));
      return -1;
    }
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
      const cJSON *f = cJSON_GetObjectItemCaseSensitive(c, fields[i]);
      if (f && !cJSON_IsNull(f) && !cJSON_IsString(f)) {
        rd__err(d, "cannot convert %s to %s", rd__type_name(f), i == 1 ? "v1.ConditionStatus" : "string");
        return -1;
      }
    }
  }
  return 0;
}

static const cJSON *rd__conditions(const cJSON *obj) {
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(obj, "status");
  const cJSON *cs = cJSON_IsObject(st) ? cJSON_GetObjectItemCaseSensitive(st, "conditions") : NULL;
  return cJSON_IsArray(cs) ? cs : NULL;
}

/* A condition's field as the typed conversion gives it: "" when missing or null. */
static const char *rd__cf(const cJSON *c, const char *k) {
  const cJSON *f = cJSON_IsObject(c) ? cJSON_GetObjectItemCaseSensitive(c, k) : NULL;
  return cJSON_IsString(f) ? f->valuestring : "";
}

static int rd__cond_is(const cJSON *c, const char *type, const char *status) {
  return strcmp(rd__cf(c, "type"), type) == 0 && strcmp(rd__cf(c, "status"), status) == 0;
}

/* ---- results ------------------------------------------------------------------------------- */

static void rd__set(rd_t *d, ready_status_t s, const char *text) {
  d->r->status = s;
  buf_reset(d->msg);
  if (buf_puts(d->msg, text)) d->nomem = 1;
}

static void rd__setf(rd_t *d, ready_status_t s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void rd__setf(rd_t *d, ready_status_t s, const char *fmt, ...) {
  va_list ap;
  d->r->status = s;
  buf_reset(d->msg);
  va_start(ap, fmt);
  if (buf_vprintf(d->msg, fmt, ap)) d->nomem = 1;
  va_end(ap);
}

static void rd__unknown(rd_t *d) {
  d->r->status = READY_UNKNOWN;
  buf_reset(d->msg);
}

/* Go's int arithmetic wraps; C's signed arithmetic must not overflow. */
static int64_t rd__sub(int64_t a, int64_t b) {
  return (int64_t)((uint64_t)a - (uint64_t)b);
}

/* ---- kstatus's rules per kind ------------------------------------------------------------- */

static void rd__always_ready(rd_t *d) {
  rd__set(d, READY_CURRENT, "Resource is always ready");
}

static void rd__statefulset(rd_t *d) {
  const cJSON *o = d->obj;
  if (strcmp(RD_STR(o, "", "spec", "updateStrategy", "type"), "OnDelete") == 0) {
    rd__set(d, READY_CURRENT, "StatefulSet is using the ondelete update strategy");
    return;
  }
  int64_t spec = RD_INT(o, 1, "spec", "replicas");
  int64_t ready = RD_INT(o, 0, "status", "readyReplicas");
  int64_t current = RD_INT(o, 0, "status", "currentReplicas");
  int64_t updated = RD_INT(o, 0, "status", "updatedReplicas");
  int64_t replicas = RD_INT(o, 0, "status", "replicas");
  int64_t partition = RD_INT(o, -1, "spec", "updateStrategy", "rollingUpdate", "partition");
  if (spec > replicas) return rd__setf(d, READY_IN_PROGRESS, "Replicas: %lld/%lld", (long long)replicas, (long long)spec);
  if (spec > ready) return rd__setf(d, READY_IN_PROGRESS, "Ready: %lld/%lld", (long long)ready, (long long)spec);
  if (replicas > spec)
    return rd__setf(d, READY_IN_PROGRESS, "Pending termination: %lld", (long long)rd__sub(replicas, spec));
  if (partition != -1) {
    if (updated < rd__sub(spec, partition))
      return rd__setf(d, READY_IN_PROGRESS, "updated: %lld/%lld", (long long)updated,
                      (long long)rd__sub(spec, partition));
    return rd__setf(d, READY_CURRENT, "Partition rollout complete. updated: %lld", (long long)updated);
  }
  if (spec > current) return rd__setf(d, READY_IN_PROGRESS, "current: %lld/%lld", (long long)current, (long long)spec);
  if (strcmp(RD_STR(o, "", "status", "currentRevision"), RD_STR(o, "", "status", "updateRevision")) != 0)
    return rd__set(d, READY_IN_PROGRESS, "Waiting for updated revision to match current");
  rd__setf(d, READY_CURRENT, "All replicas scheduled as expected. Replicas: %lld", (long long)replicas);
}

static void rd__deployment(rd_t *d) {
  const cJSON *o = d->obj, *c;
  /* Without progressDeadlineSeconds the controller never reports progress, so it counts as made. */
  int progressing = RD_INT(o, 2147483647, "spec", "progressDeadlineSeconds") == 2147483647;
  int available = 0;
  cJSON_ArrayForEach(c, rd__conditions(o)) {
    const char *type = rd__cf(c, "type");
    if (strcmp(type, "Progressing") == 0) {
      if (strcmp(rd__cf(c, "reason"), "ProgressDeadlineExceeded") == 0)
        return rd__set(d, READY_FAILED, "Progress deadline exceeded");
      if (strcmp(rd__cf(c, "status"), "True") == 0 && strcmp(rd__cf(c, "reason"), "NewReplicaSetAvailable") == 0)
        progressing = 1;
    } else if (strcmp(type, "Available") == 0 && strcmp(rd__cf(c, "status"), "True") == 0) {
      available = 1;
    }
  }
  int64_t spec = RD_INT(o, 1, "spec", "replicas");
  int64_t replicas = RD_INT(o, 0, "status", "replicas");
  int64_t updated = RD_INT(o, 0, "status", "updatedReplicas");
  int64_t ready = RD_INT(o, 0, "status", "readyReplicas");
  int64_t avail = RD_INT(o, 0, "status", "availableReplicas");
  if (spec > replicas) return rd__setf(d, READY_IN_PROGRESS, "Replicas: %lld/%lld", (long long)replicas, (long long)spec);
  if (spec > updated) return rd__setf(d, READY_IN_PROGRESS, "Updated: %lld/%lld", (long long)updated, (long long)spec);
  if (replicas > spec)
    return rd__setf(d, READY_IN_PROGRESS, "Pending termination: %lld", (long long)rd__sub(replicas, spec));
  if (updated > avail)
    return rd__setf(d, READY_IN_PROGRESS, "Available: %lld/%lld", (long long)avail, (long long)updated);
  if (spec > ready) return rd__setf(d, READY_IN_PROGRESS, "Ready: %lld/%lld", (long long)ready, (long long)spec);
  if (!progressing) return rd__set(d, READY_IN_PROGRESS, "ReplicaSet not Available");
  if (!available) return rd__set(d, READY_IN_PROGRESS, "Deployment not Available");
  rd__setf(d, READY_CURRENT, "Deployment is available. Replicas: %lld", (long long)replicas);
}

static void rd__replicaset(rd_t *d) {
  const cJSON *o = d->obj, *c;
  cJSON_ArrayForEach(c, rd__conditions(o)) {
    if (rd__cond_is(c, "ReplicaFailure", "True"))
      return rd__set(d, READY_IN_PROGRESS, "Replica Failure condition. Check Pods");
  }
  int64_t spec = RD_INT(o, 1, "spec", "replicas");
  int64_t replicas = RD_INT(o, 0, "status", "replicas");
  int64_t ready = RD_INT(o, 0, "status", "readyReplicas");
  int64_t avail = RD_INT(o, 0, "status", "availableReplicas");
  int64_t labelled = RD_INT(o, 0, "status", "fullyLabeledReplicas");
  if (spec > labelled) return rd__setf(d, READY_IN_PROGRESS, "Labelled: %lld/%lld", (long long)labelled, (long long)spec);
  if (spec > avail) return rd__setf(d, READY_IN_PROGRESS, "Available: %lld/%lld", (long long)avail, (long long)spec);
  if (spec > ready) return rd__setf(d, READY_IN_PROGRESS, "Ready: %lld/%lld", (long long)ready, (long long)spec);
  if (replicas > spec)
    return rd__setf(d, READY_IN_PROGRESS, "Pending termination: %lld", (long long)rd__sub(replicas, spec));
  rd__setf(d, READY_CURRENT, "ReplicaSet is available. Replicas: %lld", (long long)replicas);
}

static void rd__daemonset(rd_t *d) {
  const cJSON *o = d->obj;
  int64_t v;
  const char *kind = rd__meta_str(o, "kind", NULL);
  /* The controller always sets both once it has acted, so their absence means it has not yet. */
  int rc = rd__nested_int64(d, "metadata.generation", &v, RD_PATH("metadata", "generation"));
  if (rc == NF_ERROR) return rd__unknown(d);
  if (rc == NF_MISSING) return rd__setf(d, READY_IN_PROGRESS, "%s metadata.generation not found", kind);
  rc = rd__nested_int64(d, "status.observedGeneration", &v, RD_PATH("status", "observedGeneration"));
  if (rc == NF_ERROR) return rd__unknown(d);
  if (rc == NF_MISSING) return rd__setf(d, READY_IN_PROGRESS, "%s status.observedGeneration not found", kind);
  int64_t desired = RD_INT(o, -1, "status", "desiredNumberScheduled");
  int64_t current = RD_INT(o, 0, "status", "currentNumberScheduled");
  int64_t updated = RD_INT(o, 0, "status", "updatedNumberScheduled");
  int64_t avail = RD_INT(o, 0, "status", "numberAvailable");
  int64_t ready = RD_INT(o, 0, "status", "numberReady");
  if (desired == -1) return rd__set(d, READY_IN_PROGRESS, "Missing .status.desiredNumberScheduled");
  if (desired > current) return rd__setf(d, READY_IN_PROGRESS, "Current: %lld/%lld", (long long)current, (long long)desired);
  if (desired > updated) return rd__setf(d, READY_IN_PROGRESS, "Updated: %lld/%lld", (long long)updated, (long long)desired);
  if (desired > avail) return rd__setf(d, READY_IN_PROGRESS, "Available: %lld/%lld", (long long)avail, (long long)desired);
  if (desired > ready) return rd__setf(d, READY_IN_PROGRESS, "Ready: %lld/%lld", (long long)ready, (long long)desired);
  rd__setf(d, READY_CURRENT, "All replicas scheduled as expected. Replicas: %lld", (long long)desired);
}

static void rd__pvc(rd_t *d) {
  const char *phase = RD_STR(d->obj, "unknown", "status", "phase");
  if (strcmp(phase, "Bound") != 0) return rd__setf(d, READY_IN_PROGRESS, "PVC is not Bound. phase: %s", phase);
  rd__set(d, READY_CURRENT, "PVC is Bound");
}

/* metav1.Time from an RFC 3339 text as Go's time.Parse reads it; 0 (the zero time) when it does not
 * parse. Only whole seconds matter here. */
static int rd__rfc3339(const char *s, int64_t *out) {
  int Y, M, D, h, m, sec, n = 0;
  if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &Y, &M, &D, &h, &m, &sec, &n) != 6 || n != 19) return -1;
  if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 59) return -1;
  static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int leap = (Y % 4 == 0 && Y % 100 != 0) || Y % 400 == 0;
  if (D > mdays[M - 1] || (M == 2 && D == 29 && !leap)) return -1;
  const char *p = s + 19;
  if (*p == '.') {
    p++;
    if (*p < '0' || *p > '9') return -1;
    while (*p >= '0' && *p <= '9') p++;
  }
  int64_t off = 0;
  if (*p == 'Z') {
    p++;
  } else if (*p == '+' || *p == '-') {
    int oh, om, k = 0;
    if (sscanf(p + 1, "%2d:%2d%n", &oh, &om, &k) != 2 || k != 5 || oh > 23 || om > 59) return -1;
    off = (oh * 3600 + om * 60) * (*p == '-' ? -1 : 1);
    p += 6;
  } else {
    return -1;
  }
  if (*p) return -1;
  /* Days from the civil date (proleptic Gregorian), no timegm (locale- and TZ-free). */
  int64_t y = Y - (M <= 2);
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (M + (M > 2 ? -3 : 9)) + 2) / 5 + D - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  int64_t days = era * 146097 + doe - 719468;
  *out = days * 86400 + h * 3600 + m * 60 + sec - off;
  return 0;
}

static void rd__pod(rd_t *d) {
  const cJSON *o = d->obj, *c;
  const char *phase = RD_STR(o, "", "status", "phase");
  if (strcmp(phase, "Succeeded") == 0) return rd__set(d, READY_CURRENT, "Pod has completed successfully");
  if (strcmp(phase, "Failed") == 0) return rd__set(d, READY_CURRENT, "Pod has completed, but not successfully");
  if (strcmp(phase, "Running") == 0) {
    cJSON_ArrayForEach(c, rd__conditions(o)) {
      if (rd__cond_is(c, "Ready", "True")) return rd__set(d, READY_CURRENT, "Pod is Ready");
    }
    const cJSON *css;
    int rc = rd__nested(d, o, &css, RD_PATH("status", "containerStatuses"));
    if (rc == NF_ERROR) return rd__unknown(d);
    if (rc == NF_FOUND && !cJSON_IsArray(css)) {
      rd__err(d, ".status.containerStatuses accessor error: value is of the type %s, expected []interface{}",
              rd__type_name(css));
      return rd__unknown(d);
    }
    int crashing = 0;
    buf_reset(d->msg);
    cJSON_ArrayForEach(c, (rc == NF_FOUND ? css : NULL)) {
      const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name");
      const cJSON *state = cJSON_GetObjectItemCaseSensitive(c, "state");
      const cJSON *w = cJSON_IsObject(state) ? cJSON_GetObjectItemCaseSensitive(state, "waiting") : NULL;
      const cJSON *reason = cJSON_IsObject(w) ? cJSON_GetObjectItemCaseSensitive(w, "reason") : NULL;
      if (!cJSON_IsString(name) || !cJSON_IsString(reason) || strcmp(reason->valuestring, "CrashLoopBackOff") != 0)
        continue;
      if (buf_puts(d->msg, crashing++ ? "," : "Containers in CrashLoop state: ") ||
          buf_puts(d->msg, name->valuestring))
        d->nomem = 1;
    }
    if (crashing) {
      d->r->status = READY_FAILED;
      return;
    }
    return rd__set(d, READY_IN_PROGRESS, "Pod is running but is not Ready");
  }
  if (strcmp(phase, "Pending") == 0) {
    cJSON_ArrayForEach(c, rd__conditions(o)) {
      if (!rd__cond_is(c, "PodScheduled", "False")) continue;
      if (strcmp(rd__cf(c, "reason"), "Unschedulable") != 0) break;
      int64_t created;
      if (rd__rfc3339(rd__meta_str(o, "metadata", "creationTimestamp"), &created) == 0 &&
          d->now - READY__SCHEDULE_WINDOW < created) {
        d->r->recheck_at = created + READY__SCHEDULE_WINDOW;
        return rd__set(d, READY_IN_PROGRESS, "Pod has not been scheduled");
      }
      return rd__set(d, READY_FAILED, "Pod could not be scheduled");
    }
    return rd__set(d, READY_IN_PROGRESS, "Pod is in the Pending phase");
  }
  if (!*phase) return rd__set(d, READY_IN_PROGRESS, "Pod phase not available");
  rd__err(d, "unknown phase %s", phase);
  rd__unknown(d);
}

static void rd__job(rd_t *d) {
  const cJSON *o = d->obj, *c;
  int64_t parallelism = RD_INT(o, 1, "spec", "parallelism");
  int64_t completions = RD_INT(o, parallelism, "spec", "completions");
  int64_t succeeded = RD_INT(o, 0, "status", "succeeded");
  int64_t active = RD_INT(o, 0, "status", "active");
  int64_t failed = RD_INT(o, 0, "status", "failed");
  cJSON_ArrayForEach(c, rd__conditions(o)) {
    const char *type = rd__cf(c, "type");
    if (strcmp(rd__cf(c, "status"), "True") != 0) continue;
    if (strcmp(type, "Complete") == 0)
      return rd__setf(d, READY_CURRENT, "Job Completed. succeeded: %lld/%lld", (long long)succeeded,
                      (long long)completions);
    if (strcmp(type, "Failed") == 0)
      return rd__setf(d, READY_FAILED, "Job Failed. failed: %lld/%lld", (long long)failed, (long long)completions);
  }
  if (!*RD_STR(o, "", "status", "startTime")) return rd__set(d, READY_IN_PROGRESS, "Job not started");
  rd__setf(d, READY_CURRENT, "Job in progress. success:%lld, active: %lld, failed: %lld", (long long)succeeded,
           (long long)active, (long long)failed);
}

static void rd__service(rd_t *d) {
  if (strcmp(RD_STR(d->obj, "ClusterIP", "spec", "type"), "LoadBalancer") == 0 &&
      !*RD_STR(d->obj, "", "spec", "clusterIP"))
    return rd__set(d, READY_IN_PROGRESS, "ClusterIP not set. Service type: LoadBalancer");
  rd__set(d, READY_CURRENT, "Service is ready");
}

static void rd__pdb(rd_t *d) {
  rd__set(d, READY_CURRENT, "AllowedDisruptions has been computed.");
}

static void rd__crd(rd_t *d) {
  const cJSON *c;
  cJSON_ArrayForEach(c, rd__conditions(d->obj)) {
    if (rd__cond_is(c, "NamesAccepted", "False")) return rd__set(d, READY_FAILED, rd__cf(c, "message"));
    if (strcmp(rd__cf(c, "type"), "Established") == 0) {
      if (strcmp(rd__cf(c, "status"), "False") == 0 && strcmp(rd__cf(c, "reason"), "Installing") != 0)
        return rd__set(d, READY_FAILED, rd__cf(c, "message"));
      if (strcmp(rd__cf(c, "status"), "True") == 0) return rd__set(d, READY_CURRENT, "CRD is established");
    }
  }
  rd__set(d, READY_IN_PROGRESS, "Install in progress");
}

typedef struct {
  const char *group, *kind;
  void (*fn)(rd_t *);
} rd_rule_t;

/* kstatus's table of built-in kinds with rules of their own, keyed by group and kind. */
static const rd_rule_t rd__rules[] = {
    {"", "Service", rd__service},
    {"", "Pod", rd__pod},
    {"", "Secret", rd__always_ready},
    {"", "PersistentVolumeClaim", rd__pvc},
    {"apps", "StatefulSet", rd__statefulset},
    {"apps", "DaemonSet", rd__daemonset},
    {"extensions", "DaemonSet", rd__daemonset},
    {"apps", "Deployment", rd__deployment},
    {"extensions", "Deployment", rd__deployment},
    {"apps", "ReplicaSet", rd__replicaset},
    {"extensions", "ReplicaSet", rd__replicaset},
    {"policy", "PodDisruptionBudget", rd__pdb},
    {"batch", "CronJob", rd__always_ready},
    {"", "ConfigMap", rd__always_ready},
    {"batch", "Job", rd__job},
    {"apiextensions.k8s.io", "CustomResourceDefinition", rd__crd},
};

/* The group of an apiVersion as schema.ParseGroupVersion reads it: "" for "v1", and "" for a text
 * it rejects (more than one slash), which then matches no rule. */
static size_t rd__group(const char *api_version, const char **group) {
  const char *slash = strchr(api_version, '/');
  *group = api_version;
  if (!slash) return 0;
  if (strchr(slash + 1, '/')) return (size_t)-1;
  return (size_t)(slash - api_version);
}

static int rd__is(const cJSON *obj, const char *group, const char *kind) {
  const char *g;
  size_t glen = rd__group(rd__meta_str(obj, "apiVersion", NULL), &g);
  return glen != (size_t)-1 && strlen(group) == glen && strncmp(g, group, glen) == 0 &&
         strcmp(rd__meta_str(obj, "kind", NULL), kind) == 0;
}

static const rd_rule_t *rd__rule(const cJSON *obj) {
  for (size_t i = 0; i < sizeof rd__rules / sizeof *rd__rules; i++)
    if (rd__is(obj, rd__rules[i].group, rd__rules[i].kind)) return &rd__rules[i];
  return NULL;
}

/* status.Compute: the generic properties first (deletion, observed generation, the Reconciling and
 * Stalled conditions), then the kind's own rule, then the Ready condition, then "current". */
static void rd__compute(rd_t *d) {
  const cJSON *o = d->obj, *v, *c;
  int rc = rd__nested(d, o, &v, RD_PATH("metadata", "deletionTimestamp"));
  if (rc == NF_FOUND && !cJSON_IsString(v)) {
    rd__err(d, "looking up metadata.deletionTimestamp from resource: value is of the type %s, expected string",
            rd__type_name(v));
    rc = NF_ERROR;
  }
  if (rc == NF_ERROR) return rd__unknown(d);
  if (rc == NF_FOUND && *v->valuestring) return rd__set(d, READY_TERMINATING, "Resource scheduled for deletion");

  int64_t gen, observed;
  rc = rd__nested_int64(d, "metadata.generation", &gen, RD_PATH("metadata", "generation"));
  if (rc == NF_ERROR) return rd__unknown(d);
  if (rc == NF_FOUND) {
    rc = rd__nested_int64(d, "status.observedGeneration", &observed, RD_PATH("status", "observedGeneration"));
    if (rc == NF_ERROR) return rd__unknown(d);
    if (rc == NF_FOUND && observed != gen)
      return rd__setf(d, READY_IN_PROGRESS, "%s generation is %lld, but latest observed generation is %lld",
                      rd__meta_str(o, "kind", NULL), (long long)gen, (long long)observed);
  }

  if (rd__conditions_ok(d)) return rd__unknown(d);
  cJSON_ArrayForEach(c, rd__conditions(o)) {
    if (rd__cond_is(c, "Reconciling", "True")) return rd__set(d, READY_IN_PROGRESS, rd__cf(c, "message"));
    if (rd__cond_is(c, "Stalled", "True")) return rd__set(d, READY_FAILED, rd__cf(c, "message"));
  }

  const rd_rule_t *rule = rd__rule(o);
  if (rule) return rule->fn(d);

  cJSON_ArrayForEach(c, rd__conditions(o)) {
    if (strcmp(rd__cf(c, "type"), "Ready") != 0) continue;
    const char *s = rd__cf(c, "status");
    if (strcmp(s, "True") == 0) return rd__set(d, READY_CURRENT, "Resource is Ready");
    if (strcmp(s, "False") == 0 || strcmp(s, "Unknown") == 0)
      return rd__set(d, READY_IN_PROGRESS, rd__cf(c, "message"));
  }
  rd__set(d, READY_CURRENT, "Resource is current");
}

/* ---- label selectors (the Deployment, StatefulSet and ReplicaSet readers parse spec.selector) -- */

static int rd__alnum(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

/* A label value, or the name part of a key: empty or [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, ≤ 63. */
static int rd__label_ok(const char *s, size_t n, int empty_ok) {
  if (n == 0) return empty_ok;
  if (n > 63 || !rd__alnum(s[0]) || !rd__alnum(s[n - 1])) return 0;
  for (size_t i = 0; i < n; i++)
    if (!rd__alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.') return 0;
  return 1;
}

/* A DNS-1123 subdomain (a key's prefix): lower-case labels joined by dots, ≤ 253. */
static int rd__subdomain_ok(const char *s, size_t n) {
  if (n == 0 || n > 253) return 0;
  size_t start = 0;
  for (size_t i = 0; i <= n; i++) {
    if (i < n && s[i] != '.') {
      char ch = s[i];
      if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-')) return 0;
      continue;
    }
    if (i == start || s[start] == '-' || s[i - 1] == '-') return 0;
    start = i + 1;
  }
  return 1;
}

static int rd__key_ok(const char *k) {
  const char *slash = strchr(k, '/');
  if (slash) {
    if (strchr(slash + 1, '/')) return 0;
    if (!rd__subdomain_ok(k, (size_t)(slash - k))) return 0;
    k = slash + 1;
  }
  return rd__label_ok(k, strlen(k), 0);
}

/* Whether a selector object decodes into metav1.LabelSelector (matchLabels strings, matchExpressions
 * of key, operator and values strings). */
static int rd__selector_shape_ok(const cJSON *sel) {
  const cJSON *ml = cJSON_GetObjectItemCaseSensitive(sel, "matchLabels");
  const cJSON *me = cJSON_GetObjectItemCaseSensitive(sel, "matchExpressions");
  const cJSON *e;
  if (ml && !cJSON_IsNull(ml) && !cJSON_IsObject(ml)) return 0;
  if (me && !cJSON_IsNull(me) && !cJSON_IsArray(me)) return 0;
  cJSON_ArrayForEach(e, (cJSON_IsObject(ml) ? ml : NULL)) {
    if (!cJSON_IsString(e) && !cJSON_IsNull(e)) return 0;
  }
  cJSON_ArrayForEach(e, (cJSON_IsArray(me) ? me : NULL)) {
    if (cJSON_IsNull(e)) continue;
    if (!cJSON_IsObject(e)) return 0;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "key");
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(e, "operator");
    const cJSON *vals = cJSON_GetObjectItemCaseSensitive(e, "values"), *x;
    if ((k && !cJSON_IsNull(k) && !cJSON_IsString(k)) || (op && !cJSON_IsNull(op) && !cJSON_IsString(op)) ||
        (vals && !cJSON_IsNull(vals) && !cJSON_IsArray(vals)))
      return 0;
    cJSON_ArrayForEach(x, (cJSON_IsArray(vals) ? vals : NULL)) {
      if (!cJSON_IsString(x) && !cJSON_IsNull(x)) return 0;
    }
  }
  return 1;
}

/* spec.selector as the readers turn it into a labels.Selector: 0, or -1 with d->r->error set. */
static int rd__selector(rd_t *d) {
  const cJSON *sel;
  int rc = rd__nested(d, d->obj, &sel, RD_PATH("spec", "selector"));
  if (rc == NF_ERROR) return -1;
  if (rc == NF_MISSING) {
    rd__err(d, "no selector found");
    return -1;
  }
  if (!cJSON_IsObject(sel)) {
    rd__err(d, ".spec.selector accessor error: value is of the type %s, expected map[string]interface{}",
            rd__type_name(sel));
    return -1;
  }
  if (!rd__selector_shape_ok(sel)) {
    rd__err(d, "json: cannot unmarshal spec.selector into metav1.LabelSelector");
    return -1;
  }
  const cJSON *ml = cJSON_GetObjectItemCaseSensitive(sel, "matchLabels");
  const cJSON *me = cJSON_GetObjectItemCaseSensitive(sel, "matchExpressions");
  const cJSON *e;
  /* Requirements, matchLabels first (their keys in sorted order, which only changes which error is
   * reported first), each validated as labels.NewRequirement does. */
  cJSON_ArrayForEach(e, (cJSON_IsObject(ml) ? ml : NULL)) {
    const char *v = cJSON_IsString(e) ? e->valuestring : "";
    if (!rd__key_ok(e->string) || !rd__label_ok(v, strlen(v), 1)) {
      rd__err(d, "invalid label selector requirement %s=%s", e->string, v);
      return -1;
    }
  }
  cJSON_ArrayForEach(e, (cJSON_IsArray(me) ? me : NULL)) {
    const char *key = rd__cf(e, "key"), *op = rd__cf(e, "operator");
    const cJSON *vals = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "values") : NULL, *x;
    int nvals = cJSON_IsArray(vals) ? cJSON_GetArraySize(vals) : 0;
    int set = strcmp(op, "In") == 0 || strcmp(op, "NotIn") == 0;
    int exists = strcmp(op, "Exists") == 0 || strcmp(op, "DoesNotExist") == 0;
    if (!set && !exists) {
      rd__err(d, "\"%s\" is not a valid label selector operator", op);
      return -1;
    }
    if (!rd__key_ok(key)) {
      rd__err(d, "invalid label selector key %s", key);
      return -1;
    }
    if (set && nvals == 0) {
      rd__err(d, "for 'in', 'notin' operators, values set can't be empty");
      return -1;
    }
    if (exists && nvals != 0) {
      rd__err(d, "values set must be empty for exists and does not exist");
      return -1;
    }
    cJSON_ArrayForEach(x, (cJSON_IsArray(vals) ? vals : NULL)) {
      const char *v = cJSON_IsString(x) ? x->valuestring : "";
      if (!rd__label_ok(v, strlen(v), 1)) {
        rd__err(d, "invalid label selector value %s", v);
        return -1;
      }
    }
  }
  return 0;
}

/* ---- Helm's own readers -------------------------------------------------------------------- */

/* Helm's Job reader (hooks, --wait-for-jobs): ready only once complete; no generic checks. */
static void rd__helm_job(rd_t *d) {
  const cJSON *o = d->obj, *c;
  int64_t parallelism = RD_INT(o, 1, "spec", "parallelism");
  int64_t completions = RD_INT(o, parallelism, "spec", "completions");
  int64_t succeeded = RD_INT(o, 0, "status", "succeeded");
  int64_t failed = RD_INT(o, 0, "status", "failed");
  if (rd__conditions_ok(d)) return rd__unknown(d);
  cJSON_ArrayForEach(c, rd__conditions(o)) {
    if (rd__cond_is(c, "Complete", "True"))
      return rd__setf(d, READY_CURRENT, "Job Completed. succeeded: %lld/%lld", (long long)succeeded,
                      (long long)completions);
    if (rd__cond_is(c, "Failed", "True"))
      return rd__setf(d, READY_FAILED, "Job Failed. failed: %lld/%lld", (long long)failed, (long long)completions);
  }
  rd__set(d, READY_IN_PROGRESS, "Job in progress");
}

/* Helm's Pod reader (hooks): ready once Succeeded, failed once Failed; no generic checks. */
static void rd__helm_pod(rd_t *d) {
  const char *phase = RD_STR(d->obj, "", "status", "phase");
  const char *name = rd__meta_str(d->obj, "metadata", "name");
  if (strcmp(phase, "Succeeded") == 0) return rd__setf(d, READY_CURRENT, "pod %s succeeded", name);
  if (strcmp(phase, "Failed") == 0) return rd__setf(d, READY_FAILED, "pod %s failed", name);
  rd__set(d, READY_IN_PROGRESS, "Pod in progress");
}

/* Whether an apps/v1 Deployment converts to Helm's typed Deployment (its paused check is made on the
 * typed object, so an object that does not convert is never seen as paused). Checks the fields a
 * Deployment's readiness involves. */
static int rd__typed_int(const cJSON *v) {
  return !v || cJSON_IsNull(v) || rd__is_int(v);
}
static int rd__typed_str(const cJSON *v) {
  return !v || cJSON_IsNull(v) || cJSON_IsString(v);
}
static int rd__typed_time(const cJSON *v) {
  int64_t t;
  return !v || cJSON_IsNull(v) || (cJSON_IsString(v) && rd__rfc3339(v->valuestring, &t) == 0);
}
static int rd__typed_obj(const cJSON *v) {
  return !v || cJSON_IsNull(v) || cJSON_IsObject(v);
}
#define RD_F(o, k) cJSON_GetObjectItemCaseSensitive(o, k)

/* A map of strings (labels, annotations) or a list of strings (finalizers). */
static int rd__typed_strings(const cJSON *v, int list) {
  const cJSON *x;
  if (!v || cJSON_IsNull(v)) return 1;
  if (list ? !cJSON_IsArray(v) : !cJSON_IsObject(v)) return 0;
  cJSON_ArrayForEach(x, v) {
    if (!rd__typed_str(x)) return 0;
  }
  return 1;
}

static int rd__typed_meta(const cJSON *md) {
  if (!rd__typed_obj(md)) return 0;
  if (!cJSON_IsObject(md)) return 1;
  return rd__typed_str(RD_F(md, "name")) && rd__typed_str(RD_F(md, "namespace")) &&
         rd__typed_str(RD_F(md, "uid")) && rd__typed_str(RD_F(md, "resourceVersion")) &&
         rd__typed_int(RD_F(md, "generation")) && rd__typed_time(RD_F(md, "deletionTimestamp")) &&
         rd__typed_time(RD_F(md, "creationTimestamp")) && rd__typed_strings(RD_F(md, "labels"), 0) &&
         rd__typed_strings(RD_F(md, "annotations"), 0) && rd__typed_strings(RD_F(md, "finalizers"), 1);
}

static int rd__deployment_typed(const cJSON *o) {
  const cJSON *md = RD_F(o, "metadata"), *spec = RD_F(o, "spec"), *st = RD_F(o, "status"), *x;
  if (!rd__typed_meta(md) || !rd__typed_obj(spec) || !rd__typed_obj(st)) return 0;
  if (cJSON_IsObject(spec)) {
    const cJSON *p = RD_F(spec, "paused"), *sel = RD_F(spec, "selector"), *tpl = RD_F(spec, "template");
    if (p && !cJSON_IsNull(p) && !cJSON_IsBool(p)) return 0;
    if (!rd__typed_int(RD_F(spec, "replicas")) || !rd__typed_int(RD_F(spec, "progressDeadlineSeconds")) ||
        !rd__typed_int(RD_F(spec, "minReadySeconds")) || !rd__typed_int(RD_F(spec, "revisionHistoryLimit")) ||
        !rd__typed_obj(sel) || (cJSON_IsObject(sel) && !rd__selector_shape_ok(sel)) || !rd__typed_obj(tpl) ||
        !rd__typed_obj(RD_F(spec, "strategy")))
      return 0;
    if (cJSON_IsObject(tpl)) {
      const cJSON *ps = RD_F(tpl, "spec");
      if (!rd__typed_meta(RD_F(tpl, "metadata")) || !rd__typed_obj(ps)) return 0;
      const cJSON *cs = cJSON_IsObject(ps) ? RD_F(ps, "containers") : NULL;
      if (cs && !cJSON_IsNull(cs) && !cJSON_IsArray(cs)) return 0;
      cJSON_ArrayForEach(x, (cJSON_IsArray(cs) ? cs : NULL)) {
        if (!rd__typed_obj(x) || (cJSON_IsObject(x) && !rd__typed_str(RD_F(x, "name"))) ||
            (cJSON_IsObject(x) && !rd__typed_str(RD_F(x, "image"))))
          return 0;
      }
    }
  }
  if (cJSON_IsObject(st)) {
    static const char *const ints[] = {"observedGeneration", "replicas", "updatedReplicas", "readyReplicas",
                                       "availableReplicas", "unavailableReplicas", "terminatingReplicas",
                                       "collisionCount"};
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
      if (!rd__typed_int(RD_F(st, ints[i]))) return 0;
    const cJSON *cs = RD_F(st, "conditions");
    if (cs && !cJSON_IsNull(cs) && !cJSON_IsArray(cs)) return 0;
    cJSON_ArrayForEach(x, (cJSON_IsArray(cs) ? cs : NULL)) {
      if (!rd__typed_obj(x)) return 0;
      if (cJSON_IsObject(x) && (!rd__typed_str(RD_F(x, "type")) || !rd__typed_str(RD_F(x, "status")) ||
                                !rd__typed_str(RD_F(x, "reason")) || !rd__typed_str(RD_F(x, "message"))))
        return 0;
    }
  }
  return 1;
}

static int rd__paused(const cJSON *o) {
  if (strcmp(rd__meta_str(o, "apiVersion", NULL), "apps/v1") != 0 ||
      strcmp(rd__meta_str(o, "kind", NULL), "Deployment") != 0)
    return 0;
  const cJSON *spec = RD_F(o, "spec");
  return cJSON_IsObject(spec) && cJSON_IsTrue(RD_F(spec, "paused")) && rd__deployment_typed(o);
}

/* ---- entry points -------------------------------------------------------------------------- */

int ready_compute(const cJSON *obj, ready_mode_t mode, int64_t now, ready_result_t *r, buf_t *msg) {
  rd_t d = {obj, r, msg, now, 0};
  memset(r, 0, sizeof *r);
  buf_reset(msg);
  const char *g;
  /* client-go refuses to decode an object without a kind, or with an apiVersion it cannot parse. */
  if (!cJSON_IsObject(obj) || !cJSON_IsString(RD_F(obj, "kind")) || !*RD_F(obj, "kind")->valuestring ||
      rd__group(rd__meta_str(obj, "apiVersion", NULL), &g) == (size_t)-1) {
    rd__err(&d, "Object 'Kind' is missing");
    rd__unknown(&d);
    return 0;
  }
  if (mode != READY_HOOK && rd__paused(obj)) {
    r->status = READY_CURRENT;
    r->skipped = 1;
    return 0;
  }
  if (mode != READY_WAIT && rd__is(obj, "batch", "Job")) {
    rd__helm_job(&d);
  } else if (mode == READY_HOOK && rd__is(obj, "", "Pod")) {
    rd__helm_pod(&d);
  } else if (mode == READY_HOOK) {
    rd__set(&d, READY_CURRENT, "Resource is current");
  } else if ((rd__is(obj, "apps", "Deployment") || rd__is(obj, "apps", "StatefulSet") ||
              rd__is(obj, "apps", "ReplicaSet")) &&
             rd__selector(&d)) {
    rd__unknown(&d);
  } else {
    rd__compute(&d);
  }
  return d.nomem ? -12 : 0;
}

const char *ready_status_name(ready_status_t s) {
  switch (s) {
  case READY_IN_PROGRESS: return "InProgress";
  case READY_FAILED: return "Failed";
  case READY_CURRENT: return "Current";
  case READY_TERMINATING: return "Terminating";
  case READY_NOT_FOUND: return "NotFound";
  case READY_UNKNOWN: return "Unknown";
  }
  return "Unknown";
}

int ready_kind_needs_watch(const char *group, const char *kind, ready_mode_t mode) {
  if (mode == READY_HOOK) return (!strcmp(group, "batch") && !strcmp(kind, "Job")) || (!*group && !strcmp(kind, "Pod"));
  /* Kinds with no status a controller writes that kstatus reads: Current as applied. */
  static const char *const fixed[][2] = {
      {"", "ConfigMap"},
      {"", "Secret"},
      {"", "ServiceAccount"},
      {"", "Service"}, /* the cluster IP a LoadBalancer needs is assigned when it is created */
      {"", "Endpoints"},
      {"", "LimitRange"},
      {"", "ResourceQuota"},
      {"", "PodTemplate"},
      {"batch", "CronJob"},
      {"rbac.authorization.k8s.io", "Role"},
      {"rbac.authorization.k8s.io", "ClusterRole"},
      {"rbac.authorization.k8s.io", "RoleBinding"},
      {"rbac.authorization.k8s.io", "ClusterRoleBinding"},
      {"networking.k8s.io", "NetworkPolicy"},
      {"networking.k8s.io", "IngressClass"},
      {"scheduling.k8s.io", "PriorityClass"},
      {"storage.k8s.io", "StorageClass"},
      {"admissionregistration.k8s.io", "ValidatingWebhookConfiguration"},
      {"admissionregistration.k8s.io", "MutatingWebhookConfiguration"},
  };
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
    if (!strcmp(group, fixed[i][0]) && !strcmp(kind, fixed[i][1])) return 0;
  return 1;
}

int ready_describe(const char *kind, const char *ns, const char *name, ready_status_t s, const char *message,
                   buf_t *out) {
  return buf_printf(out, "resource %s/%s/%s not ready. status: %s, message: %s", kind, ns, name,
                    ready_status_name(s), message);
}

int ready_describe_undeleted(const char *kind, const char *ns, const char *name, ready_status_t s,
                             const char *message, buf_t *out) {
  return buf_printf(out, "resource %s/%s/%s still exists. status: %s, message: %s", kind, ns, name,
                    ready_status_name(s), message);
}
