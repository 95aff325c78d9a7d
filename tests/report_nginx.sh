#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Report delivery against a real nginx that this script starts on 127.0.0.1 (random ports):
# a perl POST sink that stores each body, WebDAV PUT, a location that answers 503 three
# times, one that answers 429 with Retry-After once, a bearer-token check (401), an HTTPS
# server with a test CA, a port that is down until the end, and hostile servers (500
# forever, a reply that stalls, a port answering garbage), and one whose Retry-After is
# ten minutes. Each run of the default job (shortened) or `xqforge upload` is then checked
# against what nginx stored and logged. Then the spool's trust: entries planted in a spool
# (naming a URL and a token source of an attacker's choosing) or tampered with send nothing
# from `xqforge upload` or from a run's start-up pass, a spool others can write is refused,
# and URLs with credentials are refused. usage: report_nginx.sh XQFORGE WORKDIR. Exit 77
# (skip) only when nginx, its perl module, openssl or curl is missing.
set -euo pipefail
xq=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
job="$here/../jobs/sprt-weights.ini"
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
perl_mod=/usr/lib/nginx/modules/ngx_http_perl_module.so
for need in "$nginx_bin" "$perl_mod" "$(command -v openssl || true)" "$(command -v curl || true)"; do
    if [[ -z $need || ! -e $need ]]; then
        echo "SKIP: nginx, libnginx-mod-http-perl, openssl and curl are needed (scripts/install-deps.sh)"
        exit 77
    fi
done

rm -rf "$work"
mkdir -p "$work"/{www/dav,bodies,logs,tmp,perl}
token=test-token-5f2a
fail() {
    echo "FAIL: $*" >&2
    echo "--- nginx access log" >&2
    cat "$work/logs/access.log" >&2 || true
    exit 1
}
stop_nginx() { [[ -f $work/nginx.pid ]] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true; }
trap stop_nginx EXIT

# ---- A test CA and a server certificate for 127.0.0.1 signed by it.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=xqforge test CA" \
    -keyout "$work/ca.key" -out "$work/ca.pem" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$work/server.key" \
    -out "$work/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' >"$work/san.ext"
openssl x509 -req -in "$work/server.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" \
    -CAcreateserial -days 2 -extfile "$work/san.ext" -out "$work/server.pem" 2>/dev/null

