/* Helm release records, byte-compatible with Helm v4.3.1's release/v1 JSON and its Secrets storage
 * driver (and readable from records Helm v3 wrote). A zero-initialised struct is Go's zero value:
 * NULL strings are "", unset times are Go's zero time, and `has_*` flags tell an empty slice or map
 * (JSON [] / {}) from a nil one (JSON null) where Helm's JSON shows the difference. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "base/buf.h"

/* A time.Time as Helm stores it: instant plus the UTC offset it was written with. */
typedef struct release_time_s {
  bool set;        /* false: Go's zero time (omitted, or 0001-01-01T00:00:00Z where always written) */
  int64_t sec;     /* Unix seconds */
  int32_t nsec;    /* 0..999999999 */
  int32_t offset;  /* seconds east of UTC; 0 prints as "Z" */
} release_time_t;

typedef struct release_file_s {
  char *name;
  unsigned char *data; /* []byte, base64 in JSON */
  size_t len;
  bool data_nonnil;    /* data is [] rather than nil when len == 0 (JSON "" rather than null) */
  release_time_t modtime;
} release_file_t;

typedef struct release_maintainer_s {
  char *name, *email, *url;
} release_maintainer_t;

typedef struct release_dependency_s {
  char *name, *version, *repository, *condition;
  char **tags;
  size_t ntags;
  bool enabled;
  cJSON *import_values; /* a JSON array, or NULL */
  char *alias;
} release_dependency_t;

typedef struct release_lock_s {
  release_time_t generated;
  char *digest;
  release_dependency_t *dependencies;
  size_t ndependencies;
  bool has_dependencies;
} release_lock_t;

typedef struct release_metadata_s {
  char *name, *home;
  char **sources;
  size_t nsources;
  char *version, *description;
  char **keywords;
  size_t nkeywords;
  release_maintainer_t *maintainers;
  size_t nmaintainers;
  char *icon, *api_version, *condition, *tags, *app_version;
  bool deprecated;
  cJSON *annotations; /* object of strings, or NULL */
  char *kube_version;
  release_dependency_t *dependencies;
  size_t ndependencies;
  char *type;
} release_metadata_t;

typedef struct release_chart_s {
  release_metadata_t *metadata; /* NULL: JSON null */
  release_lock_t *lock;         /* NULL: JSON null */
  release_file_t *templates;
  size_t ntemplates;
  bool has_templates;
  cJSON *values;                /* object, or NULL (JSON null) */
  unsigned char *schema;
  size_t schema_len;
  bool has_schema;              /* schema is non-nil (JSON "" rather than null when empty) */
  release_time_t schema_modtime;
  release_file_t *files;
  size_t nfiles;
  bool has_files;
  release_time_t modtime;
} release_chart_t;

typedef struct release_hook_s {
  char *name, *kind, *path, *manifest;
  char **events;
  size_t nevents;
  release_time_t started_at, completed_at;
  char *phase; /* "" until run; Unknown|Running|Succeeded|Failed */
  int64_t weight;
  char **delete_policies;
  size_t ndelete_policies;
  char **output_log_policies;
  size_t noutput_log_policies;
} release_hook_t;

typedef struct release_info_s {
  release_time_t first_deployed, last_deployed, deleted;
  char *description;
  char *status; /* unknown|deployed|uninstalled|superseded|failed|uninstalling|pending-install|... */
  int64_t rollback_revision;
  char *notes;
  cJSON *resources; /* passed through, normally NULL */
} release_info_t;

typedef struct release_s {
  char *name;
  release_info_t *info;   /* NULL: omitted */
  release_chart_t *chart; /* NULL: omitted */
  cJSON *config;          /* user-supplied values; NULL or {} is omitted */
  char *manifest;
  release_hook_t *hooks;
  size_t nhooks;
  int64_t version;        /* revision */
  char *namespace;
  cJSON *labels;          /* custom labels (not in the JSON; kept in the Secret's labels), or NULL */
  char *apply_method;     /* "ssa" | "csa" | "" */
} release_t;

typedef struct manifest_set_s manifest_set_t;

/* Options for the storage Secret. */
typedef struct release_secret_opts_s {
  const char *storage_namespace; /* metadata.namespace; NULL leaves it out */
  int64_t created_at;            /* label createdAt (Unix seconds, as the driver's Create); 0: none */
  int64_t modified_at;           /* label modifiedAt (as the driver's Update); 0: none */
  struct gz_tail_s *tail_cache;  /* the compressed part after info of the last write, or NULL (base/gz.h) */
} release_secret_opts_t;

