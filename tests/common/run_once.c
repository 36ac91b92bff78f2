/* run_once.c - a problem run once on a backend. */
#include "run_once.h"

sdpa_status_t test_run_once(const sdpa_backend_iface_t *iface, sdpa_context_t *ctx,
                            const sdpa_problem_desc_t *d, const sdpa_exec_args_t *a)
{
    sdpa_primitive_t *prim = NULL;
    sdpa_status_t status = iface->primitive_create(ctx, d, &prim);
    if (status != SDPA_SUCCESS)
        return status;
    status = iface->primitive_execute(prim, a);
    iface->primitive_destroy(prim);
    return status;
}
