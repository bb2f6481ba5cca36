/* Builds HelmRelease status: conditions with Kubernetes semantics (lastTransitionTime
 * changes only when the status flips), revisions and history. */
#pragma once
#include <cjson/cJSON.h>
#include "reconcile/hr_spec.h"

/* Formats the current UTC time as RFC 3339 with seconds (metav1.Time). */
void hr_now_rfc3339(char out[32]);

/* Sets condition `type` in the array `conds` (created when NULL) to status/reason/message
 * at generation `gen`; keeps lastTransitionTime from `prev` (the object's existing conditions)
 * when the status did not change. Returns the array. */
cJSON *hr_condition_set(cJSON *conds, const cJSON *prev, const char *type, const char *status,
                        const char *reason, const char *message, long long gen, const char *now);

/* Returns the existing condition of `type` in `conds`, or NULL. */
const cJSON *hr_condition_find(const cJSON *conds, const char *type);
