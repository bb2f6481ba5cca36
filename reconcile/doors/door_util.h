/* What every front door does the same way: reading fields with a path in the error, the object's
 * identity and finalizer, a chart built from text carried in the object, the digest of a spec, and
 * the conditions every kind writes (Ready, Released, Remediated, TestSuccess, Stalled, Reconciling). */
#pragma once
#include <stdbool.h>
#include <cjson/cJSON.h>
#include "base/buf.h"
#include "reconcile/door.h"

/* o[k] when it is a string (or an object), else NULL. */
const char *door_str(const cJSON *o, const char *k);
const cJSON *door_obj(const cJSON *o, const char *k);
char *door_dup(const char *s);
/* o[k] into *out when present: -22 with "<path>.<k>: must be true or false" when not a boolean. */
int door_bool(const cJSON *o, const char *k, const char *path, bool *out, buf_t *err);
/* o[k] into *out when a string (NULL when absent or null): -22 with "<path>.<k>: must be a string" else. */
int door_string(const cJSON *o, const char *k, const char *path, const char **out, buf_t *err);
/* Identity, generation, deletion, finalizers (has_finalizer: `finalizer` is among them) and the status
 * conditions of obj into r. -22 without metadata.namespace/name. */
int door_parse_meta(const cJSON *obj, const char *finalizer, release_req_t *r, buf_t *err);
/* True when a name is usable as a chart file name: printable, no '/' or '\\', not "." or "..". */
bool door_file_name_ok(const char *n);
/* Loads into r->chart the chart Helm would load from a directory holding Chart.yaml (apiVersion v2,
 * name, version, appVersion when not empty), values.yaml (values, when an object), templates/<k> for
 * every string in `templates` and crds/<k> for every string in `crds` (may be NULL). `field` names
 * the object's field in errors ("spec.chart.inline"). 0, -22 (err says what and where) or -12. */
int door_inline_chart(release_req_t *r, const char *field, const char *name, const char *version, const char *app_version,
                      const cJSON *values, const cJSON *templates, const cJSON *crds, buf_t *err);
/* The subtree x as a tree: x itself, or, when the cache keeps it as text (door_t.cache_text: a raw
 * node), that text parsed into *owned, which the caller frees (cJSON_Delete; NULL when x is a tree).
 * NULL only when out of memory. */
const cJSON *door_subtree(const cJSON *x, cJSON **owned);
/* sha256 (hex) of spec as compact JSON without the top-level keys in skip (NULL-terminated; may be NULL). */
void door_spec_digest(const cJSON *spec, const char *const *skip, char out[65]);
/* Validates a Kubernetes object name (DNS subdomain, at most max characters); 0 or -22 with err
 * saying "<field>: ...". */
int door_check_name(const char *v, const char *field, size_t max, buf_t *err);

/* Appends a valuesFrom entry to r (secret or ConfigMap `name` in the request's namespace; key NULL:
 * values.yaml; target_path NULL or "": merged at the root). field is where it was declared. 0 or -12. */
int door_add_values_from(release_req_t *r, bool secret, const char *name, const char *key, const char *target_path,
                         bool optional, const char *field, buf_t *err);
/* Appends "ns/name" to r's dependsOn. 0 or -12. */
int door_add_depends_on(release_req_t *r, const char *ns, const char *name, buf_t *err);

/* Validates a Helm release name as helm does (lowercase DNS labels joined by '.', at most 53
 * characters); 0 or -22 with "<field>: ...". */
int door_check_release_name(const char *v, const char *field, buf_t *err);
/* Validates a namespace name (a DNS label: at most 63 lowercase letters, digits and '-'). */
int door_check_namespace(const char *v, const char *field, buf_t *err);

/* The conditions array outcome o gives (a copy of the object's, updated with Kubernetes semantics);
 * a progress report sets only Reconciling. NULL when out of memory. */
cJSON *door_conditions(const release_outcome_t *o);
/* {"status": st} as compact JSON (malloc'd); takes st. NULL when out of memory. */
char *door_status_body(cJSON *st);
/* What the engine keeps in every kind's status across restarts (the digests of the inputs applied
 * and last attempted, the failure counts): read back from status into r, and written from o into st.
 * The revision is each kind's own field. DOOR_KEEP_BOOKKEEPING lists them for door_t.cache_keep. */
void door_bookkeeping_read(const cJSON *status, release_req_t *r);
void door_bookkeeping_write(cJSON *st, const release_outcome_t *o);
#define DOOR_KEEP_BOOKKEEPING \
  "status.lastAppliedDigest", "status.lastAttemptedDigest", "status.installFailures", "status.upgradeFailures", \
      "status.lastHandledReconcileAt"
/* status.outsideObjects: written from o->outside (when set), read back into r->outside. */
void door_outside_write(cJSON *st, const release_outcome_t *o);
int door_outside_read(const cJSON *status, release_req_t *r, buf_t *err);
#define DOOR_KEEP_OUTSIDE "status.outsideObjects"
/* The revision in o's history that is deployed (or the newest when none is), or NULL. */
const record_t *door_current_record(const release_outcome_t *o);
