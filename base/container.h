/* container_of for intrusive structures. */
#pragma once
#include <stddef.h>

#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
