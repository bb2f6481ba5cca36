/* `rudder-template ARGS...` = `rudder template ARGS...`, so the chart tests need no CLI wiring. */
#include "loop/template_cmd.h"

int main(int argc, char **argv) { return template_cmd_main(argc - 1, argv + 1); }
