// SPDX-License-Identifier: MIT
// Placeholder until the network lands (see nnue.h).
#include "nnue.h"

const char *nnue_strerror(NnueStatus st)
{
    (void)st;
    return "NNUE not built yet";
}
