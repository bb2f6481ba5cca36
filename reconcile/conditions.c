#include "reconcile/conditions.h"
#include <stdio.h>
#include <string.h>
#include <time.h>

void cond_now_rfc3339(char out[32]) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

const cJSON *cond_find(const cJSON *conds, const char *type) {
  const cJSON *c;
  cJSON_ArrayForEach(c, conds) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "type");
    if (cJSON_IsString(t) && !strcmp(t->valuestring, type)) return c;
  }
  return NULL;
}

cJSON *cond_set(cJSON *conds, const cJSON *prev, const char *type, const char *status,
                        const char *reason, const char *message, long long gen, const char *now) {
  if (!conds) conds = cJSON_CreateArray();
  if (!conds) return NULL;
  const char *ltt = now;
  const cJSON *old = cond_find(prev, type);
  if (old) {
    const cJSON *os = cJSON_GetObjectItemCaseSensitive(old, "status");
    const cJSON *ot = cJSON_GetObjectItemCaseSensitive(old, "lastTransitionTime");
    if (cJSON_IsString(os) && !strcmp(os->valuestring, status) && cJSON_IsString(ot)) ltt = ot->valuestring;
  }
  cJSON *c = cJSON_CreateObject();
  if (!c) return conds;
  cJSON_AddStringToObject(c, "type", type);
  cJSON_AddStringToObject(c, "status", status);
  cJSON_AddNumberToObject(c, "observedGeneration", (double)gen);
  cJSON_AddStringToObject(c, "lastTransitionTime", ltt);
  cJSON_AddStringToObject(c, "reason", reason);
  cJSON_AddStringToObject(c, "message", message ? message : "");
  /* Replace an entry of the same type in place, so the order stays stable. */
  int i = 0;
  cJSON *e;
  cJSON_ArrayForEach(e, conds) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "type");
    if (cJSON_IsString(t) && !strcmp(t->valuestring, type)) {
      cJSON_ReplaceItemInArray(conds, i, c);
      return conds;
    }
    i++;
  }
  cJSON_AddItemToArray(conds, c);
  return conds;
}

cJSON *cond_remove(cJSON *conds, const char *type) {
  int i = 0;
  cJSON *e;
  cJSON_ArrayForEach(e, conds) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "type");
    if (cJSON_IsString(t) && !strcmp(t->valuestring, type)) {
      cJSON_DeleteItemFromArray(conds, i);
      return conds;
    }
    i++;
  }
  return conds;
}

const char *cond_message(const char *msg, char *buf, size_t len) {
  size_t n = msg ? strlen(msg) : 0;
  if (n < len) return msg ? msg : "";
  char tail[64];
  int tl = snprintf(tail, sizeof tail, " ... (%zu bytes cut)", n);
  size_t keep = len - (size_t)tl - 1;
  /* Not in the middle of a UTF-8 sequence. */
  while (keep > 0 && ((unsigned char)msg[keep] & 0xC0) == 0x80) keep--;
  memcpy(buf, msg, keep);
  snprintf(tail, sizeof tail, " ... (%zu bytes cut)", n - keep);
  snprintf(buf + keep, len - keep, "%s", tail);
  return buf;
}
