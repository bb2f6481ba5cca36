/* Property tests of Sprig's certificate, key and AES functions (random
 * outputs the oracle cannot compare): OpenSSL parses and verifies the chain,
 * SANs, validity and key types; keys match their certificates; AES round
 * trips (decrypting Go's ciphertexts is in the oracle corpus, fn_crypto). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helm/template/helm_funcs.h"
#include "helm/template/sprig.h"
#include "helm/template/tpl.h"
#include "t.h"

static char *render(const char *text) {
  tpl_funcs_t *f = tpl_funcs_new();
  tpl_helm_funcs_add(f);
  sprig_funcs_add(f);
  tpl_set_t *set = tpl_set_new(f);
  buf_t out = BUF_INIT, err = BUF_INIT;
  tpl_arena_t *a = tpl_arena_new(0);
  char *res = NULL;
  if (tpl_set_parse(set, "t", text, strlen(text), &err) == 0) {
    tpl_exec_opts_t o = {0};
    tpl_helm_state_t *hs = calloc(1, sizeof(*hs));
    o.udata = hs;
    o.missingkey = TPL_MISSINGKEY_ZERO;
    if (tpl_set_execute(set, "t", tpl_value_map_new(a, TPL_ELEM_ANY), a, &o, &out, &err) == 0)
      res = strdup(out.data ? out.data : "");
    free(hs);
  }
  if (!res) fprintf(stderr, "render %s: %s\n", text, err.data ? err.data : "?");
  buf_free(&out);
  buf_free(&err);
  tpl_arena_free(a);
  tpl_set_free(set);
  tpl_funcs_free(f);
  return res;
}

static char dir[] = "/tmp/rudder-crypto-XXXXXX";

static void put(const char *name, const char *s, size_t n) {
  char p[256];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  if (!f) return;
  fwrite(s, 1, n, f);
  fclose(f);
}

/* Runs a shell command in dir; returns its stdout (malloc'd) or NULL when it failed. */
static char *sh(const char *cmd) {
  char full[1024];
  snprintf(full, sizeof full, "cd %s && %s 2>&1", dir, cmd);
  FILE *p = popen(full, "r");
  if (!p) return NULL;
  buf_t b = BUF_INIT;
  char tmp[4096];
  size_t k;
  while ((k = fread(tmp, 1, sizeof tmp, p)) > 0) buf_append(&b, tmp, k);
  int st = pclose(p);
  buf_putc(&b, 0);
  if (st != 0) {
    fprintf(stderr, "command failed: %s\n%s\n", cmd, b.data);
    buf_free(&b);
    return NULL;
  }
  return b.data;
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
    free(dk);
  }
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
