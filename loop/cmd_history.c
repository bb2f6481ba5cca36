/* rudder history: the records of a HelmRelease's release, printed as `helm history` prints them
 * (its table: every cell padded to its column's width, tab-separated; times as Go's ANSIC layout
 * in the offset the record was written with; -o json/yaml: helm's fields, times as Go's JSON). */
#include "loop/cmds.h"
#include "loop/cmd.h"
#include "helm/action/record.h"
#include "reconcile/doors/doors.h"
#include "reconcile/request.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char cmd_history__usage[] =
  "Usage: rudder history NAME [-n NS] [--max N] [-o table|json|yaml] [--kubeconfig FILE] [--context NAME]\n"
  "  The revisions of the HelmRelease's Helm release (its releaseName, in its storageNamespace), as\n"
  "  helm history prints them (-o json, -o yaml: its fields revision, updated, status, chart,\n"
  "  app_version, description); at most --max (default 256), the newest. helm equivalent:\n"
  "  helm history RELEASE -n STORAGE_NAMESPACE [-o json]\n";

#define HIST_COLS 6

/* Go's time.ANSIC ("Mon Jan _2 15:04:05 2006") in the time's own offset. */
static void hist__ansic(const release_time_t *t, char out[40]) {
  if (!t->set) {
    snprintf(out, 40, "Mon Jan  1 00:00:00 0001");
    return;
  }
  time_t s = (time_t)(t->sec + t->offset);
  struct tm tm;
  gmtime_r(&s, &tm);
  strftime(out, 40, "%a %b %e %H:%M:%S %Y", &tm);
}

/* One revision of -o json/yaml into list, with helm history's field names: the table's cells (v: the
 * revision, the ANSIC time, status, chart, app version, description), the time as Go's JSON time.
 * 0, or 1 when out of memory. */
static int hist__item(cJSON *list, const release_t *rel, const release_info_t *info, buf_t v[HIST_COLS]) {
  cJSON *o = cJSON_CreateObject();
  if (!o || !cJSON_AddItemToArray(list, o)) {
    cJSON_Delete(o);
    return 1;
  }
  char when[40];
  release_time_t zero = {0};
  release_time_format(info ? &info->last_deployed : &zero, when, sizeof when);
  const char *s[HIST_COLS];
  for (size_t k = 0; k < HIST_COLS; k++) s[k] = v[k].data ? v[k].data : "";
  return !(cJSON_AddNumberToObject(o, "revision", (double)rel->version) && cJSON_AddStringToObject(o, "updated", when) &&
           cJSON_AddStringToObject(o, "status", s[2]) && cJSON_AddStringToObject(o, "chart", s[3]) &&
           cJSON_AddStringToObject(o, "app_version", s[4]) && cJSON_AddStringToObject(o, "description", s[5]));
}

