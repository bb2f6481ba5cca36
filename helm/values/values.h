/* Helm values: values.yaml parsing (sigs.k8s.io/yaml: numbers are float64, YAML 1.1 booleans,
 * documents split and merged as loader.LoadValues does), coalescing of chart defaults, parent
 * and user values with globals (pkg/chart/common/util/coalesce.go), and the strvals syntax of
 * --set, --set-string, --set-json, --set-file and --set-literal. Values are cJSON trees; a Go
 * int64 (what --set gives for integers) is a cJSON_Raw node holding its decimal text. No I/O. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <cjson/cJSON.h>

#include "base/buf.h"
#include "helm/chart/chart.h"

#define VALUES_EINVAL (-22)
#define VALUES_ENOMEM (-12)

/* Parses a values file as loader.LoadValues does (every document merged). *out is an object
 * (caller deletes). 0, VALUES_EINVAL (Helm's message in err) or VALUES_ENOMEM. */
int values_parse_yaml(const char *text, size_t len, cJSON **out, char *err, size_t errlen);
/* loader.MergeMaps(a, b) in place: b's keys override a's, tables merged recursively. 0 or VALUES_ENOMEM. */
int values_merge_maps(cJSON *a, const cJSON *b);

/* Receives Helm's warnings as its log prints them: level ("WARN", "INFO") and message text.
 * Called on the thread that coalesces (a render worker in the controller). */
typedef struct values_warn_s {
  void (*fn)(void *ud, const char *level, const char *msg);
  void *ud;
} values_warn_t;

/* CoalesceValues(chart, user): user values over chart defaults, recursively into subcharts with
 * globals; null deletes a key. *out is new (caller deletes). 0 or an error with err set. */
int values_coalesce(const chart_t *c, const cJSON *user, cJSON **out, char *err, size_t errlen);
/* The error values_coalesce(c, user) would report, without building the coalesced values, for a
 * chart whose dependencies (c->deps) have no dependencies of their own (so no deeper level can
 * fail): a dependency's key holding something other than a map after c's defaults are applied.
 * 0 or VALUES_EINVAL with the same message. */
int values_coalesce_check(const chart_t *c, const cJSON *user, char *err, size_t errlen);
/* values_coalesce that consumes user (deleted, or turned into *out, in every case) instead of
 * copying it: big values are then held once. */
int values_coalesce_take(const chart_t *c, cJSON *user, cJSON **out, char *err, size_t errlen);
/* values_coalesce_take that also reports Helm's coalesce warnings ("destination for X is a table.
 * Ignoring non-table value (...)", "cannot overwrite table with non table for X (...)", "skipped
 * value for X: Not a table.", the globals' ones) to w (NULL: none), in the order keys are met. */
int values_coalesce_take_warn(const chart_t *c, cJSON *user, cJSON **out, const values_warn_t *w, char *err,
                              size_t errlen);
/* values_merge_maps that consumes b: its items move into a instead of being copied. 0 or VALUES_ENOMEM. */
int values_merge_maps_take(cJSON *a, cJSON *b);
/* MergeValues(chart, user): as values_coalesce but nulls are kept. */
int values_merge(const chart_t *c, const cJSON *user, cJSON **out, char *err, size_t errlen);
/* coalesceTablesFullKey(dst, src, "", merge): src's values fill in dst (src is modified as Go does;
 * its items are copied). 0 or VALUES_ENOMEM. */
int values_coalesce_tables(cJSON *dst, cJSON *src, bool merge);
/* Follows a dotted path ("a.b.c") to a table (common.Values.Table); NULL when absent or not a table. */
cJSON *values_table(const cJSON *v, const char *path);

typedef enum {
  VALUES_SET = 0,   /* --set: typed values (true/false/null/int64), {a,b} lists */
  VALUES_SET_STRING, /* --set-string: every value a string */
  VALUES_SET_JSON,   /* --set-json: values are JSON */
  VALUES_SET_FILE,   /* --set-file: values are file names read through a callback */
  VALUES_SET_LITERAL /* --set-literal: one key, the rest of the text literally */
} values_set_kind_t;

/* Reads the file named by a --set-file value; returns 0 and a malloc'd NUL-terminated *data, or
 * non-zero with a message in err. */
typedef int (*values_file_reader_t)(void *ud, const char *name, char **data, size_t *len, char *err, size_t errlen);

/* Parses one --set* argument into dest (an object) with Helm's strvals rules. reader is used only
 * by VALUES_SET_FILE. 0 or VALUES_EINVAL with err set to the message Helm prints after
 * "failed parsing --set data: ". */
int values_parse_set(const char *s, values_set_kind_t kind, cJSON *dest, values_file_reader_t reader, void *ud,
                     char *err, size_t errlen);
/* ValidateAgainstSchema: values against the values.schema.json of the chart and of every subchart
 * (with values[subchart]). 0, VALUES_EINVAL with Helm's per-chart text appended to err
 * ("name:\n- at '/x': ...\n"), or VALUES_ENOMEM. */
int values_validate_schema_buf(const chart_t *c, const cJSON *values, buf_t *err);
/* values_validate_schema_buf where a schema's $ref to other documents load: file:// from the
 * chart's own files (file:///values.schema.json being the schema; never the host's files),
 * http(s) through net (NULL: they fail as with no loader registered). */
struct schema_loader_s;
int values_validate_schema_with(const chart_t *c, const cJSON *values, const struct schema_loader_s *net, buf_t *err);
/* values_validate_schema_buf with the text truncated into err (errlen bytes). */
int values_validate_schema(const chart_t *c, const cJSON *values, char *err, size_t errlen);

struct yaml_error_s;
/* Formats a base/yaml error as go-yaml v2 (sigs.k8s.io/yaml) words it: "yaml: line N: problem". */
void values_yaml_error(const struct yaml_error_s *ye, char *out, size_t outlen);
