#include "loop/cli.h"
#include "loop/controller.h"
#include "loop/template_cmd.h"
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
  if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) return cli__version();
  fprintf(stderr, "rudder: unknown command \"%s\"; see rudder --help\n", argv[1]);
  return 2;
}
