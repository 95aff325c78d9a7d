// SPDX-License-Identifier: MIT
// A test engine that tests build: xqforge's own (`XQ uci`) behind a relay of its input. Built
// with -DXQ="path"; -DWEAK=1 rewrites every `go` to `go depth 1` (a weaker commit); -DHOLD="file"
// holds every `go` while that file exists (a drill's pause). `ENGINE bench` prints a node count
// made from WEAK, so two commits have two bench signatures.
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifndef WEAK
#define WEAK 0
#endif
int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "bench")) {
        printf("Nodes searched  : %d\n", 1000 + WEAK);
        return 0;
    }
    int fd[2];
    if (pipe(fd) != 0)
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[0], 0);
        close(fd[0]);
        close(fd[1]);
        execl(XQ, XQ, "uci", (char *)NULL);
        _exit(127);
    }
    close(fd[0]);
    FILE *to = fdopen(fd[1], "w");
    char line[1 << 16];
    while (to && fgets(line, sizeof line, stdin)) {
        bool go = !strncmp(line, "go", 2);
#ifdef HOLD
        while (go && access(HOLD, F_OK) == 0)
            usleep(10000);
#endif
        fputs(WEAK && go ? "go depth 1\n" : line, to);
        fflush(to);
    }
    if (to)
        fclose(to);
    waitpid(pid, NULL, 0);
    return 0;
}
