/* oracle.c - the independent double-precision oracle: naive softmax(QK^T * scale + mask) V
 * and its gradients on dense copies of a case's inputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "philox.h"

/* Dequantized element of K or V (this file's own indexing). */
static double kv_get(const attn_case_t *c, int which, int64_t b, int64_t h, int64_t j, int64_t d)
{
    const sdpa_problem_desc_t *p = &c->desc;
    const sdpa_tensor_desc_t *t = which == 'k' ? &p->k : &p->v;
    const sdpa_quant_desc_t *qd = which == 'k' ? &p->k_quant : &p->v_quant;
    const void *data = which == 'k' ? c->args.k : c->args.v;
    double x = tensor_get(t, data, b, h, j, d);
    if (qd->scales == SDPA_QUANT_NONE)
        return x;
    int64_t groups = qd->group_size > 0 ? t->dims[3] / qd->group_size : 1;
    int64_t group_index = ((b * t->dims[1] + h) * t->dims[2] + j) * groups +
                          (qd->group_size > 0 ? d / qd->group_size : 0);
    const void *scales = which == 'k' ? c->args.k_scales : c->args.v_scales;
    const void *zps = which == 'k' ? c->args.k_zero_points : c->args.v_zero_points;
    double zp = 0;
    if (qd->zero_points != SDPA_QUANT_NONE)
        zp = elem_get(zps, qd->zero_points == SDPA_QUANT_PER_GROUP ? group_index : 0,
                      qd->zero_points_dtype);
    double s = elem_get(scales, qd->scales == SDPA_QUANT_PER_GROUP ? group_index : 0,
                        qd->scales_dtype);
    return (x - zp) * s;
}

/* Dropout keep decision from the counter layout of sdpa.h. */
static int oracle_keep(uint64_t seed, uint64_t offset, uint64_t n, float p)
{
    uint64_t counter64 = offset + n / 4;
    uint32_t counter[4] = {(uint32_t)(counter64 & 0xffffffffu), (uint32_t)(counter64 >> 32), 0, 0};
    uint32_t key[2] = {(uint32_t)(seed & 0xffffffffu), (uint32_t)(seed >> 32)};
    uint32_t out[4];
    sdpa_philox4x32_10(counter, key, out);
    double uniform = (double)(out[n % 4] >> 8) / 16777216.0;
    return uniform >= (double)p;
}

