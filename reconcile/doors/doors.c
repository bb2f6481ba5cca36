#include "reconcile/doors/doors.h"

const door_t *const doors[] = {&door_helmrelease, &door_helmrequest, NULL};
