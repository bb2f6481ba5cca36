/* values.schema.json validation as Helm 4.3.1 does it (pkg/chart/common/util/jsonschema.go with
 * santhosh-tekuri/jsonschema v6.0.3): draft-04/06/07/2019-09/2020-12 keywords, local $ref, Go's
 * error tree printed as the library prints it. Patterns run on PCRE2 with match limits. No I/O. */
#pragma once
#include <stddef.h>
#include <cjson/cJSON.h>

#include "base/buf.h"

#define SCHEMA_EINVAL (-22) /* the values do not satisfy the schema, or the schema is unusable */
#define SCHEMA_ENOMEM (-12)

/* Validates values against one schema document (JSON text). 0 when valid; otherwise SCHEMA_EINVAL
 * with out holding what JSONSchemaValidationError.Error() gives ("- at '/x': ...\n" lines), or
 * the schema's own problem (bad JSON, bad regexp, unresolvable $ref); SCHEMA_ENOMEM. */
int schema_validate(const char *schema_json, size_t len, const cJSON *values, buf_t *out);
