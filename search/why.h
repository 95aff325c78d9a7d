// SPDX-License-Identifier: MIT
// A failure's reason, written once: library functions return a status and say why in the
// caller's buffer (why, why_len; NULL or 0: not asked), as curl's *_strerror pairs do.
#pragma once

#include <stdarg.h>
#include <stddef.h>

/// Formats the reason into why[why_len] (always NUL-terminated); nothing when why is NULL.
__attribute__((format(printf, 3, 4))) void why_set(char *why, size_t why_len, const char *fmt, ...);
/// The same with a va_list.
void why_vset(char *why, size_t why_len, const char *fmt, va_list ap);

/// st, with the reason formatted into why: `return WHY_FAIL(ERR, why, why_len, "...", ...);`.
#define WHY_FAIL(st, why, why_len, ...) (why_set((why), (why_len), __VA_ARGS__), (st))
