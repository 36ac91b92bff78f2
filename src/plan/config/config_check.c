/* config_check.c - the rules a kernel configuration must follow. */
#include <inttypes.h>
#include <stdio.h>

#include "config_check.h"
#include "config_env.h"
#include "error.h"
#include "kernel_abi.h"
#include "kernel_abi_bwd.h"

_Static_assert(SDPA_CONFIG_VALUE_MAX == 1024, "the range rule's message says 1..1024");

/* The configuration under check and its name; its text is formatted only
 * when a rule fails (choosing checks many rows that pass or are skipped). */
typedef struct checked_config {
    const char *source;
    const sdpa_fwd_config_t *fwd; /* one of fwd, bwd */
    const sdpa_bwd_config_t *bwd;
    char text[128];
} checked_config_t;

static const char *config_text(checked_config_t *cc)
{
    if (cc->fwd)
        return sdpa_fwd_config_format(cc->fwd, cc->text, sizeof(cc->text));
    return sdpa_bwd_config_format(cc->bwd, cc->text, sizeof(cc->text));
}

/* Fails with "<source> <config> breaks the rule <rule>: <details>". */
#define BREAKS(rule, details_format, ...)                                                          \
    sdpa_fail(SDPA_ERROR_INVALID_CONFIG, "%s %s breaks the rule %s: " details_format, cc->source,  \
              config_text(cc), rule, __VA_ARGS__)

static const char *const fwd_names[SDPA_FWD_CONFIG_INTS] = {
        "unroll_m_kq", "unroll_n_kq", "unroll_m_vs", "unroll_n_vs",
        "wg_m_kq",     "wg_n_kq",     "wg_m_vs",     "wg_n_vs"};

static const char *const bwd_names[SDPA_BWD_CONFIG_INTS] = {
        "unroll_m_BcBr", "unroll_n_BcBr", "unroll_m_DBc", "unroll_n_DBc",
        "unroll_m_DBr",  "unroll_n_DBr",  "wg_m_BcBr",    "wg_n_BcBr",
        "wg_m_DBc",      "wg_n_DBc",      "wg_m_DBr",     "wg_n_DBr"};

/* Checks that every value is in 1..SDPA_CONFIG_VALUE_MAX (names[i] names
 * values[i]). */
static sdpa_status_t check_ranges(checked_config_t *cc, const int *values, const char *const *names,
                                  int count)
{
    for (int i = 0; i < count; i++)
        if (values[i] < 1 || values[i] > SDPA_CONFIG_VALUE_MAX)
            return BREAKS("every value is in 1..1024", "%s = %d", names[i], values[i]);
    return SDPA_SUCCESS;
}

/* Checks that local memory of slm bytes fits the device; what names the
 * formula and its inputs. */
static sdpa_status_t check_local_memory(checked_config_t *cc, const char *what, int64_t slm,
                                        const sdpa_kernel_target_t *t)
{
    if (slm <= (int64_t)t->device->slm_bytes)
        return SDPA_SUCCESS;
    return BREAKS("local memory <= the device's", "%s = %" PRId64 " > %" PRIu64 " bytes on %s",
                  what, slm, t->device->slm_bytes, t->device->name);
}

/* Checks that a work-group of n_sg sub-groups fits the device: local size
 * {sg, n_sg, 1}. */
static sdpa_status_t check_group_size(checked_config_t *cc, const char *rule, const char *product,
                                      const sdpa_kernel_target_t *t, int64_t n_sg)
{
    const sdpa_device_info_t *dev = t->device;
    int64_t items = (int64_t)t->subgroup_size * n_sg;
    if (items > dev->max_group_size)
        return BREAKS(rule, "sub-group %" PRIu32 " * %s = %" PRId64 " > %" PRIu32 " on %s",
                      t->subgroup_size, product, items, dev->max_group_size, dev->name);
    if (t->subgroup_size > dev->max_group_size_xyz[0] || n_sg > dev->max_group_size_xyz[1])
        return BREAKS(rule,
                      "local size {%" PRIu32 ", %" PRId64 ", 1} exceeds {%" PRIu32 ", %" PRIu32
                      ", %" PRIu32 "} on %s",
                      t->subgroup_size, n_sg, dev->max_group_size_xyz[0],
                      dev->max_group_size_xyz[1], dev->max_group_size_xyz[2], dev->name);
    return SDPA_SUCCESS;
}

/* Checks that an axis that runs along the lanes of a sub-group holds whole
 * sub-groups. */
static sdpa_status_t check_lane_axis(checked_config_t *cc, const char *name, const char *why,
                                     int value, const sdpa_kernel_target_t *t)
{
    if (value % (int64_t)t->subgroup_size == 0)
        return SDPA_SUCCESS;
    char rule[128];
    snprintf(rule, sizeof(rule), "%s %% sub-group size == 0 (%s)", name, why);
    return BREAKS(rule, "%d %% %" PRIu32 " = %" PRId64, value, t->subgroup_size,
                  value % (int64_t)t->subgroup_size);
}

/* Checks that a lane's share of a tile fits the kernel's private arrays.
 * formula names the share, e.g. "unroll_m_kq * (unroll_n_kq / sub-group)". */
