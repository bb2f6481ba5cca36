/* The controller's metrics and health endpoints (two loop/httpd servers, or one when both flags
 * name the same address): GET /metrics (base/metrics.h's registry, plus the process_* metrics and
 * the chart sources' counters read when scraped), GET /healthz (the loop answers: it is alive) and
 * GET /readyz (the caller's readiness check: 200, or 503 with why). */
#pragma once
#include <stdbool.h>
#include <uv.h>
#include "base/buf.h"
#include "helm/source/cache.h"
#include "helm/source/source.h"
#include "loop/httpd.h"

typedef struct telemetry_s telemetry_t;

typedef struct telemetry_opts_s {
  const char *metrics_addr; /* listen address of /metrics; "0" or NULL: none */
  const char *health_addr;  /* of /healthz and /readyz; "0" or NULL: none */
  /* Readiness: true when ready, else false with why in the buffer. */
  bool (*ready)(void *data, buf_t *why);
  void *data;
  chart_cache_t *charts; /* the chart cache (NULL: no chart metrics); outlives the telemetry */
  const source_t *source; /* the chart sources (NULL: none); outlives the telemetry */
  httpd_limits_t limits; /* for both servers (0 fields: httpd's defaults) */
} telemetry_opts_t;

/* Starts the servers on loop; 0 and *out (NULL when both are disabled), or a negative code with err
 * naming the flag and the address. */
int telemetry_start(uv_loop_t *loop, const telemetry_opts_t *o, telemetry_t **out, buf_t *err);
/* Closes the servers (t may be NULL); cb runs once everything is freed (at once when t is NULL). */
void telemetry_close(telemetry_t *t, void (*cb)(void *data), void *data);
