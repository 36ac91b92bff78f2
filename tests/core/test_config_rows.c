/* test_config_rows.c - every configuration row can be selected: for each row
 * of the forward and backward tables (and each fallback row) some problem on
 * some device of its class makes sdpa_*_config_choose return exactly that
 * row; and the sub-group size chosen for a class is one a SPIR-V variant is
 * built for and the class's hardware has. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "config_table_rows.h"
#include "config_choose.h"
#include "core_fixtures.h"
#include "error.h"
#include "kernel_config.h"

/* Every device a row can meet: each class, integrated and discrete where
 * the class has both (Xe-HPG: Arc and Meteor Lake; Xe2: Battlemage and
 * Lunar Lake; Xe-LP is integrated, DG1 aside). */
#define MAX_DEVICES 16

static size_t all_devices(sdpa_device_info_t *out)
{
    static const sdpa_device_class_t classes[] = {
            SDPA_DEVICE_CLASS_UNKNOWN_GPU, SDPA_DEVICE_CLASS_CPU,    SDPA_DEVICE_CLASS_XE_LP,
            SDPA_DEVICE_CLASS_XE_HPG,      SDPA_DEVICE_CLASS_XE_HPC, SDPA_DEVICE_CLASS_XE2,
            SDPA_DEVICE_CLASS_XE3};
    size_t n = 0;
    for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
        if (classes[i] == SDPA_DEVICE_CLASS_CPU)
            fixture_cpu_device(&out[n]);
        else
            fixture_gpu_device(classes[i], &out[n]);
        n++;
        if (classes[i] != SDPA_DEVICE_CLASS_CPU && classes[i] != SDPA_DEVICE_CLASS_XE_HPC) {
            out[n] = out[n - 1];
            out[n].integrated = !out[n].integrated;
            n++;
        }
    }
    return n;
}

/* Appends v to the set values[0..*n) unless it is there. */
static void add_value(int *values, size_t *n, size_t max, int v)
{
    for (size_t i = 0; i < *n; i++)
        if (values[i] == v)
            return;
    ck_assert_uint_lt(*n, max);
    values[(*n)++] = v;
}

/* The head sizes (seq = 0) or key counts (seq = 1) worth asking about:
 * every bound a row or bucket has, and one past it. */
static size_t interesting(int *out, size_t max, int backward, int seq)
{
    size_t n = 0;
    const size_t rows = backward ? sdpa_bwd_config_table_size : sdpa_fwd_config_table_size;
    add_value(out, &n, max, 1);
    if (seq)
        add_value(out, &n, max, 1 << 20);
    for (size_t i = 0; i < rows; i++) {
        const sdpa_config_criteria_t *c =
                backward ? &sdpa_bwd_config_table[i].criteria : &sdpa_fwd_config_table[i].criteria;
        int bound = seq ? c->seq_len : c->head_size;
        if (bound != SDPA_CONFIG_ANY_SEQ) {
            add_value(out, &n, max, bound);
            add_value(out, &n, max, bound + 1);
        }
    }
    for (int b = 32; !seq && b <= 512; b *= 2) {
        add_value(out, &n, max, b);
        if (b < 512)
            add_value(out, &n, max, b + 1);
    }
    return n;
}

/* Marks in hit[] (indexed like the table, then the fallbacks) the row each
 * query picks. */
