/* Sprig's key, certificate and AES functions on mbedTLS 2.28: genPrivateKey
 * (rsa 4096, ecdsa P-256, dsa L2048N256 as Go generates its parameters,
 * ed25519 as PKCS#8 of a random seed), genCA/genSelfSignedCert/genSignedCert and their
 * WithKey forms (RSA 2048 keys by default; RSA, EC and Ed25519 keys given; 128-bit random
 * serials, the extensions Go's x509.CreateCertificate writes for Sprig's template; the
 * certificate DER is written here, signed by mbedTLS or by base/ed25519, since mbedTLS 2.28
 * has no Ed25519), buildCustomCert, and encryptAES/decryptAES in Sprig's wire format
 * (base64(IV || AES-256-CBC with PKCS#7 padding), the key being the password zero-padded
 * to 32 bytes). Certificates are random: tested by properties and against Go through the
 * template oracle (test_template_sprig_crypto.c), and element for element against Go's
 * certificates with only the random parts masked (test_template_cert_asn1.c). */
#include <arpa/inet.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <mbedtls/aes.h>
#include <mbedtls/asn1.h>
#include <mbedtls/asn1write.h>
#include <mbedtls/bignum.h>
#include <mbedtls/ecp.h>
#include <mbedtls/md.h>
#include <mbedtls/oid.h>
#include <mbedtls/pk.h>
#include <mbedtls/platform_util.h>
#include <mbedtls/rsa.h>
#include <mbedtls/version.h>
#include <mbedtls/x509_crt.h>

#include "base/b64.h"
#include "base/ed25519.h"
#include "helm/template/p256.h"
#include "helm/template/rsa_keygen.h"
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

/* rsa.GenerateKey(rand.Reader, bits): the primes from rsa_keygen (mbedTLS's generator for
 * sizes it does not handle), N, D = e^−1 mod lcm(p−1, q−1) and the CRT values by mbedTLS. */
