/* Sprig's key, certificate and AES functions on mbedTLS 2.28: genPrivateKey
 * (rsa 4096, ecdsa P-256, dsa L2048N256 as Go generates its parameters,
 * ed25519 as PKCS#8 of a random seed), genCA/genSelfSignedCert/genSignedCert and their
 * WithKey forms (RSA 2048 keys, 128-bit random serials, the extensions Go's
 * x509.CreateCertificate writes for Sprig's template), buildCustomCert, and
 * encryptAES/decryptAES in Sprig's wire format (base64(IV || AES-256-CBC with
 * PKCS#7 padding), the key being the password zero-padded to 32 bytes).
 * Certificates are random: tested by properties (test_template_sprig_crypto.c). */
#include <arpa/inet.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <mbedtls/aes.h>
#include <mbedtls/asn1write.h>
#include <mbedtls/bignum.h>
#include <mbedtls/ecp.h>
#include <mbedtls/oid.h>
#include <mbedtls/pk.h>
#include <mbedtls/platform_util.h>
#include <mbedtls/rsa.h>
#include <mbedtls/x509_crt.h>

#include "base/b64.h"
#include "helm/template/sprig_internal.h"

static int os_rng(void *ctx, unsigned char *out, size_t n) {
  (void)ctx;
  while (n) {
    ssize_t k = getrandom(out, n, 0);
    if (k <= 0) return -1;
    out += k;
    n -= (size_t)k;
  }
  return 0;
}

/* ---- AES ---------------------------------------------------------------------- */

SPRIG_FN(f_encrypt_aes) {
  (void)n;
  const char *pw = args[0].u.s.p, *pt = args[1].u.s.p;
  size_t pwn = args[0].u.s.n, ptn = args[1].u.s.n;
  if (!ptn) return *out = tpl_value_str(""), 0;
  unsigned char key[32] = {0};
  memcpy(key, pw, pwn < 32 ? pwn : 32);
  size_t pad = 16 - ptn % 16, len = ptn + pad;
  unsigned char *buf = malloc(16 + len), *plain = malloc(len);
  if (!buf || !plain) return free(buf), free(plain), TPL_ENOMEM;
  memcpy(plain, pt, ptn);
  memset(plain + ptn, (int)pad, pad);
  int rc = os_rng(NULL, buf, 16);
  mbedtls_aes_context aes;
  mbedtls_aes_init(&aes);
  unsigned char iv[16];
  memcpy(iv, buf, 16);
  if (!rc) rc = mbedtls_aes_setkey_enc(&aes, key, 256);
  if (!rc) rc = mbedtls_aes_crypt_cbc(&aes, MBEDTLS_AES_ENCRYPT, len, iv, plain, buf + 16);
  mbedtls_aes_free(&aes);
  free(plain);
  if (rc) {
    free(buf);
    return tpl_call_errorf(c, "aes encryption failed");
  }
  char *enc = tpl_arena_alloc(tpl_call_arena(c), b64_encoded_len(16 + len) + 1);
  if (!enc) return free(buf), TPL_ENOMEM;
  size_t el = b64_encode(buf, 16 + len, enc);
  free(buf);
  *out = tpl_value_strn(enc, el);
  return 0;
}

SPRIG_FN(f_decrypt_aes) {
  (void)n;
  const char *pw = args[0].u.s.p;
  size_t pwn = args[0].u.s.n;
  if (!args[1].u.s.n) return *out = tpl_value_str(""), 0;
  unsigned char key[32] = {0};
  memcpy(key, pw, pwn < 32 ? pwn : 32);
  unsigned char *raw;
  size_t rn;
  char em[128];
  int rc = b64_decode_alloc(args[1].u.s.p, args[1].u.s.n, &raw, &rn, em, sizeof em);
  if (rc == -12) return TPL_ENOMEM;
  if (rc) {
    const char *pre = "base64: illegal data";
    if (!strncmp(em, pre, strlen(pre))) return tpl_call_errorf(c, "illegal base64 data%s", em + strlen(pre));
    return tpl_call_errorf(c, "%s", em);
  }
  if (rn < 16) {
    free(raw);
    return tpl_call_errorf(c, "runtime error: slice bounds out of range [:16] with capacity %zu", rn);
  }
  size_t len = rn - 16;
  if (len % 16) {
    free(raw);
    return tpl_call_errorf(c, "crypto/cipher: input not full blocks");
  }
  if (!len) {
    free(raw);
    return tpl_call_errorf(c, "runtime error: index out of range [-1]");
  }
  unsigned char *dec = tpl_arena_alloc(tpl_call_arena(c), len + 1);
  if (!dec) return free(raw), TPL_ENOMEM;
  mbedtls_aes_context aes;
  mbedtls_aes_init(&aes);
  unsigned char iv[16];
  memcpy(iv, raw, 16);
  rc = mbedtls_aes_setkey_dec(&aes, key, 256);
  if (!rc) rc = mbedtls_aes_crypt_cbc(&aes, MBEDTLS_AES_DECRYPT, len, iv, raw + 16, dec);
  mbedtls_aes_free(&aes);
  free(raw);
  if (rc) return tpl_call_errorf(c, "aes decryption failed");
  size_t padn = dec[len - 1];
  if (padn > len)
    return tpl_call_errorf(c, "runtime error: slice bounds out of range [:%lld]", (long long)len - (long long)padn);
  *out = tpl_value_strn((const char *)dec, len - padn);
  return 0;
}

