#define _GNU_SOURCE
/* The file-system side of chart loading: directories (with .helmignore) and .tgz files. */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "base/gz.h"
#include "helm/chart/chart.h"

typedef struct ign_rule_s {
  char *pat;
  int negate, must_dir, mode; /* mode: 0 basename, 1 full path */
} ign_rule_t;

typedef struct ign_s {
  ign_rule_t *r;
  size_t n;
} ign_t;

static int ign_add(ign_t *ig, const char *line, size_t len) {
  while (len && (line[0] == ' ' || line[0] == '\t' || line[0] == '\r')) line++, len--;
  while (len && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r')) len--;
  if (!len || line[0] == '#') return 0;
  char *s = strndup(line, len);
  if (!s) return -ENOMEM;
  if (strstr(s, "**")) {
    free(s);
    return -EINVAL;
  }
  ign_rule_t r = {0};
  char *p = s;
  if (*p == '!') r.negate = 1, p++;
  size_t pl = strlen(p);
  if (pl && p[pl - 1] == '/') r.must_dir = 1, p[--pl] = 0;
  if (*p == '/') r.mode = 1, p++;
  else if (strchr(p, '/')) r.mode = 1;
  r.pat = strdup(p);
  free(s);
  if (!r.pat) return -ENOMEM;
  ign_rule_t *nr = realloc(ig->r, (ig->n + 1) * sizeof *nr);
  if (!nr) {
    free(r.pat);
    return -ENOMEM;
  }
  ig->r = nr;
  ig->r[ig->n++] = r;
  return 0;
}

static void ign_free(ign_t *ig) {
  for (size_t i = 0; i < ig->n; i++) free(ig->r[i].pat);
  free(ig->r);
}

static int ign_match(const ign_t *ig, const char *path, int is_dir) {
  for (size_t i = 0; i < ig->n; i++) {
    const ign_rule_t *r = &ig->r[i];
    const char *subject = path;
    if (!r->mode) {
      const char *sl = strrchr(path, '/');
      subject = sl ? sl + 1 : path;
    }
    if (r->negate) {
      if (r->must_dir && !is_dir) return 1;
      if (fnmatch(r->pat, subject, FNM_PATHNAME) != 0) return 1;
      continue;
    }
    if (r->must_dir && !is_dir) continue;
    if (fnmatch(r->pat, subject, FNM_PATHNAME) == 0) return 1;
  }
  return 0;
}

typedef struct walk_s {
  ign_t ig;
  chart_file_t *files;
  size_t n, cap;
  size_t budget, max_bytes, max_files;
  chart_error_t *err;
} walk_t;

/* Reads a file. For a regular file whose size stat gave (regular, hint) in one read where it can:
 * a read that returns less than asked ends such a file, and one that fills the buffer (it grew)
 * goes on; anything else is read until a read returns nothing. */
static int read_all_at(int dfd, const char *path, int regular, size_t hint, size_t max, char **data, size_t *len,
                       int *too_big) {
  *too_big = 0;
  int fd = openat(dfd, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  size_t cap = hint + 1, n = 0;
  char *b = malloc(cap + 1);
  if (!b) {
    close(fd);
    return -ENOMEM;
  }
  int err = 0;
  for (;;) {
    if (n == cap) {
      cap *= 2;
      char *nb = realloc(b, cap + 1);
      if (!nb) {
        err = -ENOMEM;
        break;
      }
      b = nb;
    }
    ssize_t r = read(fd, b + n, cap - n);
    if (r < 0) {
      if (errno == EINTR) continue;
      err = -EIO;
      break;
    }
    size_t want = cap - n;
    n += (size_t)r;
    if (n > max) {
      *too_big = 1;
      break;
    }
    if (r == 0 || (regular && (size_t)r < want)) break;
  }
  close(fd);
  if (err || *too_big) {
    free(b);
    return err ? err : -EFBIG;
  }
  b[n] = 0;
  *data = b;
  *len = n;
  return 0;
}

static int read_all(const char *path, int regular, size_t hint, size_t max, char **data, size_t *len, int *too_big) {
  return read_all_at(AT_FDCWD, path, regular, hint, max, data, len, too_big);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int walk_dir(walk_t *w, const char *abs, const char *rel, int depth) {
  if (depth > 64) {
    snprintf(w->err->message, sizeof w->err->message, "chart directory nested too deeply at %s", abs);
    return CHART_E2BIG;
  }
  DIR *d = opendir(abs);
  if (!d) {
    snprintf(w->err->message, sizeof w->err->message, "open %s: %s", abs, strerror(errno));
    return CHART_EINVAL;
  }
  char **names = NULL;
  size_t nn = 0, cn = 0;
  struct dirent *de;
  int rc = 0;
  int dfd = dirfd(d); /* entries are looked at relative to it (no walk of the whole path each time) */
  while ((de = readdir(d))) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    if (nn == cn) {
      cn = cn ? cn * 2 : 32;
      char **nv = realloc(names, cn * sizeof *nv);
      if (!nv) {
        rc = CHART_ENOMEM;
        break;
      }
      names = nv;
    }
    if (!(names[nn] = strdup(de->d_name))) {
      rc = CHART_ENOMEM;
      break;
    }
    nn++;
  }
  if (!rc && nn) qsort(names, nn, sizeof *names, cmp_str);
  for (size_t i = 0; i < nn && !rc; i++) {
    char *ap = NULL, *rp = NULL;
    if (asprintf(&ap, "%s/%s", abs, names[i]) < 0 || asprintf(&rp, "%s%s%s", rel, *rel ? "/" : "", names[i]) < 0) {
      free(ap);
      rc = CHART_ENOMEM;
      break;
    }
    struct stat st;
    if (fstatat(dfd, names[i], &st, 0)) {
      snprintf(w->err->message, sizeof w->err->message, "stat %s: %s", ap, strerror(errno));
      rc = CHART_EINVAL;
    } else if (S_ISDIR(st.st_mode)) {
      if (!ign_match(&w->ig, rp, 1)) rc = walk_dir(w, ap, rp, depth + 1);
    } else if (!ign_match(&w->ig, rp, 0)) {
      if (!S_ISREG(st.st_mode)) {
        snprintf(w->err->message, sizeof w->err->message,
                 "cannot load irregular file %s as it has file mode type bits set", ap);
        rc = CHART_EINVAL;
      } else if ((size_t)st.st_size > w->budget || w->n >= w->max_files) {
        if (w->n >= w->max_files)
          snprintf(w->err->message, sizeof w->err->message, "chart has more than %zu files", w->max_files);
        else
          snprintf(w->err->message, sizeof w->err->message, "chart exceeds maximum decompressed size of %zu bytes",
                   w->max_bytes);
        rc = CHART_E2BIG;
      } else {
        char *data;
        size_t len;
        int big;
        int r = read_all_at(dfd, names[i], 1, (size_t)st.st_size, w->budget, &data, &len, &big);
        if (r == -ENOMEM) rc = CHART_ENOMEM;
        else if (r == -EFBIG) {
          snprintf(w->err->message, sizeof w->err->message, "chart exceeds maximum decompressed size of %zu bytes",
                   w->max_bytes);
          rc = CHART_E2BIG;
        } else if (r) {
          snprintf(w->err->message, sizeof w->err->message, "error reading %s: %s", rp, strerror(-r));
          rc = CHART_EINVAL;
        } else {
          w->budget -= len;
          if (len >= 3 && !memcmp(data, "\xEF\xBB\xBF", 3)) {
            memmove(data, data + 3, len - 3 + 1);
            len -= 3;
          }
          if (w->n == w->cap) {
            w->cap = w->cap ? w->cap * 2 : 32;
            chart_file_t *nf = realloc(w->files, w->cap * sizeof *nf);
            if (!nf) {
              free(data);
              rc = CHART_ENOMEM;
            } else {
              w->files = nf;
            }
          }
          if (!rc) {
            w->files[w->n].name = rp;
            w->files[w->n].data = data;
            w->files[w->n].len = len;
            w->n++;
            rp = NULL;
          }
        }
      }
    }
    free(ap);
    free(rp);
  }
  closedir(d);
  for (size_t i = 0; i < nn; i++) free(names[i]);
  free(names);
  if (rc == CHART_ENOMEM) snprintf(w->err->message, sizeof w->err->message, "out of memory");
  return rc;
}

int chart_load_dir(const char *dir, const chart_limits_t *lim, chart_t **out, chart_error_t *err) {
  chart_error_t local;
  if (!err) err = &local;
  *out = NULL;
  walk_t w = {0};
  w.err = err;
  w.max_bytes = lim && lim->max_bytes ? lim->max_bytes : (size_t)100 << 20;
  w.max_files = lim && lim->max_files ? lim->max_files : 20000;
  w.budget = w.max_bytes;
  char *ipath = NULL;
  if (asprintf(&ipath, "%s/.helmignore", dir) < 0) return CHART_ENOMEM;
  char *idata = NULL;
  size_t ilen = 0;
  int big, rc = 0;
  int r = read_all(ipath, 0, 4096, 1 << 20, &idata, &ilen, &big);
  free(ipath);
  if (r == 0) {
    const char *p = idata;
    if (ilen >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3)) p += 3;
    while (*p && !rc) {
      const char *e = strchr(p, '\n');
      size_t l = e ? (size_t)(e - p) : strlen(p);
      int ar = ign_add(&w.ig, p, l);
      if (ar == -EINVAL) {
        snprintf(err->message, sizeof err->message, "double-star (**) syntax is not supported");
        rc = CHART_EINVAL;
      } else if (ar) {
        rc = CHART_ENOMEM;
      }
      p = e ? e + 1 : p + l;
    }
    free(idata);
  }
  if (!rc && ign_add(&w.ig, "templates/.?*", 13)) rc = CHART_ENOMEM;
  if (!rc) rc = walk_dir(&w, dir, "", 0);
  if (!rc) rc = chart_load_files(w.files, w.n, lim, out, err);
  for (size_t i = 0; i < w.n; i++) {
    free(w.files[i].name);
    free(w.files[i].data);
  }
  free(w.files);
  ign_free(&w.ig);
  if (rc == CHART_ENOMEM) snprintf(err->message, sizeof err->message, "out of memory");
  return rc;
}

int chart_load_path(const char *path, const chart_limits_t *lim, chart_t **out, chart_error_t *err) {
  chart_error_t local;
  if (!err) err = &local;
  *out = NULL;
  struct stat st;
  if (stat(path, &st)) {
    snprintf(err->message, sizeof err->message, "path \"%s\" not found", path);
    return CHART_ENOENT;
  }
  if (S_ISDIR(st.st_mode)) {
    char *cy = NULL;
    if (asprintf(&cy, "%s/Chart.yaml", path) < 0) return CHART_ENOMEM;
    struct stat cs;
    int missing = stat(cy, &cs) != 0;
    if (missing) {
      char *abs = realpath(path, NULL);
      snprintf(err->message, sizeof err->message, "unable to detect chart at %s/Chart.yaml: open %s/Chart.yaml: %s",
               abs ? abs : path, abs ? abs : path, strerror(ENOENT));
      free(abs);
      free(cy);
      return CHART_ENOENT;
    }
    free(cy);
    return chart_load_dir(path, lim, out, err);
  }
  size_t max = (lim && lim->max_bytes ? lim->max_bytes : (size_t)100 << 20) + (1 << 20);
  char *data;
  size_t len;
  int big;
  int r = read_all(path, 0, 65536, max, &data, &len, &big);
  if (r) {
    snprintf(err->message, sizeof err->message, "file '%s' cannot be read: %s", path, strerror(-r));
    return r == -ENOMEM ? CHART_ENOMEM : CHART_EINVAL;
  }
  if (!gz_is_gzip(data, len)) {
    size_t pl = strlen(path);
    if ((pl >= 4 && !strcmp(path + pl - 4, ".yml")) || (pl >= 5 && !strcmp(path + pl - 5, ".yaml")))
      snprintf(err->message, sizeof err->message, "file '%s' seems to be a YAML file, but expected a gzipped archive", path);
    else
      snprintf(err->message, sizeof err->message, "file '%s' does not appear to be a gzipped archive; got '%s'", path,
               len == 0 ? "text/plain; charset=utf-8" : "application/octet-stream");
    free(data);
    return CHART_EINVAL;
  }
  int rc = chart_load_archive(data, len, lim, out, err);
  free(data);
  return rc;
}
