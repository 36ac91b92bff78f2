/*
 * spec_probe.cl - the driver tests' kernels: one reads a specialization
 * constant of each type; the others exercise local memory and sub-groups.
 */
#include "spec_constants.h"

/* out[0..4] receive the five probe constants, widened to long (the float's
 * bits, the bool as 0/1), so the host can check each one took effect. */
kernel void spec_probe(global long *out)
{
    if (get_global_id(0) != 0)
        return;
    out[0] = SC(PROBE_INT);
    out[1] = SC(PROBE_UINT);
    out[2] = SC(PROBE_LONG);
    out[3] = as_int(SC(PROBE_FLOAT));
    out[4] = SC(PROBE_BOOL) ? 1 : 0;
}

/* dst[i] = src[i] * SC(PROBE_INT) + SC(PROBE_LONG): results that depend on
 * constants for every element, to tell two specializations apart. */
kernel void spec_axpb(global const int *src, global long *dst, ulong n)
{
    size_t i = get_global_id(0);
    if (i < n)
        dst[i] = (long)src[i] * SC(PROBE_INT) + SC(PROBE_LONG);
}

/* Reverses each work-group's slice of src through a local-memory argument
 * whose size the host sets at launch. */
kernel void local_reverse(global const float *src, global float *dst, local float *tile)
{
    size_t lid = get_local_id(0), n = get_local_size(0);
    tile[lid] = src[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    dst[get_global_id(0)] = tile[n - 1 - lid];
}

/* Per work-item: the sub-group size, its local id, and the sub-group sum of
 * the work-item ids, which the host recomputes. */
__attribute__((intel_reqd_sub_group_size(SUBGROUP_SIZE)))
kernel void subgroup_probe(global int *sg_size, global int *sg_lid, global int *sg_sum)
{
    size_t i = get_global_id(0);
    sg_size[i] = get_sub_group_size();
    sg_lid[i] = get_sub_group_local_id();
    sg_sum[i] = sub_group_reduce_add((int)i);
}

/* dst[i] = src[i] + 1: the smallest kernel, for ordering tests. */
kernel void add_one(global const int *src, global int *dst)
{
    size_t i = get_global_id(0);
    dst[i] = src[i] + 1;
}
