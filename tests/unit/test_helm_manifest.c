#include "helm/render/manifest.h"
#include "helm/release/release.h"
#include <errno.h>
#include <stdlib.h>
#include "t.h"

#define F(n, t) {n, t, sizeof(t) - 1}

static void build_tests(void) {
  manifest_file_t files[] = {
      F("templates/z-deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"),
      F("templates/a-svc.yaml", "\n\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: other\n"
                                "---\n# just a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"),
      F("templates/_helpers.tpl", "apiVersion: v1\nkind: Broken\n"),
      F("templates/NOTES.txt", "Thank you\n"),
      F("templates/sub/MYNOTES.txt", "dropped"),
      F("templates/blank.yaml", " \n\n"),
      F("templates/hook.yaml", "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  annotations:\n"
                               "    helm.sh/hook: pre-install, Pre-Upgrade\n    helm.sh/hook-weight: \"-5\"\n"
                               "    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded\n"
                               "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: t\n  annotations:\n"
                               "    helm.sh/hook: test-success\n    helm.sh/hook-weight: 3\n"
                               "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: unknown\n  annotations:\n"
                               "    helm.sh/hook: on-tuesday\n"),
      F("templates/crd-ish.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n---\n"
                                  "apiVersion: example.com/v1\nkind: Alpha\nmetadata:\n  name: a\n  annotations:\n"
                                  "    note: 5\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns\n"),
  };
  manifest_set_t set;
  manifest_error_t err;
  int rc = manifest_build("mychart", files, sizeof files / sizeof *files, MANIFEST_INSTALL_ORDER, &set, &err);
  CHECK_EQ_INT(rc, 0);
  if (rc) {
    fprintf(stderr, "%s\n", err.message);
    return;
  }
  CHECK_EQ_STR(set.notes, "Thank you\n");
  /* install order: Namespace, ConfigMap, Service, Deployment, then unknown kinds: "" (the comment-only
   * doc), Alpha, Widget */
  CHECK_EQ_INT(set.ndocs, 7);
  const char *kinds[] = {"Namespace", "ConfigMap", "Service", "Deployment", "", "Alpha", "Widget"};
  for (size_t i = 0; i < 7 && i < set.ndocs; i++) CHECK_EQ_STR(set.docs[i].kind, kinds[i]);
  CHECK_EQ_STR(set.docs[2].source, "mychart/templates/a-svc.yaml");
  CHECK_EQ_STR(set.docs[2].namespace, "other");
  CHECK_EQ_INT(set.docs[2].line, 3);
  CHECK_EQ_INT(set.docs[1].line, 11);
  CHECK(set.docs[4].is_empty);
  CHECK_EQ_STR(cJSON_GetObjectItem(set.docs[5].annotations, "note")->valuestring, "5");
  const char *want =
      "---\n# Source: mychart/templates/crd-ish.yaml\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns\n\n"
      "---\n# Source: mychart/templates/a-svc.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n\n"
      "---\n# Source: mychart/templates/a-svc.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: other\n\n"
      "---\n# Source: mychart/templates/z-deploy.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n\n"
      "---\n# Source: mychart/templates/a-svc.yaml\n# just a comment\n\n"
      "---\n# Source: mychart/templates/crd-ish.yaml\napiVersion: example.com/v1\nkind: Alpha\nmetadata:\n  name: a\n  annotations:\n    note: 5\n\n"
      "---\n# Source: mychart/templates/crd-ish.yaml\napiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n\n";
  CHECK_EQ_STR(set.manifest, want);
  CHECK_EQ_INT(set.manifest_len, strlen(want));
  /* hooks: the unknown-event one is dropped; sorted by kind (Pod before Job) */
  CHECK_EQ_INT(set.nhooks, 2);
  if (set.nhooks == 2) {
    CHECK_EQ_STR(set.hooks[0].doc.kind, "Pod");
    CHECK_EQ_INT(set.hooks[0].nevents, 1);
    CHECK_EQ_STR(set.hooks[0].events[0], "test");
    CHECK_EQ_INT(set.hooks[0].weight, 3);
    CHECK_EQ_STR(set.hooks[1].doc.name, "migrate");
    CHECK_EQ_INT(set.hooks[1].nevents, 2);
    CHECK_EQ_STR(set.hooks[1].events[1], "pre-upgrade");
    CHECK_EQ_INT(set.hooks[1].weight, -5);
    CHECK_EQ_INT(set.hooks[1].ndelete_policies, 2);
    CHECK_EQ_STR(set.hooks[1].delete_policies[1], "hook-succeeded");
    CHECK_EQ_STR(set.hooks[1].doc.source, "mychart/templates/hook.yaml");
  }
  /* into a release record, as Helm's install records it */
  release_t rel = {0};
  CHECK_EQ_INT(release_set_rendered(&rel, &set), 0);
  CHECK_EQ_STR(rel.manifest, want);
  CHECK_EQ_STR(rel.info->notes, "Thank you\n");
  buf_t js_rel = BUF_INIT;
  CHECK_EQ_INT(release_encode_json(&rel, &js_rel), 0);
  CHECK(strstr(js_rel.data, "\"hooks\":[{\"name\":\"t\",\"kind\":\"Pod\",\"path\":\"mychart/templates/hook.yaml\","
                            "\"manifest\":\"apiVersion: v1\\nkind: Pod\\nmetadata:\\n  name: t\\n  annotations:\\n"
                            "    helm.sh/hook: test-success\\n    helm.sh/hook-weight: 3\\n\",\"events\":[\"test\"],"
                            "\"last_run\":{\"phase\":\"\"},\"weight\":3},{\"name\":\"migrate\"") != NULL);
  buf_free(&js_rel);
  CHECK_EQ_INT(release_set_rendered(&rel, &set), 0); /* replacing frees the old */
  release_clear(&rel);

  /* ownership metadata for apply */
  cJSON *extra = cJSON_Parse("{\"rudder.dev/release\":\"ns.rel\"}");
  cJSON *obj;
  CHECK_EQ_INT(manifest_object_json(&set.docs[2], "rel", "ns", extra, &obj, &err), 0);
  char *js = cJSON_PrintUnformatted(obj);
  CHECK_EQ_STR(js, "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"web\",\"namespace\":\"other\","
                   "\"labels\":{\"app.kubernetes.io/managed-by\":\"Helm\",\"rudder.dev/release\":\"ns.rel\"},"
                   "\"annotations\":{\"meta.helm.sh/release-name\":\"rel\",\"meta.helm.sh/release-namespace\":\"ns\"}}}");
  free(js);
  cJSON_Delete(obj);
  CHECK_EQ_INT(manifest_object_json(&set.docs[4], "rel", "ns", NULL, &obj, &err), -EINVAL);
  cJSON_Delete(extra);

  /* uninstall order of the same docs */
  manifest_sort_docs(set.docs, set.ndocs, MANIFEST_UNINSTALL_ORDER);
  const char *ukinds[] = {"Deployment", "Service", "ConfigMap", "Namespace", "", "Alpha", "Widget"};
  for (size_t i = 0; i < 7 && i < set.ndocs; i++) CHECK_EQ_STR(set.docs[i].kind, ukinds[i]);

  /* parsing the stored manifest back, as Helm's uninstall does */
  manifest_set_t back;
  CHECK_EQ_INT(manifest_parse_release(set.manifest, set.manifest_len, MANIFEST_UNINSTALL_ORDER, &back, &err), 0);
  CHECK_EQ_INT(back.ndocs, 7);
  for (size_t i = 0; i < 7 && i < back.ndocs; i++) CHECK_EQ_STR(back.docs[i].kind, ukinds[i]);
  CHECK_EQ_STR(back.docs[0].content, "# Source: mychart/templates/z-deploy.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n\n");
  manifest_set_free(&back);
  manifest_set_free(&set);
}

