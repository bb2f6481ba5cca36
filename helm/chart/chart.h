/* Helm charts in memory: loading from a list of files or a packaged .tgz (no I/O), Chart.yaml
 * (apiVersion v1/v2) with Helm's validation, requirements.yaml for v1, subcharts in charts/
 * (directories and .tgz), and Helm's dependency processing (alias, condition, tags,
 * import-values, disabled dependencies removed). Directory loading with .helmignore is the only
 * part that reads the file system (chart_load_dir). Mirrors helm.sh/helm/v4 pkg/chart/v2. */
#pragma once
#include <stddef.h>
#include <cjson/cJSON.h>

#define CHART_EINVAL (-22) /* the chart is invalid; the message says why, in Helm's words */
#define CHART_ENOMEM (-12)
#define CHART_E2BIG (-7)   /* a size or count limit was hit */
#define CHART_ENOENT (-2)  /* a file or directory is missing */

typedef struct chart_file_s {
  char *name; /* path inside the chart, e.g. "templates/deploy.yaml" */
  char *data; /* contents, NUL-terminated (UTF-8 BOM removed) */
  size_t len;
} chart_file_t;

typedef struct chart_maintainer_s {
  char *name, *email, *url;
} chart_maintainer_t;

typedef struct chart_dep_s {
  char *name, *version, *repository, *condition, *alias;
  char **tags;
  size_t ntags;
  cJSON *import_values; /* array (strings or {child, parent} objects) or NULL */
  int enabled;
} chart_dep_t;

typedef struct chart_meta_s {
  char *name, *home, *version, *description, *icon, *api_version, *condition, *tags, *app_version,
      *kube_version, *type;
  char **sources;
  size_t nsources;
  char **keywords;
  size_t nkeywords;
  chart_maintainer_t *maintainers;
  size_t nmaintainers;
  int deprecated;
  cJSON *annotations; /* object of strings, or NULL */
  chart_dep_t *deps;
  size_t ndeps;
} chart_meta_t;

typedef struct chart_s chart_t;
struct chart_s {
  chart_meta_t meta;
  chart_file_t *templates; /* templates/..., in load order */
  size_t ntemplates;
  chart_file_t *files; /* everything else that .Files sees (crds/, README, ...) */
  size_t nfiles;
  cJSON *values;       /* values.yaml as Helm reads it (object, never NULL) */
  int has_values_file; /* values.yaml was there (Helm's Values is nil without it: null in a release record) */
  char *schema;        /* values.schema.json or NULL */
  size_t schema_len;
  chart_t **deps;      /* subcharts */
  size_t ndeps;
  chart_t *parent;
};

typedef struct chart_limits_s {
  size_t max_files; /* files in one archive (0: 20000) */
  size_t max_bytes; /* decompressed bytes of one archive or directory (0: 100 MiB, as Helm) */
} chart_limits_t;

typedef struct chart_error_s {
  char message[1024]; /* Helm's wording, e.g. "validation: chart.metadata.name is required" */
} chart_error_t;

/* Builds a chart from files named relative to the chart's top directory (as LoadFiles does);
 * the files are copied. 0 or a CHART_E* code with err set. */
int chart_load_files(const chart_file_t *files, size_t nfiles, const chart_limits_t *lim, chart_t **out,
                     chart_error_t *err);
/* Loads a packaged chart (.tgz bytes). 0 or a CHART_E* code with err set. */
int chart_load_archive(const void *data, size_t len, const chart_limits_t *lim, chart_t **out, chart_error_t *err);
/* Loads a chart directory, honouring .helmignore (reads the file system). */
int chart_load_dir(const char *dir, const chart_limits_t *lim, chart_t **out, chart_error_t *err);
/* Loads a chart from a path: a directory or a .tgz file (reads the file system; Helm's messages). */
int chart_load_path(const char *path, const chart_limits_t *lim, chart_t **out, chart_error_t *err);
/* Frees a chart and its subcharts. */
void chart_free(chart_t *c);

/* A deep copy of a chart and its subcharts (the copy's parent is NULL); NULL on OOM. Rendering
 * changes a chart (dependency processing), so a shared cached chart is rendered from a copy. */
chart_t *chart_clone(const chart_t *c);
/* The chart's path from the root as Helm names it ("root/charts/sub"), malloc'd; NULL on OOM. */
char *chart_full_path(const chart_t *c);
/* True when the chart has type library. */
int chart_is_library(const chart_t *c);

/* Helm's ProcessDependencies: with the user's values (an object; not modified), resolves aliases,
 * evaluates tags and conditions, removes disabled subcharts recursively and applies import-values
 * (merging into the charts' values). 0 or a CHART_E* code with err set. */
int chart_process_dependencies(chart_t *c, const cJSON *user_values, chart_error_t *err);

