/* The controller's render: render_template's pipeline up to the rendered files, then Helm's
 * install-time split and sort (manifest_build keeps each document's head, hooks and the release
 * manifest string, which the actions need). No I/O: runs on a worker thread. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/metrics.h"
#include "helm/render/manifest.h"
#include "helm/render/render.h"

/* File names are written into the release's manifest as they are ("# Source: NAME"): a name with a
 * line break would add documents of its own to the stored manifest (which uninstall then deletes).
 * Helm loads such names; a controller applying charts from elsewhere refuses them. 0, or -1 with
 * the name (escaped) in err. */
static int rr__names_ok(const chart_t *c, buf_t *err) {
  const chart_file_t *lists[2] = {c->templates, c->files};
  size_t ns[2] = {c->ntemplates, c->nfiles};
  for (int l = 0; l < 2; l++)
    for (size_t i = 0; i < ns[l]; i++) {
      const unsigned char *n = (const unsigned char *)lists[l][i].name;
      int bad = 0;
      for (const unsigned char *p = n; *p; p++)
        if (*p < 0x20 || *p == 0x7f) bad = 1;
      if (!bad) continue;
      buf_reset(err);
      buf_printf(err, "chart %s: file name \"", c->meta.name ? c->meta.name : "");
      for (const unsigned char *p = n; *p; p++) {
        if (*p == '\n') buf_puts(err, "\\n");
        else if (*p < 0x20 || *p == 0x7f) buf_printf(err, "\\x%02x", *p);
        else buf_putc(err, (char)*p);
      }
      buf_puts(err, "\" holds a control character: refused (it would be written into the release's manifest as is)");
      return -1;
    }
  for (size_t i = 0; i < c->ndeps; i++)
    if (rr__names_ok(c->deps[i], err)) return -1;
  return 0;
}

static int rr__render(chart_t *c, cJSON *user_values, const render_opts_t *opts, manifest_set_t *set,
                      render_output_t *crds, buf_t *err) {
  memset(set, 0, sizeof *set);
  memset(crds, 0, sizeof *crds);
  if (rr__names_ok(c, err)) {
    cJSON_Delete(user_values);
    return RENDER_EINVAL;
  }
  cJSON *owned = user_values, *vals = NULL;
  render_file_t *rfiles = NULL;
  size_t nrfiles = 0;
  manifest_file_t *files = NULL;
  int rc = render_prepare(c, user_values, &owned, opts, &vals, err);
  cJSON_Delete(owned);
  if (rc) return rc;
  render_opts_t ro = opts ? *opts : (render_opts_t){0};
  ro.worker = NULL;
  ro.on_file = NULL;
  ro.helper_thread = false;
  if ((rc = render_chart_take(c, vals, &ro, &rfiles, &nrfiles, err))) return rc;
  /* Files named as inside the root chart ("templates/x.yaml", "charts/sub/templates/y.yaml"). */
  files = calloc(nrfiles ? nrfiles : 1, sizeof *files);
  if (!files) {
    rc = RENDER_ENOMEM;
    goto done;
  }
  size_t cl = strlen(c->meta.name ? c->meta.name : "");
  for (size_t i = 0; i < nrfiles; i++) {
    const char *name = rfiles[i].name;
    if (cl && !strncmp(name, c->meta.name, cl) && name[cl] == '/') name += cl + 1;
    files[i] = (manifest_file_t){name, rfiles[i].text, rfiles[i].len};
  }
  manifest_error_t merr = {0};
  rc = manifest_build(c->meta.name, files, nrfiles, MANIFEST_INSTALL_ORDER, set, &merr);
  if (rc) {
    buf_reset(err);
    buf_puts(err, merr.message[0] ? merr.message : "cannot build the manifests");
    rc = rc == -12 ? RENDER_ENOMEM : RENDER_EINVAL;
    goto done;
  }
  /* Documents dropped for an unknown hook event: Helm says so (INFO "skipping unknown hooks"). */
  for (const char *h = set->skipped_hooks; h && *h && opts->warn;) {
    const char *nl = strchr(h, '\n');
    size_t n = nl ? (size_t)(nl - h) : strlen(h);
    char msg[600];
    snprintf(msg, sizeof msg, "skipping unknown hooks (hookTypes=%.*s)", (int)(n > 500 ? 500 : n), h);
    opts->warn(opts->warn_ctx, "INFO", msg);
    h += n + (nl != NULL);
  }
  if (render_crds(c, crds)) rc = RENDER_ENOMEM;
done:
  if (rc == RENDER_ENOMEM) {
    buf_reset(err);
    buf_puts(err, "out of memory");
  }
  if (rc) {
    manifest_set_free(set);
    render_output_free(crds);
  }
  free(files);
  render_files_free(rfiles, nrfiles);
  return rc;
}

/* How long the controller's renders take, failed ones included (observed from the worker thread). */
static metrics_family_t rr__f_duration = {
    .name = "rudder_render_duration_seconds", .help = "Time to render a release's chart into its manifests",
    .type = METRICS_HISTOGRAM, .buckets = metrics_buckets_latency, .nbuckets = METRICS_BUCKETS_LATENCY_N};

int render_release(chart_t *c, cJSON *user_values, const render_opts_t *opts, manifest_set_t *set, render_output_t *crds,
                   buf_t *err) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int rc = rr__render(c, user_values, opts, set, crds, err);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  metrics_observe(metrics_get(&rr__f_duration), (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
  return rc;
}
