/* The front-door table: every kind rudder serves, one row each. */
#pragma once
#include "reconcile/door.h"

extern const door_t door_helmrelease; /* rudder.dev/v1alpha1 HelmRelease */
extern const door_t door_helmrequest; /* app.alauda.io/v1 HelmRequest (Captain's; v1alpha1 served alike) */
