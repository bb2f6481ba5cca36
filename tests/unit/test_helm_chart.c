/* Chart loading: hostile archives are refused with a clear message, no crash, no leak. */
#include <stdlib.h>
#include <string.h>

#include "base/gz.h"
#include "helm/chart/chart.h"
#include "helm/template/semver.h"
#include "helm/values/values.h"
#include "t.h"

/* Appends one ustar header + data for name with type. */
static size_t add(unsigned char *buf, size_t off, const char *name, char type, const char *data, size_t len) {
  unsigned char *h = buf + off;
  memset(h, 0, 512);
  strncpy((char *)h, name, 100);
  memcpy(h + 100, "0000644", 7);
  snprintf((char *)h + 124, 12, "%011zo", len);
  h[156] = (unsigned char)type;
  memcpy(h + 257, "ustar\0" "00", 8);
  memset(h + 148, ' ', 8);
  unsigned sum = 0;
  for (int i = 0; i < 512; i++) sum += h[i];
  snprintf((char *)h + 148, 8, "%06o", sum);
  off += 512;
  if (len) memcpy(buf + off, data, len);
  return off + ((len + 511) & ~(size_t)511);
}

static int load(const unsigned char *tar, size_t n, const chart_limits_t *lim, chart_error_t *err) {
  unsigned char *gz;
  size_t gl;
  if (gz_compress(tar, n, -1, &gz, &gl)) return -999;
  chart_t *c = NULL;
  int rc = chart_load_archive(gz, gl, lim, &c, err);
  free(gz);
  chart_free(c);
  return rc;
}

static const char chart_yaml[] = "apiVersion: v2\nname: x\nversion: 1.0.0\n";

