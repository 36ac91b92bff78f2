/*
 * test_xe_emulation.c - the emulated Intel sub-group built-ins of the fast
 * path (spirv/xe/sdpa_xe_emulation.h) against a host matrix product, on the
 * device (the CPU device: the emulation is what runs there).
 *
 * The probe kernels (spirv/xe/sdpa_xe_probe.cl) build each operand from plain
 * row-major matrices in the layout cl_intel_subgroup_matrix_multiply_
 * accumulate specifies, call one built-in, and write D = A B + C back. For
 * every form the kernels use (f16 and bf16 sources; f32 accumulator with
 * sub-groups of 8 and 16, and the sources' type as accumulator with 16; M =
 * 1, 2, 4, 8 rows) the tests check:
 *   - random operands against a double-precision product, within the f32
 *     rounding of 16 products and one accumulator (each product is exact);
 *   - the layout itself: a single 1 at A[m][k] must copy row k of B into
 *     row m of D and nothing else, and a single 1 at B[k][n] must copy
 *     column k of A into column n of D (any swapped lane, component or
 *     16-bit half shows up here, with its position);
 *   - the accumulator: A = 0 gives D = C.
 * And the block reads the kernels rely on deliver p[j * sub-group + lane]
 * in component j of lane `lane`, from global memory (native in the CPU
 * runtime) and local memory (emulated, sdpa_xe_local_block.h: the local
 * block write stores it back so, and refuses an address not on 16 bytes); the
 * emulated 2D block loads deliver element (y + r, x + lane) of their surface
 * in component r (in pairs of rows with the transform), zero outside it, and
 * poison every call that breaks a constraint the hardware documents; the
 * f32 to bf16 conversions round to the nearest bf16, ties to even.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "element.h"
#include "spirv_registry.h"
#include "test_rng.h"
#include "ze_env.h"

#define K_DIM 16
#define MAX_SG 16
#define MAX_M 8

/* The accumulator forms. */
typedef enum acc_kind { ACC_F32, ACC_LOW } acc_kind_t;

typedef struct probe {
    ze_module_handle_t module;
    ze_command_list_handle_t list; /* synchronous immediate */
    uint32_t sg;
} probe_t;

static probe_t probes[2]; /* sub-groups 8 and 16 */

static const char *result_text(ze_result_t r)
{
    static char buf[32];
    snprintf(buf, sizeof(buf), "0x%x", (unsigned)r);
    return buf;
}

/* The probe module for sub-group size sg, built once. */
static probe_t *probe_for(uint32_t sg)
{
    probe_t *p = &probes[sg == 16];
    if (p->module)
        return p;
    const sdpa_spirv_module_t *spirv = sdpa_spirv_find("sdpa_xe_probe-emu", 0, (int)sg);
    ck_assert_msg(spirv != NULL, "no SPIR-V variant sdpa_xe_probe-emu.0.%u", sg);
    ze_module_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                             .format = ZE_MODULE_FORMAT_IL_SPIRV,
                             .inputSize = spirv->size,
                             .pInputModule = spirv->code,
                             .pBuildFlags = ""};
    ze_module_build_log_handle_t log = NULL;
    ze_result_t r = zeModuleCreate(suite_env.context, suite_env.device, &desc, &p->module, &log);
    if (r != ZE_RESULT_SUCCESS) {
        size_t size = 0;
        zeModuleBuildLogGetString(log, &size, NULL);
        char *text = calloc(1, size + 1);
        zeModuleBuildLogGetString(log, &size, text);
        fprintf(stderr, "sdpa_xe_probe-emu.0.%u: %s\n", sg, text);
        free(text);
    }
    if (log)
        zeModuleBuildLogDestroy(log);
    ck_assert_msg(r == ZE_RESULT_SUCCESS, "zeModuleCreate(sdpa_xe_probe-emu.0.%u): %s", sg,
                  result_text(r));
    p->list = test_env_sync_list();
    p->sg = sg;
    return p;
}

/* Runs kernel `name` of p on `groups` sub-groups (one per work-group) with
 * the given arguments: args[i] of sizes[i] bytes. */
static void launch(probe_t *p, const char *name, uint32_t groups, int n_args,
                   const void *const *args, const size_t *sizes)
{
    ze_kernel_desc_t kdesc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = name};
    ze_kernel_handle_t kernel;
    ze_result_t r = zeKernelCreate(p->module, &kdesc, &kernel);
    ck_assert_msg(r == ZE_RESULT_SUCCESS, "zeKernelCreate(%s): %s", name, result_text(r));
    ck_assert_int_eq(zeKernelSetGroupSize(kernel, p->sg, 1, 1), ZE_RESULT_SUCCESS);
    for (int i = 0; i < n_args; i++)
        ck_assert_int_eq(zeKernelSetArgumentValue(kernel, (uint32_t)i, sizes[i], args[i]),
                         ZE_RESULT_SUCCESS);
    ze_group_count_t count = {groups, 1, 1};
    r = zeCommandListAppendLaunchKernel(p->list, kernel, &count, NULL, 0, NULL);
    ck_assert_msg(r == ZE_RESULT_SUCCESS, "launch %s: %s", name, result_text(r));
    zeKernelDestroy(kernel);
}

