/* checked_iface.c - backend tables that check last_error() after each call. */
#include "checked_iface.h"

#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECKED_TABLES 4

static const sdpa_backend_iface_t *backends[CHECKED_TABLES];
static sdpa_backend_iface_t checked[CHECKED_TABLES];
/* Copies: a closed backend's own name is gone with its library. */
static char names[CHECKED_TABLES][64];

/* Asserts that backend n's message matches status, what it returned from
 * call; returns status. */
int test_last_error_matches(sdpa_status_t status, const char *message)
{
    return message != NULL && (status == SDPA_SUCCESS) == (message[0] == '\0');
}

static sdpa_status_t check_message(int n, const char *call, sdpa_status_t status)
{
    /* Check only on a mismatch: a passing ck_assert reports progress, which
     * fails outside a test, and the harnesses also call before their tests. */
    const char *message = backends[n]->last_error();
    if (!test_last_error_matches(status, message))
        ck_abort_msg("%s: %s returned %s but last_error() is \"%s\"", backends[n]->name, call,
                     sdpa_status_name(status), message ? message : "(NULL)");
    return status;
}

/* The checked members of table n: each calls the backend's and checks. */
#define CHECKED_MEMBERS(n)                                                                         \
    static sdpa_status_t context_create_##n(const sdpa_context_desc_t *desc, sdpa_context_t **out) \
    {                                                                                              \
        return check_message(n, "context_create", backends[n]->context_create(desc, out));         \
    }                                                                                              \
    static sdpa_status_t context_get_features_##n(sdpa_context_t *ctx, sdpa_features_t *out)       \
    {                                                                                              \
        return check_message(n, "context_get_features",                                            \
                             backends[n]->context_get_features(ctx, out));                         \
    }                                                                                              \
    static sdpa_status_t context_query_##n(sdpa_context_t *ctx, sdpa_query_t what, void *out,      \
                                           size_t out_size)                                        \
    {                                                                                              \
        return check_message(n, "context_query",                                                   \
                             backends[n]->context_query(ctx, what, out, out_size));                \
    }                                                                                              \
    static sdpa_status_t primitive_create_##n(                                                     \
            sdpa_context_t *ctx, const sdpa_problem_desc_t *desc, sdpa_primitive_t **out)          \
    {                                                                                              \
        return check_message(n, "primitive_create",                                                \
                             backends[n]->primitive_create(ctx, desc, out));                       \
    }                                                                                              \
    static sdpa_status_t primitive_query_##n(sdpa_primitive_t *prim, sdpa_query_t what, void *out, \
                                             size_t out_size)                                      \
    {                                                                                              \
        return check_message(n, "primitive_query",                                                 \
                             backends[n]->primitive_query(prim, what, out, out_size));             \
    }                                                                                              \
    static sdpa_status_t primitive_execute_##n(sdpa_primitive_t *prim,                             \
                                               const sdpa_exec_args_t *args)                       \
    {                                                                                              \
        return check_message(n, "primitive_execute", backends[n]->primitive_execute(prim, args));  \
    }                                                                                              \
    static sdpa_status_t merge_create_##n(sdpa_context_t *ctx, const sdpa_merge_desc_t *desc,      \
                                          sdpa_primitive_t **out)                                  \
    {                                                                                              \
        return check_message(n, "merge_create", backends[n]->merge_create(ctx, desc, out));        \
    }                                                                                              \
    static sdpa_status_t merge_execute_##n(sdpa_primitive_t *prim, const sdpa_merge_args_t *args)  \
    {                                                                                              \
        return check_message(n, "merge_execute", backends[n]->merge_execute(prim, args));          \
    }                                                                                              \
    static sdpa_status_t primitive_supports_##n(                                                   \
            sdpa_context_t *ctx, const sdpa_problem_desc_t *desc, sdpa_support_t *out)             \
    {                                                                                              \
        return check_message(n, "primitive_supports",                                              \
                             backends[n]->primitive_supports(ctx, desc, out));                     \
    }                                                                                              \
    static void install_##n(sdpa_backend_iface_t *t)                                               \
    {                                                                                              \
        t->context_create = context_create_##n;                                                    \
        t->context_get_features = context_get_features_##n;                                        \
        t->context_query = context_query_##n;                                                      \
        t->primitive_create = primitive_create_##n;                                                \
        t->primitive_query = primitive_query_##n;                                                  \
        t->primitive_execute = primitive_execute_##n;                                              \
        if (t->merge_create != NULL)                                                               \
            t->merge_create = merge_create_##n;                                                    \
        if (t->merge_execute != NULL)                                                              \
            t->merge_execute = merge_execute_##n;                                                  \
        if (t->primitive_supports != NULL)                                                         \
            t->primitive_supports = primitive_supports_##n;                                        \
    }

CHECKED_MEMBERS(0)
CHECKED_MEMBERS(1)
CHECKED_MEMBERS(2)
CHECKED_MEMBERS(3)

static void (*const install[CHECKED_TABLES])(sdpa_backend_iface_t *) = {install_0, install_1,
                                                                        install_2, install_3};

const sdpa_backend_iface_t *test_checked_iface(const sdpa_backend_iface_t *iface)
{
    if (iface == NULL)
        return NULL;
    /* One table per backend name, refreshed each time: a backend closed and
     * opened again may come back at another address. */
    int n = 0;
    while (n < CHECKED_TABLES && names[n][0] != '\0' && strcmp(names[n], iface->name) != 0)
        n++;
    if (n == CHECKED_TABLES) {
        fprintf(stderr, "test_checked_iface: more than %d backends\n", CHECKED_TABLES);
        abort();
    }
    /* Members past the backend's struct_size (an older minor) stay NULL. */
    size_t size = iface->struct_size < sizeof(checked[n]) ? iface->struct_size : sizeof(checked[n]);
    memset(&checked[n], 0, sizeof(checked[n]));
    memcpy(&checked[n], iface, size);
    checked[n].struct_size = (uint32_t)size;
    install[n](&checked[n]);
    snprintf(names[n], sizeof(names[n]), "%s", iface->name);
    backends[n] = iface;
    return &checked[n];
}
