/* The http(s) documents a values.schema.json refers to, fetched as Helm's HTTPURLLoader fetches
 * them (pkg/chart/common/util/jsonschema.go): GET, 200 only, a 15 s timeout, proxies from the
 * environment, and its error texts. Over watch/fetch on a private loop run on the calling
 * thread, which blocks until the answer: for `rudder template` and the render workers, never for
 * the controller's loop thread. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

typedef struct schema_http_s {
  uint64_t timeout_ms; /* 0: 15 s, as Helm */
  size_t max_body;     /* 0: SCHEMA_MAX_DOC_BYTES */
} schema_http_t;

/* A schema_load_fn (helm/values/schema.h) for http:// and https:// URLs; ctx is a schema_http_t
 * (NULL: the defaults). */
int schema_http_load(void *ctx, const char *url, buf_t *doc, buf_t *err);
