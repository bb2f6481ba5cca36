/* Parses a JSON object through a front door's parse, as the engine calls it (the request zeroed,
 * the error buffer reset), for the door tests. */
#pragma once
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reconcile/door.h"

static bool t_door_allow_xns; /* as --allow-cross-namespace-refs */

__attribute__((unused)) static const char *t_door_chartrepo_ns = "captain-system"; /* as --chartrepo-namespace */

/* o with each of the door's cache_text subtrees (objects and arrays) made a raw node of its compact
 * text, as the informer's cache holds it (informer_opts_t.keep_text). */
static void t_door_as_cached(const door_t *door, cJSON *o) {
  for (size_t i = 0; door->cache_text && door->cache_text[i]; i++) {
    char path[256];
    snprintf(path, sizeof path, "%s", door->cache_text[i]);
    cJSON *parent = o, *x = o;
    for (char *seg = strtok(path, "."); seg && x; seg = strtok(NULL, ".")) {
      parent = x;
      x = cJSON_IsObject(x) ? cJSON_GetObjectItemCaseSensitive(x, seg) : NULL;
    }
    if (!cJSON_IsObject(x) && !cJSON_IsArray(x)) continue;
    char *text = cJSON_PrintUnformatted(x);
    cJSON *raw = cJSON_CreateRaw(text);
    free(text);
    raw->string = x->string; /* the key moves to the raw node */
    x->string = NULL;
    cJSON_ReplaceItemViaPointer(parent, x, raw);
  }
}

/* Two parses of one object agree: result, message, digest and the inline chart loaded. */
static void t_door_same(const release_req_t *a, const release_req_t *b, int rca, int rcb, const buf_t *ea,
                        const buf_t *eb) {
  CHECK_EQ_INT(rca, rcb);
  CHECK_EQ_STR(ea->data ? ea->data : "", eb->data ? eb->data : "");
  CHECK_EQ_STR(a->digest, b->digest);
  CHECK((a->chart == NULL) == (b->chart == NULL));
  if (!a->chart || !b->chart) return;
  CHECK_EQ_STR(a->chart->meta.name, b->chart->meta.name);
  CHECK_EQ_STR(a->chart->meta.version, b->chart->meta.version);
  CHECK(cJSON_Compare(a->chart->values, b->chart->values, 1));
  CHECK_EQ_INT(a->chart->ntemplates, b->chart->ntemplates);
  for (size_t i = 0; i < a->chart->ntemplates && i < b->chart->ntemplates; i++) {
    CHECK_EQ_STR(a->chart->templates[i].name, b->chart->templates[i].name);
    CHECK_EQ_STR(a->chart->templates[i].data, b->chart->templates[i].data);
  }
  CHECK_EQ_INT(a->chart->nfiles, b->chart->nfiles);
}

/* Parses as the engine does. For a door whose cache keeps subtrees as text, the object is parsed
 * in that form too, and both parses must agree. */
__attribute__((unused)) static int t_door_parse(const door_t *door, const char *json, release_req_t *s, buf_t *err) {
  cJSON *o = cJSON_Parse(json);
  if (!o) { fprintf(stderr, "bad test JSON: %s\n", json); exit(2); }
  buf_reset(err);
  memset(s, 0, sizeof *s);
  door_ctx_t ctx = {.chartrepo_namespace = t_door_chartrepo_ns, .allow_cross_namespace_refs = t_door_allow_xns};
  int rc = door->parse(o, &ctx, s, err);
  if (door->cache_text) {
    release_req_t c;
    buf_t cerr = BUF_INIT;
    memset(&c, 0, sizeof c);
    t_door_as_cached(door, o);
    int crc = door->parse(o, &ctx, &c, &cerr);
    t_door_same(s, &c, rc, crc, err, &cerr);
    req_free(&c);
    buf_free(&cerr);
  }
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
