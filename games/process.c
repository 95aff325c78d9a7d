// SPDX-License-Identifier: MIT
#define _GNU_SOURCE // pipe2, environ, sigabbrev_np
#include "process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum {
    PROCESS_WRITE_TIMEOUT_MS = 2000, // a write waits at most this long for a child not reading
    EXIT_POLL_MS = 20,               // without a pidfd: how often a read looks for the exit
    FD_LOOP_MAX = 1 << 20            // without close_range: the highest descriptor closed
};

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
        [PROCESS_ERR_EXITED] = "the program exited; a process it started holds its output open",
    };
    return (unsigned)st < PROCESS_STATUS_NB ? text[st] : "unknown process status";
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

// ---------------------------------------------------------------------------------------
// The child's environment, built before fork (the child may not allocate)

/// Whether name (len characters) is a word of the blank-separated list; a word ending in '*'
/// matches every name it begins.
static bool name_listed(const char *list, const char *name, size_t len)
{
    for (const char *w = list + strspn(list, " \t"); *w; w += strspn(w, " \t")) {
        size_t n = strcspn(w, " \t");
        if (w[n - 1] == '*' ? len >= n - 1 && !strncmp(name, w, n - 1)
                            : len == n && !strncmp(name, w, n))
            return true;
        w += n;
    }
    return false;
}

/// Adds "NAME=value" to envp[*n], replacing an entry of the same name.
static void env_put(const char **envp, size_t *n, const char *entry)
{
    size_t len = strcspn(entry, "=");
    for (size_t i = 0; i < *n; i++) {
        if (!strncmp(envp[i], entry, len) && envp[i][len] == '=') {
            envp[i] = entry;
            return;
        }
    }
    envp[(*n)++] = entry;
}

/// The allow-listed and passed-through variables of ours, then opt->env; NULL-terminated.
/// The strings are ours and the caller's: only the array is allocated.
static const char **env_build(const ProcessOptions *opt)
{
    size_t cap = 1, n = 0;
    for (char **e = environ; e && *e; e++)
        cap++;
    for (const char *const *e = opt->env; e && *e; e++)
        cap++;
    const char **envp = malloc(cap * sizeof *envp);
    if (!envp)
        return NULL;
    for (char **e = environ; e && *e; e++) {
        size_t len = strcspn(*e, "=");
        if ((*e)[len] == '=' && (name_listed(PROCESS_ENV_ALLOWED, *e, len) ||
                                 (opt->passenv && name_listed(opt->passenv, *e, len))))
            env_put(envp, &n, *e);
    }
    for (const char *const *e = opt->env; e && *e; e++)
        if (strchr(*e, '='))
            env_put(envp, &n, *e);
    envp[n] = NULL;
    return envp;
}

// ---------------------------------------------------------------------------------------
// In the child, between fork and exec: only async-signal-safe calls

typedef struct {
    char *const *argv;
    char *const *envp;
    const ProcessOptions *opt;
    int in_rd, out_wr, status_wr; // our ends' counterparts; status_wr is close-on-exec
    pid_t parent;
} ChildPlan;

/// Closes descriptors lo..hi (close_range where the kernel has it, else one by one).
static void close_fds(unsigned lo, unsigned hi)
{
    if (lo > hi)
        return;
#ifdef SYS_close_range
    if (syscall(SYS_close_range, lo, hi, 0) == 0)
        return;
#endif
    struct rlimit rl;
    unsigned max = FD_LOOP_MAX;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)max)
        max = (unsigned)rl.rlim_cur;
    for (unsigned fd = lo; fd <= hi && fd < max; fd++)
        close((int)fd);
}

/// Lowers a limit to soft/hard (never above the hard limit we have).
static bool lower_limit(int resource, uint64_t soft, uint64_t hard)
{
    struct rlimit rl;
    if (getrlimit(resource, &rl) != 0)
        return false;
    if (rl.rlim_max != RLIM_INFINITY && hard > rl.rlim_max)
        hard = rl.rlim_max;
    rl.rlim_cur = soft < hard ? soft : hard;
    rl.rlim_max = hard;
    return setrlimit(resource, &rl) == 0;
}

/// stdin/stdout from our pipes, stderr ours, nothing else open; its own process group; the
/// limits; a clean signal state (we ignore SIGPIPE, a worker thread may block signals).
static bool child_setup(const ChildPlan *c, int status)
{
    int in = fcntl(c->in_rd, F_DUPFD, 3), out = fcntl(c->out_wr, F_DUPFD, 3);
    if (in < 0 || out < 0 || dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0)
        return false;
    close_fds(3, (unsigned)status - 1);
    close_fds((unsigned)status + 1, ~0U);
    if (setpgid(0, 0) != 0)
        return false;
    if (c->opt->workdir && c->opt->workdir[0] && chdir(c->opt->workdir) != 0)
        return false;
    sigset_t none;
    sigemptyset(&none);
    signal(SIGPIPE, SIG_DFL);
    if (sigprocmask(SIG_SETMASK, &none, NULL) != 0)
        return false;
    // The limits last: nothing here may need memory once the address space is capped. The
    // CPU's soft limit sends SIGXCPU; the hard one, a second later, SIGKILL.
    if (c->opt->rlimit_as && !lower_limit(RLIMIT_AS, c->opt->rlimit_as, c->opt->rlimit_as))
        return false;
    return !c->opt->rlimit_cpu_s ||
           lower_limit(RLIMIT_CPU, c->opt->rlimit_cpu_s, c->opt->rlimit_cpu_s + 1);
}

