#define _GNU_SOURCE
#include "loop/template_cmd.h"
#include "loop/cli.h"
#include <errno.h>
#include <stdarg.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <fcntl.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/cjpool.h"
#include "base/yaml.h"
#include "helm/source/schema_http.h"
#include "helm/values/schema.h"
#include "helm/chart/chart.h"
#include "helm/render/render.h"
#include "helm/values/values.h"
#include "helm/template/tpl.h"
#include "helm/template/unicode.h"

typedef struct strv_s {
  const char **v;
  size_t n;
} strv_t;

static int strv_push(strv_t *s, const char *x) {
  const char **nv = realloc(s->v, (s->n + 1) * sizeof *nv);
  if (!nv) return -1;
  s->v = nv;
  s->v[s->n++] = x;
  return 0;
}

static int read_file(const char *path, char **data, size_t *len) {
  FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
  if (!f) return -errno;
  buf_t b = BUF_INIT;
  /* A regular file is read straight into a buffer of its size (a 7 MB values file would otherwise
   * sit in 8 MiB, after a copy); anything else, or a file that grew, in pieces. */
  struct stat st;
  size_t want = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size : 0;
  if (want && buf_reserve(&b, want)) {
    if (f != stdin) fclose(f);
    return -ENOMEM;
  }
  while (want && b.len < want) {
    size_t r = fread(b.data + b.len, 1, want - b.len, f);
    if (!r) break;
    b.len += r;
  }
  char tmp[65536];
  size_t r;
  while ((r = fread(tmp, 1, sizeof tmp, f)) > 0)
    if (buf_append(&b, tmp, r)) {
      if (f != stdin) fclose(f);
      buf_free(&b);
      return -ENOMEM;
    }
  if (b.data) b.data[b.len] = 0;
  if (f != stdin) fclose(f);
  if (buf_reserve(&b, 0)) return -ENOMEM;
  *len = b.len;
  *data = buf_steal(&b);
  return 0;
}

/* Values files of megabytes become tens of megabytes of nodes and values, and about a fifth of
 * the time went to page faults: the heap is then made large once (untouched pages cost nothing)
 * and marked for transparent huge pages, a fault per 2 MiB instead of per 4 KiB; big blocks come
 * from it too. Small inputs keep 4 KiB pages, whose resident size is tighter. */
static void big_values_heap(size_t file_size) {
  static bool done;
  if (done) return;
  done = true;
  size_t want = file_size > ((size_t)64 << 20) ? ((size_t)2 << 30) : file_size * 32;
  if (want < ((size_t)64 << 20)) want = (size_t)64 << 20;
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, INT32_MAX); /* the grown heap stays */
  mallopt(M_TOP_PAD, 16 << 20);
  void *p = malloc(want);
  if (!p) return;
  uintptr_t start = ((uintptr_t)p + ((2u << 20) - 1)) & ~(uintptr_t)((2u << 20) - 1);
  free(p);
  uintptr_t end = (uintptr_t)sbrk(0);
  /* from the heap (sbrk moved past it): mark it; else it was an mmap, now gone, and nothing is */
  if (end > start && end - start >= want / 2) madvise((void *)start, end - start, MADV_HUGEPAGE);
}

/* A values file mapped instead of read when it is a regular file of some size (no copy, and its
 * pages are the page cache's): NUL-terminated like read_file's text (the map ends in zero pages). 0,
 * or -errno; *map (the mapping to unmap, and its size) is 0 when the file was read instead. */
static int map_file(const char *path, char **data, size_t *len, size_t *map) {
  *map = 0;
  int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : -1;
  struct stat st;
  if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < (off_t)(1 << 20)) {
    if (fd >= 0) close(fd);
    return read_file(path, data, len);
  }
  size_t n = (size_t)st.st_size, page = (size_t)sysconf(_SC_PAGESIZE);
  big_values_heap(n);
  size_t total = (n + 1 + page - 1) / page * page;
  /* zero pages for the whole length, the file mapped over their start */
  void *base = mmap(NULL, total, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED || mmap(base, n, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) {
    if (base != MAP_FAILED) munmap(base, total);
    close(fd);
    return read_file(path, data, len);
  }
  close(fd);
  *data = base;
  *len = n;
  *map = total;
  return 0;
}

