/* fake_backend.c - plugins that misbehave in one way each, for the front
 * loader's tests. FAKE_MODE selects the behaviour (one module per mode). */
#include <stddef.h>

#include "sdpa.h"

#define FAKE_GOOD 1           /* a valid 1.0 table named "fake" */
#define FAKE_NO_ENTRY 2       /* exports no sdpa_backend_negotiate */
#define FAKE_MAJOR2 3         /* refuses: speaks 2.0 */
#define FAKE_MAJOR0 4         /* refuses: speaks 0.9 */
#define FAKE_LIES_MAJOR2 5    /* "succeeds" with version 2.0 */
#define FAKE_TRUNCATED 6      /* struct_size 16 */
#define FAKE_NULL_MEMBER 7    /* context_create NULL */
#define FAKE_TABLE_MISMATCH 8 /* table says 1.3, negotiation said 1.0 */
#define FAKE_NEWER_MINOR 9    /* speaks 1.7 with a longer table: accepted */
#define FAKE_V1_1_NO_MERGE 10 /* speaks 1.1 but merge_create is NULL */
#define FAKE_V1_2_NO_SUPPORTS 11 /* speaks 1.2 but primitive_supports is NULL */
#define FAKE_V1_1 12             /* a valid 1.1 table, without 1.2's member */

#ifndef FAKE_MODE
#error "FAKE_MODE must be defined"
#endif

static const char *fake_last_error(void)
{
    return "";
}
__attribute__((unused)) static sdpa_status_t fake_context_create(const sdpa_context_desc_t *desc,
                                                                 sdpa_context_t **out)
{
    (void)desc;
    *out = NULL;
    return SDPA_ERROR_UNSUPPORTED;
}
static void fake_context_destroy(sdpa_context_t *ctx)
{
    (void)ctx;
}
static sdpa_status_t fake_get_features(sdpa_context_t *ctx, sdpa_features_t *out)
{
    (void)ctx;
    (void)out;
    return SDPA_ERROR_UNSUPPORTED;
}
static sdpa_status_t fake_context_query(sdpa_context_t *ctx, sdpa_query_t what, void *out,
                                        size_t size)
{
    (void)ctx;
    (void)what;
    (void)out;
    (void)size;
    return SDPA_ERROR_UNSUPPORTED;
}
static sdpa_status_t fake_primitive_create(sdpa_context_t *ctx, const sdpa_problem_desc_t *desc,
                                           sdpa_primitive_t **out)
{
    (void)ctx;
    (void)desc;
    *out = NULL;
    return SDPA_ERROR_UNSUPPORTED;
}
static void fake_primitive_destroy(sdpa_primitive_t *prim)
{
    (void)prim;
}
static sdpa_status_t fake_primitive_query(sdpa_primitive_t *prim, sdpa_query_t what, void *out,
                                          size_t size)
{
    (void)prim;
    (void)what;
    (void)out;
    (void)size;
    return SDPA_ERROR_UNSUPPORTED;
}
static sdpa_status_t fake_execute(sdpa_primitive_t *prim, const sdpa_exec_args_t *args)
{
    (void)prim;
    (void)args;
    return SDPA_ERROR_UNSUPPORTED;
}
__attribute__((unused)) static sdpa_status_t
fake_merge_create(sdpa_context_t *ctx, const sdpa_merge_desc_t *desc, sdpa_primitive_t **out)
{
    (void)ctx;
    (void)desc;
    *out = NULL;
    return SDPA_ERROR_UNSUPPORTED;
}
static sdpa_status_t fake_merge_execute(sdpa_primitive_t *prim, const sdpa_merge_args_t *args)
{
    (void)prim;
    (void)args;
    return SDPA_ERROR_UNSUPPORTED;
}

__attribute__((unused)) static sdpa_status_t
fake_supports(sdpa_context_t *ctx, const sdpa_problem_desc_t *desc, sdpa_support_t *out)
{
    (void)ctx;
    (void)desc;
    (void)out;
    return SDPA_ERROR_UNSUPPORTED;
}

/* A table from a future minor version: 1.2's members and one more. */
typedef struct fake_iface_1_7 {
    sdpa_backend_iface_t v1;
    void (*appended_in_1_7)(void);
} fake_iface_1_7_t;

