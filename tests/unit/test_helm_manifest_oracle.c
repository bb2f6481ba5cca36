/* Differential test of the manifest pipeline against Helm itself: the oracle runs Helm v4.3.1's
 * install (fake cluster) on the same template files, and the release manifest, notes and hooks it
 * records must equal what helm/manifest builds, byte for byte. The whole Helm-made record must also
 * survive our decode and re-encode unchanged. */
#include "helm/render/manifest.h"
#include "helm/release/release.h"
#include "tests/oracle/release/run.h"
#include "t.h"

static const char *oracle;

typedef struct tcase_s {
  const char *title;
  size_t want_docs, want_hooks; /* sanity: what the case must exercise */
  const char *files[16][2]; /* template name (under the chart), text; NULL-terminated */
} tcase_t;

static const tcase_t cases[] = {
    {"kinds and install order", 7, 0,
     {{"templates/deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n"},
      {"templates/svc.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"},
      {"templates/all.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n---\napiVersion: v1\nkind: Namespace\n"
                             "metadata:\n  name: ns\n---\napiVersion: example.com/v1\nkind: Zebra\nmetadata:\n  name: z\n---\n"
                             "apiVersion: example.com/v1\nkind: Aardvark\nmetadata:\n  name: a\n---\napiVersion: rbac.authorization.k8s.io/v1\n"
                             "kind: ClusterRole\nmetadata:\n  name: cr\n"},
      {"templates/NOTES.txt", "Visit http://web <now> & enjoy\n"},
      {NULL, NULL}}},
    {"separators, blank and comment-only documents", 8, 0,
     {{"templates/a.yaml", "\n\n  \n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: \"---\"\n---   \n---\n"
                           "# only a comment\n---\t\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n\n\n"},
      {"templates/b.yaml", "--- # trailing comment on the separator\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"},
      {"templates/c.yaml", "   \n\t\n"},
      {"templates/_helpers.tpl", "{{/* partial */}}\n"},
      {"templates/crlf.yaml", "apiVersion: v1\r\nkind: Secret\r\nmetadata:\r\n  name: s\r\n---\r\napiVersion: v1\r\nkind: Secret\r\nmetadata:\r\n  name: t\r\n"},
      {"templates/sub/nested.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nested\n"},
      {"templates/Zupper.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: upper\n"},
      {NULL, NULL}}},
    {"hooks", 1, 4,
     {{"templates/hooks.yaml",
       "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: pre\n  annotations:\n    \"helm.sh/hook\": pre-install,pre-upgrade\n"
       "    \"helm.sh/hook-weight\": \"-3\"\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: test\n  annotations:\n"
       "    helm.sh/hook: test-success\n    helm.sh/hook-delete-policy: Hook-Succeeded , before-hook-creation\n"
       "    helm.sh/hook-output-log-policy: hook-failed\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: post\n"
       "  annotations:\n    helm.sh/hook: post-install\n    helm.sh/hook-weight: 7\n---\napiVersion: v1\nkind: ConfigMap\n"
       "metadata:\n  name: weird\n  annotations:\n    helm.sh/hook: sometimes\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n"
       "  name: plain\n  annotations:\n    other: x\n    helm.sh/resource-policy: keep\n"},
      {"templates/secret-hook.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  annotations:\n    helm.sh/hook: pre-install\n"},
      {NULL, NULL}}},
    {"many of one kind keep file and document order", 7, 0,
     {{"templates/b.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b1\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b2\n"},
      {"templates/a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a1\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: a2\n"},
      {"templates/a-b.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ab\n"},
      {"templates/a_b.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a_b\n"},
      {"templates/unicode.yaml", "\xe2\x80\x83" "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: u\ndata:\n  k: \"\xc3\xa9 <b> \\u2028\"\n"},
      {NULL, NULL}}},
};

static int in_install_event(const release_hook_t *h) {
  for (size_t i = 0; i < h->nevents; i++)
    if (strcmp(h->events[i], "pre-install") == 0 || strcmp(h->events[i], "post-install") == 0) return 1;
  return 0;
}

