/* ref_backend.c - the ref backend's table and the ABI negotiation. */
#include "backend_api.h"
#include "ref.h"

/* The table: every ref_* function, the status-returning ones through
 * SDPA_ENTRY, and sdpa_backend_negotiate (backend_api.h). */
SDPA_BACKEND_TABLE(ref, "ref")
