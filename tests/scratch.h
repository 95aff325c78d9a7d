// SPDX-License-Identifier: MIT
// A unit test's scratch directory in /tmp: made for a fixture, written into, removed whole.
// Failures are cmocka failures of the test that called.
#pragma once

#include <stddef.h>

/// Makes /tmp/xq-NAME-XXXXXX (mkdtemp) into dir[cap].
void scratch_make(char *dir, size_t cap, const char *name);

/// Removes dir and everything below it.
void scratch_remove(const char *dir);

/// Writes text to path (created or truncated).
void scratch_write(const char *path, const char *text);
