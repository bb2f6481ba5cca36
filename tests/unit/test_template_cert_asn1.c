/* Certificates and keys of Sprig's functions compared with Go's (the template oracle, real
 * text/template + Sprig + crypto/x509), structure for structure: every DER element of the
 * certificate (tag, length, content) and of the key is walked and printed, masking only what
 * is random on either side: serials, signatures, validity times, and the key bits and key
 * identifiers of keys that were generated. Given keys and given CAs (the same PEMs on both
 * sides) leave the key bits, Subject Key Identifier and Authority Key Identifier compared as
 * they are; the validity's length is compared to the second, the serial checked for Go's size.
 * Every function, for every argument shape: CNs in and out of PrintableString's alphabet,
 * empty and several IPs and DNS names, days in UTCTime and GeneralizedTime years and past
 * Go's Duration range, RSA/ECDSA/Ed25519 keys in each PEM form, CAs with and without a key
 * identifier, genPrivateKey of every type. Needs Go (the oracle) and openssl (fixed keys). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/b64.h"
#include "t.h"
#include "t_oracle.h"
#include "t_render.h"

static char dir[] = "/tmp/rudder-certasn1-XXXXXX";

/* The DER of the first PEM block in s (malloc'd) and its type, NULL when there is none. */
static unsigned char *pem_der(const char *s, size_t *n, char *type, size_t tcap) {
  const char *b = s ? strstr(s, "-----BEGIN ") : NULL;
  if (!b) return NULL;
  const char *te = strstr(b + 11, "-----");
  if (!te || (size_t)(te - b - 11) >= tcap) return NULL;
  memcpy(type, b + 11, (size_t)(te - b - 11));
  type[te - b - 11] = 0;
  const char *e = strstr(te + 5, "-----END ");
  if (!e) return NULL;
  buf_t t = BUF_INIT;
  for (const char *q = te + 5; q < e; q++)
    if (*q != '\n' && *q != '\r') buf_putc(&t, *q);
  unsigned char *der = NULL;
  char em[64];
  int rc = b64_decode_alloc(t.data ? t.data : "", t.len, &der, n, em, sizeof em);
  buf_free(&t);
  return rc ? NULL : der;
}

/* pem.EncodeToMemory's layout: every base64 line 64 columns but the last, one block, a final newline. */
static bool pem_layout_ok(const char *s) {
  const char *p = strchr(s, '\n');
  if (strncmp(s, "-----BEGIN ", 11) || !p) return false;
  for (p++;;) {
    const char *nl = strchr(p, '\n');
    if (!nl) return false;
    if (!strncmp(p, "-----END ", 9)) return nl[1] == 0;
    const char *next = nl + 1;
    if (nl - p > 64 || (nl - p < 64 && strncmp(next, "-----END ", 9))) return false;
    p = next;
  }
}

typedef struct {
  bool cert;            /* walking a certificate (otherwise a private key) */
  bool key_random;      /* the certified key was generated: its bits and the SKI are masked */
  bool ca_random;       /* the signing CA was generated: the AKI is masked */
  char ext_oid[64];     /* the extension being walked */
  long long times[2];   /* notBefore, notAfter (Unix seconds) */
  int ntimes;
  size_t serial_len;
  bool serial_ok, bad;
} walk_t;

