/* problem_copy.c - the byte-exact copies of caller structs the checks work
 * on and keep. */
#include <stddef.h>
#include <string.h>

#include "problem.h"
#include "problem_llm.h"

void sdpa_copy_struct(void *out, size_t out_size, const void *in, size_t in_size)
{
    size_t n = in_size < out_size ? in_size : out_size;
    memcpy(out, in, n);
    memset((char *)out + n, 0, out_size - n);
}

/* Zeroes the bytes of *p from the end of member `before` to member `after`
 * (alignment padding). */
#define ZERO_GAP(p, type, before, after)                                                           \
    memset((char *)(p) + offsetof(type, before) + sizeof((p)->before), 0,                          \
           offsetof(type, after) - offsetof(type, before) - sizeof((p)->before))

/* The padding the fix-ups below zero, and nothing else: sdpa_tensor_desc_t
 * pads after dtype only, the quantization and dropout descriptors not at
 * all, and the problem after prop_kind, after mask_kind and after its 1.0
 * members. The members ABI 1.1 appended (varlen ... num_splits) are copied
 * member by member by sdpa_llm_copy over the zeroed tail. ABI versions append
 * members (sdpa.h): whoever appends one after `sinks` (ABI 1.2) must copy it
 * there, which the first assertion will not let them forget. */
_Static_assert(sizeof(sdpa_problem_desc_t) ==
                       (offsetof(sdpa_problem_desc_t, sinks) + sizeof(uint32_t) + 7) / 8 * 8,
               "a member was appended to sdpa_problem_desc_t: copy it in sdpa_llm_copy");
_Static_assert(offsetof(sdpa_tensor_desc_t, strides) + sizeof(int64_t[4]) ==
                       sizeof(sdpa_tensor_desc_t),
               "sdpa_tensor_desc_t changed: zero its padding in zero_tensor_padding");
_Static_assert(sizeof(sdpa_quant_desc_t) == 4 * sizeof(uint32_t) + sizeof(int64_t),
               "sdpa_quant_desc_t has padding now: zero it in sdpa_problem_copy");
_Static_assert(sizeof(sdpa_dropout_desc_t) == 4 * sizeof(uint32_t),
               "sdpa_dropout_desc_t has padding now: zero it in sdpa_problem_copy");

static void zero_tensor_padding(sdpa_tensor_desc_t *t)
{
    ZERO_GAP(t, sdpa_tensor_desc_t, dtype, dims);
}

void sdpa_problem_copy(sdpa_problem_desc_t *out, const sdpa_problem_desc_t *d)
{
    /* Every member, whatever members are added... */
    *out = *d;
    /* ...then every padding byte zero (the caller's padding is garbage). */
    ZERO_GAP(out, sdpa_problem_desc_t, prop_kind, q);
    ZERO_GAP(out, sdpa_problem_desc_t, mask_kind, mask);
    const size_t end = offsetof(sdpa_problem_desc_t, deterministic) + sizeof(out->deterministic);
    memset((char *)out + end, 0, sizeof(*out) - end);
    sdpa_tensor_desc_t *tensors[] = {&out->q,      &out->k,        &out->v,      &out->dst,
                                     &out->mask,   &out->diff_dst, &out->diff_q, &out->diff_k,
                                     &out->diff_v, &out->ds};
    for (size_t i = 0; i < sizeof(tensors) / sizeof(tensors[0]); i++)
        zero_tensor_padding(tensors[i]);
    sdpa_llm_copy(out, d); /* the 1.1 members, over the zeroed tail */
}
