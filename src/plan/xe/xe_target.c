/* xe_target.c - whether and how a device runs the fast-path kernels. */
#include "xe_target.h"

#define STRING_OF(macro) STRING_OF_TOKENS(macro)
#define STRING_OF_TOKENS(tokens) #tokens

/* The native target of a device class, or 0 if the class has no matrix
 * engine (or may not have one: Xe-HPG's integrated parts, Meteor Lake's
 * Xe-LPG, have none, so integrated Xe-HPG devices keep the portable path).
 * Every class builds the forward with the 256-register file: Intel's
 * current compiler (IGC 2.40) spills Xe-HPG's forward tiles 0.5-2.3 KiB per
 * thread in 128 registers, where IGC 1.0.12504 did not (doc/gpu-isa.md). */
static int native_target(const sdpa_device_info_t *device, sdpa_xe_target_t *t)
{
    switch (device->device_class) {
    case SDPA_DEVICE_CLASS_XE_HPG:
        if (device->integrated)
            return 0;
        *t = (sdpa_xe_target_t){SDPA_DEVICE_CLASS_XE_HPG, 8, 0, 1, 0};
        return 1;
    case SDPA_DEVICE_CLASS_XE_HPC:
    case SDPA_DEVICE_CLASS_XE2:
    case SDPA_DEVICE_CLASS_XE3:
        *t = (sdpa_xe_target_t){device->device_class, 16, 0, 1, 0};
        return 1;
    default:
        return 0;
    }
}

int sdpa_xe_target_of(const sdpa_device_info_t *device, sdpa_xe_target_t *t, const char **why)
{
    int native = native_target(device, t);
    switch (device->kernels) {
    case SDPA_KERNELS_PORTABLE:
        *why = "SDPA_ZE_KERNELS=portable";
        return 0;
    case SDPA_KERNELS_AUTO:
        if (!native)
            *why = "the device has no matrix engine";
        return native;
    case SDPA_KERNELS_XE:
    case SDPA_KERNELS_XE_HPG:
        if (native)
            return 1;
        /* No matrix engine: the emulated variants, with the rows of the
         * class asked for. */
        if (device->kernels == SDPA_KERNELS_XE_HPG)
            *t = (sdpa_xe_target_t){SDPA_DEVICE_CLASS_XE_HPG, 8, 1, 0, 0};
        else
            *t = (sdpa_xe_target_t){SDPA_DEVICE_CLASS_XE_HPC, 16, 1, 0, 0};
        return 1;
    }
    *why = "unknown kernel set";
    return 0;
}

const char *sdpa_xe_unimplemented_feature(const sdpa_problem_desc_t *p)
{
    if (p->window.enabled)
        return "the fast path has no sliding window";
    if (p->softcap > 0.0f)
        return "the fast path has no softcap";
    if (p->alibi != SDPA_ALIBI_NONE)
        return "the fast path has no ALiBi";
    if (p->varlen.enabled)
        return "the fast path has no variable-length batches";
    if (p->paged_kv.enabled)
        return "the fast path has no paged KV cache";
    if (p->sinks)
        return "the fast path has no attention sinks";
    return NULL;
}

const char *sdpa_xe_refusal(const sdpa_problem_desc_t *p, const sdpa_shape_t *shape,
                            const sdpa_device_info_t *device, sdpa_xe_target_t *t)
{
    const char *reason = NULL;
    if (!sdpa_xe_target_of(device, t, &reason))
        return reason;
    if (!sdpa_device_supports_subgroup(device, t->subgroup_size))
        return "the device lacks the fast path's sub-group size";
    if (p->q.dtype != SDPA_DTYPE_F16 && p->q.dtype != SDPA_DTYPE_BF16)
        return "Q is neither f16 nor bf16";
    if (p->q.dtype == SDPA_DTYPE_F16 && !device->has_fp16)
        return "the device has no fp16";
    if (shape->head_size > SDPA_XE_MAX_HEAD_SIZE)
        return "the head size is above " STRING_OF(SDPA_XE_MAX_HEAD_SIZE);
    if (shape->head_size_v != shape->head_size)
        return "V's head size differs from Q's (the fast path's tiles share one)";
    return sdpa_xe_unimplemented_feature(p);
}
