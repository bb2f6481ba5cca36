/* Helm's engine-bound functions (include, required, fail) over the template core. */
#pragma once
#include "helm/template/tpl.h"

/* Per-render state those functions need; pass it as tpl_exec_opts_t.udata. */
typedef struct tpl_helm_state_s {
  struct {
    const char *name;
    size_t len;
    int count;
  } inc[256];
  size_t ninc;
  /* `lookup`: NULL gives an empty map (as `helm template` does). Otherwise called with the four
   * arguments (NUL-terminated); sets *json to the object or list as JSON text (malloc'd), or NULL
   * when not found; returns 0, -12 when out of memory, or another nonzero code with err set (the
   * template fails with it). It may block: renders that look things up run on a worker thread. */
  int (*lookup)(void *ctx, const char *api_version, const char *kind, const char *ns, const char *name, char **json,
                char *err, size_t errlen);
  void *lookup_ctx;
} tpl_helm_state_t;

/* Adds include, required and fail to a function table. 0 or a negative error. */
int tpl_helm_funcs_add(tpl_funcs_t *t);

/* Helm's common.Values (pkg/chart/common/values.go): the named map type of `.Values` (root and
 * subchart) and `.Template`, with its methods AsMap, Encode, PathValue, Table and YAML. `%T` prints
 * "common.Values"; `.Values.Table "a.b"` etc. call the methods (methods win over keys, as in Go);
 * keys, range, index, len and printing behave as for the underlying map[string]interface {}.
 * YAML uses the function table's toYaml. A value has this type when its view is TPL_VIEW_VALUES
 * (tpl_helm_values_mark): the map itself stays untyped, so other values referring to it (a parent's
 * .Values.sub) keep their own type. */
const tpl_type_t *tpl_helm_values_type(void);
/* Makes a non-nil map[string]interface{} value a common.Values (sets its view): 0, or TPL_EINVAL for
 * another value. */
int tpl_helm_values_mark(tpl_value_t *v);
