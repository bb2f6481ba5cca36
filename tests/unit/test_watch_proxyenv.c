/* NO_PROXY matching, proxy values and redirect Location resolution against Go's own code (the
 * oracle in tests/oracle/httpproxy: golang.org/x/net/http/httpproxy and net/url): a table of
 * NO_PROXY entries crossed with request URLs, combinations of entries, proxy values, and RFC 3986's
 * reference examples, asked of both. The oracle's path comes from RUDDER_HTTPPROXY_ORACLE; without
 * it the test fails, saying how to build it. Also checks watch_url_parse on its own. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <uv.h>

#include "base/b64.h"
#include "base/buf.h"
#include "watch/proxyenv.h"
#include "watch/url.h"
#include "tests/oracle/release/run.h"
#include "t.h"

static const char *oracle(void) {
  const char *p = getenv("RUDDER_HTTPPROXY_ORACLE");
  struct stat st;
  if (!p || !*p || stat(p, &st) != 0 || !(st.st_mode & S_IXUSR)) {
    fprintf(stderr, "MISSING ORACLE: RUDDER_HTTPPROXY_ORACLE is %s. Build the proxy oracle with\n"
                    "  export RUDDER_HTTPPROXY_ORACLE=$(tests/oracle/httpproxy/build)\n"
                    "(needs Go and the Go module proxy; it caches under ~/.cache/rudder/oracle).\n",
            p && *p ? "not an executable file" : "not set");
    return NULL;
  }
  return p;
}

static const char *const entries[] = {
    "", "*", "foo.com", ".foo.com", "*.foo.com", "FOO.com", " foo.com ", "foo.com:8080", ".foo.com:443",
    "oo.com", "bar.foo.com", "localhost", "example.com.", "10.0.0.0/8", "10.1.2.3", "10.1.2.3:8080",
    "10.1.2.3:", "192.168.0.0/16", "192.168.1.1/32", "0.0.0.0/0", "::/0", "2001:db8::/32", "2001:db8::1",
    "[2001:db8::1]:443", "[2001:db8::1]", "::ffff:10.0.0.0/104", "::ffff:10.1.2.3", "::ffff:1.2.3.4/24",
    "10.0.0.0/08", "10.0.0.0/33", "10.0.0.0/", "1.2.3", "01.2.3.4", ":80", "[::1]:80", "*.", ".", "a.b.c.d.e",
    "com", "foo.com:abc", "[foo.com]:80", "foo..com", "*foo.com", "**", "fe80::1%eth0", "1.2.3.4/24"};

static const char *const urls[] = {
    "http://foo.com/", "https://foo.com/", "http://bar.foo.com/x", "https://bar.foo.com:8080/",
    "http://foo.com:8080/", "https://foo.com:443/", "http://xfoo.com/", "http://FOO.COM/", "http://localhost/",
    "http://LOCALHOST:8080/", "http://localhost.:80/", "http://127.0.0.1/", "http://127.9.9.9:8080/",
    "http://[::1]/", "http://[::ffff:127.0.0.1]/", "http://10.1.2.3/", "http://10.1.2.3:8080/",
    "https://10.200.1.1/", "http://192.168.1.1/", "http://192.168.2.1/", "http://[2001:db8::1]/",
    "https://[2001:db8::1]:443/", "http://[2001:db8:1::5]/", "http://[::ffff:10.1.2.3]/", "http://1.2.3.4/",
    "http://example.com./", "http://example.com/", "http://a.b.c.d.e/", "http://x.a.b.c.d.e/", "http://com/",
    "http://foo..com/", "http://[fe80::1%25eth0]/", "http://vm/", "https://registry-1.docker.io/v2/"};

static const char *const proxies[] = {
    "http://proxy:3128", "proxy:3128", "localhost:3128", "127.0.0.1:3128", "http://user:pass@proxy:3128",
    "user:pass@proxy:3128", "http://us%40er:p%3Ass@proxy", "https://proxy", "socks5://proxy", "http://[::1]:3128",
    "[::1]:3128", "HTTP://Proxy:80", "http://proxy:3128/path?q=1", "http://proxy:abc", "http://:3128", "//proxy",
    "proxy", "http://user@proxy", "http://user:@proxy", "%zz", "http://pro%zzxy", "ftp://proxy:21", "http:proxy",
    "::1", "http://proxy#frag"};

static const char *const bases[] = {"http://a/b/c/d;p?q", "https://h:8443/x/y/", "http://h"};
static const char *const refs[] = {
    "g:h", "g", "./g", "g/", "/g", "//g", "?y", "g?y", "#s", "g#s", "g?y#s", ";x", "g;x", "g;x?y#s", "", ".",
    "./", "..", "../", "../g", "../..", "../../", "../../g", "../../../g", "../../../../g", "/./g", "/../g", "g.",
    ".g", "g..", "..g", "./../g", "./g/.", "g/./h", "g/../h", "g;x=1/./y", "g;x=1/../y", "g?y/./x", "g?y/../x",
    "http:g", "https://other:1/p?q", "//other/p", "/a b", "/%41"};

static char *line(char **p) {
  char *s = *p, *e = strchr(s, '\n');
  if (!e) return NULL;
  *e = 0;
  *p = e + 1;
  return s;
}

static void ours_use(const char *np, const char *url, buf_t *o) {
  watch_url_t u;
  const char *why;
  if (watch_url_parse(url, &u, &why)) {
    buf_puts(o, "ERR\n");
    return;
  }
  watch_proxy_env_t e;
  watch_proxy_env_init(&e, "http://proxy:1", "http://proxy:1", np, false);
  const char *err;
  const watch_proxy_url_t *p = watch_proxy_env_for(&e, !strcmp(u.scheme, "https"), u.hostname, u.port, &err);
  buf_puts(o, err ? "ERR\n" : p ? "proxy\n" : "direct\n");
  watch_proxy_env_free(&e);
  watch_url_free(&u);
}

static void ours_proxy(const char *v, buf_t *o) {
  watch_proxy_env_t e;
  watch_proxy_env_init(&e, NULL, v, NULL, false);
  const char *err;
  const watch_proxy_url_t *p = watch_proxy_env_for(&e, true, "example.com", 443, &err);
  if (!p) {
    buf_puts(o, "none\n");
  } else {
    char *up = NULL;
    if (p->auth) {
      unsigned char *d;
      size_t n;
      char e2[64];
      if (!b64_decode_alloc(p->auth + 6, strlen(p->auth + 6), &d, &n, e2, sizeof e2)) up = (char *)d;
    }
    buf_printf(o, "%s %s %d %s\n", p->scheme, p->host, p->port, up ? up : "-");
    free(up);
  }
  watch_proxy_env_free(&e);
}

static void ours_resolve(const char *base, const char *ref, buf_t *o) {
  char *out;
  const char *why;
  if (watch_url_resolve(base, ref, &out, &why)) {
    buf_puts(o, "ERR\n");
    return;
  }
  buf_printf(o, "%s\n", out);
  free(out);
}

static void url_checks(void) {
  watch_url_t u;
  const char *why;
  CHECK_EQ_INT(watch_url_parse("https://user:p%40ss@Example.COM:8443/a%20b/c d?x=1&tok=s3cret#frag", &u, &why), 0);
  CHECK_EQ_STR(u.user, "user");
  CHECK_EQ_STR(u.pass, "p@ss");
  CHECK_EQ_STR(u.host, "example.com");
  CHECK_EQ_STR(u.hostname, "Example.COM");
  CHECK_EQ_INT(u.port, 8443);
  CHECK_EQ_STR(u.authority, "Example.COM:8443");
  CHECK_EQ_STR(u.target, "/a%20b/c%20d?x=1&tok=s3cret");
  CHECK_EQ_STR(u.clean, "https://Example.COM:8443/a%20b/c%20d?x=1&tok=s3cret");
  CHECK_EQ_STR(u.shown, "https://Example.COM:8443/a%20b/c%20d?x=xxxxx&tok=xxxxx");
  watch_url_free(&u);
  CHECK_EQ_INT(watch_url_parse("http://[::1]/", &u, &why), 0);
  CHECK_EQ_STR(u.host, "::1");
  CHECK_EQ_INT(u.port, 80);
  CHECK_EQ_STR(u.target, "/");
  watch_url_free(&u);
  CHECK_EQ_INT(watch_url_parse("ftp://x/", &u, &why), UV_EINVAL);
  CHECK_EQ_INT(watch_url_parse("/relative", &u, &why), UV_EINVAL);
  CHECK_EQ_INT(watch_url_parse("http:///nohost", &u, &why), UV_EINVAL);
  CHECK_EQ_INT(watch_url_parse("http://h:99999/", &u, &why), UV_EINVAL);
  CHECK_EQ_INT(watch_url_parse("http://h/\r\nX: y", &u, &why), UV_EINVAL);
  CHECK_EQ_INT(watch_url_parse("http://h\xc3\xa9.com/", &u, &why), UV_EINVAL);
}

int main(void) {
  url_checks();
  /* Loopback is never proxied, NO_PROXY or not (Go's rule, which the brief of this module once
   * doubted): checked here without the oracle too. */
  watch_proxy_env_t e;
  watch_proxy_env_init(&e, "http://p:1", "http://p:1", "", false);
  CHECK(!watch_proxy_env_use(&e, "localhost", 80));
  CHECK(!watch_proxy_env_use(&e, "127.0.0.1", 80));
  CHECK(!watch_proxy_env_use(&e, "::1", 80));
  CHECK(watch_proxy_env_use(&e, "LOCALHOST", 80));
  CHECK(watch_proxy_env_use(&e, "example.com", 80));
  watch_proxy_env_free(&e);

  const char *orc = oracle();
  if (!orc) return 1;
  buf_t q = BUF_INIT, ours = BUF_INIT;
  size_t ne = sizeof entries / sizeof *entries, nu = sizeof urls / sizeof *urls;
  for (size_t i = 0; i < ne; i++)
    for (size_t j = 0; j < nu; j++) {
      buf_printf(&q, "use\t%s\t%s\n", entries[i], urls[j]);
      ours_use(entries[i], urls[j], &ours);
    }
  /* Lists of several entries, with spaces and empty items. */
  uint64_t rng = 0x9e3779b97f4a7c15ull;
  for (int k = 0; k < 400; k++) {
    buf_t np = BUF_INIT;
    int n = 1 + (int)(rng % 4);
    for (int x = 0; x < n; x++) {
      rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
      if (x) buf_puts(&np, rng & 1 ? "," : " , ");
      buf_puts(&np, entries[1 + rng % (ne - 1)]);
    }
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    const char *url = urls[rng % nu];
    buf_printf(&q, "use\t%s\t%s\n", np.data, url);
    ours_use(np.data, url, &ours);
    buf_free(&np);
  }
  for (size_t i = 0; i < sizeof proxies / sizeof *proxies; i++) {
    buf_printf(&q, "proxy\t%s\n", proxies[i]);
    ours_proxy(proxies[i], &ours);
  }
  for (size_t i = 0; i < sizeof bases / sizeof *bases; i++)
    for (size_t j = 0; j < sizeof refs / sizeof *refs; j++) {
      buf_printf(&q, "resolve\t%s\t%s\n", bases[i], refs[j]);
      ours_resolve(bases[i], refs[j], &ours);
    }
  char *got = NULL;
  size_t gl = 0;
  CHECK_EQ_INT(oracle_run(orc, "", q.data, q.len, &got, &gl), 0);
  char *pq = q.data, *po = ours.data, *pg = got ? got : (char *)"";
  int mismatches = 0, n = 0;
  for (char *lq; (lq = line(&pq));) {
    char *lo = line(&po), *lg = line(&pg);
    n++;
    if (!lo || !lg || strcmp(lo, lg)) {
      if (mismatches++ < 40) fprintf(stderr, "differs from Go: %s\n  ours: %s\n  Go:   %s\n", lq, lo ? lo : "", lg ? lg : "");
    }
  }
  printf("%d questions, %d answered differently from Go\n", n, mismatches);
  CHECK_EQ_INT(mismatches, 0);
  free(got);
  buf_free(&q);
  buf_free(&ours);
  return t_done();
}
