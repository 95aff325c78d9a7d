// SPDX-License-Identifier: MIT
// The uploader's decisions without a server: which outcomes are retried, the backoff's
// growth, cap and jitter, Retry-After's cap, where tokens come from (and which are refused),
// which URLs are refused and what logs show of them, and the spool (its modes, entries
// complete or absent, newer progress supersedes older, undeliverable entries stay, planted
// or tampered entries send nothing anywhere and stay). The real-server cases are in
// report_nginx.sh.
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "files.h"
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
    assert_int_equal(upload_spool_add(spool, "run-a", 1, false, files, 2, why, sizeof why),
                     UPLOAD_OK);
    assert_int_equal(upload_spool_add(spool, "run-b", 1, false, files, 2, why, sizeof why),
                     UPLOAD_OK);
    assert_int_equal(upload_spool_add(spool, "run-a", 2, false, files, 2, why, sizeof why),
                     UPLOAD_OK);
    assert_int_equal(upload_spool_add(spool, "run-a", 3, true, files, 2, why, sizeof why),
                     UPLOAD_OK);
    assert_int_equal(upload_spool_count(spool), 4);
    assert_int_equal(upload_spool_add(spool, "bad/id", 1, false, files, 2, why, sizeof why),
                     UPLOAD_ERR_ARG);
    UploadPolicy p;
    upload_policy_default(&p, spool);
    p.attempts = 1;
    p.log = NULL;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    UploadStats st = {0};
    assert_int_equal(upload_spool_drain(&p, &t, &st), UPLOAD_OK);
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
    assert_int_equal(upload_spool_add(spool, "r", 1, true, files, 1, why, sizeof why),
                     UPLOAD_ERR_IO);
    assert_non_null(strstr(why, "nope.json"));
    char cmd[400];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A %s | grep -v '^.lock$')\"", spool);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/// A Retry-After up to the cap is waited as given; a longer one is cut to the cap (and says
/// so), so a server cannot hold a pass for long; without one the backoff applies.
static void test_retry_after_cap(void **state)
{
    (void)state;
    UploadPolicy p;
    upload_policy_default(&p, "/tmp");
    assert_true(p.retry_after_max_s <= 60);
    bool capped = true;
    assert_true(upload_retry_wait(&p, 1, 0, 7, &capped) == 7 && !capped);
    assert_true(upload_retry_wait(&p, 1, 0, 600, &capped) == p.retry_after_max_s && capped);
    assert_true(upload_retry_wait(&p, 3, 0, 86400 * 365.0, &capped) == p.retry_after_max_s);
    assert_true(capped);
    assert_true(upload_retry_wait(&p, 3, 0, -1, &capped) == upload_backoff(&p, 3, 0));
    assert_false(capped);
    p.retry_after_max_s = 2;
    assert_true(upload_retry_wait(&p, 1, 0, 5, &capped) == 2 && capped);
    assert_true(upload_retry_wait(&p, 1, 0, 0, &capped) == 0 && !capped);
}

/// URLs with credentials, other schemes and control characters are refused, and the message
/// never repeats the password; a target needs 1..4 good URLs.
static void test_url_check(void **state)
{
    (void)state;
    char why[512];
    assert_int_equal(upload_url_check("https://example.org/r?a=b@c", why, sizeof why), UPLOAD_OK);
    assert_int_equal(upload_url_check("http://127.0.0.1:8080/sink/", why, sizeof why), UPLOAD_OK);
    assert_int_equal(upload_url_check("https://al:hunter2@example.org/r", why, sizeof why),
                     UPLOAD_ERR_ARG);
    assert_non_null(strstr(why, "credentials"));
    assert_null(strstr(why, "hunter2"));
    assert_int_equal(upload_url_check("http://zork@h/", why, sizeof why), UPLOAD_ERR_ARG);
    assert_null(strstr(why, "zork"));
    assert_int_equal(upload_url_check("ftp://h/", why, sizeof why), UPLOAD_ERR_ARG);
    assert_int_equal(upload_url_check("file:///etc/passwd", why, sizeof why), UPLOAD_ERR_ARG);
    assert_int_equal(upload_url_check("http://h/\r\nX: 1", why, sizeof why), UPLOAD_ERR_ARG);
    assert_int_equal(upload_url_check("", why, sizeof why), UPLOAD_ERR_ARG);
    UploadTarget t;
    upload_target_default(&t);
    assert_int_equal(upload_target_check(&t, why, sizeof why), UPLOAD_ERR_ARG);
    snprintf(t.urls[0], sizeof t.urls[0], "http://h/a");
    snprintf(t.urls[1], sizeof t.urls[1], "http://u:p@h/b");
    t.url_count = 1;
    assert_int_equal(upload_target_check(&t, why, sizeof why), UPLOAD_OK);
    t.url_count = 2;
    assert_int_equal(upload_target_check(&t, why, sizeof why), UPLOAD_ERR_ARG);
}

static void run_cmd(const char *fmt, const char *arg)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, fmt, arg);
    assert_int_equal(system(cmd), 0);
}

