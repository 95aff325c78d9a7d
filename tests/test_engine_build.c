// SPDX-License-Identifier: MIT
// Engines built from source (job/engine_build.c): the CPU level the builds are told, where the
// build cache is, and a commit that is not in the repository. tests/run_source.sh runs builds.
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine_build.h"

/// The level is XQ_CPU_LEVEL when set, never "native" (a binary every node of the level runs).
static void test_cpu_level(void **state)
{
    (void)state;
    setenv("XQ_CPU_LEVEL", "x86-64-v3", 1);
    assert_string_equal(engine_build_cpu_level(), "x86-64-v3");
    setenv("XQ_CPU_LEVEL", "native", 1);
    assert_string_not_equal(engine_build_cpu_level(), "native");
    unsetenv("XQ_CPU_LEVEL");
    const char *level = engine_build_cpu_level();
    assert_true(level[0] != '\0');
    assert_string_not_equal(level, "native");
#if defined(__x86_64__)
    assert_true(!strncmp(level, "x86-64", 6));
#endif
}

/// The cache is [build] cache, else build-cache beside output.dir (shared by later runs),
/// always absolute: a relative one (--set output.dir=out, --set build.cache=c) is taken from
/// the current directory, never from the checkout git and the build run in.
static void test_cache_dir(void **state)
{
    (void)state;
    static JobConfig job;
    char dir[JOB_TEXT_MAX], cwd[PATH_MAX], want[PATH_MAX + 32];
    assert_non_null(getcwd(cwd, sizeof cwd));
    const struct {
        const char *out, *want;
        bool relative;
    } cases[] = {{"/a/b/out", "/a/b/build-cache", false},
                 {"/a/b/out/", "/a/b/build-cache", false},
                 {"out", "build-cache", true},
                 {"x/out", "x/build-cache", true},
                 {"/out", "/build-cache", false},
                 {"", "build-cache", true}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(job.output.dir, sizeof job.output.dir, "%s", cases[i].out);
        engine_build_cache_dir(&job, dir, sizeof dir);
        snprintf(want, sizeof want, "%s%s%s", cases[i].relative ? cwd : "",
                 cases[i].relative ? "/" : "", cases[i].want);
        assert_string_equal(dir, want);
    }
    snprintf(job.build.cache, sizeof job.build.cache, "/shared/cache");
    engine_build_cache_dir(&job, dir, sizeof dir);
    assert_string_equal(dir, "/shared/cache");
    snprintf(job.build.cache, sizeof job.build.cache, "c");
    engine_build_cache_dir(&job, dir, sizeof dir);
    snprintf(want, sizeof want, "%s/c", cwd);
    assert_string_equal(dir, want);
}

/// A job without a source engine resolves and builds nothing; a commit that is not in the
/// repository (here: no repository at all) is refused naming the engine, the ref and the path.
static void test_resolve(void **state)
{
    (void)state;
    static JobConfig job;
    char why[1024] = "";
    job.player_count = 2;
    snprintf(job.players[0].cfg.name, sizeof job.players[0].cfg.name, "base");
    assert_false(engine_build_any(&job));
    assert_true(engine_build_resolve(&job, why, sizeof why));
    assert_true(engine_build_all(&job, false, why, sizeof why));
    snprintf(job.sources[0].source, sizeof job.sources[0].source, "/nonexistent/repo");
    snprintf(job.sources[0].commit, sizeof job.sources[0].commit, "main");
    assert_true(engine_build_any(&job));
    assert_false(engine_build_resolve(&job, why, sizeof why));
    assert_string_equal(why, "engine 'base': commit 'main' is not a commit of the git repository "
                             "/nonexistent/repo");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_level),
        cmocka_unit_test(test_cache_dir),
        cmocka_unit_test(test_resolve),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
