#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Slurm as users run it: a one-node cluster (Debian's munged, slurmctld and slurmd, configured
# and started here as root, every file in a temporary directory) runs jobs/slurm.sbatch with a
# small match (two ranks, rank 0 playing too); once some pairs are journaled the job is
# requeued (scontrol requeue: SIGTERM to every task, then the job back in the queue); it drains
# (exit 130), starts again by itself and continues its journal (resume = auto, the same sbatch
# command); part way again it gets SIGUSR1 (Slurm's time-limit warning), drains and requeues
# itself; it must end with the totals (games, W/L/D, pentanomial) of an uninterrupted run.
# Then jobs/slurm-array.sbatch runs two job files as an array, each in its own directory.
# Skipped (77) when not root or when the Slurm or munge programs are missing. Every daemon
# and job process started here is ended on exit, failed or not.
set -u
xq=$(realpath "$1") src=$(realpath "$2")
skip() {
    echo "SKIP: $*"
    exit 77
}
[[ $(id -u) == 0 ]] || skip "needs root (it starts munged, slurmctld and slurmd)"
for p in munged slurmctld slurmd sbatch scontrol sinfo squeue srun jq; do
    command -v "$p" >/dev/null || skip "$p missing (scripts/install-deps.sh installs it)"
done
work=$(mktemp -d /tmp/xq-slurm-XXXXXX)
chmod 755 "$work"
export SLURM_CONF=$work/slurm.conf
daemons=()
stepd_before=" $(pgrep -x slurmstepd | tr '\n' ' ') "
fail() {
    echo "FAIL: $*"
    for f in "$work"/job-*.log "$work"/log/slurmctld.log "$work"/log/slurmd.log; do
        [[ -f $f ]] && echo "--- $f" && tail -n 25 "$f"
    done
    echo "0 passed, 1 failed"
    exit 1
}
cleanup() {
    [[ -n ${jobid:-} ]] && scancel "$jobid" 2>/dev/null
    for _ in $(seq 40); do # the job's processes end with it (bounded wait)
        pgrep -f "output.dir=$work/" >/dev/null || break
        sleep 0.25
    done
    for p in $(pgrep -f "output.dir=$work/"); do kill -KILL "$p" 2>/dev/null; done
    for p in $(pgrep -x slurmstepd); do # only the step daemons of this test's jobs
        [[ $stepd_before == *" $p "* ]] || kill -KILL "$p" 2>/dev/null
    done
    for p in "${daemons[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for p in "${daemons[@]}"; do
        for _ in $(seq 40); do
            kill -0 "$p" 2>/dev/null || break
            sleep 0.25
        done
        kill -KILL "$p" 2>/dev/null
    done
    rm -rf "$work"
}
trap cleanup EXIT

# munge: its own key and socket, nothing of the system's touched.
mkdir -m 711 "$work/munge"
mkdir "$work/log" "$work/state" "$work/spool"
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
munged -F -f --key-file="$work/munge/munge.key" --socket="$work/munge/sock" \
    --pid-file="$work/munge/pid" --log-file="$work/munge/log" --seed-file="$work/munge/seed" \
    >"$work/log/munged.out" 2>&1 &
daemons+=($!)

host=$(hostname -s)
port=$((20000 + $$ % 20000))
cpus=$(nproc)
((cpus < 2)) && cpus=2
cat >"$SLURM_CONF" <<EOF
ClusterName=xqtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge/sock,cred_expire=10
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
JobRequeue=1
ReturnToService=2
KillWait=30
SchedulerType=sched/backfill
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
# Unless cgroup v2 is mounted (autodetected), cgroup/v1 named: Slurm's autodetection fails on
# a bare root (a chroot with a fresh /sys and no cgroup file system), and with
# proctrack/linuxproc and task/none nothing is mounted or used.
[[ $(stat -fc %T /sys/fs/cgroup 2>/dev/null) == cgroup2fs ]] ||
    echo "CgroupPlugin=cgroup/v1" >"$work/cgroup.conf"
for _ in $(seq 100); do
    [[ -S $work/munge/sock ]] && break
    sleep 0.1
