/*
 * kernel.c - kernels: one cl_kernel per Level Zero kernel, created once.
 *
 * zeKernelSetArgumentValue only writes the kernel's host-side value array;
 * a launch snapshots that array (one memcpy) into the command list, and the
 * replay applies to the cl_kernel the pointer arguments and the other
 * arguments whose bytes differ from what it holds, then enqueues, both under
 * the kernel's lock.
 */
#include <stdlib.h>
#include <string.h>

#include "ze_cpu.h"

static const spirv_kernel_arg_t *arg_info(const struct cpu_ze_kernel *kernel, uint32_t i)
{
    return &kernel->info->args[i];
}

static void free_kernel(struct cpu_ze_kernel *kernel)
{
    if (kernel->cl != NULL)
        clReleaseKernel(kernel->cl);
    pthread_mutex_destroy(&kernel->launch_lock);
    free(kernel->arg_offset);
    free(kernel->arg_size);
    free(kernel->arg_is_set);
    free(kernel->arg_is_applied);
    free(kernel->values);
    free(kernel->applied);
    free(kernel);
}

void cpu_ze_kernel_release(struct cpu_ze_kernel *kernel)
{
    if (atomic_fetch_sub_explicit(&kernel->refs, 1, memory_order_acq_rel) != 1)
        return;
    struct cpu_ze_module *module = kernel->module;
    free_kernel(kernel);
    cpu_ze_module_release(module);
}

/* Lays the argument values out back to back, 8-byte aligned. */
static ze_result_t layout_arguments(struct cpu_ze_kernel *kernel)
{
    uint32_t n = kernel->info->num_args;
    size_t slots = n ? n : 1;
    kernel->num_args = n;
    kernel->arg_offset = calloc(slots, sizeof *kernel->arg_offset);
    kernel->arg_size = calloc(slots, sizeof *kernel->arg_size);
    kernel->arg_is_set = calloc(slots, 1);
    kernel->arg_is_applied = calloc(slots, 1);
    if (!kernel->arg_offset || !kernel->arg_size || !kernel->arg_is_set || !kernel->arg_is_applied)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    size_t offset = 0;
    for (uint32_t i = 0; i < n; i++) {
        /* Each value is at most SPIRV_MAX_VALUE_BYTES; thousands of them
         * (a crafted module) must not wrap the 32-bit offsets. */
        if (offset > UINT32_MAX - SPIRV_MAX_VALUE_BYTES - 8)
            return cpu_ze_fail(ZE_RESULT_ERROR_UNSUPPORTED_SIZE,
                               "zeKernelCreate: %s: %u arguments of over 4 GiB in all",
                               kernel->info->name, n);
        kernel->arg_offset[i] = (uint32_t)offset;
        kernel->arg_size[i] = arg_info(kernel, i)->size;
        offset += (kernel->arg_size[i] + 7u) & ~(size_t)7u;
    }
    kernel->values_size = offset;
    kernel->values = calloc(offset ? offset : 1, 1);
    kernel->applied = calloc(offset ? offset : 1, 1);
    if (!kernel->values || !kernel->applied)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeKernelCreate, ze_module_handle_t hModule, const ze_kernel_desc_t *desc,
             ze_kernel_handle_t *phKernel)
{
    CPU_ZE_CHECK_HANDLE(hModule, CPU_ZE_KIND_MODULE);
    CPU_ZE_CHECK_CREATE_DESC(desc, ZE_STRUCTURE_TYPE_KERNEL_DESC, phKernel);
    CPU_ZE_CHECK_POINTER(desc->pKernelName);
    if (desc->flags &
        ~(ze_kernel_flags_t)(ZE_KERNEL_FLAG_FORCE_RESIDENCY | ZE_KERNEL_FLAG_EXPLICIT_RESIDENCY))
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ENUMERATION, "zeKernelCreate: flags = 0x%x",
                           desc->flags);
    struct cpu_ze_module *module = (struct cpu_ze_module *)hModule;
    const spirv_kernel_info_t *info = spirv_find_kernel(module->reflection, desc->pKernelName);
    if (info == NULL)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_KERNEL_NAME,
                           "zeKernelCreate: no kernel \"%s\" in the module", desc->pKernelName);
    for (uint32_t i = 0; i < info->num_args; i++)
        if (info->args[i].kind == SPIRV_ARG_UNSUPPORTED)
            return cpu_ze_fail(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
                               "zeKernelCreate: %s: argument %u is an image, sampler or other "
                               "opaque type, which this driver does not support",
                               info->name, i);

    struct cpu_ze_kernel *kernel = calloc(1, sizeof *kernel);
    if (kernel == NULL)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    pthread_mutex_init(&kernel->launch_lock, NULL);
    kernel->module = module;
    kernel->info = info;
    ze_result_t result = layout_arguments(kernel);
    if (result != ZE_RESULT_SUCCESS) {
        free_kernel(kernel);
        return result;
    }
    cl_int err;
    kernel->cl = clCreateKernel(module->program, info->name, &err);
    if (kernel->cl == NULL) {
        free_kernel(kernel);
        return cpu_ze_fail(err == CL_OUT_OF_HOST_MEMORY ? ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY
                                                        : ZE_RESULT_ERROR_INVALID_KERNEL_NAME,
                           "clCreateKernel(%s): %s", info->name, cpu_ze_cl_error_name(err));
    }
    kernel->max_group_size = cpu_ze.engine.max_work_group_size;
    clGetKernelWorkGroupInfo(kernel->cl, cpu_ze.engine.device, CL_KERNEL_WORK_GROUP_SIZE,
                             sizeof kernel->max_group_size, &kernel->max_group_size, NULL);
    for (int d = 0; d < 3; d++)
        kernel->group_size[d] = info->required_group_size[0] ? info->required_group_size[d] : 1;
    atomic_init(&kernel->refs, 1);
    result = cpu_ze_handle_publish(kernel, CPU_ZE_KIND_KERNEL);
    if (result != ZE_RESULT_SUCCESS) {
        free_kernel(kernel);
        return result;
    }
    atomic_fetch_add_explicit(&module->refs, 1, memory_order_relaxed);
    *phKernel = (ze_kernel_handle_t)kernel;
    return ZE_RESULT_SUCCESS;
}

