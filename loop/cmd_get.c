/* rudder get: HelmReleases as a table (kubectl get's layout: columns padded, three spaces apart), or
 * the same fields as a JSON or YAML list for programs (-o). */
#include "loop/cmds.h"
#include "loop/cmd.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char cmd_get__usage[] =
  "Usage: rudder get [NAME] [-n NS | -A] [-o table|json|yaml] [--kubeconfig FILE] [--context NAME]\n"
  "  HelmReleases (rudder.dev) with their namespace (-A), name, applied revision, whether suspended,\n"
  "  Ready, the chart deployed (status.history) and the Ready message. -o json, -o yaml: a list of\n"
  "  {name, namespace, ready, reason, message, revision, chart, version, suspended}. kubectl\n"
  "  equivalent: kubectl get helmreleases.rudder.dev -n NS\n";

#define GET_COLS 7

/* One cell's text: newlines and tabs become spaces so that a row stays one line. */
static char *get__cell(const char *s) {
  char *d = strdup(s && *s ? s : "<none>");
  for (char *p = d; p && *p; p++)
    if (*p == '\n' || *p == '\t' || *p == '\r') *p = ' ';
  return d;
}

/* One release of -o json/yaml into list: the table's fields, with Ready's reason and the chart's name
 * and version apart. 0, or 1 when out of memory. */
static int get__item(cJSON *list, const cJSON *obj, const char *ns, const char *name, const char *ready,
                     const cJSON *rev, const cJSON *h0, bool suspended) {
  cJSON *o = cJSON_CreateObject();
  if (!o || !cJSON_AddItemToArray(list, o)) {
    cJSON_Delete(o);
    return 1;
  }
  const char *chart = cmd_str(h0, "chartName"), *version = cmd_str(h0, "chartVersion");
  const char *reason = cmd_ready(obj, "reason"), *message = cmd_ready(obj, "message");
  int ok = cJSON_AddStringToObject(o, "name", name ? name : "") && cJSON_AddStringToObject(o, "namespace", ns ? ns : "") &&
           cJSON_AddStringToObject(o, "ready", ready) && cJSON_AddStringToObject(o, "reason", reason ? reason : "") &&
           cJSON_AddStringToObject(o, "message", message ? message : "") &&
           (cJSON_IsNumber(rev) ? cJSON_AddNumberToObject(o, "revision", rev->valuedouble) != NULL
                                : cJSON_AddNullToObject(o, "revision") != NULL) &&
           cJSON_AddStringToObject(o, "chart", chart ? chart : "") &&
           cJSON_AddStringToObject(o, "version", version ? version : "") && cJSON_AddBoolToObject(o, "suspended", suspended);
  return !ok;
}

int cmd_get_main(int argc, char **argv) {
  cmd_t c = {.name = "rudder get", .outputs = true};
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
  cJSON *data = c.output != CMD_OUT_TABLE ? cJSON_CreateArray() : NULL;
  int oom = !cells || (c.output != CMD_OUT_TABLE && !data);
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
    if (data && !oom) oom = get__item(data, it, v[0], name, ready ? ready : "Unknown", rev, h0, cJSON_IsTrue(susp));
  }
  if (oom) {
    fprintf(stderr, "rudder get: out of memory\n");
    rc = 1;
  } else if (rows == 1 && c.arg) {
    fprintf(stderr, "rudder get: HelmRelease %s/%s not found\n", c.ns, c.arg);
    rc = 1;
  } else if (data) {
    rc = cmd_print_data(&c, data);
  } else if (rows == 1) {
    if (c.all_ns) fprintf(stderr, "No HelmReleases found.\n");
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
  cJSON_Delete(data);
  cJSON_Delete(list);
  cmd_close(&c);
  return rc;
}