static int gen_rsa(mbedtls_pk_context *pk, unsigned bits) {
  int rc = mbedtls_pk_setup(pk, mbedtls_pk_info_from_type(MBEDTLS_PK_RSA));
  if (rc) return rc;
  mbedtls_rsa_context *rsa = mbedtls_pk_rsa(*pk);
  if (!rsa_keygen_supported(bits)) return mbedtls_rsa_gen_key(rsa, os_rng, NULL, bits, 65537);
  unsigned char p[512], q[512];
  static const unsigned char e[] = {0x01, 0x00, 0x01};
  size_t pn = bits / 16;
  rc = rsa_keygen_primes(bits, os_rng, NULL, p, q) ? MBEDTLS_ERR_RSA_KEY_GEN_FAILED : 0;
  if (!rc) rc = mbedtls_rsa_import_raw(rsa, NULL, 0, p, pn, q, pn, NULL, 0, e, sizeof e);
  if (!rc) rc = mbedtls_rsa_complete(rsa);
  if (!rc) rc = mbedtls_rsa_check_privkey(rsa);
  mbedtls_platform_zeroize(p, sizeof p);
  mbedtls_platform_zeroize(q, sizeof q);
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

/* ed25519.GenerateKey + x509.MarshalPKCS8PrivateKey: PKCS#8 of version 0, the Ed25519
 * algorithm without parameters and the 32-byte seed as an OCTET STRING in the privateKey
 * OCTET STRING (RFC 8410); the public key is derived from the seed when needed. */
static int ed25519_pkcs8_pem(const unsigned char seed[32], buf_t *out) {
  unsigned char der[48] = {0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20};
  memcpy(der + 16, seed, 32);
  int rc = pem_encode(out, "PRIVATE KEY", der, sizeof der);
  mbedtls_platform_zeroize(der, sizeof der);
  return rc;
}

static int gen_ed25519(buf_t *out) {
  unsigned char seed[32];
  if (os_rng(NULL, seed, sizeof seed)) return -1;
  int rc = ed25519_pkcs8_pem(seed, out);
  mbedtls_platform_zeroize(seed, sizeof seed);
  return rc;
}

/* ecdsa.GenerateKey(elliptic.P256(), rand.Reader) + x509.MarshalECPrivateKey: d and d·G from
 * p256.c in SEC 1's ECPrivateKey, whose layout is fixed for P-256: version 1, d as 32 bytes, the
 * namedCurve OID prime256v1 in [0], the uncompressed point in a BIT STRING in [1]. */
static int gen_p256(buf_t *out) {
  unsigned char der[121] = {0x30, 0x77, 0x02, 0x01, 0x01, 0x04, 0x20};
  static const unsigned char mid[] = {0xa0, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07,
                                      0xa1, 0x44, 0x03, 0x42, 0x00, 0x04};
  memcpy(der + 39, mid, sizeof mid);
  if (p256_keygen(os_rng, NULL, der + 7, der + 57, der + 89)) return MBEDTLS_ERR_ECP_RANDOM_FAILED;
  int rc = pem_encode(out, "EC PRIVATE KEY", der, sizeof der);
  mbedtls_platform_zeroize(der, sizeof der);
  return rc;
}

/* A key for certificates: RSA or EC on mbedTLS, Ed25519 (which mbedTLS 2.28 lacks) on
 * base/ed25519; DSA and X25519 keys parse (as in Go, buildCustomCert takes them) but cannot
 * sign, and only X25519 could be certified (not done here). */
typedef struct {
  enum { CK_PK, CK_ED25519, CK_DSA, CK_X25519 } kind;
  unsigned char seed[32], pub[32]; /* CK_ED25519 */
  mbedtls_pk_context pk;           /* CK_PK */
} ckey_t;

static void ckey_init(ckey_t *k) {
  memset(k, 0, sizeof *k);
  mbedtls_pk_init(&k->pk);
}

static void ckey_free(ckey_t *k) {
  mbedtls_pk_free(&k->pk);
  mbedtls_platform_zeroize(k->seed, sizeof k->seed);
}

#define OID_ED25519 "\x2b\x65\x70" /* 1.3.101.112 */
#define OID_X25519 "\x2b\x65\x6e"  /* 1.3.101.110 */

/* The curves x509.ParseECPrivateKey knows. */
static bool ec_curve_ok(const mbedtls_pk_context *pk) {
  mbedtls_ecp_group_id id = mbedtls_pk_ec(*pk)->grp.id;
  return id == MBEDTLS_ECP_DP_SECP224R1 || id == MBEDTLS_ECP_DP_SECP256R1 || id == MBEDTLS_ECP_DP_SECP384R1 ||
         id == MBEDTLS_ECP_DP_SECP521R1;
}

/* The pkcs8 structure x509.ParsePKCS8PrivateKey reads: SEQUENCE { version INTEGER,
 * AlgorithmIdentifier { OID, optional parameters }, privateKey OCTET STRING, ... } (later
 * elements and trailing bytes ignored, as Go's asn1 does). 0 or -1. */
static int pkcs8_split(const unsigned char *der, size_t dn, mbedtls_asn1_buf *oid, bool *params,
                       mbedtls_asn1_buf *priv) {
  unsigned char *p = (unsigned char *)der, *end = p + dn, *aend;
  size_t len;
  int ver;
  if (mbedtls_asn1_get_tag(&p, end, &len, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE)) return -1;
  end = p + len;
  if (mbedtls_asn1_get_int(&p, end, &ver)) return -1;
  if (mbedtls_asn1_get_tag(&p, end, &len, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE)) return -1;
  aend = p + len;
  if (mbedtls_asn1_get_tag(&p, aend, &oid->len, MBEDTLS_ASN1_OID)) return -1;
  oid->tag = MBEDTLS_ASN1_OID;
  oid->p = p;
  *params = p + oid->len < aend;
  p = aend;
  if (mbedtls_asn1_get_tag(&p, end, &priv->len, MBEDTLS_ASN1_OCTET_STRING)) return -1;
  priv->tag = MBEDTLS_ASN1_OCTET_STRING;
  priv->p = p;
  return 0;
}

/* The type mbedTLS finds in der (any format it reads), MBEDTLS_PK_NONE when none. */
static mbedtls_pk_type_t pk_sniff(const unsigned char *der, size_t dn) {
  mbedtls_pk_context t;
  mbedtls_pk_init(&t);
  mbedtls_pk_type_t ty = mbedtls_pk_parse_key(&t, der, dn, NULL, 0) ? MBEDTLS_PK_NONE : mbedtls_pk_get_type(&t);
  mbedtls_pk_free(&t);
  return ty;
}

/* x509.ParsePKCS8PrivateKey (reasons after Go's prefixes are ours where mbedTLS parses). */
static int parse_pkcs8(const unsigned char *der, size_t dn, ckey_t *k, buf_t *err) {
  mbedtls_asn1_buf oid, priv;
  bool params;
  buf_puts(err, "decoding PEM as PKCS#8: ");
  if (pkcs8_split(der, dn, &oid, &params, &priv)) {
    mbedtls_pk_type_t ty = pk_sniff(der, dn);
    if (ty == MBEDTLS_PK_ECKEY)
      buf_puts(err, "x509: failed to parse private key (use ParseECPrivateKey instead for this key format)");
    else if (ty == MBEDTLS_PK_RSA)
      buf_puts(err, "x509: failed to parse private key (use ParsePKCS1PrivateKey instead for this key format)");
    else
      buf_puts(err, "unsupported or malformed private key");
    return -1;
  }
  if (!MBEDTLS_OID_CMP(OID_ED25519, &oid)) {
    if (params) return buf_puts(err, "x509: invalid Ed25519 private key parameters"), -1;
    unsigned char *p = priv.p;
    size_t len;
    if (mbedtls_asn1_get_tag(&p, priv.p + priv.len, &len, MBEDTLS_ASN1_OCTET_STRING))
      return buf_puts(err, "x509: invalid Ed25519 private key: malformed seed"), -1;
    if (len != 32) return buf_printf(err, "x509: invalid Ed25519 private key length: %zu", len), -1;
    k->kind = CK_ED25519;
    memcpy(k->seed, p, 32);
    ed25519_public_key(k->pub, k->seed);
    return 0;
  }
  bool rsa = !MBEDTLS_OID_CMP(MBEDTLS_OID_PKCS1_RSA, &oid), ec = !MBEDTLS_OID_CMP(MBEDTLS_OID_EC_ALG_UNRESTRICTED, &oid);
  if (!rsa && !ec) {
    if (!MBEDTLS_OID_CMP(OID_X25519, &oid)) {
      unsigned char *p = priv.p;
      size_t len;
      if (params) return buf_puts(err, "x509: invalid X25519 private key parameters"), -1;
      if (mbedtls_asn1_get_tag(&p, priv.p + priv.len, &len, MBEDTLS_ASN1_OCTET_STRING))
        return buf_puts(err, "x509: invalid X25519 private key: malformed key"), -1;
      if (len != 32) return buf_puts(err, "crypto/ecdh: invalid private key size"), -1;
      k->kind = CK_X25519;
      buf_reset(err);
      return 0;
    }
    char dotted[128];
    if (mbedtls_oid_get_numeric_string(dotted, sizeof dotted, &oid) < 0) strcpy(dotted, "?");
    return buf_printf(err, "x509: PKCS#8 wrapping contained private key with unknown algorithm: %s", dotted), -1;
  }
  if (mbedtls_pk_parse_key(&k->pk, der, dn, NULL, 0))
    return buf_printf(err, "x509: failed to parse %s private key embedded in PKCS#8: malformed key", rsa ? "RSA" : "EC"), -1;
  if (ec && !ec_curve_ok(&k->pk))
    return buf_puts(err, "x509: failed to parse EC private key embedded in PKCS#8: x509: unknown elliptic curve"), -1;
  buf_reset(err);
  return 0;
}

/* x509.ParsePKCS1PrivateKey / x509.ParseECPrivateKey of an "RSA/EC PRIVATE KEY" block. */
static int parse_typed(const unsigned char *der, size_t dn, bool rsa, ckey_t *k, buf_t *err) {
  const char *what = rsa ? "RSA" : "EC";
  mbedtls_asn1_buf oid, priv;
  bool params;
  if (!pkcs8_split(der, dn, &oid, &params, &priv))
    return buf_printf(err, "parsing %s private key from PEM: x509: failed to parse private key (use ParsePKCS8PrivateKey "
                      "instead for this key format)", what), -1;
  if (mbedtls_pk_parse_key(&k->pk, der, dn, NULL, 0))
    return buf_printf(err, "parsing %s private key from PEM: malformed key", what), -1;
  mbedtls_pk_type_t ty = mbedtls_pk_get_type(&k->pk);
  if (rsa && ty != MBEDTLS_PK_RSA)
    return buf_puts(err, "parsing RSA private key from PEM: x509: failed to parse private key (use ParseECPrivateKey "
                         "instead for this key format)"), -1;
  if (!rsa && ty != MBEDTLS_PK_ECKEY)
    return buf_puts(err, "parsing EC private key from PEM: x509: failed to parse private key (use ParsePKCS1PrivateKey "
                         "instead for this key format)"), -1;
  if (!rsa && !ec_curve_ok(&k->pk)) return buf_puts(err, "parsing EC private key from PEM: x509: unknown elliptic curve"), -1;
  return 0;
}

/* Sprig's parsePrivateKeyPEM; 0 or -1 with its error text in err. */
static int parse_key_pem(const char *s, size_t n, ckey_t *k, buf_t *err) {
  char type[128];
  unsigned char *der;
  size_t dn;
  if (pem_decode(s, n, type, sizeof type, &der, &dn)) return buf_puts(err, "no PEM data in input"), -1;
  size_t tl = strlen(type);
  int rc = -1;
  if (!strcmp(type, "PRIVATE KEY")) rc = parse_pkcs8(der, dn, k, err);
  else if (tl < 12 || strcmp(type + tl - 12, " PRIVATE KEY"))
    buf_printf(err, "no private key data in PEM block of type %s", type);
  else if (!strcmp(type, "RSA PRIVATE KEY") || !strcmp(type, "EC PRIVATE KEY"))
    rc = parse_typed(der, dn, type[0] == 'R', k, err);
  else if (!strcmp(type, "DSA PRIVATE KEY")) {
    /* Sprig's DSAKeyFormat: SEQUENCE { version, P, Q, G, Y, X } of INTEGERs */
    unsigned char *p = der, *end = der + dn;
    size_t len;
    rc = mbedtls_asn1_get_tag(&p, end, &len, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE) ? -1 : 0;
    end = p + len;
    for (int i = 0; i < 6 && !rc; i++, p += len)
      if (mbedtls_asn1_get_tag(&p, end, &len, MBEDTLS_ASN1_INTEGER) || !len) rc = -1;
    if (rc) buf_puts(err, "parsing DSA private key from PEM: malformed key");
    else k->kind = CK_DSA;
  }
  else
    buf_printf(err, "invalid private key type %s", type);
  mbedtls_platform_zeroize(der, dn);
  free(der);
  return rc;
}

/* The key's PEM as Sprig's pemBlockForKey writes it: PKCS#1, SEC1 or PKCS#8 (Ed25519). */
static int ckey_pem(ckey_t *k, buf_t *out) {
  return k->kind == CK_ED25519 ? ed25519_pkcs8_pem(k->seed, out) : key_pem(&k->pk, out);
}

/* SubjectPublicKeyInfo DER (RFC 8410 for Ed25519: the algorithm without parameters and the
 * 32-byte key as the BIT STRING). */
static int ckey_spki(ckey_t *k, buf_t *out) {
  if (k->kind == CK_ED25519) {
    static const unsigned char h[] = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};
    return buf_append(out, h, sizeof h) || buf_append(out, k->pub, 32) ? TPL_ENOMEM : 0;
  }
  unsigned char b[4096];
  int len = mbedtls_pk_write_pubkey_der(&k->pk, b, sizeof b);
  if (len < 0) return len;
  return buf_append(out, b + sizeof b - len, (size_t)len) ? TPL_ENOMEM : 0;
}

