/*
 * name_table.h - a setting given by name (an environment variable's value)
 * looked up in a table of the names it accepts.
 */
#ifndef SDPA_CORE_NAME_TABLE_H
#define SDPA_CORE_NAME_TABLE_H

#include <stddef.h>

/* The index of text in names[0..count), 0 (the default, first entry) when
 * text is NULL or empty, -1 when it is none of them. */
int sdpa_name_index(const char *text, const char *const *names, size_t count);

#endif