/* ---- PEM and keys ------------------------------------------------------------------- */

/* encoding/pem.Decode, enough for keys and certificates: type and DER of the first block. */
static int pem_decode(const char *s, size_t n, char *type, size_t tcap, unsigned char **der, size_t *dn) {
  const char *b = NULL;
  for (size_t i = 0; i + 11 <= n; i++)
    if (!memcmp(s + i, "-----BEGIN ", 11) && (i == 0 || s[i - 1] == '\n')) {
      b = s + i;
      break;
    }
  if (!b) return -1;
  const char *te = NULL;
  for (const char *q = b + 11; q + 5 <= s + n; q++)
    if (!memcmp(q, "-----", 5)) {
      te = q;
      break;
    }
  if (!te) return -1;
  size_t tl = (size_t)(te - (b + 11));
  if (tl + 1 > tcap) return -1;
  memcpy(type, b + 11, tl);
  type[tl] = 0;
  const char *body = te + 5;
  while (body < s + n && (*body == '\r' || *body == '\n')) body++;
  char endm[160];
  snprintf(endm, sizeof endm, "-----END %s-----", type);
  size_t el = strlen(endm);
  const char *e = NULL;
  for (const char *q = body; q + el <= s + n; q++)
    if (!memcmp(q, endm, el)) {
      e = q;
      break;
    }
  if (!e) return -1;
  /* drop headers-free body whitespace: keep base64 characters only */
  buf_t t = BUF_INIT;
  for (const char *q = body; q < e; q++)
    if (*q != ' ' && *q != '\t') buf_putc(&t, *q);
  char em[64];
  int rc = b64_decode_alloc(t.data ? t.data : "", t.len, der, dn, em, sizeof em);
  buf_free(&t);
  return rc ? -1 : 0;
}

/* parsePrivateKeyPEM; 0 or -1 with Sprig's error text. */
static int parse_key_pem(const char *s, size_t n, mbedtls_pk_context *pk, buf_t *err) {
  char type[128];
  unsigned char *der;
  size_t dn;
  if (pem_decode(s, n, type, sizeof type, &der, &dn)) return buf_puts(err, "no PEM data in input"), -1;
  size_t tl = strlen(type);
  int rc;
  if (!strcmp(type, "PRIVATE KEY")) {
    rc = mbedtls_pk_parse_key(pk, der, dn, NULL, 0);
    free(der);
    if (rc) return buf_puts(err, "decoding PEM as PKCS#8: unsupported or malformed private key"), -1;
    return 0;
  }
  if (tl < 12 || strcmp(type + tl - 12, " PRIVATE KEY")) {
    free(der);
    return buf_printf(err, "no private key data in PEM block of type %s", type), -1;
  }
  type[tl - 12] = 0;
  if (strcmp(type, "RSA") && strcmp(type, "EC")) {
    bool dsa = !strcmp(type, "DSA");
    type[tl - 12] = ' ';
    free(der);
    if (dsa) return buf_puts(err, "parsing DSA private key from PEM: DSA keys are not supported"), -1;
    return buf_printf(err, "invalid private key type %s", type), -1;
  }
  rc = mbedtls_pk_parse_key(pk, der, dn, NULL, 0);
  free(der);
  if (rc) return buf_printf(err, "parsing %s private key from PEM: malformed key", type), -1;
  return 0;
}

static int gen_rsa(mbedtls_pk_context *pk, unsigned bits) {
  int rc = mbedtls_pk_setup(pk, mbedtls_pk_info_from_type(MBEDTLS_PK_RSA));
  if (!rc) rc = mbedtls_rsa_gen_key(mbedtls_pk_rsa(*pk), os_rng, NULL, bits, 65537);
  return rc;
}