static void existing_labels_test(void) {
  manifest_file_t f[] = {F("templates/a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n"
                                               "    app.kubernetes.io/managed-by: someone\n    keep: me\n  annotations: null\n"
                                               "data:\n  big: 12345678901234567890\n")};
  manifest_set_t set;
  manifest_error_t err;
  CHECK_EQ_INT(manifest_build("c", f, 1, MANIFEST_INSTALL_ORDER, &set, &err), 0);
  cJSON *obj;
  CHECK_EQ_INT(manifest_object_json(&set.docs[0], "r", "n", NULL, &obj, &err), 0);
  char *js = cJSON_PrintUnformatted(obj);
  CHECK_EQ_STR(js, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\",\"labels\":"
                   "{\"app.kubernetes.io/managed-by\":\"Helm\",\"keep\":\"me\"},\"annotations\":"
                   "{\"meta.helm.sh/release-name\":\"r\",\"meta.helm.sh/release-namespace\":\"n\"}},"
                   "\"data\":{\"big\":12345678901234567890}}");
  free(js);
  cJSON_Delete(obj);
  manifest_set_free(&set);
}

static void expect_error(const char *text, const char *want) {
  manifest_file_t f[] = {{"templates/x.yaml", text, strlen(text)}};
  manifest_set_t set;
  manifest_error_t err;
  CHECK_EQ_INT(manifest_build("c", f, 1, MANIFEST_INSTALL_ORDER, &set, &err), -EINVAL);
  CHECK_EQ_STR(err.message, want);
  CHECK(set.docs == NULL && set.manifest == NULL);
}

