/* Parses a JSON object through a front door's parse, as the engine calls it (the request zeroed,
 * the error buffer reset), for the door tests. */
#pragma once
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reconcile/door.h"

static bool t_door_allow_xns; /* as --allow-cross-namespace-refs */

static int t_door_parse(const door_t *door, const char *json, release_req_t *s, buf_t *err) {
  cJSON *o = cJSON_Parse(json);
  if (!o) { fprintf(stderr, "bad test JSON: %s\n", json); exit(2); }
  buf_reset(err);
  memset(s, 0, sizeof *s);
  door_ctx_t ctx = {.chartrepo_namespace = "captain-system", .allow_cross_namespace_refs = t_door_allow_xns};
  int rc = door->parse(o, &ctx, s, err);
  cJSON_Delete(o);
  return rc;
}
