/* Repository index benchmark: stream-parses an index.yaml from a file in 64 KiB reads (as it
 * would arrive from the network), keeping 3 charts, and prints `name value unit` lines: parse
 * time, throughput, peak RSS before and after, the parser's own look-ahead buffer, what was
 * kept, and the version a constraint picks for each kept chart.
 *   index_bench INDEX.yaml [chart...]    (default charts: chart-0007 chart-0400 chart-0700) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "helm/source/index.h"

static long vm_kib(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  size_t kl = strlen(key);
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, key, kl) && line[kl] == ':') v = atol(line + kl + 1);
  if (f) fclose(f);
  return v;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: index_bench INDEX.yaml [chart...]\n");
    return 2;
  }
  static const char *const def[] = {"chart-0007", "chart-0400", "chart-0700"};
  const char *const *names = argc > 2 ? (const char *const *)argv + 2 : def;
  size_t nn = argc > 2 ? (size_t)argc - 2 : 3;
  int fd = open(argv[1], O_RDONLY);
  if (fd < 0) {
    perror(argv[1]);
    return 1;
  }
  long rss0 = vm_kib("VmHWM");
  index_parser_t *p;
  index_limits_t lim = {0};
  if (index_parser_new(names, nn, &lim, &p)) return 1;
  static char chunk[64 << 10];
  char err[512];
  double t0 = now();
  ssize_t r;
  int rc = 0;
  while (!rc && (r = read(fd, chunk, sizeof chunk)) > 0) rc = index_parser_feed(p, chunk, (size_t)r, err, sizeof err);
  if (!rc) rc = index_parser_finish(p, err, sizeof err);
  double t1 = now();
  close(fd);
  if (rc) {
    fprintf(stderr, "index_bench: %s\n", err);
    return 1;
  }
  index_counts_t c = index_parser_counts(p);
  long rss1 = vm_kib("VmHWM");
  printf("index_bytes %zu B\n", c.bytes);
  printf("index_charts %zu charts\n", c.charts);
  printf("index_versions %zu versions\n", c.versions);
  printf("kept_versions %zu versions\n", c.kept);
  printf("parse_time %.1f ms\n", (t1 - t0) * 1e3);
  printf("parse_throughput %.1f MB/s\n", (double)c.bytes / (t1 - t0) / 1e6);
  printf("peak_rss_before %ld KiB\n", rss0);
  printf("peak_rss_after %ld KiB\n", rss1);
  printf("peak_rss_added %ld KiB\n", rss1 - rss0);
  printf("lookahead_buffer_peak %zu B\n", index_parser_peak_buffered(p));
  for (size_t i = 0; i < nn; i++) {
    const index_chart_t *ch = index_parser_chart(p, names[i]);
    const index_version_t *v;
    if (index_chart_select(ch, "", &v, err, sizeof err) == 0)
      printf("chosen_%s %s version\n", names[i], v->version);
    else
      printf("chosen_%s none (%s)\n", names[i], err);
  }
  index_parser_free(p);
  return 0;
}
