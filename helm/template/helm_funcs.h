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
} tpl_helm_state_t;

/* Adds include, required and fail to a function table. 0 or a negative error. */
int tpl_helm_funcs_add(tpl_funcs_t *t);
