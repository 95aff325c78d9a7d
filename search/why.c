// SPDX-License-Identifier: MIT
#include "why.h"

#include <stdio.h>

void why_vset(char *why, size_t why_len, const char *fmt, va_list ap)
{
    if (why && why_len)
        vsnprintf(why, why_len, fmt, ap);
}

void why_set(char *why, size_t why_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    why_vset(why, why_len, fmt, ap);
    va_end(ap);
}
