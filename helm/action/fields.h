/* Server-side apply's managed fields, read the way drift detection needs them: which fields one field
 * manager's apply owns (its `fieldsV1` set), whether someone else wrote the object last, and which
 * fields an apply took back (the set after it, minus the set before), named both for people
 * (".spec.template.spec.containers[name=web].image") and as JSON pointers into the object
 * ("/spec/template/spec/containers/0/image") for ignore rules. Pure: no I/O, any thread. */
#pragma once
#include <stdint.h>
#include <cjson/cJSON.h>

/* The fieldsV1 of manager's Apply entry on the object itself (not a subresource), or NULL. */
const cJSON *fields_applied(const cJSON *obj, const char *manager);
/* The time of manager's last Apply (RFC 3339, seconds), or NULL. */
const char *fields_applied_time(const cJSON *obj, const char *manager);
/* A digest (FNV-1a 64) of that set as the server printed it; 0 when manager applies nothing. */
uint64_t fields_digest(const cJSON *obj, const char *manager);
/* 1 when the newest write to the object itself (managedFields entries other than the status
 * subresource, by time) is not manager's Apply: someone else changed it after rudder last did. */
int fields_written_by_other(const cJSON *obj, const char *manager);

typedef void (*fields_cb)(const char *path, const char *pointer, void *data);
/* Calls cb for each field of `after` that `before` lacks (a whole missing subtree once): its path
 * for messages, and its JSON pointer in obj (NULL when obj does not hold it). before may be NULL
 * (nothing owned). Returns how many were reported, or -12. */
int fields_added(const cJSON *before, const cJSON *after, const cJSON *obj, fields_cb cb, void *data);
/* 1 when pointer is prefix or lies under it ("/spec/replicas" is under "/spec"), else 0. */
int fields_pointer_under(const char *pointer, const char *prefix);
/* What JSON pointer names in obj (borrowed), or NULL when absent or malformed. */
const cJSON *fields_pointer_get(const cJSON *obj, const char *pointer);
/* Removes what JSON pointer names from obj: 0, or -2 when it is not there, -22 when malformed. */
int fields_pointer_remove(cJSON *obj, const char *pointer);