/* The AlgorithmIdentifier of the signatures k makes, as x509.CreateCertificate picks them:
 * SHA256WithRSA, ECDSA with SHA-256/384/512 by curve, PureEd25519. Returns the digest
 * (MBEDTLS_MD_NONE for Ed25519, which signs the message itself). */
static mbedtls_md_type_t ckey_sigalg(ckey_t *k, buf_t *alg) {
  static const unsigned char ed[] = {0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70};
  static const unsigned char rsa[] = {0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b, 0x05, 0x00};
  unsigned char ecdsa[] = {0x30, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02};
  if (k->kind == CK_ED25519) return buf_append(alg, ed, sizeof ed), MBEDTLS_MD_NONE;
  if (mbedtls_pk_get_type(&k->pk) == MBEDTLS_PK_RSA) return buf_append(alg, rsa, sizeof rsa), MBEDTLS_MD_SHA256;
  mbedtls_ecp_group_id id = mbedtls_pk_ec(k->pk)->grp.id;
  mbedtls_md_type_t md = id == MBEDTLS_ECP_DP_SECP384R1   ? MBEDTLS_MD_SHA384
                         : id == MBEDTLS_ECP_DP_SECP521R1 ? MBEDTLS_MD_SHA512
                                                          : MBEDTLS_MD_SHA256;
  ecdsa[sizeof ecdsa - 1] = md == MBEDTLS_MD_SHA256 ? 2 : md == MBEDTLS_MD_SHA384 ? 3 : 4;
  buf_append(alg, ecdsa, sizeof ecdsa);
  return md;
}

