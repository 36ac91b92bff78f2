/*
 * oracle.h - the independent double-precision oracle: naive softmax(QK^T * scale + mask) V
 * and its gradients on dense copies of a case's inputs.
 */
#ifndef SDPA_TESTS_ABI_ORACLE_H
#define SDPA_TESTS_ABI_ORACLE_H

#include <stdint.h>

#include "attn_case.h"

typedef struct oracle {
    int64_t B, Hq, Hkv, Sq, Sk, D;
    double *q, *k, *v; /* dense [B][H][S][D], K/V dequantized */
    double *bias;      /* [B][Hq][Sq][Sk]: mask value, -inf where causally masked */
    double *drop;      /* [B][Hq][Sq][Sk]: 0 or 1 / (1 - p) (1 without dropout) */
    double *dout;      /* [B][Hq][Sq][D] (backward) or NULL */
    double scale;      /* multiplier of q.k */
    int inf_as_zero;
} oracle_t;

/* Reads c's inputs into dense doubles; the dropout keep rule is evaluated
 * from Philox4x32-10 with the counter layout of sdpa.h. Returns 0. */
int oracle_init(oracle_t *o, const attn_case_t *c);
void oracle_free(oracle_t *o);

/* O [B][Hq][Sq][D] and lse [B][Hq][Sq] (either may be NULL). A query that
 * sees no key has lse -inf and an O row of NaN (ACCURATE) or 0
 * (INF_AS_ZERO), as sdpa.h specifies. */
void oracle_forward(const oracle_t *o, double *out, double *lse);

/* Analytic gradients of L = sum(dout * O): dq like q, dk/dv like k/v, ds
 * [B][Hq][Sq][Sk] (any may be NULL). A query that sees no key has
 * probabilities 0 in both softmax modes (sdpa.h): its dQ and dS rows are 0
 * and it adds nothing to dK and dV. */
void oracle_backward(const oracle_t *o, double *dq, double *dk, double *dv, double *ds);

/* L = sum(dout * O) for the current inputs (finite differences), with the
 * O rows of queries that see no key taken as 0, as backward does. */
double oracle_loss(const oracle_t *o);

#endif /* SDPA_TESTS_ABI_ORACLE_H */
