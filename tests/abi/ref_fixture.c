/* ref_fixture.c - the ref backend and a context for the ABI suites. */
#include "ref_fixture.h"

#include <stdio.h>
#include <stdlib.h>

#include "checked_iface.h"

void ref_fixture_open(sdpa_backend_t **backend, const sdpa_backend_iface_t **iface,
                      sdpa_context_t **ctx)
{
    if (sdpa_backend_open("ref", backend) != SDPA_SUCCESS) {
        fprintf(stderr, "cannot open ref: %s\n", sdpa_loader_last_error());
        exit(EXIT_FAILURE);
    }
    *iface = test_checked_iface(sdpa_backend_get_iface(*backend));
    sdpa_context_desc_t desc = {.struct_size = sizeof(desc),
                                .struct_version = SDPA_CONTEXT_DESC_VERSION};
    if ((*iface)->context_create(&desc, ctx) != SDPA_SUCCESS) {
        fprintf(stderr, "context_create: %s\n", (*iface)->last_error());
        exit(EXIT_FAILURE);
    }
}

void ref_fixture_close(sdpa_backend_t *backend, const sdpa_backend_iface_t *iface,
                       sdpa_context_t *ctx)
{
    iface->context_destroy(ctx);
    sdpa_backend_close(backend);
}

ref_env_t ref_env;

void ref_env_open(void)
{
    ref_fixture_open(&ref_env.backend, &ref_env.iface, &ref_env.ctx);
}

void ref_env_close(void)
{
    ref_fixture_close(ref_env.backend, ref_env.iface, ref_env.ctx);
}