static _Noreturn void child_exec(const ChildPlan *c)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    // Above stderr, out of the way of dup2 onto 0 and 1 and kept open until exec.
    int status = fcntl(c->status_wr, F_DUPFD_CLOEXEC, 3);
    if (status >= 0 && getppid() == c->parent && child_setup(c, status))
        execve(c->argv[0], c->argv, c->envp);
    int err = errno;
    ssize_t ignored = write(status >= 0 ? status : c->status_wr, &err, sizeof err);
    (void)ignored;
    _exit(127);
}

// ---------------------------------------------------------------------------------------
// Start

/// pidfd_open where the kernel and libc have it (Linux 5.3): readable once the child exits.
static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    return -1;
#endif
}

/// Forks and execs; p->pid is set once the fork succeeded. Waits for the exec's outcome: EOF
/// on the close-on-exec status pipe means it succeeded, an errno arriving that it failed.
static ProcessStatus fork_exec(Process *p, ChildPlan *c, int status_pipe[2])
{
    c->parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return PROCESS_ERR_SPAWN;
    if (pid == 0) {
        close(status_pipe[0]);
        child_exec(c);
    }
    setpgid(pid, pid); // also here: no kill of the group may find it not yet made
    p->pid = pid;
    close(status_pipe[1]);
    status_pipe[1] = -1;
    int err = 0;
    ssize_t n;
    do
        n = read(status_pipe[0], &err, sizeof err);
    while (n < 0 && errno == EINTR);
    if (n == 0)
        return PROCESS_OK;
    errno = n == (ssize_t)sizeof err ? err : EIO;
    return PROCESS_ERR_SPAWN;
}

ProcessStatus process_spawn(Process *p, char *const argv[], const ProcessOptions *opt)
{
    static const ProcessOptions defaults = {0};
    if (!opt)
        opt = &defaults;
    memset(p, 0, offsetof(Process, buf));
    p->pid = -1;
    p->in_fd = p->out_fd = p->pidfd = -1;
    p->rlimit_as = opt->rlimit_as;
    p->rlimit_cpu_s = opt->rlimit_cpu_s;
    int to_child[2] = {-1, -1}, from_child[2] = {-1, -1}, status_pipe[2] = {-1, -1};
    ProcessStatus st = PROCESS_ERR_SPAWN;
    const char **envp = env_build(opt);
    if (!envp || pipe2(to_child, O_CLOEXEC) != 0 || pipe2(from_child, O_CLOEXEC) != 0 ||
        pipe2(status_pipe, O_CLOEXEC) != 0)
        goto done;
    ChildPlan c = {argv, (char *const *)envp, opt, to_child[0], from_child[1], status_pipe[1], 0};
    st = fork_exec(p, &c, status_pipe);
    p->in_fd = to_child[1];
    p->out_fd = from_child[0];
    to_child[1] = from_child[0] = -1;
    if (st != PROCESS_OK) {
        int err = errno;
        process_close(p);
        errno = err;
        goto done;
    }
    p->pidfd = open_pidfd(p->pid);
    signal(SIGPIPE, SIG_IGN); // a dead child must give EPIPE, not kill us
    // A child that stops reading must not block our writes forever (see process_write).
    fcntl(p->in_fd, F_SETFL, fcntl(p->in_fd, F_GETFL) | O_NONBLOCK);
done:;
    int err = errno; // why a spawn failed, for the caller
    free(envp);
    int fds[] = {to_child[0],   to_child[1],    from_child[0],
                 from_child[1], status_pipe[0], status_pipe[1]};
    for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    errno = err;
    return st;
}

// ---------------------------------------------------------------------------------------
// The child's exit

/// Notes whether the child has exited, without reaping it: its pid, the id of its group,
/// stays ours until process_close, so a signal to the group never reaches a stranger.
static bool check_exit(Process *p)
{
    if (p->exited || p->pid <= 0)
        return p->exited;
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid != p->pid)
        return false;
    p->exited = true;
    p->signaled = si.si_code != CLD_EXITED;
    p->exit_code = si.si_status;
    return true;
}

/// A size in bytes the way rlimit_as is written: 512M, 2G, 1000000.
static void format_bytes(uint64_t v, char *out, size_t cap)
{
    static const char units[] = "KMGT";
    int u = -1;
    while (u < 3 && v >= 1024 && v % 1024 == 0) {
        v /= 1024;
        u++;
    }
    if (u < 0)
        snprintf(out, cap, "%llu", (unsigned long long)v);
    else
        snprintf(out, cap, "%llu%c", (unsigned long long)v, units[u]);
}

