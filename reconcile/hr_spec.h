/* The parts of a HelmRelease object that a reconcile reads, parsed and defaulted. */
#pragma once
#include <cjson/cJSON.h>
#include "base/buf.h"

#define HR_FINALIZER "rudder.dev/finalizer"
#define HR_FIELD_MANAGER "rudder"
#define HR_DEFAULT_INTERVAL_MS (10 * 60 * 1000L)
#define HR_DEFAULT_MAX_HISTORY 10

typedef struct hr_spec_s {
  char *ns, *name, *uid, *resource_version;
  long long generation;
  int deleting;      /* metadata.deletionTimestamp is set */
  int has_finalizer; /* our finalizer is in metadata.finalizers */
  char *release_name, *target_ns, *storage_ns;
  char *chart_name, *chart_version, *app_version;
  cJSON *templates;    /* inline templates: object of file name -> text (owned) */
  cJSON *chart_values; /* inline chart default values (owned, object; NULL when not given) */
  cJSON *values;       /* user-supplied values, spec.values (owned, object) */
  int max_history;     /* 0 keeps all */
  long interval_ms;
  int suspend;
  cJSON *finalizers; /* metadata.finalizers (owned copy, array or NULL) */
  cJSON *conditions; /* status.conditions (owned copy, array or NULL) */
  long long last_applied_revision;
} hr_spec_t;

/* Parses obj into s; on a spec rudder cannot act on, returns -22 with the reason in err
 * (the identity fields of s are filled either way so that status can be written). */
int hr_spec_parse(const cJSON *obj, hr_spec_t *s, buf_t *err);
/* Frees what hr_spec_parse allocated. */
void hr_spec_free(hr_spec_t *s);
/* Parses a Go-style duration ("1h30m", "90s", "500ms") into milliseconds; -1 when malformed. */
long hr_duration_ms(const char *s);