/* Frees everything rel holds (not rel itself) and zeroes it. */
void release_clear(release_t *rel);
/* Frees a heap release and everything it holds. */
void release_free(release_t *rel);

/* The current time with nanoseconds and the local UTC offset, as Go's time.Now(). */
release_time_t release_time_now(void);
/* A time at Unix seconds+nsec with a UTC offset. */
release_time_t release_time_make(int64_t sec, int32_t nsec, int32_t offset);
/* Formats t as Go's time.Time MarshalJSON text (RFC 3339 with trimmed nanoseconds), without quotes;
 * the zero time gives "0001-01-01T00:00:00Z". out needs 40 bytes. */
void release_time_format(const release_time_t *t, char *out, size_t outlen);
/* Parses RFC 3339 text as Go's time.Time UnmarshalJSON; "" is the zero time. 0 or -EINVAL. */
int release_time_parse(const char *s, release_time_t *t);

/* Copies a rendered manifest set into rel as Helm's install records it: manifest, hooks (name, kind,
 * path, manifest, events, weight, delete and output-log policies; not yet run) and info.notes
 * (creating info if needed). Replaces what rel had there. 0 or -ENOMEM (rel unchanged). */
int release_set_rendered(release_t *rel, const manifest_set_t *set);

struct chart_s;
/* Sets rel->chart to chart c as the record keeps it (metadata, templates, values, schema, files, all
 * with modification time t; subcharts are not kept, as in Helm). Replaces nothing: rel->chart must be
 * NULL. 0 or -ENOMEM (rel->chart then holds what was built; release_free frees it). */
int release_set_chart(release_t *rel, const struct chart_s *c, release_time_t t);

/* Appends rel as Helm v4.3.1's json.Marshal(release) writes it: struct field order, omitempty and
 * omitzero, RFC 3339 nano times, base64 []byte, sorted map keys, Go's float and HTML-safe string
 * escaping. 0, -EINVAL (a value JSON cannot hold: NaN, a non-string map key) or -ENOMEM. */
int release_encode_json(const release_t *rel, buf_t *out);
/* Decodes release JSON as Helm v4 does, also records Helm v3 wrote ("" or 0001-01-01 times, no
 * apply_method). *out is heap-allocated (release_free). 0, -EINVAL (err says which field) or -ENOMEM. */
int release_decode_json(const char *json, size_t len, release_t **out, char *err, size_t errlen);

/* Appends the storage Secret name sh.helm.release.v1.<name>.v<version>. */
int release_secret_name(const release_t *rel, buf_t *out);
/* Builds the Secret (API JSON) Helm's Secrets driver writes for rel: type helm.sh/release.v1, labels
 * = rel->labels + name, owner=helm, status, version (+ createdAt/modifiedAt), data.release =
 * base64(base64(gzip(json))) (the driver stores base64(gzip) text; the API base64s those bytes).
 * *out is the caller's. 0, -EINVAL or -ENOMEM. */
int release_secret_json(const release_t *rel, const release_secret_opts_t *opts, cJSON **out);
/* Reads a release back from a storage Secret (API JSON) as the driver's Get: data.release decoded
 * (gzip optional, at most max_json bytes once inflated; 0 means 64 MiB), rel->labels = the Secret's
 * labels minus the system ones. 0, -EINVAL, -EFBIG or -ENOMEM; err says what. */
int release_secret_decode(const cJSON *secret, size_t max_json, release_t **out, char *err, size_t errlen);
/* The same, and the gzip member data.release held, as decoded on the way (*member malloc'd, the
 * caller's; NULL when the record is plain JSON or on failure; member may be NULL). */
int release_secret_decode_member(const cJSON *secret, size_t max_json, release_t **out, unsigned char **member,
                                 size_t *member_len, char *err, size_t errlen);
/* Decodes the driver's stored text (base64 of gzip(JSON), or of plain JSON) into a release. */
int release_decode_storage(const char *data, size_t len, size_t max_json, release_t **out, char *err, size_t errlen);

/* Appends v as Go's encoding/json marshals the equivalent map[string]any / []any / float64 / string /
 * bool / nil: keys sorted bytewise, floats in Go's shortest form ('e' below 1e-6 or from 1e21),
 * strings HTML-escaped. Raw cJSON numbers are copied as they are. 0, -EINVAL (NaN/Inf) or -ENOMEM. */
int release_go_json_append(buf_t *out, const cJSON *v);
/* Appends s as a Go JSON string (quotes, \u003c \u003e \u0026 \u2028 \u2029, invalid UTF-8 as \ufffd). */
int release_go_string_append(buf_t *out, const char *s, size_t n);
