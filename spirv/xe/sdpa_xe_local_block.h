/*
 * sdpa_xe_local_block.h - sub-group block reads and writes of local memory
 * (cl_intel_subgroup_local_block_io), the one place the xe kernels take
 * them from: component j of lane l of sdpa_xe_local_read*(p) and of
 * sdpa_xe_local_write8(p, x) is p[j * SUBGROUP_SIZE + l], the layout of the
 * global block reads (sdpa_xe_intel.h); p must be 4-byte aligned for a
 * read, 16-byte aligned for a write (cl_intel_subgroups' rules). One
 * message moves a whole operand whose rows are stored one after the other,
 * where per-row loads take one message per row.
 *
 * llvm-spirv-15 turns the built-ins into OpSubgroupBlockReadINTEL (and
 * ..WriteINTEL) on a Workgroup pointer, which Debian 12's IGC and the
 * current one lower for every device of the gate. Intel's CPU OpenCL
 * runtime has them but takes any address: the emulated variants
 * (SDPA_XE_EMULATE) move the same elements lane by lane, with the
 * alignment the hardware requires checked (a misaligned read returns a
 * poison pattern, a misaligned write stores one, so a test fails).
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

static __attribute__((noinline)) bool sdpa_xe_local_write_misaligned(const local void *p)
{
    return ((ulong)p & 15) != 0;
}

/* A refused write stores 0xdeaddead in every element instead. */
static inline void sdpa_xe_local_write8(local uint *p, uint8 x)
{
    local uint *q = p + get_sub_group_local_id();
    const int n = SUBGROUP_SIZE;
    if (sdpa_xe_local_write_misaligned(p)) {
        for (int j = 0; j < 8; j++)
            q[j * n] = 0xdeaddeadu;
        return;
    }
    const private uint *v = (const private uint *)&x;
    for (int j = 0; j < 8; j++)
        q[j * n] = v[j];
}

#else

ushort8 SDPA_XE_OVERLOAD intel_sub_group_block_read_us8(const local ushort *p);
uint8 SDPA_XE_OVERLOAD intel_sub_group_block_read8(const local uint *p);
void SDPA_XE_OVERLOAD intel_sub_group_block_write8(local uint *p, uint8 data);

static inline ushort8 sdpa_xe_local_read_us8(const local ushort *p)
{
    return intel_sub_group_block_read_us8(p);
}

static inline uint8 sdpa_xe_local_read8(const local uint *p)
{
    return intel_sub_group_block_read8(p);
}

static inline void sdpa_xe_local_write8(local uint *p, uint8 x)
{
    intel_sub_group_block_write8(p, x);
}

#endif /* SDPA_XE_EMULATE */

#endif /* SDPA_SPIRV_XE_LOCAL_BLOCK_H */
