/* backend.c - the ze backend's table and the ABI negotiation. */
#include "backend_api.h"
#include "ze.h"

/* The table: every sdpa_ze_* function, the status-returning ones through
 * SDPA_ENTRY, and sdpa_backend_negotiate (backend_api.h). */
SDPA_BACKEND_TABLE(sdpa_ze, "ze")
