/* ref_blocked.c - the three dense products of the ref backend, blocked for
 * REF_ROWS queries at a time so each element of K or V loaded from memory
 * feeds REF_ROWS multiply-adds, over panel layouts that are read
 * contiguously. Written with two-double vectors (GCC/Clang vector
 * extensions, plain SSE2 on x86-64) so they vectorize at -O2 without
 * reassociating any sum: every output element is still accumulated in the
 * order of its reduction index. */
#include <string.h>

#include "ref.h"

typedef double v2d __attribute__((vector_size(16)));

static inline v2d load2(const double *p)
{
    v2d v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline void store2(double *p, v2d v)
{
    memcpy(p, &v, sizeof(v));
}

static inline v2d splat(double x)
{
    return (v2d){x, x};
}

/* out[r][0..3] = sum_k a[r][k] * panel[k][0..3] for r < REF_ROWS (4),
 * k < count; a's rows are a_stride apart, panel rows 4 doubles. The eight
 * accumulators are named so they stay in registers at -O2. */
static void panel_product(const double *a, int64_t a_stride, const double *panel, int64_t count,
                          double out[REF_ROWS][REF_PANEL])
{
    _Static_assert(REF_ROWS == 4 && REF_PANEL == 4, "panel_product is written for 4 x 4");
    const double *a0 = a, *a1 = a + a_stride, *a2 = a + 2 * a_stride, *a3 = a + 3 * a_stride;
    v2d c00 = splat(0.0), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00,
        c31 = c00;
    for (int64_t k = 0; k < count; k++) {
        const v2d p0 = load2(panel + k * REF_PANEL), p1 = load2(panel + k * REF_PANEL + 2);
        const v2d x0 = splat(a0[k]), x1 = splat(a1[k]), x2 = splat(a2[k]), x3 = splat(a3[k]);
        c00 += x0 * p0;
        c01 += x0 * p1;
        c10 += x1 * p0;
        c11 += x1 * p1;
        c20 += x2 * p0;
        c21 += x2 * p1;
        c30 += x3 * p0;
        c31 += x3 * p1;
    }
    store2(out[0], c00);
    store2(out[0] + 2, c01);
    store2(out[1], c10);
    store2(out[1] + 2, c11);
    store2(out[2], c20);
    store2(out[2] + 2, c21);
    store2(out[3], c30);
    store2(out[3] + 2, c31);
}

/* out's REF_ROWS rows, columns [0, columns) at row stride out_stride: x
 * (REF_ROWS rows at stride x_stride) times each panel of REF_PANEL columns,
 * panel p at panels + p * panel_rows * REF_PANEL, over depth rows. */
static void rows_times_panels(const double *x, int64_t x_stride, const double *panels,
                              int64_t panel_rows, int64_t depth, int64_t columns, double *out,
                              int64_t out_stride)
{
    for (int64_t j = 0; j < columns; j += REF_PANEL) {
        double block[REF_ROWS][REF_PANEL];
        panel_product(x, x_stride, panels + (j / REF_PANEL) * panel_rows * REF_PANEL, depth,
                      block);
        const int64_t width = columns - j < REF_PANEL ? columns - j : REF_PANEL;
        for (int r = 0; r < REF_ROWS; r++)
            memcpy(out + r * out_stride + j, block[r], (size_t)width * sizeof(double));
    }
}

void ref_rows_times_keys(const double *x, int64_t dims, const double *key_panels, int64_t sk,
                         int64_t n, double *out)
{
    rows_times_panels(x, dims, key_panels, dims, dims, n, out, sk);
}

void ref_weights_times_dims(const double *w, int64_t sk, int64_t n, const double *dim_panels,
                            int64_t dims, double *out)
{
    rows_times_panels(w, sk, dim_panels, sk, n, dims, out, dims);
}

void ref_accumulate_outer(const double *w, int64_t sk, int64_t n, const double *x, int64_t dims,
                          double *acc)
{
    _Static_assert(REF_ROWS == 4, "ref_accumulate_outer is written for 4 rows");
    const double *x0 = x, *x1 = x + dims, *x2 = x + 2 * dims, *x3 = x + 3 * dims;
    for (int64_t j = 0; j < n; j++) {
        const double w0 = w[j], w1 = w[sk + j], w2 = w[2 * sk + j], w3 = w[3 * sk + j];
        if (w0 == 0.0 && w1 == 0.0 && w2 == 0.0 && w3 == 0.0)
            continue; /* masked or dropped for every row: nothing to add */
        const v2d s0 = splat(w0), s1 = splat(w1), s2 = splat(w2), s3 = splat(w3);
        double *a = acc + j * dims;
        int64_t d = 0;
        for (; d + 2 <= dims; d += 2) {
            v2d sum = load2(a + d);
            sum += s0 * load2(x0 + d);
            sum += s1 * load2(x1 + d);
            sum += s2 * load2(x2 + d);
            sum += s3 * load2(x3 + d);
            store2(a + d, sum);
        }
        for (; d < dims; d++) {
            double sum = a[d];
            sum += w0 * x0[d];
            sum += w1 * x1[d];
            sum += w2 * x2[d];
            sum += w3 * x3[d];
            a[d] = sum;
        }
    }
}