static int ckey_sign(ckey_t *k, mbedtls_md_type_t md, const unsigned char *m, size_t n, buf_t *sig) {
  if (k->kind == CK_ED25519) {
    unsigned char s[64];
    ed25519_sign(s, m, n, k->seed);
    return buf_append(sig, s, sizeof s) ? TPL_ENOMEM : 0;
  }
  unsigned char hash[MBEDTLS_MD_MAX_SIZE], s[MBEDTLS_PK_SIGNATURE_MAX_SIZE];
  size_t sl = 0;
  const mbedtls_md_info_t *mi = mbedtls_md_info_from_type(md);
  int rc = mbedtls_md(mi, m, n, hash);
#if MBEDTLS_VERSION_NUMBER >= 0x03000000
  if (!rc) rc = mbedtls_pk_sign(&k->pk, md, hash, mbedtls_md_get_size(mi), s, sizeof s, &sl, os_rng, NULL);
#else
  if (!rc) rc = mbedtls_pk_sign(&k->pk, md, hash, mbedtls_md_get_size(mi), s, &sl, os_rng, NULL);
#endif
  if (!rc && buf_append(sig, s, sl)) rc = TPL_ENOMEM;
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
  } else if ((tn == 3 && !memcmp(t, "dsa", 3)) || (tn == 5 && !memcmp(t, "ecdsa", 5)) ||
             (tn == 7 && !memcmp(t, "ed25519", 7))) {
    mbedtls_pk_free(&pk);
    rc = tn == 3 ? gen_dsa(&o) : tn == 5 ? gen_p256(&o) : gen_ed25519(&o);
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

/* DER: tag, definite length, content. Nonzero when out of memory. */
static int der_tlv(buf_t *b, unsigned char tag, const void *p, size_t n) {
  int e = buf_putc(b, (char)tag);
  if (n < 128) e |= buf_putc(b, (char)n);
  else {
    int k = n > 0xffffff ? 4 : n > 0xffff ? 3 : n > 0xff ? 2 : 1;
    e |= buf_putc(b, (char)(0x80 | k));
    for (int i = k - 1; i >= 0; i--) e |= buf_putc(b, (char)(n >> (8 * i)));
  }
  if (n) e |= buf_append(b, p, n);
  return e;
}

static int der_wrap(buf_t *b, unsigned char tag, const buf_t *content) {
  return der_tlv(b, tag, content->data, content->len);
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
    tpl_value_t it = tpl_list_at(il, i), e = sprig__elem(ips, &it);
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
    der_tlv(&ipb, 0x87, a6, fam == 4 ? 4 : 16);
  }
  for (size_t i = 0; dl && i < dl->len; i++) {
    tpl_value_t it = tpl_list_at(dl, i), e = sprig__elem(dns, &it);
    if (e.kind != TPL_STRING) {
      buf_t t = BUF_INIT;
      tpl_fmt_value(&t, &e);
      int rc = tpl_call_errorf(c, "error processing alternate dns name: %.*s is not a string", (int)t.len,
                               t.data ? t.data : "");
      buf_free(&t);
      buf_free(&ipb);
      return rc;
    }
    der_tlv(&s->san, 0x82, e.u.s.p, e.u.s.n);
    s->any = true;
  }
  if (ipb.len) {
    buf_append(&s->san, ipb.data, ipb.len);
    s->any = true;
  }
  buf_free(&ipb);
  return 0;
}

