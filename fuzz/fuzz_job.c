// SPDX-License-Identifier: MIT
// Job files (job/job.c via libinih): any file, with any overrides, loads or is refused
// with a reason; a loaded job is within the limits the rest of the program relies on.
// Input lines starting with '@' are taken as overrides ("section.key=value"), the rest as
// the file.
#include "fuzz_util.h"

#include "job.h"

enum { OVERRIDES_MAX = 8 };

static JobConfig *job;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!job && !(job = malloc(sizeof *job)))
        abort();
    char *text = fuzz_cstr(data, size), *file = malloc(size + 1);
    const char *ovr[OVERRIDES_MAX];
    int n_ovr = 0;
    size_t flen = 0;
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (line[0] == '@' && n_ovr < OVERRIDES_MAX) {
            ovr[n_ovr++] = line + 1;
        } else {
            size_t n = strlen(line);
            memcpy(file + flen, line, n);
            flen += n;
            if (next)
                file[flen++] = '\n';
        }
    }
    char path[64], why[1024];
    int fd = fuzz_memfile((const uint8_t *)file, flen, path, sizeof path);
    why[0] = '\0';
    JobStatus st = job_load(path, ovr, n_ovr, job, why, sizeof why);
    if (st != JOB_OK && !*why)
        abort();
    if (st == JOB_OK) {
        if (job->player_count < 0 || job->player_count > JOB_PLAYERS_MAX ||
            job->kind >= JOB_KIND_NB)
            abort();
        for (int a = 0; a < job->player_count; a++) {
            const PlayerConfig *pc = &job->players[a].cfg;
            if (pc->argc < 0 || pc->argc > PLAYER_ARGS_MAX || pc->option_count < 0 ||
                pc->option_count > PLAYER_OPTIONS_MAX || pc->proto >= PROTO_NB)
                abort();
            GameConfig gc;
            job_game_config(job, a, (a + 1) % job->player_count, &gc);
        }
    }
    close(fd);
    free(file);
    free(text);
    return 0;
}
