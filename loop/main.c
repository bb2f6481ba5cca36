/* rudder: process entry. Subcommands are dispatched to loop/cli.c. */
#include "loop/cli.h"

int main(int argc, char **argv) { return cli_main(argc, argv); }
