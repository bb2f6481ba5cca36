/* helm/action/fields: managed-field sets read for drift detection (the e2e.drift test runs the same
 * code on what a real API server writes; these pin the corner cases). */
#include "helm/action/fields.h"
#include "base/buf.h"
#include "t.h"
#include <stdlib.h>

typedef struct {
  buf_t out;
} seen_t;

static void seen_cb(const char *path, const char *ptr, void *data) {
  seen_t *s = data;
  buf_printf(&s->out, "%s=%s;", path, ptr ? ptr : "?");
}

static const char *obj_text =
    "{\"metadata\":{\"name\":\"w\",\"managedFields\":["
    "{\"manager\":\"rudder\",\"operation\":\"Apply\",\"time\":\"2026-01-01T00:00:05Z\",\"fieldsV1\":"
    "{\"f:spec\":{\"f:template\":{\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"web\\\"}\":{\".\":{},"
    "\"f:name\":{}}}}}}}},"
    "{\"manager\":\"kube-controller-manager\",\"operation\":\"Update\",\"subresource\":\"status\","
    "\"time\":\"2026-01-01T00:09:00Z\",\"fieldsV1\":{\"f:status\":{}}},"
    "{\"manager\":\"kubectl-edit\",\"operation\":\"Update\",\"time\":\"2026-01-01T00:00:09Z\",\"fieldsV1\":"
    "{\"f:spec\":{\"f:replicas\":{},\"f:template\":{\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"web\\\"}\":"
    "{\"f:image\":{}}}}}}}}]},"
    "\"spec\":{\"replicas\":3,\"template\":{\"spec\":{\"containers\":[{\"name\":\"side\",\"image\":\"s:1\"},"
    "{\"name\":\"web\",\"image\":\"w:2\"}]}}}}";

/* What rudder's apply would own: its fields plus replicas and the image. */
static const char *after_text =
    "{\"f:spec\":{\"f:replicas\":{},\"f:template\":{\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"web\\\"}\":"
    "{\".\":{},\"f:name\":{},\"f:image\":{}}}}}},\"f:data\":{\"f:a/b~c\":{}}}";

int main(void) {
  cJSON *obj = cJSON_Parse(obj_text), *after = cJSON_Parse(after_text);
  CHECK(obj && after);
  const cJSON *mine = fields_applied(obj, "rudder");
  CHECK(mine != NULL);
  CHECK(fields_applied(obj, "helm") == NULL);
  CHECK(fields_digest(obj, "rudder") != 0);
  CHECK_EQ_INT(fields_digest(obj, "helm"), 0);
  CHECK_EQ_STR(fields_applied_time(obj, "rudder"), "2026-01-01T00:00:05Z");
  /* kubectl-edit wrote after rudder (the status write does not count). */
  CHECK_EQ_INT(fields_written_by_other(obj, "rudder"), 1);
  cJSON *last = cJSON_Parse("{\"metadata\":{\"managedFields\":[{\"manager\":\"x\",\"operation\":\"Update\","
                            "\"time\":\"2026-01-01T00:00:05Z\"},{\"manager\":\"rudder\",\"operation\":\"Apply\","
                            "\"time\":\"2026-01-01T00:00:05Z\"}]}}");
  CHECK_EQ_INT(fields_written_by_other(last, "rudder"), 0); /* the same second counts as rudder's */
  cJSON_Delete(last);

  seen_t s = {BUF_INIT};
  int n = fields_added(mine, after, obj, seen_cb, &s);
  CHECK_EQ_INT(n, 3);
  /* The list item is found by its key (index 1, not 0); a field the object lacks has no pointer. */
  CHECK_EQ_STR(s.out.data, ".spec.replicas=/spec/replicas;"
                           ".spec.template.spec.containers[name=web].image=/spec/template/spec/containers/1/image;"
                           ".data.a/b~c=?;");
  buf_free(&s.out);
  n = fields_added(NULL, after, obj, seen_cb, &s);
  CHECK_EQ_INT(n, 4); /* with nothing owned before, every leaf */
  buf_free(&s.out);

  CHECK(fields_pointer_under("/spec/replicas", "/spec"));
  CHECK(fields_pointer_under("/spec/replicas", "/spec/replicas"));
  CHECK(fields_pointer_under("/spec/replicas", "/spec/"));
  CHECK(!fields_pointer_under("/spec/replicasX", "/spec/replicas"));
  CHECK(!fields_pointer_under("/spec", "/spec/replicas"));

  const cJSON *img = fields_pointer_get(obj, "/spec/template/spec/containers/1/image");
  CHECK(cJSON_IsString(img) && !strcmp(img->valuestring, "w:2"));
  CHECK(fields_pointer_get(obj, "/spec/template/spec/containers/7") == NULL);
  CHECK_EQ_INT(fields_pointer_remove(obj, "/spec/template/spec/containers/0"), 0);
  img = fields_pointer_get(obj, "/spec/template/spec/containers/0/image");
  CHECK(cJSON_IsString(img) && !strcmp(img->valuestring, "w:2"));
  CHECK_EQ_INT(fields_pointer_remove(obj, "/spec/replicas"), 0);
  CHECK_EQ_INT(fields_pointer_remove(obj, "/spec/replicas"), -2);
  CHECK_EQ_INT(fields_pointer_remove(obj, "spec"), -22);
  CHECK_EQ_INT(fields_pointer_remove(obj, "/spec/~2"), -22);
  cJSON *esc = cJSON_Parse("{\"a/b\":{\"c~d\":1}}");
  CHECK_EQ_INT(fields_pointer_remove(esc, "/a~1b/c~0d"), 0);
  CHECK(esc && cJSON_GetObjectItemCaseSensitive(esc, "a/b") && !cJSON_GetObjectItemCaseSensitive(esc, "a/b")->child);
  cJSON_Delete(esc);

  /* An entry the server keeps no time for (the scale subresource) is not known to be older. */
  cJSON *sc = cJSON_Parse("{\"metadata\":{\"managedFields\":[{\"manager\":\"rudder\",\"operation\":\"Apply\","
                          "\"time\":\"2026-01-01T00:00:05Z\",\"fieldsV1\":{}},{\"manager\":\"kubectl\","
                          "\"operation\":\"Update\",\"subresource\":\"scale\",\"fieldsV1\":{}}]}}");
  CHECK_EQ_INT(fields_written_by_other(sc, "rudder"), 1);
  cJSON_Delete(sc);
  cJSON_Delete(obj);
  cJSON_Delete(after);
  return t_done();
}