/* --- matrix multiply-accumulate ---------------------------------------------- */

/* One product's operands and result on the host side, as doubles (already
 * rounded to the sources' / accumulator's type), and in device memory. */
typedef struct mad_case {
    sdpa_dtype_t src; /* F16 or BF16 */
    acc_kind_t acc;   /* f32, or src's type */
    int m_rows;       /* M */
    double a[MAX_M][K_DIM], b[K_DIM][MAX_SG], c[MAX_M][MAX_SG];
} mad_case_t;

static sdpa_dtype_t acc_dtype(const mad_case_t *mc)
{
    return mc->acc == ACC_F32 ? SDPA_DTYPE_F32 : mc->src;
}

static const char *dtype_text(sdpa_dtype_t dt)
{
    return dt == SDPA_DTYPE_F16 ? "f16" : dt == SDPA_DTYPE_BF16 ? "bf16" : "f32";
}

/* Runs the count cases mc[] (one form, one M) in one launch on sub-group
 * p->sg; d[i] receives the result of mc[i]. */
static void mad_run(probe_t *p, const mad_case_t *mc, int count, double (*d)[MAX_M][MAX_SG])
{
    const int sg = (int)p->sg, rows = mc[0].m_rows;
    const size_t a_n = (size_t)rows * K_DIM, b_n = (size_t)K_DIM * sg, c_n = (size_t)rows * sg;
    uint16_t *a = test_alloc(&suite_env, sizeof(uint16_t) * a_n * (size_t)count);
    uint16_t *b = test_alloc(&suite_env, sizeof(uint16_t) * b_n * (size_t)count);
    float *c = test_alloc(&suite_env, sizeof(float) * c_n * (size_t)count);
    float *out = test_alloc(&suite_env, sizeof(float) * c_n * (size_t)count);
    for (int g = 0; g < count; g++) {
        const mad_case_t *x = &mc[g];
        for (int m = 0; m < rows; m++)
            for (int k = 0; k < K_DIM; k++)
                sdpa_element_store(a + g * a_n, m * K_DIM + k, x->src, x->a[m][k]);
        for (int k = 0; k < K_DIM; k++)
            for (int n = 0; n < sg; n++)
                sdpa_element_store(b + g * b_n, k * sg + n, x->src, x->b[k][n]);
        /* a low-precision accumulator: 16-bit elements in a float-sized slot */
        for (int m = 0; m < rows; m++)
            for (int n = 0; n < sg; n++)
                sdpa_element_store(c + g * c_n, m * sg + n, acc_dtype(x), x->c[m][n]);
    }
    char name[64];
    snprintf(name, sizeof(name), "xe_mad_%s_%s_m%d", dtype_text(mc->src), dtype_text(acc_dtype(mc)),
             rows);
    const void *args[4] = {&a, &b, &c, &out};
    const size_t sizes[4] = {sizeof(a), sizeof(b), sizeof(c), sizeof(out)};
    launch(p, name, (uint32_t)count, 4, args, sizes);
    for (int g = 0; g < count; g++)
        for (int m = 0; m < rows; m++)
            for (int n = 0; n < sg; n++)
                d[g][m][n] = out[g * c_n + m * sg + n];
    test_free(&suite_env, out);
    test_free(&suite_env, c);
    test_free(&suite_env, b);
    test_free(&suite_env, a);
}

/* The exact D = A B + C in double, and the bound on the emulation's error:
 * 16 additions rounded to f32 (plus, for a low-precision accumulator, one
 * rounding of the result to its type: half an ulp, or a whole one where
 * the f32 sum sits next to a rounding boundary). */
static void mad_reference(const mad_case_t *mc, int sg, double ref[MAX_M][MAX_SG],
                          double tol[MAX_M][MAX_SG])
{
    for (int m = 0; m < mc->m_rows; m++)
        for (int n = 0; n < sg; n++) {
            double sum = mc->c[m][n], magnitude = fabs(mc->c[m][n]);
            for (int k = 0; k < K_DIM; k++) {
                sum += mc->a[m][k] * mc->b[k][n];
                magnitude += fabs(mc->a[m][k] * mc->b[k][n]);
            }
            ref[m][n] = sum;
            tol[m][n] = 17 * 0x1.0p-24 * magnitude + 1e-30;
            if (mc->acc == ACC_LOW)
                tol[m][n] += sdpa_dtype_epsilon(mc->src) * fabs(sum);
        }
}

/* Asserts that every element of d (the result of mc) is within tolerance of
 * the exact product; what names the case. */
static void mad_assert_close(const probe_t *p, const mad_case_t *mc, double d[MAX_M][MAX_SG],
                             const char *what)
{
    double ref[MAX_M][MAX_SG], tol[MAX_M][MAX_SG];
    mad_reference(mc, (int)p->sg, ref, tol);
    for (int m = 0; m < mc->m_rows; m++)
        for (int n = 0; n < (int)p->sg; n++)
            ck_assert_msg(fabs(d[m][n] - ref[m][n]) <= tol[m][n],
                          "sg%u %s src %s acc %s M%d: D[%d][%d] = %.9g, expected %.9g (+- %.3g)",
                          p->sg, what, dtype_text(mc->src), dtype_text(acc_dtype(mc)), mc->m_rows,
                          m, n, d[m][n], ref[m][n], tol[m][n]);
}