int oracle_init(oracle_t *o, const attn_case_t *c)
{
    const sdpa_problem_desc_t *p = &c->desc;
    const sdpa_exec_args_t *a = &c->args;
    memset(o, 0, sizeof(*o));
    o->B = p->q.dims[0];
    o->Hq = p->q.dims[1];
    o->Hkv = p->k.dims[1];
    o->Sq = p->q.dims[2];
    o->Sk = p->k.dims[2];
    o->D = p->q.dims[3];
    const int64_t B = o->B, Hq = o->Hq, Hkv = o->Hkv, Sq = o->Sq, Sk = o->Sk, D = o->D;
    o->q = malloc(sizeof(double) * (size_t)(B * Hq * Sq * D));
    o->k = malloc(sizeof(double) * (size_t)(B * Hkv * Sk * D));
    o->v = malloc(sizeof(double) * (size_t)(B * Hkv * Sk * D));
    o->bias = malloc(sizeof(double) * (size_t)(B * Hq * Sq * Sk));
    o->drop = malloc(sizeof(double) * (size_t)(B * Hq * Sq * Sk));
    if (p->prop_kind == SDPA_BACKWARD)
        o->dout = malloc(sizeof(double) * (size_t)(B * Hq * Sq * D));
    if (!o->q || !o->k || !o->v || !o->bias || !o->drop ||
        (p->prop_kind == SDPA_BACKWARD && !o->dout))
        abort();

    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Hq; h++)
            for (int64_t i = 0; i < Sq; i++)
                for (int64_t d = 0; d < D; d++) {
                    int64_t e = ((b * Hq + h) * Sq + i) * D + d;
                    o->q[e] = tensor_get(&p->q, a->q, b, h, i, d);
                    if (o->dout)
                        o->dout[e] = tensor_get(&p->diff_dst, a->diff_dst, b, h, i, d);
                }
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Hkv; h++)
            for (int64_t j = 0; j < Sk; j++)
                for (int64_t d = 0; d < D; d++) {
                    int64_t e = ((b * Hkv + h) * Sk + j) * D + d;
                    o->k[e] = kv_get(c, 'k', b, h, j, d);
                    o->v[e] = kv_get(c, 'v', b, h, j, d);
                }

    float drop_p = 0;
    uint64_t seed = 0, offset = 0;
    if (p->dropout.enabled) {
        if (p->dropout.host_scalars) {
            drop_p = a->dropout_p;
            seed = (uint64_t)a->dropout_seed;
            offset = p->dropout.with_offset ? (uint64_t)a->dropout_offset : 0;
        } else {
            drop_p = *(const float *)a->dropout_p_ptr;
            seed = (uint64_t) * (const int64_t *)a->dropout_seed_ptr;
            offset = p->dropout.with_offset ? (uint64_t) * (const int64_t *)a->dropout_offset_ptr
                                            : 0;
        }
    }
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Hq; h++)
            for (int64_t i = 0; i < Sq; i++)
                for (int64_t j = 0; j < Sk; j++) {
                    int64_t e = ((b * Hq + h) * Sq + i) * Sk + j;
                    double bias = 0;
                    if (p->mask_kind == SDPA_MASK_BUFFER) {
                        const sdpa_tensor_desc_t *m = &p->mask;
                        bias = tensor_get(m, a->mask, m->dims[0] == 1 ? 0 : b,
                                          m->dims[1] == 1 ? 0 : h, m->dims[2] == 1 ? 0 : i, j);
                    } else if (p->mask_kind == SDPA_MASK_CAUSAL_TOP_LEFT && j > i) {
                        bias = -INFINITY;
                    } else if (p->mask_kind == SDPA_MASK_CAUSAL_BOTTOM_RIGHT && j > i + Sk - Sq) {
                        bias = -INFINITY;
                    }
                    o->bias[e] = bias;
                    o->drop[e] = 1.0;
                    if (p->dropout.enabled)
                        o->drop[e] = oracle_keep(seed, offset, (uint64_t)e, drop_p)
                                             ? 1.0 / (1.0 - (double)drop_p)
                                             : 0.0;
                }

    double s = 1.0;
    if (p->scale_kind == SDPA_SCALE_HOST)
        s = a->scale;
    else if (p->scale_kind == SDPA_SCALE_DEVICE)
        s = elem_get(a->scale_ptr, 0, p->scale_dtype);
    o->scale = (p->scale_kind != SDPA_SCALE_NONE && p->invert_scale) ? 1.0 / s : s;
    o->inf_as_zero = p->softmax_kind == SDPA_SOFTMAX_INF_AS_ZERO;
    return 0;
}

void oracle_free(oracle_t *o)
{
    free(o->q);
    free(o->k);
    free(o->v);
    free(o->bias);
    free(o->drop);
    free(o->dout);
    memset(o, 0, sizeof(*o));
}

/* Softmax row of query (b, h, i) into prob[Sk]; returns the log-sum-exp.
 * A row that sees no key has log-sum-exp -inf (sdpa.h) and probabilities 0
 * with dead_as_zero (INF_AS_ZERO, and backward in both modes), else NaN
 * (the forward output of ACCURATE). */
static double oracle_softmax_row(const oracle_t *o, int64_t b, int64_t h, int64_t i, double *prob,
                                 int dead_as_zero)
{
    const int64_t kvh = h / (o->Hq / o->Hkv);
    const double *q = o->q + ((b * o->Hq + h) * o->Sq + i) * o->D;
    const double *bias = o->bias + ((b * o->Hq + h) * o->Sq + i) * o->Sk;
    double max = -INFINITY;
    for (int64_t j = 0; j < o->Sk; j++) {
        const double *k = o->k + ((b * o->Hkv + kvh) * o->Sk + j) * o->D;
        double dot = 0;
        for (int64_t d = 0; d < o->D; d++)
            dot += q[d] * k[d];
        prob[j] = o->scale * dot + bias[j];
        if (prob[j] > max)
            max = prob[j];
    }
    if (max == -INFINITY) {
        for (int64_t j = 0; j < o->Sk; j++)
            prob[j] = dead_as_zero ? 0.0 : NAN;
        return -INFINITY;
    }
    double sum = 0;
    for (int64_t j = 0; j < o->Sk; j++)
        sum += exp(prob[j] - max);
    for (int64_t j = 0; j < o->Sk; j++)
        prob[j] = exp(prob[j] - max) / sum;
    return max + log(sum);
}

/* The forward with dead rows as the problem's softmax kind says, or as
 * zeros (what backward differentiates). */
