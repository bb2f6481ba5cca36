/* A front door: one kind of custom resource mapped onto the release engine, as a row of functions
 * (the table in doors/doors.c). The engine knows nothing of the kind beyond this row. */
#pragma once
#include <stdbool.h>
#include <cjson/cJSON.h>
#include "base/buf.h"
#include "helm/action/record.h"
#include "reconcile/request.h"

/* What a reconcile ended with, for the door to write as its kind's status. */
typedef struct release_outcome_s {
  const release_req_t *req;
  const char *ready;        /* "True", "False" or "Unknown" */
  const char *reason, *message;
  const char *released;     /* Released condition: "True", "False", or NULL to leave it */
  const char *remediated;   /* Remediated condition, or NULL */
  const char *tested;       /* TestSuccess condition, or NULL to leave it */
  const char *stalled;      /* Stalled condition, or NULL to remove it */
  const char *stalled_reason; /* its reason when not the Ready one (e.g. RetriesExceeded) */
  /* Drifted condition: "True" (reason DriftDetected, message drift_message: the objects and fields),
   * "" to remove it, NULL to leave it as it is. */
  const char *drifted, *drift_message;
  long long applied_revision, attempted_revision;
  const char *applied_digest, *attempted_digest;
  int install_failures, upgrade_failures;
  const record_t *history;  /* newest first */
  size_t nhistory;
  /* When set, not an outcome but a progress report while an action runs: only the Reconciling
   * condition is written (True, reason Progressing, this message); nothing else changes. */
  const char *progressing;
  /* For a release in several clusters (release_req_t.clusters): where it is synced at these inputs,
   * each name followed by '\n' ("" is the local cluster); NULL for a release of the local cluster only.
   * ready/reason/message then sum up every cluster. */
  const char *synced;
  /* The deployed revision's objects that live outside the namespace its records are stored in
   * (cluster-scoped ones, those of other namespaces; [{apiVersion, kind, namespace, name}]), for the
   * door to keep in its status (door_outside_write) so that deleting that namespace, records and
   * all, still uninstalls them. NULL: leave what the status has. */
  const cJSON *outside;
} release_outcome_t;

/* What the controller tells every door (flags that shape how objects map to requests). */
typedef struct door_ctx_s {
  const char *chartrepo_namespace; /* where Captain's ChartRepos live (--chartrepo-namespace, default captain-system) */
  bool allow_cross_namespace_refs; /* --allow-cross-namespace-refs: an object may name objects of other namespaces */
} door_ctx_t;

typedef struct door_s {
  const char *kind, *group, *version, *resource; /* the API of the kind */
  const char *finalizer;
  /* Finalizers an earlier controller of the kind put on its objects (NULL-terminated, or NULL): they
   * count as the door's own (the object is uninstalled before it goes) and are removed with it. */
  const char *const *legacy_finalizers;
  /* Fields the informer's cache keeps (besides identity), NULL-terminated. */
  const char *const *cache_keep;
  /* Of those, subtrees the cache keeps as their JSON text, held once however many objects carry the
   * same (informer_opts_t.keep_text; NULL: none). parse then finds a raw node there (door_subtree). */
  const char *const *cache_text;
  /* Parses obj into req (zeroed by the caller). Identity fields are filled even on error, so that
   * status can be written. 0, -22 (invalid: err says which field and why) or -95 (not supported). */
  int (*parse)(const cJSON *obj, const door_ctx_t *ctx, release_req_t *req, buf_t *err);
  /* The merge patch of obj's status subresource for outcome o (malloc'd JSON), NULL on OOM. */
  char *(*status_patch)(const release_outcome_t *o);
} door_t;

/* The front doors, NULL-terminated. */
extern const door_t *const doors[];
