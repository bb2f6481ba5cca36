/* Status conditions with Kubernetes semantics (lastTransitionTime
 * changes only when the status flips), revisions and history. */
#pragma once
#include <cjson/cJSON.h>
#include "base/buf.h"

/* Formats the current UTC time as RFC 3339 with seconds (metav1.Time). */
void cond_now_rfc3339(char out[32]);

/* Sets condition `type` in the array `conds` (created when NULL) to status/reason/message
 * at generation `gen`; keeps lastTransitionTime from `prev` (the object's existing conditions)
 * when the status did not change. Returns the array. */
cJSON *cond_set(cJSON *conds, const cJSON *prev, const char *type, const char *status,
                        const char *reason, const char *message, long long gen, const char *now);

/* Returns the existing condition of `type` in `conds`, or NULL. */
const cJSON *cond_find(const cJSON *conds, const char *type);

/* Removes condition `type` from conds (if there). Returns conds. */
cJSON *cond_remove(cJSON *conds, const char *type);
/* Truncates a condition message to what the API accepts (32 KiB), keeping its start (where the
 * location is) and saying how much was cut; returns msg or a static buffer's copy. */
const char *cond_message(const char *msg, char *buf, size_t len);
