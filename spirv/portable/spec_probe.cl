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
__attribute__((intel_reqd_sub_group_size(SUBGROUP_SIZE))) kernel void
subgroup_probe(global int *sg_size, global int *sg_lid, global int *sg_sum)
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

/* 45 arguments of every kind the attention kernels take (pointers, longs,
 * ints, floats, one local buffer). Weighting each argument by its position
 * makes a swapped or dropped argument change the sums the host checks:
 * out[0] = sum (k+1) l_k, out[1] = sum (k+1) i_k, out[2] = the bits of
 * sum (k+1) f_k, out[3 + group] = sum of the group's inputs through local memory. */
kernel void many_args(global long *out, global const int *in, local int *scratch, long l0, long l1,
                      long l2, long l3, long l4, long l5, long l6, long l7, long l8, long l9,
                      long l10, long l11, long l12, long l13, int i0, int i1, int i2, int i3,
                      int i4, int i5, int i6, int i7, int i8, int i9, int i10, int i11, int i12,
                      int i13, float f0, float f1, float f2, float f3, float f4, float f5, float f6,
                      float f7, float f8, float f9, float f10, float f11, float f12, float f13)
{
    size_t lid = get_local_id(0), n = get_local_size(0);
    scratch[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        long sum = 0;
        for (size_t k = 0; k < n; k++)
            sum += scratch[k];
        out[3 + get_group_id(0)] = sum;
    }
    if (get_global_id(0) != 0)
        return;
    out[0] = l0 + 2 * l1 + 3 * l2 + 4 * l3 + 5 * l4 + 6 * l5 + 7 * l6 + 8 * l7 + 9 * l8 + 10 * l9 +
             11 * l10 + 12 * l11 + 13 * l12 + 14 * l13;
    out[1] = i0 + 2 * i1 + 3 * i2 + 4 * i3 + 5 * i4 + 6 * i5 + 7 * i6 + 8 * i7 + 9 * i8 + 10 * i9 +
             11 * i10 + 12 * i11 + 13 * i12 + 14 * i13;
    float f = f0 + 2 * f1 + 3 * f2 + 4 * f3 + 5 * f4 + 6 * f5 + 7 * f6 + 8 * f7 + 9 * f8 + 10 * f9 +
              11 * f10 + 12 * f11 + 13 * f12 + 14 * f13;
    out[2] = as_int(f);
}
