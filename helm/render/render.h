/* The render pipeline: a loaded chart plus values to rendered templates, then to what
 * `helm template` prints (pkg/engine, action.renderResources, releaseutil.SortManifests).
 * No I/O: usable from a worker thread. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#include "base/buf.h"
#include "helm/chart/chart.h"

#define RENDER_EINVAL (-22) /* the chart or values are wrong; the message is Helm's */
#define RENDER_ENOMEM (-12)
#define RENDER_ELIMIT (-7)  /* a budget of render_limits_t was exceeded; the message names it and where */

/* Per-render budgets, so that one hostile chart fails alone (0 in a field: its default). Exceeding
 * one stops the render at once and fails it with
 *   render budget exceeded: output larger than 64 MiB (limit --max-render-output) at chart/templates/x.yaml:3
 * (the limit's flag as `rudder template` names it, and the template file and line where it was
 * hit). The defaults are far above what real charts need. */
#define RENDER_DEFAULT_MAX_MEMORY ((size_t)256 << 20) /* 256 MiB */
#define RENDER_DEFAULT_MAX_OUTPUT ((size_t)64 << 20)  /* 64 MiB */
#define RENDER_DEFAULT_MAX_TIME_MS 30000              /* 30 s */
#define RENDER_DEFAULT_MAX_DEPTH 100000               /* nested template calls, Go's own limit */
typedef struct render_limits_s {
  /* bytes the render may hold at once: the template values (values, .Files, .Chart, ...), what
   * templates make (lists, maps, strings, include and tpl texts, encoder and function results) */
  size_t max_memory;
  size_t max_output;      /* bytes of rendered text, all templates together */
  uint64_t max_time_ms;   /* wall time from the start of the render */
  int max_depth;          /* nested {{template}}/include calls */
} render_limits_t;

/* Helm's built-in defaults for a client-only render (helm v4.3.1 `helm template`). */
#define RENDER_DEFAULT_KUBE_VERSION "v1.37.0"

typedef struct render_opts_s {
  const char *release_name; /* "release-name" when NULL */
  const char *namespace;    /* "default" when NULL */
  int revision;             /* 1 when 0 */
  bool is_upgrade;
  const char *kube_version; /* e.g. "v1.30.2" or "1.30"; RENDER_DEFAULT_KUBE_VERSION when NULL */
  const char *const *api_versions; /* extra Capabilities.APIVersions (after the defaults) */
  size_t napi_versions;
  bool strict; /* missingkey=error */
  /* render_template*: a helper thread parses templates for errors and splits and sorts the
   * manifests while templates render (for a one-shot command on a multi-core machine; the
   * controller's loop leaves it off). */
  bool helper_thread;
  /* render_chart*: the helper thread to use (base/worker.h), NULL for none. render_template* set
   * this and on_file themselves (the caller's are not used). */
  struct worker_s *worker;
  /* render_chart*: called with each rendered file as soon as its text is final (NULL: none).
   * It may take the text (malloc'd, NUL-terminated): it sets *text to NULL, and the file is then
   * returned with text NULL and len 0. Nonzero: out of memory. */
  int (*on_file)(void *ctx, const char *name, char **text, size_t len);
  void *on_file_ctx;
  /* `lookup` against a cluster (tpl_helm_state_t.lookup); NULL: an empty map, as `helm template`. */
  int (*lookup)(void *ctx, const char *api_version, const char *kind, const char *ns, const char *name, char **json,
                char *err, size_t errlen);
  void *lookup_ctx;
  /* Loads the http(s) documents a values.schema.json refers to (helm/values/schema.h), called
   * from the rendering thread; NULL: such references fail as with no loader registered. file://
   * references are always the chart's own files. */
  const struct schema_loader_s *schema_loader;
  render_limits_t limits; /* the render's budgets (all 0: the defaults) */
  /* Helm's warnings, in the order helm prints them (NULL: none): level "WARN" or "INFO" and the
   * message ("this chart is deprecated", the values' coalesce warnings). `rudder template` prints
   * them as helm does; the controller can turn them into Events. Called on the rendering thread. */
  void (*warn)(void *ctx, const char *level, const char *msg);
  void *warn_ctx;
} render_opts_t;

