#!/usr/bin/env bash
# Runs make check's test step (ctest --preset ci -j2: the ASan/UBSan build)
# N times in a clone of one commit, each run in a network namespace of its
# own, so that two or more of these loops can run side by side and load each
# other (loopback ports and servers do not collide). One line per run goes
# to RESULTS; each run's ctest log is kept beside it.
#   tests/tools/stress_suite.sh DIR N COMMIT RESULTS   (as root, for unshare -n)
# DIR is cloned from this checkout if it does not exist; it should sit beside
# the checkout (DIR/../shared is the shared data the tests read).
set -u
DIR=${1:?clone dir} N=${2:?runs} COMMIT=${3:?commit} RES=${4:?results file}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
[ -d "$DIR" ] || git clone -q "$SRC" "$DIR" || exit 1
cd "$DIR" || exit 1
git fetch -q "$SRC" && git checkout -q "$COMMIT" || exit 1
cmake --preset ci >/dev/null && cmake --build --preset ci >"$RES.build.log" 2>&1 || {
    echo "build failed: $RES.build.log"
    exit 1
}
tag=$(basename "$DIR")
for i in $(seq 1 "$N"); do
    start=$(date +%s)
    unshare -n bash -c "ip link set lo up && ctest --preset ci -j2" >"$RES.$tag-$i.log" 2>&1
    rc=$?
    echo "$tag run $i $(git log --oneline -1 | cut -c1-7) $(date -u -d "@$start" +%H:%M) rc=$rc" \
        "$(($(date +%s) - start))s load $(cut -d' ' -f1-3 /proc/loadavg)" \
        "$(grep -E 'tests passed|tests failed' "$RES.$tag-$i.log" | tail -1)" \
        "$(grep -E '\(Failed\)|\(Timeout\)' "$RES.$tag-$i.log" | tr '\n' ' ')" >>"$RES"
done
