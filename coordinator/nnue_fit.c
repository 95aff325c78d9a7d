// SPDX-License-Identifier: MIT
// Placeholder until kind = train lands (see nnue_fit.h).
#include <stdio.h>

#include "nnue_fit.h"

int nnue_fit_job(Link *link, const JobConfig *job, const char *dir, uint64_t fingerprint)
{
    (void)link, (void)job, (void)dir, (void)fingerprint;
    fprintf(stderr, "kind = train: not built yet\n");
    return 1;
}
