#include "loop/cli.h"
#include <stdlib.h>
#include <stdint.h>
#include <errno.h>
#include "loop/controller.h"
#include "loop/template_cmd.h"
#include "loop/cmds.h"
#include "buildinfo.h"
#include <stdio.h>
#include <string.h>

static const char cli__usage[] =
  "rudder: manages Helm releases declaratively in Kubernetes.\n"
  "\n"
  "Usage:\n"
  "  rudder controller [--kubeconfig FILE] [--namespace NS] [--log-level LEVEL]\n"
  "                      run the controller (in-cluster config when no kubeconfig)\n"
  "  rudder template [NAME] CHART [flags]\n"
  "                      render a chart locally as `helm template` does (see rudder template --help)\n"
  "  rudder get [NAME] [-n NS | -A] [-o json|yaml]\n"
  "                      HelmReleases: revision, suspended, Ready, chart, message\n"
  "  rudder reconcile NAME [-n NS]\n"
  "                      ask the controller to reconcile now; waits for the outcome\n"
  "  rudder suspend NAME, rudder resume NAME\n"
  "                      stop and restart reconciling a HelmRelease (resume waits for the outcome)\n"
  "  rudder diff NAME    what an upgrade to the spec would change, as a unified diff of the live objects\n"
  "  rudder history NAME [-o json|yaml]\n"
  "                      the release's revisions, as helm history prints them\n"
  "                      (these take --kubeconfig, --context, -n as the controller does; see each --help)\n"
  "  rudder version      print version, git commit and build flags\n"
  "  rudder --help       print this help\n";

static int cli__version(void) {
  printf("rudder %s\ncommit: %s\nbuild: %s\n", RUDDER_VERSION, RUDDER_GIT_COMMIT, RUDDER_BUILD_FLAGS);
  return 0;
}

int cli_main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    fputs(cli__usage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!strcmp(argv[1], "controller")) return controller_main(argc - 2, argv + 2);
  if (!strcmp(argv[1], "template")) return template_cmd_main(argc - 2, argv + 2);
  if (!strcmp(argv[1], "get")) return cmd_get_main(argc - 2, argv + 2);
  if (!strcmp(argv[1], "reconcile")) return cmd_reconcile_main(argc - 2, argv + 2);
  if (!strcmp(argv[1], "suspend")) return cmd_suspend_main(argc - 2, argv + 2, 1);
  if (!strcmp(argv[1], "resume")) return cmd_suspend_main(argc - 2, argv + 2, 0);
  if (!strcmp(argv[1], "diff")) return cmd_diff_main(argc - 2, argv + 2);
  if (!strcmp(argv[1], "history")) return cmd_history_main(argc - 2, argv + 2);
  if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) return cli__version();
  fprintf(stderr, "rudder: unknown command \"%s\"; see rudder --help\n", argv[1]);
  return 2;
}

/* "123", "64Ki", "256Mi", "1Gi" (also K/M/G, KiB/MiB/GiB): 0 and *out set, or -1. */
int cli_parse_size(const char *s, size_t *out) {
  char *e;
  errno = 0;
  unsigned long long v = strtoull(s, &e, 10);
  if (e == s || errno || *s == '-') return -1;
  unsigned shift = 0;
  if (*e == 'K' || *e == 'k') shift = 10;
  else if (*e == 'M') shift = 20;
  else if (*e == 'G') shift = 30;
  if (shift) {
    e++;
    if (*e == 'i') e++;
    if (*e == 'B') e++;
  } else if (*e == 'B') {
    e++;
  }
  if (*e || !v || v > (SIZE_MAX >> shift)) return -1;
  *out = (size_t)v << shift;
  return 0;
}

/* "200ms", "30s", "2m" (a bare number is seconds): 0 and *ms set, or -1. */
int cli_parse_ms(const char *s, uint64_t *ms) {
  char *e;
  errno = 0;
  unsigned long long v = strtoull(s, &e, 10);
  if (e == s || errno || *s == '-' || !v) return -1;
  unsigned long long mul = 1000;
  if (!strcmp(e, "ms")) mul = 1;
  else if (!strcmp(e, "s") || !*e) mul = 1000;
  else if (!strcmp(e, "m")) mul = 60000;
  else return -1;
  if (v > UINT64_MAX / mul) return -1;
  *ms = v * mul;
  return 0;
}