static void mad_case_init(mad_case_t *mc, sdpa_dtype_t src, acc_kind_t acc, int m_rows)
{
    memset(mc, 0, sizeof(*mc));
    mc->src = src;
    mc->acc = acc;
    mc->m_rows = m_rows;
}

/* Random operands in [-4, 4), rounded to their types. */
static void mad_case_random(mad_case_t *mc, int sg, test_rng_t *rng)
{
    for (int m = 0; m < mc->m_rows; m++)
        for (int k = 0; k < K_DIM; k++)
            mc->a[m][k] = sdpa_element_round(mc->src, rng_uniform(rng, -4, 4));
    for (int k = 0; k < K_DIM; k++)
        for (int n = 0; n < sg; n++)
            mc->b[k][n] = sdpa_element_round(mc->src, rng_uniform(rng, -4, 4));
    for (int m = 0; m < mc->m_rows; m++)
        for (int n = 0; n < sg; n++)
            mc->c[m][n] = sdpa_element_round(acc_dtype(mc), rng_uniform(rng, -16, 16));
}

/* The forms: (source, accumulator) pairs per sub-group size. */
typedef struct form {
    uint32_t sg;
    sdpa_dtype_t src;
    acc_kind_t acc;
} form_t;

static const form_t forms[] = {
        {8, SDPA_DTYPE_F16, ACC_F32},  {8, SDPA_DTYPE_BF16, ACC_F32},
        {16, SDPA_DTYPE_F16, ACC_F32}, {16, SDPA_DTYPE_BF16, ACC_F32},
        {16, SDPA_DTYPE_F16, ACC_LOW}, {16, SDPA_DTYPE_BF16, ACC_LOW},
};
#define FORM_COUNT ((int)(sizeof(forms) / sizeof(forms[0])))
static const int row_counts[] = {1, 2, 4, 8};

/* Cases of one launch: at most every (k, n) of the layout test of B. */
#define MAX_CASES (K_DIM * MAX_SG)

static mad_case_t cases[MAX_CASES];
static double results[MAX_CASES][MAX_M][MAX_SG];

/* Random operands, every form and M, 16 draws each. */
START_TEST(mad_random)
{
    const form_t *f = &forms[_i];
    probe_t *p = probe_for(f->sg);
    test_rng_t rng = {(uint64_t)_i * 977 + 5};
    for (int r = 0; r < 4; r++) {
        const int draws = 16;
        for (int g = 0; g < draws; g++) {
            mad_case_init(&cases[g], f->src, f->acc, row_counts[r]);
            mad_case_random(&cases[g], (int)f->sg, &rng);
        }
        mad_run(p, cases, draws, results);
        for (int g = 0; g < draws; g++)
            mad_assert_close(p, &cases[g], results[g], "random");
    }
}
END_TEST

/* One operand a single 1 and the other distinct integers (exact in bf16
 * too), C = 0, for every place of the 1: A = 1 at (m, k) (in_b = 0) must
 * give row k of B in row m of D, B = 1 at (k, n) (in_b = 1) column k of A
 * in column n; zero elsewhere. */
static void check_one_hot(const form_t *f, int in_b)
{
    probe_t *p = probe_for(f->sg);
    const int sg = (int)f->sg;
    const int cols = in_b ? sg : K_DIM; /* of the operand with the 1 */
    const int count = (in_b ? K_DIM : MAX_M) * cols;
    for (int g = 0; g < count; g++) {
        mad_case_init(&cases[g], f->src, f->acc, MAX_M);
        for (int m = 0; m < MAX_M; m++)
            for (int k = 0; k < K_DIM; k++)
                cases[g].a[m][k] = in_b ? m * K_DIM + k + 1 : 0;
        for (int k = 0; k < K_DIM; k++)
            for (int n = 0; n < sg; n++)
                cases[g].b[k][n] = in_b ? 0 : k * sg + n + 1;
        if (in_b)
            cases[g].b[g / cols][g % cols] = 1;
        else
            cases[g].a[g / cols][g % cols] = 1;
    }
    mad_run(p, cases, count, results);
    for (int g = 0; g < count; g++) {
        const int i = g / cols, j = g % cols;
        for (int m = 0; m < MAX_M; m++)
            for (int n = 0; n < sg; n++) {
                double expected = in_b ? (n == j ? cases[g].a[m][i] : 0)
                                       : (m == i ? cases[g].b[j][n] : 0);
                ck_assert_msg(results[g][m][n] == expected,
                              "sg%d %s acc %s: %c[%d][%d] = 1 gives D[%d][%d] = %g, expected %g",
                              sg, dtype_text(f->src), dtype_text(acc_dtype(&cases[g])),
                              in_b ? 'B' : 'A', i, j, m, n, results[g][m][n], expected);
            }
    }
}

START_TEST(mad_layout_of_a)
{
    check_one_hot(&forms[_i], 0);
}
END_TEST

START_TEST(mad_layout_of_b)
{
    check_one_hot(&forms[_i], 1);
}
END_TEST

/* A = 0: D = C exactly, for distinct C in every row and column, every M
 * (the smaller forms must neither read nor write rows past M). */
