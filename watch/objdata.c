/* Values held in API objects' data (client.h: kube_data_value). */
#include "watch/client.h"
#include "base/b64.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kube_data_value(const cJSON *obj, const char *key, bool secret, buf_t *out, char *err, size_t errlen) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "data"), key);
  if (!cJSON_IsString(v)) return 0;
  if (!secret) {
    if (!buf_append(out, v->valuestring, strlen(v->valuestring))) return 1;
    if (err && errlen) snprintf(err, errlen, "out of memory");
    return -1;
  }
  unsigned char *dec = NULL;
  size_t n = 0;
  char e[128] = "";
  if (b64_decode_alloc(v->valuestring, strlen(v->valuestring), &dec, &n, e, sizeof e)) {
    if (err && errlen) snprintf(err, errlen, "%s", e);
    return -1;
  }
  int r = buf_append(out, dec, n);
  memset(dec, 0, n); /* credentials do not stay behind in freed memory */
  free(dec);
  if (r && err && errlen) snprintf(err, errlen, "out of memory");
  return r ? -1 : 1;
}
