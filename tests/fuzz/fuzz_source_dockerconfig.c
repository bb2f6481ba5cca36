/* libFuzzer target for the dockerconfigjson credentials parser (helm/source/oci.h,
 * oci_dockerconfig_creds): a Secret's `.dockerconfigjson` is outside input. Input: the registry
 * to look up, a newline, then the JSON document. Both outcomes must be whole: 0 with both
 * strings, or an error with a message and no strings; a lookup must give the same answer twice;
 * any crash, sanitizer report or leak is a bug. Build and run: tests/fuzz/fuzz_source_dockerconfig.sh;
 * without libFuzzer, build with -DFUZZ_STANDALONE and pass files to replay. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helm/source/oci.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 16) return 0;
  const uint8_t *nl = memchr(data, '\n', size);
  size_t rn = nl ? (size_t)(nl - data) : 0;
  if (rn > 300) return 0;
  char registry[301];
  memcpy(registry, data, rn);
  registry[rn] = 0;
  const uint8_t *doc = nl ? nl + 1 : data;
  size_t n = size - (size_t)(doc - data);
  char *json = malloc(n + 1); /* an exact-size copy: reading past n is a bug ASan sees */
  if (!json) return 0;
  memcpy(json, doc, n);
  json[n] = 0;
  char *u = (char *)1, *p = (char *)1, err[512] = "";
  int rc = oci_dockerconfig_creds(json, n, registry, &u, &p, err, sizeof err);
  if (rc == 0) {
    if (!u || !p || (!*u && !*p)) abort();
    char *u2 = NULL, *p2 = NULL, e2[512] = "";
    if (oci_dockerconfig_creds(json, n, registry, &u2, &p2, e2, sizeof e2) || strcmp(u, u2) || strcmp(p, p2)) abort();
    free(u2);
    free(p2);
    free(u);
    free(p);
  } else {
    if (u || p) abort();
    if (rc != OCI_ENOMEM && !err[0]) abort();
    if (rc != OCI_EINVAL && rc != OCI_ENOENT && rc != OCI_E2BIG && rc != OCI_ENOMEM) abort();
  }
  free(json);
  return 0;
}

#ifdef FUZZ_STANDALONE
static int replay(FILE *f) {
  size_t cap = 1 << 16, n = 0;
  uint8_t *b = malloc(cap);
  if (!b) return 1;
  size_t r;
  while ((r = fread(b + n, 1, cap - n, f)) > 0) {
    n += r;
    if (n == cap) {
      uint8_t *nb = realloc(b, cap * 2);
      if (!nb) break;
      b = nb;
      cap *= 2;
    }
  }
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