static void mark_choices(int backward, char *hit)
{
    sdpa_device_info_t devices[MAX_DEVICES];
    size_t n_dev = all_devices(devices);
    int heads[256], seqs[256];
    size_t n_heads = interesting(heads, 256, backward, 0);
    size_t n_seqs = interesting(seqs, 256, backward, 1);
    const size_t rows = backward ? sdpa_bwd_config_table_size : sdpa_fwd_config_table_size;

    for (size_t di = 0; di < n_dev; di++) {
        const sdpa_device_info_t *dev = &devices[di];
        for (size_t hi = 0; hi < n_heads; hi++) {
            int64_t head = heads[hi];
            sdpa_kernel_target_t target = {dev, sdpa_device_subgroup_size(dev),
                                           sdpa_head_size_bucket(head), head};
            for (size_t si = 0; si < n_seqs; si++)
                for (unsigned props = 0; props < 16; props++) {
                    /* THIN, QUANT, F32, F16ACC in every combination. */
                    unsigned p = FMA | (dev->integrated ? INTEG : 0) | (props & 1 ? THIN : 0) |
                                 (props & 2 ? QUANT : 0) | (props & 4 ? F32 : 0) |
                                 (props & 8 ? F16ACC : 0);
                    if (backward && (p & (QUANT | F16ACC)))
                        continue; /* backward queries have neither */
                    sdpa_config_query_t q = {dev->device_class, head, seqs[si], p};
                    sdpa_config_source_t source;
                    const void *chosen = NULL;
                    if (backward) {
                        const sdpa_bwd_config_row_t *c[SDPA_CONFIG_MAX_CANDIDATES];
                        sdpa_bwd_config_t config;
                        sdpa_bwd_config_candidates(&q, c, SDPA_CONFIG_MAX_CANDIDATES);
                        if (sdpa_bwd_config_choose(&q, &target, &config, &source) == SDPA_SUCCESS)
                            chosen = c[source.skipped_rows];
                    } else {
                        const sdpa_fwd_config_row_t *c[SDPA_CONFIG_MAX_CANDIDATES];
                        sdpa_fwd_config_t config;
                        sdpa_fwd_config_candidates(&q, c, SDPA_CONFIG_MAX_CANDIDATES);
                        if (sdpa_fwd_config_choose(&q, (p & QUANT) != 0, &target, &config,
                                                   &source) == SDPA_SUCCESS)
                            chosen = c[source.skipped_rows];
                    }
                    for (size_t r = 0; chosen && r < rows; r++)
                        if (chosen == (backward ? (const void *)&sdpa_bwd_config_table[r]
                                                : (const void *)&sdpa_fwd_config_table[r]))
                            hit[r] = 1;
                    const size_t fallbacks = backward ? sdpa_bwd_config_fallbacks_size
                                                      : sdpa_fwd_config_fallbacks_size;
                    for (size_t r = 0; chosen && r < fallbacks; r++)
                        if (chosen == (backward ? (const void *)&sdpa_bwd_config_fallbacks[r]
                                                : (const void *)&sdpa_fwd_config_fallbacks[r]))
                            hit[rows + r] = 1;
                }
        }
    }
}

/* Fails listing every row no query selects. */
static void assert_all_selectable(int backward)
{
    const size_t rows = backward ? sdpa_bwd_config_table_size : sdpa_fwd_config_table_size;
    const size_t fallbacks =
            backward ? sdpa_bwd_config_fallbacks_size : sdpa_fwd_config_fallbacks_size;
    static char hit[1024];
    ck_assert_uint_le(rows + fallbacks, sizeof(hit));
    memset(hit, 0, sizeof(hit));
    mark_choices(backward, hit);

    char unreachable[1024] = "";
    size_t missing = 0;
    for (size_t r = 0; r < rows + fallbacks; r++) {
        if (hit[r])
            continue;
        const sdpa_config_criteria_t *c;
        if (r < rows)
            c = backward ? &sdpa_bwd_config_table[r].criteria : &sdpa_fwd_config_table[r].criteria;
        else
            c = backward ? &sdpa_bwd_config_fallbacks[r - rows].criteria
                         : &sdpa_fwd_config_fallbacks[r - rows].criteria;
        char what[96];
        sdpa_config_criteria_format(c, what, sizeof(what));
        /* Every one on stderr, the first few in the message (Check limits
         * its length). */
        fprintf(stderr, "never selected: %s%s\n", what, r < rows ? "" : " (fallback)");
        size_t used = strlen(unreachable);
        if (missing < 8)
            snprintf(unreachable + used, sizeof(unreachable) - used, "\n  %s%s", what,
                     r < rows ? "" : " (fallback)");
        missing++;
    }
    ck_assert_msg(missing == 0, "%zu %s rows are never selected:%s", missing,
                  backward ? "backward" : "forward", unreachable);
}

START_TEST(every_fwd_row_is_selectable)
{
    assert_all_selectable(0);
}
END_TEST

START_TEST(every_bwd_row_is_selectable)
{
    assert_all_selectable(1);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(every_fwd_row_is_selectable),
            TEST_ONCE(every_bwd_row_is_selectable),
    };
    const test_suite_t suite = {.name = "config_rows", .timeout = 120};
    return test_run_table(&suite, tests, TEST_COUNT(tests));
}
