/* Renders a one-template text with Helm's and Sprig's functions in Helm's mode (missingkey=zero),
 * with empty data, for the function tests. */
#pragma once
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helm/template/helm_funcs.h"
#include "helm/template/sprig.h"
#include "helm/template/tpl.h"

/* want_error 0: the output (NULL and a message on stderr when it failed); 1: the error text (NULL
 * when it rendered). The caller frees the result. */
static char *t_render_text(const char *text, int want_error) {
  tpl_funcs_t *f = tpl_funcs_new();
  tpl_helm_funcs_add(f);
  sprig_funcs_add(f);
  tpl_set_t *set = tpl_set_new(f);
  buf_t out = BUF_INIT, err = BUF_INIT;
  tpl_arena_t *a = tpl_arena_new(0);
  int ok = tpl_set_parse(set, "t", text, strlen(text), &err) == 0;
  if (ok) {
    tpl_exec_opts_t o = {0};
    tpl_helm_state_t *hs = calloc(1, sizeof(*hs));
    o.udata = hs;
    o.missingkey = TPL_MISSINGKEY_ZERO;
    ok = tpl_set_execute(set, "t", tpl_value_map_new(a, TPL_ELEM_ANY), a, &o, &out, &err) == 0;
    free(hs);
  }
  char *res = NULL;
  if (want_error) res = ok ? NULL : strdup(err.data ? err.data : "");
  else if (ok) res = strdup(out.data ? out.data : "");
  else fprintf(stderr, "render %s: %s\n", text, err.data ? err.data : "?");
  buf_free(&out);
  buf_free(&err);
  tpl_arena_free(a);
  tpl_set_free(set);
  tpl_funcs_free(f);
  return res;
}
