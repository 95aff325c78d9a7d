// SPDX-License-Identifier: MIT
// The uploader's decisions without a server: which outcomes are retried, the backoff's
// growth, cap and jitter, where tokens come from (and which are refused), what logs show
// of a URL, and the spool (entries are complete or absent, newer progress supersedes
// older, undeliverable entries stay). The real-server cases are in report_nginx.sh.
#include <curl/curl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "upload.h"

/// 2xx is done; 408, 429 and 5xx and connection failures are retried; other statuses and
/// TLS failures are final.
static void test_classify(void **state)
{
    (void)state;
    assert_int_equal(upload_classify(CURLE_OK, 200), UPLOAD_DONE);
    assert_int_equal(upload_classify(CURLE_OK, 201), UPLOAD_DONE);
    assert_int_equal(upload_classify(CURLE_OK, 204), UPLOAD_DONE);
    assert_int_equal(upload_classify(CURLE_OK, 408), UPLOAD_RETRY);
    assert_int_equal(upload_classify(CURLE_OK, 429), UPLOAD_RETRY);
    assert_int_equal(upload_classify(CURLE_OK, 500), UPLOAD_RETRY);
    assert_int_equal(upload_classify(CURLE_OK, 503), UPLOAD_RETRY);
    assert_int_equal(upload_classify(CURLE_OK, 599), UPLOAD_RETRY);
    assert_int_equal(upload_classify(CURLE_OK, 301), UPLOAD_FAIL_HTTP);
    assert_int_equal(upload_classify(CURLE_OK, 400), UPLOAD_FAIL_HTTP);
    assert_int_equal(upload_classify(CURLE_OK, 401), UPLOAD_FAIL_HTTP);
    assert_int_equal(upload_classify(CURLE_OK, 404), UPLOAD_FAIL_HTTP);
    assert_int_equal(upload_classify(CURLE_OK, 413), UPLOAD_FAIL_HTTP);
    assert_int_equal(upload_classify(CURLE_COULDNT_CONNECT, 0), UPLOAD_RETRY);
    assert_int_equal(upload_classify(CURLE_OPERATION_TIMEDOUT, 0), UPLOAD_RETRY);
    assert_int_equal(upload_classify(CURLE_GOT_NOTHING, 0), UPLOAD_RETRY);
    assert_int_equal(upload_classify(CURLE_PEER_FAILED_VERIFICATION, 0), UPLOAD_FAIL_TLS);
    assert_int_equal(upload_classify(CURLE_SSL_CONNECT_ERROR, 0), UPLOAD_FAIL_TLS);
    assert_int_equal(upload_classify(CURLE_URL_MALFORMAT, 0), UPLOAD_FAIL_OTHER);
    assert_int_equal(upload_classify(CURLE_UNSUPPORTED_PROTOCOL, 0), UPLOAD_FAIL_OTHER);
}

/// Waits double per retry up to the cap, and jitter keeps each between half and all of
/// the undithered wait.
static void test_backoff(void **state)
{
    (void)state;
    UploadPolicy p;
    upload_policy_default(&p, "/tmp");
    p.backoff_s = 1;
    p.backoff_max_s = 10;
    assert_true(upload_backoff(&p, 1, 0.999999) <= 1.0 && upload_backoff(&p, 1, 0) == 0.5);
    assert_true(upload_backoff(&p, 2, 0) == 1.0);
    assert_true(upload_backoff(&p, 3, 0) == 2.0);
    assert_true(upload_backoff(&p, 4, 0.5) == 6.0);
    for (int r = 5; r < 70; r++) { // capped, and no overflow for absurd retry counts
        assert_true(upload_backoff(&p, r, 0) == 5.0);
        assert_true(upload_backoff(&p, r, 0.999) <= 10.0);
    }
    assert_true(upload_backoff(&p, 1, -3) == 0.5); // a bad jitter is ignored
}

/// The token comes from the named variable or file (trailing newline removed); unset,
/// empty and multi-line tokens are refused without echoing the token.
static void test_token(void **state)
{
    (void)state;
    UploadTarget t = {0};
    char tok[64], why[256];
    assert_int_equal(upload_token_load(&t, tok, sizeof tok, why, sizeof why), UPLOAD_OK);
    assert_string_equal(tok, "");
    snprintf(t.token_env, sizeof t.token_env, "XQ_TEST_TOKEN");
    unsetenv("XQ_TEST_TOKEN");
    assert_int_equal(upload_token_load(&t, tok, sizeof tok, why, sizeof why), UPLOAD_ERR_TOKEN);
    assert_non_null(strstr(why, "XQ_TEST_TOKEN"));
    setenv("XQ_TEST_TOKEN", "s3cret", 1);
    assert_int_equal(upload_token_load(&t, tok, sizeof tok, why, sizeof why), UPLOAD_OK);
    assert_string_equal(tok, "s3cret");
    setenv("XQ_TEST_TOKEN", "evil\r\nX-Other: 1", 1);
    assert_int_equal(upload_token_load(&t, tok, sizeof tok, why, sizeof why), UPLOAD_ERR_TOKEN);
    assert_null(strstr(why, "evil"));
    t.token_env[0] = '\0';
    char path[] = "/tmp/xq-token-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "filetoken\n", 10), 10);
    close(fd);
    snprintf(t.token_file, sizeof t.token_file, "%s", path);
    assert_int_equal(chmod(path, 0644), 0); // others can read it: refused, mode named
    assert_int_equal(upload_token_load(&t, tok, sizeof tok, why, sizeof why), UPLOAD_ERR_TOKEN);
    assert_non_null(strstr(why, "mode 644"));
    assert_int_equal(chmod(path, 0600), 0);
    assert_int_equal(upload_token_load(&t, tok, sizeof tok, why, sizeof why), UPLOAD_OK);
    assert_string_equal(tok, "filetoken");
    unlink(path);
    assert_int_equal(upload_token_load(&t, tok, sizeof tok, why, sizeof why), UPLOAD_ERR_TOKEN);
}

