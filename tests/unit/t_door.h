/* Parses a JSON object through a front door's parse, as the engine calls it (the request zeroed,
 * the error buffer reset), for the door tests. */
#pragma once
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reconcile/door.h"

static bool t_door_allow_xns; /* as --allow-cross-namespace-refs */

__attribute__((unused)) static const char *t_door_chartrepo_ns = "captain-system"; /* as --chartrepo-namespace */

__attribute__((unused)) static int t_door_parse(const door_t *door, const char *json, release_req_t *s, buf_t *err) {
  cJSON *o = cJSON_Parse(json);
  if (!o) { fprintf(stderr, "bad test JSON: %s\n", json); exit(2); }
  buf_reset(err);
  memset(s, 0, sizeof *s);
  door_ctx_t ctx = {.chartrepo_namespace = t_door_chartrepo_ns, .allow_cross_namespace_refs = t_door_allow_xns};
  int rc = door->parse(o, &ctx, s, err);
  cJSON_Delete(o);
  return rc;
}

/* The status a door writes for outcome o, parsed back (the "status" object of its patch). */
__attribute__((unused)) static cJSON *t_door_status(const door_t *door, const release_outcome_t *o) {
  char *body = door->status_patch(o);
  CHECK(body != NULL);
  cJSON *p = body ? cJSON_Parse(body) : NULL;
  free(body);
  cJSON *st = cJSON_DetachItemFromObject(p, "status");
  cJSON_Delete(p);
  CHECK(cJSON_IsObject(st));
  return st;
}
