#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The fleet's page uploaded as QUEUE/fleet.ini's [report] says, to a real nginx that this
# script starts on 127.0.0.1 (a random port): WebDAV PUT behind a bearer-token check. A
# one-rank fleet over two tiny tests; then the uploaded index.json is the queue's own, byte
# for byte (the final version), index.html arrived, and every request carried the token.
# Then fleet.ini's [report] refused with its line and key (exit 2, as a refused queue): an
# unknown key, a bad method, a URL with credentials, a file others can write.
# usage: fleet_upload.sh XQFORGE JOBS WORKDIR. Exit 77 (skip) only when nginx or curl is missing.
set -euo pipefail
xq=$1
jobs=$2
work=$3
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
if [[ ! -x $nginx_bin || -z $(command -v curl || true) ]]; then
    echo "SKIP: nginx and curl are needed (scripts/install-deps.sh)"
    exit 77
fi
rm -rf "$work"
mkdir -p "$work"/{www,logs,tmp}
token=fleet-token-9c1e
fail() {
    echo "FAIL: $*" >&2
    cat "$work/logs/access.log" >&2 2>/dev/null || true
    exit 1
}
stop_nginx() { [[ -f $work/nginx.pid ]] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true; }
trap stop_nginx EXIT

write_conf() { # $1: port
    cat >"$work/nginx.conf" <<CONF
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
    map \$http_authorization \$auth_ok { "Bearer $token" 1; default 0; }
    log_format up '\$server_port \$request_method \$uri \$status auth=\$auth_ok';
    access_log $work/logs/access.log up;
    server {
        listen 127.0.0.1:$1;
        root $work/www;
        if (\$auth_ok = 0) { return 401; }
        location /dav/ {
            dav_methods PUT;
            create_full_put_path on;
        }
    }
}
CONF
}
started=0
for _ in $(seq 10); do
    port=$((20000 + RANDOM % 30000))
    write_conf $port
    if "$nginx_bin" -c "$work/nginx.conf" -p "$work" 2>>"$work/logs/error.log"; then
        for _ in $(seq 100); do
            curl -s -o /dev/null "http://127.0.0.1:$port/" && started=1 && break
            sleep 0.05
        done
        ((started)) && break
    fi
    stop_nginx
done
((started)) || fail "nginx did not start: $(tail -3 "$work/logs/error.log")"

# ---- A queue of two tiny tests, its page uploaded by PUT with the token.
q=$work/q
for _ in 1 2; do
    "$xq" submit "$q" "$jobs/sprt-weights.ini" --set job.rounds=2 >/dev/null ||
        fail "submit failed"
done
cat >"$q/fleet.ini" <<INI
[report]
urls = http://127.0.0.1:$port/dav/fleet
method = put
token_env = XQ_FLEET_TOKEN
interval = 1
backoff = 0.05
final_wait = 20
INI
chmod 600 "$q/fleet.ini"
XQ_FLEET_TOKEN=$token "$xq" fleet "$q" --until-empty >"$work/fleet.out" 2>"$work/fleet.log" ||
    fail "the fleet failed: $(tail -5 "$work/fleet.log")"
grep -q "page upload: [1-9][0-9]* delivered" "$work/fleet.out" ||
    fail "no upload summary: $(tail -3 "$work/fleet.out")"
grep -q "kept in" "$work/fleet.out" && fail "something was left in the spool"
[[ $(stat -c %a "$q/spool") == 700 ]] || fail "the spool is not 0700"
cmp -s "$work/www/dav/fleet/index.json" "$q/index.json" ||
    fail "the uploaded index.json is not the queue's"
cmp -s "$work/www/dav/fleet/index.html" "$q/index.html" ||
    fail "the uploaded index.html is not the queue's"
[[ $(grep -c '"state": "finished"' "$work/www/dav/fleet/index.json") == 2 ]] ||
    fail "the uploaded page does not show both tests finished"
# Every request had the token; the page went up more than once (tests started and ended).
grep " PUT " "$work/logs/access.log" | grep -q " auth=0" && fail "a PUT without the token"
puts=$(grep -c " PUT /dav/fleet/index.json 20[14] " "$work/logs/access.log" || true)
((puts >= 3)) || fail "index.json was put $puts times (at least 3 expected)"
echo "ok: the fleet's page uploaded ($puts versions of index.json)"

# ---- fleet.ini's [report] refused: the file, the line and the key named; exit 2.
refused() { # EXPECTED-TEXT, fleet.ini's lines on stdin
    cat >"$q/fleet.ini"
    chmod 600 "$q/fleet.ini"
    local rc=0
    "$xq" fleet "$q" --until-empty >"$work/bad.out" 2>"$work/bad.log" || rc=$?
    [[ $rc == 2 ]] || fail "fleet.ini '$1': exit $rc, not 2"
    grep -qF -- "$q/fleet.ini is refused: $1" "$work/bad.log" ||
        fail "fleet.ini: expected '$1', got: $(cat "$work/bad.log")"
}
printf '[report]\nurls = http://127.0.0.1:%s/dav/x\nspool = elsewhere\n' $port |
    refused "line 3: [report] spool: unknown key"
printf '[report]\nmethod = get\n' | refused "line 2: [report] method: 'get' is not one of post"
printf '[report]\nurls = http://user:pw@127.0.0.1:%s/dav/x\n' $port |
    refused "line 2: [report] urls: "
grep -q "credentials" "$work/bad.log" || fail "a URL with credentials: $(cat "$work/bad.log")"
grep -q "pw@" "$work/bad.log" && fail "the credentials were repeated: $(cat "$work/bad.log")"
printf '[report]\nurls = http://127.0.0.1:%s/dav/x\n' $port >"$q/fleet.ini"
chmod 664 "$q/fleet.ini"
rc=0
"$xq" fleet "$q" --until-empty >"$work/bad.out" 2>"$work/bad.log" || rc=$?
[[ $rc == 2 ]] && grep -q "fleet.ini is refused: it must be the queue owner's" "$work/bad.log" ||
    fail "a fleet.ini others can write: exit $rc: $(cat "$work/bad.log")"
echo "ok: a bad fleet.ini [report] is refused with its line and key"