done
[[ -S $work/munge/sock ]] || fail "munged did not start: $(cat "$work/munge/log" 2>/dev/null)"
slurmctld -D -c -f "$SLURM_CONF" >"$work/log/ctld.out" 2>&1 &
daemons+=($!)
slurmd -D -f "$SLURM_CONF" >"$work/log/d.out" 2>&1 &
daemons+=($!)
for _ in $(seq 120); do
    [[ $(sinfo -h -o %t 2>/dev/null) == idle ]] && break
    sleep 0.5
done
[[ $(sinfo -h -o %t 2>/dev/null) == idle ]] || fail "the node is not idle: $(sinfo 2>&1)"

job=$src/tests/data/slurm.ini
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
# The uninterrupted run: one process, the same job.
"$xq" run "$job" --set job.concurrency=1 --set output.dir="$work/a" >"$work/a.log" 2>&1 ||
    fail "uninterrupted run failed: $(tail -5 "$work/a.log")"
totals() { jq -c '[.games, .wins, .losses, .draws, .ptnml, .pairs_done]' "$1"; }
want=$(totals "$work/a/result.json")

# The sbatch script as users run it; the test's allocation: two tasks of one CPU on one node.
jobid=$(cd "$work" && XQFORGE=$xq sbatch --parsable --nodes=1 --ntasks-per-node=2 \
    --cpus-per-task=1 --time=10 --output="$work/job-%j.log" \
    "$src/jobs/slurm.sbatch" "$job" --set output.dir="$work/b") || fail "sbatch refused the job"
jobid=${jobid%%;*}
state() { scontrol show job "$jobid" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
restarts() { scontrol show job "$jobid" 2>/dev/null | sed -n 's/.*Restarts=\([0-9]*\).*/\1/p'; }
journal_size() { stat -c %s "$work/b/journal.xqj" 2>/dev/null || echo 0; }
# Waits until the job runs its START-th start (counted from 0) with more than BYTES journaled.
running_past() {
    for _ in $(seq 1500); do
        [[ $(state) == RUNNING && $(restarts) == "$1" && $(journal_size) -gt $2 ]] && return 0
        [[ $(state) =~ ^(COMPLETED|FAILED|CANCELLED|TIMEOUT)$ ]] && return 1
        sleep 0.1
    done
    return 1
}
# Waits until the job is back in the queue after its START-th start.
requeued() {
    for _ in $(seq 900); do
        [[ $(restarts) == "$1" && $(state) == PENDING ]] && return 0
        sleep 0.1
    done
    return 1
}
running_past 0 2000 || fail "the job is not running part way: $(state)"
# An administrator's requeue: SIGTERM to every task, the job back in the queue by Slurm.
scontrol requeue "$jobid" || fail "scontrol requeue refused"
requeued 1 || fail "the job did not go back in the queue: $(state)"
# The time-limit warning (what --signal=USR1@120 sends): the script requeues the job itself.
running_past 1 $(($(journal_size) + 3000)) || fail "the requeued job is not running part way: $(state)"
scancel --signal=USR1 "$jobid" || fail "scancel --signal=USR1 refused"
requeued 2 || fail "the job did not requeue itself after SIGUSR1: $(state)"
for _ in $(seq 900); do
    [[ $(state) =~ ^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL)$ ]] && break
    sleep 0.2
done
[[ $(state) == COMPLETED ]] || fail "the requeued job did not complete: $(state)"
log=$work/job-$jobid.log
[[ $(restarts) == 2 ]] || fail "the job was not requeued twice (Restarts=$(restarts))"
[[ $(grep -c "^Interrupted: no new units" "$log") == 2 ]] || fail "the requeues did not drain the run"
[[ $(grep -c "^Drained: .* dropped (played on resume)" "$log") == 2 ]] || fail "no account of the drains"
grep -q "^== drained; requeueing job $jobid" "$log" || fail "the script did not requeue after SIGUSR1"
[[ $(grep -c "resume = auto: continuing the journal" "$log") == 2 ]] ||
    fail "the requeued job did not resume twice"
grep -q "^rank 0 on .* joined" "$log" || fail "rank 0 did not play"
grep -q "^rank 1 on .* joined" "$log" || fail "rank 1 did not play"
got=$(totals "$work/b/result.json")
[[ $got == "$want" ]] || fail "totals after a requeue: want $want, got $got"

