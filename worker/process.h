// SPDX-License-Identifier: MIT
// A child process (an external engine) spoken to over pipes, one text line at a time.
// The child is started without a shell and dies with its parent (PR_SET_PDEATHSIG); lines
// are read with a timeout and a length cap, so a stalled or flooding child cannot hang or
// exhaust the caller.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum { PROCESS_LINE_MAX = 64 * 1024 }; // longer lines are cut and reported as such

typedef enum {
    PROCESS_OK,
    PROCESS_ERR_SPAWN,     // fork/pipe failed, or the program could not be executed
    PROCESS_ERR_WRITE,     // the child closed its input
    PROCESS_ERR_TIMEOUT,   // no complete line in time
    PROCESS_ERR_EOF,       // the child closed its output (usually: it exited)
    PROCESS_ERR_LINE_LONG, // a line longer than PROCESS_LINE_MAX (its head is returned)
    PROCESS_ERR_READ,
    PROCESS_STATUS_NB
} ProcessStatus;

typedef struct {
    pid_t pid;
    int in_fd;     // we write here: the child's stdin
    int out_fd;    // we read here: the child's stdout
    size_t len;    // bytes buffered in buf
    bool skipping; // discarding the rest of an over-long line
    char buf[PROCESS_LINE_MAX];
} Process;

const char *process_strerror(ProcessStatus st);

/// Starts argv[0] (a path; no PATH search, no shell) with argv, in workdir if not NULL.
ProcessStatus process_spawn(Process *p, char *const argv[], const char *workdir);
ProcessStatus process_write(Process *p, const char *text);
/// Reads one line (without its newline) into line[cap]; waits at most timeout_ms.
ProcessStatus process_read_line(Process *p, char *line, size_t cap, int timeout_ms);
/// Kills the child if still running, reaps it and closes the pipes. Safe to call twice.
void process_close(Process *p);
