/* libFuzzer target for the OCI and URL parsers of helm/source: oci:// references, image
 * manifests, tag lists (and the tag Helm picks), WWW-Authenticate challenges (and the token
 * URL), token responses, Link headers and chart URL resolution. Input: one byte choosing the
 * parser, then its input. Every error must come with a message; any crash, sanitizer report or
 * leak is a bug. Build and run: tests/fuzz/fuzz_source_oci.sh; without libFuzzer, build with
 * -DFUZZ_STANDALONE and pass files to replay. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helm/source/index.h"
#include "helm/source/oci.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 1 << 16) return 0;
  char *s = malloc(size);
  if (!s) return 0;
  memcpy(s, data + 1, size - 1);
  s[size - 1] = 0; /* text parsers get a C string (cut at the first NUL) */
  size_t n = size - 1;
  char err[512] = "";
  buf_t out = BUF_INIT;
  int rc = 0;
  switch (data[0] % 7) {
  case 0: {
    oci_ref_t r;
    rc = oci_ref_parse(s, &r, err, sizeof err);
    if (!rc) {
      if (!r.registry || !r.repository || !r.tag || !r.digest) abort();
      oci_path_manifest(&r, NULL, &out);
      oci_path_blob(&r, *r.digest ? r.digest : "sha256:0", &out);
      oci_path_tags(&r, 10, r.tag, &out);
      oci_ref_free(&r);
    }
    break;
  }
  case 1: {
    oci_manifest_t m;
    rc = oci_manifest_parse((const char *)data + 1, n, &m, err, sizeof err);
    if (!rc) {
      if (!m.config.digest || !m.chart.digest || !m.prov.digest) abort();
      oci_manifest_free(&m);
    }
    break;
  }
  case 2: {
    char **tags;
    size_t nt;
    rc = oci_tags_parse((const char *)data + 1, n, &tags, &nt, err, sizeof err);
    if (!rc) {
      static const char *const cons[] = {"", "^1", ">=0.0.0-0", "~1.2.x || 3"};
      for (int k = 0; k < 4; k++) {
        char e2[256] = "";
        if (oci_tags_select((const char *const *)tags, nt, cons[k], &out, e2, sizeof e2) && !e2[0]) abort();
      }
      oci_tags_free(tags, nt);
    }
    break;
  }
  case 3: {
    oci_challenge_t c;
    rc = oci_challenge_parse(s, &c, err, sizeof err);
    if (!rc) {
      oci_challenge_token_url(&c, NULL, &out);
      oci_challenge_free(&c);
    }
    break;
  }
  case 4: {
    uint64_t ex;
    rc = oci_token_parse((const char *)data + 1, n, &out, &ex, err, sizeof err);
    break;
  }
  case 5:
    oci_link_next(s, &out);
    break;
  case 6: {
    /* base and reference split at the first newline */
    char *nl = strchr(s, '\n');
    const char *base = "https://repo.example/charts", *ref = s;
    if (nl) *nl = 0, base = s, ref = nl + 1;
    rc = index_url_resolve(base, ref, &out, err, sizeof err);
    break;
  }
  }
  if (rc && rc != -12 && !err[0]) abort();
  buf_free(&out);
  free(s);
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