typedef struct render_file_s {
  char *name; /* "chart/templates/x.yaml" */
  char *text;
  size_t len;
} render_file_t;

typedef struct render_doc_s {
  char *path;    /* "# Source:" path */
  char *content; /* document text as Helm keeps it */
  bool is_test;  /* a hook with the test event */
} render_doc_t;

typedef struct render_output_s {
  render_doc_t *crds; /* crds/ files of the chart and its subcharts (Helm's CRDObjects order) */
  size_t ncrds;
  render_doc_t *manifests; /* sorted in install order */
  size_t nmanifests;
  render_doc_t *hooks; /* sorted by kind, as the release stores them */
  size_t nhooks;
  char *notes; /* the root chart's NOTES.txt, "" when none */
} render_output_t;

/* Renders every template of a chart whose dependencies are processed, with the top-level values
 * tree (Values already coalesced). *files (caller frees with render_files_free) holds the
 * non-partial templates in Helm's order. 0, RENDER_EINVAL (Helm's message in err), RENDER_ELIMIT
 * (a budget exceeded: see render_limits_t) or RENDER_ENOMEM. */
int render_chart(const chart_t *c, const cJSON *values, const render_opts_t *opts, render_file_t **files,
                 size_t *nfiles, buf_t *err);
/* render_chart that takes values and deletes them as soon as the templates' copy is built (lower
 * peak memory for big values); values is deleted in every case. */
int render_chart_take(const chart_t *c, cJSON *values, const render_opts_t *opts, render_file_t **files,
                      size_t *nfiles, buf_t *err);
/* Frees what render_chart returned. */
void render_files_free(render_file_t *files, size_t n);

/* Everything `helm template` does after loading: checks the chart is installable and its
 * dependencies present, processes dependencies (modifies c), coalesces user values, checks
 * kubeVersion, renders, takes NOTES out, splits and sorts manifests and hooks. 0,
 * RENDER_EINVAL with Helm's message in err (as printed after "Error: "), RENDER_ELIMIT, or
 * RENDER_ENOMEM. */
int render_template(chart_t *c, const cJSON *user_values, const render_opts_t *opts, render_output_t *out,
                    buf_t *err);
/* render_template that consumes user_values (NULL: none): they become the coalesced values, which
 * are freed once the templates' copy is built, so big values are not held twice. The charts' own
 * values (c->values and its dependencies') are freed once coalesced: c is left without them. */
int render_template_take(chart_t *c, cJSON *user_values, const render_opts_t *opts, render_output_t *out, buf_t *err);
/* The first half of every render (Helm's install checks and renderResources before the engine):
 * the chart is installable, its dependencies are present and processed (modifies c), the user's
 * values coalesced with the charts' (*owned, when not NULL, is consumed: user_values then need not
 * be copied) and checked against the schemas, kubeVersion checked. *vals is the coalesced tree
 * (caller frees). 0, RENDER_EINVAL with Helm's message in err, or RENDER_ENOMEM. */
int render_prepare(chart_t *c, const cJSON *user_values, cJSON **owned, const render_opts_t *opts, cJSON **vals,
                   buf_t *err);
/* Appends the crds/ files of c and its subcharts (Helm's CRDObjects order) to o->crds; -1 on OOM. */
int render_crds(const chart_t *c, render_output_t *o);

struct manifest_set_s;
/* What an install or upgrade applies: the same pipeline as render_template (render_prepare,
 * render_chart), then Helm's split and sort into the release's manifests and hooks
 * (manifest_build) and the CRDs. Consumes user_values (may be NULL). 0, RENDER_EINVAL with the
 * message in err (file and line for template and YAML errors), or RENDER_ENOMEM. */
int render_release(chart_t *c, cJSON *user_values, const render_opts_t *opts, struct manifest_set_s *set,
                   render_output_t *crds, buf_t *err);
/* The limits with their defaults filled in. */
render_limits_t render_limits_resolve(const render_limits_t *l);
/* Appends "256 MiB", "64 KiB", "1000 bytes" (exact multiples only) for a size. */
void render_size_text(buf_t *out, size_t n);
/* Frees a render_output_t. */
void render_output_free(render_output_t *o);
