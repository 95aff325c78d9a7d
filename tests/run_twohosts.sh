#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two hosts for real: two network namespaces on this machine, each a "node" with its own
# address on a virtual Ethernet link, and one mpirun across them from a hostfile. Open MPI
# starts its daemon on the second node through an rsh agent that enters that namespace (as
# ssh would log in), and every message between the nodes goes over TCP (btl tcp,self: no
# shared memory). Mid-run the whole second node dies (SIGKILL to every process in its
# namespace); the job is then run again with --resume and must end with exactly the totals of
# an uninterrupted run of the same job on one host. Needs root and iproute2: skipped (77)
# otherwise.
set -u
xq=$(readlink -f "$1") job=$(readlink -f "$2")
fail() { echo "FAIL: $*"; echo "0 passed, 1 failed"; exit 1; }
# ip netns makes /run/netns a mount point; if it was not one before, it is undone at the end
# (a chroot that is deleted afterwards must not keep a mount).
netns_mounted=$(grep -c " /run/netns " /proc/mounts)
unmount_netns() {
    [[ $netns_mounted == 0 && -z $(ls /run/netns 2>/dev/null) ]] && umount /run/netns 2>/dev/null
}
# nsenter, not ip netns exec: the latter remounts / and /sys, which fails in a chroot.
if [[ $(id -u) != 0 ]] || ! command -v ip >/dev/null || ! ip netns add xqforge-probe 2>/dev/null ||
    ! nsenter --net=/run/netns/xqforge-probe true; then
    ip netns del xqforge-probe 2>/dev/null
    unmount_netns
    echo "SKIP: needs root, iproute2 and network namespaces"
    exit 77
fi
ip netns del xqforge-probe
tag=xq$$ # unique names, so parallel runs of the suite do not collide
nsa=$tag-a nsb=$tag-b
net=10.$((RANDOM % 200 + 20)).$((RANDOM % 250)).
ha=${net}1 hb=${net}2
work=$(mktemp -d)
cleanup() {
    for ns in $nsa $nsb; do
        pids=$(ip netns pids "$ns" 2>/dev/null)
        [[ -n $pids ]] && kill -KILL $pids 2>/dev/null
        ip netns del "$ns" 2>/dev/null
    done
    rm -rf "$work"
    unmount_netns
}
trap cleanup EXIT
[[ ${XQ_KEEP:-} ]] && trap - EXIT

ip netns add "$nsa" && ip netns add "$nsb" || fail "cannot create the namespaces"
ip link add "$tag-0" type veth peer name "$tag-1" || fail "cannot create the veth pair"
ip link set "$tag-0" netns "$nsa" && ip link set "$tag-1" netns "$nsb"
on_node() { local ns=$1; shift; nsenter --net=/run/netns/"$ns" "$@"; } # on_node NAMESPACE COMMAND...
on_node "$nsa" ip addr add "$ha/24" dev "$tag-0" && on_node "$nsb" ip addr add "$hb/24" dev "$tag-1"
for ns in $nsa $nsb; do on_node "$ns" ip link set lo up; done
on_node "$nsa" ip link set "$tag-0" up && on_node "$nsb" ip link set "$tag-1" up || fail "cannot bring the link up"

# The "ssh" of this cluster: Open MPI calls it as AGENT [options] HOST COMMAND...
cat >"$work/netns-rsh" <<EOF
#!/bin/sh
while [ "\${1#-}" != "\$1" ]; do shift; done
host=\$1; shift
case \$host in
$ha) ns=$nsa ;;
$hb) ns=$nsb ;;
*) echo "netns-rsh: unknown host \$host" >&2; exit 255 ;;
esac
# Its own host name too, as a real node has (the workers report it).
exec nsenter --net=/run/netns/\$ns unshare --uts /bin/sh -c "hostname \$ns; \$*"
EOF
chmod +x "$work/netns-rsh"
printf '%s slots=2\n%s slots=2\n' "$ha" "$hb" >"$work/hosts"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Rank 0 and one worker on node a, two workers on node b.
mpi=(nsenter --net=/run/netns/"$nsa" mpirun --hostfile "$work/hosts" -np 4 --map-by slot --bind-to none
    --mca plm_rsh_agent "$work/netns-rsh" --mca btl tcp,self
    --mca btl_tcp_if_include "${net}0/24" --mca oob_tcp_if_include "${net}0/24"
    -x PATH -x LD_LIBRARY_PATH)
sets=(--set job.kind=match --set job.rounds=30 --set job.concurrency=1)

mpirun --oversubscribe --bind-to none -np 3 "$xq" run "$job" "${sets[@]}" \
    --set output.dir="$work/a" >"$work/a.log" 2>&1 || fail "one-host run failed: $(tail -5 "$work/a.log")"
want=$(grep -E '^(Games|Ptnml)' "$work/a.log")
[[ -n $want ]] || fail "no summary in the one-host run"

# Across the two nodes; node b dies once enough results are journaled.
"${mpi[@]}" "$xq" run "$job" "${sets[@]}" --set output.dir="$work/b" >"$work/b1.log" 2>&1 &
pid=$!
for _ in $(seq 2400); do
    [[ -s $work/b/journal.xqj ]] && [[ $(stat -c %s "$work/b/journal.xqj") -gt 3000 ]] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.05
done
grep -q "^rank [0-9]* on $nsb joined" "$work/b1.log" || fail "no worker joined from node b: $(head -5 "$work/b1.log")"
bpids=$(ip netns pids "$nsb")
[[ -n $bpids ]] || fail "no process ran on node b: $(tail -5 "$work/b1.log")"
kill -KILL $bpids
timeout 60 tail --pid=$pid -f /dev/null || { kill -KILL $pid; fail "mpirun did not end after node b died"; }
wait $pid && fail "the run went on as if node b were alive"
games=$(grep -c '^\[Result ' "$work/b/games.pgn" 2>/dev/null || echo 0)
[[ $games -lt 60 ]] || fail "node b died after the end of the run ($games games): nothing tested"

# Resume on the two nodes again (node b came back).
"${mpi[@]}" "$xq" run "$job" "${sets[@]}" --set output.dir="$work/b" --resume >"$work/b2.log" 2>&1 ||
    fail "resumed run failed: $(tail -5 "$work/b2.log")"
grep -q Resuming "$work/b2.log" || fail "the second run did not resume the journal"
got=$(grep -E '^(Games|Ptnml)' "$work/b2.log")
[[ $got == "$want" ]] || fail "totals after the node's death differ: want '$want' got '$got'"
[[ $(grep -c '^\[Result ' "$work/b/games.pgn") == 60 ]] || fail "the PGN does not hold 60 games"
echo "two nodes ($ha, $hb) over TCP; node b killed after $games games; $(grep Resuming "$work/b2.log")"
grep -q "^rank [0-9]* on $nsb joined" "$work/b2.log" || fail "no worker of node b in the resumed run"
grep "^rank [0-9]* on" "$work/b2.log"
echo "1 passed, 0 failed"
