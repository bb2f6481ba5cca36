/* values.schema.json validation as Helm 4.3.1 does it (pkg/chart/common/util/jsonschema.go with
 * santhosh-tekuri/jsonschema v6.0.3): draft-04/06/07/2019-09/2020-12 keywords, $ref inside the
 * document and to other documents (asked of a loader the caller gives), Go's error tree printed
 * as the library prints it. Patterns run on PCRE2 with match limits. No I/O of its own. */
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

/* Fetches a document a schema refers to: url is absolute, without fragment, its scheme file,
 * http or https (every other scheme fails as Helm's `no URLLoader registered for "URL"`). 0 with
 * the document's text appended to doc; SCHEMA_EINVAL with the reason in err (what Helm prints
 * after `failing loading "URL": `); SCHEMA_ENOMEM. Called from the validating thread. */
typedef int (*schema_load_fn)(void *ctx, const char *url, buf_t *doc, buf_t *err);
typedef struct schema_loader_s {
  schema_load_fn load;
  void *ctx;
  /* Optional: Helm's warnings while references are resolved ("unresolved URN reference ignored;
   * using permissive schema", with attribute key "urn"), each once per validation. */
  void (*warn)(void *ctx, const char *msg, const char *key, const char *value);
} schema_loader_t;

/* Limits on the documents one validation loads (whatever the loader's own limits). */
#define SCHEMA_MAX_DOCS 64                   /* documents besides values.schema.json */
#define SCHEMA_MAX_DOC_BYTES ((size_t)8 << 20) /* 8 MiB each */

/* schema_validate that resolves $ref to other documents as Helm's compiler does: every
 * reference in the schema (and in the documents it loads) is resolved against its base URL
 * (file:///values.schema.json, or the $id in effect) before validating, each document loaded
 * once, through ld (NULL: every load fails as with no loader registered). The loaded documents
 * are checked against their metaschema; a failure is Helm's `failing loading "URL": REASON`. */
int schema_validate_with(const char *schema_json, size_t len, const cJSON *values, const schema_loader_t *ld,
                         buf_t *out);