static int key_pem(mbedtls_pk_context *pk, buf_t *out) {
  size_t cap = 16000;
  unsigned char *b = malloc(cap);
  if (!b) return TPL_ENOMEM;
  int rc = mbedtls_pk_write_key_pem(pk, b, cap);
  if (!rc) rc = buf_puts(out, (char *)b) ? TPL_ENOMEM : 0;
  free(b);
  return rc;
}

/* pem.EncodeToMemory: base64 in 64-column lines. */
static int pem_encode(buf_t *out, const char *type, const unsigned char *der, size_t n) {
  static const char tb[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  int rc = buf_printf(out, "-----BEGIN %s-----\n", type);
  size_t col = 0;
  for (size_t i = 0; i < n && !rc; i += 3) {
    uint32_t v = (uint32_t)der[i] << 16;
    if (i + 1 < n) v |= (uint32_t)der[i + 1] << 8;
    if (i + 2 < n) v |= der[i + 2];
    char q[4] = {tb[v >> 18], tb[(v >> 12) & 63], i + 1 < n ? tb[(v >> 6) & 63] : '=', i + 2 < n ? tb[v & 63] : '='};
    rc |= buf_append(out, q, 4);
    col += 4;
    if (col == 64) {
      rc |= buf_putc(out, '\n');
      col = 0;
    }
  }
  if (col) rc |= buf_putc(out, '\n');
  rc |= buf_printf(out, "-----END %s-----\n", type);
  return rc ? TPL_ENOMEM : 0;
}

/* ed25519.GenerateKey + x509.MarshalPKCS8PrivateKey: the PKCS#8 encoding holds
 * only the 32-byte seed (RFC 8410), so no curve arithmetic is needed here. */
static int gen_ed25519(buf_t *out) {
  unsigned char der[48] = {0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20};
  if (os_rng(NULL, der + 16, 32)) return -1;
  int rc = pem_encode(out, "PRIVATE KEY", der, sizeof der);
  mbedtls_platform_zeroize(der, sizeof der);
  return rc;
}

/* dsa.GenerateParameters(L2048N256) and dsa.GenerateKey as Go does them, then
 * Sprig's DSAKeyFormat (SEQUENCE of version 0, P, Q, G, Y, X). 0, -1 or TPL_ENOMEM. */
static int gen_dsa(buf_t *out) {
  enum { L = 2048, N = 256 };
  mbedtls_mpi p, q, g, x, y, rem, h, e, pm1;
  mbedtls_mpi *all[] = {&p, &q, &g, &x, &y, &rem, &h, &e, &pm1};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) mbedtls_mpi_init(all[i]);
  unsigned char qb[N / 8], pb[L / 8];
  int rc = 0;
  for (bool found = false; !found && !rc;) {
    if ((rc = os_rng(NULL, qb, sizeof qb))) break;
    qb[sizeof qb - 1] |= 1;
    qb[0] |= 0x80;
    if ((rc = mbedtls_mpi_read_binary(&q, qb, sizeof qb))) break;
    int pr = mbedtls_mpi_is_prime_ext(&q, 64, os_rng, NULL);
    if (pr == MBEDTLS_ERR_MPI_NOT_ACCEPTABLE) continue;
    if ((rc = pr)) break;
    for (int i = 0; i < 4 * L && !rc; i++) {
      if ((rc = os_rng(NULL, pb, sizeof pb))) break;
      pb[sizeof pb - 1] |= 1;
      pb[0] |= 0x80;
      rc = mbedtls_mpi_read_binary(&p, pb, sizeof pb);
      if (!rc) rc = mbedtls_mpi_mod_mpi(&rem, &p, &q);
      if (!rc) rc = mbedtls_mpi_sub_int(&rem, &rem, 1);
      if (!rc) rc = mbedtls_mpi_sub_mpi(&p, &p, &rem);
      if (rc) break;
      if (mbedtls_mpi_bitlen(&p) < L) continue;
      pr = mbedtls_mpi_is_prime_ext(&p, 64, os_rng, NULL);
      if (pr == MBEDTLS_ERR_MPI_NOT_ACCEPTABLE) continue;
      if ((rc = pr)) break;
      found = true;
      break;
    }
  }
  /* g = h^((p-1)/q) mod p for the first h >= 2 that does not give 1. */
  if (!rc) rc = mbedtls_mpi_lset(&h, 2);
  if (!rc) rc = mbedtls_mpi_sub_int(&pm1, &p, 1);
  if (!rc) rc = mbedtls_mpi_div_mpi(&e, NULL, &pm1, &q);
  while (!rc) {
    if ((rc = mbedtls_mpi_exp_mod(&g, &h, &e, &p, NULL))) break;
    if (mbedtls_mpi_cmp_int(&g, 1) != 0) break;
    rc = mbedtls_mpi_add_int(&h, &h, 1);
  }
  /* x: Q.BitLen()/8 random bytes until 0 < x < q; y = g^x mod p. */
  while (!rc) {
    if ((rc = os_rng(NULL, qb, sizeof qb))) break;
    if ((rc = mbedtls_mpi_read_binary(&x, qb, sizeof qb))) break;
    if (mbedtls_mpi_cmp_int(&x, 0) != 0 && mbedtls_mpi_cmp_mpi(&x, &q) < 0) break;
  }
  if (!rc) rc = mbedtls_mpi_exp_mod(&y, &g, &x, &p, NULL);
  unsigned char der[2048];
  unsigned char *c = der + sizeof der;
  size_t len = 0;
  if (!rc) {
    mbedtls_mpi *seq[] = {&x, &y, &g, &q, &p};
    int k = 0;
    for (size_t i = 0; i < 5 && k >= 0; i++) {
      k = mbedtls_asn1_write_mpi(&c, der, seq[i]);
      len += (size_t)k;
    }
    if (k >= 0) len += (size_t)(k = mbedtls_asn1_write_int(&c, der, 0));
    if (k >= 0) len += (size_t)(k = mbedtls_asn1_write_len(&c, der, len));
    if (k >= 0) len += (size_t)(k = mbedtls_asn1_write_tag(&c, der, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE));
    rc = k < 0 ? k : 0;
  }
  if (!rc) rc = pem_encode(out, "DSA PRIVATE KEY", c, len);
  mbedtls_platform_zeroize(der, sizeof der);
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) mbedtls_mpi_free(all[i]);
  return rc;
}

