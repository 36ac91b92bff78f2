/* sdpa_bwd_dq.cl - sdpa_bwd_dq of sdpa_bwd.cl alone, a module of its own
 * (the deterministic dQ pass, built only for deterministic problems; kernel_abi_bwd.h). */
#include "kernel_abi_bwd.h"
#define SDPA_BWD_PARTS SDPA_BWD_PART_DQ
#include "sdpa_bwd.cl"