/* The handle dies now; the object lives on while recorded launches hold it. */
CPU_ZE_ENTRY(zeKernelDestroy, ze_kernel_handle_t hKernel)
{
    CPU_ZE_CHECK_HANDLE(hKernel, CPU_ZE_KIND_KERNEL);
    CPU_ZE_RETIRE_HANDLE(hKernel, CPU_ZE_KIND_KERNEL);
    cpu_ze_kernel_release((struct cpu_ze_kernel *)hKernel);
    return ZE_RESULT_SUCCESS;
}

/* Cache configuration is a hint a CPU has no use for. */
CPU_ZE_ENTRY(zeKernelSetCacheConfig, ze_kernel_handle_t hKernel, ze_cache_config_flags_t flags)
{
    CPU_ZE_CHECK_HANDLE(hKernel, CPU_ZE_KIND_KERNEL);
    if (flags & ~(ze_cache_config_flags_t)(ZE_CACHE_CONFIG_FLAG_LARGE_SLM |
                                           ZE_CACHE_CONFIG_FLAG_LARGE_DATA))
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ENUMERATION,
                           "zeKernelSetCacheConfig: flags = 0x%x", flags);
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeKernelSetGroupSize, ze_kernel_handle_t hKernel, uint32_t groupSizeX,
             uint32_t groupSizeY, uint32_t groupSizeZ)
{
    CPU_ZE_CHECK_HANDLE(hKernel, CPU_ZE_KIND_KERNEL);
    struct cpu_ze_kernel *kernel = (struct cpu_ze_kernel *)hKernel;
    const uint32_t size[3] = {groupSizeX, groupSizeY, groupSizeZ};
    uint64_t total = 1;
    for (int d = 0; d < 3; d++) {
        if (size[d] == 0 || size[d] > cpu_ze.engine.max_work_item_sizes[d])
            return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION,
                               "zeKernelSetGroupSize: %s: size[%d] = %u", kernel->info->name, d,
                               size[d]);
        if (kernel->info->required_group_size[0] != 0 &&
            size[d] != kernel->info->required_group_size[d])
            return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION,
                               "zeKernelSetGroupSize: %s requires %u x %u x %u", kernel->info->name,
                               kernel->info->required_group_size[0],
                               kernel->info->required_group_size[1],
                               kernel->info->required_group_size[2]);
        total *= size[d];
    }
    if (total > kernel->max_group_size)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION,
                           "zeKernelSetGroupSize: %s: %llu work-items > %zu", kernel->info->name,
                           (unsigned long long)total, kernel->max_group_size);
    memcpy(kernel->group_size, size, sizeof size);
    return ZE_RESULT_SUCCESS;
}

