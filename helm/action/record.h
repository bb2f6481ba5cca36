/* Release records as the actions use them: one storage Secret of Helm's format
 * (helm/release) with its revision, status and Secret name. */
#pragma once
#include <cjson/cJSON.h>
#include "base/buf.h"
#include "helm/release/release.h"

struct chart_s;
struct manifest_set_s;

/* Annotation on the record Secrets rudder writes: the uid of the object whose release it is, so that a
 * pending record left by rudder itself (a crash, a lost lease) is told from one a helm CLI is still
 * writing. Helm's storage driver ignores Secret annotations. */
#define RECORD_OWNER_ANNOTATION "rudder.dev/owner-uid"

typedef struct record_s {
  long long version;
  char *status;      /* deployed, superseded, failed, uninstalled, pending-install, pending-upgrade, ... */
  char *secret_name;
  char *owner_uid;   /* RECORD_OWNER_ANNOTATION, or NULL */
  release_t *rel;    /* the whole record */
  struct gz_tail_s *gz; /* its compressed part after info, for its next write (or NULL): kept from a
                           write made here, or taken from member on the first status change */
  unsigned char *member; /* a listed deployed record: its stored gzip member, until then (or NULL) */
  size_t member_len;
} record_t;

/* What a new record is made of. */
typedef struct record_in_s {
  const char *release_name, *namespace; /* the release and its target namespace */
  const struct chart_s *chart;          /* as rendered (dependencies processed) */
  const cJSON *config;                  /* the user's values */
  const struct manifest_set_s *set;     /* manifest, hooks and notes */
} record_in_t;

/* Decodes a release Secret (as listed from the API); -22 with err when it is not a readable record. */
int record_from_secret(const cJSON *secret, record_t *out, buf_t *err);
/* Builds revision `version` from in with status and description; first (may be NULL) gives the
 * first-deployed time of an upgrade. 0 or -12. */
int record_new(const record_in_t *in, long long version, const char *status, const char *description,
               const record_t *first, record_t *out, buf_t *err);
/* Builds revision `version` as a copy of `from` (a rollback: chart, values, manifest and hooks of the
 * old revision) with status and description. 0 or -12. */
int record_copy(const record_t *from, long long version, const char *status, const char *description,
                const record_t *first, record_t *out, buf_t *err);
/* Changes a record's status and description (NULL keeps it); a deployed record gets a new
 * last-deployed time. 0 or -12. */
int record_set_status(record_t *r, const char *status, const char *description);
/* The Secret (JSON text, malloc'd) storing r in namespace ns for a create or an update, annotated with
 * owner_uid when not NULL; NULL when out of memory. */
char *record_secret_json(const record_t *r, const char *ns, int creating, const char *owner_uid);
/* The bytes the API server stores for the record in a Secret body made by record_secret_json (its
 * data.release once decoded), or 0 when the body holds none. */
size_t record_stored_size(const char *secret_json);
/* True when r was made from these inputs: chart (metadata name, version, appVersion; templates;
 * values) and the user's values, installed into ns. Compared as text (linear in their size), for
 * when no digest of the inputs is known (the status was never written). */
int record_matches(const record_t *r, const struct chart_s *c, const cJSON *values, const char *ns);
/* Frees the record. */
void record_free(record_t *r);
/* Sorts records by version, oldest first. */
void record_sort(record_t *v, size_t n);