int cmd_history_main(int argc, char **argv) {
  cmd_t c = {.name = "rudder history", .outputs = true};
  bool help;
  static const char *const extra[] = {"--max", NULL};
  const char *maxs = NULL;
  int rc = cmd_parse(&c, argc, argv, CMD_NAME_REQUIRED, cmd_history__usage, extra, &maxs, &help);
  if (rc) return help ? 0 : rc;
  long max = 256;
  if (maxs) {
    char *e;
    max = strtol(maxs, &e, 10);
    if (*e || max < 1) {
      fprintf(stderr, "rudder history: --max: \"%s\" is not a number of at least 1\n", maxs);
      return 2;
    }
  }
  if ((rc = cmd_open(&c))) return rc;
  cJSON *obj = NULL;
  if ((rc = cmd_get_release(&c, &obj))) {
    cmd_close(&c);
    return rc;
  }
  /* The release's name and where its records are, exactly as the controller reads them (identity
   * is filled in even when the rest of the spec does not parse). */
  release_req_t req = {0};
  buf_t err = BUF_INIT;
  door_ctx_t ctx = {.chartrepo_namespace = "captain-system", .allow_cross_namespace_refs = true};
  door_helmrelease.parse(obj, &ctx, &req, &err);
  buf_free(&err);
  cJSON_Delete(obj);
  if (!req.release_name || !req.storage_ns) {
    fprintf(stderr, "rudder history: HelmRelease %s/%s: cannot tell its release name\n", c.ns, c.arg);
    req_free(&req);
    cmd_close(&c);
    return 1;
  }
  record_t *recs = NULL;
  size_t nrec = 0;
  rc = cmd_list_records(&c, req.storage_ns, req.release_name, &recs, &nrec);
  if (!rc && !nrec) {
    fprintf(stderr, "rudder history: release %s/%s has no records (HelmRelease %s/%s not installed yet?)\n",
            req.storage_ns, req.release_name, c.ns, c.arg);
    rc = 1;
  }
  if (!rc) {
    size_t from = nrec > (size_t)max ? nrec - (size_t)max : 0, rows = nrec - from + 1;
    char *(*cells)[HIST_COLS] = calloc(rows, sizeof *cells);
    static const char *const head[HIST_COLS] = {"REVISION", "UPDATED", "STATUS", "CHART", "APP VERSION", "DESCRIPTION"};
    cJSON *data = c.output != CMD_OUT_TABLE ? cJSON_CreateArray() : NULL;
    int oom = !cells || (c.output != CMD_OUT_TABLE && !data);
    for (size_t k = 0; !oom && k < HIST_COLS; k++) oom = !(cells[0][k] = strdup(head[k]));
    for (size_t i = from; !oom && i < nrec; i++) {
      const release_t *rel = recs[i].rel;
      const release_metadata_t *m = rel->chart ? rel->chart->metadata : NULL;
      const release_info_t *info = rel->info;
      char when[40];
      release_time_t zero = {0};
      hist__ansic(info ? &info->last_deployed : &zero, when);
      buf_t v[HIST_COLS] = {BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT};
      buf_printf(&v[0], "%lld", (long long)rel->version);
      buf_puts(&v[1], when);
      buf_puts(&v[2], info && info->status ? info->status : "unknown");
      if (m) buf_printf(&v[3], "%s-%s", m->name ? m->name : "", m->version ? m->version : "");
      else buf_puts(&v[3], "MISSING");
      buf_puts(&v[4], m ? (m->app_version ? m->app_version : "") : "MISSING");
      buf_puts(&v[5], info && info->description ? info->description : "");
      if (data && hist__item(data, rel, info, v)) oom = 1;
      for (size_t k = 0; k < HIST_COLS; k++) {
        if (!v[k].data && buf_puts(&v[k], "")) oom = 1;
        cells[i - from + 1][k] = buf_steal(&v[k]);
        if (!cells[i - from + 1][k]) oom = 1;
      }
    }
    if (oom) {
      fprintf(stderr, "rudder history: out of memory\n");
      rc = 1;
    } else if (data) {
      rc = cmd_print_data(&c, data);
    } else {
      size_t width[HIST_COLS] = {0};
      for (size_t i = 0; i < rows; i++)
        for (size_t k = 0; k < HIST_COLS; k++)
          if (cmd_width(cells[i][k]) > width[k]) width[k] = cmd_width(cells[i][k]);
      for (size_t i = 0; i < rows; i++)
        for (size_t k = 0; k < HIST_COLS; k++)
          printf("%s%*s%s", cells[i][k], (int)(width[k] - cmd_width(cells[i][k])), "", k + 1 < HIST_COLS ? "\t" : "\n");
    }
    for (size_t i = 0; cells && i < rows; i++)
      for (size_t k = 0; k < HIST_COLS; k++) free(cells[i][k]);
    free(cells);
    cJSON_Delete(data);
  }
  for (size_t i = 0; i < nrec; i++) record_free(&recs[i]);
  free(recs);
  req_free(&req);
  cmd_close(&c);
  return rc;
}
