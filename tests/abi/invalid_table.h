/*
 * invalid_table.h - the table of invalid problems and arguments every
 * backend must refuse with the same status and a message naming the field
 * (validation lives in src/validate/problem_check.c, shared by all backends).
 *
 * Running it against another backend is one call: build a Check TCase with
 * invalid_table_tcase("ze", &env) where env says how to create a context and
 * allocate argument memory on that backend.
 */
#ifndef SDPA_TESTS_INVALID_TABLE_H
#define SDPA_TESTS_INVALID_TABLE_H

#include <check.h>

#include "abi_util.h"
#include "sdpa.h"

typedef struct invalid_env {
    /* The context every case uses (ze handles for "ze", NULL for "ref"). */
    sdpa_context_desc_t context_desc;
    /* Memory for execution arguments (NULL: host malloc). */
    const test_allocator_t *allocator;
} invalid_env_t;

/* A TCase named after backend_name that opens the backend through the front
 * loader and runs every entry of the table (one loop test per entry).
 * backend_name and env must outlive the suite run. Up to 4 backends per
 * process; NULL beyond that. */
TCase *invalid_table_tcase(const char *backend_name, const invalid_env_t *env);

/* Entries in the table. */
int invalid_table_size(void);

#endif /* SDPA_TESTS_INVALID_TABLE_H */
