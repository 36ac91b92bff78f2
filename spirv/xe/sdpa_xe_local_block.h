/*
 * sdpa_xe_local_block.h - sub-group block reads from local memory
 * (cl_intel_subgroup_local_block_io): component j of lane l of
 * sdpa_xe_local_read*(p) is p[j * SUBGROUP_SIZE + l], the layout of the
 * global block reads (sdpa_xe_intel.h); p must be 4-byte aligned. One
 * message reads a whole operand whose rows are stored one after the other,
 * where per-row loads take one message per row.
 *
 * llvm-spirv-15 turns the built-ins into OpSubgroupBlockReadINTEL on a
 * Workgroup pointer, which Debian 12's IGC and the current one lower for
 * every device of the gate. Intel's CPU OpenCL runtime does not report the
 * extension: the emulated variants (SDPA_XE_EMULATE) read the same elements
 * lane by lane, with the alignment the hardware requires checked (a
 * misaligned read returns a poison pattern, so a test fails).
 */
#ifndef SDPA_SPIRV_XE_LOCAL_BLOCK_H
#define SDPA_SPIRV_XE_LOCAL_BLOCK_H

#include "sdpa_xe_intel.h"

#ifdef SDPA_XE_EMULATE

/* Whether the hardware would refuse a block read at p. Not inlined: clang
 * would vectorize two of these tests into a vector of pointers, which
 * SPIR-V does not allow. */
static __attribute__((noinline)) bool sdpa_xe_local_misaligned(const local void *p)
{
    return ((ulong)p & 3) != 0;
}

/* A refused read returns 0xdead in every element. */
static inline ushort8 sdpa_xe_local_read_us8(const local ushort *p)
{
    if (sdpa_xe_local_misaligned(p))
        return (ushort8)0xdead;
    const local ushort *q = p + get_sub_group_local_id();
    const int n = SUBGROUP_SIZE;
    return (ushort8)(q[0], q[n], q[2 * n], q[3 * n], q[4 * n], q[5 * n], q[6 * n], q[7 * n]);
}

static inline uint8 sdpa_xe_local_read8(const local uint *p)
{
    if (sdpa_xe_local_misaligned(p))
        return (uint8)0xdeaddeadu;
    const local uint *q = p + get_sub_group_local_id();
    const int n = SUBGROUP_SIZE;
    return (uint8)(q[0], q[n], q[2 * n], q[3 * n], q[4 * n], q[5 * n], q[6 * n], q[7 * n]);
}

#else

ushort8 SDPA_XE_OVERLOAD intel_sub_group_block_read_us8(const local ushort *p);
uint8 SDPA_XE_OVERLOAD intel_sub_group_block_read8(const local uint *p);

static inline ushort8 sdpa_xe_local_read_us8(const local ushort *p)
{
    return intel_sub_group_block_read_us8(p);
}

static inline uint8 sdpa_xe_local_read8(const local uint *p)
{
    return intel_sub_group_block_read8(p);
}

#endif /* SDPA_XE_EMULATE */

#endif /* SDPA_SPIRV_XE_LOCAL_BLOCK_H */