/* The largest divisor of n that is at most limit. */
static uint32_t largest_divisor(uint32_t n, uint32_t limit)
{
    for (uint32_t d = limit < n ? limit : n; d > 1; d--)
        if (n % d == 0)
            return d;
    return 1;
}

/* Each dimension divides the global size; the product stays within 256
 * work-items (and the kernel's limit), enough to fill a CPU core's vector
 * lanes without starving the cores of work-groups. */
CPU_ZE_ENTRY(zeKernelSuggestGroupSize, ze_kernel_handle_t hKernel, uint32_t globalSizeX,
             uint32_t globalSizeY, uint32_t globalSizeZ, uint32_t *groupSizeX, uint32_t *groupSizeY,
             uint32_t *groupSizeZ)
{
    CPU_ZE_CHECK_HANDLE(hKernel, CPU_ZE_KIND_KERNEL);
    CPU_ZE_CHECK_POINTER(groupSizeX);
    CPU_ZE_CHECK_POINTER(groupSizeY);
    CPU_ZE_CHECK_POINTER(groupSizeZ);
    struct cpu_ze_kernel *kernel = (struct cpu_ze_kernel *)hKernel;
    const uint32_t global[3] = {globalSizeX, globalSizeY, globalSizeZ};
    uint32_t group[3];
    const uint32_t *required = kernel->info->required_group_size;
    for (int d = 0; d < 3; d++)
        if (global[d] == 0 || (required[0] != 0 && global[d] % required[d] != 0))
            return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION,
                               "zeKernelSuggestGroupSize: global size[%d] = %u", d, global[d]);
    if (required[0] != 0) {
        memcpy(group, required, sizeof group);
    } else {
        uint32_t budget = kernel->max_group_size < 256 ? (uint32_t)kernel->max_group_size : 256;
        for (int d = 0; d < 3; d++) {
            uint32_t limit = budget;
            if (limit > cpu_ze.engine.max_work_item_sizes[d])
                limit = (uint32_t)cpu_ze.engine.max_work_item_sizes[d];
            group[d] = largest_divisor(global[d], limit);
            budget /= group[d];
        }
    }
    *groupSizeX = group[0];
    *groupSizeY = group[1];
    *groupSizeZ = group[2];
    return ZE_RESULT_SUCCESS;
}

/*
 * Pointers (global, constant, generic) take argSize 8 and a pointer to the
 * pointer, or NULL for a null pointer; local-memory arguments take the byte
 * count as argSize and a NULL value; values take their exact size (NULL
 * means zeros).
 */
CPU_ZE_ENTRY(zeKernelSetArgumentValue, ze_kernel_handle_t hKernel, uint32_t argIndex,
             size_t argSize, const void *pArgValue)
{
    CPU_ZE_CHECK_HANDLE(hKernel, CPU_ZE_KIND_KERNEL);
    struct cpu_ze_kernel *kernel = (struct cpu_ze_kernel *)hKernel;
    if (argIndex >= kernel->num_args)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX,
                           "zeKernelSetArgumentValue: %s has %u arguments, argIndex = %u",
                           kernel->info->name, kernel->num_args, argIndex);
    uint8_t *slot = kernel->values + kernel->arg_offset[argIndex];
    const spirv_kernel_arg_t *arg = arg_info(kernel, argIndex);
    switch (arg->kind) {
    case SPIRV_ARG_LOCAL_POINTER:
        if (pArgValue != NULL)
            return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                               "zeKernelSetArgumentValue: %s argument %u is local memory: "
                               "pArgValue must be NULL",
                               kernel->info->name, argIndex);
        if (argSize == 0 || argSize > cpu_ze.engine.local_mem_size)
            return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE,
                               "zeKernelSetArgumentValue: %s argument %u: %zu bytes of local "
                               "memory (device has %llu)",
                               kernel->info->name, argIndex, argSize,
                               (unsigned long long)cpu_ze.engine.local_mem_size);
        memcpy(slot, &argSize, sizeof argSize);
        break;
    case SPIRV_ARG_GLOBAL_POINTER:
    case SPIRV_ARG_VALUE:
        if (argSize != arg->size)
            return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE,
                               "zeKernelSetArgumentValue: %s argument %u takes %u bytes, "
                               "argSize = %zu",
                               kernel->info->name, argIndex, arg->size, argSize);
        if (pArgValue != NULL)
            memcpy(slot, pArgValue, argSize);
        else
            memset(slot, 0, argSize);
        break;
    default:
        return cpu_ze_fail(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
                           "zeKernelSetArgumentValue: unsupported argument kind");
    }
    kernel->arg_is_set[argIndex] = 1;
    return ZE_RESULT_SUCCESS;
}