START_TEST(mad_accumulator_passes_through)
{
    const form_t *f = &forms[_i];
    probe_t *p = probe_for(f->sg);
    const int sg = (int)f->sg;
    test_rng_t rng = {(uint64_t)_i + 99};
    for (int r = 0; r < 4; r++) {
        mad_case_init(&cases[0], f->src, f->acc, row_counts[r]);
        mad_case_random(&cases[0], sg, &rng);
        memset(cases[0].a, 0, sizeof(cases[0].a));
        mad_run(p, cases, 1, results);
        for (int m = 0; m < cases[0].m_rows; m++)
            for (int n = 0; n < sg; n++)
                ck_assert_msg(results[0][m][n] == cases[0].c[m][n],
                              "sg%d M%d: D[%d][%d] = %g, C = %g", sg, cases[0].m_rows, m, n,
                              results[0][m][n], cases[0].c[m][n]);
    }
}
END_TEST

/* Products that need every bit of an f16 or bf16 significand, and values
 * near the top of the f16 range: each product must be exact in f32, so the
 * result is the exact sum rounded once. */
START_TEST(mad_exact_products)
{
    const form_t *f = &forms[_i];
    if (f->acc != ACC_F32)
        return;
    probe_t *p = probe_for(f->sg);
    const int sg = (int)f->sg;
    /* 1 + 2^-10 (f16) or 1 + 2^-7 (bf16): the last significand bit. */
    const double one_ulp = 1 + sdpa_dtype_epsilon(f->src);
    const double big = f->src == SDPA_DTYPE_F16 ? 65504 : 0x1.fep+27;
    mad_case_t *mc = &cases[0];
    mad_case_init(mc, f->src, f->acc, MAX_M);
    for (int m = 0; m < MAX_M; m++) {
        mc->a[m][m] = one_ulp; /* (1 + u)^2 = 1 + 2u + u^2: exact in f32, not in f16 */
        mc->a[m][8 + m] = m % 2 ? big : -big;
    }
    for (int n = 0; n < sg; n++) {
        for (int k = 0; k < 8; k++)
            mc->b[k][n] = one_ulp;
        mc->b[8 + n % 8][n] = 1.0 / 64;
    }
    mad_run(p, cases, 1, results);
    double ref[MAX_M][MAX_SG], tol[MAX_M][MAX_SG];
    mad_reference(mc, sg, ref, tol);
    for (int m = 0; m < MAX_M; m++)
        for (int n = 0; n < sg; n++)
            ck_assert_msg(results[0][m][n] == (double)(float)ref[m][n],
                          "sg%d %s: D[%d][%d] = %.12g, exact %.12g", sg, dtype_text(f->src), m, n,
                          results[0][m][n], ref[m][n]);
}
END_TEST

/* --- block reads ----------------------------------------------------------------- */

/* Sets element i of the n elements of elem bytes at buf to first + i *
 * step (its low bytes: little-endian). */
static void fill_elements(unsigned char *buf, size_t elem, int n, uint32_t first, uint32_t step)
{
    for (int i = 0; i < n; i++) {
        const uint32_t v = first + (uint32_t)i * step;
        memcpy(buf + elem * (size_t)i, &v, elem);
    }
}

/* Runs the block read or write probe `name` of p, whose arguments are the
 * source, an offset in elements and the destination, on one sub-group. */
static void launch_block_probe(probe_t *p, const char *name, const void *src, int offset, void *dst)
{
    const void *args[3] = {&src, &offset, &dst};
    const size_t sizes[3] = {sizeof(src), sizeof(offset), sizeof(dst)};
    launch(p, name, 1, 3, args, sizes);
}

START_TEST(block_reads)
{
    const uint32_t sg = _i ? 16 : 8;
    probe_t *p = probe_for(sg);
    /* 16-bit elements with 16 lanes, 32-bit with 8 (sdpa_xe_probe.cl). */
    const size_t elem = sg == 16 ? 2 : 4;
    const int total = 8 * (int)sg + 64;
    for (int n = 1; n <= 8; n *= 2)
        for (int offset = 0; offset <= 6; offset += 2) {
            unsigned char *src = test_alloc(&suite_env, elem * (size_t)total);
            unsigned char *dst = test_alloc(&suite_env, elem * 8 * sg);
            fill_elements(src, elem, total, 0x1000u * (uint32_t)n + 3u, 7u);
            char name[32];
            snprintf(name, sizeof(name), "xe_block_read_%d", n);
            launch_block_probe(p, name, src, offset, dst);
            for (int j = 0; j < n; j++)
                for (int lane = 0; lane < (int)sg; lane++) {
                    const int i = j * (int)sg + lane;
                    ck_assert_msg(memcmp(dst + elem * (size_t)i, src + elem * (size_t)(offset + i),
                                         elem) == 0,
                                  "sg%u block read of %d, offset %d: component %d of lane %d is "
                                  "not element %d",
                                  sg, n, offset, j, lane, offset + i);
                }
            test_free(&suite_env, dst);
            test_free(&suite_env, src);
        }
}
END_TEST

/* One run of a local-memory block probe at one offset: src's total
 * elements (the pattern of fill_elements), dst as the probe left it, and
 * want, room for total elements to build an expectation in. */