bool process_exit_text(Process *p, int wait_ms, char *text, size_t cap)
{
    long long end = now_ms() + wait_ms;
    for (long long left; p->pid > 0 && !check_exit(p) && (left = end - now_ms()) > 0;) {
        struct pollfd pfd = {.fd = p->pidfd, .events = POLLIN};
        if (p->pidfd < 0 || poll(&pfd, 1, (int)left) < 0)
            sleep_ms(5);
    }
    if (!p->exited)
        return false;
    int n;
    if (!p->signaled) {
        n = snprintf(text, cap, "exited with status %d", p->exit_code);
    } else {
        const char *abbrev = sigabbrev_np(p->exit_code);
        n = abbrev ? snprintf(text, cap, "killed by SIG%s", abbrev)
                   : snprintf(text, cap, "killed by signal %d", p->exit_code);
    }
    size_t len = n > 0 && (size_t)n < cap ? (size_t)n : strlen(text);
    unsigned long long cpu = (unsigned long long)p->rlimit_cpu_s;
    if (p->signaled && p->exit_code == SIGXCPU && cpu)
        snprintf(text + len, cap - len, " (over rlimit_cpu %llu s)", cpu);
    else if (p->signaled && p->exit_code == SIGKILL && cpu)
        snprintf(text + len, cap - len, " (under rlimit_cpu %llu s, whose hard limit is a SIGKILL)",
                 cpu);
    if ((p->signaled || p->exit_code != 0) && p->rlimit_as) {
        char as[32];
        format_bytes(p->rlimit_as, as, sizeof as);
        len = strlen(text);
        snprintf(text + len, cap - len, " (under rlimit_as %s: out of memory?)", as);
    }
    return true;
}

// ---------------------------------------------------------------------------------------
// Lines

ProcessStatus process_write(Process *p, const char *text)
{
    if (check_exit(p))
        return PROCESS_ERR_WRITE; // a pipe a process it started still reads is no engine
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

/// Waits at most ms for output, watching the child's exit meanwhile (its pidfd, or a look
/// every EXIT_POLL_MS). 1: output (or EOF) to read; 0: none yet; -1: poll failed.
static int wait_output(Process *p, int ms)
{
    bool watch = p->pid > 0 && !p->exited;
    struct pollfd pfd[2] = {{.fd = p->out_fd, .events = POLLIN}, {.fd = -1, .events = POLLIN}};
    if (watch && p->pidfd >= 0)
        pfd[1].fd = p->pidfd;
    else if (watch && ms > EXIT_POLL_MS)
        ms = EXIT_POLL_MS;
    int r = poll(pfd, 2, ms);
    if (r < 0)
        return errno == EINTR ? 0 : -1;
    if (watch)
        check_exit(p);
    return pfd[0].revents != 0;
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
        // Once the child has exited, only what is already in the pipe counts.
        bool gone = p->pid > 0 && p->exited;
        long long left = gone ? 0 : deadline - now_ms();
        if (!gone && left <= 0)
            return PROCESS_ERR_TIMEOUT;
        int r = wait_output(p, (int)left);
        if (r < 0)
            return PROCESS_ERR_READ;
        if (r == 0 && gone)
            return PROCESS_ERR_EXITED;
        if (r == 0)
            continue; // the deadline, the exit or a poll slice: looked at above
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

// ---------------------------------------------------------------------------------------
// End

/// Reaps the child if it has exited (or wait: until it does); true once it is reaped.
static bool reap(pid_t pid, bool wait)
{
    int ws;
    pid_t r;
    do
        r = waitpid(pid, &ws, wait ? 0 : WNOHANG);
    while (r < 0 && errno == EINTR);
    return r == pid || r < 0; // r < 0: not ours to reap (SIGCHLD ignored, say)
}

/// SIGTERM to the child's group, the grace period for the group to empty, SIGKILL to what is
/// left. The child itself is reaped (its pid freed) only once the group's fate is sealed.
static void end_group(Process *p)
{
    pid_t pg = p->pid;
    kill(-pg, SIGTERM);
    kill(pg, SIGTERM); // in case it left its group
    bool reaped = false;
    long long end = now_ms() + PROCESS_KILL_GRACE_MS;
    for (;;) {
        reaped = reaped || reap(pg, false);
        if (reaped && kill(-pg, 0) != 0 && errno == ESRCH)
            return; // no one left
        if (now_ms() >= end)
            break;
        sleep_ms(5);
    }
    kill(-pg, SIGKILL);
    if (!reaped) {
        kill(pg, SIGKILL);
        reap(pg, true);
    }
}

void process_close(Process *p)
{
    if (p->in_fd >= 0)
        close(p->in_fd);
    if (p->out_fd >= 0)
        close(p->out_fd);
    p->in_fd = p->out_fd = -1;
    if (p->pid > 1) // never kill(-1, ...): that is every process we may signal
        end_group(p);
    if (p->pid > 0 && p->pidfd >= 0)
        close(p->pidfd);
    if (p->pid > 0)
        p->pidfd = -1;
    p->pid = -1;
}
