/* URI reference resolution for the schema library's $id and $ref: watch/url's RFC 3986 section
 * 5.2 resolution (Go's url.ResolveReference), with the reference's fragment kept (it names the
 * place inside the document). */
#include <stdlib.h>
#include <string.h>

#include "helm/values/schema_int.h"
#include "watch/url.h"

char *schema_uri_resolve(const char *base, const char *ref) {
  char *abs = NULL;
  const char *why;
  const char *frag = strchr(ref, '#');
  if (watch_url_resolve(base, ref, &abs, &why)) {
    /* not a URL watch/url resolves (no authority in the base, control characters): as written */
    free(abs);
    return strdup(ref);
  }
  if (!frag) return abs;
  buf_t b = BUF_INIT;
  int e = buf_puts(&b, abs) | buf_puts(&b, frag) | buf_putc(&b, 0);
  free(abs);
  if (e) {
    buf_free(&b);
    return NULL;
  }
  return b.data;
}
