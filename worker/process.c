// SPDX-License-Identifier: MIT
#define _GNU_SOURCE // pipe2
#include "process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// A write waits at most this long for a child that does not read its input.
enum { PROCESS_WRITE_TIMEOUT_MS = 2000 };

const char *process_strerror(ProcessStatus st)
{
    static const char *const text[PROCESS_STATUS_NB] = {
        [PROCESS_OK] = "no error",
        [PROCESS_ERR_SPAWN] = "could not start the program",
        [PROCESS_ERR_WRITE] = "the program stopped reading its input",
        [PROCESS_ERR_TIMEOUT] = "no answer in time",
        [PROCESS_ERR_EOF] = "the program closed its output (exited?)",
        [PROCESS_ERR_LINE_LONG] = "the program wrote an over-long line",
        [PROCESS_ERR_READ] = "error reading from the program",
    };
    return (unsigned)st < PROCESS_STATUS_NB ? text[st] : "unknown process status";
}

/// In the child: wire the pipes, arrange to die with the parent, and exec. Only
/// async-signal-safe calls here.
static void child_exec(int in_rd, int out_wr, int status_wr, char *const argv[],
                       const char *workdir, pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == parent && dup2(in_rd, STDIN_FILENO) >= 0 && dup2(out_wr, STDOUT_FILENO) >= 0 &&
        (!workdir || chdir(workdir) == 0))
        execv(argv[0], argv);
    ssize_t ignored = write(status_wr, "x", 1); // tell the parent that exec failed
    (void)ignored;
    _exit(127);
}

ProcessStatus process_spawn(Process *p, char *const argv[], const char *workdir)
{
    int to_child[2], from_child[2], status_pipe[2];
    memset(p, 0, offsetof(Process, buf));
    p->pid = -1;
    p->in_fd = p->out_fd = -1;
    if (pipe2(to_child, O_CLOEXEC) != 0)
        return PROCESS_ERR_SPAWN;
    if (pipe2(from_child, O_CLOEXEC) != 0)
        goto fail_to;
    // Closed by a successful exec; a byte arriving on it means exec failed.
    if (pipe2(status_pipe, O_CLOEXEC) != 0)
        goto fail_from;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        goto fail_status;
    if (pid == 0) {
        close(status_pipe[0]);
        child_exec(to_child[0], from_child[1], status_pipe[1], argv, workdir, parent);
    }
    close(to_child[0]);
    close(from_child[1]);
    close(status_pipe[1]);
    p->pid = pid;
    p->in_fd = to_child[1];
    p->out_fd = from_child[0];
    // Wait for exec: EOF on the status pipe means it succeeded, a byte that it failed.
    char c;
    ssize_t n;
    do
        n = read(status_pipe[0], &c, 1);
    while (n < 0 && errno == EINTR);
    close(status_pipe[0]);
    if (n != 0) {
        process_close(p);
        return PROCESS_ERR_SPAWN;
    }
    signal(SIGPIPE, SIG_IGN); // a dead child must give EPIPE, not kill us
    // A child that stops reading must not block our writes forever (see process_write).
    fcntl(p->in_fd, F_SETFL, fcntl(p->in_fd, F_GETFL) | O_NONBLOCK);
    return PROCESS_OK;

fail_status:
    close(status_pipe[0]);
    close(status_pipe[1]);
fail_from:
    close(from_child[0]);
    close(from_child[1]);
fail_to:
    close(to_child[0]);
    close(to_child[1]);
    return PROCESS_ERR_SPAWN;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

ProcessStatus process_write(Process *p, const char *text)
{
    size_t len = strlen(text), off = 0;
    long long deadline = now_ms() + PROCESS_WRITE_TIMEOUT_MS;
    while (off < len) {
        ssize_t n = write(p->in_fd, text + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            // The pipe is full: the child is not reading. Wait for room, but not forever.
            long long left = deadline - now_ms();
            struct pollfd pfd = {.fd = p->in_fd, .events = POLLOUT};
            if (left <= 0 || (poll(&pfd, 1, (int)left) < 0 && errno != EINTR))
                return PROCESS_ERR_WRITE;
            continue;
        }
        if (n <= 0)
            return PROCESS_ERR_WRITE;
        off += (size_t)n;
    }
    return PROCESS_OK;
}

/// Moves one complete line out of the buffer, if there is one.
static bool take_line(Process *p, char *line, size_t cap, ProcessStatus *st)
{
    char *nl = memchr(p->buf, '\n', p->len);
    if (!nl)
        return false;
    size_t n = (size_t)(nl - p->buf), keep = n;
    if (keep > 0 && p->buf[keep - 1] == '\r')
        keep--;
    bool was_skipping = p->skipping;
    p->skipping = false;
    if (keep >= cap)
        keep = cap - 1;
    memcpy(line, p->buf, keep);
    line[keep] = '\0';
    memmove(p->buf, nl + 1, p->len - n - 1);
    p->len -= n + 1;
    if (was_skipping) {
        // The tail of an over-long line already reported: drop it and look again.
        return take_line(p, line, cap, st);
    }
    *st = PROCESS_OK;
    return true;
}

ProcessStatus process_read_line(Process *p, char *line, size_t cap, int timeout_ms)
{
    long long deadline = now_ms() + timeout_ms;
    ProcessStatus st;
    for (;;) {
        if (take_line(p, line, cap, &st))
            return st;
        if (p->len == sizeof p->buf && p->skipping) {
            p->len = 0; // more of a line already reported: keep discarding, report it once
            continue;
        }
        if (p->len == sizeof p->buf) {
            // Over-long line: hand back its head, discard the rest up to the next newline.
            size_t keep = cap - 1 < 80 ? cap - 1 : 80;
            memcpy(line, p->buf, keep);
            line[keep] = '\0';
            p->len = 0;
            p->skipping = true;
            return PROCESS_ERR_LINE_LONG;
        }
        long long left = deadline - now_ms();
        if (left <= 0)
            return PROCESS_ERR_TIMEOUT;
        struct pollfd pfd = {.fd = p->out_fd, .events = POLLIN};
        int r = poll(&pfd, 1, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return PROCESS_ERR_READ;
        if (r == 0)
            return PROCESS_ERR_TIMEOUT;
        ssize_t n = read(p->out_fd, p->buf + p->len, sizeof p->buf - p->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return PROCESS_ERR_READ;
        if (n == 0)
            return PROCESS_ERR_EOF;
        p->len += (size_t)n;
    }
}

void process_close(Process *p)
{
    if (p->in_fd >= 0)
        close(p->in_fd);
    if (p->out_fd >= 0)
        close(p->out_fd);
    p->in_fd = p->out_fd = -1;
    if (p->pid > 0) {
        int wstatus;
        if (waitpid(p->pid, &wstatus, WNOHANG) == 0) {
            kill(p->pid, SIGKILL);
            waitpid(p->pid, &wstatus, 0);
        }
    }
    p->pid = -1;
}