typedef struct local_block_run {
    uint32_t sg;
    size_t elem; /* 16-bit elements with 16 lanes, 32-bit with 8 */
    int total;
    int offset;
    int misaligned;    /* the address is not on 4 bytes (16-bit elements, odd offsets) */
    int write_refused; /* the address is not on 16 bytes */
    const unsigned char *src, *dst;
    unsigned char *want;
} local_block_run_t;

/* Runs probe `name` with sub-group sg at each offset 0 to 7 over total
 * elements first + i * step, into dst_elements elements, and checks the
 * run with check. */
static void run_local_block_probe(uint32_t sg, const char *name, int total, size_t dst_elements,
                                  uint32_t first, uint32_t step,
                                  void (*check)(const local_block_run_t *r))
{
    probe_t *p = probe_for(sg);
    const size_t elem = sg == 16 ? 2 : 4;
    for (int offset = 0; offset <= 7; offset++) {
        unsigned char *src = test_alloc(&suite_env, elem * (size_t)total);
        unsigned char *dst = test_alloc(&suite_env, elem * dst_elements);
        unsigned char *want = malloc(elem * (size_t)total);
        ck_assert(want != NULL);
        fill_elements(src, elem, total, first, step);
        launch_block_probe(p, name, src, offset, dst);
        const local_block_run_t r = {.sg = sg,
                                     .elem = elem,
                                     .total = total,
                                     .offset = offset,
                                     .misaligned = sg == 16 && offset % 2,
                                     .write_refused = (elem * (size_t)offset) % 16 != 0,
                                     .src = src,
                                     .dst = dst,
                                     .want = want};
        check(&r);
        free(want);
        test_free(&suite_env, dst);
        test_free(&suite_env, src);
    }
}

/* A local block read of `components` at the start of r's dst: the global
 * read's layout, component j of lane l element offset + j sg + l of src;
 * 0xdead (0xdeaddead) in every element where the address is misaligned,
 * where the hardware refuses the read. */
static void assert_local_block_read(const local_block_run_t *r, int components, const char *what)
{
    const uint32_t poison = 0xdeaddeadu;
    for (int i = 0; i < components * (int)r->sg; i++)
        ck_assert_msg(memcmp(r->dst + r->elem * (size_t)i,
                             r->misaligned
                                     ? (const void *)&poison
                                     : (const void *)(r->src + r->elem * (size_t)(r->offset + i)),
                             r->elem) == 0,
                      "sg%u %s, offset %d: component %d of lane %d is wrong", r->sg, what,
                      r->offset, i / (int)r->sg, i % (int)r->sg);
}

/* The total elements a block write left in r's dst from element `at` are
 * those of r's want. */
static void assert_block_written(const local_block_run_t *r, size_t at, const char *what)
{
    for (int i = 0; i < r->total; i++)
        ck_assert_msg(memcmp(r->dst + r->elem * (at + (size_t)i), r->want + r->elem * (size_t)i,
                             r->elem) == 0,
                      "sg%u local %s block write at %d: element %d is wrong", r->sg, what,
                      r->offset, i);
}

/* r's want: src as a 32-bit block write of `words` words at the offset
 * leaves it: word j sg + lane is base + j * step + lane, 0xdeaddead where
 * the write is refused, src untouched where the address is misaligned. */
static void expect_words_written(const local_block_run_t *r, uint32_t words, uint32_t base,
                                 uint32_t step)
{
    memcpy(r->want, r->src, r->elem * (size_t)r->total);
    if (r->misaligned)
        return;
    for (uint32_t w = 0; w < words; w++) {
        const uint32_t v = r->write_refused ? 0xdeaddeadu : base + step * (w / r->sg) + w % r->sg;
        memcpy(r->want + r->elem * (size_t)r->offset + 4 * (size_t)w, &v, 4);
    }
}

/* The emulated block read from local memory (sdpa_xe_local_block.h): the
 * layout of the global one at 4-byte aligned addresses, and 0xdead in every
 * element at a misaligned one (16-bit elements at an odd offset), where the
 * hardware refuses the read. */
static void check_local_block_read(const local_block_run_t *r)
{
    assert_local_block_read(r, 8, "local block read");
}

START_TEST(local_block_reads)
{
    const uint32_t sg = _i ? 16 : 8;
    run_local_block_probe(sg, "xe_local_block_read_8", 8 * (int)sg + 64, 8 * sg, 0x5001u, 11u,
                          check_local_block_read);
}
END_TEST

/* The backward's 4-component block accesses of local memory
 * (sdpa_xe_local_block.h, probe xe_local_block_4): the read's layout, the
 * 16-bit write (16 lanes) and the 32-bit pair write. The read takes 4-byte
 * aligned addresses (0xdead elsewhere), the writes 16-byte aligned ones: a
 * refused write stores 0xdead (0xdeaddead) in its elements, nothing where
 * the address is not on 4 bytes. */
