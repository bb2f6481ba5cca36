/* Property tests of Sprig's certificate, key and AES functions (random
 * outputs the oracle cannot compare): OpenSSL parses and verifies the chain,
 * SANs, validity and key types; keys match their certificates; AES round
 * trips (decrypting Go's ciphertexts is in the oracle corpus, fn_crypto).
 * Ed25519 keys in certificates are also checked against Go through the template
 * oracle: Go parses our certificates and keys and signs with them, and the error
 * texts for bad or unusable keys are Go's. Needs openssl and Go. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/b64.h"
#include "helm/template/helm_funcs.h"
#include "helm/template/sprig.h"
#include "helm/template/tpl.h"
#include "t.h"
#include "t_oracle.h"
#include "t_render.h"

static char *render(const char *text) { return t_render_text(text, 0); }

static char dir[] = "/tmp/rudder-crypto-XXXXXX";

static void put(const char *name, const char *s, size_t n) { t_put(dir, name, s, n); }
static char *sh(const char *cmd) { return t_sh(dir, cmd); }
static char *slurp(const char *name) { return t_slurp(dir, name); }
static char *golit(const char *s) { return t_golit(s); }
static int oracle(size_t n, char *const *templates, char **out, char **err) {
  return t_oracle_run(dir, n, templates, out, err);
}



static void split_store(char *s) {
  /* parts separated by "@@": ca.crt, ca.key, leaf.crt, leaf.key, self.crt, self.key, ec.key, eccert.crt */
  static const char *names[] = {"ca.crt", "ca.key", "leaf.crt", "leaf.key", "self.crt", "self.key", "ec.key", "ecleaf.crt"};
  char *p = s;
  for (int i = 0; i < 8 && p; i++) {
    char *e = strstr(p, "@@");
    size_t n = e ? (size_t)(e - p) : strlen(p);
    put(names[i], p, n);
    p = e ? e + 2 : NULL;
  }
}

static int contains(const char *hay, const char *needle) { return hay && strstr(hay, needle) != NULL; }

#define OID_ED "\x2b\x65\x70"

/* ---- Ed25519 keys in certificates ------------------------------------------------------ */

/* The template's error text, NULL when it rendered. */
static char *render_err(const char *text) { return t_render_text(text, 1); }


/* A PEM block of type around der (one base64 line; pem.Decode takes any line length). */
static char *pem_of(const char *type, const unsigned char *der, size_t n) {
  char *b64 = malloc(b64_encoded_len(n) + 1);
  b64_encode(der, n, b64);
  buf_t b = BUF_INIT;
  buf_printf(&b, "-----BEGIN %s-----\n%s\n-----END %s-----\n", type, b64, type);
  buf_putc(&b, 0);
  free(b64);
  return b.data;
}

/* The same PEM under another block type. */
static char *retype(const char *pem, const char *from, const char *to) {
  buf_t b = BUF_INIT;
  const char *p = pem;
  for (const char *q; p && (q = strstr(p, from)); p = q + strlen(from)) {
    buf_append(&b, p, (size_t)(q - p));
    buf_puts(&b, to);
  }
  if (p) buf_puts(&b, p);
  buf_putc(&b, 0);
  return b.data;
}


static void split_named(char *s, const char *const *names, int n) {
  char *p = s;
  for (int i = 0; i < n && p; i++) {
    char *e = strstr(p, "@@");
    size_t len = e ? (size_t)(e - p) : strlen(p);
    put(names[i], p, len);
    p = e ? e + 2 : NULL;
  }
}


/* A PKCS#8 "PRIVATE KEY" for algorithm OID oid (DER content) with optional parameters, the
 * inner key as tag/len/bytes, and an optional trailing element. */
static char *pkcs8_pem(const char *oid, size_t oidn, const char *params, size_t pn, unsigned char inner_tag,
                       size_t inner_len, const char *extra, size_t en) {
  unsigned char d[256], a[64], k[80];
  size_t an = 0, kn = 0, n = 0;
  a[an++] = 0x06, a[an++] = (unsigned char)oidn;
  memcpy(a + an, oid, oidn), an += oidn;
  memcpy(a + an, params, pn), an += pn;
  k[kn++] = inner_tag, k[kn++] = (unsigned char)inner_len;
  for (size_t i = 0; i < inner_len; i++) k[kn++] = (unsigned char)(0x11 * (i % 15 + 1));
  size_t body = 3 + 2 + an + 2 + kn + en;
  d[n++] = 0x30, d[n++] = (unsigned char)body;
  d[n++] = 0x02, d[n++] = 0x01, d[n++] = 0x00;
  d[n++] = 0x30, d[n++] = (unsigned char)an;
  memcpy(d + n, a, an), n += an;
  d[n++] = 0x04, d[n++] = (unsigned char)kn;
  memcpy(d + n, k, kn), n += kn;
  memcpy(d + n, extra, en), n += en;
  return pem_of("PRIVATE KEY", d, n);
}

