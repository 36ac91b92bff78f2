/*
 * ze.h - the Level Zero backend ("ze"): attention kernels from the embedded
 * SPIR-V, specialized and built per problem (modules cached per context),
 * launched on the caller's command list.
 *
 * Threads (the contract sdpa.h states): primitive_execute is safe from any
 * number of threads, for any mix of primitives, command lists and scratch.
 *   - Appends to one command list are serialized by the context: one lock per
 *     list handle (list_table.h), for the default list and callers' lists.
 *   - Level Zero kernel arguments are state of the kernel object, so each
 *     primitive owns its kernels and sets arguments + appends under its own
 *     lock. Lock order: the list's, then the primitive's.
 *   - Backward without caller scratch uses the scratch of the list it
 *     appends to; executions on one list are ordered by a leading barrier, so
 *     they may share it, and executions on different lists never do.
 *   - Primitive creation builds modules under the module cache's lock.
 * What stays the caller's: not appending to a list itself while an
 * execution appends to it, and not destroying a primitive or context while
 * executions are in flight.
 *
 * Lifetime: a context keeps a list of its live primitives. Destroying the
 * context releases every Level Zero object they still hold (kernels, host
 * memory) before its modules, and orphans them: primitive_destroy then only
 * frees them, primitive_execute refuses them (sdpa.h, "Lifetime").
 */
#ifndef SDPA_ZE_H
#define SDPA_ZE_H

#include <pthread.h>

#include <level_zero/ze_api.h>

#include "arg_tables.h"
#include "bwd_plan.h"
#include "device.h"
#include "fwd_plan.h"
#include "live_list.h"
#include "list_table.h"
#include "merge_plan.h"
#include "module_cache.h"
#include "problem.h"
#include "scratch.h"
#include "sdpa.h"

struct sdpa_context {
    ze_context_handle_t ze_context;
    ze_device_handle_t ze_device;
    /* Where launches go unless an execution names another list. */
    ze_command_list_handle_t command_list;
    int owns_command_list; /* we created it: a synchronous immediate list */
    sdpa_device_info_t device;
    sdpa_module_cache_t *modules;
    sdpa_list_table_t *lists;    /* per list: append lock, backward scratch */
    sdpa_live_list_t primitives; /* links of the live primitives */
};

/* What a primitive runs: primitive_create makes a forward or a backward
 * one (by the problem's prop_kind), merge_create a merge one. */
/* SDPA_VERBOSE=profile's timestamps of a primitive (profile.c). */
typedef struct sdpa_ze_profile sdpa_ze_profile_t;

typedef enum sdpa_ze_prim_kind {
    SDPA_ZE_PRIM_FORWARD,  /* problem, shape, fwd */
    SDPA_ZE_PRIM_BACKWARD, /* problem, shape, bwd */
    SDPA_ZE_PRIM_MERGE     /* merge, merge_plan */
} sdpa_ze_prim_kind_t;

struct sdpa_primitive {
    sdpa_live_link_t link;
    sdpa_ze_prim_kind_t kind;
    sdpa_context_t *ctx;         /* NULL once the context is destroyed (orphaned) */
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
    ze_kernel_handle_t bwd_sinks; /* problem.sinks: the sinks' gradient */
    int64_t *bwd_strides_host;

    /* Merge primitives (merge_create): merge instead of problem and shape.
     * A split-KV forward (fwd.num_splits > 1) uses merge_kernel too,
     * planned by fwd.merge. */
    sdpa_merge_desc_t merge; /* checked and normalized */
    sdpa_merge_plan_t merge_plan;
    ze_kernel_handle_t merge_kernel;

    /* SDPA_VERBOSE=profile: the timestamps of executions (profile.c). */
    sdpa_ze_profile_t *profile;
};

/* context.c */
sdpa_status_t sdpa_ze_context_create(const sdpa_context_desc_t *desc, sdpa_context_t **out);
void sdpa_ze_context_destroy(sdpa_context_t *ctx);
sdpa_status_t sdpa_ze_context_get_features(sdpa_context_t *ctx, sdpa_features_t *out);
sdpa_status_t sdpa_ze_context_query(sdpa_context_t *ctx, sdpa_query_t what, void *out,
                                    size_t out_size);

/* primitive.c */
sdpa_status_t sdpa_ze_primitive_create(sdpa_context_t *ctx, const sdpa_problem_desc_t *desc,
                                       sdpa_primitive_t **out);
void sdpa_ze_primitive_destroy(sdpa_primitive_t *prim);
/* Releases the Level Zero objects of prim, whose context is being
 * destroyed, and marks it orphaned (prim->ctx = NULL). */
void sdpa_ze_primitive_orphan(sdpa_primitive_t *prim);
sdpa_status_t sdpa_ze_primitive_query(sdpa_primitive_t *prim, sdpa_query_t what, void *out,
                                      size_t out_size);
sdpa_status_t sdpa_ze_primitive_execute(sdpa_primitive_t *prim, const sdpa_exec_args_t *args);
/* An SDPA_VERBOSE line about prim: what ("create", "exec", "kernel"), the
 * <modules> or <list> field, the time in milliseconds. */
