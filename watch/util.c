#include "watch/internal.h"
#include "base/buf.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>
#include <mbedtls/error.h>

void watch__errf(char **errmsg, const char *fmt, ...) {
  if (!errmsg) return;
  buf_t b = BUF_INIT;
  va_list ap;
  va_start(ap, fmt);
  int r = buf_vprintf(&b, fmt, ap);
  va_end(ap);
  free(*errmsg);
  /* On ENOMEM the caller still gets a message, just a static-free fallback. */
  *errmsg = r == 0 ? buf_steal(&b) : NULL;
  if (r) buf_free(&b);
}

char *watch__strdup(const char *s) { return s ? strdup(s) : NULL; }

static int watch__b64_value(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;
  if (c == '/' || c == '_') return 63;
  return -1;
}

int watch__b64_decode(const char *in, size_t in_len, char **out, size_t *out_len) {
  char *o = malloc(in_len / 4 * 3 + 4);
  if (!o) return UV_ENOMEM;
  size_t n = 0;
  uint32_t acc = 0;
  int bits = 0, pad = 0;
  for (size_t i = 0; i < in_len; i++) {
    unsigned char c = (unsigned char)in[i];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') { pad++; continue; }
    int v = watch__b64_value(c);
    if (v < 0 || pad) { free(o); return UV_EINVAL; } /* junk, or data after padding */
    acc = (acc << 6) | (uint32_t)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      o[n++] = (char)((acc >> bits) & 0xff);
    }
  }
  /* 6 leftover bits can never come from whole bytes. */
  if (bits >= 6 || pad > 2) { free(o); return UV_EINVAL; }
  o[n] = 0;
  *out = o;
  *out_len = n;
  return 0;
}

int watch__read_file(const char *path, size_t max, char **out, size_t *out_len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  buf_t b = BUF_INIT;
  for (;;) {
    if (buf_reserve(&b, 4096)) { close(fd); buf_free(&b); return UV_ENOMEM; }
    ssize_t r = read(fd, b.data + b.len, b.cap - b.len - 1);
    if (r < 0) {
      if (errno == EINTR) continue;
      int e = -errno;
      close(fd);
      buf_free(&b);
      return e;
    }
    if (r == 0) break;
    b.len += (size_t)r;
    b.data[b.len] = 0;
    if (b.len > max) { close(fd); buf_free(&b); return UV_EFBIG; }
  }
  close(fd);
  *out_len = b.len;
  *out = buf_steal(&b);
  return *out ? 0 : UV_ENOMEM;
}

const char *watch__strerror(int err) {
  if (err > -4096) return uv_strerror(err);
  /* mbedTLS codes are negative too but far below errno values. */
  static char msg[160];
  mbedtls_strerror(err, msg, sizeof msg);
  return msg;
}

/* ---- string map: open addressing with linear probing ---- */

static char watch__tomb; /* address marks a deleted slot */

static uint64_t watch__hash(const char *s) {
  uint64_t h = 1469598103934665603ULL; /* FNV-1a */
  for (; *s; s++) { h ^= (unsigned char)*s; h *= 1099511628211ULL; }
  return h;
}

static watch_map_entry_t *watch__find(const watch_map_t *m, const char *key, uint64_t h) {
  if (!m->cap) return NULL;
  for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    watch_map_entry_t *e = &m->slots[i];
    if (!e->key) return NULL;
    if (e->key != &watch__tomb && e->hash == h && strcmp(e->key, key) == 0) return e;
  }
}

static int watch__grow(watch_map_t *m) {
  size_t cap = m->cap ? m->cap : 16;
  while ((m->len + 1) * 4 >= cap * 3) cap *= 2; /* stay under 3/4 live load */
  watch_map_entry_t *s = calloc(cap, sizeof *s);
  if (!s) return UV_ENOMEM;
  for (size_t i = 0; i < m->cap; i++) {
    watch_map_entry_t *e = &m->slots[i];
    if (!e->key || e->key == &watch__tomb) continue;
    size_t j = e->hash & (cap - 1);
    while (s[j].key) j = (j + 1) & (cap - 1);
    s[j] = *e;
  }
  free(m->slots);
  m->slots = s;
  m->cap = cap;
  m->used = m->len;
  return 0;
}

void *watch_map_get(const watch_map_t *m, const char *key) {
  watch_map_entry_t *e = watch__find(m, key, watch__hash(key));
  return e ? e->value : NULL;
}

int watch_map_put(watch_map_t *m, const char *key, void *value, void **old) {
  uint64_t h = watch__hash(key);
  watch_map_entry_t *e = watch__find(m, key, h);
  if (old) *old = NULL;
  if (e) {
    if (old) *old = e->value;
    e->value = value;
    return 0;
  }
  /* Tombstones count as used so that probe chains stay short. */
  if ((m->used + 1) * 4 >= m->cap * 3 && watch__grow(m)) return UV_ENOMEM;
  char *k = strdup(key);
  if (!k) return UV_ENOMEM;
  size_t i = h & (m->cap - 1);
  while (m->slots[i].key && m->slots[i].key != &watch__tomb) i = (i + 1) & (m->cap - 1);
  if (!m->slots[i].key) m->used++;
  m->slots[i].key = k;
  m->slots[i].value = value;
  m->slots[i].hash = h;
  m->len++;
  return 0;
}

void *watch_map_del(watch_map_t *m, const char *key) {
  watch_map_entry_t *e = watch__find(m, key, watch__hash(key));
  if (!e) return NULL;
  void *v = e->value;
  free(e->key);
  e->key = &watch__tomb;
  e->value = NULL;
  m->len--;
  return v;
}

int watch_map_next(const watch_map_t *m, size_t *it, const char **key, void **value) {
  for (; *it < m->cap; (*it)++) {
    watch_map_entry_t *e = &m->slots[*it];
    if (e->key && e->key != &watch__tomb) {
      *key = e->key;
      *value = e->value;
      (*it)++;
      return 1;
    }
  }
  return 0;
}

void watch_map_free(watch_map_t *m) {
  for (size_t i = 0; i < m->cap; i++)
    if (m->slots[i].key && m->slots[i].key != &watch__tomb) free(m->slots[i].key);
  free(m->slots);
  m->slots = NULL;
  m->cap = m->len = m->used = 0;
}
