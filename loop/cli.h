/* Command-line entry: parses the subcommand and its flags and runs it. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* Runs rudder with the process arguments; returns the exit status. */
int cli_main(int argc, char **argv);
/* A size flag: "123", "64Ki", "256Mi", "1Gi" (also K/M/G, KiB/MiB/GiB): 0 and *out set, or -1. */
int cli_parse_size(const char *s, size_t *out);
/* A time flag: "200ms", "30s", "2m" (a bare number is seconds): 0 and *ms set, or -1. */
int cli_parse_ms(const char *s, uint64_t *ms);
