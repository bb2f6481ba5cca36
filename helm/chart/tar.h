/* A bounded reader for tar archives (ustar, pax, GNU long names) held in memory, and the
 * gzip+tar chart archive reader on top of it. No I/O. Hostile input is refused with a clear
 * message: links, devices, absolute paths, paths escaping the top directory, too many entries,
 * too many bytes. */
#pragma once
#include <stddef.h>

#define TAR_EINVAL (-22) /* malformed or refused archive; the message says why */
#define TAR_ENOMEM (-12)
#define TAR_E2BIG (-7)   /* a limit was exceeded */

typedef struct tar_limits_s {
  size_t max_files; /* regular files accepted (0: 20000) */
  size_t max_bytes; /* total bytes of file contents (0: 100 MiB, Helm's MaxDecompressedChartSize) */
} tar_limits_t;

typedef struct tar_entry_s {
  char *name;               /* full path as stored (after pax/GNU overrides), malloc'd */
  char type;                /* '0' regular, '5' directory (other types are refused or skipped) */
  const unsigned char *data; /* into the tar buffer; not NUL-terminated */
  size_t len;
} tar_entry_t;

/* Lists the regular files and directories of an uncompressed tar image (pax global/extended headers
 * and GNU long-name records consumed, symlinks/hard links/devices refused). *entries is malloc'd
 * (free with tar_entries_free). 0, TAR_EINVAL/TAR_E2BIG with a message in err, or TAR_ENOMEM. */
int tar_list(const unsigned char *tar, size_t n, const tar_limits_t *lim, tar_entry_t **entries, size_t *nentries,
             char *err, size_t errlen);
/* Frees what tar_list returned. */
void tar_entries_free(tar_entry_t *entries, size_t n);
