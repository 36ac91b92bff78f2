/* ref_dequant.c - one head of K or V as dense doubles in panel layouts,
 * integer types dequantized as (q - zero_point) * scale, FP8 ones as
 * fp8 * scale (scale 1 without scales). */
#include <string.h>

#include "ref.h"

/* Index of the scale or zero point of element (i0, h, i2, d) of K or V
 * (t): 0 per tensor; h per K/V head; per group a dense [dims[0], Hkv,
 * dims[2], D / group] array (sdpa.h; a paged cache's dims are the
 * cache's). */
static int64_t quant_index(sdpa_quant_kind_t kind, const sdpa_tensor_desc_t *t, int64_t group_size,
                           int64_t i0, int64_t h, int64_t i2, int64_t d)
{
    if (kind == SDPA_QUANT_PER_HEAD)
        return h;
    if (kind != SDPA_QUANT_PER_GROUP)
        return 0;
    int64_t groups = t->dims[3] / group_size;
    return ((i0 * t->dims[1] + h) * t->dims[2] + i2) * groups + d / group_size;
}

void ref_load_head(const ref_exec_t *x, char which, const ref_seq_t *seq, int64_t h,
                   ref_head_t *out)
{
    const sdpa_problem_desc_t *p = x->problem;
    const sdpa_shape_t *s = x->shape;
    const int is_k = which == 'k';
    const sdpa_tensor_desc_t *t = is_k ? &p->k : &p->v;
    const sdpa_quant_desc_t *quant = is_k ? &p->k_quant : &p->v_quant;
    const void *data = is_k ? x->args->k : x->args->v;
    const void *scales = is_k ? x->args->k_scales : x->args->v_scales;
    const void *zero_points = is_k ? x->args->k_zero_points : x->args->v_zero_points;
    const int quantized = sdpa_dtype_is_dequantized(t->dtype);
    const int64_t sk = s->k_len, dims = is_k ? s->head_size : s->head_size_v;

    /* Panel padding and keys past the sequence's stay zero. */
    if (out->key_panels != NULL)
        memset(out->key_panels, 0, ref_key_panels_size(sk, dims) * sizeof(double));
    if (out->dim_panels != NULL)
        memset(out->dim_panels, 0, ref_dim_panels_size(sk, dims) * sizeof(double));

    for (int64_t j = 0; j < seq->len_k; j++) {
        int64_t i0, i2;
        ref_key_row(seq, j, &i0, &i2);
        for (int64_t d = 0; d < dims; d++) {
            double value = sdpa_element_load(data, ref_offset(t, i0, h, i2, d), t->dtype);
            if (quantized) {
                double zero_point = 0.0;
                if (quant->zero_points != SDPA_QUANT_NONE)
                    zero_point = sdpa_element_load(
                            zero_points,
                            quant_index(quant->zero_points, t, quant->group_size, i0, h, i2, d),
                            quant->zero_points_dtype);
                double scale = 1.0;
                if (quant->scales != SDPA_QUANT_NONE)
                    scale = sdpa_element_load(
                            scales, quant_index(quant->scales, t, quant->group_size, i0, h, i2, d),
                            quant->scales_dtype);
                value = (value - zero_point) * scale;
            }
            if (out->key_panels != NULL)
                out->key_panels[((j / REF_PANEL) * dims + d) * REF_PANEL + j % REF_PANEL] = value;
            if (out->dim_panels != NULL)
                out->dim_panels[((d / REF_PANEL) * sk + j) * REF_PANEL + d % REF_PANEL] = value;
        }
    }
}