static const fake_iface_1_7_t table = {
        .v1 =
                {
#if FAKE_MODE == FAKE_TABLE_MISMATCH
                        .abi_version = SDPA_MAKE_VERSION(1, 3),
#elif FAKE_MODE == FAKE_NEWER_MINOR
                        .abi_version = SDPA_MAKE_VERSION(1, 7),
#elif FAKE_MODE == FAKE_V1_1_NO_MERGE || FAKE_MODE == FAKE_V1_1
                        .abi_version = SDPA_MAKE_VERSION(1, 1),
#elif FAKE_MODE == FAKE_V1_2_NO_SUPPORTS
                        .abi_version = SDPA_MAKE_VERSION(1, 2),
#else
                        .abi_version = SDPA_MAKE_VERSION(1, 0),
#endif
#if FAKE_MODE == FAKE_TRUNCATED
                        .struct_size = 16,
#elif FAKE_MODE == FAKE_NEWER_MINOR
                        .struct_size = sizeof(fake_iface_1_7_t),
#elif FAKE_MODE == FAKE_V1_1_NO_MERGE || FAKE_MODE == FAKE_V1_1
                        .struct_size = offsetof(sdpa_backend_iface_t, primitive_supports),
#elif FAKE_MODE == FAKE_V1_2_NO_SUPPORTS
                        .struct_size = sizeof(sdpa_backend_iface_t),
#else /* the 1.0 table */
                        .struct_size = offsetof(sdpa_backend_iface_t, merge_create),
#endif
                        .name = "fake",
                        .last_error = fake_last_error,
#if FAKE_MODE != FAKE_NULL_MEMBER
                        .context_create = fake_context_create,
#endif
                        .context_destroy = fake_context_destroy,
                        .context_get_features = fake_get_features,
                        .context_query = fake_context_query,
                        .primitive_create = fake_primitive_create,
                        .primitive_destroy = fake_primitive_destroy,
                        .primitive_query = fake_primitive_query,
                        .primitive_execute = fake_execute,
#if FAKE_MODE == FAKE_NEWER_MINOR || FAKE_MODE == FAKE_V1_2_NO_SUPPORTS || FAKE_MODE == FAKE_V1_1
                        .merge_create = fake_merge_create,
#endif
                        .merge_execute = fake_merge_execute,
#if FAKE_MODE == FAKE_NEWER_MINOR
                        .primitive_supports = fake_supports,
#endif
                },
        .appended_in_1_7 = NULL,
};

#if FAKE_MODE == FAKE_NO_ENTRY
/* Close, but not the entry point's name. */
const sdpa_backend_iface_t *sdpa_backend_negotiate_v0(void);
const sdpa_backend_iface_t *sdpa_backend_negotiate_v0(void)
{
    return &table.v1;
}
#else
sdpa_status_t sdpa_backend_negotiate(uint32_t *abi_version, const sdpa_backend_iface_t **iface);
sdpa_status_t sdpa_backend_negotiate(uint32_t *abi_version, const sdpa_backend_iface_t **iface)
{
    *iface = NULL;
#if FAKE_MODE == FAKE_MAJOR2
    (void)table;
    *abi_version = SDPA_MAKE_VERSION(2, 0);
    return SDPA_ERROR_ABI_VERSION;
#elif FAKE_MODE == FAKE_MAJOR0
    (void)table;
    *abi_version = SDPA_MAKE_VERSION(0, 9);
    return SDPA_ERROR_ABI_VERSION;
#elif FAKE_MODE == FAKE_LIES_MAJOR2
    *abi_version = SDPA_MAKE_VERSION(2, 0);
    *iface = &table.v1;
    return SDPA_SUCCESS;
#elif FAKE_MODE == FAKE_NEWER_MINOR
    *abi_version = SDPA_MAKE_VERSION(1, 7);
    *iface = &table.v1;
    return SDPA_SUCCESS;
#elif FAKE_MODE == FAKE_V1_1_NO_MERGE || FAKE_MODE == FAKE_V1_1
    *abi_version = SDPA_MAKE_VERSION(1, 1);
    *iface = &table.v1;
    return SDPA_SUCCESS;
#elif FAKE_MODE == FAKE_V1_2_NO_SUPPORTS
    *abi_version = SDPA_MAKE_VERSION(1, 2);
    *iface = &table.v1;
    return SDPA_SUCCESS;
#else
    *abi_version = SDPA_MAKE_VERSION(1, 0);
    *iface = &table.v1;
    return SDPA_SUCCESS;
#endif
}
#endif
