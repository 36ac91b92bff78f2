/*
 * executor.c - an in-order OpenCL queue plus a worker thread that runs
 * submitted jobs one after another. Because the worker, not the
 * submitting thread, blocks on wait events, an execution may wait on an
 * event the host signals after zeCommandQueueExecuteCommandLists returned.
 */
#include <errno.h>
#include <stdlib.h>

#include "ze_cpu.h"

static void free_job(cpu_ze_job_t *job)
{
    if (job->owned != NULL) {
        cpu_ze_recording_free(job->owned);
        free(job->owned);
    }
    free(job->lists);
    free(job);
}

static ze_result_t run_job(cpu_ze_executor_t *exec, cpu_ze_job_t *job)
{
    ze_result_t result = ZE_RESULT_SUCCESS;
    for (uint32_t i = 0; i < job->num_lists; i++) {
        struct cpu_ze_command_list *list = job->lists[i];
        ze_result_t r = cpu_ze_replay(&list->rec, exec->queue);
        if (result == ZE_RESULT_SUCCESS)
            result = r;
        cpu_ze_counter_release(&list->executions); /* last touch of the list */
    }
    if (job->owned != NULL) {
        ze_result_t r = cpu_ze_replay(job->owned, exec->queue);
        if (result == ZE_RESULT_SUCCESS)
            result = r;
    }
    if (job->fence != NULL) {
        cpu_ze_flag_signal(&job->fence->signalled);
        cpu_ze_counter_release(&job->fence->pending); /* last touch of the fence */
    }
    return result;
}

static void *worker_main(void *arg)
{
    cpu_ze_executor_t *exec = arg;
    pthread_mutex_lock(&exec->lock);
    for (;;) {
        while (exec->head == NULL && !exec->stopping)
            pthread_cond_wait(&exec->wake, &exec->lock);
        cpu_ze_job_t *job = exec->head;
        if (job == NULL)
            break; /* stopping, and nothing left to run */
        exec->head = job->next;
        if (exec->head == NULL)
            exec->tail = NULL;
        pthread_mutex_unlock(&exec->lock);

        ze_result_t result = run_job(exec, job);
        free_job(job);

        pthread_mutex_lock(&exec->lock);
        if (result != ZE_RESULT_SUCCESS && exec->error == ZE_RESULT_SUCCESS)
            exec->error = result;
        exec->completed++;
        pthread_cond_broadcast(&exec->done);
    }
    pthread_mutex_unlock(&exec->lock);
    return NULL;
}

ze_result_t cpu_ze_executor_init(cpu_ze_executor_t *exec, struct cpu_ze_context *context)
{
    cl_int err;
    exec->queue = clCreateCommandQueueWithProperties(context->cl, cpu_ze.engine.device, NULL, &err);
    if (exec->queue == NULL)
        return cpu_ze_fail(cpu_ze_result_from_cl(err) == ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY
                                   ? ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY
                                   : ZE_RESULT_ERROR_UNKNOWN,
                           "clCreateCommandQueueWithProperties: %s", cpu_ze_cl_error_name(err));
    pthread_mutex_init(&exec->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&exec->wake, NULL);
    pthread_cond_init(&exec->done, &attr);
    pthread_condattr_destroy(&attr);
    exec->head = exec->tail = NULL;
    exec->submitted = exec->completed = 0;
    exec->stopping = false;
    exec->error = ZE_RESULT_SUCCESS;
    if (pthread_create(&exec->thread, NULL, worker_main, exec) != 0) {
        pthread_cond_destroy(&exec->done);
        pthread_cond_destroy(&exec->wake);
        pthread_mutex_destroy(&exec->lock);
        clReleaseCommandQueue(exec->queue);
        return cpu_ze_fail(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, "pthread_create failed");
    }
    exec->thread_started = true;
    return ZE_RESULT_SUCCESS;
}

void cpu_ze_executor_fini(cpu_ze_executor_t *exec)
{
    pthread_mutex_lock(&exec->lock);
    exec->stopping = true;
    pthread_cond_signal(&exec->wake);
    pthread_mutex_unlock(&exec->lock);
    if (exec->thread_started)
        pthread_join(exec->thread, NULL);
    pthread_cond_destroy(&exec->done);
    pthread_cond_destroy(&exec->wake);
    pthread_mutex_destroy(&exec->lock);
    clReleaseCommandQueue(exec->queue);
}

void cpu_ze_executor_submit(cpu_ze_executor_t *exec, cpu_ze_job_t *job)
{
    job->next = NULL;
    pthread_mutex_lock(&exec->lock);
    if (exec->tail != NULL)
        exec->tail->next = job;
    else
        exec->head = job;
    exec->tail = job;
    exec->submitted++;
    pthread_cond_signal(&exec->wake);
    pthread_mutex_unlock(&exec->lock);
}

ze_result_t cpu_ze_executor_wait(cpu_ze_executor_t *exec, uint64_t timeout_ns)
{
    struct timespec deadline;
    bool bounded = timeout_ns != 0 && cpu_ze_deadline(timeout_ns, &deadline);
    pthread_mutex_lock(&exec->lock);
    uint64_t target = exec->submitted;
    while (exec->completed < target && timeout_ns != 0) {
        if (!bounded)
            pthread_cond_wait(&exec->done, &exec->lock);
        else if (pthread_cond_timedwait(&exec->done, &exec->lock, &deadline) == ETIMEDOUT)
            break;
    }
    ze_result_t result = ZE_RESULT_NOT_READY;
    if (exec->completed >= target) {
        result = exec->error;
        exec->error = ZE_RESULT_SUCCESS;
    }
    pthread_mutex_unlock(&exec->lock);
    return result;
}
