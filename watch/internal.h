/* Helpers private to the watch module. Some belong in base/ (base64, file
 * reading, a string map); they live here until base/ grows them. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>

#define WATCH__CONTAINER_OF(ptr, type, field) ((type *)((char *)(ptr) - offsetof(type, field)))

/* Sets *errmsg (if errmsg is not NULL) to a malloc'd printf-formatted message. */
void watch__errf(char **errmsg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* strdup that treats NULL as NULL. */
char *watch__strdup(const char *s);
/* Decodes standard or URL-safe base64, ignoring whitespace; output NUL-terminated. 0 or UV_EINVAL/UV_ENOMEM. */
int watch__b64_decode(const char *in, size_t in_len, char **out, size_t *out_len);
/* Reads a whole (small) file, NUL-terminated; 0 or a negative UV_E* code. */
int watch__read_file(const char *path, size_t max, char **out, size_t *out_len);
/* Returns a C string describing a negative UV_E* code or mbedTLS code. */
const char *watch__strerror(int err);

/* A string-keyed hash map with owned keys and borrowed values. */
typedef struct watch_map_entry_s {
  char *key;
  void *value;
  uint64_t hash;
} watch_map_entry_t;

typedef struct watch_map_s {
  watch_map_entry_t *slots; /* open addressing; key NULL = empty, key == tombstone marker = deleted */
  size_t cap, len, used;
} watch_map_t;

#define WATCH_MAP_INIT {NULL, 0, 0, 0}

/* Returns the value stored under key, or NULL. */
void *watch_map_get(const watch_map_t *m, const char *key);
/* Stores value under key; *old receives the replaced value (or NULL). 0 or UV_ENOMEM. */
int watch_map_put(watch_map_t *m, const char *key, void *value, void **old);
/* Removes key and returns its value (or NULL). */
void *watch_map_del(watch_map_t *m, const char *key);
/* Iterates: start with *it = 0; returns 0 when done. */
int watch_map_next(const watch_map_t *m, size_t *it, const char **key, void **value);
/* Frees the map's memory (not the values). */
void watch_map_free(watch_map_t *m);
