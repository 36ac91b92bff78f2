/* scratch_layout.c - aligned, overflow-checked scratch regions. */
#include "scratch_layout.h"
#include "sdpa.h"
#include "size_math.h"

int sdpa_scratch_append(size_t *end, sdpa_scratch_region_t *region, uint64_t count,
                        size_t element_size)
{
    const uint64_t bytes = sdpa_size_mul(count, element_size);
    uint64_t offset = sdpa_size_add(*end, SDPA_SCRATCH_ALIGNMENT - 1);
    offset -= offset % SDPA_SCRATCH_ALIGNMENT;
    const uint64_t new_end = sdpa_size_add(offset, bytes);
    if (new_end > SDPA_MAX_BUFFER_BYTES)
        return 0;
    *region = (sdpa_scratch_region_t){(size_t)offset, (size_t)bytes};
    *end = (size_t)new_end;
    return 1;
}