static void check_local_block_4(const local_block_run_t *r)
{
    assert_local_block_read(r, 4, "local 4-component block read");
    /* The 16-bit write: elements offset .. offset + 4 sg - 1 plus 1. */
    memcpy(r->want, r->src, r->elem * (size_t)r->total);
    if (r->sg == 16)
        for (int i = r->offset; i < r->offset + 4 * (int)r->sg; i++) {
            uint16_t v;
            memcpy(&v, r->want + 2 * (size_t)i, 2);
            v = r->write_refused ? (uint16_t)0xdead : (uint16_t)(v + 1u);
            memcpy(r->want + 2 * (size_t)i, &v, 2);
        }
    assert_block_written(r, 4 * r->sg, "16-bit 4-component");
    /* The 32-bit pair write: word j sg + lane at the offset's byte is
     * 0xa000 + lane (j = 0) or 0xb000 + lane (j = 1). */
    expect_words_written(r, 2 * r->sg, 0xa000u, 0x1000u);
    assert_block_written(r, 4 * r->sg + (size_t)r->total, "32-bit 2-component");
}

START_TEST(local_block_4)
{
    const uint32_t sg = _i ? 16 : 8;
    const int total = 8 * (int)sg + 64; /* PROBE_LOCAL_ELEMENTS */
    run_local_block_probe(sg, "xe_local_block_4", total, 4 * sg + 2 * (size_t)total, 0x5001u, 11u,
                          check_local_block_4);
}
END_TEST

/* The backward's 8-component block writes of local memory (probe
 * xe_local_block_write_8): component j of lane l at element (16-bit, 16
 * lanes) or word j * sg + l of the offset, at 16-byte aligned addresses;
 * 0xdead (0xdeaddead) in those elements at other ones, nothing where the
 * address is not on 4 bytes (16-bit elements, odd offsets). */
static void check_local_block_write_8(const local_block_run_t *r)
{
    memcpy(r->want, r->src, r->elem * (size_t)r->total);
    if (r->sg == 16)
        for (uint32_t i = 0; i < 8 * r->sg; i++) {
            const uint16_t v = r->write_refused
                                       ? (uint16_t)0xdead
                                       : (uint16_t)(0x7000u + 16u * (i / r->sg) + i % r->sg);
            memcpy(r->want + 2 * ((size_t)r->offset + i), &v, 2);
        }
    assert_block_written(r, 0, "16-bit 8-component");
    expect_words_written(r, 8 * r->sg, 0xc0000u, 16u);
    assert_block_written(r, (size_t)r->total, "32-bit 8-component");
}

START_TEST(local_block_write_8)
{
    const uint32_t sg = _i ? 16 : 8;
    const int total = 2 * (8 * (int)sg + 64); /* PROBE_WRITE_ELEMENTS */
    run_local_block_probe(sg, "xe_local_block_write_8", total, 2 * (size_t)total, 0x3003u, 7u,
                          check_local_block_write_8);
}
END_TEST

/* --- block reads and writes of local memory ------------------------------------- */

START_TEST(local_block_rw)
{
    const uint32_t sg = _i ? 16 : 8;
    probe_t *p = probe_for(sg);
    const int total = 2 * 8 * (int)sg;
    /* Elements: 16-byte aligned, then on 4 bytes only (read, not written:
     * a refused write stores 0xdeaddead). */
    const int offsets[6] = {0, 4, 8 * (int)sg, 1, 2, 3};
    for (int o = 0; o < 6; o++) {
        const int offset = offsets[o];
        const int refused = offset % 4 != 0;
        uint32_t *src = test_alloc(&suite_env, sizeof(uint32_t) * (size_t)total);
        uint32_t *dst = test_alloc(&suite_env, sizeof(uint32_t) * 3 * 8 * sg);
        for (int i = 0; i < total; i++)
            src[i] = 0x10000u * (uint32_t)offset + (uint32_t)i * 13u + 5u;
        launch_block_probe(p, "xe_local_block_rw_8", src, offset, dst);
        for (int i = 0; i < 8 * (int)sg; i++) {
            ck_assert_msg(dst[i] == src[offset + i],
                          "sg%u local block read at %d: component %d of lane %d is 0x%x, not "
                          "element %d (0x%x)",
                          sg, offset, i / (int)sg, i % (int)sg, dst[i], offset + i,
                          src[offset + i]);
            const uint32_t written = refused ? 0xdeaddeadu : src[offset + i] + 1;
            ck_assert_msg(dst[8 * sg + (unsigned)i] == written,
                          "sg%u local block write at %d: element %d is 0x%x, not 0x%x", sg, offset,
                          offset + i, dst[8 * sg + (unsigned)i], written);
            /* 16-bit elements: halves of the words, low half first. */
            const uint32_t half = (src[offset + i / 2] >> (16 * (i % 2))) & 0xffffu;
            ck_assert_msg(dst[16 * sg + (unsigned)i] == half,
                          "sg%u local 16-bit block read at %d: component %d of lane %d is 0x%x, "
                          "not 0x%x",
                          sg, offset, i / (int)sg, i % (int)sg, dst[16 * sg + (unsigned)i], half);
        }
        test_free(&suite_env, dst);
        test_free(&suite_env, src);
    }
}
END_TEST

/* --- 2D block loads ------------------------------------------------------------- */

/* A surface (bytes, as the hardware counts them) and a block's coordinates
 * (x in 16-bit elements, y in rows). */
typedef struct block2d_case {
    long base_offset;
    int width, height, pitch;
    int x, y;
} block2d_case_t;

