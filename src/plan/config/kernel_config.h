/*
 * kernel_config.h - kernel configurations (work-group tilings) and the tables
 * they are chosen from.
 *
 * A forward configuration is the 8 integers of SDPA_CONFIG, a backward one the
 * 12 of BWD_SDPA_CONFIG. Each table row says which problems it serves
 * (criteria) and what tiling to use. Choosing follows oneDNN's
 * choose_config: among the rows that match a query, the most specific wins
 * (see sdpa_config_criteria_compare). The data of the GPU rows comes from
 * oneDNN's src/gpu/intel/sdpa/configs.cpp; the CPU rows are ours.
 */
#ifndef SDPA_CORE_KERNEL_CONFIG_H
#define SDPA_CORE_KERNEL_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"

/* Forward tiling; the field order is SDPA_CONFIG's. */
typedef struct sdpa_fwd_config {
    int unroll_m_kq, unroll_n_kq; /* sub-group tile of S = K^T.Q (keys x queries) */
    int unroll_m_vs, unroll_n_vs; /* sub-group tile of O = V.P (head dim x queries) */
    int wg_m_kq, wg_n_kq;         /* sub-groups of a work-group for S */
    int wg_m_vs, wg_n_vs;         /* sub-groups of a work-group for O */
} sdpa_fwd_config_t;

#define SDPA_FWD_CONFIG_INTS 8

/* Backward tiling; the field order is BWD_SDPA_CONFIG's. Bc are keys, Br
 * queries, D the head dimension. */
typedef struct sdpa_bwd_config {
    int unroll_m_bcbr, unroll_n_bcbr; /* sub-group tile of S, dP (Bc x Br) */
    int unroll_m_dbc, unroll_n_dbc;   /* sub-group tile of dK, dV (D x Bc) */
    int unroll_m_dbr, unroll_n_dbr;   /* sub-group tile of dQ (D x Br) */
    int wg_m_bcbr, wg_n_bcbr;
    int wg_m_dbc, wg_n_dbc;
    int wg_m_dbr, wg_n_dbr;
} sdpa_bwd_config_t;

#define SDPA_BWD_CONFIG_INTS 12

/* Converting between the structs and the integer lists of the environment
 * variables (values in field order). */
void sdpa_fwd_config_from_ints(const int values[SDPA_FWD_CONFIG_INTS], sdpa_fwd_config_t *out);
void sdpa_fwd_config_to_ints(const sdpa_fwd_config_t *config, int values[SDPA_FWD_CONFIG_INTS]);
void sdpa_bwd_config_from_ints(const int values[SDPA_BWD_CONFIG_INTS], sdpa_bwd_config_t *out);
void sdpa_bwd_config_to_ints(const sdpa_bwd_config_t *config, int values[SDPA_BWD_CONFIG_INTS]);

/* Formats "16,16,32,16,4,2,4,2" into buf (always NUL-terminated); returns buf. */
char *sdpa_fwd_config_format(const sdpa_fwd_config_t *config, char *buf, size_t size);
char *sdpa_bwd_config_format(const sdpa_bwd_config_t *config, char *buf, size_t size);

/* Properties of a problem that select a row (oneDNN's property flags). */
enum sdpa_config_prop {
    SDPA_CONFIG_THIN_Q = 1u << 0,     /* at most 16 queries (Sq == 1: KV_GROUP_SIZE queries) */
    SDPA_CONFIG_QUANTIZED = 1u << 1,  /* K or V has scales or zero points */
    SDPA_CONFIG_INTEGRATED = 1u << 2, /* the device shares memory with the host */
    SDPA_CONFIG_FMA = 1u << 3,        /* the kernel multiplies with FMA, not systolic arrays */
    SDPA_CONFIG_F32 = 1u << 4,        /* Q is f32 */
    SDPA_CONFIG_F16_ACC = 1u << 5,    /* Q.K^T or P.V accumulates in f16 */
};

/* Properties that must be equal in row and query; the others match when the
 * row does not mention them (a row without F32 serves f32 problems too). */
#define SDPA_CONFIG_EXACT_PROPS (SDPA_CONFIG_THIN_Q | SDPA_CONFIG_QUANTIZED | SDPA_CONFIG_FMA)

#define SDPA_CONFIG_ANY_SEQ (-1)

/* Which problems a row serves: device class, head size up to head_size, key
 * count up to seq_len (or any), and props as above. */
typedef struct sdpa_config_criteria {
    sdpa_device_class_t device_class;
    int head_size;
    int seq_len;
    unsigned props;
} sdpa_config_criteria_t;

/* A problem seen by the tables. */
typedef struct sdpa_config_query {
    sdpa_device_class_t device_class;
    int64_t head_size; /* D */
    int64_t seq_len;   /* Sk */
    unsigned props;
} sdpa_config_query_t;