SPRIG_FN(f_gen_private_key) {
  (void)n;
  const char *t = args[0].u.s.p;
  size_t tn = args[0].u.s.n;
  mbedtls_pk_context pk;
  mbedtls_pk_init(&pk);
  int rc;
  buf_t o = BUF_INIT;
  if (!tn || (tn == 3 && !memcmp(t, "rsa", 3))) {
    rc = gen_rsa(&pk, 4096);
  } else if (tn == 5 && !memcmp(t, "ecdsa", 5)) {
    rc = mbedtls_pk_setup(&pk, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY));
    if (!rc) rc = mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(pk), os_rng, NULL);
  } else if ((tn == 3 && !memcmp(t, "dsa", 3)) || (tn == 7 && !memcmp(t, "ed25519", 7))) {
    mbedtls_pk_free(&pk);
    rc = tn == 3 ? gen_dsa(&o) : gen_ed25519(&o);
    if (rc == TPL_ENOMEM) return buf_free(&o), rc;
    if (rc) {
      buf_reset(&o);
      buf_printf(&o, "failed to generate %s: mbedtls error -0x%04x", tn == 3 ? "dsa params" : "private key", (unsigned)-rc);
    }
    return sprig__ret_buf(c, &o, out);
  } else {
    mbedtls_pk_free(&pk);
    buf_puts(&o, "Unknown type ");
    buf_append(&o, t, tn);
    return sprig__ret_buf(c, &o, out);
  }
  if (rc) {
    mbedtls_pk_free(&pk);
    buf_printf(&o, "failed to generate private key: mbedtls error -0x%04x", (unsigned)-rc);
    return sprig__ret_buf(c, &o, out);
  }
  rc = key_pem(&pk, &o);
  mbedtls_pk_free(&pk);
  if (rc) return buf_free(&o), rc == TPL_ENOMEM ? rc : tpl_call_errorf(c, "failed to encode private key");
  return sprig__ret_buf(c, &o, out);
}

/* ---- certificates ------------------------------------------------------------------ */

typedef struct {
  const char *cert, *key;
  size_t ncert, nkey;
} cert_t;

static int cert_field(void *self, const char *name, tpl_value_t *out) {
  cert_t *ct = self;
  if (!strcmp(name, "Cert")) return *out = tpl_value_strn(ct->cert, ct->ncert), 1;
  if (!strcmp(name, "Key")) return *out = tpl_value_strn(ct->key, ct->nkey), 1;
  return 0;
}
static int cert_format(void *self, buf_t *out) {
  cert_t *ct = self;
  return buf_putc(out, '{') || buf_append(out, ct->cert, ct->ncert) || buf_putc(out, ' ') ||
                 buf_append(out, ct->key, ct->nkey) || buf_putc(out, '}')
             ? TPL_ENOMEM
             : 0;
}
static const tpl_type_t cert_type = {"sprig.certificate", cert_field, NULL, cert_format};

