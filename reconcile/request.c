#include "reconcile/request.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

void req_free(release_req_t *r) {
  free(r->ns); free(r->name); free(r->uid); free(r->resource_version);
  free(r->release_name); free(r->target_ns); free(r->storage_ns);
  free(r->prev_release_name); free(r->prev_storage_ns);
  free(r->deletion_propagation); free(r->service_account);
  cJSON_Delete(r->finalizers); cJSON_Delete(r->conditions); cJSON_Delete(r->values);
  chart_free(r->chart);
  for (size_t i = 0; i < r->nvalues_from; i++) {
    req_values_from_t *v = &r->values_from[i];
    free(v->ns); free(v->name); free(v->key); free(v->target_path); free(v->field);
  }
  free(r->values_from);
  for (size_t i = 0; i < r->ndepends_on; i++) free(r->depends_on[i]);
  free(r->depends_on);
  for (size_t i = 0; i < r->nclusters; i++) free(r->clusters[i]);
  free(r->clusters);
  cJSON_Delete(r->outside);
  cJSON_Delete(r->drift_ignore);
  free(r->door_data);
  free(r->reconcile_requested); free(r->reconcile_handled);
  free(r->src.repo_key); free(r->src.name); free(r->src.version); free(r->src.url); free(r->src.obj_name); free(r->src.obj_key);
  free(r->src.secret_name); free(r->src.secret_field);
  memset(r, 0, sizeof *r);
}

long req_duration_ms(const char *s) {
  if (!s || !*s) return -1;
  double total = 0;
  const char *p = s;
  while (*p) {
    char *end;
    if (!isdigit((unsigned char)*p)) return -1;
    double n = strtod(p, &end);
    if (end == p) return -1;
    p = end;
    double unit;
    if (!strncmp(p, "ms", 2)) { unit = 1; p += 2; }
    else if (*p == 's') { unit = 1000; p++; }
    else if (*p == 'm') { unit = 60000; p++; }
    else if (*p == 'h') { unit = 3600000; p++; }
    else return -1;
    total += n * unit;
  }
  return total > 1e15 ? -1 : (long)total;
}
