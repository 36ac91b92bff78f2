/*
 * scratch_layout.h - carving one scratch allocation into regions, the same
 * way for every primitive that needs scratch (the backward, bwd_scratch.c;
 * split-KV decode, decode_plan.c): each region starts at a multiple of
 * SDPA_SCRATCH_ALIGNMENT bytes from the base (which the backend, or the
 * caller per sdpa.h, aligns as much), and every size is overflow-checked
 * (size_math.h).
 */
#ifndef SDPA_CORE_SCRATCH_LAYOUT_H
#define SDPA_CORE_SCRATCH_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

/* A byte range of the scratch; bytes == 0 means absent. */
typedef struct sdpa_scratch_region {
    size_t offset, bytes;
} sdpa_scratch_region_t;

/* Appends a region of count elements of element_size bytes to a scratch
 * whose regions so far end at *end, at the next multiple of
 * SDPA_SCRATCH_ALIGNMENT. Sets *region and moves *end to the region's end.
 * Returns 1, or 0 (*end and *region untouched) if the scratch would exceed
 * SDPA_MAX_BUFFER_BYTES; count may be SDPA_SIZE_OVERFLOW (a saturated
 * sdpa_size_product), which fails. A caller may append several regions and
 * check once: `ok &= sdpa_scratch_append(...)`. */
int sdpa_scratch_append(size_t *end, sdpa_scratch_region_t *region, uint64_t count,
                        size_t element_size);

#endif /* SDPA_CORE_SCRATCH_LAYOUT_H */
