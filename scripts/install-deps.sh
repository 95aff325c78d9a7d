#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs every Debian 12 package xqforge needs to build, test and cross-check.
# Idempotent, and silent when everything is already there.
set -euo pipefail
packages=(
    build-essential cmake pkg-config git bc
    jq     # the tests read result.json and report.json
    procps # ps, pgrep, pkill: the kill-and-resume tests find ranks and engines
    libopenmpi-dev openmpi-bin libmsgpack-dev libcurl4-openssl-dev libcmocka-dev
    libjansson-dev zlib1g-dev libinih-dev
    clang-format
    clang libclang-rt-dev # libFuzzer and the sanitizers' runtimes (scripts/fuzz.sh)
    valgrind # memcheck on a short cluster run (tests/valgrind_run.sh)
    time     # GNU time: the fault drills measure a flooding engine's memory (tests/drills.sh)
    iproute2 # two network namespaces as two MPI nodes (tests/run_twohosts.sh)
    slurm-wlm slurm-client munge # a one-node Slurm cluster: jobs/slurm.sbatch requeued (tests/run_slurm.sh)
    nginx libnginx-mod-http-perl openssl curl # the report upload tests' server (WebDAV PUT, a POST sink)
    chromium fonts-dejavu-core                # the report page checked in a headless browser
    fairy-stockfish # the reference for perft and legal-move cross-checks
    sjaakii fairymax hoichess # xboard opponents (Sjaak II, MaxQi, HoiXiangqi) for the player tests
)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0

sudo=""
if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo=sudo
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
