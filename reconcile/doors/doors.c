#include "reconcile/doors/doors.h"

const door_t *const doors[] = {&door_helmrelease, &door_microservice, &door_helmrequest, NULL};
