/*
 * zex_cpu.h - the CPU Level Zero driver's own extension functions, for test
 * programs that want to make Level Zero calls fail on purpose or to count
 * them. Get them through the loader:
 *
 *     zex_cpu_fault_inject_fn inject = NULL;
 *     zeDriverGetExtensionFunctionAddress(driver, ZEX_CPU_FAULT_INJECT_NAME,
 *                                         (void **)&inject);
 *
 * Only this driver has them: on any other driver the lookup fails, and a
 * program should then skip what needs them. doc/cpu-driver.md describes
 * the same contract and the ZE_CPU_FAIL environment variable.
 */
#ifndef ZEX_CPU_H
#define ZEX_CPU_H

#include <level_zero/ze_api.h>
#include <stdint.h>

#define ZEX_CPU_FAULT_INJECT_NAME "zexCpuFaultInject"
#define ZEX_CPU_CALL_COUNTS_NAME "zexCpuCallCounts"

/* Arms one fault: the nth call from now (1 = the next one) to the Level
 * Zero function api_function ("zeKernelCreate", spelled as in ze_api.h),
 * counted over all threads of the process, returns result and does
 * nothing else (outputs untouched, nothing created). Arming again replaces
 * the armed fault; api_function NULL disarms. Returns
 * ZE_RESULT_ERROR_INVALID_ARGUMENT for a name the driver does not have or
 * nth = 0, else ZE_RESULT_SUCCESS. */
typedef ze_result_t(ZE_APICALL *zex_cpu_fault_inject_fn)(const char *api_function, uint32_t nth,
                                                         ze_result_t result);

/* Level Zero two-call style. With names and calls both NULL (or *count
 * 0), stores in *count how many functions the driver has in its tables.
 * Otherwise fills up to *count entries of whichever arrays are not NULL:
 * names[i] a static string, calls[i] how many times the process has called
 * it so far (calls the loader makes count too), and stores the number
 * filled in *count. Returns ZE_RESULT_ERROR_INVALID_NULL_POINTER if count
 * is NULL. */
typedef ze_result_t(ZE_APICALL *zex_cpu_call_counts_fn)(uint32_t *count, const char **names,
                                                        uint64_t *calls);

#endif /* ZEX_CPU_H */
