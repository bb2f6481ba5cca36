/* The commands for people (cmd.h has what they share). Each takes the arguments after its name and
 * returns the exit status: 0, 1 (it failed: the message says what and where), 2 (bad usage). */
#pragma once

/* rudder get [NAME] [-n NS | -A]: HelmReleases as a table. */
int cmd_get_main(int argc, char **argv);
/* rudder reconcile NAME: asks the controller to reconcile now and waits for the outcome. */
int cmd_reconcile_main(int argc, char **argv);
/* rudder suspend NAME / rudder resume NAME (suspend false, then reconciled as with reconcile). */
int cmd_suspend_main(int argc, char **argv, int suspend);
/* rudder history NAME: the release's records as `helm history` prints them. */
int cmd_history_main(int argc, char **argv);
/* rudder diff NAME: what an upgrade would change, as a unified diff of the live objects. */
int cmd_diff_main(int argc, char **argv);
