#include "watch/ndjson.h"
#include <stdio.h>
#include <string.h>
#include <uv.h>

void watch_ndjson_init(watch_ndjson_t *nd, size_t max_line, watch_ndjson_cb cb, void *data) {
  memset(nd, 0, sizeof *nd);
  nd->max_line = max_line ? max_line : (16u << 20);
  nd->cb = cb;
  nd->data = data;
}

void watch_ndjson_free(watch_ndjson_t *nd) { buf_free(&nd->line); }

cJSON *watch_ndjson_take(watch_ndjson_t *nd) {
  if (!nd->cur) return NULL;
  return cJSON_DetachItemFromObjectCaseSensitive(nd->cur, "object");
}

static int nd__line(watch_ndjson_t *nd, const char *p, size_t n) {
  while (n && (p[n - 1] == '\r' || p[n - 1] == ' ' || p[n - 1] == '\t')) n--;
  while (n && (*p == ' ' || *p == '\t')) { p++; n--; }
  if (!n) return 0; /* blank lines are keep-alive noise */
  cJSON *ev = cJSON_ParseWithLength(p, n);
  if (!ev) {
    snprintf(nd->err, sizeof nd->err, "watch event %zu is not valid JSON (%zu bytes, starting \"%.40s\")",
             nd->events + 1, n, p);
    return UV_EPROTO;
  }
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
  cJSON *obj = cJSON_GetObjectItemCaseSensitive(ev, "object");
  if (!cJSON_IsString(type) || !cJSON_IsObject(obj)) {
    snprintf(nd->err, sizeof nd->err, "watch event %zu lacks a string \"type\" or an object \"object\"", nd->events + 1);
    cJSON_Delete(ev);
    return UV_EPROTO;
  }
  nd->events++;
  nd->cur = ev;
  int r = nd->cb(nd, type->valuestring, obj, nd->data);
  nd->cur = NULL;
  cJSON_Delete(ev);
  return r;
}

int watch_ndjson_feed(watch_ndjson_t *nd, const char *p, size_t n) {
  while (n) {
    const char *nl = memchr(p, '\n', n);
    if (!nl) {
      /* Only the new bytes are scanned next time: no rescans of the carried-over part. */
      if (nd->line.len + n > nd->max_line) goto too_long;
      return buf_append(&nd->line, p, n) ? UV_ENOMEM : 0;
    }
    size_t k = (size_t)(nl - p);
    int r;
    if (nd->line.len) {
      if (nd->line.len + k > nd->max_line) goto too_long;
      if (buf_append(&nd->line, p, k)) return UV_ENOMEM;
      r = nd__line(nd, nd->line.data, nd->line.len);
      buf_reset(&nd->line);
    } else {
      if (k > nd->max_line) goto too_long;
      r = nd__line(nd, p, k); /* whole line in this piece: parse in place */
    }
    if (r) return r;
    p += k + 1;
    n -= k + 1;
  }
  return 0;
too_long:
  snprintf(nd->err, sizeof nd->err, "watch event %zu is longer than the limit of %zu bytes", nd->events + 1,
           nd->max_line);
  return UV_E2BIG;
}
