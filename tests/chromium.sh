# SPDX-License-Identifier: MIT
# Sourced by the browser tests: finds Chromium (exit 77, a skip, when it is not installed)
# and defines chrome ARGS..., a headless Chromium with no network and a throwaway profile in
# $work/home; --virtual-time-budget (chrome_budget ms, 2000 unless set) lets layout settle
# before a dump or a screenshot.
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $browser ]]; then
    echo "SKIP: chromium is not installed (scripts/install-deps.sh installs it)"
    exit 77
fi
chrome() {
    mkdir -p "$work/home"
    HOME="$work/home" timeout 120 "$browser" --headless --no-sandbox --disable-gpu \
        --disable-dev-shm-usage --no-first-run --user-data-dir="$work/home/profile" \
        --proxy-server=127.0.0.1:9 --proxy-bypass-list='<-loopback>' \
        --virtual-time-budget="${chrome_budget:-2000}" "$@" 2>>"$work/chromium.log"
}
