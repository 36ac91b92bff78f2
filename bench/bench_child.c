/* bench_child.c - a program run as a child process (fork + execv, no shell)
 * whose one tagged line of output the benchmark reads: the PyTorch peer
 * (bench_torch.c) and the cold and warm creation processes
 * (bench_create.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

enum { OUTPUT_MAX = 8192 };

int bench_run_child(const char *path, const char *const *argv, const char *const *env,
                    const char *tag, char *line, size_t line_size, char *why, size_t why_size)
{
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(why, why_size, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, why_size, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        for (int i = 0; env && env[i] && env[i + 1]; i += 2)
            setenv(env[i], env[i + 1], 1);
        execv(path, (char *const *)argv);
        fprintf(stderr, "sdpa_bench: cannot run %s: %s\n", path, strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    char output[OUTPUT_MAX];
    size_t used = 0;
    ssize_t got;
    while ((got = read(fds[0], output + used, sizeof(output) - 1 - used)) > 0 ||
           (got < 0 && errno == EINTR))
        used += got > 0 ? (size_t)got : 0;
    output[used] = '\0';
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    const char *found = strstr(output, tag);
    if (found == NULL || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(why, why_size, "%s%s%s failed (exit status %d%s)", argv[0], argv[1] ? " " : "",
                 argv[1] ? argv[1] : "", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                 found ? "" : ", no result line");
        return -1;
    }
    size_t length = strcspn(found, "\n");
    snprintf(line, line_size, "%.*s", (int)length, found);
    return 0;
}