/* Templates of the chart and its subcharts, and their bytes. */
static void count_templates(const chart_t *c, size_t *n, size_t *bytes) {
  *n += c->ntemplates;
  for (size_t i = 0; i < c->ntemplates; i++) *bytes += c->templates[i].len;
  for (size_t i = 0; i < c->ndeps; i++) count_templates(c->deps[i], n, bytes);
}

/* A mapped values file's pages behind the parse (yaml_set_consumed_hook): given back, so that the
 * text and the tree made from it are not both whole in memory at the end of the parse. */
typedef struct {
  char *base;
  size_t dropped;
} drop_ctx_t;

static void drop_consumed(void *ctx, const char *upto) {
  drop_ctx_t *d = ctx;
  if (upto < d->base) return;
  size_t page = (size_t)sysconf(_SC_PAGESIZE), off = (size_t)(upto - d->base) / page * page;
  if (off > d->dropped && madvise(d->base + d->dropped, off - d->dropped, MADV_DONTNEED) == 0) d->dropped = off;
}

static int set_file_reader(void *ud, const char *name, char **data, size_t *len, char *err, size_t errlen) {
  int r = read_file(name, data, len);
  if (r) snprintf(err, errlen, "open %s: %s", name, strerror(-r));
  return r;
}

/* The output as pieces of text that stay where they are (rendered documents, literals). */
typedef struct outv_s {
  struct {
    const char *p;
    size_t n;
  } *v;
  size_t n, cap;
  bool oom;
} outv_t;

static void outv_add(outv_t *o, const char *p, size_t n) {
  if (o->n == o->cap) {
    size_t nc = o->cap ? o->cap * 2 : 64;
    void *nv = realloc(o->v, nc * sizeof *o->v);
    if (!nv) {
      o->oom = true;
      return;
    }
    o->v = nv;
    o->cap = nc;
  }
  o->v[o->n].p = p;
  o->v[o->n++].n = n;
}

/* "---\n# Source: PATH\nCONTENT\n" */
static void outv_doc(outv_t *o, const char *path, const char *content) {
  outv_add(o, "---\n# Source: ", 14);
  outv_add(o, path, strlen(path));
  outv_add(o, "\n", 1);
  outv_add(o, content, strlen(content));
  outv_add(o, "\n", 1);
}

/* strings.TrimSpace over the pieces: Unicode spaces (unicode.IsSpace) cut at both ends. A piece
 * never splits a character (pieces are whole documents or ASCII literals). */
static void outv_trim_space(outv_t *o) {
  size_t first = 0;
  while (first < o->n) {
    size_t sz;
    while (o->v[first].n && yaml_utf8_is_space(o->v[first].p, o->v[first].n, &sz)) o->v[first].p += sz, o->v[first].n -= sz;
    if (o->v[first].n) break;
    first++;
  }
  if (first) {
    memmove(o->v, o->v + first, (o->n - first) * sizeof *o->v);
    o->n -= first;
  }
  while (o->n) {
    const char *p = o->v[o->n - 1].p;
    size_t n = o->v[o->n - 1].n;
    while (n) {
      /* the last character, found as utf8.DecodeLastRuneInString finds it (invalid: not a space) */
      size_t st = n - 1, sz;
      if ((unsigned char)p[st] >= 0x80) {
        size_t lim = n >= 4 ? n - 4 : 0;
        while (st > lim && ((unsigned char)p[st] & 0xC0) == 0x80) st--;
      }
      if (!yaml_utf8_is_space(p + st, n - st, &sz) || sz != n - st) break;
      n = st;
    }
    o->v[o->n - 1].n = n;
    if (n) break;
    o->n--;
  }
}

