/* The inputs a release reads besides its object (inputs.h). */
#include "reconcile/inputs.h"
#include "base/b64.h"
#include "helm/values/values.h"
#include "watch/client.h"
#include <stdlib.h>
#include <string.h>

int inputs_values_from_merge(const req_values_from_t *v, int status, const char *errmsg, const cJSON *obj, cJSON *acc,
                             buf_t *err) {
  const char *kind = v->secret ? "Secret" : "ConfigMap";
  if (status == 404 && v->optional) return 0;
  if (status < 200 || status >= 300 || !obj) {
    buf_printf(err, "%s: cannot read %s %s/%s: %s", v->field, kind, v->ns, v->name, errmsg ? errmsg : "failed");
    return -1;
  }
  buf_t val = BUF_INIT;
  char msg[512] = "";
  int rc = 0, got = kube_data_value(obj, v->key, v->secret, &val, msg, sizeof msg);
  if (!got) {
    if (!v->optional) buf_printf(err, "%s: %s %s/%s has no key %s", v->field, kind, v->ns, v->name, v->key), rc = -1;
  } else if (got < 0) {
    buf_printf(err, "%s: %s %s/%s key %s: not base64 (%s)", v->field, kind, v->ns, v->name, v->key, msg);
    rc = -1;
  } else if (v->target_path) {
    /* As Flux: the text is set at the path with --set's rules. */
    buf_t set = BUF_INIT;
    buf_printf(&set, "%s=%.*s", v->target_path, (int)val.len, val.data ? val.data : "");
    if (!set.data) buf_puts(err, "out of memory"), rc = -1;
    else if (values_parse_set(set.data, VALUES_SET, acc, NULL, NULL, msg, sizeof msg))
      buf_printf(err, "%s.targetPath: %s", v->field, msg), rc = -1;
    buf_free(&set);
  } else {
    cJSON *vals = NULL;
    if (values_parse_yaml(val.data ? val.data : "", val.len, &vals, msg, sizeof msg))
      buf_printf(err, "%s: %s %s/%s key %s: %s", v->field, kind, v->ns, v->name, v->key, msg), rc = -1;
    else if (values_merge_maps_take(acc, vals)) buf_puts(err, "out of memory"), rc = -1;
  }
  if (val.data) memset(val.data, 0, val.len); /* a Secret's values */
  buf_free(&val);
  return rc;
}

int inputs_chart_bytes(const req_chart_src_t *src, const char *ns, const cJSON *obj, unsigned char **tgz, size_t *len,
                       buf_t *what, buf_t *err) {
  const char *kind = src->kind == REQ_SRC_CONFIGMAP ? "ConfigMap" : "Secret";
  const cJSON *v = NULL;
  char berr[128] = "";
  *tgz = NULL;
  *len = 0;
  if (src->kind == REQ_SRC_CONFIGMAP)
    v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "binaryData"), src->obj_key);
  if (!v) v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "data"), src->obj_key);
  if (!cJSON_IsString(v)) {
    buf_printf(err, "%s %s/%s has no key %s holding a packaged chart", kind, ns, src->obj_name, src->obj_key);
    return -1;
  }
  if (b64_decode_alloc(v->valuestring, strlen(v->valuestring), tgz, len, berr, sizeof berr)) {
    buf_printf(err, "%s %s/%s key %s: not base64 (%s)", kind, ns, src->obj_name, src->obj_key, berr);
    return -1;
  }
  if (buf_printf(what, "%s %s/%s key %s", kind, ns, src->obj_name, src->obj_key)) {
    free(*tgz);
    *tgz = NULL;
    buf_puts(err, "out of memory");
    return -1;
  }
  return 0;
}

int inputs_conn_from_secret(const req_chart_src_t *src, const char *ns, const cJSON *secret, inputs_conn_t *c, buf_t *err) {
  memset(c, 0, sizeof *c);
  int bad = kube_data_value(secret, "username", true, &c->user, NULL, 0) < 0 ||
            kube_data_value(secret, "password", true, &c->pass, NULL, 0) < 0 ||
            kube_data_value(secret, "ca.crt", true, &c->ca, NULL, 0) < 0 ||
            kube_data_value(secret, "tls.crt", true, &c->crt, NULL, 0) < 0 ||
            kube_data_value(secret, "tls.key", true, &c->key, NULL, 0) < 0;
  if (bad || !c->crt.len != !c->key.len) {
    buf_printf(err, "%s: Secret %s/%s: %s", src->secret_field ? src->secret_field : "secretRef", ns, src->secret_name,
               bad ? "a value is not base64" : "tls.crt and tls.key must be given together");
    inputs_conn_free(c);
    return -1;
  }
  c->conn = (source_conn_t){.tls = {.ca_pem = c->ca.data, .ca_len = c->ca.len, .cert_pem = c->crt.data,
                                    .cert_len = c->crt.len, .key_pem = c->key.data, .key_len = c->key.len},
                            .auth = {.username = c->user.data, .password = c->pass.data}};
  return 0;
}

void inputs_conn_free(inputs_conn_t *c) {
  buf_t *all[] = {&c->user, &c->pass, &c->ca, &c->crt, &c->key};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    if (all[i]->data) memset(all[i]->data, 0, all[i]->len);
    buf_free(all[i]);
  }
  memset(&c->conn, 0, sizeof c->conn);
}
