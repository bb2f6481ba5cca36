#include "watch/client.h"
#include <string.h>
#include <uv.h>

int kube_url_escape(buf_t *b, const char *s) {
  static const char hex[] = "0123456789ABCDEF";
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    unsigned char ch = *p;
    int plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' ||
                ch == '.' || ch == '_' || ch == '~';
    if (plain ? buf_putc(b, (char)ch) : buf_printf(b, "%%%c%c", hex[ch >> 4], hex[ch & 15])) return UV_ENOMEM;
  }
  return 0;
}

/* A path segment must not be empty, "." or ".." (they would change the URL's meaning). */
static int kube__segment(buf_t *b, const char *s) {
  if (!*s || !strcmp(s, ".") || !strcmp(s, "..")) return UV_EINVAL;
  if (buf_putc(b, '/')) return UV_ENOMEM;
  return kube_url_escape(b, s);
}

int kube_path(buf_t *b, const char *group, const char *version, const char *resource, const char *ns,
              const char *name, const char *subresource) {
  if (!version || !resource) return UV_EINVAL;
  if (subresource && !name) return UV_EINVAL;
  size_t mark = b->len;
  int r;
  if (group && *group) {
    r = buf_puts(b, "/apis") ? UV_ENOMEM : 0;
    if (!r) r = kube__segment(b, group);
  } else {
    r = buf_puts(b, "/api") ? UV_ENOMEM : 0;
  }
  if (!r) r = kube__segment(b, version);
  if (!r && ns) r = buf_puts(b, "/namespaces") ? UV_ENOMEM : 0;
  if (!r && ns) r = kube__segment(b, ns);
  if (!r) r = kube__segment(b, resource);
  if (!r && name) r = kube__segment(b, name);
  if (!r && subresource) r = kube__segment(b, subresource);
  if (r) {
    /* Leave the buffer as it was. */
    b->len = mark;
    if (b->data) b->data[mark] = 0;
    return r == UV_EINVAL ? UV_EINVAL : UV_ENOMEM;
  }
  return 0;
}

int kube_query_add(buf_t *b, const char *key, const char *value) {
  int r = buf_putc(b, b->data && memchr(b->data, '?', b->len) ? '&' : '?');
  if (!r) r = kube_url_escape(b, key);
  if (!r) r = buf_putc(b, '=');
  if (!r) r = kube_url_escape(b, value ? value : "");
  return r ? UV_ENOMEM : 0;
}