static void error_tests(void) {
  expect_error("apiVersion: v1\nkind: A\nmetadata:\n  name: a\n---\n\napiVersion: v1\nkind: B\nmetadata:\n  name: b: c\n",
               "c/templates/x.yaml: line 10, column 10: YAML parse error: mapping values are not allowed in this context");
  expect_error("apiVersion: v1\nmetadata:\n  name: a\n", "c/templates/x.yaml: line 1: object (apiVersion v1) has no kind");
  expect_error("kind: A\nmetadata:\n  name: a\n", "c/templates/x.yaml: line 1: object has no apiVersion");
  expect_error("a: 1\n---\n  apiVersion: v1\n  kind: A\n", "c/templates/x.yaml: line 1: object has no apiVersion");
  expect_error("apiVersion: v1\nkind: A\n---\napiVersion: v1\nkind: B\n", "c/templates/x.yaml: line 1: A object has no metadata.name");
  expect_error("apiVersion: v1\nkind: A\nmetadata:\n  name: x\n---   \n  apiVersion: v1\n  kind: B\n",
               "c/templates/x.yaml: line 7, column 7: YAML parse error: mapping values are not allowed in this context");
  expect_error("just some text\n", "c/templates/x.yaml: line 1: document is a YAML scalar, not a Kubernetes object");
  expect_error("- a\n- b\n", "c/templates/x.yaml: line 1: document is a YAML sequence, not a Kubernetes object");
  expect_error("apiVersion: v1\nkind: [A]\nmetadata:\n  name: a\n", "c/templates/x.yaml: line 1: kind must be a string, not an array");
  expect_error("apiVersion: v1\nkind: A\nmetadata:\n  name: a\n  annotations:\n    x: {y: z}\n",
               "c/templates/x.yaml: line 1: metadata.annotations.x must be a string, not an object");
  expect_error("apiVersion: v1\nkind: A\nmetadata:\n  name: a\n  name: b\n",
               "c/templates/x.yaml: line 5, column 3: YAML parse error: mapping key \"name\" already defined");
  /* a document on the separator's line: columns count from the file's line start */
  expect_error("--- {a: b: c}\n", "c/templates/x.yaml: line 1, column 10: YAML parse error: did not find expected ',' or '}' (while parsing a flow mapping that started at line 1, column 5)");
}

static void stable_order_test(void) {
  /* 12 ConfigMaps in one stored manifest: Helm names them manifest-0..11 and sorts the names as
   * strings before the stable kind sort, so manifest-10 and -11 come right after manifest-1. */
  char buf[4096];
  size_t len = 0;
  for (int i = 0; i < 12; i++)
    len += (size_t)snprintf(buf + len, sizeof buf - len, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm%d\n", i);
  manifest_set_t set;
  manifest_error_t err;
  CHECK_EQ_INT(manifest_parse_release(buf, len, MANIFEST_UNINSTALL_ORDER, &set, &err), 0);
  const char *want[] = {"cm0", "cm1", "cm10", "cm11", "cm2", "cm3", "cm4", "cm5", "cm6", "cm7", "cm8", "cm9"};
  CHECK_EQ_INT(set.ndocs, 12);
  for (int i = 0; i < 12 && i < (int)set.ndocs; i++) CHECK_EQ_STR(set.docs[i].name, want[i]);
  CHECK_EQ_STR(set.docs[2].source, "manifest-10");
  manifest_set_free(&set);
  CHECK_EQ_INT(manifest_kind_rank("PriorityClass", MANIFEST_INSTALL_ORDER), 0);
  CHECK_EQ_INT(manifest_kind_rank("PriorityClass", MANIFEST_UNINSTALL_ORDER), 37);
  CHECK_EQ_INT(manifest_kind_rank("Widget", MANIFEST_INSTALL_ORDER), -1);
}

int main(void) {
  build_tests();
  existing_labels_test();
  error_tests();
  stable_order_test();
  return t_done();
}
