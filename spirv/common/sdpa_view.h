/*
 * sdpa_view.h - a tensor as a kernel sees it: a global pointer and the
 * element strides of its four dimensions [batch, head, sequence, head_dim]
 * (4-bit types: nibbles; a broadcast dimension has stride 0), as the host
 * passes them (sdpa_fwd_args.def). The kernels build their views from their
 * arguments once, in the prologue, and hand helpers one view instead of a
 * pointer and four strides, as FlashAttention's mainloop arguments carry a
 * tensor (pointer + layout).
 *
 * Plain structs in private memory: every helper that takes one is inlined,
 * and LLVM splits the struct back into scalars (SROA), so a view costs no
 * more than the loose arguments did.
 */
#ifndef SDPA_SPIRV_VIEW_H
#define SDPA_SPIRV_VIEW_H

/* An input tensor. */
typedef struct sdpa_view {
    const global void *p;
    long s0, s1, s2, s3;
} sdpa_view;

/* An output tensor. */
typedef struct sdpa_out_view {
    global void *p;
    long s0, s1, s2, s3;
} sdpa_out_view;

static inline __attribute__((always_inline)) sdpa_view sdpa_view_of(const global void *p, long s0,
                                                                    long s1, long s2, long s3)
{
    const sdpa_view v = {p, s0, s1, s2, s3};
    return v;
}

static inline __attribute__((always_inline)) sdpa_out_view
sdpa_out_view_of(global void *p, long s0, long s1, long s2, long s3)
{
    const sdpa_out_view v = {p, s0, s1, s2, s3};
    return v;
}

/* Builds the view of kernel argument NAME from NAME and NAME_S0..NAME_S3
 * (the spelling of the *_args.def tables). */
#define SDPA_VIEW(name) sdpa_view_of(name, name##_S0, name##_S1, name##_S2, name##_S3)
#define SDPA_OUT_VIEW(name) sdpa_out_view_of(name, name##_S0, name##_S1, name##_S2, name##_S3)

/* The element offset of batch b, head h: where that head's rows start. */
static inline __attribute__((always_inline)) long sdpa_view_head(const private sdpa_view *v, long b,
                                                                 int h)
{
    return b * v->s0 + (long)h * v->s1;
}

static inline __attribute__((always_inline)) long sdpa_out_view_head(const private sdpa_out_view *v,
                                                                     long b, int h)
{
    return b * v->s0 + (long)h * v->s1;
}

#endif /* SDPA_SPIRV_VIEW_H */