/* Appends a value as slog's text handler writes it: quoted by strconv.Quote when its needsQuoting
 * says so (empty, a space, '=', '"', a control or non-printable character, invalid UTF-8). */
static void slog_value(buf_t *q, const char *e, size_t n) {
  bool quote = n == 0;
  for (size_t i = 0; i < n && !quote;) {
    unsigned char b = (unsigned char)e[i];
    if (b < 0x80) {
      quote = b == ' ' || b == '=' || b == '"' || b < 0x20 || b == 0x7F;
      i++;
      continue;
    }
    /* one UTF-8 sequence; an invalid one is quoted */
    int len = b >= 0xF0 && b < 0xF8 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 && b < 0xE0 ? 2 : 0;
    int32_t r = len == 4 ? b & 0x07 : len == 3 ? b & 0x0F : b & 0x1F;
    if (!len || i + (size_t)len > n) {
      quote = true;
      break;
    }
    for (int k = 1; k < len; k++) {
      unsigned char cb = (unsigned char)e[i + (size_t)k];
      if ((cb & 0xC0) != 0x80) quote = true;
      r = (r << 6) | (cb & 0x3F);
    }
    if ((len == 3 && (r < 0x800 || (r >= 0xD800 && r <= 0xDFFF))) || (len == 4 && (r < 0x10000 || r > 0x10FFFF)))
      quote = true;
    if (!quote) quote = tpl_unicode_is_space(r) || !tpl_unicode_is_print(r);
    i += (size_t)len;
  }
  if (quote) tpl_fmt_quote(q, e, n);
  else buf_append(q, e, n);
}

/* Helm logs a failed dependency processing through slog's text handler (level=ERROR) before
 * returning the error. */
static void log_dep_error(const char *msg) {
  static const char prefix[] = "chart dependencies processing failed: ";
  if (strncmp(msg, prefix, sizeof prefix - 1)) return;
  const char *e = msg + sizeof prefix - 1;
  buf_t q = BUF_INIT;
  slog_value(&q, e, strlen(e));
  fprintf(stderr, "level=ERROR msg=\"chart dependencies processing failed\" error=%s\n", q.data ? q.data : "");
  buf_free(&q);
}

/* Helm's warnings (render_opts_t.warn) as its slog text handler prints them on stderr. */
static void log_warning(void *ctx, const char *level, const char *msg) {
  (void)ctx;
  buf_t q = BUF_INIT;
  slog_value(&q, msg, strlen(msg));
  fprintf(stderr, "level=%s msg=%s\n", level, q.data ? q.data : "");
  buf_free(&q);
}