# ---- The POST sink: stores each body as bodies/<uri with _>-<n> (and its Content-Type).
cat >"$work/perl/Sink.pm" <<EOF
package Sink;
use nginx;
our \$seq = 0;
sub handler {
    my \$r = shift;
    return 405 unless \$r->request_method eq "POST";
    return OK if \$r->has_request_body(\&store);
    return 400;
}
sub store {
    my \$r = shift;
    my \$body = \$r->request_body;
    if (!defined \$body && defined \$r->request_body_file) {
        open(my \$in, '<', \$r->request_body_file) or return 500;
        binmode \$in; local \$/; \$body = <\$in>; close \$in;
    }
    \$body = '' unless defined \$body;
    \$seq++;
    (my \$name = \$r->uri) =~ s{[^A-Za-z0-9]}{_}g;
    my \$path = sprintf("$work/bodies/%s-%04d", \$name, \$seq);
    open(my \$out, '>', \$path) or return 500;
    binmode \$out; print \$out \$body; close \$out;
    open(my \$ct, '>', "\$path.type") or return 500;
    print \$ct (\$r->header_in("Content-Type") // ''); close \$ct;
    \$r->status(201);
    \$r->send_http_header("text/plain");
    \$r->print("stored\n");
    return OK;
}
1;
EOF

slow_body=$(printf 'x%.0s' $(seq 1000))
write_conf() { # $1: port, $2: TLS port, $3: the down port, or 0 while it is down
    local late=""
    [[ $3 != 0 ]] && late="server { listen 127.0.0.1:$3; include $work/locations.conf; }"
    cat >"$work/locations.conf" <<EOF
root $work/www;
if (\$auth_ok = 0) { return 401; }
location /sink/ { perl Sink::handler; }
location /flaky/ { if (\$flaky = 1) { return 503; } perl Sink::handler; }
location /limited/ {
    if (\$limited = 1) { add_header Retry-After 1 always; return 429; }
    perl Sink::handler;
}
location /held/ {
    if (\$held = 1) { add_header Retry-After 600 always; return 429; }
    perl Sink::handler;
}
# Hostile servers: 500 forever; a reply that stalls mid-body (1 byte a second).
location /broken/ { return 500; }
location /slow/ { limit_rate 1; return 200 "$slow_body"; }
location /dav/ {
    dav_methods PUT;
    create_full_put_path on;
    dav_access user:rw group:r all:r;
}
EOF
    cat >"$work/nginx.conf" <<EOF
load_module $perl_mod;
$([[ $(id -u) == 0 ]] && echo "user root;")
worker_processes 1;
pid $work/nginx.pid;
error_log $work/logs/error.log info;
events { worker_connections 64; }
http {
    client_body_temp_path $work/tmp/body;
    proxy_temp_path $work/tmp/proxy;
    fastcgi_temp_path $work/tmp/fastcgi;
    uwsgi_temp_path $work/tmp/uwsgi;
    scgi_temp_path $work/tmp/scgi;
    client_max_body_size 64m;
    client_body_buffer_size 64m;
    client_body_in_single_buffer on;
    perl_modules $work/perl;
    perl_require Sink.pm;
    # The first three requests to each /flaky/ URI fail, the first to each /limited/ URI.
    perl_set \$flaky 'sub { my \$r = shift; our %n; return ++\$n{\$r->uri} <= 3 ? "1" : "0"; }';
    perl_set \$limited 'sub { my \$r = shift; our %m; return ++\$m{\$r->uri} <= 1 ? "1" : "0"; }';
    perl_set \$held 'sub { my \$r = shift; our %h; return ++\$h{\$r->uri} <= 1 ? "1" : "0"; }';
    map \$http_authorization \$auth_ok { "Bearer $token" 1; default 0; }
    log_format up '\$msec \$server_port \$request_method \$uri \$status '
                  'key=\$http_idempotency_key auth=\$auth_ok bytes=\$request_length '
                  'authz="\$http_authorization"';
    access_log $work/logs/access.log up;
    server { listen 127.0.0.1:$1; include $work/locations.conf; }
    server {
        listen 127.0.0.1:$2 ssl;
        ssl_certificate $work/server.pem;
        ssl_certificate_key $work/server.key;
        include $work/locations.conf;
    }
    $late
}
EOF
}

ready() { # waits (bounded tries, no clock threshold) until the port answers HTTP
    for _ in $(seq 100); do
        curl -s -o /dev/null "http://127.0.0.1:$1/" && return 0
        sleep 0.05
    done
    return 1
}

started=0
for _ in $(seq 10); do
    port=$((20000 + RANDOM % 20000)) tls=$((40000 + RANDOM % 10000)) down=$((50000 + RANDOM % 10000))
    curl -s -o /dev/null "http://127.0.0.1:$down/" && continue # something listens there
    write_conf $port $tls 0
    : >"$work/logs/error.log"
    if "$nginx_bin" -c "$work/nginx.conf" -p "$work" 2>>"$work/logs/error.log" && ready $port; then
        started=1
        break
    fi
    stop_nginx
done
((started)) || fail "nginx did not start: $(tail -3 "$work/logs/error.log")"
echo "nginx on 127.0.0.1:$port (https $tls), port $down down"

base="http://127.0.0.1:$port"
# A short run of the default job; the report goes where the extra --set say.
run() { # NAME SET...
    local name=$1
    shift
    local sets=(--set job.kind=match --set job.rounds=2 --set job.concurrency=2
        --set output.dir="$work/$name" --set report.interval=3600 --set report.backoff=0.05
        --set report.final_wait=20)
    for s in "$@"; do sets+=(--set "$s"); done
    "$xq" run "$job" "${sets[@]}" >"$work/$name.out" 2>"$work/$name.log" ||
        fail "$name: the run failed: $(tail -5 "$work/$name.log")"
}
last_body() { ls "$work/bodies/$1"-???? 2>/dev/null | sort | tail -1; }
log_lines() { grep -c -- "$1" "$work/logs/access.log" || true; }

# 1. POST with the token to four URLs: a sink, 503 x3 then success, 429 + Retry-After, and
#    HTTPS with the test CA. Every body is report.json byte for byte.
XQ_REPORT_TOKEN=$token run post \
    "report.urls=$base/sink/post $base/flaky/post $base/limited/post https://127.0.0.1:$tls/sink/tls" \
    report.method=post report.token_env=XQ_REPORT_TOKEN report.ca_file="$work/ca.pem"
grep -q "Report upload: [0-9]* delivered" "$work/post.out" || fail "post: no upload summary"
grep -q "kept in" "$work/post.out" && fail "post: something was left in the spool"
for uri in sink_post flaky_post limited_post sink_tls; do
    b=$(last_body _$uri)
    [[ -n $b ]] || fail "post: nothing stored for /$uri"
    cmp -s "$b" "$work/post/report.json" || fail "post: /$uri body differs from report.json"
    grep -q '^application/json' "$b.type" || fail "post: /$uri Content-Type $(cat "$b.type")"
done
[[ $(log_lines " POST /flaky/post 503 ") == 3 ]] || fail "503 x3: not exactly three 503s"
# The three 503s and the success that follows carry the same Idempotency-Key.
key=$(grep " POST /flaky/post 503 " "$work/logs/access.log" | head -1 | sed 's/.*key=\([^ ]*\).*/\1/')
[[ $(grep -c "key=$key " <(grep " /flaky/post " "$work/logs/access.log")) == 4 ]] ||
    fail "503 x3: the retries did not keep their Idempotency-Key"
grep " /flaky/post " "$work/logs/access.log" | sed -n 4p | grep -q " 201 " ||
    fail "503 x3: the fourth attempt did not succeed"
[[ $(grep -c "HTTP 503.*retry in" "$work/post.log") == 3 ]] || fail "503 x3: our log shows no 3 retries"
# 429: one refusal, then a retry no sooner than the Retry-After second.
[[ $(log_lines " POST /limited/post 429 ") == 1 ]] || fail "429: not exactly one 429"
grep -q "HTTP 429.*retry in 1.00 s (Retry-After)" "$work/post.log" || fail "429: Retry-After not honoured"
t429=$(grep " POST /limited/post 429 " "$work/logs/access.log" | cut -d' ' -f1)
tnext=$(grep " POST /limited/post 201 " "$work/logs/access.log" | head -1 | cut -d' ' -f1)
awk -v a="$t429" -v b="$tnext" 'BEGIN { exit !(b - a >= 1.0) }' || fail "429: retried before Retry-After"
grep -q "auth=1" "$work/logs/access.log" || fail "the token did not arrive"
grep -q "$token" "$work/post.log" "$work/post.out" "$work/post/report.json" && fail "the token was logged"

# 2. PUT (WebDAV) with the token from a file: report.json, report.html and games.pgn.
printf '%s\n' "$token" >"$work/token"
chmod 600 "$work/token" # a token file others can read is refused
run put "report.urls=$base/dav/run-put/" report.method=put report.token_file="$work/token"
for f in report.json report.html games.pgn; do
    cmp -s "$work/www/dav/run-put/$f" "$work/put/$f" || fail "put: $f differs"
done

# 3. multipart: every file a part named after it, each part byte for byte.
XQ_REPORT_TOKEN=$token run multi "report.urls=$base/sink/multi" report.method=multipart \
    report.token_env=XQ_REPORT_TOKEN
b=$(last_body _sink_multi)
grep -q '^multipart/form-data' "$b.type" || fail "multipart: Content-Type $(cat "$b.type")"
for f in report.json report.html games.pgn; do
    perl -e '
        local $/; open(my $m, "<", $ARGV[0]) or die; binmode $m; my $body = <$m>;
        open(my $f, "<", $ARGV[1]) or die; binmode $f; my $want = <$f>;
        my $name = quotemeta($ARGV[2]);
        $body =~ /name="$name"[^\r\n]*\r\n(?:[^\r\n]+\r\n)*\r\n/g or exit 1;
        exit(substr($body, pos($body), length $want) eq $want ? 0 : 1);
    ' "$b" "$work/multi/$f" "$f" || fail "multipart: part $f differs"
done

# 4. A wrong token: 401, not retried, kept; `xqforge upload` with the right one delivers.
XQ_REPORT_TOKEN=wrong run noauth "report.urls=$base/sink/noauth" report.token_env=XQ_REPORT_TOKEN
grep -q "HTTP 401.*not retried" "$work/noauth.log" || fail "401: not reported as final"
n401=$(log_lines " POST /sink/noauth 401 ")
[[ $n401 -ge 1 && $n401 -le 2 ]] || fail "401: $n401 requests (expected one per report version)"
[[ $(ls "$work/noauth/spool" | wc -l) == 1 ]] || fail "401: the final report is not in the spool"
XQ_REPORT_TOKEN=$token "$xq" upload --spool "$work/noauth/spool" --url "$base/sink/noauth" \
    --token-env XQ_REPORT_TOKEN >"$work/noauth-upload.out" 2>"$work/noauth-upload.log" ||
    fail "401: upload --spool failed: $(cat "$work/noauth-upload.log")"
cmp -s "$(last_body _sink_noauth)" "$work/noauth/report.json" || fail "401: late delivery differs"
[[ -z $(ls "$work/noauth/spool") ]] || fail "401: the spool is not empty after delivery"

# 5. HTTPS without the CA (refused, not retried) and a server that is down (retried, then
#    kept): the run still succeeds; once the server is up, `upload --job` (the same job and
#    settings) delivers to it while the untrusted URL stays undelivered.
down_sets=(--set output.dir="$work/down" --set report.token_env=XQ_REPORT_TOKEN
    --set "report.urls=https://127.0.0.1:$tls/sink/notrust http://127.0.0.1:$down/sink/down")
XQ_REPORT_TOKEN=$token run down "report.urls=https://127.0.0.1:$tls/sink/notrust http://127.0.0.1:$down/sink/down" \
    report.token_env=XQ_REPORT_TOKEN report.attempts=2
grep -q "sink/notrust.*(TLS); not retried" "$work/down.log" || fail "TLS: not refused as TLS"
grep -q "sink/down.*giving up for now" "$work/down.log" || fail "down: no retries given up"
grep -q "kept in $work/down/spool" "$work/down.out" || fail "down: the run did not say what it kept"
[[ $(log_lines " /sink/notrust ") == 0 ]] || fail "TLS: a request got through without trust"
write_conf $port $tls $down
"$nginx_bin" -c "$work/nginx.conf" -p "$work" -s reload
ready $down || fail "the late server did not come up"
rc=0
XQ_REPORT_TOKEN=$token "$xq" upload --job "$job" "${down_sets[@]}" --backoff 0.05 \
    >"$work/down-upload.out" 2>"$work/down-upload.log" || rc=$?
[[ $rc == 1 ]] || fail "down: upload --job should report the untrusted URL as kept (rc $rc)"
cmp -s "$(last_body _sink_down)" "$work/down/report.json" || fail "down: late delivery differs"
grep -q '"delivered": \[' "$work/down/spool"/*/meta.json || fail "down: meta.json unreadable"
[[ $(tr -d ' \n' <"$work/down/spool"/*/meta.json | grep -Eo '"delivered":\[[^]]*\]') =~ ^'"delivered":["'[0-9a-f]{16}'"]'$ ]] ||
    fail "down: the delivered URL is not recorded (once)"
