/* Command-line entry: parses the subcommand and its flags and runs it. */
#pragma once

/* Runs rudder with the process arguments; returns the exit status. */
int cli_main(int argc, char **argv);
