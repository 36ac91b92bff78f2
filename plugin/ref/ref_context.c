/* ref_context.c - contexts of the ref backend: a remembered ze_context
 * (for memory checks and events) and a fixed feature list. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_api.h"
#include "error.h"
#include "ref.h"

sdpa_status_t ref_context_create(const sdpa_context_desc_t *desc, sdpa_context_t **out)
{
    sdpa_status_t status = sdpa_context_desc_check(desc, out);
    if (status != SDPA_SUCCESS)
        return status;
    sdpa_context_t *ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL)
        return sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate a context");
    ctx->ze_context = desc->ze_context;
    ctx->ze_device = desc->ze_device;
    sdpa_live_list_init(&ctx->primitives);
    *out = ctx;
    return SDPA_SUCCESS;
}

static void orphan_primitive(sdpa_live_link_t *link, void *user)
{
    (void)user;
    SDPA_LIVE_OWNER(link, sdpa_primitive_t, link)->ctx = NULL;
}

void ref_context_destroy(sdpa_context_t *ctx)
{
    if (ctx == NULL)
        return;
    sdpa_live_list_drain(&ctx->primitives, orphan_primitive, NULL);
    free(ctx);
}

sdpa_status_t ref_context_get_features(sdpa_context_t *ctx, sdpa_features_t *out)
{
    sdpa_features_t f;
    SDPA_TRY(sdpa_features_begin(ctx, out, &f));
    snprintf(f.device_name, sizeof(f.device_name), "host (ref)");
    f.max_head_size = SDPA_MAX_HEAD_SIZE;
    f.subgroup_size = 0;
    f.has_f16 = f.has_bf16 = 1;
    f.has_backward = f.has_deterministic_backward = 1;
    f.has_quantized_kv = f.has_dropout = 1;
    f.has_varlen = f.has_paged_kv = f.has_window = f.has_softcap = f.has_alibi = 1;
    f.has_split_kv = 0; /* one exact pass: num_splits is ignored */
    f.has_merge = 1;
    f.has_supports_query = 1;
    f.has_sinks = 1;
    f.has_value_head_size = f.has_v_view_of_k = 1; /* forward and backward */
    f.has_fp8_kv = 1;
    sdpa_features_store(&f, out);
    return SDPA_SUCCESS;
}

sdpa_status_t ref_context_query(sdpa_context_t *ctx, sdpa_query_t what, void *out, size_t out_size)
{
    /* The host builds no modules and allocates no device scratch. */
    const sdpa_context_counters_t none = {0};
    return sdpa_context_query_answer(ctx, what, out, out_size, &none);
}