# Delivered once: a second pass sends nothing more there.
n_down=$(log_lines " /sink/down ")
rc=0
XQ_REPORT_TOKEN=$token "$xq" upload --job "$job" "${down_sets[@]}" --attempts 1 \
    >"$work/down-upload2.out" 2>"$work/down-upload2.log" || rc=$?
[[ $rc == 1 && $(log_lines " /sink/down ") == "$n_down" ]] || fail "down: delivered twice (rc $rc)"

# 6. Hostile servers: 500 forever, a reply stalling mid-body, and a port answering garbage
#    (not HTTP). The run still ends (well inside a hang guard), says what it kept, and
#    every report waits in the spool.
garbage=$((30000 + RANDOM % 10000))
perl -MIO::Socket::INET -e '
    my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $ARGV[0],
                                  Listen => 5, ReuseAddr => 1) or die "listen: $!";
    while (my $c = $s->accept) { print $c "\x00\xffgarbage, not HTTP\r\n\r\n" x 50; close $c; }
' "$garbage" &
garbage_pid=$!
for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$garbage") 2>/dev/null && break
    sleep 0.05
done
rc=0
XQ_REPORT_TOKEN=$token timeout 300 "$xq" run "$job" --set job.kind=match --set job.rounds=2 \
    --set job.concurrency=2 --set output.dir="$work/hostile" --set report.interval=3600 \
    --set report.backoff=0.05 --set report.final_wait=20 --set report.timeout=2 \
    --set report.attempts=3 --set report.token_env=XQ_REPORT_TOKEN \
    --set "report.urls=$base/broken/post $base/slow/post http://127.0.0.1:$garbage/x" \
    >"$work/hostile.out" 2>"$work/hostile.log" || rc=$?