static int ret_cert(tpl_call_t *c, buf_t *crt, buf_t *key, tpl_value_t *out) {
  tpl_arena_t *a = tpl_call_arena(c);
  cert_t *ct = tpl_arena_alloc(a, sizeof *ct);
  tpl_object_t *o = tpl_arena_alloc(a, sizeof *o);
  char *cp = tpl_arena_strndup(a, crt->data ? crt->data : "", crt->len);
  char *kp = tpl_arena_strndup(a, key->data ? key->data : "", key->len);
  size_t cn = crt->len, kn = key->len;
  buf_free(crt);
  buf_free(key);
  if (!ct || !o || !cp || !kp) return TPL_ENOMEM;
  *ct = (cert_t){cp, kp, cn, kn};
  o->type = &cert_type;
  o->self = ct;
  *out = (tpl_value_t){.kind = TPL_OBJECT, .u.obj = o};
  return 0;
}

/* X.509 DN string for mbedTLS with RFC 4514 escaping of the CN. */
static void dn_cn(buf_t *b, const char *s, size_t n) {
  buf_puts(b, "CN=");
  for (size_t i = 0; i < n; i++) {
    char ch = s[i];
    if (ch == ',' || ch == '=' || ch == '+' || ch == '<' || ch == '>' || ch == ';' || ch == '\\' || ch == '"' ||
        ch == '#')
      buf_putc(b, '\\');
    buf_putc(b, ch);
  }
}

static int der_len(buf_t *b, size_t n) {
  if (n < 128) return buf_putc(b, (char)n);
  if (n < 256) return buf_putc(b, (char)0x81) || buf_putc(b, (char)n);
  return buf_putc(b, (char)0x82) || buf_putc(b, (char)(n >> 8)) || buf_putc(b, (char)n);
}

typedef struct {
  buf_t san; /* GeneralNames content */
  bool any;
} sans_t;