/* UTCTime for 1950-2049, GeneralizedTime otherwise (RFC 5280 4.1.2.5, as Go writes them). */
static int der_time(buf_t *b, time_t t) {
  struct tm tm;
  gmtime_r(&t, &tm);
  int y = tm.tm_year + 1900;
  char s[32];
  if (y >= 1950 && y < 2050) {
    snprintf(s, sizeof s, "%02d%02d%02d%02d%02d%02dZ", y % 100, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
             tm.tm_sec);
    return der_tlv(b, 0x17, s, strlen(s));
  }
  snprintf(s, sizeof s, "%04d%02d%02d%02d%02d%02dZ", y, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return der_tlv(b, 0x18, s, strlen(s));
}

static int der_ext(buf_t *exts, const char *oid, size_t oidn, bool critical, const void *val, size_t vn) {
  buf_t e = BUF_INIT;
  int r = der_tlv(&e, 0x06, oid, oidn);
  if (critical) r |= buf_append(&e, "\x01\x01\xff", 3);
  r |= der_tlv(&e, 0x04, val, vn);
  r |= der_wrap(exts, 0x30, &e);
  buf_free(&e);
  return r;
}

/* What signing needs from a parent certificate: its subject (copied as the issuer), its
 * SubjectPublicKeyInfo (which the signing key must match) and its Subject Key Identifier (the
 * child's Authority Key Identifier), as raw DER inside the certificate. */
typedef struct {
  const unsigned char *subject, *spki, *skid;
  size_t nsubject, nspki, nskid;
  bool odd; /* an Ed25519 key or signature, or an empty issuer or subject: mbedTLS 2.28 reads none */
} certinfo_t;

/* Finds the Subject Key Identifier among what follows the key in a TBSCertificate (the unique
 * IDs [1] and [2], then [3] Extensions): the extension 2.5.29.14's OCTET STRING, holding an
 * OCTET STRING. 0, or -1 when the extensions are not that structure. */
static int cert_skid(unsigned char *p, const unsigned char *end, certinfo_t *ci) {
  const int SEQ = MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE;
  size_t len;
  while (p < end && (*p == (MBEDTLS_ASN1_CONTEXT_SPECIFIC | 1) || *p == (MBEDTLS_ASN1_CONTEXT_SPECIFIC | 2))) {
    unsigned char tag = *p;
    if (mbedtls_asn1_get_tag(&p, end, &len, tag)) return -1;
    p += len;
  }
  if (p == end) return 0;
  if (mbedtls_asn1_get_tag(&p, end, &len, MBEDTLS_ASN1_CONTEXT_SPECIFIC | MBEDTLS_ASN1_CONSTRUCTED | 3)) return -1;
  end = p + len;
  if (mbedtls_asn1_get_tag(&p, end, &len, SEQ)) return -1;
  end = p + len;
  while (p < end) {
    unsigned char *eend;
    mbedtls_asn1_buf oid = {0};
    int crit = 0;
    if (mbedtls_asn1_get_tag(&p, end, &len, SEQ)) return -1;
    eend = p + len;
    if (mbedtls_asn1_get_tag(&p, eend, &oid.len, MBEDTLS_ASN1_OID)) return -1;
    oid.p = p;
    p += oid.len;
    if (p < eend && *p == MBEDTLS_ASN1_BOOLEAN && mbedtls_asn1_get_bool(&p, eend, &crit)) return -1;
    if (mbedtls_asn1_get_tag(&p, eend, &len, MBEDTLS_ASN1_OCTET_STRING)) return -1;
    if (!MBEDTLS_OID_CMP(MBEDTLS_OID_SUBJECT_KEY_IDENTIFIER, &oid)) {
      unsigned char *q = p;
      size_t kl;
      if (mbedtls_asn1_get_tag(&q, p + len, &kl, MBEDTLS_ASN1_OCTET_STRING)) return -1;
      ci->skid = q;
      ci->nskid = kl;
    }
    p = eend;
  }
  return 0;
}

/* Walks a Certificate (RFC 5280 4.1) down to the fields above; 0, or -1 when the DER is not
 * that structure or holds a malformed Ed25519 key. */
static int cert_split(const unsigned char *der, size_t dn, certinfo_t *ci) {
  const int SEQ = MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE;
  unsigned char *p = (unsigned char *)der, *end = p + dn, *tend, *kend, *s0;
  size_t len;
  mbedtls_asn1_buf oid, params;
  memset(ci, 0, sizeof *ci);
  if (mbedtls_asn1_get_tag(&p, end, &len, SEQ)) return -1;
  end = p + len;
  if (mbedtls_asn1_get_tag(&p, end, &len, SEQ)) return -1;
  tend = p + len;
  if (!mbedtls_asn1_get_tag(&p, tend, &len, MBEDTLS_ASN1_CONTEXT_SPECIFIC | MBEDTLS_ASN1_CONSTRUCTED | 0)) p += len;
  if (mbedtls_asn1_get_tag(&p, tend, &len, MBEDTLS_ASN1_INTEGER)) return -1;
  p += len;
  if (mbedtls_asn1_get_alg(&p, tend, &oid, &params)) return -1;
  for (int i = 0; i < 2; i++) { /* issuer, validity */
    if (mbedtls_asn1_get_tag(&p, tend, &len, SEQ)) return -1;
    if (!i && !len) ci->odd = true;
    p += len;
  }
  s0 = p;
  if (mbedtls_asn1_get_tag(&p, tend, &len, SEQ)) return -1;
  if (!len) ci->odd = true;
  p += len;
  ci->subject = s0;
  ci->nsubject = (size_t)(p - s0);
  s0 = p;
  if (mbedtls_asn1_get_tag(&p, tend, &len, SEQ)) return -1;
  kend = p + len;
  memset(&params, 0, sizeof params);
  if (mbedtls_asn1_get_alg(&p, kend, &oid, &params)) return -1;
  if (!MBEDTLS_OID_CMP(OID_ED25519, &oid)) {
    /* x509.ParseCertificate: no parameters, a 32-byte key */
    if (params.p || params.tag) return -1;
    if (mbedtls_asn1_get_tag(&p, kend, &len, MBEDTLS_ASN1_BIT_STRING) || len != 33 || p[0]) return -1;
    ci->odd = true;
  }
  ci->spki = s0;
  ci->nspki = (size_t)(kend - s0);
  p = kend;
  if (cert_skid(p, tend, ci)) return -1;
  p = tend;
  if (mbedtls_asn1_get_alg(&p, end, &oid, &params)) return -1;
  if (!MBEDTLS_OID_CMP(OID_ED25519, &oid)) ci->odd = true;
  if (mbedtls_asn1_get_tag(&p, end, &len, MBEDTLS_ASN1_BIT_STRING)) return -1;
  return 0;
}

/* Stands in for x509.ParseCertificate: mbedTLS parses RSA and EC certificates; those it
 * cannot read (Ed25519, empty names, as Go and Sprig write them) pass on cert_split's checks. */
static int cert_check(const unsigned char *der, size_t dn, certinfo_t *ci) {
  if (cert_split(der, dn, ci)) return -1;
  mbedtls_x509_crt crt;
  mbedtls_x509_crt_init(&crt);
  int rc = mbedtls_x509_crt_parse_der(&crt, der, dn);
  mbedtls_x509_crt_free(&crt);
  return rc && !ci->odd ? -1 : 0;
}

/* The tag encoding/asn1 gives a string of no declared type: PrintableString (0x13) when every
 * byte is in its alphabet ('*' and '&' left out, as Go's marshaller does), UTF8String (0x0c)
 * otherwise, -1 when it is not valid UTF-8. */
static int der_string_tag(const char *s, size_t n) {
  bool printable = true;
  for (size_t i = 0; i < n && printable; i++) {
    unsigned char b = (unsigned char)s[i];
    printable = (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') || (b && strchr(" '()+,-./:=?", b));
  }
  if (printable) return 0x13;
  for (size_t i = 0; i < n;) {
    int32_t r;
    size_t k = tpl__utf8_decode(s + i, n - i, &r);
    if (r == 0xFFFD && k == 1) return -1;
    i += k;
  }
  return 0x0c;
}

/* NotBefore and NotAfter as Sprig computes them: now, and now plus a time.Duration of days*24h,
 * an int64 of nanoseconds that wraps around past about 292 years (time.Time.Add's carry of
 * the nanoseconds included); Unix seconds, the fractions cut off as the DER times do. */
static void validity_go(int64_t days, int64_t *nb, int64_t *na) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  int64_t d = (int64_t)((uint64_t)days * UINT64_C(86400000000000));
  int64_t sec = (int64_t)ts.tv_sec + d / 1000000000, nsec = (int64_t)ts.tv_nsec + d % 1000000000;
  if (nsec >= 1000000000) sec++;
  else if (nsec < 0) sec--;
  *nb = (int64_t)ts.tv_sec;
  *na = sec;
}

/* getCertAndKey over Sprig's base template (x509.CreateCertificate's layout and extension
 * order); parent NULL: self-signed with key, otherwise signed by signer under parent's name. */
static int make_cert(tpl_call_t *c, const char *cn, size_t cnn, const sans_t *sans, int64_t days, bool is_ca,
                     ckey_t *key, const certinfo_t *parent, ckey_t *signer, tpl_value_t *out) {
  buf_t subj = BUF_INIT, spki = BUF_INIT, alg = BUF_INIT, body = BUF_INIT, exts = BUF_INIT, t = BUF_INIT, u = BUF_INIT,
        tbs = BUF_INIT, sig = BUF_INIT, crt = BUF_INIT, kp = BUF_INIT;
  int e = 0, rc = 0;
  if (!signer) signer = key;
  /* x509.CreateCertificate's checks, in its order */
  if (signer->kind == CK_DSA || signer->kind == CK_X25519)
    return tpl_call_errorf(c, "error creating certificate: x509: certificate private key does not implement crypto.Signer");
  if (key->kind == CK_DSA)
    return tpl_call_errorf(c, "error creating certificate: x509: unsupported public key type: *dsa.PublicKey");
  if (key->kind == CK_X25519)
    return tpl_call_errorf(c, "error creating certificate: X25519 public keys in certificates are not supported");
  /* subject: the CN as PrintableString when its alphabet allows, UTF8String otherwise (as
   * encoding/asn1 picks for a Go string); an empty CN gives an empty name, as in Go */
  int st = der_string_tag(cn, cnn);
  if (st < 0) return tpl_call_errorf(c, "error creating certificate: asn1: string not valid UTF-8");
  if (cnn) {
    e |= der_tlv(&t, 0x06, "\x55\x04\x03", 3) | der_tlv(&t, (unsigned char)st, cn, cnn);
    e |= der_wrap(&u, 0x30, &t);
    buf_reset(&t);
    e |= der_wrap(&t, 0x31, &u);
  }
  e |= der_wrap(&subj, 0x30, &t);
  buf_reset(&t);
  buf_reset(&u);
  rc = ckey_spki(key, &spki);
  if (!rc && parent) {
    rc = ckey_spki(signer, &t);
    if (!rc && (t.len != parent->nspki || memcmp(t.data, parent->spki, t.len))) {
      rc = tpl_call_errorf(c, "error creating certificate: x509: provided PrivateKey doesn't match parent's PublicKey");
      goto out;
    }
    buf_reset(&t);
  }
  mbedtls_md_type_t md = ckey_sigalg(signer, &alg);
  unsigned char sb[17] = {0};
  if (!rc) rc = os_rng(NULL, sb + 1, 16);
  if (rc) goto out;
  /* serial: a random 128-bit non-negative INTEGER in its minimal encoding */
  size_t s0 = 1;
  while (s0 < 16 && !sb[s0]) s0++;
  if (sb[s0] & 0x80) s0--;
  int64_t now, later;
  validity_go(days, &now, &later);
  e |= buf_append(&body, "\xa0\x03\x02\x01\x02", 5);
  e |= der_tlv(&body, 0x02, sb + s0, 17 - s0);
  e |= buf_append(&body, alg.data, alg.len);
  if (parent) e |= buf_append(&body, parent->subject, parent->nsubject);
  else e |= buf_append(&body, subj.data, subj.len);
  e |= der_time(&t, (time_t)now) | der_time(&t, (time_t)later);
  e |= der_wrap(&body, 0x30, &t);
  buf_reset(&t);
  e |= buf_append(&body, subj.data, subj.len) | buf_append(&body, spki.data, spki.len);
  /* extensions, in x509.CreateCertificate's order: KeyUsage (critical), ExtKeyUsage
   * server+client, BasicConstraints (critical), SubjectKeyId on CAs (the first 160 bits of
   * SHA-256 of the key bits, RFC 7093, Go's default since 1.25), AuthorityKeyId (the parent's
   * SubjectKeyId, when it has one and the names differ), SANs (critical when the subject is empty) */
  e |= der_ext(&exts, MBEDTLS_OID_KEY_USAGE, MBEDTLS_OID_SIZE(MBEDTLS_OID_KEY_USAGE), true,
               is_ca ? "\x03\x02\x02\xa4" : "\x03\x02\x05\xa0", 4);
  static const unsigned char eku[] = {0x30, 0x14, 0x06, 0x08, 0x2B, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03,
                                      0x01, 0x06, 0x08, 0x2B, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x02};
  e |= der_ext(&exts, MBEDTLS_OID_EXTENDED_KEY_USAGE, MBEDTLS_OID_SIZE(MBEDTLS_OID_EXTENDED_KEY_USAGE), false, eku,
               sizeof eku);
  e |= der_ext(&exts, MBEDTLS_OID_BASIC_CONSTRAINTS, MBEDTLS_OID_SIZE(MBEDTLS_OID_BASIC_CONSTRAINTS), true,
               is_ca ? "\x30\x03\x01\x01\xff" : "\x30\x00", is_ca ? 5 : 2);
  if (is_ca && !e) {
    unsigned char *p = (unsigned char *)spki.data, *end = p + spki.len, h[32 + 2] = {0x04, 20};
    size_t len;
    mbedtls_asn1_bitstring bits;
    rc = mbedtls_asn1_get_tag(&p, end, &len, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE);
    if (!rc) rc = mbedtls_asn1_get_tag(&p, end, &len, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE);
    if (!rc) p += len, rc = mbedtls_asn1_get_bitstring(&p, end, &bits);
    if (!rc) rc = mbedtls_md(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), bits.p, bits.len, h + 2);
    if (rc) goto out;
    e |= der_ext(&exts, MBEDTLS_OID_SUBJECT_KEY_IDENTIFIER, MBEDTLS_OID_SIZE(MBEDTLS_OID_SUBJECT_KEY_IDENTIFIER), false,
                 h, 22);
  }
  if (parent && parent->nskid && (parent->nsubject != subj.len || memcmp(parent->subject, subj.data, subj.len))) {
    /* AuthorityKeyIdentifier ::= SEQUENCE { keyIdentifier [0] IMPLICIT OCTET STRING } */
    e |= der_tlv(&u, 0x80, parent->skid, parent->nskid);
    e |= der_wrap(&t, 0x30, &u);
    e |= der_ext(&exts, MBEDTLS_OID_AUTHORITY_KEY_IDENTIFIER, MBEDTLS_OID_SIZE(MBEDTLS_OID_AUTHORITY_KEY_IDENTIFIER), false,
                 t.data, t.len);
    buf_reset(&t);
    buf_reset(&u);
  }
  if (sans->any) {
    e |= der_wrap(&t, 0x30, &sans->san);
    e |= der_ext(&exts, MBEDTLS_OID_SUBJECT_ALT_NAME, MBEDTLS_OID_SIZE(MBEDTLS_OID_SUBJECT_ALT_NAME), !cnn, t.data,
                 t.len);
    buf_reset(&t);
  }
  e |= der_wrap(&t, 0x30, &exts);
  e |= der_wrap(&body, 0xa3, &t);
  buf_reset(&t);
  e |= der_wrap(&tbs, 0x30, &body);
  if (e) goto out;
  rc = ckey_sign(signer, md, (const unsigned char *)tbs.data, tbs.len, &sig);
  if (rc) goto out;
  e |= buf_append(&t, tbs.data, tbs.len) | buf_append(&t, alg.data, alg.len);
  e |= buf_putc(&u, 0) | buf_append(&u, sig.data, sig.len);
  e |= der_wrap(&t, 0x03, &u);
  buf_reset(&u);
  e |= der_wrap(&u, 0x30, &t);
  if (e) goto out;
  rc = pem_encode(&crt, "CERTIFICATE", (const unsigned char *)u.data, u.len);
  if (!rc) rc = ckey_pem(key, &kp);
out:;
  buf_t *all[] = {&subj, &spki, &alg, &body, &exts, &t, &u, &tbs, &sig};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) buf_free(all[i]);
  if (e && !rc) rc = TPL_ENOMEM;
  if (rc) {
    buf_free(&crt);
    buf_free(&kp);
    if (rc == TPL_ENOMEM || rc == TPL_EEXEC) return rc;
    return tpl_call_errorf(c, "error creating certificate: mbedtls error -0x%04x", (unsigned)-rc);
  }
  return ret_cert(c, &crt, &kp, out);
}