static void forward_rows(const oracle_t *o, double *out, double *lse, int dead_as_zero)
{
    double *prob = malloc(sizeof(double) * (size_t)o->Sk);
    if (prob == NULL)
        abort();
    for (int64_t b = 0; b < o->B; b++)
        for (int64_t h = 0; h < o->Hq; h++)
            for (int64_t i = 0; i < o->Sq; i++) {
                const int64_t row = (b * o->Hq + h) * o->Sq + i;
                const int64_t kvh = h / (o->Hq / o->Hkv);
                double l = oracle_softmax_row(o, b, h, i, prob, dead_as_zero);
                if (lse)
                    lse[row] = l;
                if (!out)
                    continue;
                for (int64_t d = 0; d < o->D; d++) {
                    double acc = 0;
                    for (int64_t j = 0; j < o->Sk; j++) {
                        double pd = o->drop[row * o->Sk + j] == 0.0
                                            ? 0.0
                                            : prob[j] * o->drop[row * o->Sk + j];
                        if (pd != 0.0)
                            acc += pd * o->v[((b * o->Hkv + kvh) * o->Sk + j) * o->D + d];
                    }
                    out[row * o->D + d] = acc;
                }
            }
    free(prob);
}

void oracle_forward(const oracle_t *o, double *out, double *lse)
{
    forward_rows(o, out, lse, o->inf_as_zero);
}

void oracle_backward(const oracle_t *o, double *dq, double *dk, double *dv, double *ds)
{
    const int64_t B = o->B, Hq = o->Hq, Hkv = o->Hkv, Sq = o->Sq, Sk = o->Sk, D = o->D;
    const int64_t group = Hq / Hkv;
    double *P = malloc(sizeof(double) * (size_t)(Sq * Sk));
    double *dP = malloc(sizeof(double) * (size_t)(Sq * Sk));
    if (!P || !dP)
        abort();
    if (dk)
        memset(dk, 0, sizeof(double) * (size_t)(B * Hkv * Sk * D));
    if (dv)
        memset(dv, 0, sizeof(double) * (size_t)(B * Hkv * Sk * D));
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Hq; h++) {
            const int64_t kvh = h / group;
            const double *K = o->k + (b * Hkv + kvh) * Sk * D;
            const double *V = o->v + (b * Hkv + kvh) * Sk * D;
            const double *Q = o->q + (b * Hq + h) * Sq * D;
            const double *dO = o->dout + (b * Hq + h) * Sq * D;
            const double *drop = o->drop + (b * Hq + h) * Sq * Sk;
            for (int64_t i = 0; i < Sq; i++)
                oracle_softmax_row(o, b, h, i, P + i * Sk, 1);
            for (int64_t i = 0; i < Sq; i++) {
                double Di = 0;
                for (int64_t j = 0; j < Sk; j++) {
                    double dot = 0;
                    for (int64_t d = 0; d < D; d++)
                        dot += dO[i * D + d] * V[j * D + d];
                    dP[i * Sk + j] = drop[i * Sk + j] * dot;
                    Di += P[i * Sk + j] * dP[i * Sk + j];
                }
                for (int64_t j = 0; j < Sk; j++) {
                    double p = P[i * Sk + j];
                    double dS = p * (dP[i * Sk + j] - Di);
                    dP[i * Sk + j] = dS;
                    if (ds)
                        ds[((b * Hq + h) * Sq + i) * Sk + j] = dS;
                }
            }
            for (int64_t i = 0; i < Sq && dq; i++)
                for (int64_t d = 0; d < D; d++) {
                    double acc = 0;
                    for (int64_t j = 0; j < Sk; j++)
                        acc += dP[i * Sk + j] * K[j * D + d];
                    dq[((b * Hq + h) * Sq + i) * D + d] = o->scale * acc;
                }
            for (int64_t j = 0; j < Sk; j++)
                for (int64_t d = 0; d < D; d++) {
                    double acc_k = 0, acc_v = 0;
                    for (int64_t i = 0; i < Sq; i++) {
                        acc_k += dP[i * Sk + j] * Q[i * D + d];
                        double pd =
                                drop[i * Sk + j] == 0.0 ? 0.0 : P[i * Sk + j] * drop[i * Sk + j];
                        acc_v += pd * dO[i * D + d];
                    }
                    if (dk)
                        dk[((b * Hkv + kvh) * Sk + j) * D + d] += o->scale * acc_k;
                    if (dv)
                        dv[((b * Hkv + kvh) * Sk + j) * D + d] += acc_v;
                }
        }
    free(P);
    free(dP);
}

double oracle_loss(const oracle_t *o)
{
    size_t n = (size_t)(o->B * o->Hq * o->Sq * o->D);
    double *out = malloc(sizeof(double) * n);
    if (out == NULL)
        abort();
    forward_rows(o, out, NULL, 1);
    double loss = 0;
    for (size_t e = 0; e < n; e++)
        loss += o->dout[e] * out[e];
    free(out);
    return loss;
}