/// Logged URLs lose user info, query and fragment (where secrets hide).
static void test_url_for_log(void **state)
{
    (void)state;
    char b[256];
    upload_url_for_log("https://user:pw@example.org:8443/a/b?token=x#f", b, sizeof b);
    assert_string_equal(b, "https://example.org:8443/a/b");
    upload_url_for_log("http://127.0.0.1/sink", b, sizeof b);
    assert_string_equal(b, "http://127.0.0.1/sink");
    upload_url_for_log("http://h?x@y", b, sizeof b);
    assert_string_equal(b, "http://h");
}

static void spool_files(const char *dir, char paths[2][256])
{
    snprintf(paths[0], 256, "%s/report.json", dir);
    snprintf(paths[1], 256, "%s/report.html", dir);
    FILE *f = fopen(paths[0], "w");
    fputs("{\"a\": 1}\n", f);
    fclose(f);
    f = fopen(paths[1], "w");
    fputs("<html></html>\n", f);
    fclose(f);
}

/// A pass against a closed port keeps the final entry, drops progress entries that a newer
/// entry of the same run supersedes, and leaves other runs' entries alone.
static void test_spool_supersede_and_keep(void **state)
{
    (void)state;
    char dir[] = "/tmp/xq-spool-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char paths[2][256], spool[300], why[256];
    spool_files(dir, paths);
    snprintf(spool, sizeof spool, "%s/spool", dir);
    const char *files[] = {paths[0], paths[1]};
    // Port 1 on loopback: connection refused at once.
    UploadTarget t = {.url_count = 1, .method = UPLOAD_PUT, .connect_timeout_s = 2, .timeout_s = 5};
    snprintf(t.urls[0], sizeof t.urls[0], "http://127.0.0.1:1/reports");
    assert_int_equal(upload_spool_add(spool, &t, "run-a", 1, false, files, 2, why, sizeof why),
                     UPLOAD_OK);
    assert_int_equal(upload_spool_add(spool, &t, "run-b", 1, false, files, 2, why, sizeof why),
                     UPLOAD_OK);
    assert_int_equal(upload_spool_add(spool, &t, "run-a", 2, false, files, 2, why, sizeof why),
                     UPLOAD_OK);
    assert_int_equal(upload_spool_add(spool, &t, "run-a", 3, true, files, 2, why, sizeof why),
                     UPLOAD_OK);
    assert_int_equal(upload_spool_count(spool), 4);
    assert_int_equal(upload_spool_add(spool, &t, "bad/id", 1, false, files, 2, why, sizeof why),
                     UPLOAD_ERR_ARG);
    UploadPolicy p;
    upload_policy_default(&p, spool);
    p.attempts = 1;
    p.log = NULL;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    UploadStats st = {0};
    assert_int_equal(upload_spool_drain(&p, &st), UPLOAD_OK);
    assert_int_equal(st.superseded, 2); // run-a v1 and v2
    assert_int_equal(st.kept, 2);       // run-b v1 and run-a v3 (final)
    assert_int_equal(st.delivered, 0);
    assert_int_equal(upload_spool_count(spool), 2);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "ls %s | grep -q -- '-run-a-00000003-f$'", spool);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/// A missing source file leaves no half-built entry behind.
static void test_spool_add_atomic(void **state)
{
    (void)state;
    char dir[] = "/tmp/xq-spool-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char spool[300], missing[300], why[256];
    snprintf(spool, sizeof spool, "%s/spool", dir);
    snprintf(missing, sizeof missing, "%s/nope.json", dir);
    const char *files[] = {missing};
    UploadTarget t = {.url_count = 1, .connect_timeout_s = 2, .timeout_s = 5};
    snprintf(t.urls[0], sizeof t.urls[0], "http://127.0.0.1:1/");
    assert_int_equal(upload_spool_add(spool, &t, "r", 1, true, files, 1, why, sizeof why),
                     UPLOAD_ERR_IO);
    assert_non_null(strstr(why, "nope.json"));
    char cmd[400];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A %s | grep -v '^.lock$')\"", spool);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_token),
        cmocka_unit_test(test_url_for_log),
        cmocka_unit_test(test_spool_supersede_and_keep),
        cmocka_unit_test(test_spool_add_atomic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