/* The certificate key: parsed from pem (Sprig's "parsing private key: ..." on failure). */
static int key_arg(tpl_call_t *c, const tpl_value_t *pem, ckey_t *k) {
  buf_t err = BUF_INIT;
  int rc = 0;
  if (parse_key_pem(pem->u.s.p, pem->u.s.n, k, &err))
    rc = tpl_call_errorf(c, "parsing private key: %.*s", (int)err.len, err.data ? err.data : "");
  buf_free(&err);
  return rc;
}

/* Sprig's default key: RSA 2048. */
static int key_gen(tpl_call_t *c, ckey_t *k) {
  return gen_rsa(&k->pk, 2048) ? tpl_call_errorf(c, "error generating rsa key") : 0;
}

static int gen_ca(tpl_call_t *c, tpl_value_t *args, const tpl_value_t *pem, tpl_value_t *out) {
  ckey_t k;
  ckey_init(&k);
  sans_t s = {BUF_INIT, false};
  int rc = pem ? key_arg(c, pem, &k) : key_gen(c, &k);
  if (!rc) rc = make_cert(c, args[0].u.s.p, args[0].u.s.n, &s, args[1].u.i, true, &k, NULL, NULL, out);
  ckey_free(&k);
  return rc;
}
SPRIG_FN(f_gen_ca) { (void)n; return gen_ca(c, args, NULL, out); }
SPRIG_FN(f_gen_ca_key) { (void)n; return gen_ca(c, args, &args[2], out); }