/* ASN.1 time as Unix seconds (UTCTime YYMMDDHHMMSSZ, GeneralizedTime YYYYMMDDHHMMSSZ). */
static long long asn1_time(const unsigned char *p, size_t n, bool utc) {
  char s[32];
  if (n >= sizeof s) return 0;
  memcpy(s, p, n);
  s[n] = 0;
  struct tm tm = {0};
  int y;
  if (utc) {
    if (n != 13 || sscanf(s, "%2d%2d%2d%2d%2d%2d", &y, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
      return 0;
    y += y < 50 ? 2000 : 1900;
  } else if (n != 15 ||
             sscanf(s, "%4d%2d%2d%2d%2d%2d", &y, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6) {
    return 0;
  }
  tm.tm_year = y - 1900;
  tm.tm_mon -= 1;
  return (long long)timegm(&tm);
}

static void oid_text(const unsigned char *p, size_t n, char *out, size_t cap) {
  size_t o = 0;
  unsigned long long v = 0;
  out[0] = 0;
  for (size_t i = 0; i < n; i++) {
    v = (v << 7) | (p[i] & 0x7f);
    if (p[i] & 0x80) continue;
    if (o == 0) o += (size_t)snprintf(out, cap, "%llu.%llu", v < 80 ? v / 40 : 2, v < 80 ? v % 40 : v - 80);
    else if (o < cap) o += (size_t)snprintf(out + o, cap - o, ".%llu", v);
    v = 0;
  }
}

static void hex(buf_t *o, const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++) buf_printf(o, "%02x", p[i]);
}

static size_t bitlen(const unsigned char *p, size_t n) {
  while (n && !*p) p++, n--;
  if (!n) return 0;
  size_t b = n * 8;
  for (unsigned char c = p[0]; !(c & 0x80); c <<= 1) b--;
  return b;
}

/* Prints the elements of p[0..n) one a line (indented by depth, prefixed by their index path),
 * descending into constructed elements and into extension values. */
static void walk(walk_t *w, const unsigned char *p, size_t n, const char *path, int depth, buf_t *o) {
  for (size_t i = 0, idx = 0; i < n; idx++) {
    unsigned char tag = p[i++];
    if ((tag & 0x1f) == 0x1f || i >= n) {
      buf_printf(o, "%s: bad tag\n", path), w->bad = true;
      return;
    }
    size_t len = p[i++];
    if (len & 0x80) {
      size_t k = len & 0x7f;
      if (!k || k > 3 || i + k > n || !p[i] || (k == 1 && p[i] < 0x80)) {
        buf_printf(o, "%s: bad length\n", path), w->bad = true;
        return;
      }
      for (len = 0; k--;) len = len << 8 | p[i++];
    }
    if (len > n - i) {
      buf_printf(o, "%s: length past the end\n", path), w->bad = true;
      return;
    }
    const unsigned char *c = p + i;
    i += len;
    char me[128];
    snprintf(me, sizeof me, "%s%s%zu", path, *path ? "." : "", idx);
    buf_printf(o, "%*s%s ", depth * 2, "", me);
    if (tag & 0x20) {
      buf_printf(o, "cons %02x\n", tag);
      walk(w, c, len, me, depth + 1, o);
      continue;
    }
    bool cert = w->cert;
    /* the positions of Certificate (RFC 5280 4.1) that hold random values */
    if (cert && !strcmp(me, "0.0.1")) {
      w->serial_len = len;
      w->serial_ok = tag == 0x02 && len >= 1 && len <= 17 && !(c[0] & 0x80) && !(len > 1 && !c[0] && !(c[1] & 0x80));
      buf_printf(o, "INTEGER <serial>\n");
      continue;
    }
    if (cert && (!strcmp(me, "0.0.4.0") || !strcmp(me, "0.0.4.1"))) {
      if (w->ntimes < 2) w->times[w->ntimes++] = asn1_time(c, len, tag == 0x17);
      buf_printf(o, "%s <time>\n", tag == 0x17 ? "UTCTime" : tag == 0x18 ? "GeneralizedTime" : "?");
      continue;
    }
    if (cert && !strcmp(me, "0.2")) {
      buf_printf(o, "%02x <signature>\n", tag);
      continue;
    }
    if (cert && w->key_random && !strcmp(me, "0.0.6.1")) {
      buf_printf(o, "BIT STRING len %zu <generated key>\n", len);
      continue;
    }
    /* an extension is 0.0.7.0.K: its OID names it, its OCTET STRING value is DER, walked */
    int dots = 0;
    for (const char *q = me; *q; q++) dots += *q == '.';
    bool in_ext = cert && !strncmp(me, "0.0.7.0.", 8);
    if (in_ext && dots == 5 && tag == 0x04) {
      buf_printf(o, "OCTET STRING (extension %s)\n", w->ext_oid);
      walk(w, c, len, me, depth + 1, o);
      continue;
    }
    bool in_ski = in_ext && dots > 5 && !strcmp(w->ext_oid, "2.5.29.14");
    bool in_aki = in_ext && dots > 5 && !strcmp(w->ext_oid, "2.5.29.35");
    if ((in_ski && w->key_random) || (in_aki && w->ca_random)) {
      buf_printf(o, "%02x len %zu <key identifier of a generated key>\n", tag, len);
      continue;
    }
    switch (tag) {
    case 0x01: buf_printf(o, "BOOLEAN %02x\n", len ? c[0] : 0); break;
    case 0x02:
      if (!cert && len > 3) {
        /* private key numbers: only the sizes of the first two (RSA n, DSA p and q) are fixed */
        if (!strcmp(me, "0.1") || !strcmp(me, "0.2")) buf_printf(o, "INTEGER <%zu bits>\n", bitlen(c, len));
        else buf_printf(o, "INTEGER <private>\n");
        break;
      }
      buf_puts(o, "INTEGER "), hex(o, c, len), buf_putc(o, '\n');
      break;
    case 0x03:
    case 0x04:
      if (!cert) {
        buf_printf(o, "%s len %zu <key bytes>\n", tag == 3 ? "BIT STRING" : "OCTET STRING", len);
        break;
      }
      buf_printf(o, "%s ", tag == 3 ? "BIT STRING" : "OCTET STRING"), hex(o, c, len), buf_putc(o, '\n');
      break;
    case 0x05: buf_printf(o, "NULL len %zu\n", len); break;
    case 0x06: {
      char t[64];
      oid_text(c, len, t, sizeof t);
      buf_printf(o, "OID %s\n", t);
      /* the OID that starts an extension names it for its value */
      if (in_ext && dots == 5 && idx == 0) snprintf(w->ext_oid, sizeof w->ext_oid, "%s", t);
      break;
    }
    case 0x0c: case 0x13: case 0x16: case 0x82:
      buf_printf(o, "%s \"%.*s\"\n", tag == 0x0c ? "UTF8String" : tag == 0x13 ? "PrintableString" : tag == 0x16 ? "IA5String" : "[2] dNSName",
                 (int)len, (const char *)c);
      break;
    default: buf_printf(o, "%02x ", tag), hex(o, c, len), buf_putc(o, '\n');
    }
  }
}

/* The structure dump of a PEM block (its type first); bad set when it is not DER. */
static char *dump(const char *pem, walk_t *w) {
  char type[64];
  size_t n;
  unsigned char *der = pem_der(pem, &n, type, sizeof type);
  buf_t o = BUF_INIT;
  if (!der) {
    w->bad = true;
    buf_puts(&o, "no PEM block\n");
  } else {
    buf_printf(&o, "PEM %s%s\n", type, pem_layout_ok(pem) ? "" : " (not pem.Encode's layout)");
    walk(w, der, n, "", 0, &o);
  }
  free(der);
  buf_putc(&o, 0);
  return o.data;
}

/* Reports the lines where two dumps differ (the two dumps having the same layout up to there). */
static void check_same(const char *what, const char *mine, const char *go) {
  CHECK(!strcmp(mine, go));
  if (!strcmp(mine, go)) return;
  fprintf(stderr, "%s differs from Go's:\n", what);
  const char *a = mine, *b = go;
  for (int shown = 0; (*a || *b) && shown < 8;) {
    size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
    if (la != lb || memcmp(a, b, la)) {
      fprintf(stderr, "  rudder: %.*s\n  go:     %.*s\n", (int)la, a, (int)lb, b);
      shown++;
    }
    a += la + (a[la] == '\n'), b += lb + (b[lb] == '\n');
  }
}

/* ---- the cases ------------------------------------------------------------------------ */

enum { MAXC = 256 };
static char *tpl[MAXC];
static bool key_given[MAXC], ca_given[MAXC], is_key[MAXC];
static int ncases;

/* A case: expr makes a certificate (or with is_key set, a key); kg: the certified key is given;
 * cg: the signing CA is given (or there is none). */
static void add(bool kg, bool cg, bool key, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void add(bool kg, bool cg, bool key, const char *fmt, ...) {
  if (ncases >= MAXC) {
    CHECK(!"too many cases");
    return;
  }
  buf_t e = BUF_INIT, b = BUF_INIT;
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(&e, fmt, ap);
  va_end(ap);
  if (key) buf_printf(&b, "{{ %s }}", e.data);
  else buf_printf(&b, "{{ $c := %s }}{{ $c.Cert }}@@{{ $c.Key }}", e.data);
  buf_putc(&b, 0);
  buf_free(&e);
  key_given[ncases] = kg, ca_given[ncases] = cg, is_key[ncases] = key;
  tpl[ncases++] = b.data;
}

/* Compares one case's certificate (and key) from rudder with Go's. */
static void compare_cert(int i, char *mine, char *go, long long t0, long long t1) {
  char *mk = strstr(mine, "@@"), *gk = strstr(go, "@@");
  CHECK(mk && gk);
  if (!mk || !gk) return;
  *mk = 0, *gk = 0, mk += 2, gk += 2;
  walk_t wm = {.cert = true, .key_random = !key_given[i], .ca_random = !ca_given[i]};
  walk_t wg = wm;
  char *dm = dump(mine, &wm), *dg = dump(go, &wg);
  check_same(tpl[i], dm, dg);
  CHECK(!wm.bad && !wg.bad);
  CHECK(wm.serial_ok && wg.serial_ok);
  /* validity: both start now, and last as long as each other to the second */
  CHECK(wm.ntimes == 2 && wg.ntimes == 2);
  if (wm.ntimes == 2 && wg.ntimes == 2) {
    CHECK(wm.times[0] >= t0 - 1 && wm.times[0] <= t1 + 1);
    CHECK(wg.times[0] >= t0 - 1 && wg.times[0] <= t1 + 1);
    long long dm_ = wm.times[1] - wm.times[0], dg_ = wg.times[1] - wg.times[0];
    if (llabs(dm_ - dg_) > 1) fprintf(stderr, "case %d: %s: validity %lld s, Go's %lld s\n", i, tpl[i], dm_, dg_);
    CHECK(llabs(dm_ - dg_) <= 1);
  }
  free(dm), free(dg);
  if (key_given[i]) {
    CHECK_EQ_STR(mk, gk); /* the given key, as Sprig re-encodes it */
  } else {
    walk_t km = {0}, kg = {0};
    char *a = dump(mk, &km), *b = dump(gk, &kg);
    check_same("the generated key", a, b);
    free(a), free(b);
  }
}

int main(void) {
  if (system("command -v openssl >/dev/null 2>&1") != 0) {
    fprintf(stderr, "FAIL: openssl not found: it makes this test's fixed keys (tests/deps installs it)\n");
    return 1;
  }
  if (!mkdtemp(dir)) return 1;
  char *o = t_sh(dir, "openssl genrsa -traditional -out rsa1.key 2048 2>/dev/null && openssl genrsa -out rsa8.key 2048 2>/dev/null && "
                      "openssl ecparam -name prime256v1 -genkey -noout -out p256.key && "
                      "openssl ecparam -name secp384r1 -genkey -noout -out p384s.key && openssl pkcs8 -topk8 -nocrypt -in p384s.key -out p384.key && "
                      "openssl ecparam -name secp521r1 -genkey -noout -out p521.key && "
                      "openssl ecparam -name secp224r1 -genkey -noout -out p224.key && "
                      "openssl genpkey -algorithm ed25519 -out ed.key && "
                      "printf '[req]\\ndistinguished_name=dn\\n[dn]\\n' > min.cnf && "
                      "openssl req -x509 -new -key rsa1.key -subj /CN=plain -days 5 -config min.cnf -out plain.crt && echo made");
  CHECK(o && strstr(o, "made"));
  free(o);
  static const char *const kn[] = {"rsa1.key", "rsa8.key", "p256.key", "p384.key", "p521.key", "p224.key", "ed.key"};
  enum { NK = sizeof kn / sizeof kn[0] };
  char *keys[NK];
  for (int k = 0; k < NK; k++) {
    char *s = t_slurp(dir, kn[k]);
    keys[k] = t_golit(s);
    free(s);
  }
  char *plain = t_slurp(dir, "plain.crt"), *plaink = t_slurp(dir, "rsa1.key");

  /* Fixed CAs, made by Go once and given to both sides through buildCustomCert. */
  static const char *const can[] = {"Fixed RSA CA", "Fixed EC CA", "Fixed Ed CA", "Fixed CA *", ""};
  static const int cak[] = {0, 2, 6, 3, 6};
  enum { NCA = 5 };
  char *catpl[NCA], *caout[NCA], *caerr[NCA], *ca[NCA + 1];
  for (int k = 0; k < NCA; k++) {
    buf_t b = BUF_INIT;
    buf_printf(&b, "{{ $c := genCAWithKey \"%s\" 30 %s }}{{ $c.Cert | b64enc }}@@{{ $c.Key | b64enc }}", can[k], keys[cak[k]]);
    buf_putc(&b, 0);
    catpl[k] = b.data;
  }
  int rc = t_oracle_run(dir, NCA, catpl, caout, caerr);
  CHECK(rc == 0);
  if (rc) return t_done();
  for (int k = 0; k < NCA; k++) {
    char *at = caout[k] ? strstr(caout[k], "@@") : NULL;
    CHECK(at != NULL);
    if (!at) return t_done();
    *at = 0;
    buf_t b = BUF_INIT;
    buf_printf(&b, "(buildCustomCert \"%s\" \"%s\")", caout[k], at + 2);
    buf_putc(&b, 0);
    ca[k] = b.data;
  }
  {
    /* a version 1 CA without extensions (openssl's): no Authority Key Identifier under it */
    char *c64, *k64;
    size_t l;
    b64_encode_alloc(plain, strlen(plain), &c64, &l);
    b64_encode_alloc(plaink, strlen(plaink), &k64, &l);
    buf_t b = BUF_INIT;
    buf_printf(&b, "(buildCustomCert \"%s\" \"%s\")", c64, k64);
    buf_putc(&b, 0);
    ca[NCA] = b.data;
    free(c64), free(k64);
  }

  /* CNs: PrintableString's whole alphabet; characters outside it (each alone); non-ASCII; empty */
  static const char *const cns[] = {"ca",        "Az09 '()+,-./:=?", "*.wild.example", "a&b", "x@y", "under_score",
                                    "semi;colon", "h\\u00e9llo w\\u00f6rld", "tab\\there", "",  "quote\\\"s",
                                    "lt<gt>", "excl!", "hash#", "tilde~", "pct%"};
  for (size_t k = 0; k < sizeof cns / sizeof cns[0]; k++) add(false, true, false, "genCA \"%s\" 365", cns[k]);
  /* days: UTCTime and GeneralizedTime years, the past, zero, and beyond Go's Duration (which wraps) */
  static const long long days[] = {0, 1, -1, 9131, 9132, 36500, -7305, -30000, 106751, 106752, 200000, -200000, 1000000};
  for (size_t k = 0; k < sizeof days / sizeof days[0]; k++) add(false, true, false, "genCA \"days\" %lld", days[k]);
  for (int k = 0; k < NK; k++) {
    add(true, true, false, "genCAWithKey \"with key\" 30 %s", keys[k]);
    add(true, true, false, "genCAWithKey \"\" 30 %s", keys[k]);
    add(true, true, false, "genSelfSignedCertWithKey \"self key\" (list \"10.0.0.1\") (list \"a.example\") 10 %s", keys[k]);
    for (int c = 0; c <= NCA; c++)
      add(true, true, false, "genSignedCertWithKey \"leaf\" (list \"::1\") (list \"l.example\") 10 %s %s", ca[c], keys[k]);
  }
  /* IPs and DNS names: none, empty lists, one, several, IPv4-mapped IPv6; empty CN makes the SAN critical */
  static const char *const sans[] = {"nil nil", "(list) (list)", "(list \"10.1.2.3\") nil", "nil (list \"one.example\")",
                                     "(list \"10.1.2.3\" \"::1\" \"::ffff:192.0.2.1\" \"2001:db8::7\") (list \"a\" \"b.example\" \"*.c.example\")",
                                     "(list \"0.0.0.0\") (list \"\")"};
  for (size_t k = 0; k < sizeof sans / sizeof sans[0]; k++) {
    add(false, true, false, "genSelfSignedCert \"self\" %s 30", sans[k]);
    add(false, true, false, "genSelfSignedCert \"\" %s 30", sans[k]);
    add(true, true, false, "genSelfSignedCertWithKey \"h\\u00e9\" %s 30 %s", sans[k], keys[2]);
    add(false, true, false, "genSignedCert \"signed\" %s 30 %s", sans[k], ca[0]);
    add(false, true, false, "genSignedCert \"\" %s 30 %s", sans[k], ca[2]);
    add(true, true, false, "genSignedCertWithKey \"signed key\" %s 30 %s %s", sans[k], ca[1], keys[6]);
  }
  for (int c = 0; c <= NCA; c++) {
    add(false, true, false, "genSignedCert \"under %d\" nil (list \"u.example\") 7 %s", c, ca[c]);
    /* the leaf named as its CA: the same subject, so no Authority Key Identifier */
    add(false, true, false, "genSignedCert \"%s\" nil nil 7 %s", c < NCA ? can[c] : "plain", ca[c]);
  }
  for (size_t k = 0; k < sizeof cns / sizeof cns[0]; k++) add(false, true, false, "genSelfSignedCert \"%s\" nil nil 5", cns[k]);
  for (size_t k = 0; k < 4; k++) add(false, true, false, "genSignedCert \"%s\" nil nil 5 %s", cns[k], ca[3]);
  /* CAs made in the template itself */
  add(false, false, false, "genSignedCert \"fresh\" nil (list \"f.example\") 3 (genCA \"fresh ca\" 3)");
  add(true, false, false, "genSignedCertWithKey \"fresh\" nil nil 3 (genCA \"fresh ca\" 3) %s", keys[4]);
  add(false, false, false, "genSignedCert \"fresh\" nil nil 3 (genCAWithKey \"fresh ca\" 3 (genPrivateKey \"ecdsa\"))");
  /* genPrivateKey of every type */
  static const char *const kt[] = {"rsa", "", "ecdsa", "ed25519", "dsa"};
  for (size_t k = 0; k < sizeof kt / sizeof kt[0]; k++) add(false, true, true, "genPrivateKey \"%s\"", kt[k]);
  /* errors: a CN that is not UTF-8 */
  add(false, true, false, "genCA \"\\xff\" 1");
  add(true, true, false, "genSelfSignedCertWithKey \"a\\xc3\" nil nil 1 %s", keys[6]);
  add(false, true, false, "genSignedCert \"\\xe2\\x82\" nil nil 1 %s", ca[0]);

  char *gout[MAXC], *gerr[MAXC];
  long long t0 = (long long)time(NULL);
  rc = t_oracle_run(dir, (size_t)ncases, tpl, gout, gerr);
  CHECK(rc == 0);
  if (rc) return t_done();
  for (int i = 0; i < ncases; i++) {
    char *mine = gerr[i] ? NULL : t_render_text(tpl[i], 0);
    long long t1 = (long long)time(NULL);
    if (gerr[i]) {
      char *me = t_render_text(tpl[i], 1);
      if (!me || strcmp(me, gerr[i])) fprintf(stderr, "case %d: %s\n", i, tpl[i]);
      CHECK_EQ_STR(me, gerr[i]);
      free(me);
    } else if (!mine) {
      fprintf(stderr, "case %d: %s: rudder failed where Go rendered\n", i, tpl[i]);
      CHECK(mine != NULL);
    } else if (is_key[i]) {
      walk_t wm = {0}, wg = {0};
      char *a = dump(mine, &wm), *b = dump(gout[i], &wg);
      check_same(tpl[i], a, b);
      CHECK(!wm.bad && !wg.bad);
      free(a), free(b);
    } else {
      compare_cert(i, mine, gout[i], t0, t1);
    }
    free(mine);
    free(gout[i]), free(gerr[i]), free(tpl[i]);
  }
  printf("%d cases compared with Go\n", ncases);
  for (int k = 0; k < NK; k++) free(keys[k]);
  for (int k = 0; k < NCA; k++) free(catpl[k]), free(caout[k]), free(caerr[k]);
  for (int k = 0; k <= NCA; k++) free(ca[k]);
  free(plain), free(plaink);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return t_done();
}