static void ed25519_checks(const char *dsa_key) {
  /* Certificates with Ed25519 keys: a CA, and leaves of each key type it signs; a
   * self-signed certificate; an Ed25519 leaf under an RSA CA. */
  char *s = render(
      "{{ $k := genPrivateKey \"ed25519\" }}{{ $ca := genCAWithKey \"Rudder Ed CA\" 365 $k }}"
      "{{ $rl := genSignedCert \"rsa.leaf\" (list \"10.1.1.1\") (list \"rsa.example\") 30 $ca }}"
      "{{ $ek := genPrivateKey \"ecdsa\" }}{{ $el := genSignedCertWithKey \"ec.leaf\" nil (list \"ec.example\") 30 $ca $ek }}"
      "{{ $k2 := genPrivateKey \"ed25519\" }}"
      "{{ $dl := genSignedCertWithKey \"ed.leaf\" (list \"::1\") (list \"ed.example\") 30 $ca $k2 }}"
      "{{ $s := genSelfSignedCertWithKey \"ed.self\" nil (list \"self.example\") 10 $k2 }}"
      "{{ $rca := genCA \"Rudder RSA CA\" 30 }}"
      "{{ $dr := genSignedCertWithKey \"ed.under.rsa\" nil (list \"edr.example\") 30 $rca $k2 }}"
      "{{ $k }}@@{{ $ca.Cert }}@@{{ $ca.Key }}@@{{ $rl.Cert }}@@{{ $el.Cert }}@@{{ $k2 }}@@{{ $dl.Cert }}@@{{ $dl.Key }}"
      "@@{{ $s.Cert }}@@{{ $s.Key }}@@{{ $rca.Cert }}@@{{ $rca.Key }}@@{{ $dr.Cert }}@@{{ $dr.Key }}@@{{ $ek }}");
  CHECK(s != NULL);
  if (!s) return;
  static const char *const names[] = {"edk.key",  "edca.crt",   "edca.key", "rsaleaf.crt", "ecleaf2.crt",
                                      "ed2.key",  "edleaf.crt", "edleaf.key", "edself.crt", "edself.key",
                                      "rca.crt",  "rca.key",    "edr.crt",  "edr.key",     "ec2.key"};
  split_named(s, names, 15);
  free(s);
  char *edk = slurp("edk.key"), *ed2 = slurp("ed2.key"), *edca = slurp("edca.crt"), *edleaf = slurp("edleaf.crt");
  char *edself = slurp("edself.crt"), *edr = slurp("edr.crt"), *rsaleaf = slurp("rsaleaf.crt");
  char *rca = slurp("rca.crt"), *rcak = slurp("rca.key"), *ec2 = slurp("ec2.key");
  /* .Key of a WithKey certificate is the given key, as Go re-encodes it (PKCS#8 of the seed) */
  char *k;
  CHECK_EQ_STR((k = slurp("edca.key")), edk);
  free(k);
  CHECK_EQ_STR((k = slurp("edleaf.key")), ed2);
  free(k);
  CHECK_EQ_STR((k = slurp("edself.key")), ed2);
  free(k);
  CHECK_EQ_STR((k = slurp("edr.key")), ed2);
  free(k);
  char *o;
  o = sh("openssl verify -CAfile edca.crt edca.crt");
  CHECK(contains(o, "edca.crt: OK"));
  free(o);
  o = sh("openssl verify -CAfile edca.crt -purpose sslserver rsaleaf.crt");
  CHECK(contains(o, "rsaleaf.crt: OK"));
  free(o);
  o = sh("openssl verify -CAfile edca.crt -purpose sslclient ecleaf2.crt");
  CHECK(contains(o, "ecleaf2.crt: OK"));
  free(o);
  o = sh("openssl verify -CAfile edca.crt -purpose sslserver edleaf.crt");
  CHECK(contains(o, "edleaf.crt: OK"));
  free(o);
  o = sh("openssl verify -CAfile edself.crt edself.crt");
  CHECK(contains(o, "edself.crt: OK"));
  free(o);
  o = sh("openssl verify -CAfile rca.crt edr.crt");
  CHECK(contains(o, "edr.crt: OK"));
  free(o);
  /* the checks can fail: another CA, and a changed signature byte, are refused */
  o = sh("! openssl verify -CAfile rca.crt edleaf.crt >/dev/null 2>&1 && echo refused");
  CHECK(contains(o, "refused"));
  free(o);
  o = sh("openssl x509 -in edself.crt -outform DER -out t.der && n=$(stat -c %s t.der) && "
         "b=$(tail -c1 t.der | od -An -tu1 | tr -d ' ') && printf \"\\\\$(printf %o $((b ^ 1)))\" | "
         "dd of=t.der bs=1 seek=$((n - 1)) conv=notrunc 2>/dev/null && openssl x509 -inform DER -in t.der -out t.crt && "
         "! openssl verify -CAfile edself.crt t.crt >/dev/null 2>&1 && echo refused");
  CHECK(contains(o, "refused"));
  free(o);
  o = sh("openssl x509 -in edca.crt -noout -text");
  CHECK(contains(o, "Signature Algorithm: ED25519"));
  CHECK(contains(o, "Public Key Algorithm: ED25519"));
  CHECK(contains(o, "ED25519 Public-Key"));
  CHECK(contains(o, "CA:TRUE"));
  CHECK(contains(o, "Certificate Sign"));
  CHECK(contains(o, "Subject Key Identifier"));
  free(o);
  o = sh("openssl x509 -in rsaleaf.crt -noout -text");
  CHECK(contains(o, "Signature Algorithm: ED25519"));
  CHECK(contains(o, "Public-Key: (2048 bit)"));
  CHECK(contains(o, "DNS:rsa.example, IP Address:10.1.1.1"));
  CHECK(contains(o, "Issuer: CN = Rudder Ed CA") || contains(o, "Issuer: CN=Rudder Ed CA"));
  free(o);
  o = sh("openssl x509 -in ecleaf2.crt -noout -text");
  CHECK(contains(o, "Signature Algorithm: ED25519"));
  CHECK(contains(o, "id-ecPublicKey"));
  free(o);
  o = sh("openssl x509 -in edleaf.crt -noout -text");
  CHECK(contains(o, "Signature Algorithm: ED25519"));
  CHECK(contains(o, "ED25519 Public-Key"));
  CHECK(contains(o, "DNS:ed.example, IP Address:0:0:0:0:0:0:0:1") || contains(o, "DNS:ed.example, IP Address:::1"));
  CHECK(contains(o, "CA:FALSE"));
  free(o);
  o = sh("openssl x509 -in edr.crt -noout -text");
  CHECK(contains(o, "Signature Algorithm: sha256WithRSAEncryption"));
  CHECK(contains(o, "ED25519 Public-Key"));
  free(o);
  o = sh("[ \"$(openssl x509 -in edca.crt -noout -pubkey)\" = \"$(openssl pkey -in edk.key -pubout)\" ] && "
         "[ \"$(openssl x509 -in edleaf.crt -noout -pubkey)\" = \"$(openssl pkey -in ed2.key -pubout)\" ] && "
         "[ \"$(openssl x509 -in edself.crt -noout -pubkey)\" = \"$(openssl pkey -in ed2.key -pubout)\" ] && "
         "[ \"$(openssl x509 -in edr.crt -noout -pubkey)\" = \"$(openssl pkey -in ed2.key -pubout)\" ] && echo same");
  CHECK(contains(o, "same"));
  free(o);
  /* P-384 keys sign with ECDSA-SHA384, as Go picks */
  o = sh("openssl ecparam -name secp384r1 -genkey -noout -out p384.key && "
         "openssl ecparam -name secp256k1 -genkey -noout -out k1.key && openssl pkcs8 -topk8 -nocrypt -in k1.key -out k1p8.key && "
         "openssl genpkey -algorithm X25519 -out x25519.key && echo made");
  CHECK(contains(o, "made"));
  free(o);
  char *p384 = slurp("p384.key"), *k1 = slurp("k1.key"), *k1p8 = slurp("k1p8.key"), *x25519 = slurp("x25519.key");
  char *lp384 = golit(p384), *ledk = golit(edk), *led2 = golit(ed2), *ledca = golit(edca);
  char *ledleaf = golit(edleaf), *ledself = golit(edself), *ledr = golit(edr), *lrsaleaf = golit(rsaleaf);
  char *lrca = golit(rca), *lrcak = golit(rcak), *lec2 = golit(ec2), *lk1 = golit(k1), *lk1p8 = golit(k1p8);
  char *lx = golit(x25519), *ldsa = golit(dsa_key);
  buf_t t = BUF_INIT;
  buf_printf(&t, "{{ $c := genSelfSignedCertWithKey \"p384\" nil nil 5 %s }}{{ $c.Cert }}", lp384);
  buf_putc(&t, 0);
  s = render(t.data);
  CHECK(s != NULL);
  if (s) {
    put("p384.crt", s, strlen(s));
    o = sh("openssl verify -CAfile p384.crt p384.crt && openssl x509 -in p384.crt -noout -text");
    CHECK(contains(o, "p384.crt: OK"));
    CHECK(contains(o, "Signature Algorithm: ecdsa-with-SHA384"));
    free(o);
  }
  free(s);
  buf_free(&t);
  /* An empty CN gives an empty subject; the SANs are then critical (as Go writes them) */
  buf_printf(&t, "{{ $e := genCAWithKey \"\" 10 %s }}{{ $s := genSelfSignedCert \"\" nil (list \"only.san\") 3 }}"
             "{{ $e.Cert }}@@{{ $s.Cert }}@@{{ $s.Key }}", ledk);
  buf_putc(&t, 0);
  s = render(t.data);
  CHECK(s != NULL);
  static const char *const enames[] = {"emptyca.crt", "emptyself.crt", "emptyself.key"};
  if (s) split_named(s, enames, 3);
  free(s);
  buf_free(&t);
  o = sh("openssl verify -CAfile emptyca.crt emptyca.crt && openssl verify -CAfile emptyself.crt emptyself.crt && "
         "openssl x509 -in emptyself.crt -noout -text");
  CHECK(contains(o, "emptyca.crt: OK"));
  CHECK(contains(o, "emptyself.crt: OK"));
  CHECK(contains(o, "X509v3 Subject Alternative Name: critical"));
  free(o);
  char *emptyca = slurp("emptyca.crt"), *emptyself = slurp("emptyself.crt"), *emptyselfk = slurp("emptyself.key");
  char *lemptyca = golit(emptyca), *lemptyself = golit(emptyself), *lemptyselfk = golit(emptyselfk);

  /* Against Go: the oracle parses our certificates and keys (x509.ParseCertificate,
   * ParsePKCS8PrivateKey), signs with our Ed25519 CA key and self-signs with our key; the
   * error texts for bad and unusable keys are compared with Go's. */
  enum { NT = 32 };
  char *tpl[NT];
  int nt = 0;
#define TPL(...)                                  \
  do {                                            \
    buf_t b_ = BUF_INIT;                          \
    buf_printf(&b_, __VA_ARGS__);                 \
    buf_putc(&b_, 0);                             \
    tpl[nt++] = b_.data;                          \
  } while (0)
  /* 0: parsing */
  TPL("{{ $a := buildCustomCert (b64enc %s) (b64enc %s) }}{{ $b := buildCustomCert (b64enc %s) (b64enc %s) }}"
      "{{ $c := buildCustomCert (b64enc %s) (b64enc %s) }}{{ $d := buildCustomCert (b64enc %s) (b64enc %s) }}"
      "{{ $e := buildCustomCert (b64enc %s) (b64enc %s) }}{{ $f := buildCustomCert (b64enc %s) (b64enc %s) }}"
      "{{ $g := buildCustomCert (b64enc %s) (b64enc %s) }}parsed",
      ledca, ledk, ledleaf, led2, ledself, led2, ledr, led2, lrsaleaf, ledk, lemptyca, ledk, lemptyself, lemptyselfk);
  /* 1: Go signs a leaf with our CA's Ed25519 key */
  TPL("{{ $ca := buildCustomCert (b64enc %s) (b64enc %s) }}{{ (genSignedCert \"go.leaf\" nil (list \"go.example\") 5 $ca).Cert }}",
      ledca, ledk);
  /* 2: Go self-signs with our key; its .Key is the key Go re-encodes */
  TPL("{{ $s := genSelfSignedCertWithKey \"go.self\" nil nil 5 %s }}{{ $s.Cert }}@@{{ $s.Key }}", ledk);
  int first_err = nt;
  static const char zero[] = "";
  char *kp = pkcs8_pem(OID_ED, 3, "\x05\x00", 2, 0x04, 32, zero, 0); /* 3: Ed25519 with NULL parameters */
  char *lkp = golit(kp);
  TPL("{{ genCAWithKey \"x\" 1 %s }}", lkp);
  char *ks = pkcs8_pem(OID_ED, 3, zero, 0, 0x04, 31, zero, 0); /* 4: 31-byte seed */
  char *lks = golit(ks);
  TPL("{{ genSelfSignedCertWithKey \"x\" nil nil 1 %s }}", lks);
  char *ku = pkcs8_pem("\x2a\x03\x04", 3, zero, 0, 0x04, 32, zero, 0); /* 5: unknown algorithm 1.2.3.4 */
  char *lku = golit(ku);
  TPL("{{ genCAWithKey \"x\" 1 %s }}", lku);
  char *a = retype(rcak, "RSA PRIVATE KEY", "PRIVATE KEY"), *la = golit(a); /* 6: PKCS#1 as PKCS#8 */
  TPL("{{ genCAWithKey \"x\" 1 %s }}", la);
  char *b = retype(ec2, "EC PRIVATE KEY", "PRIVATE KEY"), *lb = golit(b); /* 7: SEC1 as PKCS#8 */
  TPL("{{ genCAWithKey \"x\" 1 %s }}", lb);
  char *c8 = retype(edk, "PRIVATE KEY", "RSA PRIVATE KEY"), *lc8 = golit(c8); /* 8: PKCS#8 as PKCS#1 */
  TPL("{{ genCAWithKey \"x\" 1 %s }}", lc8);
  char *d8 = retype(edk, "PRIVATE KEY", "EC PRIVATE KEY"), *ld8 = golit(d8); /* 9: PKCS#8 as SEC1 */
  TPL("{{ genCAWithKey \"x\" 1 %s }}", ld8);
  char *e1 = retype(ec2, "EC PRIVATE KEY", "RSA PRIVATE KEY"), *le1 = golit(e1); /* 10: SEC1 as PKCS#1 */
  TPL("{{ genCAWithKey \"x\" 1 %s }}", le1);
  char *f1 = retype(rcak, "RSA PRIVATE KEY", "EC PRIVATE KEY"), *lf1 = golit(f1); /* 11: PKCS#1 as SEC1 */
  TPL("{{ genCAWithKey \"x\" 1 %s }}", lf1);
  TPL("{{ genCAWithKey \"x\" 1 %s }}", lk1);   /* 12: secp256k1 */
  TPL("{{ genCAWithKey \"x\" 1 %s }}", lk1p8); /* 13: secp256k1 in PKCS#8 */
  TPL("{{ genCAWithKey \"x\" 1 %s }}", lx);    /* 14: X25519 cannot sign */
  TPL("{{ genCAWithKey \"x\" 1 %s }}", ldsa);  /* 15: DSA cannot sign */
  /* 16: a DSA key cannot be certified */
  TPL("{{ genSignedCertWithKey \"x\" nil nil 1 (buildCustomCert (b64enc %s) (b64enc %s)) %s }}", ledca, ledk, ldsa);
  /* 17, 18: the CA key must be the CA certificate's */
  TPL("{{ genSignedCert \"x\" nil nil 1 (buildCustomCert (b64enc %s) (b64enc %s)) }}", ledca, led2);
  TPL("{{ genSignedCert \"x\" nil nil 1 (buildCustomCert (b64enc %s) (b64enc %s)) }}", lrca, lec2);
  /* 19: the parsing errors of the CA key are reported first, as "error parsing private key" */
  TPL("{{ genSignedCert \"x\" nil nil 1 (buildCustomCert (b64enc %s) (b64enc %s)) }}", ledca, lks);
  /* 20, 21: Sprig parses a given key before the IPs and names */
  TPL("{{ genSelfSignedCertWithKey \"x\" (list \"bad\") nil 1 \"nope\" }}");
  TPL("{{ genSignedCertWithKey \"x\" (list \"bad\") nil 1 (buildCustomCert (b64enc %s) (b64enc %s)) \"nope\" }}", ledca, ledk);
  int first_ok = nt;
  /* 22: DSA and X25519 keys parse (buildCustomCert) */
  TPL("{{ $a := buildCustomCert (b64enc %s) (b64enc %s) }}{{ $b := buildCustomCert (b64enc %s) (b64enc %s) }}ok", ledca,
      ldsa, ledca, lx);
  /* 23: a PKCS#8 Ed25519 key with a trailing public key element parses; .Key is re-encoded */
  char *kt = pkcs8_pem(OID_ED, 3, zero, 0, 0x04, 32, "\x81\x03\x00\x01\x02", 5);
  char *lkt = golit(kt);
  TPL("{{ (genCAWithKey \"x\" 1 %s).Key }}", lkt);
  TPL("{{ (genCAWithKey \"x\" 1 %s).Key }}", ledk); /* 24 */
  char *outs[NT], *errs[NT];
  int orc = oracle((size_t)nt, tpl, outs, errs);
  CHECK(orc == 0);
  if (orc == 0) {
    CHECK_EQ_STR(outs[0], "parsed");
    char *ours = render(tpl[0]);
    CHECK_EQ_STR(ours, "parsed");
    free(ours);
    if (outs[1]) put("goleaf.crt", outs[1], strlen(outs[1]));
    o = sh("openssl verify -CAfile edca.crt goleaf.crt && openssl x509 -in goleaf.crt -noout -text");
    CHECK(contains(o, "goleaf.crt: OK"));
    CHECK(contains(o, "Signature Algorithm: ED25519"));
    free(o);
    char *at = outs[2] ? strstr(outs[2], "@@") : NULL;
    CHECK(at != NULL);
    if (at) {
      put("goself.crt", outs[2], (size_t)(at - outs[2]));
      CHECK_EQ_STR(at + 2, edk);
      o = sh("[ \"$(openssl x509 -in goself.crt -noout -pubkey)\" = \"$(openssl x509 -in edca.crt -noout -pubkey)\" ] && echo same");
      CHECK(contains(o, "same"));
      free(o);
    }
    for (int i = first_err; i < first_ok; i++) {
      char *mine = render_err(tpl[i]);
      CHECK(errs[i] != NULL);
      if (i == 4) {
        CHECK(errs[i] && strstr(errs[i], "x509: invalid Ed25519 private key length: 31"));
      }
      CHECK_EQ_STR(mine, errs[i]);
      free(mine);
    }
    for (int i = first_ok; i < nt; i++) {
      CHECK(errs[i] == NULL);
      char *mine = render(tpl[i]);
      CHECK_EQ_STR(mine, outs[i]);
      free(mine);
    }
    CHECK_EQ_STR(outs[24], edk);
  }
  for (int i = 0; i < nt; i++) {
    free(tpl[i]);
    if (orc == 0) free(outs[i]), free(errs[i]);
  }
#undef TPL
  char *frees[] = {edk, ed2, edca, edleaf, edself, edr, rsaleaf, rca, rcak, ec2, p384, k1, k1p8, x25519,
                   lp384, ledk, led2, ledca, ledleaf, ledself, ledr, lrsaleaf, lrca, lrcak, lec2, lk1, lk1p8, lx, ldsa,
                   kp, lkp, ks, lks, ku, lku, a, la, b, lb, c8, lc8, d8, ld8, e1, le1, f1, lf1, kt, lkt,
                   emptyca, emptyself, emptyselfk, lemptyca, lemptyself, lemptyselfk};
  for (size_t i = 0; i < sizeof frees / sizeof frees[0]; i++) free(frees[i]);
}


