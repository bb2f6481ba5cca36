/* Front door: micro.hello.com/v1alpha1 Microservice, the classic "CRD + Helm" resource: raw
 * Kubernetes YAML in one string (spec.resources) that becomes a Helm release named after the object.
 * The chart is built from the object: named after it, version 0.0.0, one template <name>.yaml holding
 * the string (so template actions in it render as Helm would), no values.yaml; spec.values, when
 * given, are the user's values (what `helm get values` shows). */
#include "reconcile/doors/doors.h"
#include "reconcile/doors/door_util.h"
#include <stdlib.h>
#include <string.h>

/* The kind's own finalizer, in its own group: removing rudder from a cluster is then a patch per
 * kind, and a HelmRelease's finalizer is never mistaken for this one. */
#define MS_FINALIZER "micro.hello.com/finalizer"
#define MS_RELEASE_NAME_MAX 53 /* Helm's limit on release names */

static int ms_parse(const cJSON *obj, const door_ctx_t *ctx, release_req_t *r, buf_t *err) {
  (void)ctx;
  int rc = door_parse_meta(obj, MS_FINALIZER, r, err);
  if (rc) return rc;
  /* What the engine wrote last time (it survives restarts): the deployed revision and its bookkeeping. */
  const cJSON *status = cJSON_GetObjectItemCaseSensitive(obj, "status");
  const cJSON *rev = cJSON_GetObjectItemCaseSensitive(status, "revision");
  r->applied_revision = cJSON_IsNumber(rev) && rev->valuedouble > 0 ? (long long)rev->valuedouble : 0;
  door_bookkeeping_read(status, r);
  if ((rc = door_outside_read(status, r, err))) return rc;
  /* Names first, even for a bad spec: a deletion finds the release records by them. */
  r->release_name = door_dup(r->name);
  r->target_ns = door_dup(r->ns);
  r->storage_ns = door_dup(r->ns);
  r->max_history = REQ_DEFAULT_MAX_HISTORY;
  r->interval_ms = REQ_DEFAULT_INTERVAL_MS;
  r->timeout_ms = r->uninstall_timeout_ms = REQ_DEFAULT_TIMEOUT_MS;
  r->install.crds = ACT_CRDS_CREATE;
  r->upgrade.crds = ACT_CRDS_CREATE_REPLACE;
  if (!r->release_name || !r->target_ns || !r->storage_ns) {
    buf_puts(err, "out of memory");
    return -12;
  }
  const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
  if (cJSON_IsObject(spec)) door_spec_digest(spec, NULL, r->digest);
  if (strlen(r->name) > MS_RELEASE_NAME_MAX) {
    buf_printf(err, "metadata.name: \"%s\" is longer than %d characters, the longest name a Helm release may have "
                    "(the release is named after the Microservice)", r->name, MS_RELEASE_NAME_MAX);
    return -22;
  }
  const cJSON *res = cJSON_GetObjectItemCaseSensitive(spec, "resources");
  if (!res || cJSON_IsNull(res)) {
    buf_puts(err, "spec.resources: is required: a string holding one or more Kubernetes YAML documents");
    return -22;
  }
  if (!cJSON_IsString(res)) {
    buf_puts(err, "spec.resources: must be a string holding one or more Kubernetes YAML documents");
    return -22;
  }
  if (!res->valuestring[strspn(res->valuestring, " \t\r\n")]) {
    buf_puts(err, "spec.resources: is empty: it must hold at least one Kubernetes YAML document");
    return -22;
  }
  const cJSON *values = cJSON_GetObjectItemCaseSensitive(spec, "values");
  if (values && !cJSON_IsNull(values) && !cJSON_IsObject(values)) {
    buf_puts(err, "spec.values: must be an object (the values the template actions in spec.resources see)");
    return -22;
  }
  r->values = cJSON_IsObject(values) ? cJSON_Duplicate(values, 1) : cJSON_CreateObject();
  buf_t file = BUF_INIT;
  buf_printf(&file, "%s.yaml", r->name);
  cJSON *templates = cJSON_CreateObject();
  if (!r->values || !file.data || !templates || !cJSON_AddStringToObject(templates, file.data, res->valuestring)) {
    buf_free(&file);
    cJSON_Delete(templates);
    buf_puts(err, "out of memory");
    return -12;
  }
  buf_free(&file);
  rc = door_inline_chart(r, "spec.resources", r->name, "0.0.0", NULL, NULL, templates, NULL, err);
  cJSON_Delete(templates);
  return rc;
}

/* Pending while an action runs or when the outcome is not known, Deleting once the object is being
 * deleted, else Deployed or Failed as Ready says. */
static const char *ms__phase(const release_outcome_t *o) {
  if (o->req->deleting) return "Deleting";
  if (o->progressing || !o->ready) return "Pending";
  if (!strcmp(o->ready, "True")) return "Deployed";
  if (!strcmp(o->ready, "False")) return "Failed";
  return "Pending";
}

static char *ms_status_patch(const release_outcome_t *o) {
  const release_req_t *r = o->req;
  cJSON *st = cJSON_CreateObject();
  if (!st) return NULL;
  cJSON_AddStringToObject(st, "phase", ms__phase(o));
  cJSON_AddItemToObject(st, "conditions", door_conditions(o));
  if (o->progressing) return door_status_body(st); /* the phase and Reconciling only */
  cJSON_AddNumberToObject(st, "observedGeneration", (double)r->generation);
  if (o->applied_revision > 0) cJSON_AddNumberToObject(st, "revision", (double)o->applied_revision);
  door_bookkeeping_write(st, o);
  door_outside_write(st, o);
  return door_status_body(st);
}

static const char *const ms__keep[] = {"spec", "status.conditions", "status.revision", DOOR_KEEP_BOOKKEEPING, DOOR_KEEP_OUTSIDE,
                                       "metadata.labels", "metadata.annotations", NULL};

const door_t door_microservice = {
    .kind = "Microservice",
    .group = "micro.hello.com",
    .version = "v1alpha1",
    .resource = "microservices",
    .finalizer = MS_FINALIZER,
    .cache_keep = ms__keep,
    .parse = ms_parse,
    .status_patch = ms_status_patch,
};