static sdpa_status_t check_per_lane(checked_config_t *cc, const char *formula, int64_t share,
                                    int64_t max)
{
    if (share <= max)
        return SDPA_SUCCESS;
    char rule[160];
    snprintf(rule, sizeof(rule), "%s <= %" PRId64 " (private memory per lane)", formula, max);
    return BREAKS(rule, "%" PRId64 " > %" PRId64, share, max);
}

/* Checks a == b: two tilings cover the same extent. */
static sdpa_status_t check_same(checked_config_t *cc, const char *rule, int64_t a, int64_t b)
{
    if (a == b)
        return SDPA_SUCCESS;
    return BREAKS(rule, "%" PRId64 " != %" PRId64, a, b);
}

/* Checks that unroll * wg rows of a tile cover the head size. */
static sdpa_status_t check_covers_head(checked_config_t *cc, const char *rule, int unroll, int wg,
                                       const sdpa_kernel_target_t *t)
{
    int64_t rows = (int64_t)unroll * wg;
    if (rows >= t->head_size)
        return SDPA_SUCCESS;
    return BREAKS(rule, "%d * %d = %" PRId64 " < %" PRId64, unroll, wg, rows, t->head_size);
}

/* Checks that a grid of n sub-groups fits in the largest, of max. */
static sdpa_status_t check_grid_fits(checked_config_t *cc, const char *rule, int64_t n, int64_t max)
{
    if (n <= max)
        return SDPA_SUCCESS;
    return BREAKS(rule, "%" PRId64 " > %" PRId64 " sub-groups", n, max);
}

/* An axis that runs along the lanes (check_lane_axis). */
typedef struct lane_axis {
    const char *name, *why;
    int value;
} lane_axis_t;

static sdpa_status_t check_lane_axes(checked_config_t *cc, const lane_axis_t *axes, int count,
                                     const sdpa_kernel_target_t *t)
{
    for (int i = 0; i < count; i++) {
        sdpa_status_t status = check_lane_axis(cc, axes[i].name, axes[i].why, axes[i].value, t);
        if (status != SDPA_SUCCESS)
            return status;
    }
    return SDPA_SUCCESS;
}

sdpa_status_t sdpa_fwd_config_check(const sdpa_fwd_config_t *c, const sdpa_kernel_target_t *t,
                                    const char *source)
{
    checked_config_t checked = {source, c, NULL, ""}, *cc = &checked;
    int values[SDPA_FWD_CONFIG_INTS];
    sdpa_fwd_config_to_ints(c, values);
    sdpa_status_t status = check_ranges(cc, values, fwd_names, SDPA_FWD_CONFIG_INTS);
    if (status != SDPA_SUCCESS)
        return status;

    int64_t bq_kq = (int64_t)c->unroll_n_kq * c->wg_n_kq;
    int64_t bq_vs = (int64_t)c->unroll_n_vs * c->wg_n_vs;
    /* sdpa_fwd.cl: both grids index the same sub-groups, S has its lanes
     * along queries and O along the head dimension. */
    int64_t sg_kq = (int64_t)c->wg_m_kq * c->wg_n_kq;
    int64_t sg_vs = (int64_t)c->wg_m_vs * c->wg_n_vs;
    const lane_axis_t lanes[] = {
            {"unroll_n_kq", "lanes run along the queries of S", c->unroll_n_kq},
            {"unroll_m_vs", "lanes run along the head dimension of O", c->unroll_m_vs}};
    int64_t q_vectors = c->unroll_n_kq / (int64_t)t->subgroup_size;
    int64_t d_vectors = c->unroll_m_vs / (int64_t)t->subgroup_size;
    if ((status = check_same(cc,
                             "unroll_n_kq * wg_n_kq == unroll_n_vs * wg_n_vs (S and O cover the "
                             "same queries)",
                             bq_kq, bq_vs)))
        return status;
    if (c->unroll_n_kq % c->unroll_n_vs != 0)
        return BREAKS("unroll_n_kq % unroll_n_vs == 0", "%d %% %d = %d", c->unroll_n_kq,
                      c->unroll_n_vs, c->unroll_n_kq % c->unroll_n_vs);
    if ((status = check_covers_head(cc, "unroll_m_vs * wg_m_vs >= head size", c->unroll_m_vs,
                                    c->wg_m_vs, t)) ||
        (status = check_same(cc,
                             "wg_m_kq * wg_n_kq == wg_m_vs * wg_n_vs (both grids are the "
                             "work-group's sub-groups)",
                             sg_kq, sg_vs)) ||
        (status = check_lane_axes(cc, lanes, 2, t)) ||
        (status = check_per_lane(cc, "unroll_m_kq * (unroll_n_kq / sub-group)",
                                 c->unroll_m_kq * q_vectors, SDPA_FWD_MAX_S_PER_LANE(t->d_max))) ||
        (status = check_per_lane(cc, "unroll_n_vs * (unroll_m_vs / sub-group)",
                                 c->unroll_n_vs * d_vectors, SDPA_FWD_MAX_O_PER_LANE(t->d_max))) ||
        (status = check_per_lane(cc, "unroll_n_kq / sub-group", q_vectors,
                                 SDPA_FWD_MAX_Q_PER_LANE(t->d_max))))
        return status;

    if (!t->device)
        return SDPA_SUCCESS;
    status = check_group_size(cc, "sub-group * wg_m_kq * wg_n_kq <= work-group limit",
                              "wg_m_kq * wg_n_kq", t, sg_kq);
    if (status != SDPA_SUCCESS)
        return status;
    int64_t bk = (int64_t)c->unroll_m_kq * c->wg_m_kq;
    int64_t slm = SDPA_FWD_SLM_BYTES((int64_t)t->d_max, bq_kq, bk, (int64_t)c->wg_m_kq);
    char what[128];
    snprintf(what, sizeof(what),
             "SDPA_FWD_SLM_BYTES(d_max %d, BQ %" PRId64 ", BK %" PRId64 ", wg_m_kq %d)", t->d_max,
             bq_kq, bk, c->wg_m_kq);
    return check_local_memory(cc, what, slm, t);
}

