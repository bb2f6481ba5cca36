/* Newline-delimited JSON watch events ({"type": ..., "object": {...}}) from a byte stream in any split. */
#pragma once
#include <stddef.h>
#include <cjson/cJSON.h>
#include "base/buf.h"
#include "watch/jscan.h"

/* The deepest object read, in lists and in watch events alike: cJSON's limit, less the level of
 * the event that wraps an object. Deeper objects are skipped (and reported) whole. */
#define WATCH_MAX_NESTING (CJSON_NESTING_LIMIT - 1)

typedef struct watch_ndjson_s watch_ndjson_t;

/* Receives one event; obj is the event's "object" (owned by the event root, freed after the call
 * unless taken with watch_ndjson_take). Nonzero stops the stream with that code. */
typedef int (*watch_ndjson_cb)(watch_ndjson_t *nd, const char *type, cJSON *obj, void *data);
/* Receives an event that was skipped (too long, nested too deep, not JSON, or not an event), with
 * what a light scan of its text found (empty fields when nothing) and why. Nonzero stops the stream. */
typedef int (*watch_ndjson_bad_cb)(watch_ndjson_t *nd, const watch_objmeta_t *meta, const char *why, void *data);

struct watch_ndjson_s {
  buf_t line;        /* an incomplete line carried over between feeds */
  size_t max_line;   /* longest event accepted */
  watch_ndjson_cb cb;
  void *data;
  cJSON *cur;        /* the event being delivered */
  char err[256];     /* what went wrong, once feed returned an error */
  size_t events;
  /* With bad set, events that cannot be delivered are skipped and reported instead of ending the
   * stream. */
  watch_ndjson_bad_cb bad;
  watch_jscan_t *skip;   /* scanning the rest of an overlong event, or NULL */
  watch_objmeta_t *skip_meta;
  size_t skip_len;
  int drop_managed; /* object.metadata.managedFields left out before the parse */
  buf_t cut;        /* the event's text without it */
};

/* Prepares a decoder with a line bound (0: 16 MiB). */
void watch_ndjson_init(watch_ndjson_t *nd, size_t max_line, watch_ndjson_cb cb, void *data);
/* Feeds bytes; 0, a callback's nonzero code, or (without a bad callback) UV_E2BIG for an overlong
 * line or UV_EPROTO for bad JSON. */
int watch_ndjson_feed(watch_ndjson_t *nd, const char *p, size_t n);
/* Takes ownership of the current event's object during the callback (NULL when none). */
cJSON *watch_ndjson_take(watch_ndjson_t *nd);
/* on: each event's object.metadata.managedFields (exactly that path, an array) is cut from its
 * text before the parse, for readers that never look at it: the parse then builds no tree for it
 * (on a Deployment written by two managers, a third of the event or more). The cut array is not
 * validated: an event that is broken only inside it is delivered. Off by default. */
void watch_ndjson_drop_managed_fields(watch_ndjson_t *nd, int on);
/* Frees the decoder's memory. */
void watch_ndjson_free(watch_ndjson_t *nd);