# Independent tests as a job array: task i runs the i-th job file in its own directory.
first=$jobid
sed 's/^rounds = 20/rounds = 1/' "$job" >"$work/one.ini"
sed 's/^rounds = 20/rounds = 2/' "$job" >"$work/two.ini"
# Submitted as from another directory, with no XQFORGE and no --cpus-per-task: the script
# finds build/xqforge beside its own jobs/ (a checkout laid out here: the script copied, the
# binary linked) and takes the CPUs from the allocation (--exclusive: the whole node).
mkdir -p "$work/checkout/jobs" "$work/checkout/build" "$work/elsewhere"
cp "$src/jobs/slurm-array.sbatch" "$work/checkout/jobs/"
ln -s "$xq" "$work/checkout/build/xqforge"
arr=$(cd "$work/elsewhere" && env -u XQFORGE XQ_ARRAY_DIR=$work/arr sbatch --parsable \
    --array=0-1 --time=10 --output="$work/job-%A_%a.log" \
    "$work/checkout/jobs/slurm-array.sbatch" "$work/one.ini" "$work/two.ini") ||
    fail "sbatch refused the array"
jobid=${arr%%;*}
for _ in $(seq 900); do
    [[ -z $(squeue -h -j "$jobid" 2>/dev/null) ]] && break
    sleep 0.2
done
[[ -z $(squeue -h -j "$jobid" 2>/dev/null) ]] || fail "the array did not end"
for t in one:2 two:4; do
    n=$(jq .games "$work/arr/${t%%:*}/result.json" 2>/dev/null)
    [[ $n == "${t##*:}" ]] || fail "array task ${t%%:*}: $n games, ${t##*:} expected"
done
grep -q "$cpus CPUs a task, $work/checkout/jobs/../build/xqforge" "$work/job-${jobid}_0.log" ||
    fail "the array task did not find the checkout's binary or the node's $cpus CPUs: $(head -2 "$work/job-${jobid}_0.log")"

# A fleet: jobs/slurm-fleet.sbatch plays a queue's test, requeued once part way (the test
# stays running, the requeued fleet resumes it) and ends when the queue is empty.
"$xq" submit "$work/fq" "$job" >/dev/null || fail "submit to the fleet's queue"
fjob=$(cd "$work" && XQFORGE=$xq sbatch --parsable --nodes=1 --ntasks-per-node=2 \
    --cpus-per-task=1 --time=10 --output="$work/job-%j.log" \
    "$src/jobs/slurm-fleet.sbatch" "$work/fq" --until-empty) || fail "sbatch refused the fleet"
jobid=${fjob%%;*}
journal() { stat -c %s "$work/fq/tests/0001/journal.xqj" 2>/dev/null || echo 0; }
for _ in $(seq 1500); do
    [[ $(state) == RUNNING && $(journal) -gt 2000 ]] && break
    sleep 0.1
done
[[ $(journal) -gt 2000 ]] || fail "the fleet is not playing: $(state), $(tail -3 "$work/job-$jobid.log")"
scontrol requeue "$jobid" || fail "scontrol requeue of the fleet refused"
requeued 1 || fail "the fleet did not go back in the queue: $(state)"
for _ in $(seq 900); do
    [[ $(state) =~ ^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL)$ ]] && break
    sleep 0.2
done
[[ $(state) == COMPLETED ]] || fail "the fleet did not complete: $(state), $(tail -5 "$work/job-$jobid.log")"
flog=$work/job-$jobid.log
grep -q "test 0001 (slurm, match) on 1 worker rank: resuming it" "$flog" || fail "the requeued fleet did not resume the test"
[[ $(jq -r .state "$work/fq/tests/0001/test.json") == finished ]] || fail "the fleet's test is not finished"
fgot=$(totals "$work/fq/tests/0001/result.json")
[[ $fgot == "$want" ]] || fail "the fleet's test after a requeue: want $want, got $fgot"
echo "slurm: job $first requeued twice (scontrol requeue, SIGUSR1), $(grep -h '^Drained' "$log" | tr '\n' ' ')totals $got; an array of 2; a fleet requeued once, totals $fgot"
echo "1 passed, 0 failed"
