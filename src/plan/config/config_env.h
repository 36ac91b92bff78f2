/*
 * config_env.h - the SDPA_CONFIG, QUANTIZED_SDPA_CONFIG and BWD_SDPA_CONFIG
 * overrides.
 *
 * Format: exactly N decimal integers (8 forward, 12 backward) separated by
 * commas, each optionally signed, with optional spaces or tabs around them,
 * nothing else; every value in 1..SDPA_CONFIG_VALUE_MAX. An empty variable
 * counts as unset. Anything else is refused with SDPA_ERROR_INVALID_CONFIG and
 * a message that quotes the value and states the format. (oneDNN reads the
 * leading integers and ignores the rest; we refuse, because a silently
 * half-read override measures the wrong kernel.)
 *
 * Parsing only checks the format; whether the tiling suits the problem and
 * the device is config_check.h's job.
 */
#ifndef SDPA_CORE_CONFIG_ENV_H
#define SDPA_CORE_CONFIG_ENV_H

#include "kernel_config.h"
#include "sdpa.h"

/* Largest value an override may hold. No tile dimension or sub-group count
 * can usefully exceed the largest work-group of any Level Zero GPU (1024
 * work-items), and the bound keeps every product of three values below 2^30,
 * so the constraint checks cannot overflow. */
#define SDPA_CONFIG_VALUE_MAX 1024

#define SDPA_FWD_CONFIG_FORMAT                                                                     \
    "unroll_m_kq,unroll_n_kq,unroll_m_vs,unroll_n_vs,wg_m_kq,wg_n_kq,wg_m_vs,wg_n_vs"
#define SDPA_BWD_CONFIG_FORMAT                                                                     \
    "unroll_m_BcBr,unroll_n_BcBr,unroll_m_DBc,unroll_n_DBc,unroll_m_DBr,unroll_n_DBr,"             \
    "wg_m_BcBr,wg_n_BcBr,wg_m_DBc,wg_n_DBc,wg_m_DBr,wg_n_DBr"

/* Parses text, the value of the variable called name, into count integers.
 * format names the fields for the message. Returns SDPA_SUCCESS, or
 * SDPA_ERROR_INVALID_CONFIG with a message such as
 * `SDPA_CONFIG = "16,16,x,16,1,1,1,1": item 3 ("x") is not a decimal integer;
 * expected 8 integers in 1..1024 separated by commas:
 * unroll_m_kq,...`. values is written only on success. */
sdpa_status_t sdpa_config_parse_ints(const char *name, const char *text, const char *format,
                                     int *values, int count);

/* The forward override for a problem: QUANTIZED_SDPA_CONFIG if quantized
 * (K or V has scales or zero points), else SDPA_CONFIG; the other variable
 * is ignored. Sets *found to 1 and fills *out if the variable is set and
 * valid, *found to 0 if it is unset or empty, and on a malformed value
 * returns SDPA_ERROR_INVALID_CONFIG. *name (may be NULL) receives the
 * variable's name. */
sdpa_status_t sdpa_fwd_config_from_env(int quantized, sdpa_fwd_config_t *out, int *found,
                                       const char **name);

/* The same for BWD_SDPA_CONFIG. */
sdpa_status_t sdpa_bwd_config_from_env(sdpa_bwd_config_t *out, int *found);

#endif /* SDPA_CORE_CONFIG_ENV_H */