sdpa_status_t sdpa_bwd_config_check(const sdpa_bwd_config_t *c, const sdpa_kernel_target_t *t,
                                    const char *source)
{
    checked_config_t checked = {source, NULL, c, ""}, *cc = &checked;
    int values[SDPA_BWD_CONFIG_INTS];
    sdpa_bwd_config_to_ints(c, values);
    sdpa_status_t status = check_ranges(cc, values, bwd_names, SDPA_BWD_CONFIG_INTS);
    if (status != SDPA_SUCCESS)
        return status;

    int64_t sg_bcbr = (int64_t)c->wg_m_bcbr * c->wg_n_bcbr;
    int64_t sg_dbc = (int64_t)c->wg_m_dbc * c->wg_n_dbc;
    int64_t sg_dbr = (int64_t)c->wg_m_dbr * c->wg_n_dbr;
    int64_t bc = (int64_t)c->unroll_m_bcbr * c->wg_m_bcbr;
    int64_t br = (int64_t)c->unroll_n_bcbr * c->wg_n_bcbr;
    /* kernel_abi_bwd.h: lanes run along keys in S and dK/dV, along the head
     * dim in dQ. Every tile lives in local memory: no per-lane limit. */
    const lane_axis_t lanes[] = {
            {"unroll_m_BcBr", "lanes run along the keys of S", c->unroll_m_bcbr},
            {"unroll_n_DBc", "lanes run along the keys of dK/dV", c->unroll_n_dbc},
            {"unroll_m_DBr", "lanes run along the head dim of dQ", c->unroll_m_dbr}};
    if ((status = check_same(cc,
                             "unroll_m_BcBr * wg_m_BcBr == unroll_n_DBc * wg_n_DBc (S and dK/dV "
                             "cover the same keys)",
                             bc, (int64_t)c->unroll_n_dbc * c->wg_n_dbc)) ||
        (status = check_grid_fits(cc, "wg_m_DBc * wg_n_DBc <= wg_m_BcBr * wg_n_BcBr", sg_dbc,
                                  sg_bcbr)) ||
        (status = check_covers_head(cc, "unroll_m_DBc * wg_m_DBc >= head size", c->unroll_m_dbc,
                                    c->wg_m_dbc, t)) ||
        (status = check_same(cc,
                             "unroll_n_BcBr * wg_n_BcBr == unroll_n_DBr * wg_n_DBr (S and dQ "
                             "cover the same queries)",
                             br, (int64_t)c->unroll_n_dbr * c->wg_n_dbr)) ||
        (status = check_grid_fits(cc, "wg_m_DBr * wg_n_DBr <= wg_m_BcBr * wg_n_BcBr", sg_dbr,
                                  sg_bcbr)) ||
        (status = check_covers_head(cc, "unroll_m_DBr * wg_m_DBr >= head size", c->unroll_m_dbr,
                                    c->wg_m_dbr, t)) ||
        (status = check_lane_axes(cc, lanes, 3, t)))
        return status;

    if (!t->device)
        return SDPA_SUCCESS;
    /* The rules above make BcBr the largest sub-group grid of the pass. */
    status = check_group_size(cc, "sub-group * wg_m_BcBr * wg_n_BcBr <= work-group limit",
                              "wg_m_BcBr * wg_n_BcBr", t, sg_bcbr);
    if (status != SDPA_SUCCESS)
        return status;
    /* Both the main kernel and the deterministic dQ pass must fit: a
     * configuration does not know which mode it will serve. */
    /* Local memory is laid out from the head size itself (SDPA_BWD_LD). */
    int64_t slm = SDPA_BWD_SLM_BYTES(t->head_size, bc, br);
    int64_t slm_dq = SDPA_BWD_DQ_SLM_BYTES(t->head_size, bc, br);
    if (slm_dq > slm)
        slm = slm_dq;
    char what[128];
    snprintf(what, sizeof(what),
             "backward local memory (head size %" PRId64 ", Bc %" PRId64 ", Br %" PRId64 ")",
             t->head_size, bc, br);
    return check_local_memory(cc, what, slm, t);
}
