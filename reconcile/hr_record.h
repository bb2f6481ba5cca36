/* Release records as the reconciler sees them, on top of helm/release (Helm's storage format). */
#pragma once
#include <cjson/cJSON.h>
#include "base/buf.h"
#include "reconcile/hr_spec.h"

typedef struct hr_docs_s hr_docs_t;

typedef struct hr_rec_s {
  long long version;
  char *status;        /* deployed, superseded, failed, pending-install, pending-upgrade, ... */
  char *manifest;
  char *secret_name;
  void *rel;           /* the full helm/release record (release_t) */
} hr_rec_t;

/* Decodes a release Secret (as listed from the API); -22 with err when it is not a release. */
int hr_rec_from_secret(const cJSON *secret, hr_rec_t *out, buf_t *err);
/* Builds the record of revision `version` for spec s with the rendered manifest. */
int hr_rec_new(const hr_spec_t *s, long long version, const hr_docs_t *docs, const char *status,
               const char *description, const hr_rec_t *first, hr_rec_t *out, buf_t *err);
/* Changes a record's status and description (and its last-deployed time when deployed). */
int hr_rec_set_status(hr_rec_t *r, const char *status, const char *description);
/* True when r was made from the same inputs as s: chart metadata, templates, chart values, values
 * and namespace. (Not the manifest: templates may print the revision.) */
int hr_rec_matches(const hr_rec_t *r, const hr_spec_t *s);
/* The Secret object (JSON text, malloc'd) that stores r in namespace ns, for a create or an update. */
char *hr_rec_secret_json(const hr_rec_t *r, const char *ns, int creating);
/* History entry for status.history. */
cJSON *hr_rec_history_json(const hr_rec_t *r);
/* Frees the record. */
void hr_rec_free(hr_rec_t *r);

typedef struct hr_doc_s {
  char *source;         /* <chart>/templates/<file> */
  char *api_version, *kind, *name, *ns;
  cJSON *obj;           /* the object to apply (with ownership metadata), NULL for old manifests */
  int keep;             /* helm.sh/resource-policy: keep */
  /* Filled by the reconciler from discovery: */
  char *group, *version, *resource;
  int namespaced, mapped;
} hr_doc_t;

struct hr_docs_s {
  hr_doc_t *v;
  size_t n;
  char *manifest;       /* the release manifest, exactly as Helm stores it */
  char *notes;          /* rendered NOTES.txt, "" when none */
};

/* Renders spec s's chart with its values as revision `revision` (an install or an upgrade) for a
 * server of kube_version (NULL: Helm's default) into documents in install order and the release
 * manifest, as Helm does; an error (-22, or -95 for what rudder cannot do yet) names the template
 * file and line. */
int hr_render(const hr_spec_t *s, long long revision, int upgrade, const char *kube_version, hr_docs_t *out,
              buf_t *err);
/* Parses a stored release manifest into documents (in uninstall order when `uninstall`). */
int hr_docs_from_manifest(const char *manifest, int uninstall, hr_docs_t *out, buf_t *err);
/* Frees the documents. */
void hr_docs_free(hr_docs_t *d);