/* Tells the runtime which kinds of USM the kernel reaches through pointers
 * it was not given as arguments. */
CPU_ZE_ENTRY(zeKernelSetIndirectAccess, ze_kernel_handle_t hKernel,
             ze_kernel_indirect_access_flags_t flags)
{
    CPU_ZE_CHECK_HANDLE(hKernel, CPU_ZE_KIND_KERNEL);
    if (flags & ~(ze_kernel_indirect_access_flags_t)0x7)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ENUMERATION,
                           "zeKernelSetIndirectAccess: flags = 0x%x", flags);
    struct cpu_ze_kernel *kernel = (struct cpu_ze_kernel *)hKernel;
    static const cl_kernel_exec_info names[3] = {
            CL_KERNEL_EXEC_INFO_INDIRECT_HOST_ACCESS_INTEL,
            CL_KERNEL_EXEC_INFO_INDIRECT_DEVICE_ACCESS_INTEL,
            CL_KERNEL_EXEC_INFO_INDIRECT_SHARED_ACCESS_INTEL,
    };
    static const ze_kernel_indirect_access_flags_t bits[3] = {
            ZE_KERNEL_INDIRECT_ACCESS_FLAG_HOST,
            ZE_KERNEL_INDIRECT_ACCESS_FLAG_DEVICE,
            ZE_KERNEL_INDIRECT_ACCESS_FLAG_SHARED,
    };
    pthread_mutex_lock(&kernel->launch_lock);
    for (int i = 0; i < 3; i++) {
        cl_bool on = (flags & bits[i]) ? CL_TRUE : CL_FALSE;
        clSetKernelExecInfo(kernel->cl, names[i], sizeof on, &on);
    }
    kernel->indirect_access = flags;
    pthread_mutex_unlock(&kernel->launch_lock);
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeKernelGetIndirectAccess, ze_kernel_handle_t hKernel,
             ze_kernel_indirect_access_flags_t *pFlags)
{
    CPU_ZE_CHECK_HANDLE(hKernel, CPU_ZE_KIND_KERNEL);
    CPU_ZE_CHECK_POINTER(pFlags);
    *pFlags = ((struct cpu_ze_kernel *)hKernel)->indirect_access;
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeKernelGetProperties, ze_kernel_handle_t hKernel,
             ze_kernel_properties_t *pKernelProperties)
{
    CPU_ZE_CHECK_HANDLE(hKernel, CPU_ZE_KIND_KERNEL);
    CPU_ZE_CHECK_POINTER(pKernelProperties);
    CPU_ZE_CHECK_STYPE(pKernelProperties, ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES);
    struct cpu_ze_kernel *kernel = (struct cpu_ze_kernel *)hKernel;
    ze_kernel_properties_t *p = pKernelProperties;
    cl_device_id dev = cpu_ze.engine.device;
    const size_t local[3] = {kernel->group_size[0], kernel->group_size[1], kernel->group_size[2]};
    size_t max_sg = 0, num_sg = 0;
    cl_ulong local_mem = 0, private_mem = 0;
    clGetKernelSubGroupInfo(kernel->cl, dev, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, sizeof local,
                            local, sizeof max_sg, &max_sg, NULL);
    clGetKernelSubGroupInfo(kernel->cl, dev, CL_KERNEL_MAX_NUM_SUB_GROUPS, 0, NULL, sizeof num_sg,
                            &num_sg, NULL);
    clGetKernelWorkGroupInfo(kernel->cl, dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local_mem,
                             &local_mem, NULL);
    clGetKernelWorkGroupInfo(kernel->cl, dev, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof private_mem,
                             &private_mem, NULL);
    p->numKernelArgs = kernel->num_args;
    p->requiredGroupSizeX = kernel->info->required_group_size[0];
    p->requiredGroupSizeY = kernel->info->required_group_size[1];
    p->requiredGroupSizeZ = kernel->info->required_group_size[2];
    p->requiredNumSubGroups = 0;
    p->requiredSubgroupSize = kernel->info->required_subgroup_size;
    p->maxSubgroupSize = (uint32_t)max_sg;
    p->maxNumSubgroups = (uint32_t)num_sg;
    p->localMemSize = (uint32_t)local_mem;
    p->privateMemSize = (uint32_t)private_mem;
    p->spillMemSize = 0;
    memset(&p->uuid, 0, sizeof p->uuid);

    for (ze_base_properties_t *ext = p->pNext; ext != NULL; ext = ext->pNext) {
        if (ext->stype == ZE_STRUCTURE_TYPE_KERNEL_PREFERRED_GROUP_SIZE_PROPERTIES) {
            size_t multiple = 1;
            clGetKernelWorkGroupInfo(kernel->cl, dev, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                     sizeof multiple, &multiple, NULL);
            ((ze_kernel_preferred_group_size_properties_t *)ext)->preferredMultiple =
                    (uint32_t)multiple;
        }
    }
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeKernelGetName, ze_kernel_handle_t hKernel, size_t *pSize, char *pName)
{
    CPU_ZE_CHECK_HANDLE(hKernel, CPU_ZE_KIND_KERNEL);
    CPU_ZE_CHECK_POINTER(pSize);
    const char *name = ((struct cpu_ze_kernel *)hKernel)->info->name;
    size_t needed = strlen(name) + 1;
    if (pName == NULL) {
        *pSize = needed;
        return ZE_RESULT_SUCCESS;
    }
    if (*pSize < needed)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_SIZE, "zeKernelGetName: *pSize = %zu < %zu",
                           *pSize, needed);
    memcpy(pName, name, needed);
    *pSize = needed;
    return ZE_RESULT_SUCCESS;
}

