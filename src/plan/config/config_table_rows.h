/*
 * config_table_rows.h - the short names the configuration tables' rows use
 * for the query properties (kernel_config.h). Included by the table files
 * (config_*_table.c) and their tests only: the names are too short for
 * anywhere else.
 */
#ifndef SDPA_CORE_CONFIG_TABLE_ROWS_H
#define SDPA_CORE_CONFIG_TABLE_ROWS_H

#include "kernel_config.h"

#define ANY SDPA_CONFIG_ANY_SEQ
#define THIN SDPA_CONFIG_THIN_Q
#define QUANT SDPA_CONFIG_QUANTIZED
#define INTEG SDPA_CONFIG_INTEGRATED
#define FMA SDPA_CONFIG_FMA
#define F32 SDPA_CONFIG_F32
#define F16ACC SDPA_CONFIG_F16_ACC

#endif /* SDPA_CORE_CONFIG_TABLE_ROWS_H */
