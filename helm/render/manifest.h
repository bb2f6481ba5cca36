/* Rendered templates to Helm's list of manifests and hooks: the split, the sort by kind, the release
 * manifest string and the ownership metadata, as Helm 4's install pipeline does them
 * (releaseutil.SplitManifests, SortManifests with InstallOrder, action.renderResources). */
#pragma once
#include <stddef.h>
#include <cjson/cJSON.h>

typedef enum { MANIFEST_INSTALL_ORDER = 0, MANIFEST_UNINSTALL_ORDER = 1 } manifest_order_t;

typedef struct manifest_file_s {
  const char *name; /* path inside the chart, e.g. "templates/deploy.yaml" */
  const char *text; /* rendered text */
  size_t len;
} manifest_file_t;

typedef struct manifest_doc_s {
  char *source;        /* Helm's name for it: "<chart>/templates/x.yaml" (or "manifest-N" from a release) */
  char *content;       /* the document as Helm keeps it: left-trimmed, right side untouched */
  size_t content_len;
  int line;            /* 1-based line in its file where the document starts */
  int is_empty;        /* a null document (comments only): kept in the manifest, nothing to apply */
  char *api_version;   /* head fields as Helm reads them (scalars as text); "" when absent */
  char *kind;
  char *name;
  char *generate_name;
  char *namespace;
  cJSON *annotations;  /* metadata.annotations as an object of strings, or NULL */
} manifest_doc_t;

typedef struct manifest_hook_s {
  manifest_doc_t doc;
  char **events;              /* lower-case, "test-success" mapped to "test" */
  size_t nevents;
  int weight;                 /* helm.sh/hook-weight, 0 when absent or not an int */
  char **delete_policies;     /* helm.sh/hook-delete-policy, lower-cased and trimmed */
  size_t ndelete_policies;
  char **output_log_policies; /* helm.sh/hook-output-log-policy */
  size_t noutput_log_policies;
} manifest_hook_t;

typedef struct manifest_set_s {
  manifest_doc_t *docs;   /* ordinary manifests, in the requested kind order */
  size_t ndocs;
  manifest_hook_t *hooks; /* hooks, sorted by kind like Helm stores them (execution sorts by weight) */
  size_t nhooks;
  char *manifest;         /* the release manifest: "---\n# Source: <source>\n<content>\n" per doc */
  size_t manifest_len;
  char *notes;            /* rendered <chart>/templates/NOTES.txt, "" when none */
  /* The helm.sh/hook values of documents Helm drops for an unknown hook event (it says so: "skipping
   * unknown hooks", hookTypes=<value>), each followed by '\n'; NULL when none. */
  char *skipped_hooks;
} manifest_set_t;

typedef struct manifest_error_s {
  char source[256]; /* file the problem is in */
  int line;         /* 1-based line in that file, 0 when unknown */
  int column;
  char message[1024]; /* "<source>: line L, column C: problem" */
} manifest_error_t;

/* Builds the manifests of chart `chart` from its rendered files as `helm install` does: files sorted by
 * path, partials (_*) and blank files skipped, NOTES.txt taken out, each file split into documents,
 * hooks separated, manifests sorted by `order`. 0; -EINVAL for malformed input (err names the file,
 * line and problem: broken YAML, a document that is not a mapping, lacks apiVersion, kind or
 * metadata.name); -ENOMEM. On error *out is left empty. err may be NULL. */
int manifest_build(const char *chart, const manifest_file_t *files, size_t nfiles, manifest_order_t order,
                   manifest_set_t *out, manifest_error_t *err);
/* Parses a stored release manifest back into documents named "manifest-N", sorted as Helm's uninstall
 * does (names in string order, then by kind with `order`); errors as manifest_build. */
int manifest_parse_release(const char *manifest, size_t len, manifest_order_t order, manifest_set_t *out,
                           manifest_error_t *err);
/* Stable-sorts docs by kind in Helm's install or uninstall order (unknown kinds last, by name). */
void manifest_sort_docs(manifest_doc_t *docs, size_t n, manifest_order_t order);
/* Position of kind in Helm's install (or uninstall) order; -1 when unknown. */
int manifest_kind_rank(const char *kind, manifest_order_t order);
/* Frees everything a manifest_set_t holds and empties it. */
void manifest_set_free(manifest_set_t *set);

/* Converts doc to the JSON object to apply, adding Helm's ownership metadata: label
 * app.kubernetes.io/managed-by=Helm, annotations meta.helm.sh/release-name and
 * meta.helm.sh/release-namespace, plus extra_labels (an object of strings, may be NULL). Integers
 * beyond 2^53 stay exact (raw numbers). *out is the caller's; 0, -EINVAL (err says where) or -ENOMEM.
 * A null document gives -EINVAL. */
int manifest_object_json(const manifest_doc_t *doc, const char *release_name, const char *release_namespace,
                         const cJSON *extra_labels, cJSON **out, manifest_error_t *err);