static void run_case(const tcase_t *tc) {
  /* the install input for the oracle */
  cJSON *in = cJSON_CreateObject();
  cJSON_AddStringToObject(in, "name", "rel");
  cJSON_AddStringToObject(in, "namespace", "apps");
  cJSON *files = cJSON_AddObjectToObject(in, "files");
  cJSON_AddStringToObject(files, "Chart.yaml", "apiVersion: v2\nname: mychart\nversion: 0.1.0\n");
  manifest_file_t mf[16];
  size_t n = 0;
  for (; tc->files[n][0]; n++) {
    cJSON_AddStringToObject(files, tc->files[n][0], tc->files[n][1]);
    mf[n].name = tc->files[n][0];
    mf[n].text = tc->files[n][1];
    mf[n].len = strlen(tc->files[n][1]);
  }
  char *input = cJSON_PrintUnformatted(in);
  cJSON_Delete(in);
  char *gojson = NULL;
  size_t golen = 0;
  int rc = oracle_run(oracle, "install", input, strlen(input), &gojson, &golen);
  free(input);
  CHECK_EQ_INT(rc, 0);
  release_t *rel = NULL;
  char err[256];
  if (rc == 0) {
    rc = release_decode_json(gojson, golen, &rel, err, sizeof err);
    CHECK_EQ_INT(rc, 0);
    if (rc) fprintf(stderr, "%s: %s\n", tc->title, err);
  }
  manifest_set_t set;
  manifest_error_t merr;
  int mrc = manifest_build("mychart", mf, n, MANIFEST_INSTALL_ORDER, &set, &merr);
  CHECK_EQ_INT(mrc, 0);
  if (mrc) fprintf(stderr, "%s: %s\n", tc->title, merr.message);
  if (!mrc) {
    CHECK_EQ_INT(set.ndocs, tc->want_docs);
    CHECK_EQ_INT(set.nhooks, tc->want_hooks);
  }
  if (rel && !mrc) {
    /* the whole record Helm wrote round-trips */
    buf_t b = BUF_INIT;
    CHECK_EQ_INT(release_encode_json(rel, &b), 0);
    CHECK_EQ_STR(b.data, gojson);
    buf_free(&b);
    /* what Helm recorded */
    CHECK_EQ_STR(rel->manifest ? rel->manifest : "", set.manifest);
    CHECK_EQ_STR(rel->info->notes ? rel->info->notes : "", set.notes);
    CHECK_EQ_STR(rel->info->description, "Install complete");
    CHECK_EQ_STR(rel->apply_method, "ssa");
    CHECK_EQ_INT(rel->nhooks, set.nhooks);
    for (size_t i = 0; i < rel->nhooks && i < set.nhooks; i++) {
      const release_hook_t *g = &rel->hooks[i];
      const manifest_hook_t *o = &set.hooks[i];
      CHECK_EQ_STR(g->name, o->doc.name);
      CHECK_EQ_STR(g->kind, o->doc.kind);
      CHECK_EQ_STR(g->path, o->doc.source);
      CHECK_EQ_STR(g->manifest, o->doc.content);
      CHECK_EQ_INT(g->weight, o->weight);
      CHECK_EQ_INT(g->nevents, o->nevents);
      for (size_t k = 0; k < g->nevents && k < o->nevents; k++) CHECK_EQ_STR(g->events[k], o->events[k]);
      /* install runs its hooks and gives those without a delete policy before-hook-creation */
      if (o->ndelete_policies == 0 && in_install_event(g)) {
        CHECK_EQ_INT(g->ndelete_policies, 1);
        if (g->ndelete_policies == 1) CHECK_EQ_STR(g->delete_policies[0], "before-hook-creation");
      } else {
        CHECK_EQ_INT(g->ndelete_policies, o->ndelete_policies);
        for (size_t k = 0; k < g->ndelete_policies && k < o->ndelete_policies; k++)
          CHECK_EQ_STR(g->delete_policies[k], o->delete_policies[k]);
      }
      CHECK_EQ_INT(g->noutput_log_policies, o->noutput_log_policies);
      for (size_t k = 0; k < g->noutput_log_policies && k < o->noutput_log_policies; k++)
        CHECK_EQ_STR(g->output_log_policies[k], o->output_log_policies[k]);
    }
    if (t_failed) fprintf(stderr, "case: %s\n", tc->title);
  }
  if (!mrc) manifest_set_free(&set);
  release_free(rel);
  free(gojson);
}

int main(void) {
  oracle = oracle_path();
  if (!oracle) {
    CHECK(!"RUDDER_RELEASE_ORACLE names the Helm release oracle");
    return t_done();
  }
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) run_case(&cases[i]);
  return t_done();
}
