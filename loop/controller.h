/* `rudder controller`: loads the configuration, connects, runs the reconcilers until a signal. */
#pragma once

/* Runs the controller with its command-line arguments (after "controller"); returns the exit status. */
int controller_main(int argc, char **argv);