int main(void) {
  static unsigned char buf[1 << 20];
  chart_error_t err;
  size_t n;

  n = add(buf, 0, "x/Chart.yaml", '0', chart_yaml, sizeof chart_yaml - 1);
  n = add(buf, n, "x/templates/a.yaml", '0', "a: 1\n", 5);
  memset(buf + n, 0, 1024);
  CHECK_EQ_INT(load(buf, n + 1024, NULL, &err), 0);

  n = add(buf, 0, "x/Chart.yaml", '0', chart_yaml, sizeof chart_yaml - 1);
  n = add(buf, n, "x/../../etc/passwd", '0', "x", 1);
  CHECK_EQ_INT(load(buf, n, NULL, &err), CHART_EINVAL);
  CHECK_EQ_STR(err.message, "chart illegally references parent directory");

  n = add(buf, 0, "x/Chart.yaml", '0', chart_yaml, sizeof chart_yaml - 1);
  n = add(buf, n, "x//etc/passwd", '0', "x", 1);
  CHECK_EQ_INT(load(buf, n, NULL, &err), CHART_EINVAL);
  CHECK_EQ_STR(err.message, "chart illegally contains absolute paths");

  n = add(buf, 0, "x/Chart.yaml", '0', chart_yaml, sizeof chart_yaml - 1);
  n = add(buf, n, "x/templates/link", '2', "", 0);
  CHECK_EQ_INT(load(buf, n, NULL, &err), CHART_EINVAL);
  CHECK(strstr(err.message, "symbolic link") != NULL);

  n = add(buf, 0, "x/Chart.yaml", '0', chart_yaml, sizeof chart_yaml - 1);
  n = add(buf, n, "x/hard", '1', "", 0);
  CHECK_EQ_INT(load(buf, n, NULL, &err), CHART_EINVAL);
  CHECK(strstr(err.message, "hard link") != NULL);

  /* too many files */
  n = add(buf, 0, "x/Chart.yaml", '0', chart_yaml, sizeof chart_yaml - 1);
  for (int i = 0; i < 20; i++) {
    char nm[64];
    snprintf(nm, sizeof nm, "x/f%d", i);
    n = add(buf, n, nm, '0', "z", 1);
  }
  chart_limits_t few = {.max_files = 10};
  CHECK_EQ_INT(load(buf, n, &few, &err), CHART_E2BIG);

  /* a gzip bomb: 64 MiB of zeros in a file, with a 1 MiB limit */
  {
    size_t big = 64u << 20;
    unsigned char *bomb = calloc(1, big + 4096);
    size_t m = add(bomb, 0, "x/Chart.yaml", '0', chart_yaml, sizeof chart_yaml - 1);
    m = add(bomb, m, "x/zeros", '0', NULL, 0);
    /* patch the size of the last header to 'big' and leave the zero data */
    unsigned char *h = bomb + m - 512;
    snprintf((char *)h + 124, 12, "%011zo", big - 8192);
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (int i = 0; i < 512; i++) sum += h[i];
    snprintf((char *)h + 148, 8, "%06o", sum);
    chart_limits_t small = {.max_bytes = 1 << 20};
    CHECK_EQ_INT(load(bomb, big, &small, &err), CHART_E2BIG);
    free(bomb);
  }

  /* corrupt gzip, truncated tar */
  {
    chart_t *c = NULL;
    CHECK_EQ_INT(chart_load_archive("\x1f\x8b\x08garbage", 10, NULL, &c, &err), CHART_EINVAL);
    n = add(buf, 0, "x/Chart.yaml", '0', chart_yaml, sizeof chart_yaml - 1);
    CHECK(load(buf, n - 600, NULL, &err) < 0);
    buf[5] ^= 1; /* bad checksum */
    CHECK_EQ_INT(load(buf, n, NULL, &err), CHART_EINVAL);
  }

  /* validation */
  n = add(buf, 0, "x/Chart.yaml", '0', "apiVersion: v2\nname: x\nversion: nope\n", 37);
  CHECK_EQ_INT(load(buf, n, NULL, &err), CHART_EINVAL);
  CHECK_EQ_STR(err.message, "validation: chart.metadata.version \"nope\" is invalid");

  /* semver */
  CHECK(semver_check(">= 1.25.0-0", strlen(">= 1.25.0-0"), "v1.37.0", strlen("v1.37.0")) == 1);
  CHECK(semver_check(">=1.40.0-0", strlen(">=1.40.0-0"), "v1.37.0", strlen("v1.37.0")) == 0);
  CHECK(semver_check("~2.1.0", strlen("~2.1.0"), "2.1.3", strlen("2.1.3")) == 1);
  CHECK(semver_check("~2.1.0", strlen("~2.1.0"), "2.2.0", strlen("2.2.0")) == 0);
  CHECK(semver_check("^1.2", strlen("^1.2"), "1.9.0", strlen("1.9.0")) == 1);
  CHECK(semver_check("1.x.x", strlen("1.x.x"), "1.2.0", strlen("1.2.0")) == 1);
  CHECK(semver_check("1.x", strlen("1.x"), "2.0.0", strlen("2.0.0")) == 0);
  CHECK(semver_check("<1.0 || >=3", strlen("<1.0 || >=3"), "3.1.0", strlen("3.1.0")) == 1);
  CHECK_EQ_INT(semver_check("", 0, "1.0.0", 5), -1);
  CHECK_EQ_INT(semver_check(">= 1", 4, "nope", 4), -1);
  CHECK(semver_valid("v1.2", 4));
  CHECK(!semver_valid("1.2.3.4", 7));

  /* strvals */
  cJSON *v = cJSON_CreateObject();
  char e[256];
  CHECK_EQ_INT(values_parse_set("a.b=1,c[1]=x,d={p,q}", VALUES_SET, v, NULL, NULL, e, sizeof e), 0);
  char *s = cJSON_PrintUnformatted(v);
  CHECK_EQ_STR(s, "{\"a\":{\"b\":1},\"c\":[null,\"x\"],\"d\":[\"p\",\"q\"]}");
  free(s);
  CHECK(values_parse_set("a", VALUES_SET, v, NULL, NULL, e, sizeof e) != 0);
  CHECK_EQ_STR(e, "key \"a\" has no value");
  cJSON_Delete(v);
  return t_done();
}