int main(void) {
  if (system("command -v openssl >/dev/null 2>&1") != 0) {
    fprintf(stderr, "FAIL: openssl not found: this test verifies certificates with the openssl CLI (tests/deps installs it)\n");
    return 1;
  }
  if (!mkdtemp(dir)) return 1;
  char *s = render("{{ $ca := genCA \"Rudder Test CA\" 365 }}{{ $l := genSignedCert \"svc.ns.svc\" (list \"10.0.0.1\" \"::1\") "
                   "(list \"svc\" \"svc.ns.svc.cluster.local\") 30 $ca }}{{ $s := genSelfSignedCert \"self, with comma\" "
                   "(list \"192.168.1.1\") (list \"a.example\") 10 }}{{ $k := genPrivateKey \"ecdsa\" }}"
                   "{{ $e := genSignedCertWithKey \"ec.leaf\" nil (list \"ec.example\") 5 $ca $k }}"
                   "{{ $ca.Cert }}@@{{ $ca.Key }}@@{{ $l.Cert }}@@{{ $l.Key }}@@{{ $s.Cert }}@@{{ $s.Key }}@@{{ $k }}@@{{ $e.Cert }}");
  CHECK(s != NULL);
  if (!s) return t_done();
  split_store(s);
  free(s);
  char *o;
  o = sh("openssl verify -CAfile ca.crt ca.crt");
  CHECK(contains(o, "ca.crt: OK"));
  free(o);
  o = sh("openssl verify -CAfile ca.crt -purpose sslserver leaf.crt");
  CHECK(contains(o, "leaf.crt: OK"));
  free(o);
  o = sh("openssl verify -CAfile ca.crt -purpose sslclient ecleaf.crt");
  CHECK(contains(o, "ecleaf.crt: OK"));
  free(o);
  o = sh("openssl verify -CAfile self.crt self.crt");
  CHECK(contains(o, "self.crt: OK"));
  free(o);
  o = sh("openssl x509 -in leaf.crt -noout -text");
  CHECK(contains(o, "DNS:svc, DNS:svc.ns.svc.cluster.local, IP Address:10.0.0.1, IP Address:0:0:0:0:0:0:0:1") ||
        contains(o, "DNS:svc, DNS:svc.ns.svc.cluster.local, IP Address:10.0.0.1, IP Address:::1"));
  CHECK(contains(o, "CN = svc.ns.svc") || contains(o, "CN=svc.ns.svc"));
  CHECK(contains(o, "CN = Rudder Test CA") || contains(o, "CN=Rudder Test CA"));
  CHECK(contains(o, "TLS Web Server Authentication, TLS Web Client Authentication"));
  CHECK(contains(o, "Digital Signature, Key Encipherment"));
  CHECK(contains(o, "CA:FALSE"));
  CHECK(contains(o, "Public-Key: (2048 bit)"));
  CHECK(contains(o, "sha256WithRSAEncryption"));
  free(o);
  o = sh("openssl x509 -in ca.crt -noout -text");
  CHECK(contains(o, "CA:TRUE"));
  CHECK(contains(o, "Certificate Sign"));
  free(o);
  o = sh("openssl x509 -in self.crt -noout -subject");
  CHECK(contains(o, "self, with comma"));
  free(o);
  /* validity: ~30 days for the leaf, ~365 for the CA */
  o = sh("openssl x509 -in leaf.crt -noout -checkend 2505600 && ! openssl x509 -in leaf.crt -noout -checkend 2678400 && echo ok30");
  CHECK(contains(o, "ok30"));
  free(o);
  o = sh("openssl x509 -in ca.crt -noout -checkend 31449600 && ! openssl x509 -in ca.crt -noout -checkend 31622400 && echo ok365");
  CHECK(contains(o, "ok365"));
  free(o);
  /* keys match certificates, key types */
  o = sh("[ \"$(openssl x509 -in leaf.crt -noout -pubkey)\" = \"$(openssl pkey -in leaf.key -pubout)\" ] && echo same");
  CHECK(contains(o, "same"));
  free(o);
  o = sh("[ \"$(openssl x509 -in ecleaf.crt -noout -pubkey)\" = \"$(openssl pkey -in ec.key -pubout)\" ] && echo same");
  CHECK(contains(o, "same"));
  free(o);
  o = sh("head -1 leaf.key; head -1 ec.key; openssl pkey -in ec.key -noout -text | grep -m1 'ASN1 OID'");
  CHECK(contains(o, "-----BEGIN RSA PRIVATE KEY-----"));
  CHECK(contains(o, "-----BEGIN EC PRIVATE KEY-----"));
  CHECK(contains(o, "prime256v1"));
  free(o);
  /* genPrivateKey rsa is 4096 bits */
  char *rk = render("{{ genPrivateKey \"rsa\" }}");
  CHECK(rk != NULL);
  if (rk) {
    put("rsa.key", rk, strlen(rk));
    o = sh("openssl rsa -in rsa.key -check -noout -text | grep -m1 'Private-Key'");
    CHECK(contains(o, "4096 bit"));
    free(o);
    free(rk);
  }
  /* genPrivateKey ed25519: PKCS#8 "PRIVATE KEY" holding a seed; OpenSSL derives and checks the key. */
  char *ek = render("{{ genPrivateKey \"ed25519\" }}");
  char *ek2 = render("{{ genPrivateKey \"ed25519\" }}");
  CHECK(ek && ek2 && strcmp(ek, ek2) != 0);
  if (ek) {
    CHECK(strncmp(ek, "-----BEGIN PRIVATE KEY-----\n", 28) == 0);
    CHECK(strlen(ek) == 119); /* 48-byte DER: one 64-column line of base64 */
    put("ed.key", ek, strlen(ek));
    o = sh("openssl pkey -in ed.key -check -noout && openssl pkey -in ed.key -noout -text | head -1 && "
           "openssl pkey -in ed.key -pubout | openssl pkey -pubin -noout -text | head -1");
    CHECK(contains(o, "Key is valid"));
    CHECK(contains(o, "ED25519 Private-Key"));
    CHECK(contains(o, "ED25519 Public-Key"));
    free(o);
  }
  free(ek);
  free(ek2);
  /* genPrivateKey dsa: "DSA PRIVATE KEY" (version, p, q, g, y, x) with L=2048, N=256; OpenSSL checks it. */
  char *dk = render("{{ genPrivateKey \"dsa\" }}");
  CHECK(dk != NULL);
  if (dk) {
    CHECK(strncmp(dk, "-----BEGIN DSA PRIVATE KEY-----\n", 32) == 0);
    put("dsa.key", dk, strlen(dk));
    o = sh("openssl pkey -in dsa.key -check -noout && openssl dsa -in dsa.key -noout -text 2>/dev/null | head -1 && "
           "openssl pkey -in dsa.key -pubcheck -noout && openssl asn1parse -in dsa.key | grep -c INTEGER && "
           "openssl dsa -in dsa.key -noout -text 2>/dev/null | awk '/^Q:/{f=1;next} /^G:/{f=0} f' | tr -d ' :\n' | wc -c");
    CHECK(contains(o, "Key is valid"));
    CHECK(contains(o, "Private-Key: (2048 bit)"));
    CHECK(contains(o, "\n6\n")); /* six INTEGERs: version, p, q, g, y, x */
    CHECK(contains(o, "\n66\n") || contains(o, "\n64\n")); /* q: 256 bits in hex (with a leading 00 when the top bit is set) */
    if (!contains(o, "Key is valid")) fprintf(stderr, "%s\n", o ? o : "");
    free(o);
    /* Sign and verify with the key: p, q, g, x and y are consistent. */
    o = sh("echo hello > msg && openssl pkey -in dsa.key -pubout > dsa.pub && openssl dgst -sha256 -sign dsa.key -out msg.sig msg && "
           "openssl dgst -sha256 -verify dsa.pub -signature msg.sig msg");
    CHECK(contains(o, "Verified OK"));
    free(o);
    o = sh("openssl pkey -in ed.key -pubout > ed.pub && openssl pkeyutl -sign -inkey ed.key -rawin -in msg -out ed.sig && "
           "openssl pkeyutl -verify -pubin -inkey ed.pub -rawin -in msg -sigfile ed.sig");
    CHECK(contains(o, "Signature Verified Successfully"));
    free(o);
  }
  ed25519_checks(dk);
  free(dk);
  /* serials differ between certificates */
  o = sh("[ \"$(openssl x509 -in ca.crt -noout -serial)\" != \"$(openssl x509 -in leaf.crt -noout -serial)\" ] && echo differ");
  CHECK(contains(o, "differ"));
  free(o);
  /* AES round trips and randomised IVs */
  for (int i = 0; i < 20; i++) {
    char *r = render("{{ $a := encryptAES \"pw\" \"some text\" }}{{ $b := encryptAES \"pw\" \"some text\" }}"
                     "{{ ne $a $b }} {{ decryptAES \"pw\" $a }} {{ len ($a | b64dec) }}");
    CHECK_EQ_STR(r, "true some text 32");
    free(r);
  }
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
  return t_done();
}