void sdpa_ze_primitive_trace(const sdpa_primitive_t *prim, const char *what, const char *field,
                             double ms);

/* profile.c: SDPA_VERBOSE=profile. sdpa_ze_profile_begin appends a timestamp
 * before an execution's kernels (after num_wait_events wait_events) and
 * returns its slot, or -1 when the execution is not timed (another level,
 * no slot free, a Level Zero failure); sdpa_ze_profile_end, with the same slot,
 * appends the one after them (appended: whether the kernels were).
 * sdpa_ze_profile_harvest prints the "kernel" lines of the executions that have
 * run (sdpa_ze_profile_begin does too); sdpa_ze_profile_release prints the last ones
 * and frees the profile. */
int sdpa_ze_profile_begin(sdpa_primitive_t *prim, ze_command_list_handle_t list, int caller_list,
                          uint32_t num_wait_events, ze_event_handle_t *wait_events);
void sdpa_ze_profile_end(sdpa_primitive_t *prim, ze_command_list_handle_t list, int slot,
                         int appended);
void sdpa_ze_profile_harvest(sdpa_primitive_t *prim);
void sdpa_ze_profile_release(sdpa_primitive_t *prim);

/* The checks creation adds to sdpa_problem_check for the ABI 1.1 features
 * (the window's bounds against the sequence lengths). */
sdpa_status_t sdpa_ze_llm_supported(const sdpa_problem_desc_t *p, const sdpa_shape_t *shape);

/* supports.c: ABI 1.2, what sdpa_ze_primitive_create would do with desc, from
 * the same checks and plans, building nothing (sdpa.h). */
sdpa_status_t sdpa_ze_primitive_supports(sdpa_context_t *ctx, const sdpa_problem_desc_t *desc,
                                         sdpa_support_t *out);

/* kernel.c: kernel kernel_name of variant source.d_max.subgroup_size from a
 * cached module, checked to take the arguments of table args (a module of
 * another build fails with SDPA_ERROR_DEVICE). */
sdpa_status_t sdpa_ze_kernel_from_cache(sdpa_context_t *ctx, const char *source, int d_max,
                                        uint32_t subgroup_size, const sdpa_spec_values_t *constants,
                                        const char *build_flags, const char *kernel_name,
                                        const sdpa_arg_table_t *args, ze_kernel_handle_t *out);
/* Sets every argument of kernel from values, a struct of the table's type
 * (sdpa_fwd_args_t for sdpa_fwd_args_table, ...). A failure's message names
 * the kernel and the argument. */
sdpa_status_t sdpa_ze_set_args(ze_kernel_handle_t kernel, const char *kernel_name,
                               const sdpa_arg_table_t *args, const void *values);

/* bwd.c */
sdpa_status_t sdpa_ze_bwd_prepare(sdpa_primitive_t *prim);
void sdpa_ze_bwd_release(sdpa_primitive_t *prim);
/* Appends one backward execution to list, whose lock the caller holds;
 * list_scratch is that list's scratch, used unless args->scratch is set. */
sdpa_status_t sdpa_ze_bwd_execute(sdpa_primitive_t *prim, const sdpa_exec_args_t *args,
                                  ze_command_list_handle_t list, sdpa_scratch_t *list_scratch);

/* merge.c: merge primitives (sdpa.h, ABI 1.1). */
sdpa_status_t sdpa_ze_merge_create(sdpa_context_t *ctx, const sdpa_merge_desc_t *desc,
                                   sdpa_primitive_t **out);
sdpa_status_t sdpa_ze_merge_execute(sdpa_primitive_t *prim, const sdpa_merge_args_t *args);

/* check_arrays.c: SDPA_ZE_CHECK_DEVICE_ARRAYS (read once per process). */
int sdpa_ze_check_arrays_enabled(void);
/* In the checking mode, on the context's own list (whose lock the caller
 * holds): reads back the varlen and paged arrays of execution args a and
 * fails with SDPA_ERROR_INVALID_ARGUMENT naming the first entry that breaks
 * sdpa.h (also noted on stderr). Otherwise, or on a caller's list (noted
 * once on stderr), SDPA_SUCCESS. */
sdpa_status_t sdpa_ze_check_arrays(sdpa_primitive_t *prim, const sdpa_exec_args_t *args,
                                   ze_command_list_handle_t list);

/* fwd.c */
/* fwd.c: the forward pass (the plan chooses the kernel, portable or fast
 * path). */
sdpa_status_t sdpa_ze_fwd_prepare(sdpa_primitive_t *prim);
/* Appends one forward execution to list, whose lock the caller holds;
 * list_scratch is that list's scratch, which a split-KV decode uses unless
 * args->scratch is set. */
sdpa_status_t sdpa_ze_fwd_execute(sdpa_primitive_t *prim, const sdpa_exec_args_t *args,
                                  ze_command_list_handle_t list, sdpa_scratch_t *list_scratch);

#endif /* SDPA_ZE_H */
