/* What a release reads besides its own object, with the rules the engine applies to them: the
 * valuesFrom ConfigMaps and Secrets (merged in order, optional, valuesKey, targetPath), a packaged
 * chart held in a ConfigMap or Secret, and a chart source's credentials Secret. Pure functions over
 * objects already fetched: the engine calls them from its non-blocking state machine, `rudder diff`
 * after its own blocking GETs, so both read the same inputs the same way. */
#pragma once
#include <stddef.h>
#include <cjson/cJSON.h>
#include "base/buf.h"
#include "helm/source/source.h"
#include "reconcile/request.h"

/* Merges what valuesFrom entry v gives into acc (an object: what the entries before it gave).
 * status and errmsg are those of the GET of v's object, obj its parsed body (NULL unless status is
 * 2xx). An optional entry whose object (404) or key is missing gives nothing. Without targetPath the
 * key's text is YAML merged at the root; with it the text is set at that path with --set's rules, as
 * Flux does. 0, or -1 with err saying what and where (v->field, the object, the key). After the last
 * entry the request's own values go over acc (values_merge_maps). */
int inputs_values_from_merge(const req_values_from_t *v, int status, const char *errmsg, const cJSON *obj, cJSON *acc,
                             buf_t *err);

/* The packaged chart (.tgz) that src (REQ_SRC_CONFIGMAP or REQ_SRC_SECRET, in namespace ns) names,
 * from obj: a ConfigMap's binaryData or data (base64), a Secret's data. 0 and *tgz (malloc'd, *len
 * bytes) with *what naming where it came from (for the chart source's messages); or -1 with err. */
int inputs_chart_bytes(const req_chart_src_t *src, const char *ns, const cJSON *obj, unsigned char **tgz, size_t *len,
                       buf_t *what, buf_t *err);

/* A chart URL's credentials (username, password; ca.crt, tls.crt/tls.key), read from a Secret.
 * conn points into bufs: keep them until conn is used, then inputs_conn_free. */
typedef struct inputs_conn_s {
  source_conn_t conn;
  buf_t user, pass, ca, crt, key;
} inputs_conn_t;

/* Fills c from src's credentials Secret secret (in namespace ns). 0, or -1 with err (a value that is
 * not base64, a client certificate without its key). */
int inputs_conn_from_secret(const req_chart_src_t *src, const char *ns, const cJSON *secret, inputs_conn_t *c, buf_t *err);
/* Wipes and frees what c holds. */
void inputs_conn_free(inputs_conn_t *c);