kill "$garbage_pid" 2>/dev/null || true
wait "$garbage_pid" 2>/dev/null || true
[[ $rc == 0 ]] || fail "hostile: the run failed or hung (rc $rc): $(tail -5 "$work/hostile.log")"
grep -q "broken/post.*HTTP 500" "$work/hostile.log" || fail "hostile: 500 not reported"
grep -q "slow/post.*" "$work/hostile.log" || fail "hostile: the stalled reply not reported"
grep -q "127.0.0.1:$garbage/x" "$work/hostile.log" || fail "hostile: the garbage server not reported"
grep -q "kept in $work/hostile/spool" "$work/hostile.out" || fail "hostile: nothing said kept"
ls "$work/hostile/spool"/*/meta.json >/dev/null 2>&1 || fail "hostile: nothing spooled"
[[ $(log_lines " /broken/post 500") -ge 2 ]] || fail "hostile: 500 was not retried"
echo "--- hostile servers (500 forever, stalled reply, garbage): our log"
grep -E "broken|slow|$garbage" "$work/hostile.log" | head -12

# 7. Retry-After of ten minutes: capped at the job's backoff_max (said in the log), so the
#    report arrives within seconds.
XQ_REPORT_TOKEN=$token run held "report.urls=$base/held/post" report.token_env=XQ_REPORT_TOKEN \
    report.backoff_max=2
grep -q "held/post.*HTTP 429.*retry in 2.00 s (Retry-After 600 s, capped at 2 s)" "$work/held.log" ||
    fail "Retry-After 600: not capped: $(grep held "$work/held.log" | head -3)"
t429=$(grep " POST /held/post 429 " "$work/logs/access.log" | cut -d' ' -f1)
tnext=$(grep " POST /held/post 201 " "$work/logs/access.log" | head -1 | cut -d' ' -f1)
[[ -n $t429 && -n $tnext ]] || fail "Retry-After 600: no 429 then 201"
awk -v a="$t429" -v b="$tnext" 'BEGIN { exit !(b - a >= 2.0 && b - a < 15) }' ||
    fail "Retry-After 600: the retry came $t429 -> $tnext"

# 8. Planted entries: a spool entry naming a URL and a token source of an attacker's choosing
#    (the variable of a secret, or a credentials file) sends nothing to that URL, and the
#    secret never leaves, from `xqforge upload` and from a run's start-up pass; the entries
#    are reported and stay as they are.
secret=planted-secret-9c1e
printf 'aws_secret_access_key=%s\n' "$secret" >"$work/credentials"
chmod 600 "$work/credentials"
plant() { # SPOOL NAME TOKEN_ENV TOKEN_FILE: an entry in the format that named its target
    mkdir -p "$1/$2"
    chmod 700 "$1" "$1/$2"
    printf '{"a": 1}\n' >"$1/$2/report.json"
    cat >"$1/$2/meta.json" <<EOF
{"method": "post", "urls": ["$base/sink/planted", "https://127.0.0.1:$tls/sink/planted"],
 "delivered": [false, false], "token_env": "$3", "token_file": "$4", "ca_file": "$work/ca.pem",
 "connect_timeout": 5,
 "timeout": 10, "run_id": "planted", "version": 1, "final": true, "idempotency_key": "k",
 "files": ["report.json"]}
EOF
}
plant_both() { # SPOOL
    plant "$1" 0000000000001-planted-00000001-f XQ_PLANTED_SECRET ""
    plant "$1" 0000000000002-planted-00000002-f "" "$work/credentials"
}
check_planted() { # WHAT SPOOL LOG
    [[ $(log_lines " /sink/planted") == 0 ]] || fail "$1: a planted entry was sent to its URL"
    grep -q "$secret" "$work/logs/access.log" && fail "$1: the planted secret left"
    [[ $(grep -c "planted-0000000[12]-f: not trusted, left in place and not sent: meta.json names 'urls'" "$3") == 2 ]] ||
        fail "$1: the planted entries were not reported: $(grep planted "$3" | head -3)"
    for n in 1 2; do
        cmp -s <(printf '{"a": 1}\n') "$2/000000000000$n-planted-0000000$n-f/report.json" &&
            grep -q '"urls"' "$2/000000000000$n-planted-0000000$n-f/meta.json" ||
            fail "$1: planted entry $n was removed or changed"
    done
}
plant_both "$work/planted"
rc=0
XQ_PLANTED_SECRET=$secret XQ_REPORT_TOKEN=$token "$xq" upload --spool "$work/planted" \
    --url "$base/sink/ours" --token-env XQ_REPORT_TOKEN >"$work/planted.out" 2>"$work/planted.log" ||
    rc=$?
[[ $rc == 1 ]] || fail "planted: upload exited $rc: $(cat "$work/planted.log")"
check_planted "planted, xqforge upload" "$work/planted" "$work/planted.log"
grep -q "2 not trusted" "$work/planted.out" || fail "planted: the summary does not count them"
[[ $(log_lines " /sink/ours ") == 0 ]] || fail "planted: a planted report went to our URL"
# A run's start-up pass over the same entries: they stay; the run's own reports go out.
mkdir -p "$work/startup"
plant_both "$work/startup/spool"
XQ_PLANTED_SECRET=$secret XQ_REPORT_TOKEN=$token run startup "report.urls=$base/sink/startup" \
    report.token_env=XQ_REPORT_TOKEN
check_planted "planted, a run's start-up pass" "$work/startup/spool" "$work/startup.log"
cmp -s "$(last_body _sink_startup)" "$work/startup/report.json" || fail "startup: our report differs"
grep -q "2 not trusted" "$work/startup.out" || fail "startup: the summary does not count them"
[[ $(ls "$work/startup/spool" | wc -l) == 2 ]] || fail "startup: the spool holds more than the planted"

# 9. A tampered entry (its report changed after spooling) is not sent; a spool that group can
#    write is refused with its mode and owner named, and nothing is sent from it.
entry=$(ls -d "$work/down/spool"/*-f)
printf '{"forged": true}\n' >"$entry/report.json"
rc=0
"$xq" upload --spool "$work/down/spool" --url "$base/sink/tampered" >"$work/tampered.out" \
    2>"$work/tampered.log" || rc=$?
[[ $rc == 1 && $(log_lines " /sink/tampered ") == 0 ]] || fail "tampered: sent (rc $rc)"
grep -q "not trusted.*report.json is not the file spooled" "$work/tampered.log" ||
    fail "tampered: not reported: $(cat "$work/tampered.log")"
[[ -d $entry ]] || fail "tampered: the entry was removed"
chmod 770 "$work/planted"
rc=0
XQ_PLANTED_SECRET=$secret "$xq" upload --spool "$work/planted" --url "$base/sink/ours" \
    >"$work/writable.out" 2>"$work/writable.log" || rc=$?
[[ $rc == 1 ]] || fail "group-writable spool: exit $rc"
grep -q "spool $work/planted is refused: mode 0770, owner .*(uid $(id -u))" "$work/writable.log" ||
    fail "group-writable spool: mode and owner not named: $(cat "$work/writable.log")"
[[ $(log_lines " /sink/ours ") == 0 ]] || fail "group-writable spool: something was sent"
rc=0
XQ_REPORT_TOKEN=$token "$xq" run "$job" --set output.dir="$work/writable-run" \
    --set "report.urls=$base/sink/writable" --set report.spool="$work/planted" \
    --set job.kind=match --set job.rounds=1 >"$work/writable-run.out" 2>"$work/writable-run.log" ||
    rc=$?
[[ $rc == 0 ]] || fail "group-writable spool: the run failed: $(tail -3 "$work/writable-run.log")"
grep -q "report upload off: spool $work/planted is refused: mode 0770" "$work/writable-run.log" ||
    fail "group-writable spool: the run did not refuse it"
[[ $(log_lines " /sink/writable ") == 0 && $(log_lines " /sink/planted") == 0 ]] ||
    fail "group-writable spool: the run sent something"

# 10. Credentials in a URL are refused: in the job (its [report] urls) and on upload's
#     command line, where the password is not repeated.
rc=0
"$xq" run "$job" --set output.dir="$work/creds" \
    --set "report.urls=http://alice:pw-zq7@127.0.0.1:$port/sink/creds" >"$work/creds.out" \
    2>"$work/creds.log" || rc=$?
[[ $rc == 2 ]] || fail "credentials in a job URL: exit $rc"
grep -q "\[report\] urls: 'http://...@127.0.0.1:$port/sink/creds' has credentials in it" \
    "$work/creds.log" || fail "credentials in a job URL: $(cat "$work/creds.log")"
rc=0
"$xq" upload --spool "$work/startup/spool" --url "http://alice:pw-zq7@127.0.0.1:$port/sink/creds" \
    >"$work/creds-upload.out" 2>"$work/creds-upload.log" || rc=$?
[[ $rc == 2 ]] || fail "credentials in an upload URL: exit $rc"
grep -q "has credentials in it" "$work/creds-upload.log" || fail "upload: credentials not refused"
grep -q "pw-zq7" "$work/creds-upload.log" && fail "upload: the password was repeated"
[[ $(log_lines " /sink/creds ") == 0 ]] || fail "credentials: something was sent"

echo "--- our log, 503 x3 then success"
grep "flaky" "$work/post.log"
echo "--- nginx, the same"
grep " /flaky/post " "$work/logs/access.log"
echo "report_nginx: all scenarios passed"