#define BLOCK2D_MEM (64 * 1024)

/* Runs the 2D load of `rows` rows (8: u16_m8k16v1; 16: transform_u16_k16)
 * on c over mem (BLOCK2D_MEM bytes); dst receives rows x 16 elements, row by
 * row (the probe unpacks the transform's pairs). */
static void block2d_run(probe_t *p, int rows, const block2d_case_t *c, const uint16_t *mem,
                        uint16_t *dst)
{
    const char *name = rows == 8 ? "xe_block2d_u16_m8" : "xe_block2d_transform_u16_k16";
    const int w = c->width - 1, h = c->height - 1, pitch = c->pitch - 1;
    const void *args[8] = {&mem, &c->base_offset, &w, &h, &pitch, &c->x, &c->y, &dst};
    const size_t sizes[8] = {sizeof(mem), sizeof(long), sizeof(int), sizeof(int),
                             sizeof(int), sizeof(int),  sizeof(int), sizeof(dst)};
    launch(p, name, 1, 8, args, sizes);
}

START_TEST(block2d_loads)
{
    /* Surfaces the hardware accepts; blocks inside, across the right and
     * bottom edges and wholly outside (zeros). */
    static const block2d_case_t surfaces[] = {
            {0, 64, 20, 64, 0, 0},   {128, 256, 40, 512, 32, 3}, {64, 96, 17, 96, 40, 9},
            {192, 64, 8, 80, 16, 1}, {0, 200, 30, 208, 94, 25},  {256, 128, 16, 128, 0, 16},
            {0, 64, 12, 64, 0, -2},  {64, 100, 33, 112, 2, 30},
    };
    probe_t *p = probe_for(16);
    uint16_t *mem = test_alloc(&suite_env, BLOCK2D_MEM);
    for (int i = 0; i < BLOCK2D_MEM / 2; i++)
        mem[i] = (uint16_t)(i * 7 + 1); /* never 0 inside the memory */
    uint16_t *dst = test_alloc(&suite_env, 16 * 16 * sizeof(uint16_t));
    for (int rows = 8; rows <= 16; rows *= 2)
        for (size_t k = 0; k < sizeof(surfaces) / sizeof(surfaces[0]); k++) {
            const block2d_case_t *c = &surfaces[k];
            block2d_run(p, rows, c, mem, dst);
            for (int r = 0; r < rows; r++)
                for (int lane = 0; lane < 16; lane++) {
                    const int col = c->x + lane, row = c->y + r;
                    const int inside =
                            col >= 0 && 2 * col + 2 <= c->width && row >= 0 && row < c->height;
                    const uint16_t want =
                            inside ? mem[(c->base_offset + (long)row * c->pitch) / 2 + col] : 0;
                    ck_assert_msg(dst[r * 16 + lane] == want,
                                  "%s case %zu: row %d of lane %d is 0x%x, not 0x%x",
                                  rows == 8 ? "u16_m8k16" : "transform_u16_k16", k, r, lane,
                                  dst[r * 16 + lane], want);
                }
        }
    test_free(&suite_env, dst);
    test_free(&suite_env, mem);
}
END_TEST

START_TEST(block2d_rejects)
{
    /* One broken constraint each (sdpa_xe_intel.h): the emulation returns
     * all ones, as a warning that the GPU would not load this. */
    static const block2d_case_t surfaces[] = {
            {32, 64, 8, 64, 0, 0},  /* base not on 64 bytes */
            {0, 60, 8, 64, 0, 0},   /* width under 64 bytes */
            {0, 66, 8, 80, 0, 0},   /* width not a multiple of 4 */
            {0, 128, 8, 112, 0, 0}, /* pitch under the width */
            {0, 64, 8, 72, 0, 0},   /* pitch not a multiple of 16 */
            {0, 64, 8, 64, 1, 0},   /* x's byte offset not a multiple of 4 */
            {0, 64, 0, 64, 0, 0},   /* no rows */
    };
    probe_t *p = probe_for(16);
    uint16_t *mem = test_alloc(&suite_env, BLOCK2D_MEM);
    uint16_t *dst = test_alloc(&suite_env, 16 * 16 * sizeof(uint16_t));
    for (int rows = 8; rows <= 16; rows *= 2)
        for (size_t k = 0; k < sizeof(surfaces) / sizeof(surfaces[0]); k++) {
            block2d_run(p, rows, &surfaces[k], mem, dst);
            for (int i = 0; i < rows * 16; i++)
                ck_assert_msg(dst[i] == 0xffff,
                              "invalid 2D load %zu (%d rows): element %d is 0x%x, not poison", k,
                              rows, i, dst[i]);
        }
    test_free(&suite_env, dst);
    test_free(&suite_env, mem);
}
END_TEST

/* --- f32 to bf16 ------------------------------------------------------------------ */

/* A bf16 magnitude (sign bit clear) in double; the infinity stands at 2^128,
 * where the rounding of the largest f32 values puts it. */
static double bf16_magnitude(uint16_t m)
{
    const int exp = m >> 7, mant = m & 0x7f;
    if (exp == 0)
        return ldexp(mant, -133);
    if (exp == 255)
        return ldexp(1, 128);
    return ldexp(128 + mant, exp - 134);
}