static int collect_sans(tpl_call_t *c, const tpl_value_t *ips, const tpl_value_t *dns, sans_t *s) {
  const tpl_list_t *il = ips->kind == TPL_LIST ? ips->u.list : NULL;
  const tpl_list_t *dl = dns->kind == TPL_LIST ? dns->u.list : NULL;
  buf_t ipb = BUF_INIT;
  for (size_t i = 0; il && i < il->len; i++) {
    tpl_value_t e = sprig__elem(ips, &il->items[i]);
    if (e.kind != TPL_STRING) {
      buf_t t = BUF_INIT;
      tpl_fmt_value(&t, &e);
      int rc = tpl_call_errorf(c, "error parsing ip: %.*s is not a string", (int)t.len, t.data ? t.data : "");
      buf_free(&t);
      buf_free(&ipb);
      return rc;
    }
    char tmp[128];
    unsigned char a6[16];
    size_t k = e.u.s.n < sizeof tmp - 1 ? e.u.s.n : sizeof tmp - 1;
    memcpy(tmp, e.u.s.p, k);
    tmp[k] = 0;
    int fam = 0;
    if (k == e.u.s.n && !memchr(e.u.s.p, 0, e.u.s.n)) {
      if (inet_pton(AF_INET, tmp, a6) == 1) fam = 4;
      else if (!strchr(tmp, '%') && inet_pton(AF_INET6, tmp, a6) == 1) fam = 6;
    }
    if (!fam) {
      buf_free(&ipb);
      return tpl_call_errorf(c, "error parsing ip: %.*s", (int)e.u.s.n, e.u.s.p);
    }
    static const unsigned char v4m[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (fam == 6 && !memcmp(a6, v4m, 12)) memmove(a6, a6 + 12, 4), fam = 4;
    buf_putc(&ipb, (char)0x87);
    buf_putc(&ipb, fam == 4 ? 4 : 16);
    buf_append(&ipb, a6, fam == 4 ? 4 : 16);
  }
  for (size_t i = 0; dl && i < dl->len; i++) {
    tpl_value_t e = sprig__elem(dns, &dl->items[i]);
    if (e.kind != TPL_STRING) {
      buf_t t = BUF_INIT;
      tpl_fmt_value(&t, &e);
      int rc = tpl_call_errorf(c, "error processing alternate dns name: %.*s is not a string", (int)t.len,
                               t.data ? t.data : "");
      buf_free(&t);
      buf_free(&ipb);
      return rc;
    }
    buf_putc(&s->san, (char)0x82);
    der_len(&s->san, e.u.s.n);
    buf_append(&s->san, e.u.s.p, e.u.s.n);
    s->any = true;
  }
  if (ipb.len) {
    buf_append(&s->san, ipb.data, ipb.len);
    s->any = true;
  }
  buf_free(&ipb);
  return 0;
}

static void fmt_validity(char *out, size_t cap, time_t t) {
  struct tm tm;
  gmtime_r(&t, &tm);
  snprintf(out, cap, "%04d%02d%02d%02d%02d%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
           tm.tm_sec);
}

/* getCertAndKey over Sprig's base template; parent_der NULL: self-signed. */
static int make_cert(tpl_call_t *c, const char *cn, size_t cnn, const sans_t *sans, int64_t days, bool is_ca,
                     mbedtls_pk_context *key, const mbedtls_x509_crt *parent, mbedtls_pk_context *parent_key,
                     tpl_value_t *out) {
  mbedtls_x509write_cert w;
  mbedtls_x509write_crt_init(&w);
  mbedtls_mpi serial;
  mbedtls_mpi_init(&serial);
  buf_t subj = BUF_INIT, crt = BUF_INIT, kp = BUF_INIT;
  unsigned char sb[16];
  int rc = os_rng(NULL, sb, sizeof sb);
  if (!rc) rc = mbedtls_mpi_read_binary(&serial, sb, sizeof sb);
  dn_cn(&subj, cn, cnn);
  buf_putc(&subj, 0);
  time_t now = time(NULL);
  char nb[32], na[32];
  fmt_validity(nb, sizeof nb, now);
  int64_t later = (int64_t)now + days * 86400;
  if (later < 0) later = 0;
  if (later > 253402300799LL) later = 253402300799LL;
  fmt_validity(na, sizeof na, (time_t)later);
  mbedtls_x509write_crt_set_version(&w, MBEDTLS_X509_CRT_VERSION_3);
  mbedtls_x509write_crt_set_md_alg(&w, MBEDTLS_MD_SHA256);
  if (!rc) rc = mbedtls_x509write_crt_set_serial(&w, &serial);
  if (!rc) rc = mbedtls_x509write_crt_set_validity(&w, nb, na);
  if (!rc) rc = mbedtls_x509write_crt_set_subject_name(&w, subj.data);
  if (!rc) {
    if (parent) {
      char issuer[1024];
      if (mbedtls_x509_dn_gets(issuer, sizeof issuer, &parent->subject) < 0) rc = -1;
      else rc = mbedtls_x509write_crt_set_issuer_name(&w, issuer);
    } else {
      rc = mbedtls_x509write_crt_set_issuer_name(&w, subj.data);
    }
  }
  mbedtls_x509write_crt_set_subject_key(&w, key);
  mbedtls_x509write_crt_set_issuer_key(&w, parent ? parent_key : key);
  if (!rc) rc = mbedtls_x509write_crt_set_basic_constraints(&w, is_ca, -1);
  if (!rc)
    rc = mbedtls_x509write_crt_set_key_usage(&w, MBEDTLS_X509_KU_DIGITAL_SIGNATURE | MBEDTLS_X509_KU_KEY_ENCIPHERMENT |
                                                     (is_ca ? MBEDTLS_X509_KU_KEY_CERT_SIGN : 0));
  static const unsigned char eku[] = {0x30, 0x14, 0x06, 0x08, 0x2B, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03,
                                      0x01, 0x06, 0x08, 0x2B, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x02};
  if (!rc)
    rc = mbedtls_x509write_crt_set_extension(&w, MBEDTLS_OID_EXTENDED_KEY_USAGE,
                                             MBEDTLS_OID_SIZE(MBEDTLS_OID_EXTENDED_KEY_USAGE), 0, eku, sizeof eku);
  if (!rc && is_ca) rc = mbedtls_x509write_crt_set_subject_key_identifier(&w);
  if (!rc && sans->any) {
    buf_t seq = BUF_INIT;
    buf_putc(&seq, 0x30);
    der_len(&seq, sans->san.len);
    buf_append(&seq, sans->san.data, sans->san.len);
    rc = mbedtls_x509write_crt_set_extension(&w, MBEDTLS_OID_SUBJECT_ALT_NAME,
                                             MBEDTLS_OID_SIZE(MBEDTLS_OID_SUBJECT_ALT_NAME), 0,
                                             (const unsigned char *)seq.data, seq.len);
    buf_free(&seq);
  }
  unsigned char *pem = NULL;
  if (!rc) {
    size_t cap = 16384 + sans->san.len * 2;
    pem = malloc(cap);
    if (!pem) rc = TPL_ENOMEM;
    else rc = mbedtls_x509write_crt_pem(&w, pem, cap, os_rng, NULL);
    if (!rc) buf_puts(&crt, (char *)pem);
  }
  free(pem);
  if (!rc) rc = key_pem(key, &kp);
  mbedtls_x509write_crt_free(&w);
  mbedtls_mpi_free(&serial);
  buf_free(&subj);
  if (rc) {
    buf_free(&crt);
    buf_free(&kp);
    if (rc == TPL_ENOMEM) return rc;
    return tpl_call_errorf(c, "error creating certificate: mbedtls error -0x%04x", (unsigned)-rc);
  }
  return ret_cert(c, &crt, &kp, out);
}

static int key_arg(tpl_call_t *c, const tpl_value_t *pem, mbedtls_pk_context *pk) {
  if (!pem) return gen_rsa(pk, 2048) ? tpl_call_errorf(c, "error generating rsa key") : 0;
  buf_t err = BUF_INIT;
  if (parse_key_pem(pem->u.s.p, pem->u.s.n, pk, &err)) {
    int rc = tpl_call_errorf(c, "parsing private key: %.*s", (int)err.len, err.data);
    buf_free(&err);
    return rc;
  }
  buf_free(&err);
  return 0;
}

static int gen_ca(tpl_call_t *c, tpl_value_t *args, const tpl_value_t *pem, tpl_value_t *out) {
  mbedtls_pk_context pk;
  mbedtls_pk_init(&pk);
  sans_t s = {BUF_INIT, false};
  int rc = key_arg(c, pem, &pk);
  if (!rc) rc = make_cert(c, args[0].u.s.p, args[0].u.s.n, &s, args[1].u.i, true, &pk, NULL, NULL, out);
  mbedtls_pk_free(&pk);
  return rc;
}
SPRIG_FN(f_gen_ca) { (void)n; return gen_ca(c, args, NULL, out); }
SPRIG_FN(f_gen_ca_key) { (void)n; return gen_ca(c, args, &args[2], out); }

static int gen_self(tpl_call_t *c, tpl_value_t *args, const tpl_value_t *pem, tpl_value_t *out) {
  sans_t s = {BUF_INIT, false};
  int rc = collect_sans(c, &args[1], &args[2], &s);
  if (rc) return buf_free(&s.san), rc;
  mbedtls_pk_context pk;
  mbedtls_pk_init(&pk);
  rc = key_arg(c, pem, &pk);
  if (!rc) rc = make_cert(c, args[0].u.s.p, args[0].u.s.n, &s, args[3].u.i, false, &pk, NULL, NULL, out);
  mbedtls_pk_free(&pk);
  buf_free(&s.san);
  return rc;
}
SPRIG_FN(f_gen_self) { (void)n; return gen_self(c, args, NULL, out); }
SPRIG_FN(f_gen_self_key) { (void)n; return gen_self(c, args, &args[4], out); }

static int gen_signed(tpl_call_t *c, tpl_value_t *args, const tpl_value_t *pem, tpl_value_t *out) {
  const tpl_value_t *cav = &args[4];
  if (cav->kind != TPL_OBJECT || cav->u.obj->type != &cert_type) {
    buf_t t = BUF_INIT;
    if (cav->kind == TPL_INVALID || cav->kind == TPL_NIL) buf_puts(&t, "nil");
    else tpl_value_type_name(cav, &t);
    int rc = tpl_call_errorf(c, "wrong type for value; expected sprig.certificate; got %.*s", (int)t.len,
                             t.data ? t.data : "");
    buf_free(&t);
    return rc;
  }
  const cert_t *ca = cav->u.obj->self;
  /* Sprig decodes the signing certificate and key before building the template. */
  char type[128];
  unsigned char *der;
  size_t dn;
  if (pem_decode(ca->cert, ca->ncert, type, sizeof type, &der, &dn)) return tpl_call_errorf(c, "unable to decode certificate");
  mbedtls_x509_crt parent;
  mbedtls_x509_crt_init(&parent);
  int rc = mbedtls_x509_crt_parse_der(&parent, der, dn);
  free(der);
  if (rc) {
    mbedtls_x509_crt_free(&parent);
    return tpl_call_errorf(c, "error parsing certificate: decodedSignerCert.Bytes: x509: malformed certificate");
  }
  mbedtls_pk_context ck, pk;
  mbedtls_pk_init(&ck);
  mbedtls_pk_init(&pk);
  buf_t err = BUF_INIT;
  sans_t s = {BUF_INIT, false};
  if (parse_key_pem(ca->key, ca->nkey, &ck, &err)) {
    rc = tpl_call_errorf(c, "error parsing private key: %.*s", (int)err.len, err.data);
    goto out;
  }
  rc = collect_sans(c, &args[1], &args[2], &s);
  if (rc) goto out;
  rc = key_arg(c, pem, &pk);
  if (rc) goto out;
  rc = make_cert(c, args[0].u.s.p, args[0].u.s.n, &s, args[3].u.i, false, &pk, &parent, &ck, out);
out:
  buf_free(&err);
  buf_free(&s.san);
  mbedtls_pk_free(&ck);
  mbedtls_pk_free(&pk);
  mbedtls_x509_crt_free(&parent);
  return rc;
}
SPRIG_FN(f_gen_signed) { (void)n; return gen_signed(c, args, NULL, out); }
SPRIG_FN(f_gen_signed_key) { (void)n; return gen_signed(c, args, &args[5], out); }

SPRIG_FN(f_build_custom_cert) {
  (void)n;
  unsigned char *cert, *key;
  size_t cn, kn;
  char em[128];
  int rc = b64_decode_alloc(args[0].u.s.p, args[0].u.s.n, &cert, &cn, em, sizeof em);
  if (rc == -12) return TPL_ENOMEM;
  if (rc) return tpl_call_errorf(c, "unable to decode base64 certificate");
  rc = b64_decode_alloc(args[1].u.s.p, args[1].u.s.n, &key, &kn, em, sizeof em);
  if (rc) {
    free(cert);
    return rc == -12 ? TPL_ENOMEM : tpl_call_errorf(c, "unable to decode base64 private key");
  }
  char type[128];
  unsigned char *der;
  size_t dn;
  if (pem_decode((const char *)cert, cn, type, sizeof type, &der, &dn)) {
    free(cert), free(key);
    return tpl_call_errorf(c, "unable to decode certificate");
  }
  mbedtls_x509_crt crt;
  mbedtls_x509_crt_init(&crt);
  rc = mbedtls_x509_crt_parse_der(&crt, der, dn);
  mbedtls_x509_crt_free(&crt);
  free(der);
  if (rc) {
    free(cert), free(key);
    return tpl_call_errorf(c, "error parsing certificate: decodedCert.Bytes: x509: malformed certificate");
  }
  mbedtls_pk_context pk;
  mbedtls_pk_init(&pk);
  buf_t err = BUF_INIT;
  rc = parse_key_pem((const char *)key, kn, &pk, &err);
  mbedtls_pk_free(&pk);
  if (rc) {
    free(cert), free(key);
    rc = tpl_call_errorf(c, "error parsing private key: %.*s", (int)err.len, err.data);
    buf_free(&err);
    return rc;
  }
  buf_free(&err);
  buf_t cb = BUF_INIT, kb = BUF_INIT;
  buf_append(&cb, cert, cn);
  buf_append(&kb, key, kn);
  free(cert), free(key);
  return ret_cert(c, &cb, &kb, out);
}

const tpl_func_t sprig__crypto_fns[] = {
    {"encryptAES", "ss", f_encrypt_aes, NULL, "func(string, string) (string, error)"},
    {"decryptAES", "ss", f_decrypt_aes, NULL, "func(string, string) (string, error)"},
    {"genPrivateKey", "s", f_gen_private_key, NULL, "func(string) string"},
    {"buildCustomCert", "ss", f_build_custom_cert, NULL, "func(string, string) (sprig.certificate, error)"},
    {"genCA", "si", f_gen_ca, NULL, "func(string, int) (sprig.certificate, error)"},
    {"genCAWithKey", "sis", f_gen_ca_key, NULL, "func(string, int, string) (sprig.certificate, error)"},
    {"genSelfSignedCert", "slli", f_gen_self, NULL,
     "func(string, []interface {}, []interface {}, int) (sprig.certificate, error)"},
    {"genSelfSignedCertWithKey", "sllis", f_gen_self_key, NULL,
     "func(string, []interface {}, []interface {}, int, string) (sprig.certificate, error)"},
    {"genSignedCert", "slliC", f_gen_signed, NULL,
     "func(string, []interface {}, []interface {}, int, sprig.certificate) (sprig.certificate, error)"},
    {"genSignedCertWithKey", "slliCs", f_gen_signed_key, NULL,
     "func(string, []interface {}, []interface {}, int, sprig.certificate, string) (sprig.certificate, error)"},
};
const size_t sprig__crypto_nfns = sizeof sprig__crypto_fns / sizeof sprig__crypto_fns[0];
