/* A tolerant streaming scanner of JSON structure, for finding things in text that cJSON may not be
 * able to parse (too deep, too big, or broken inside). Nesting is followed with a counter, never
 * with recursion, so any depth costs a few bytes; only the keys of the first WATCH_JSCAN_PATH
 * levels are remembered. It reports string values at those levels and where the elements of
 * arrays at those levels begin and end. Literals and escapes are not checked: whoever parses an
 * element checks them. Cost: one pass over the bytes, no allocation except for collected strings
 * (at most WATCH_JSCAN_STR bytes). */
#pragma once
#include <stddef.h>
#include "base/buf.h"

#define WATCH_JSCAN_PATH 6
#define WATCH_JSCAN_KEY 63    /* longer keys are remembered as never matching */
#define WATCH_JSCAN_STR 16384 /* longer string values are not reported */

typedef struct watch_jscan_s watch_jscan_t;

struct watch_jscan_s {
  size_t depth;     /* containers open now */
  size_t max_depth; /* deepest nesting seen (callers may reset it) */
  size_t pos;       /* bytes consumed */
  int state;
  int err;          /* set once the structure is broken; feed then does nothing */
  int collecting, str_is_key, str_over;
  unsigned char kind[WATCH_JSCAN_PATH];           /* '{' or '[' for depths 1.. */
  char key[WATCH_JSCAN_PATH][WATCH_JSCAN_KEY + 1]; /* the current key of the object at each depth */
  buf_t str;
  unsigned want_depths; /* bit d set: string values at depth d are collected for on_string; 0: all */
  /* A string value completed at depth <= WATCH_JSCAN_PATH (s->depth, s->key say where). */
  void (*on_string)(watch_jscan_t *s, const char *v, size_t n);
  /* A key completed at depth <= WATCH_JSCAN_PATH (it is s->key[s->depth - 1]). */
  void (*on_key)(watch_jscan_t *s);
  /* An element of the array at depth s->depth (<= WATCH_JSCAN_PATH) begins at `at`, or ends just
   * before `at` (which may be the start of the next piece fed). */
  void (*on_elem)(watch_jscan_t *s, int end, const char *at);
  void *data;
};

/* Prepares a scanner; the callbacks (all optional) may be set afterwards. */
void watch_jscan_init(watch_jscan_t *s);
/* Frees the scanner's memory. */
void watch_jscan_free(watch_jscan_t *s);
/* Scans more bytes; 0, or UV_EPROTO once the structure is broken (s->err, s->pos say where). */
int watch_jscan_feed(watch_jscan_t *s, const char *p, size_t n);
/* True when one complete top-level value has been scanned (called once the input has ended). */
int watch_jscan_done(const watch_jscan_t *s);
/* True when the scanner is at depth n and the keys of levels 1..n are path[0..n-1] (NULL for an
 * array level). */
int watch_jscan_at(const watch_jscan_t *s, size_t n, const char *const *path);

/* What a light scan can tell of an object that could not be parsed. */
typedef struct watch_objmeta_s {
  char type[16];  /* of a watch event */
  char name[254];
  char ns[64];
  char rv[64];
} watch_objmeta_t;

/* Takes a string value reported by the scanner into m when it is metadata.name, .namespace or
 * .resourceVersion of the object at prefix (plen levels), or (plen 1, prefix "object") an event's
 * type; returns 1 when it did. */
int watch_objmeta_take(watch_objmeta_t *m, const watch_jscan_t *s, size_t plen, const char *const *prefix,
                       const char *v, size_t n);
/* Scans a whole text for an object's metadata at prefix; returns the deepest nesting seen. */
size_t watch_objmeta_scan(watch_objmeta_t *m, const char *p, size_t n, size_t plen, const char *const *prefix);
/* Builds "namespace/name" or "name" into buf; 0 with buf, or UV_EINVAL when no name is known. */
int watch_objmeta_key(const watch_objmeta_t *m, char *buf, size_t len);

/* True when JSON text p[0..n) holds the escape \u0000 (a NUL inside a string), which cJSON would
 * silently cut the string at. An escaped backslash before "u0000" is not one. */
int watch_json_has_nul(const char *p, size_t n);
