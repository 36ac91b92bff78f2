/*
 * sdpa_uniform.h - integer min / max / clamp for values that are the same
 * in every lane of a sub-group (tile bounds, loop trip counts).
 *
 * Plain conditionals on purpose: the OpenCL built-ins min() and clamp() are
 * calls to the device compiler's library, and Intel's CPU vectorizer treats
 * the result of such a call as varying across lanes even when every
 * argument is uniform. A loop bound or branch condition computed with them
 * then makes everything it controls run under a lane mask (masked loads and
 * stores, blends), several times slower.
 */
#ifndef SDPA_SPIRV_UNIFORM_H
#define SDPA_SPIRV_UNIFORM_H

static inline int sdpa_imin(int a, int b)
{
    return a < b ? a : b;
}

static inline int sdpa_imax(int a, int b)
{
    return a > b ? a : b;
}

static inline int sdpa_iclamp(int x, int lo, int hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

#endif /* SDPA_SPIRV_UNIFORM_H */
