/* ref_dequant.c - one head of K or V as dense doubles in panel layouts,
 * integer types dequantized as (q - zero_point) * scale. */
#include <string.h>

#include "ref.h"

/* Index of the scale or zero point of element (b, h, j, d): 0 per tensor;
 * per group a dense [B, Hkv, Sk, D / group_size] array. */
static int64_t quant_index(sdpa_quant_kind_t kind, const sdpa_shape_t *s, int64_t group_size,
                           int64_t b, int64_t h, int64_t j, int64_t d)
{
    if (kind != SDPA_QUANT_PER_GROUP)
        return 0;
    int64_t groups = s->head_size / group_size;
    return ((b * s->kv_heads + h) * s->k_len + j) * groups + d / group_size;
}

void ref_load_head(const ref_exec_t *x, char which, int64_t b, int64_t h, ref_head_t *out)
{
    const sdpa_problem_desc_t *p = x->problem;
    const sdpa_shape_t *s = x->shape;
    const int is_k = which == 'k';
    const sdpa_tensor_desc_t *t = is_k ? &p->k : &p->v;
    const sdpa_quant_desc_t *quant = is_k ? &p->k_quant : &p->v_quant;
    const void *data = is_k ? x->args->k : x->args->v;
    const void *scales = is_k ? x->args->k_scales : x->args->v_scales;
    const void *zero_points = is_k ? x->args->k_zero_points : x->args->v_zero_points;
    const int quantized = sdpa_dtype_is_quantized(t->dtype);
    const int64_t sk = s->k_len, dims = s->head_size;

    /* Panel padding stays zero. */
    if (out->key_panels != NULL)
        memset(out->key_panels, 0, ref_key_panels_size(sk, dims) * sizeof(double));
    if (out->dim_panels != NULL)
        memset(out->dim_panels, 0, ref_dim_panels_size(sk, dims) * sizeof(double));

    for (int64_t j = 0; j < sk; j++) {
        for (int64_t d = 0; d < dims; d++) {
            double value = sdpa_element_load(data, ref_offset(t, b, h, j, d), t->dtype);
            if (quantized) {
                double zero_point = 0.0;
                if (quant->zero_points != SDPA_QUANT_NONE)
                    zero_point = sdpa_element_load(
                            zero_points,
                            quant_index(quant->zero_points, s, quant->group_size, b, h, j, d),
                            quant->zero_points_dtype);
                double scale = sdpa_element_load(
                        scales, quant_index(quant->scales, s, quant->group_size, b, h, j, d),
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
