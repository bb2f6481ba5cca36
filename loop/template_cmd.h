/* `rudder template [NAME] CHART [flags]`: a drop-in `helm template` (Helm v4.3.1). */
#pragma once

/* Runs the command with argv after "template"; prints manifests to stdout, errors to stderr
 * ("Error: <Helm's message>"); returns the exit status. */
int template_cmd_main(int argc, char **argv);
