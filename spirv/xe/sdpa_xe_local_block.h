/*
 * sdpa_xe_local_block.h - sub-group block reads and writes of local memory
 * (cl_intel_subgroup_local_block_io), the one place the xe kernels take
 * them from: component j of lane l of sdpa_xe_local_read*(p) is
 * p[j * SUBGROUP_SIZE + l], the layout of the global block reads
 * (sdpa_xe_intel.h), and sdpa_xe_local_write*(p, v) stores component j
 * of lane l there; p must be 4-byte aligned for a read, 16-byte aligned
 * for a write (cl_intel_subgroups' rules). One message moves a whole
 * operand whose rows are stored one after the other, where per-row
 * accesses take one message per row, each with its own per-lane address.
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

/* Whether the hardware would refuse a block write at p: writes need 16
 * bytes (cl_intel_subgroups), reads only 4. Not inlined, as above. */
static __attribute__((noinline)) bool sdpa_xe_local_write_misaligned(const local void *p)
{
    return ((ulong)p & 15) != 0;
}

/* Component sj of a lane's part of a block is q[j * n] (q: the block plus
 * the lane, n: SUBGROUP_SIZE): the N components as a vector literal's list
 * (SDPA_XE_LANE<N>), or X(j, sj) for each (SDPA_XE_COMPONENTS<N>). */
#define SDPA_XE_LANE4(q, n) q[0], q[n], q[2 * n], q[3 * n]
#define SDPA_XE_LANE8(q, n) SDPA_XE_LANE4(q, n), q[4 * n], q[5 * n], q[6 * n], q[7 * n]
#define SDPA_XE_COMPONENTS2(X) X(0, s0) X(1, s1)
#define SDPA_XE_COMPONENTS4(X) SDPA_XE_COMPONENTS2(X) X(2, s2) X(3, s3)
#define SDPA_XE_COMPONENTS8(X) SDPA_XE_COMPONENTS4(X) X(4, s4) X(5, s5) X(6, s6) X(7, s7)

/* sdpa_xe_local_read<suffix>, N (4 or 8) components of T. A refused read
 * returns poison (0xdead, 0xdeaddead) in every element. */
#define SDPA_XE_LOCAL_READ(suffix, T, N, poison)                                                   \
    static inline T##N sdpa_xe_local_read##suffix(const local T *p)                                \
    {                                                                                              \
        if (sdpa_xe_local_misaligned(p))                                                           \
            return (T##N)poison;                                                                   \
        const local T *q = p + get_sub_group_local_id();                                           \
        const int n = SUBGROUP_SIZE;                                                               \
        return (T##N)(SDPA_XE_LANE##N(q, n));                                                      \
    }

/* sdpa_xe_local_write<suffix>, the converse. A refused write stores poison
 * in every element instead, or nothing where p is not even on a 32-bit
 * element (T uint). */
#define SDPA_XE_LOCAL_STORE(j, c) q[(j) * n] = refused ? poison_value : v.c;
#define SDPA_XE_LOCAL_WRITE(suffix, T, N, poison)                                                  \
    static inline void sdpa_xe_local_write##suffix(local T *p, T##N v)                             \
    {                                                                                              \
        const bool refused = sdpa_xe_local_write_misaligned(p);                                    \
        if (sizeof(T) == 4 && sdpa_xe_local_misaligned(p))                                         \
            return; /* not even on an element: nothing to poison */                                \
        local T *q = p + get_sub_group_local_id();                                                 \
        const int n = SUBGROUP_SIZE;                                                               \
        const T poison_value = (T)poison;                                                          \
        SDPA_XE_COMPONENTS##N(SDPA_XE_LOCAL_STORE)                                                 \
    }

SDPA_XE_LOCAL_READ(_us8, ushort, 8, 0xdead)
SDPA_XE_LOCAL_READ(8, uint, 8, 0xdeaddeadu)
SDPA_XE_LOCAL_READ(_us4, ushort, 4, 0xdead)
SDPA_XE_LOCAL_READ(4, uint, 4, 0xdeaddeadu)
SDPA_XE_LOCAL_WRITE(_us4, ushort, 4, 0xdead)
SDPA_XE_LOCAL_WRITE(2, uint, 2, 0xdeaddeadu)
SDPA_XE_LOCAL_WRITE(_us8, ushort, 8, 0xdead)
SDPA_XE_LOCAL_WRITE(8, uint, 8, 0xdeaddeadu)

#else

ushort8 SDPA_XE_OVERLOAD intel_sub_group_block_read_us8(const local ushort *p);
uint8 SDPA_XE_OVERLOAD intel_sub_group_block_read8(const local uint *p);
void SDPA_XE_OVERLOAD intel_sub_group_block_write8(local uint *p, uint8 data);
ushort4 SDPA_XE_OVERLOAD intel_sub_group_block_read_us4(const local ushort *p);
uint4 SDPA_XE_OVERLOAD intel_sub_group_block_read4(const local uint *p);
void SDPA_XE_OVERLOAD intel_sub_group_block_write_us4(local ushort *p, ushort4 data);
void SDPA_XE_OVERLOAD intel_sub_group_block_write2(local uint *p, uint2 data);
void SDPA_XE_OVERLOAD intel_sub_group_block_write_us8(local ushort *p, ushort8 data);

static inline ushort8 sdpa_xe_local_read_us8(const local ushort *p)
{
    return intel_sub_group_block_read_us8(p);
}

static inline uint8 sdpa_xe_local_read8(const local uint *p)
{
    return intel_sub_group_block_read8(p);
}

static inline ushort4 sdpa_xe_local_read_us4(const local ushort *p)
{
    return intel_sub_group_block_read_us4(p);
}

static inline uint4 sdpa_xe_local_read4(const local uint *p)
{
    return intel_sub_group_block_read4(p);
}

static inline void sdpa_xe_local_write_us4(local ushort *p, ushort4 v)
{
    intel_sub_group_block_write_us4(p, v);
}

static inline void sdpa_xe_local_write2(local uint *p, uint2 v)
{
    intel_sub_group_block_write2(p, v);
}

static inline void sdpa_xe_local_write_us8(local ushort *p, ushort8 v)
{
    intel_sub_group_block_write_us8(p, v);
}

static inline void sdpa_xe_local_write8(local uint *p, uint8 v)
{
    intel_sub_group_block_write8(p, v);
}

#endif /* SDPA_XE_EMULATE */

#endif /* SDPA_SPIRV_XE_LOCAL_BLOCK_H */
