#include "base/err.h"
#include "helm/chart/tar.h"
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Numeric header fields: octal text (NUL/space padded) or GNU base-256 when the top bit is set. */
static int tar__number(const unsigned char *f, size_t n, uint64_t *out) {
  uint64_t v = 0;
  if (n && (f[0] & 0x80)) {
    if (f[0] & 0x40) return -1; /* negative */
    v = f[0] & 0x3f;
    for (size_t i = 1; i < n; i++) {
      if (v >> 55) return -1;
      v = (v << 8) | f[i];
    }
    *out = v;
    return 0;
  }
  size_t i = 0;
  while (i < n && (f[i] == ' ' || f[i] == 0)) i++;
  if (i == n) {
    *out = 0;
    return 0;
  }
  for (; i < n && f[i] >= '0' && f[i] <= '7'; i++) {
    if (v >> 60) return -1;
    v = v * 8 + (uint64_t)(f[i] - '0');
  }
  for (; i < n; i++)
    if (f[i] != ' ' && f[i] != 0) return -1;
  *out = v;
  return 0;
}

static char *tar__field_str(const unsigned char *f, size_t n) {
  size_t l = 0;
  while (l < n && f[l]) l++;
  char *s = malloc(l + 1);
  if (!s) return NULL;
  memcpy(s, f, l);
  s[l] = 0;
  return s;
}

static int tar__checksum_ok(const unsigned char *h) {
  uint64_t want;
  if (tar__number(h + 148, 8, &want)) return 0;
  uint64_t u = 0;
  int64_t s = 0;
  for (int i = 0; i < 512; i++) {
    unsigned char c = (i >= 148 && i < 156) ? ' ' : h[i];
    u += c;
    s += (signed char)c;
  }
  return u == want || (uint64_t)s == want;
}

/* Applies the records of a pax extended header: path and size matter to us. */
static int tar__pax(const unsigned char *p, size_t n, char **path, int64_t *size) {
  size_t i = 0;
  while (i < n) {
    size_t len = 0, j = i;
    while (j < n && p[j] >= '0' && p[j] <= '9') {
      if (len > n) return -1;
      len = len * 10 + (size_t)(p[j] - '0');
      j++;
    }
    if (j >= n || p[j] != ' ' || len == 0 || len > n - i || p[i + len - 1] != '\n') return -1;
    const unsigned char *kv = p + j + 1, *end = p + i + len - 1;
    const unsigned char *eq = memchr(kv, '=', (size_t)(end - kv));
    if (!eq) return -1;
    size_t kl = (size_t)(eq - kv), vl = (size_t)(end - eq - 1);
    if (kl == 4 && !memcmp(kv, "path", 4)) {
      char *s = malloc(vl + 1);
      if (!s) return -2;
      memcpy(s, eq + 1, vl);
      s[vl] = 0;
      free(*path);
      *path = s;
    } else if (kl == 4 && !memcmp(kv, "size", 4)) {
      int64_t v = 0;
      if (vl == 0 || vl > 18) return -1;
      for (size_t k = 0; k < vl; k++) {
        if (eq[1 + k] < '0' || eq[1 + k] > '9') return -1;
        v = v * 10 + (eq[1 + k] - '0');
      }
      *size = v;
    }
    i += len;
  }
  return 0;
}

void tar_entries_free(tar_entry_t *entries, size_t n) {
  if (!entries) return;
  for (size_t i = 0; i < n; i++) free(entries[i].name);
  free(entries);
}

