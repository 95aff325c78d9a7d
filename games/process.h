// SPDX-License-Identifier: MIT
// A child process (an external engine) spoken to over pipes, one text line at a time.
// The child is started without a shell and dies with its parent (PR_SET_PDEATHSIG); lines
// are read with a timeout and a length cap, so a stalled or flooding child cannot hang or
// exhaust the caller.
//
// What the child gets: stdin and stdout (our pipes) and our stderr, no other descriptor (every
// one above 2 is closed before exec, so a PGN file or an MPI socket never reaches it); a clean
// environment (the allow-list PROCESS_ENV_ALLOWED, then the names of opt->passenv, then
// opt->env), so report tokens and other secrets stay with us; its own process group, which
// process_close ends as a whole (SIGTERM, then SIGKILL after PROCESS_KILL_GRACE_MS), so what
// the child started does not outlive it; optional address-space and CPU limits. A child that
// exits is noticed at once, even while a process it started still holds its output open.
// (A process that leaves the group with setsid/setpgid escapes: only cgroups could hold it.)
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum {
    PROCESS_LINE_MAX = 64 * 1024, // longer lines are cut and reported as such
    PROCESS_KILL_GRACE_MS = 200   // between SIGTERM and SIGKILL to the child's group
};

// The variables of our environment a child sees without asking (LC_* stands for every
// locale variable).
#define PROCESS_ENV_ALLOWED "PATH HOME USER LOGNAME LANG LANGUAGE LC_* TZ TMPDIR"

typedef enum {
    PROCESS_OK,
    PROCESS_ERR_SPAWN,     // fork/pipe failed, or the program could not be executed
    PROCESS_ERR_WRITE,     // the child closed its input
    PROCESS_ERR_TIMEOUT,   // no complete line in time
    PROCESS_ERR_EOF,       // the child closed its output (usually: it exited)
    PROCESS_ERR_LINE_LONG, // a line longer than PROCESS_LINE_MAX (its head is returned)
    PROCESS_ERR_READ,
    PROCESS_ERR_EXITED, // the child exited, but a process it started holds its output open
    PROCESS_STATUS_NB
} ProcessStatus;

/// How to start a child; every field may be left zero (NULL: as the field says).
typedef struct {
    const char *workdir;    // NULL or "": ours
    const char *const *env; // "NAME=value" strings, NULL-terminated, set last; NULL: none
    const char *passenv;    // names (blank-separated) passed through from our environment
    uint64_t rlimit_as;     // RLIMIT_AS in bytes; 0: ours
    uint64_t rlimit_cpu_s;  // RLIMIT_CPU in seconds (SIGXCPU, SIGKILL a second later); 0: ours
} ProcessOptions;

typedef struct {
    pid_t pid;     // also the id of its process group
    int in_fd;     // we write here: the child's stdin
    int out_fd;    // we read here: the child's stdout
    size_t len;    // bytes buffered in buf
    bool skipping; // discarding the rest of an over-long line
    // Set by process_spawn and only read where pid > 0 (a zeroed Process with pid -1 is
    // valid: nothing is watched).
    int pidfd;     // readable once the child has exited; -1 where pidfd_open is missing
    bool exited;   // the child has exited (not yet reaped: its pid stays ours)
    int exit_code; // its exit status, or the signal that killed it
    bool signaled;
    uint64_t rlimit_as, rlimit_cpu_s; // as started, for the exit text
    char buf[PROCESS_LINE_MAX];
} Process;

const char *process_strerror(ProcessStatus st);

/// Starts argv[0] (a path; no PATH search, no shell) with argv as opt says (NULL: defaults).
/// On PROCESS_ERR_SPAWN errno says why (the exec's or chdir's error, say ENOENT).
ProcessStatus process_spawn(Process *p, char *const argv[], const ProcessOptions *opt);
ProcessStatus process_write(Process *p, const char *text);
/// Reads one line (without its newline) into line[cap]; waits at most timeout_ms. Lines the
/// child wrote before it exited are still returned; then EOF, or PROCESS_ERR_EXITED when a
/// process it started keeps the pipe open.
ProcessStatus process_read_line(Process *p, char *line, size_t cap, int timeout_ms);
/// Whether the child has exited, waiting at most wait_ms for it; if so, how, into text:
/// "exited with status 3", "killed by SIGXCPU (over rlimit_cpu 5 s)", ...
bool process_exit_text(Process *p, int wait_ms, char *text, size_t cap);
/// Ends the child's process group (SIGTERM, then SIGKILL after PROCESS_KILL_GRACE_MS for
/// whatever is left), reaps the child and closes the pipes. Safe to call twice.
void process_close(Process *p);
