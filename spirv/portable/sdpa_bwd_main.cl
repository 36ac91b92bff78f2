/* sdpa_bwd_main.cl - sdpa_bwd of sdpa_bwd.cl alone, a module of its own
 * (the main kernel; kernel_abi_bwd.h). */
#include "kernel_abi_bwd.h"
#define SDPA_BWD_PARTS SDPA_BWD_PART_MAIN
#include "sdpa_bwd.cl"
