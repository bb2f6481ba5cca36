/* rudder: process entry. Subcommands are dispatched by loop/cli.c (the commands for people: loop/cmd_*.c). */
#include "loop/cli.h"

int main(int argc, char **argv) { return cli_main(argc, argv); }