/* A warning of the schema's reference resolution, with its one attribute, as slog prints it. */
static void schema_warning(void *ctx, const char *msg, const char *key, const char *value) {
  (void)ctx;
  buf_t q = BUF_INIT, v = BUF_INIT;
  slog_value(&q, msg, strlen(msg));
  slog_value(&v, value, strlen(value));
  fprintf(stderr, "level=WARN msg=%s %s=%s\n", q.data ? q.data : "", key, v.data ? v.data : "");
  buf_free(&q);
  buf_free(&v);
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("Error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return 1;
}

static int mkdirs(const char *path) {
  char *p = strdup(path);
  if (!p) return -1;
  for (char *s = p + 1; *s; s++) {
    if (*s != '/') continue;
    *s = 0;
    mkdir(p, 0755);
    *s = '/';
  }
  free(p);
  return 0;
}

/* writeToFile: "---\n# Source: name\ndata\n", appending when the file was written before in this run. */
static int write_out(const char *dir, const char *name, const char *data, strv_t *written) {
  char *path = NULL;
  if (asprintf(&path, "%s/%s", dir, name) < 0) return -1;
  int append = 0;
  for (size_t i = 0; i < written->n; i++)
    if (!strcmp(written->v[i], path)) append = 1;
  mkdirs(path);
  FILE *f = fopen(path, append ? "a" : "w");
  if (!f) {
    fail("open %s: %s", path, strerror(errno));
    free(path);
    return -1;
  }
  fprintf(f, "---\n# Source: %s\n%s\n", name, data);
  fclose(f);
  printf("wrote %s\n", path);
  if (!append) strv_push(written, path);
  else free(path);
  return 0;
}

static const char *flag_value(int argc, char **argv, int *i, const char *name, const char *shortn) {
  const char *a = argv[*i];
  size_t nl = strlen(name);
  if (!strncmp(a, name, nl) && a[nl] == '=') return a + nl + 1;
  if (!strcmp(a, name) || (shortn && !strcmp(a, shortn))) {
    if (*i + 1 >= argc) return NULL;
    return argv[++*i];
  }
  if (shortn && !strncmp(a, shortn, strlen(shortn)) && a[strlen(shortn)]) return a + strlen(shortn);
  return NULL;
}

static const char template_cmd__usage[] =
  "Render chart templates locally and print the result, as `helm template` does.\n"
  "\n"
  "Usage:\n"
  "  rudder template [NAME] CHART [flags]\n"
  "\n"
  "CHART is a chart directory or a packaged chart (.tgz). Flags (with Helm's meanings):\n"
  "  -f, --values FILE       values file (repeatable, comma-separated)\n"
  "      --set K=V           set values (also --set-string, --set-json, --set-file, --set-literal)\n"
  "  -n, --namespace NS      release namespace (default \"default\")\n"
  "      --kube-version V    Kubernetes version for Capabilities.KubeVersion\n"
  "  -a, --api-versions V    extra API versions for Capabilities.APIVersions (repeatable)\n"
  "      --include-crds      include CRDs in the output\n"
  "      --skip-crds         leave CRDs out\n"
  "  -s, --show-only PATH    only the manifests rendered from these templates (repeatable)\n"
  "      --is-upgrade        set .Release.IsUpgrade instead of .Release.IsInstall\n"
  "      --no-hooks          leave hooks out\n"
  "      --skip-tests        leave test hooks out\n"
  "      --release-name      use the release name in --output-dir paths\n"
  "      --output-dir DIR    write each template to a file under DIR instead of standard output\n"
  "\n"
  "Budgets of one render (rudder's own; exceeding one fails the render with\n"
  "\"render budget exceeded: ... (limit --max-render-...) at FILE:LINE\"):\n"
  "      --max-render-memory SIZE  memory the render may hold: template values, what templates\n"
  "                                build, values files' alias expansion (default 256Mi)\n"
  "      --max-render-output SIZE  bytes of rendered text, all templates together (default 64Mi)\n"
  "      --max-render-time TIME    wall time of the render (default 30s)\n"
  "  SIZE is bytes with an optional Ki, Mi or Gi suffix; TIME a number with ms, s or m.\n";


int template_cmd_main(int argc, char **argv) {
  cjpool_install(); /* a one-shot command: cJSON's many small blocks from a pool (base/cjpool.h) */
  yaml_intern_keys(); /* and values' keys kept once (base/yaml.h) */
  /* the output is written in pieces (document heads, documents): a big buffer makes few writes */
  static char outbuf[1 << 16];
  setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
  for (int i = 0; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(template_cmd__usage, stdout);
      return 0;
    }
  strv_t pos = {0}, files = {0}, sets = {0}, set_strings = {0}, set_jsons = {0}, set_files = {0}, set_literals = {0},
         apis = {0}, show = {0}, written = {0};
  const char *ns = "default", *kube_version = NULL, *output_dir = NULL;
  int include_crds = 0, skip_crds = 0, skip_tests = 0, no_hooks = 0, is_upgrade = 0, use_release_name = 0;
  render_limits_t limits = {0};
  int rc = 1;
  char *api_buf = NULL;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i], *v;
    if (a[0] != '-' || !strcmp(a, "-")) {
      strv_push(&pos, a);
      continue;
    }
#define VAL(name, shortn) ((v = flag_value(argc, argv, &i, name, shortn)) != NULL)
    if (VAL("--values", "-f")) {
      /* a comma-separated list is allowed (StringSlice) */
      char *copy = strdup(v), *save = NULL;
      for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) strv_push(&files, strdup(t));
      free(copy);
    } else if (VAL("--set-string", NULL)) strv_push(&set_strings, v);
    else if (VAL("--set-json", NULL)) strv_push(&set_jsons, v);
    else if (VAL("--set-file", NULL)) strv_push(&set_files, v);
    else if (VAL("--set-literal", NULL)) strv_push(&set_literals, v);
    else if (VAL("--set", NULL)) strv_push(&sets, v);
    else if (VAL("--namespace", "-n")) ns = v;
    else if (VAL("--kube-version", NULL)) kube_version = v;
    else if (VAL("--api-versions", "-a")) {
      char *copy = strdup(v), *save = NULL;
      for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) strv_push(&apis, strdup(t));
      free(copy);
    } else if (VAL("--show-only", "-s")) strv_push(&show, v);
    else if (VAL("--output-dir", NULL)) output_dir = v;
    else if (VAL("--max-render-memory", NULL)) {
      if (cli_parse_size(v, &limits.max_memory)) {
        fail("invalid argument \"%s\" for \"--max-render-memory\" flag: a size such as 256Mi", v);
        goto out;
      }
    } else if (VAL("--max-render-output", NULL)) {
      if (cli_parse_size(v, &limits.max_output)) {
        fail("invalid argument \"%s\" for \"--max-render-output\" flag: a size such as 64Mi", v);
        goto out;
      }
    } else if (VAL("--max-render-time", NULL)) {
      if (cli_parse_ms(v, &limits.max_time_ms)) {
        fail("invalid argument \"%s\" for \"--max-render-time\" flag: a time such as 30s or 200ms", v);
        goto out;
      }
    }
    else if (!strcmp(a, "--include-crds")) include_crds = 1;
    else if (!strcmp(a, "--skip-crds")) skip_crds = 1;
    else if (!strcmp(a, "--skip-tests")) skip_tests = 1;
    else if (!strcmp(a, "--no-hooks")) no_hooks = 1;
    else if (!strcmp(a, "--is-upgrade")) is_upgrade = 1;
    else if (!strcmp(a, "--release-name")) use_release_name = 1;
    else if (!strcmp(a, "--dry-run") || !strncmp(a, "--dry-run=", 10) || !strcmp(a, "--debug")) {
    } else {
      fail("unknown flag: %s", a);
      goto out;
    }
