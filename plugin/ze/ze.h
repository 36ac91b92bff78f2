/*
 * ze.h - the Level Zero backend ("ze"): attention kernels from the embedded
 * SPIR-V, specialized and built per problem (modules cached per context),
 * launched on the caller's command list.
 *
 * Threads: a context may be used from several threads. Primitive creation
 * builds modules under the module cache's lock. Level Zero kernel arguments
 * are state of the kernel object, so each primitive owns its kernels and
 * serializes its launches (set arguments + append) on its own lock; two
 * primitives launch concurrently.
 *
 * Scratch: backward needs device scratch; unless the caller passes its own,
 * it comes from the context's grow-only allocation, so executions of one
 * context's primitives that may overlap in time must pass their own scratch
 * (or use different contexts).
 */
#ifndef SDPA_ZE_H
#define SDPA_ZE_H

#include <pthread.h>

#include <level_zero/ze_api.h>

#include "bwd_plan.h"
#include "device.h"
#include "fwd_plan.h"
#include "module_cache.h"
#include "problem.h"
#include "scratch.h"
#include "sdpa.h"

#define ZE_EXPORT __attribute__((visibility("default")))

/* The entry point (sdpa.h); the only symbol the module exports. */
ZE_EXPORT sdpa_status_t sdpa_backend_negotiate(uint32_t *abi_version,
                                               const sdpa_backend_iface_t **iface);

struct sdpa_context {
    ze_context_handle_t ze_context;
    ze_device_handle_t ze_device;
    /* Where launches go unless an execution names another list. */
    ze_command_list_handle_t command_list;
    int owns_command_list; /* we created it: a synchronous immediate list */
    sdpa_device_info_t device;
    sdpa_module_cache_t *modules;
    sdpa_scratch_t *scratch;
};

struct sdpa_primitive {
    sdpa_context_t *ctx;
    sdpa_problem_desc_t problem; /* checked and normalized */
    sdpa_shape_t shape;
    pthread_mutex_t launch_lock;

    /* Forward. */
    sdpa_fwd_plan_t fwd;
    ze_kernel_handle_t fwd_kernel;

    /* Backward: the pipeline's kernels, and the strides buffer in host USM
     * (each execution copies it into the scratch, so it must stay alive as
     * long as executions may be pending: the primitive's lifetime). */
    sdpa_bwd_plan_t bwd;
    ze_kernel_handle_t bwd_pre, bwd_main, bwd_dq, bwd_post;
    int64_t *bwd_strides_host;
};

/* context.c */
sdpa_status_t ze_context_create(const sdpa_context_desc_t *desc, sdpa_context_t **out);
void ze_context_destroy(sdpa_context_t *ctx);
sdpa_status_t ze_context_get_features(sdpa_context_t *ctx, sdpa_features_t *out);
sdpa_status_t ze_context_query(sdpa_context_t *ctx, sdpa_query_t what, void *out, size_t out_size);

/* primitive.c */
sdpa_status_t ze_primitive_create(sdpa_context_t *ctx, const sdpa_problem_desc_t *desc,
                                  sdpa_primitive_t **out);
void ze_primitive_destroy(sdpa_primitive_t *prim);
sdpa_status_t ze_primitive_query(sdpa_primitive_t *prim, sdpa_query_t what, void *out,
                                 size_t out_size);
sdpa_status_t ze_primitive_execute(sdpa_primitive_t *prim, const sdpa_exec_args_t *args);

/* kernel.c: a kernel from a cached module. */
sdpa_status_t ze_kernel_from_cache(sdpa_context_t *ctx, const char *source, int d_max,
                                   uint32_t subgroup_size, const sdpa_spec_values_t *constants,
                                   const char *build_flags, const char *kernel_name,
                                   ze_kernel_handle_t *out);
/* Typed argument setters; the message names the kernel argument. */
sdpa_status_t ze_set_arg(ze_kernel_handle_t kernel, uint32_t index, size_t size, const void *value);
sdpa_status_t ze_set_ptr(ze_kernel_handle_t kernel, uint32_t index, const void *pointer);

/* bwd.c */
sdpa_status_t ze_bwd_prepare(sdpa_primitive_t *prim);
void ze_bwd_release(sdpa_primitive_t *prim);
sdpa_status_t ze_bwd_execute(sdpa_primitive_t *prim, const sdpa_exec_args_t *args,
                             ze_command_list_handle_t list);

/* bwd_xe.c: checks that a fast-path backward kernel (sdpa_xe_bwd or
 * sdpa_xe_bwd_dq of variant) takes the arguments of sdpa_xe_bwd_args.def,
 * which bwd.c sets by the portable kernels' indices. */
sdpa_status_t ze_bwd_xe_check_kernel(ze_kernel_handle_t kernel, const char *variant,
                                     const char *name);

/* fwd.c: the forward pass (the plan chooses the kernel). */
sdpa_status_t ze_fwd_prepare(sdpa_primitive_t *prim);
sdpa_status_t ze_fwd_execute(sdpa_primitive_t *prim, const sdpa_exec_args_t *args,
                             ze_command_list_handle_t list);

/* fwd_xe.c: the same for the fast path, called by fwd.c once the plan has
 * chosen it: creates prim->fwd_kernel (checking its argument count against
 * the argument table) and launches it. */
sdpa_status_t ze_fwd_xe_prepare(sdpa_primitive_t *prim);
sdpa_status_t ze_fwd_xe_execute(sdpa_primitive_t *prim, const sdpa_exec_args_t *args,
                                ze_command_list_handle_t list);

#endif /* SDPA_ZE_H */
