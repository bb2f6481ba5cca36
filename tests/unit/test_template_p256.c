/* P-256 keys from helm/template/p256.c (genPrivateKey "ecdsa"): d·G against mbedTLS's
 * mbedtls_ecp_mul for edge scalars (1, 2, 15, 16, 17, n − 1, scalars with zero digits, the signed
 * 6-bit digits' edges: 2^6i, 2^6i ± 1, 2^(6i−1), 2^k − 1, k·2^252, n − k·2^252) and random ones,
 * every point also checked on the curve by mbedtls_ecp_check_pubkey, private scalars in
 * [1, n − 1], and the PEM keys checked by `openssl ec -check`.
 * Needs openssl. */
#include <mbedtls/ecp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "helm/template/p256.h"
#include "t.h"
#include "t_oracle.h"
#include "t_render.h"

static char dir[] = "/tmp/rudder-p256-XXXXXX";

static int rng(void *ctx, unsigned char *out, size_t n) {
  (void)ctx;
  return getrandom(out, n, 0) == (ssize_t)n ? 0 : -1;
}

static void check_mul(mbedtls_ecp_group *g, const unsigned char d[32], const unsigned char x[32], const unsigned char y[32]) {
  mbedtls_mpi m;
  mbedtls_ecp_point q;
  mbedtls_mpi_init(&m);
  mbedtls_ecp_point_init(&q);
  unsigned char ex[32], ey[32];
  CHECK(mbedtls_mpi_read_binary(&m, d, 32) == 0);
  CHECK(mbedtls_mpi_cmp_int(&m, 1) >= 0 && mbedtls_mpi_cmp_mpi(&m, &g->N) < 0);
  CHECK(mbedtls_ecp_mul(g, &q, &m, &g->G, rng, NULL) == 0);
  mbedtls_mpi_write_binary(&q.X, ex, 32);
  mbedtls_mpi_write_binary(&q.Y, ey, 32);
  CHECK(memcmp(x, ex, 32) == 0 && memcmp(y, ey, 32) == 0);
  mbedtls_ecp_point mine;
  mbedtls_ecp_point_init(&mine);
  CHECK(mbedtls_mpi_read_binary(&mine.X, x, 32) == 0 && mbedtls_mpi_read_binary(&mine.Y, y, 32) == 0 &&
        mbedtls_mpi_lset(&mine.Z, 1) == 0);
  CHECK(mbedtls_ecp_check_pubkey(g, &mine) == 0);
  mbedtls_ecp_point_free(&mine);
  mbedtls_mpi_free(&m);
  mbedtls_ecp_point_free(&q);
}

int main(void) {
  if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
  if (system("command -v openssl >/dev/null 2>&1") != 0) {
    fprintf(stderr, "FAIL: openssl not found (tests/deps installs it)\n");
    return 1;
  }
  mbedtls_ecp_group g;
  mbedtls_ecp_group_init(&g);
  mbedtls_ecp_group_load(&g, MBEDTLS_ECP_DP_SECP256R1);
  unsigned char d[32], x[32], y[32];
  static const unsigned small[] = {1, 2, 3, 15, 16, 17, 255, 256, 4096};
  for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
    memset(d, 0, 32);
    d[30] = (unsigned char)(small[i] >> 8);
    d[31] = (unsigned char)small[i];
    CHECK(p256__base_mul(d, x, y) == 0);
    check_mul(&g, d, x, y);
  }
  mbedtls_mpi_write_binary(&g.N, d, 32); /* n − 1, n − 2 */
  for (int k = 1; k <= 2; k++) {
    unsigned char e[32];
    memcpy(e, d, 32);
    e[31] = (unsigned char)(e[31] - k);
    CHECK(p256__base_mul(e, x, y) == 0);
    check_mul(&g, e, x, y);
  }
  /* the signed digits' edges: sums that are zero or negative before a digit, the top digit */
  mbedtls_mpi e, t;
  mbedtls_mpi_init(&e);
  mbedtls_mpi_init(&t);
  int edges = 0;
  for (int k = 0; k < 256; k++) {
    for (int v = 0; v < 5; v++) {
      mbedtls_mpi_lset(&e, 1);
      mbedtls_mpi_shift_l(&e, (size_t)k); /* 2^k, 2^k − 1, 2^k + 1, n − 2^k, 3·2^k − 1 */
      if (v == 1) mbedtls_mpi_sub_int(&e, &e, 1);
      if (v == 2) mbedtls_mpi_add_int(&e, &e, 1);
      if (v == 3) mbedtls_mpi_sub_mpi(&e, &g.N, &e);
      if (v == 4) mbedtls_mpi_mul_int(&e, &e, 3), mbedtls_mpi_sub_int(&e, &e, 1);
      if (mbedtls_mpi_cmp_int(&e, 1) < 0 || mbedtls_mpi_cmp_mpi(&e, &g.N) >= 0) continue;
      mbedtls_mpi_write_binary(&e, d, 32);
      CHECK(p256__base_mul(d, x, y) == 0);
      check_mul(&g, d, x, y);
      edges++;
    }
  }
  for (int k = 1; k <= 16; k++) { /* k·2^252 and n − k·2^252 */
    mbedtls_mpi_lset(&t, k);
    mbedtls_mpi_shift_l(&t, 252);
    for (int v = 0; v < 2; v++) {
      if (v) mbedtls_mpi_sub_mpi(&e, &g.N, &t);
      else mbedtls_mpi_copy(&e, &t);
      if (mbedtls_mpi_cmp_int(&e, 1) < 0 || mbedtls_mpi_cmp_mpi(&e, &g.N) >= 0) continue;
      mbedtls_mpi_write_binary(&e, d, 32);
      CHECK(p256__base_mul(d, x, y) == 0);
      check_mul(&g, d, x, y);
      edges++;
    }
  }
  CHECK(edges > 1250);
  mbedtls_mpi_free(&e);
  mbedtls_mpi_free(&t);
  for (int i = 0; i < 40; i++) { /* random scalars with runs of zero digits */
    rng(NULL, d, 32);
    d[0] &= 0x7f;
    for (int k = i % 7; k < 32; k += 3 + i % 5) d[k] = 0;
    CHECK(p256__base_mul(d, x, y) == 0);
    check_mul(&g, d, x, y);
  }
  for (int i = 0; i < 200; i++) {
    CHECK(p256_keygen(rng, NULL, d, x, y) == 0);
    check_mul(&g, d, x, y);
  }
  mbedtls_ecp_group_free(&g);
  for (int i = 0; i < 5; i++) {
    char *pem = t_render_text("{{ genPrivateKey \"ecdsa\" }}", 0);
    CHECK(pem && strncmp(pem, "-----BEGIN EC PRIVATE KEY-----\n", 31) == 0);
    if (!pem) continue;
    t_put(dir, "k.pem", pem, strlen(pem));
    char *ok = t_sh(dir, "openssl ec -check -noout -in k.pem");
    CHECK(ok && strstr(ok, "valid"));
    char *txt = t_sh(dir, "openssl ec -text -noout -in k.pem");
    CHECK(txt && strstr(txt, "ASN1 OID: prime256v1") && strstr(txt, "Private-Key: (256 bit)"));
    free(ok);
    free(txt);
    free(pem);
  }
  char rm[128];
  snprintf(rm, sizeof rm, "rm -rf %s", dir);
  if (system(rm)) fprintf(stderr, "cannot remove %s\n", dir);
  return t_done();
}
