/* libFuzzer target for watch/fetch's parsers of outside input: absolute URLs (watch_url_parse),
 * redirect Location resolution (watch_url_resolve, then parsing the result as fetch does), and the
 * proxy variables (watch_proxy_env_init: HTTP(S)_PROXY values and NO_PROXY lists, then matching
 * hosts against them). Input: one byte choosing the parser, then its input; for resolution and
 * NO_PROXY a '\n' separates the two strings. Any crash, sanitizer report or leak is a bug; an
 * error must come with a reason. Build and run: tests/fuzz/fuzz_watch_url.sh; without libFuzzer,
 * build with -DFUZZ_STANDALONE and pass files to replay. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "watch/proxyenv.h"
#include "watch/url.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_url(const char *s) {
  watch_url_t u;
  const char *why = NULL;
  int rc = watch_url_parse(s, &u, &why);
  if (rc) {
    if (!why) abort();
    return;
  }
  if (!u.scheme || !u.host || !*u.host || !u.hostname || !u.authority || !u.target || u.target[0] != '/' ||
      !u.clean || !u.shown || u.port <= 0 || u.port > 65535)
    abort();
  /* What goes on the wire never holds a line break or a space. */
  if (strpbrk(u.target, "\r\n ") || strpbrk(u.authority, "\r\n")) abort();
  watch_url_free(&u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 1 << 14) return 0;
  char *s = malloc(size);
  if (!s) return 0;
  memcpy(s, data + 1, size - 1);
  s[size - 1] = 0;
  char *nl = strchr(s, '\n'), *second = "";
  if (nl) {
    *nl = 0;
    second = nl + 1;
  }
  switch (data[0] % 3) {
  case 0:
    if (nl) *nl = '\n';
    check_url(s);
    break;
  case 1: {
    char *out = NULL;
    const char *why = NULL;
    const char *base = *s ? s : "http://h/a/b";
    if (watch_url_resolve(base, second, &out, &why) == 0) {
      if (!out) abort();
      check_url(out);
      free(out);
    } else if (!why) {
      abort();
    }
    break;
  }
  case 2: {
    watch_proxy_env_t e;
    if (watch_proxy_env_init(&e, s, s, second, false) == 0) {
      const char *hosts[] = {"localhost", "127.0.0.1", "::1", "example.com", "a.b.example.com", "10.1.2.3",
                             "2001:db8::1", "fe80::1%eth0", s, second};
      for (size_t i = 0; i < sizeof hosts / sizeof *hosts; i++) {
        const char *err;
        watch_proxy_env_use(&e, hosts[i], 443);
        const watch_proxy_url_t *p = watch_proxy_env_for(&e, i & 1, hosts[i], 80, &err);
        if (p && (!p->scheme || !p->host || !p->shown)) abort();
      }
      watch_proxy_env_free(&e);
    }
    break;
  }
  }
  free(s);
  return 0;
}

#ifdef FUZZ_STANDALONE
static int replay(FILE *f) {
  size_t cap = 1 << 14, n = 0;
  uint8_t *b = malloc(cap);
  if (!b) return 1;
  size_t r;
  while (n < cap && (r = fread(b + n, 1, cap - n, f)) > 0) n += r;
  LLVMFuzzerTestOneInput(b, n);
  free(b);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) return replay(stdin);
  for (int i = 1; i < argc; i++) {
    FILE *f = fopen(argv[i], "rb");
    if (!f) {
      perror(argv[i]);
      return 1;
    }
    replay(f);
    fclose(f);
  }
  printf("replayed %d inputs\n", argc - 1);
  return 0;
}
#endif