/// A new spool is 0700 with 0600 files and an entry names no URL or token; a spool that
/// group or others can write, or that is not ours, is refused by every call with its mode
/// and owner named; one of ours that others can only read is tightened to 0700 when spooling.
static void test_spool_modes(void **state)
{
    (void)state;
    char dir[] = "/tmp/xq-spool-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char paths[2][256], spool[300], why[2048], path[600];
    spool_files(dir, paths);
    snprintf(spool, sizeof spool, "%s/a/spool", dir);
    const char *files[] = {paths[0], paths[1]};
    mode_t old = umask(022);
    assert_int_equal(upload_spool_add(spool, "run-m", 1, true, files, 2, why, sizeof why),
                     UPLOAD_OK);
    umask(old);
    struct stat sb;
    assert_int_equal(stat(spool, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0700);
    snprintf(path, sizeof path, "ls -d %s/*-run-m-00000001-f >/dev/null", spool);
    assert_int_equal(system(path), 0);
    snprintf(path, sizeof path,
             "cd %s/*-run-m-00000001-f && test \"$(stat -c %%a . meta.json report.json "
             "report.html | tr '\\n' ' ')\" = '700 600 600 600 ' && "
             "! grep -Eq 'url|token|ca_file|method|127' meta.json && "
             "grep -q '\"size\": 9' meta.json",
             spool);
    assert_int_equal(system(path), 0);
    UploadTarget t;
    upload_target_default(&t);
    t.url_count = 1;
    snprintf(t.urls[0], sizeof t.urls[0], "http://127.0.0.1:1/r");
    UploadPolicy p;
    upload_policy_default(&p, spool);
    p.attempts = 1;
    p.log = NULL;
    // Group-writable: refused everywhere, mode and owner named, nothing removed.
    assert_int_equal(chmod(spool, 0775), 0);
    assert_int_equal(upload_spool_check(spool, false, why, sizeof why), UPLOAD_ERR_UNSAFE);
    assert_non_null(strstr(why, "mode 0775"));
    char owner[64];
    snprintf(owner, sizeof owner, "(uid %u)", (unsigned)geteuid());
    assert_non_null(strstr(why, owner));
    assert_int_equal(upload_spool_add(spool, "run-m", 2, true, files, 2, why, sizeof why),
                     UPLOAD_ERR_UNSAFE);
    UploadStats st = {0};
    assert_int_equal(upload_spool_drain(&p, &t, &st), UPLOAD_ERR_UNSAFE);
    assert_int_equal(st.attempts, 0);
    assert_int_equal(upload_spool_count(spool), 1);
    assert_int_equal(chmod(spool, 0757), 0); // world-writable: the same
    assert_int_equal(upload_spool_check(spool, true, why, sizeof why), UPLOAD_ERR_UNSAFE);
    assert_non_null(strstr(why, "mode 0757"));
    // Ours, readable by others: usable; spooling makes it 0700.
    assert_int_equal(chmod(spool, 0755), 0);
    assert_int_equal(upload_spool_check(spool, false, why, sizeof why), UPLOAD_OK);
    assert_int_equal(upload_spool_add(spool, "run-m", 2, true, files, 2, why, sizeof why),
                     UPLOAD_OK);
    assert_int_equal(stat(spool, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0700);
    // Another user's (only root can make one here): refused as not ours.
    if (geteuid() == 0 && chown(spool, 65534, 65534) == 0) {
        assert_int_equal(upload_spool_check(spool, false, why, sizeof why), UPLOAD_ERR_UNSAFE);
        assert_non_null(strstr(why, "uid 65534"));
        assert_non_null(strstr(why, "not yours"));
        assert_int_equal(upload_spool_drain(&p, &t, &st), UPLOAD_ERR_UNSAFE);
    }
    run_cmd("rm -rf %s", dir);
}

/// A TCP listener on 127.0.0.1 that never accepts: a connection to it stays pending.
static int listener(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 8), 0);
    socklen_t len = sizeof a;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

static bool someone_connected(int fd)
{
    struct pollfd pfd = {fd, POLLIN, 0};
    return poll(&pfd, 1, 0) > 0;
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/// An entry as written by an older xqforge or an attacker: meta.json names the URL (the
/// listener) and a token source.
static void plant_old(const char *spool, const char *name, int port, const char *token_env,
                      const char *token_file)
{
    char dir[600], meta[2048];
    snprintf(dir, sizeof dir, "%s/%s", spool, name);
    assert_int_equal(mkdir(dir, 0700), 0);
    write_file(dir, "report.json", "{\"a\": 1}\n");
    snprintf(meta, sizeof meta,
             "{\"method\": \"post\", \"urls\": [\"http://127.0.0.1:%d/steal\"], \"delivered\": "
             "[false], \"token_env\": \"%s\", \"token_file\": \"%s\", \"ca_file\": \"\", "
             "\"connect_timeout\": 2, \"timeout\": "
             "3, \"run_id\": \"run-a\", \"version\": 2, \"final\": false, \"idempotency_key\": "
             "\"k\", \"files\": [\"report.json\"]}\n",
             port, token_env, token_file);
    write_file(dir, "meta.json", meta);
}

/// A data-only entry whose report.json is a link to a secret (size, hash and key right).
static void plant_link(const char *spool, const char *name, const char *secret_path,
                       const char *secret)
{
    char dir[600], meta[2048], link_path[700];
    snprintf(dir, sizeof dir, "%s/%s", spool, name);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(link_path, sizeof link_path, "%s/report.json", dir);
    assert_int_equal(symlink(secret_path, link_path), 0);
    uint64_t h = files_fnv(FILES_FNV_BASIS, secret, strlen(secret));
    snprintf(meta, sizeof meta,
             "{\"format\": \"xqforge-spool-entry\", \"format_version\": 2, \"run_id\": "
             "\"run-c\", \"version\": 1, \"final\": true, \"idempotency_key\": "
             "\"xqforge-run-c-1-%016llx\", \"files\": [{\"name\": \"report.json\", \"size\": %zu, "
             "\"fnv1a\": \"%016llx\"}], \"delivered\": []}\n",
             (unsigned long long)h, strlen(secret), (unsigned long long)h);
    write_file(dir, "meta.json", meta);
}

/// Planted entries (naming their own URL and token, or linking a secret) and a tampered one
/// send nothing anywhere, from a pass and from the thread's start-up pass: they are counted
/// as not trusted, left in place and supersede nothing; a good entry is still tried.
static void test_planted_entries_send_nothing(void **state)
{
    (void)state;
    char dir[] = "/tmp/xq-spool-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char paths[2][256], spool[300], why[512], secret_path[300], path[700];
    spool_files(dir, paths);
    snprintf(spool, sizeof spool, "%s/spool", dir);
    snprintf(secret_path, sizeof secret_path, "%s/credentials", dir);
    write_file(dir, "credentials", "aws_secret_access_key=SECRET\n");
    int port, lfd = listener(&port);
    const char *files[] = {paths[0], paths[1]};
    // A good progress entry of run-a, and a good final of run-b that is then tampered with.
    assert_int_equal(upload_spool_add(spool, "run-a", 1, false, files, 2, why, sizeof why),
                     UPLOAD_OK);
    assert_int_equal(upload_spool_add(spool, "run-b", 1, true, files, 2, why, sizeof why),
                     UPLOAD_OK);
    snprintf(path, sizeof path,
             "for f in %s/*-run-b-00000001-f/report.json; do printf '{\"a\": 2}\\n' >$f; done",
             spool);
    assert_int_equal(system(path), 0);
    setenv("XQ_PLANTED_SECRET", "SECRET", 1);
    plant_old(spool, "9999999999997-run-a-00000002-p", port, "XQ_PLANTED_SECRET", "");
    plant_old(spool, "9999999999998-run-z-00000002-f", port, "", secret_path);
    plant_link(spool, "9999999999999-run-c-00000001-f", secret_path,
               "aws_secret_access_key=SECRET\n");
    UploadTarget t;
    upload_target_default(&t);
    t.url_count = 1;
    t.connect_timeout_s = 2;
    snprintf(t.urls[0], sizeof t.urls[0], "http://127.0.0.1:1/ours"); // refused at once
    UploadPolicy p;
    upload_policy_default(&p, spool);
    p.attempts = 1;
    p.log = NULL;
    UploadStats st = {0};
    assert_int_equal(upload_spool_drain(&p, &t, &st), UPLOAD_OK);
    assert_false(someone_connected(lfd));
    assert_int_equal(st.untrusted, 4);  // two planted, one linking, one tampered
    assert_int_equal(st.superseded, 0); // run-a v1 is not superseded by the planted v2
    assert_int_equal(st.kept, 1);       // run-a v1, tried on our URL
    assert_int_equal(st.attempts, 1);
    assert_int_equal(upload_spool_count(spool), 5);
    snprintf(path, sizeof path,
             "cd %s && test -f 9999999999997-run-a-00000002-p/meta.json && "
             "test -f 9999999999998-run-z-00000002-f/report.json && "
             "test -L 9999999999999-run-c-00000001-f/report.json && "
             "grep -q 2 *-run-b-00000001-f/report.json",
             spool);
    assert_int_equal(system(path), 0);
    // The start-up pass of a run's uploader: the same.
    Uploader *u = upload_start(&p, &t);
    assert_non_null(u);
    upload_stop(u, 5, &st);
    assert_false(someone_connected(lfd));
    assert_int_equal(st.untrusted, 4);
    assert_int_equal(upload_spool_count(spool), 5);
    close(lfd);
    unsetenv("XQ_PLANTED_SECRET");
    run_cmd("rm -rf %s", dir);
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
        cmocka_unit_test(test_retry_after_cap),
        cmocka_unit_test(test_url_check),
        cmocka_unit_test(test_spool_modes),
        cmocka_unit_test(test_planted_entries_send_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
