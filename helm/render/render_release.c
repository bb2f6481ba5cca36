/* The controller's render: render_template's pipeline up to the rendered files, then Helm's
 * install-time split and sort (manifest_build keeps each document's head, hooks and the release
 * manifest string, which the actions need). No I/O: runs on a worker thread. */
#include <stdlib.h>
#include <string.h>

#include "helm/render/manifest.h"
#include "helm/render/render.h"

int render_release(chart_t *c, cJSON *user_values, const render_opts_t *opts, manifest_set_t *set, render_output_t *crds,
                   buf_t *err) {
  memset(set, 0, sizeof *set);
  memset(crds, 0, sizeof *crds);
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