/* Sprig parses a given key before the template's IPs and names; RSA keys are made after. */
static int gen_self(tpl_call_t *c, tpl_value_t *args, const tpl_value_t *pem, tpl_value_t *out) {
  ckey_t k;
  ckey_init(&k);
  sans_t s = {BUF_INIT, false};
  int rc = pem ? key_arg(c, pem, &k) : 0;
  if (!rc) rc = collect_sans(c, &args[1], &args[2], &s);
  if (!rc && !pem) rc = key_gen(c, &k);
  if (!rc) rc = make_cert(c, args[0].u.s.p, args[0].u.s.n, &s, args[3].u.i, false, &k, NULL, NULL, out);
  ckey_free(&k);
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
  ckey_t k, ck;
  ckey_init(&k);
  ckey_init(&ck);
  buf_t err = BUF_INIT;
  sans_t s = {BUF_INIT, false};
  unsigned char *der = NULL;
  int rc = pem ? key_arg(c, pem, &k) : 0;
  if (rc) goto out;
  /* Sprig decodes the signing certificate and key before building the template. */
  char type[128];
  size_t dn;
  if (pem_decode(ca->cert, ca->ncert, type, sizeof type, &der, &dn)) {
    der = NULL;
    rc = tpl_call_errorf(c, "unable to decode certificate");
    goto out;
  }
  certinfo_t parent;
  if (cert_check(der, dn, &parent)) {
    rc = tpl_call_errorf(c, "error parsing certificate: decodedSignerCert.Bytes: x509: malformed certificate");
    goto out;
  }
  if (parse_key_pem(ca->key, ca->nkey, &ck, &err)) {
    rc = tpl_call_errorf(c, "error parsing private key: %.*s", (int)err.len, err.data ? err.data : "");
    goto out;
  }
  rc = collect_sans(c, &args[1], &args[2], &s);
  if (!rc && !pem) rc = key_gen(c, &k);
  if (!rc) rc = make_cert(c, args[0].u.s.p, args[0].u.s.n, &s, args[3].u.i, false, &k, &parent, &ck, out);
out:
  free(der);
  buf_free(&err);
  buf_free(&s.san);
  ckey_free(&ck);
  ckey_free(&k);
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
  certinfo_t ci;
  rc = cert_check(der, dn, &ci);
  free(der);
  if (rc) {
    free(cert), free(key);
    return tpl_call_errorf(c, "error parsing certificate: decodedCert.Bytes: x509: malformed certificate");
  }
  ckey_t pk;
  ckey_init(&pk);
  buf_t err = BUF_INIT;
  rc = parse_key_pem((const char *)key, kn, &pk, &err);
  ckey_free(&pk);
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