/* The bf16 bits nearest to the finite f32 of `bits`, ties to the even
 * significand: of its two bf16 neighbours, compared in double. */
static uint16_t bf16_nearest(uint32_t bits)
{
    float x;
    memcpy(&x, &bits, sizeof(x));
    const uint16_t below = (uint16_t)(bits >> 16); /* toward zero */
    if ((bits & 0xffffu) == 0)
        return below;
    const uint16_t above = (uint16_t)(below + 1); /* away from zero */
    const double ax = fabs((double)x);
    const double d_below = ax - bf16_magnitude(below & 0x7fff);
    const double d_above = bf16_magnitude(above & 0x7fff) - ax;
    if (d_below != d_above)
        return d_below < d_above ? below : above;
    return (below & 1) ? above : below;
}

/* __builtin_IB_ftobf_16 and _8 (emulated on the CPU device) on random bit
 * patterns (every exponent, NaNs, infinities, subnormals), exact ties of
 * both parities, signed zeros and the largest finite values. */
START_TEST(f32_to_bf16)
{
    const uint32_t sg = _i ? 16 : 8;
    probe_t *p = probe_for(sg);
    const uint32_t groups = 64;
    const size_t n = (size_t)groups * sg * 16;
    uint32_t *x = test_alloc(&suite_env, n * sizeof(*x));
    uint16_t *y = test_alloc(&suite_env, n * sizeof(*y));
    uint16_t *y8 = test_alloc(&suite_env, n / 2 * sizeof(*y8));
    static const uint32_t special[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,
                                       0x7fc00000u, 0xffc00001u, 0x7f800001u, 0x7f7fffffu,
                                       0xff7fffffu, 0x7f7f8000u, 0x7f7f7fffu, 0x00000001u,
                                       0x00008000u, 0x00018000u, 0x3f808000u, 0x3f818000u};
    test_rng_t rng = {.state = 0x5eed0bf16u + sg};
    for (size_t i = 0; i < n; i++) {
        uint32_t bits = (uint32_t)rng_next(&rng);
        if (i % 4 == 1) /* a tie */
            bits = (bits & 0xffff0000u) | 0x8000u;
        x[i] = i < sizeof(special) / sizeof(special[0]) ? special[i] : bits;
    }
    const void *args[3] = {&x, &y, &y8};
    const size_t sizes[3] = {sizeof(x), sizeof(y), sizeof(y8)};
    launch(p, "xe_ftobf", groups, 3, args, sizes);
    for (size_t i = 0; i < n; i++) {
        const uint16_t got[2] = {y[i], i % 16 < 8 ? y8[i / 16 * 8 + i % 16] : y[i]};
        for (int form = 0; form < 2; form++) {
            if ((x[i] & 0x7fffffffu) > 0x7f800000u) /* NaN: a NaN of the same sign */
                ck_assert_msg((got[form] & 0x7f80) == 0x7f80 && (got[form] & 0x7f) != 0 &&
                                      (got[form] >> 15) == (x[i] >> 31),
                              "sg%u ftobf_%d(0x%08x) = 0x%04x, not a NaN of its sign", sg,
                              form ? 8 : 16, x[i], got[form]);
            else
                ck_assert_msg(got[form] == bf16_nearest(x[i]),
                              "sg%u ftobf_%d(0x%08x) = 0x%04x, nearest 0x%04x", sg, form ? 8 : 16,
                              x[i], got[form], bf16_nearest(x[i]));
        }
    }
    test_free(&suite_env, y8);
    test_free(&suite_env, y);
    test_free(&suite_env, x);
}
END_TEST

static void release_probes(void)
{
    for (int i = 0; i < 2; i++) {
        if (probes[i].list)
            zeCommandListDestroy(probes[i].list);
        if (probes[i].module)
            zeModuleDestroy(probes[i].module);
        memset(&probes[i], 0, sizeof(probes[i]));
    }
}

static Suite *xe_emulation_suite(void)
{
    Suite *s = suite_create("xe emulation");
    TCase *t = tcase_create("matrix and block built-ins");
    tcase_add_unchecked_fixture(t, test_env_fixture, release_probes);
    tcase_add_loop_test(t, mad_random, 0, FORM_COUNT);
    tcase_add_loop_test(t, mad_layout_of_a, 0, FORM_COUNT);
    tcase_add_loop_test(t, mad_layout_of_b, 0, FORM_COUNT);
    tcase_add_loop_test(t, mad_accumulator_passes_through, 0, FORM_COUNT);
    tcase_add_loop_test(t, mad_exact_products, 0, FORM_COUNT);
    tcase_add_loop_test(t, block_reads, 0, 2);
    tcase_add_loop_test(t, local_block_reads, 0, 2);
    tcase_add_loop_test(t, local_block_rw, 0, 2);
    tcase_add_loop_test(t, local_block_4, 0, 2);
    tcase_add_loop_test(t, local_block_write_8, 0, 2);
    tcase_add_test(t, block2d_loads);
    tcase_add_test(t, block2d_rejects);
    tcase_add_loop_test(t, f32_to_bf16, 0, 2);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return test_env_run_suite(xe_emulation_suite());
}
