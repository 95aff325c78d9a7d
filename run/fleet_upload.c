// SPDX-License-Identifier: MIT
#include "fleet_upload.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fleet_ini.h"
#include "queue.h"
#include "upload.h"

enum { STATES_MAX = 8192 }; // bytes of the tests' "id:state" list compared between pages

struct FleetUpload {
    char dir[QUEUE_PATH_MAX];
    char spool[QUEUE_PATH_MAX + 8];
    FleetIni ini;
    Uploader *uploader;
    struct timespec seen;    // index.json's mtime when last looked at
    bool pending;            // the page changed since the last version spooled
    int64_t last_ms;         // monotonic time of the last version spooled
    uint64_t version;        // of the last version spooled
    char states[STATES_MAX]; // the tests' states in the last version spooled
};

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/// The queue's owner reads fleet.ini as queue.c does (a file others can write is refused).
static FleetIniStatus ini_load(const char *dir, FleetIni *f, char *why, size_t why_len)
{
    struct stat sb;
    if (stat(dir, &sb) != 0) {
        snprintf(why, why_len, "no queue");
        return FLEET_INI_MISSING;
    }
    return fleet_ini_read(dir, sb.st_uid, f, why, why_len);
}

bool fleet_upload_check(const char *dir, char *why, size_t why_len)
{
    FleetIni *f = malloc(sizeof *f);
    char fwhy[UPLOAD_TEXT_MAX + 300];
    if (!f) {
        snprintf(why, why_len, "out of memory");
        return false;
    }
    FleetIniStatus st = ini_load(dir, f, fwhy, sizeof fwhy);
    free(f);
    if (st == FLEET_INI_OK || st == FLEET_INI_MISSING)
        return true;
    snprintf(why, why_len, "%s/fleet.ini is refused: %s", dir, fwhy);
    return false;
}

/// "id:state id:state ..." of the page's tests: a change means a test started or ended.
static void page_states(const char *path, char *out, size_t cap)
{
    out[0] = '\0';
    json_t *root = json_load_file(path, 0, NULL), *t;
    size_t i, len = 0;
    json_array_foreach(json_object_get(root, "tests"), i, t)
    {
        const char *id = json_string_value(json_object_get(t, "id"));
        const char *state = json_string_value(json_object_get(t, "state"));
        int n = snprintf(out + len, cap - len, "%s:%s ", id ? id : "?", state ? state : "?");
        if (n < 0 || (size_t)n >= cap - len)
            break;
        len += (size_t)n;
    }
    json_decref(root);
}

/// Puts the page in the spool as the next version and asks the thread to send it.
static void spool_page(FleetUpload *u, bool final)
{
    char json[QUEUE_PATH_MAX + 16], html[QUEUE_PATH_MAX + 16], why[UPLOAD_TEXT_MAX + 400];
    snprintf(json, sizeof json, "%s/index.json", u->dir);
    snprintf(html, sizeof html, "%s/index.html", u->dir);
    const char *files[2] = {json, html};
    // POST sends index.json alone; PUT and multipart both files.
    int n = u->ini.target.method == UPLOAD_POST ? 1 : 2;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t v = (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
    u->version = v > u->version ? v : u->version + 1;
    u->last_ms = mono_ms();
    u->pending = false;
    if (upload_spool_add(u->spool, "fleet", u->version, final, files, n, why, sizeof why) !=
        UPLOAD_OK)
        fprintf(stderr, "xqforge fleet: the page is not spooled: %s\n", why);
    upload_kick(u->uploader);
}

FleetUpload *fleet_upload_start(const char *dir)
{
    FleetUpload *u = calloc(1, sizeof *u);
    char why[UPLOAD_TEXT_MAX + 400], token[UPLOAD_TOKEN_MAX];
    if (!u) {
        fprintf(stderr, "xqforge fleet: page upload off: out of memory\n");
        return NULL;
    }
    if (ini_load(dir, &u->ini, why, sizeof why) != FLEET_INI_OK || !u->ini.target.url_count) {
        free(u); // no [report] urls (a bad fleet.ini was refused before)
        return NULL;
    }
    snprintf(u->dir, sizeof u->dir, "%s", dir);
    snprintf(u->spool, sizeof u->spool, "%s/spool", dir);
    UploadPolicy pol;
    upload_policy_default(&pol, u->spool);
    pol.attempts = u->ini.attempts;
    pol.backoff_s = u->ini.backoff_s;
    pol.backoff_max_s = u->ini.backoff_max_s;
    pol.retry_after_max_s = u->ini.backoff_max_s; // a server waits no longer than we would
    // A spool that others can write may hold planted entries: refused (it is made 0700).
    if (upload_spool_check(u->spool, true, why, sizeof why) != UPLOAD_OK ||
        upload_target_check(&u->ini.target, why, sizeof why) != UPLOAD_OK) {
        fprintf(stderr, "xqforge fleet: page upload off: %s\n", why);
        free(u);
        return NULL;
    }
    // A missing token is said now, not only at the first upload; pages still spool.
    if (upload_token_load(&u->ini.target, token, sizeof token, why, sizeof why) != UPLOAD_OK)
        fprintf(stderr, "xqforge fleet: page upload: %s (pages are spooled)\n", why);
    memset(token, 0, sizeof token);
    if (!(u->uploader = upload_start(&pol, &u->ini.target)))
        fprintf(stderr, "xqforge fleet: cannot start the upload thread (pages are spooled)\n");
    u->last_ms = mono_ms() - 1000LL * u->ini.interval_s; // the first page goes at once
    return u;
}

void fleet_upload_poll(FleetUpload *u)
{
    if (!u)
        return;
    char path[QUEUE_PATH_MAX + 16];
    struct stat sb;
    snprintf(path, sizeof path, "%s/index.json", u->dir);
    if (stat(path, &sb) != 0)
        return;
    bool changed = sb.st_mtim.tv_sec != u->seen.tv_sec || sb.st_mtim.tv_nsec != u->seen.tv_nsec;
    bool due = mono_ms() - u->last_ms >= 1000LL * u->ini.interval_s;
    if (changed) {
        u->seen = sb.st_mtim;
        u->pending = true;
        char states[STATES_MAX];
        page_states(path, states, sizeof states);
        if (strcmp(states, u->states)) { // a test started or ended: at once
            snprintf(u->states, sizeof u->states, "%s", states);
            due = true;
        }
    }
    if (u->pending && due)
        spool_page(u, false);
}

void fleet_upload_end(FleetUpload *u)
{
    if (!u)
        return;
    spool_page(u, true);
    UploadStats st = {0};
    upload_stop(u->uploader, u->ini.final_wait_s, &st);
    int left = upload_spool_count(u->spool);
    printf("xqforge fleet: page upload: %d delivered, %d retries", st.delivered, st.retries);
    if (st.untrusted)
        printf(", %d not trusted (planted or tampered: left alone)", st.untrusted);
    if (left)
        printf(", %d kept in %s (deliver with: xqforge upload --spool %s --url URL)", left,
               u->spool, u->spool);
    printf("\n");
    free(u);
}