#undef VAL
  }
  (void)skip_crds;
  (void)api_buf;
  if (pos.n < 1) {
    fail("\"helm template\" requires at least 1 argument\n\nUsage:  helm template [NAME] [CHART] [flags]");
    goto out;
  }
  if (pos.n > 2) {
    fail("expected at most two arguments, unexpected arguments: %s", pos.v[2]);
    goto out;
  }
  const char *name = pos.n == 2 ? pos.v[0] : "release-name";
  const char *chart_path = pos.n == 2 ? pos.v[1] : pos.v[0];
  if (kube_version) {
    /* validated by the render options below; Helm checks it first */
    render_opts_t probe = {.kube_version = kube_version};
    (void)probe;
  }
  /* values: -f, --set-json, --set, --set-string, --set-file, --set-literal */
  cJSON *vals = cJSON_CreateObject();
  bool big_values = false; /* a values file of 1 MiB or more (map_file mapped it) */
  char msg[1024];
  for (size_t i = 0; i < files.n; i++) {
    char *data;
    size_t len, map;
    int r = map_file(files.v[i], &data, &len, &map);
    if (r) {
      fail("open %s: %s", files.v[i], strerror(-r));
      cJSON_Delete(vals);
      goto out;
    }
    cJSON *cur = NULL;
    drop_ctx_t drop = {data, 0};
    if (map) yaml_set_consumed_hook(drop_consumed, &drop);
    r = values_parse_yaml(data, len, &cur, msg, sizeof msg);
    yaml_set_consumed_hook(NULL, NULL);
    if (map) {
      big_values = true;
      munmap(data, map);
    } else {
      free(data);
    }
    if (r) {
      fail("failed to parse %s: %s", files.v[i], msg);
      cJSON_Delete(vals);
      goto out;
    }
    values_merge_maps_take(vals, cur); /* moves, does not copy */
  }
  for (size_t i = 0; i < set_jsons.n; i++) {
    const char *v = set_jsons.v[i];
    while (*v == ' ' || *v == '\t' || *v == '\n') v++;
    if (*v == '{') {
      cJSON *j = cJSON_Parse(v);
      if (!j || !cJSON_IsObject(j)) {
        cJSON_Delete(j);
        fail("failed parsing --set-json data JSON: %s", set_jsons.v[i]);
        cJSON_Delete(vals);
        goto out;
      }
      values_merge_maps(vals, j);
      cJSON_Delete(j);
    } else if (values_parse_set(set_jsons.v[i], VALUES_SET_JSON, vals, NULL, NULL, msg, sizeof msg)) {
      fail("failed parsing --set-json data %s", set_jsons.v[i]);
      cJSON_Delete(vals);
      goto out;
    }
  }
  struct {
    strv_t *l;
    values_set_kind_t k;
    const char *what;
  } groups[] = {{&sets, VALUES_SET, "--set"},
                {&set_strings, VALUES_SET_STRING, "--set-string"},
                {&set_files, VALUES_SET_FILE, "--set-file"},
                {&set_literals, VALUES_SET_LITERAL, "--set-literal"}};
  for (size_t g = 0; g < 4; g++)
    for (size_t i = 0; i < groups[g].l->n; i++)
      if (values_parse_set(groups[g].l->v[i], groups[g].k, vals, set_file_reader, NULL, msg, sizeof msg)) {
        fail("failed parsing %s data: %s", groups[g].what, msg);
        cJSON_Delete(vals);
        goto out;
      }
  chart_t *c = NULL;
  chart_error_t cerr;
  if (chart_load_path(chart_path, NULL, &c, &cerr)) {
    fail("%s", cerr.message);
    cJSON_Delete(vals);
    goto out;
  }
  /* A helper thread parses templates, sorts manifests and encodes halves of big lists beside
   * rendering (the same output). Starting it costs about a millisecond: it is used for many
   * templates or big values. RUDDER_TEMPLATE_HELPER=0 never uses it, =1 always (tests). */
  const char *helper = getenv("RUDDER_TEMPLATE_HELPER");
  size_t ntpl = 0, tpl_bytes = 0;
  count_templates(c, &ntpl, &tpl_bytes);
  bool worth = helper && *helper ? strcmp(helper, "0") != 0
                                 : big_values || ntpl >= 24 || tpl_bytes >= ((size_t)256 << 10);
  /* a values.schema.json's http(s) references load as helm loads them (file:// are the chart's) */
  static const schema_loader_t schema_net = {schema_http_load, NULL, schema_warning};
  render_opts_t ro = {.release_name = name, .namespace = ns, .is_upgrade = is_upgrade, .kube_version = kube_version,
                      .api_versions = apis.v, .napi_versions = apis.n, .helper_thread = worth, .limits = limits,
                      .warn = log_warning, .schema_loader = &schema_net};
  render_output_t o;
  buf_t err = BUF_INIT;
  int r = render_template_take(c, vals, &ro, &o, &err); /* consumes vals */
  chart_free(c);
  if (r) {
    log_dep_error(err.data ? err.data : "");
    fail("%s", err.data ? err.data : "");
    buf_free(&err);
    goto out;
  }
  buf_free(&err);
  /* rel.Manifest: CRDs (--include-crds) then manifests; written to files with --output-dir. The
   * output is a list of pieces pointing into the rendered documents: written as they are, or
   * joined once for --show-only. */
  outv_t ov = {0};
  const char *outdir = output_dir;
  char *reldir = NULL;
  if (output_dir && use_release_name && asprintf(&reldir, "%s/%s", output_dir, name) >= 0) outdir = reldir;
  if (include_crds)
    for (size_t i = 0; i < o.ncrds; i++) {
      if (output_dir) write_out(output_dir, o.crds[i].path, o.crds[i].content, &written);
      else outv_doc(&ov, o.crds[i].path, o.crds[i].content);
    }
  for (size_t i = 0; i < o.nmanifests; i++) {
    if (output_dir) write_out(outdir, o.manifests[i].path, o.manifests[i].content, &written);
    else outv_doc(&ov, o.manifests[i].path, o.manifests[i].content);
  }
  /* fmt.Fprintln(&manifests, strings.TrimSpace(rel.Manifest)) */
  outv_trim_space(&ov);
  outv_add(&ov, "\n", 1);
  if (!no_hooks)
    for (size_t i = 0; i < o.nhooks; i++) {
      if (skip_tests && o.hooks[i].is_test) continue;
      if (output_dir) write_out(outdir, o.hooks[i].path, o.hooks[i].content, &written);
      else outv_doc(&ov, o.hooks[i].path, o.hooks[i].content);
    }
  if (ov.oom) {
    free(reldir);
    free(ov.v);
    render_output_free(&o);
    fail("out of memory");
    goto out;
  }
  buf_t all = BUF_INIT;
  if (show.n)
    for (size_t i = 0; i < ov.n; i++) buf_append(&all, ov.v[i].p, ov.v[i].n);
  free(reldir);
  if (show.n) {
    /* SplitManifests of the whole output, then "# Source: <chart>/(path)" matched with filepath.Match */
    yaml_span_t *spans = NULL;
    size_t nspans = 0;
    yaml_split_manifests(all.data, all.len, &spans, &nspans);
    buf_t sel = BUF_INIT;
    int missing_any = 0;
    const char *missing = NULL;
    for (size_t s = 0; s < show.n && !missing_any; s++) {
      int missing_this = 1;
      for (size_t k = 0; k < nspans; k++) {
        const char *d = all.data + spans[k].offset;
        size_t dl = spans[k].len;
        const char *src = memmem(d, dl, "# Source: ", 10);
        if (!src) continue;
        const char *p = src + 10, *e = d + dl;
        const char *slash = p;
        while (slash < e && *slash != '/' && *slash != '\n') slash++;
        if (slash >= e || *slash != '/' || slash == p) continue;
        const char *le = slash + 1;
        while (le < e && *le != '\n') le++;
        char *path = strndup(slash + 1, (size_t)(le - slash - 1));
        if (!path) continue;
        int m = fnmatch(show.v[s], path, FNM_PATHNAME) == 0;
        free(path);
        if (!m) continue;
        buf_printf(&sel, "---\n%.*s\n", (int)dl, d);
        missing_this = 0;
      }
      if (missing_this) {
        missing_any = 1;
        missing = show.v[s];
      }
    }
    free(spans);
    if (missing_any) {
      fail("could not find template %s in chart", missing);
      buf_free(&sel);
      buf_free(&all);
      free(ov.v);
      render_output_free(&o);
      goto out;
    }
    fwrite(sel.data ? sel.data : "", 1, sel.len, stdout);
    buf_free(&sel);
  } else {
    for (size_t i = 0; i < ov.n; i++) fwrite(ov.v[i].p, 1, ov.v[i].n, stdout);
  }
  buf_free(&all);
  free(ov.v);
  render_output_free(&o);
  rc = 0;
out:
  for (size_t i = 0; i < files.n; i++) free((char *)files.v[i]);
  for (size_t i = 0; i < apis.n; i++) free((char *)apis.v[i]);
  for (size_t i = 0; i < written.n; i++) free((char *)written.v[i]);
  free(pos.v);
  free(files.v);
  free(sets.v);
  free(set_strings.v);
  free(set_jsons.v);
  free(set_files.v);
  free(set_literals.v);
  free(apis.v);
  free(show.v);
  free(written.v);
  return rc;
}