cl_int cpu_ze_kernel_enqueue(struct cpu_ze_kernel *kernel, cl_command_queue queue,
                             const uint8_t *values, const uint32_t groups[3],
                             const uint32_t group_size[3])
{
    cl_int err = CL_SUCCESS;
    pthread_mutex_lock(&kernel->launch_lock);
    for (uint32_t i = 0; i < kernel->num_args && err == CL_SUCCESS; i++) {
        uint32_t offset = kernel->arg_offset[i], size = kernel->arg_size[i];
        const uint8_t *value = values + offset;
        spirv_arg_kind_t kind = arg_info(kernel, i)->kind;
        /* Pointers are set every time: the runtime binds a USM pointer to
         * the allocation it lies in when it is set, and an unchanged value
         * may name a new allocation (the old one freed, a new one made at
         * the same address); the stale binding reads freed memory. */
        if (kind != SPIRV_ARG_GLOBAL_POINTER && kernel->arg_is_applied[i] &&
            memcmp(kernel->applied + offset, value, size) == 0)
            continue;
        switch (kind) {
        case SPIRV_ARG_GLOBAL_POINTER: {
            void *pointer;
            memcpy(&pointer, value, sizeof pointer);
            err = cpu_ze.engine.set_kernel_arg_mem_pointer(kernel->cl, i, pointer);
            break;
        }
        case SPIRV_ARG_LOCAL_POINTER: {
            size_t bytes;
            memcpy(&bytes, value, sizeof bytes);
            err = clSetKernelArg(kernel->cl, i, bytes, NULL);
            break;
        }
        default:
            err = clSetKernelArg(kernel->cl, i, size, value);
            break;
        }
        kernel->arg_is_applied[i] = err == CL_SUCCESS;
        if (err == CL_SUCCESS)
            memcpy(kernel->applied + offset, value, size);
    }
    if (err == CL_SUCCESS) {
        size_t global[3], local[3];
        for (int d = 0; d < 3; d++) {
            local[d] = group_size[d];
            global[d] = (size_t)groups[d] * group_size[d];
        }
        cl_uint dims = global[2] > 1 ? 3 : global[1] > 1 ? 2 : 1;
        err = clEnqueueNDRangeKernel(queue, kernel->cl, dims, NULL, global, local, 0, NULL, NULL);
    }
    pthread_mutex_unlock(&kernel->launch_lock);
    return err;
}
