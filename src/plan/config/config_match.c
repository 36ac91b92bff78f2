/* config_match.c - which table rows serve a problem, and in which order. */
#include <stdio.h>
#include <string.h>

#include "kernel_config.h"

void sdpa_fwd_config_from_ints(const int v[SDPA_FWD_CONFIG_INTS], sdpa_fwd_config_t *out)
{
    *out = (sdpa_fwd_config_t){v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
}

void sdpa_fwd_config_to_ints(const sdpa_fwd_config_t *c, int v[SDPA_FWD_CONFIG_INTS])
{
    const int values[SDPA_FWD_CONFIG_INTS] = {c->unroll_m_kq, c->unroll_n_kq, c->unroll_m_vs,
                                              c->unroll_n_vs, c->wg_m_kq,     c->wg_n_kq,
                                              c->wg_m_vs,     c->wg_n_vs};
    memcpy(v, values, sizeof(values));
}

void sdpa_bwd_config_from_ints(const int v[SDPA_BWD_CONFIG_INTS], sdpa_bwd_config_t *out)
{
    *out = (sdpa_bwd_config_t){v[0], v[1], v[2], v[3], v[4],  v[5],
                               v[6], v[7], v[8], v[9], v[10], v[11]};
}

void sdpa_bwd_config_to_ints(const sdpa_bwd_config_t *c, int v[SDPA_BWD_CONFIG_INTS])
{
    const int values[SDPA_BWD_CONFIG_INTS] = {c->unroll_m_bcbr, c->unroll_n_bcbr, c->unroll_m_dbc,
                                              c->unroll_n_dbc,  c->unroll_m_dbr,  c->unroll_n_dbr,
                                              c->wg_m_bcbr,     c->wg_n_bcbr,     c->wg_m_dbc,
                                              c->wg_n_dbc,      c->wg_m_dbr,      c->wg_n_dbr};
    memcpy(v, values, sizeof(values));
}

static char *format_ints(const int *values, int count, char *buf, size_t size)
{
    size_t used = 0;
    if (size == 0)
        return buf;
    buf[0] = '\0';
    for (int i = 0; i < count && used < size; i++) {
        int n = snprintf(buf + used, size - used, i ? ",%d" : "%d", values[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    return buf;
}

char *sdpa_fwd_config_format(const sdpa_fwd_config_t *config, char *buf, size_t size)
{
    int v[SDPA_FWD_CONFIG_INTS];
    sdpa_fwd_config_to_ints(config, v);
    return format_ints(v, SDPA_FWD_CONFIG_INTS, buf, size);
}

char *sdpa_bwd_config_format(const sdpa_bwd_config_t *config, char *buf, size_t size)
{
    int v[SDPA_BWD_CONFIG_INTS];
    sdpa_bwd_config_to_ints(config, v);
    return format_ints(v, SDPA_BWD_CONFIG_INTS, buf, size);
}

int sdpa_config_criteria_match(const sdpa_config_criteria_t *key, const sdpa_config_query_t *query)
{
    if (query->device_class != key->device_class || query->head_size > key->head_size)
        return 0;
    if (key->seq_len != SDPA_CONFIG_ANY_SEQ && query->seq_len > key->seq_len)
        return 0;
    if ((key->props ^ query->props) & SDPA_CONFIG_EXACT_PROPS)
        return 0;
    unsigned optional = key->props & ~SDPA_CONFIG_EXACT_PROPS;
    return (query->props & optional) == optional;
}

static int count_props(unsigned props)
{
    int n = 0;
    for (; props; props &= props - 1)
        n++;
    return n;
}

int sdpa_config_criteria_compare(const sdpa_config_criteria_t *a, const sdpa_config_criteria_t *b)
{
    /* Props that break ties between rows with as many props, in oneDNN's
     * order: the row that has the earlier one comes first. */
    static const unsigned tie_order[] = {SDPA_CONFIG_FMA,    SDPA_CONFIG_QUANTIZED,
                                         SDPA_CONFIG_THIN_Q, SDPA_CONFIG_INTEGRATED,
                                         SDPA_CONFIG_F32,    SDPA_CONFIG_F16_ACC};

    if (a->device_class != b->device_class)
        return a->device_class < b->device_class ? -1 : 1;
    if (a->head_size != b->head_size)
        return a->head_size < b->head_size ? -1 : 1;
    if ((a->props == 0) != (b->props == 0))
        return a->props == 0 ? 1 : -1;
    int na = count_props(a->props), nb = count_props(b->props);
    if (na != nb)
        return na > nb ? -1 : 1;
    if (a->seq_len != b->seq_len) {
        if (a->seq_len == SDPA_CONFIG_ANY_SEQ)
            return 1;
        if (b->seq_len == SDPA_CONFIG_ANY_SEQ)
            return -1;
        return a->seq_len < b->seq_len ? -1 : 1;
    }
    for (size_t i = 0; i < sizeof(tie_order) / sizeof(tie_order[0]); i++)
        if ((a->props & tie_order[i]) != (b->props & tie_order[i]))
            return (a->props & tie_order[i]) ? -1 : 1;
    return 0;
}

char *sdpa_config_criteria_format(const sdpa_config_criteria_t *c, char *buf, size_t size)
{
    static const struct {
        unsigned prop;
        const char *name;
    } names[] = {{SDPA_CONFIG_THIN_Q, " thin"},    {SDPA_CONFIG_QUANTIZED, " quant"},
                 {SDPA_CONFIG_FMA, " fma"},        {SDPA_CONFIG_F32, " f32"},
                 {SDPA_CONFIG_F16_ACC, " f16acc"}, {SDPA_CONFIG_INTEGRATED, " integ"}};
    char seq[32] = "";
    if (c->seq_len != SDPA_CONFIG_ANY_SEQ)
        snprintf(seq, sizeof(seq), " sk<=%d", c->seq_len);
    char props[64] = "";
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (c->props & names[i].prop)
            strcat(props, names[i].name);
    snprintf(buf, size, "%s h%d%s%s", sdpa_device_class_name(c->device_class), c->head_size, seq,
             props);
    return buf;
}

sdpa_device_class_t sdpa_config_fallback_class(sdpa_device_class_t device_class)
{
    switch (device_class) {
    case SDPA_DEVICE_CLASS_XE3:
        return SDPA_DEVICE_CLASS_XE2;
    /* Xe-LP has no tuned rows; Xe-LPG (MTL, in XE_HPG) is the closest
     * design: no systolic arrays, integrated. */
    case SDPA_DEVICE_CLASS_XE_LP:
        return SDPA_DEVICE_CLASS_XE_HPG;
    default:
        return SDPA_DEVICE_CLASS_COUNT;
    }
}

/* Rows are handled through their criteria, the first member of both row
 * types, so one implementation serves the forward and backward tables. */
typedef struct candidate_list {
    const sdpa_config_criteria_t **out;
    size_t max;   /* capacity of out */
    size_t count; /* candidates seen so far, stored or not */
} candidate_list_t;

/* Inserts c among the candidates of the current tier (those from index
 * tier_start on), after every candidate that does not compare greater, so
 * rows with equal criteria keep their table order. */
static void insert_candidate(candidate_list_t *list, size_t tier_start,
                             const sdpa_config_criteria_t *c)
{
    size_t stored = list->count < list->max ? list->count : list->max;
    size_t pos = tier_start;
    while (pos < stored && sdpa_config_criteria_compare(list->out[pos], c) <= 0)
        pos++;
    list->count++;
    if (pos >= list->max)
        return;
    size_t last = stored < list->max ? stored : list->max - 1;
    for (size_t i = last; i > pos; i--)
        list->out[i] = list->out[i - 1];
    list->out[pos] = c;
}

static void collect_candidates(const void *rows, size_t row_count, size_t row_size,
                               const void *fallbacks, size_t fallback_count,
                               const sdpa_config_query_t *query, candidate_list_t *list)
{
    sdpa_config_query_t q = *query;
    while (q.device_class != SDPA_DEVICE_CLASS_COUNT) {
        size_t tier_start = list->count;
        for (size_t i = 0; i < row_count; i++) {
            const sdpa_config_criteria_t *c =
                    (const sdpa_config_criteria_t *)((const char *)rows + i * row_size);
            if (sdpa_config_criteria_match(c, &q))
                insert_candidate(list, tier_start, c);
        }
        sdpa_device_class_t next = sdpa_config_fallback_class(q.device_class);
        if (q.device_class == SDPA_DEVICE_CLASS_XE3)
            q.props &= ~(unsigned)SDPA_CONFIG_INTEGRATED;
        q.device_class = next;
    }
    for (size_t i = 0; i < fallback_count; i++) {
        const sdpa_config_criteria_t *c =
                (const sdpa_config_criteria_t *)((const char *)fallbacks + i * row_size);
        if (query->head_size <= c->head_size) {
            /* The last resort must be stored even if the tiers above filled
             * the list: it takes the last slot then. */
            if (list->count >= list->max) {
                list->out[list->max - 1] = c;
                list->count++;
            } else {
                insert_candidate(list, list->count, c);
            }
            break;
        }
    }
}

size_t sdpa_config_candidates_of(const void *rows, size_t row_count, const void *fallbacks,
                                 size_t fallback_count, size_t row_size,
                                 const sdpa_config_query_t *query,
                                 const sdpa_config_criteria_t **out, size_t max)
{
    const sdpa_config_criteria_t *found[SDPA_CONFIG_MAX_CANDIDATES];
    candidate_list_t list = {found, SDPA_CONFIG_MAX_CANDIDATES, 0};
    collect_candidates(rows, row_count, row_size, fallbacks, fallback_count, query, &list);
    for (size_t i = 0; i < max && i < list.count && i < list.max; i++)
        out[i] = found[i];
    return list.count;
}

size_t sdpa_config_candidates_in(const void *rows, size_t row_count, size_t row_size,
                                 const sdpa_config_query_t *query,
                                 const sdpa_config_criteria_t **out, size_t max)
{
    return sdpa_config_candidates_of(rows, row_count, NULL, 0, row_size, query, out, max);
}

/* sdpa_fwd_config_candidates and sdpa_bwd_config_candidates: a direction's
 * table and fallbacks, the rows typed (criteria is their first member). */
#define DIRECTION_CANDIDATES(dir)                                                                  \
    size_t sdpa_##dir##_config_candidates(const sdpa_config_query_t *query,                        \
                                          const sdpa_##dir##_config_row_t **out, size_t max)       \
    {                                                                                              \
        const sdpa_config_criteria_t *found[SDPA_CONFIG_MAX_CANDIDATES];                           \
        size_t n = sdpa_config_candidates_of(                                                      \
                sdpa_##dir##_config_table, sdpa_##dir##_config_table_size,                         \
                sdpa_##dir##_config_fallbacks, sdpa_##dir##_config_fallbacks_size,                 \
                sizeof(sdpa_##dir##_config_row_t), query, found, SDPA_CONFIG_MAX_CANDIDATES);      \
        for (size_t i = 0; i < max && i < n && i < SDPA_CONFIG_MAX_CANDIDATES; i++)                \
            out[i] = (const sdpa_##dir##_config_row_t *)found[i];                                  \
        return n;                                                                                  \
    }

DIRECTION_CANDIDATES(fwd)
DIRECTION_CANDIDATES(bwd)