typedef struct sdpa_fwd_config_row {
    sdpa_config_criteria_t criteria;
    sdpa_fwd_config_t config;
} sdpa_fwd_config_row_t;

typedef struct sdpa_bwd_config_row {
    sdpa_config_criteria_t criteria;
    sdpa_bwd_config_t config;
} sdpa_bwd_config_row_t;

/* The tables (config_fwd_table.c, config_bwd_table.c), in no particular
 * order. Every row can be selected: some problem on some device of its class
 * chooses it (tests/core/test_config_rows.c). The fallback tables hold one
 * row per head-size bucket up to 256 (32, 64, 128, 256, ascending; device
 * class UNKNOWN_GPU and props are not looked at): the last resort for any
 * GPU problem, sized for small devices (the tables' files say which fit
 * where). */
extern const sdpa_fwd_config_row_t sdpa_fwd_config_table[];
extern const size_t sdpa_fwd_config_table_size;
extern const sdpa_fwd_config_row_t sdpa_fwd_config_fallbacks[];
extern const size_t sdpa_fwd_config_fallbacks_size;
extern const sdpa_bwd_config_row_t sdpa_bwd_config_table[];
extern const size_t sdpa_bwd_config_table_size;
extern const sdpa_bwd_config_row_t sdpa_bwd_config_fallbacks[];
extern const size_t sdpa_bwd_config_fallbacks_size;

/* 1 if row criteria key serves query: same device class, query head size <=
 * key's, query seq_len <= key's unless the key says any, the exact props
 * equal, and every other prop the key names present in the query. */
int sdpa_config_criteria_match(const sdpa_config_criteria_t *key, const sdpa_config_query_t *query);

/* oneDNN's order of rows, most specific first: by device class, then head
 * size ascending, then rows with props before rows without, then more props
 * first, then seq_len ascending (a bounded seq_len before "any"), then a fixed
 * order of single props. Returns <0, 0, >0 like strcmp. The first matching
 * row in this order is the smallest head bucket >= D, then the most specific
 * props, then the smallest seq bucket >= Sk. */
int sdpa_config_criteria_compare(const sdpa_config_criteria_t *a, const sdpa_config_criteria_t *b);

/* Describes criteria as "xe_hpc h128 sk<=512 thin quant fma f32 f16acc integ"
 * into buf (always NUL-terminated); returns buf. */
char *sdpa_config_criteria_format(const sdpa_config_criteria_t *criteria, char *buf, size_t size);

/* The device class whose rows a class falls back to when none of its own
 * matches (XE3 -> XE2, XE_LP -> XE_HPG), or SDPA_DEVICE_CLASS_COUNT for none.
 * A query that falls back to XE2 from XE3 drops INTEGRATED, as oneDNN does
 * (Xe2's discrete rows are faster on Xe3 than its integrated ones). */
sdpa_device_class_t sdpa_config_fallback_class(sdpa_device_class_t device_class);

/* The candidate rows for query, best first: the matching rows of the query's
 * class in sdpa_config_criteria_compare order, then those of its fallback
 * class(es), then the fallback-table row of the smallest bucket >= head_size
 * (if head_size <= 256). Stores the first min(max, SDPA_CONFIG_MAX_CANDIDATES)
 * of them as pointers into the tables in out (if the class rows alone would
 * fill SDPA_CONFIG_MAX_CANDIDATES slots, the fallback takes the last one) and
 * returns how many matched in total (which may be more). The caller takes the
 * first candidate its constraint checks accept. */
#define SDPA_CONFIG_MAX_CANDIDATES 64

size_t sdpa_fwd_config_candidates(const sdpa_config_query_t *query,
                                  const sdpa_fwd_config_row_t **out, size_t max);
size_t sdpa_bwd_config_candidates(const sdpa_config_query_t *query,
                                  const sdpa_bwd_config_row_t **out, size_t max);

/* The same for any table (rows and fallbacks of row_size bytes, each
 * starting with its criteria), as criteria pointers into them. */
size_t sdpa_config_candidates_of(const void *rows, size_t row_count, const void *fallbacks,
                                 size_t fallback_count, size_t row_size,
                                 const sdpa_config_query_t *query,
                                 const sdpa_config_criteria_t **out, size_t max);

/* The same without a fallback table: the matching rows of the query's
 * class and of its fallback classes, best first. */
size_t sdpa_config_candidates_in(const void *rows, size_t row_count, size_t row_size,
                                 const sdpa_config_query_t *query,
                                 const sdpa_config_criteria_t **out, size_t max);

#endif /* SDPA_CORE_KERNEL_CONFIG_H */
