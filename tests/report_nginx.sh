#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Report delivery against a real nginx that this script starts on 127.0.0.1 (random ports):
# a perl POST sink that stores each body, WebDAV PUT, a location that answers 503 three
# times, one that answers 429 with Retry-After once, a bearer-token check (401), an HTTPS
# server with a test CA, a port that is down until the end, and hostile servers (500
# forever, a reply that stalls, a port answering garbage). Each run of the default
# job (shortened) or `xqforge upload --spool` is then checked against what nginx stored and
# logged. usage: report_nginx.sh XQFORGE WORKDIR. Exit 77 (skip) only when nginx, its perl
# module, openssl or curl is missing.
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
    map \$http_authorization \$auth_ok { "Bearer $token" 1; default 0; }
    log_format up '\$msec \$server_port \$request_method \$uri \$status '
                  'key=\$http_idempotency_key auth=\$auth_ok bytes=\$request_length';
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
XQ_REPORT_TOKEN=$token "$xq" upload --spool "$work/noauth/spool" >"$work/noauth-upload.out" \
    2>"$work/noauth-upload.log" || fail "401: upload --spool failed: $(cat "$work/noauth-upload.log")"
cmp -s "$(last_body _sink_noauth)" "$work/noauth/report.json" || fail "401: late delivery differs"
[[ -z $(ls "$work/noauth/spool") ]] || fail "401: the spool is not empty after delivery"

# 5. HTTPS without the CA (refused, not retried) and a server that is down (retried, then
#    kept): the run still succeeds; once the server is up, upload --spool delivers to it
#    while the untrusted URL stays undelivered.
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
XQ_REPORT_TOKEN=$token "$xq" upload --spool "$work/down/spool" --backoff 0.05 >"$work/down-upload.out" \
    2>"$work/down-upload.log" || rc=$?
[[ $rc == 1 ]] || fail "down: upload --spool should report the untrusted URL as kept (rc $rc)"
cmp -s "$(last_body _sink_down)" "$work/down/report.json" || fail "down: late delivery differs"
grep -q '"delivered": \[' "$work/down/spool"/*/meta.json || fail "down: meta.json unreadable"
[[ $(tr -d ' \n' <"$work/down/spool"/*/meta.json | grep -o '"delivered":\[[a-z,]*\]') == '"delivered":[false,true]' ]] ||
    fail "down: the delivered URL is not recorded"

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

echo "--- our log, 503 x3 then success"
grep "flaky" "$work/post.log"
echo "--- nginx, the same"
grep " /flaky/post " "$work/logs/access.log"
echo "report_nginx: all scenarios passed"