int tar_list(const unsigned char *tar, size_t n, const tar_limits_t *lim, tar_entry_t **entries, size_t *nentries,
             char *err, size_t errlen) {
  size_t max_files = lim && lim->max_files ? lim->max_files : 20000;
  size_t max_bytes = lim && lim->max_bytes ? lim->max_bytes : (size_t)100 << 20;
  *entries = NULL;
  *nentries = 0;
  tar_entry_t *es = NULL;
  size_t ne = 0, cap = 0, files = 0, bytes = 0, records = 0;
  char *long_name = NULL, *pax_path = NULL;
  int64_t pax_size = -1;
  size_t off = 0;
  int rc = 0;
  for (;;) {
    if (off >= n) break; /* EOF without the end blocks: Go's reader accepts it */
    if (n - off < 512) {
      rc = base_errf(err, errlen, TAR_EINVAL, "tar: unexpected EOF");
      goto fail;
    }
    const unsigned char *h = tar + off;
    static const unsigned char zero[512];
    if (!memcmp(h, zero, 512)) {
      if (n - off >= 1024 && memcmp(h + 512, zero, 512)) {
        rc = base_errf(err, errlen, TAR_EINVAL, "tar: invalid header");
        goto fail;
      }
      break;
    }
    if (++records > max_files * 4 + 16) {
      rc = base_errf(err, errlen, TAR_E2BIG, "chart archive has more than %zu entries", max_files);
      goto fail;
    }
    if (!tar__checksum_ok(h)) {
      rc = base_errf(err, errlen, TAR_EINVAL, "tar: invalid header (bad checksum at offset %zu)", off);
      goto fail;
    }
    uint64_t size;
    if (tar__number(h + 124, 12, &size)) {
      rc = base_errf(err, errlen, TAR_EINVAL, "tar: invalid header (bad size at offset %zu)", off);
      goto fail;
    }
    char type = (char)h[156];
    if (pax_size >= 0 && type != 'x' && type != 'g') size = (uint64_t)pax_size;
    size_t data_off = off + 512;
    if (size > n - data_off) {
      rc = base_errf(err, errlen, TAR_EINVAL, "tar: unexpected EOF");
      goto fail;
    }
    size_t padded = (size_t)((size + 511) & ~(uint64_t)511);
    if (padded > n - data_off) padded = n - data_off;
    const unsigned char *data = tar + data_off;
    off = data_off + padded;
    if (type == 'x' || type == 'g') {
      if (type == 'x') {
        int r = tar__pax(data, (size_t)size, &pax_path, &pax_size);
        if (r == -2) { rc = TAR_ENOMEM; goto fail; }
        if (r) {
          rc = base_errf(err, errlen, TAR_EINVAL, "tar: invalid pax header");
          goto fail;
        }
      }
      continue;
    }
    if (type == 'L' || type == 'K') {
      if (size > 65536) {
        rc = base_errf(err, errlen, TAR_E2BIG, "tar: GNU long name longer than 65536 bytes");
        goto fail;
      }
      if (type == 'L') {
        free(long_name);
        if (!(long_name = tar__field_str(data, (size_t)size))) { rc = TAR_ENOMEM; goto fail; }
      }
      continue;
    }
    /* The name: pax path, GNU long name, or ustar prefix + "/" + name. */
    char *name;
    if (pax_path) {
      name = pax_path;
      pax_path = NULL;
    } else if (long_name) {
      name = long_name;
      long_name = NULL;
    } else {
      char *nm = tar__field_str(h, 100);
      if (!nm) { rc = TAR_ENOMEM; goto fail; }
      if (!memcmp(h + 257, "ustar\0", 6) && h[345]) {
        char *pre = tar__field_str(h + 345, 155);
        size_t pl = pre ? strlen(pre) : 0, nl = strlen(nm);
        name = pre ? malloc(pl + nl + 2) : NULL;
        if (name) {
          memcpy(name, pre, pl);
          name[pl] = '/';
          memcpy(name + pl + 1, nm, nl + 1);
        }
        free(pre);
        free(nm);
        if (!name) { rc = TAR_ENOMEM; goto fail; }
      } else {
        name = nm;
      }
    }
    free(long_name);
    long_name = NULL;
    pax_size = -1;
    uint64_t mode = 0;
    tar__number(h + 100, 8, &mode);
    int is_dir = type == '5' || (mode & 0170000) == 0040000;
    if (!is_dir && type != '0' && type != '\0' && type != '7') {
      const char *what = type == '1' ? "a hard link" : type == '2' ? "a symbolic link"
                       : type == '3' || type == '4' ? "a device" : type == '6' ? "a FIFO" : "an unsupported entry";
      rc = base_errf(err, errlen, TAR_EINVAL, "chart archive contains %s (type '%c'): %s", what, type ? type : '0', name);
      free(name);
      goto fail;
    }
    if (!is_dir) {
      if (++files > max_files) {
        free(name);
        rc = base_errf(err, errlen, TAR_E2BIG, "chart archive has more than %zu files", max_files);
        goto fail;
      }
      if (size > max_bytes - bytes) {
        free(name);
        rc = base_errf(err, errlen, TAR_E2BIG, "decompressed chart is larger than the maximum size %zu", max_bytes);
        goto fail;
      }
      bytes += (size_t)size;
    }
    if (ne == cap) {
      size_t nc = cap ? cap * 2 : 32;
      tar_entry_t *ns = realloc(es, nc * sizeof *ns);
      if (!ns) {
        free(name);
        rc = TAR_ENOMEM;
        goto fail;
      }
      es = ns;
      cap = nc;
    }
    es[ne].name = name;
    es[ne].type = is_dir ? '5' : '0';
    es[ne].data = data;
    es[ne].len = is_dir ? 0 : (size_t)size;
    ne++;
  }
  free(long_name);
  free(pax_path);
  *entries = es;
  *nentries = ne;
  return 0;
fail:
  free(long_name);
  free(pax_path);
  tar_entries_free(es, ne);
  if (rc == TAR_ENOMEM) base_errf(err, errlen, rc, "out of memory");
  return rc;
}
