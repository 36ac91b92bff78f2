/* sdpa_bwd_prepost.cl - sdpa_bwd_preprocess and sdpa_bwd_postprocess of
 * sdpa_bwd.cl, a module of their own: they read only the dtype of Q and O
 * (QRY_DT, DST_DT: one dtype), so one module per dtype serves every
 * backward configuration (kernel_abi_bwd.h). */
#include "kernel_abi_bwd.h"
#define SDPA_BWD_PARTS (SDPA_BWD_PART_PRE | SDPA_BWD_PART_POST)
#include "sdpa_bwd.cl"
