/* rudder get: HelmReleases as a table (kubectl get's layout: columns padded, three spaces apart). */
#include "loop/cmds.h"
#include "loop/cmd.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char cmd_get__usage[] =
  "Usage: rudder get [NAME] [-n NS | -A] [--kubeconfig FILE] [--context NAME]\n"
  "  HelmReleases (rudder.dev) with their namespace (-A), name, applied revision, whether suspended,\n"
  "  Ready, the chart deployed (status.history) and the Ready message. kubectl equivalent:\n"
  "  kubectl get helmreleases.rudder.dev -n NS\n";

#define GET_COLS 7

/* One cell's text: newlines and tabs become spaces so that a row stays one line. */
static char *get__cell(const char *s) {
  char *d = strdup(s && *s ? s : "<none>");
  for (char *p = d; p && *p; p++)
    if (*p == '\n' || *p == '\t' || *p == '\r') *p = ' ';
  return d;
}

int cmd_get_main(int argc, char **argv) {
  cmd_t c = {.name = "rudder get"};
  bool help;
  int rc = cmd_parse(&c, argc, argv, CMD_NAME_OPTIONAL, cmd_get__usage, NULL, NULL, &help);
  if (rc) return help ? 0 : rc;
  if ((rc = cmd_open(&c))) return rc;
  buf_t path = BUF_INIT;
  cmd_hr_path(&path, c.all_ns ? NULL : c.ns, NULL, NULL);
  cmd_resp_t r;
  cmd_do(&c, &(kube_req_opts_t){.path = path.data}, &r);
  buf_free(&path);
  cJSON *list = NULL;
  if (r.err || r.status != 200) {
    rc = cmd_fail(&c, &r, "listing HelmReleases");
  } else if (!(list = cJSON_ParseWithLength(r.body, r.len))) {
    fprintf(stderr, "rudder get: the API server's answer is not JSON\n");
    rc = 1;
  }
  cmd_resp_free(&r);
  if (rc) {
    cmd_close(&c);
    return rc;
  }
  const cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
  size_t n = (size_t)cJSON_GetArraySize(items), rows = 0;
  char *(*cells)[GET_COLS] = calloc(n + 1, sizeof *cells);
  size_t width[GET_COLS] = {0};
  static const char *const head[GET_COLS] = {"NAMESPACE", "NAME", "REVISION", "SUSPENDED", "READY", "CHART", "MESSAGE"};
  int oom = !cells;
  for (size_t k = 0; !oom && k < GET_COLS; k++) oom = !(cells[0][k] = strdup(head[k]));
  rows = oom ? 0 : 1;
  const cJSON *it;
  cJSON_ArrayForEach(it, items) {
    if (oom) break;
    const char *name = cmd_str(it, "metadata.name");
    if (c.arg && (!name || strcmp(name, c.arg))) continue;
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(it, "status");
    const cJSON *rev = cJSON_GetObjectItemCaseSensitive(status, "lastAppliedRevision");
    const cJSON *susp = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(it, "spec"), "suspend");
    const cJSON *h0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(status, "history"), 0);
    char revs[32] = "", chart[512] = "";
    if (cJSON_IsNumber(rev)) snprintf(revs, sizeof revs, "%lld", (long long)rev->valuedouble);
    if (cmd_str(h0, "chartName"))
      snprintf(chart, sizeof chart, "%s-%s", cmd_str(h0, "chartName"), cmd_str(h0, "chartVersion") ? cmd_str(h0, "chartVersion") : "");
    const char *ready = cmd_ready(it, "status");
    const char *v[GET_COLS] = {cmd_str(it, "metadata.namespace"), name, revs, cJSON_IsTrue(susp) ? "True" : "False",
                               ready ? ready : "Unknown", chart, cmd_ready(it, "message")};
    for (size_t k = 0; k < GET_COLS && !oom; k++) oom = !(cells[rows][k] = get__cell(v[k]));
    rows++;
  }
  if (oom) {
    fprintf(stderr, "rudder get: out of memory\n");
    rc = 1;
  } else if (rows == 1) {
    if (c.arg) {
      fprintf(stderr, "rudder get: HelmRelease %s/%s not found\n", c.ns, c.arg);
      rc = 1;
    } else if (c.all_ns) fprintf(stderr, "No HelmReleases found.\n");
    else fprintf(stderr, "No HelmReleases found in namespace %s.\n", c.ns);
  } else {
    size_t first = c.all_ns ? 0 : 1;
    for (size_t i = 0; i < rows; i++)
      for (size_t k = first; k < GET_COLS; k++)
        if (cmd_width(cells[i][k]) > width[k]) width[k] = cmd_width(cells[i][k]);
    for (size_t i = 0; i < rows; i++) {
      for (size_t k = first; k < GET_COLS; k++) {
        if (k == GET_COLS - 1) printf("%s\n", cells[i][k]);
        else printf("%s%*s", cells[i][k], (int)(width[k] - cmd_width(cells[i][k]) + 3), "");
      }
    }
  }
  for (size_t i = 0; cells && i < rows; i++)
    for (size_t k = 0; k < GET_COLS; k++) free(cells[i][k]);
  free(cells);
  cJSON_Delete(list);
  cmd_close(&c);
  return rc;
}
