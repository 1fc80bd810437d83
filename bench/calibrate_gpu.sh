#!/bin/bash
# `magpie gpu calibrate` on a GPU against its peers (issue 34's targets):
# the default calibration 5 times (wall time, repeatability), --thorough once
# (the wide search), --quick once, and PyTorch's matmul/copy timed the same
# way at magpie's shapes and at six square-ish ones (bench/calibrate_torch.py).
# Writes $OUT/calib_{1..5}.json, thorough.json, quick.json, torch.json and
# $OUT/calibrate_log.txt (everything printed, with wall times).
#   MAGPIE=... OUT=... bench/calibrate_gpu.sh     (from the repository root)
set -u
OUT=${OUT:-/tmp/calibrate_gpu}
M=${MAGPIE:-build/release/magpie}
RUNS=${RUNS:-5}
mkdir -p "$OUT"
log=$OUT/calibrate_log.txt
export MAGPIE_CALIBRATION_DIR=$OUT/cache
nvidia-smi --query-gpu=name,uuid,driver_version,power.limit,clocks.sm,temperature.gpu \
    --format=csv >>"$log" 2>&1
wall() { awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $1}"; }
for i in $(seq 1 "$RUNS"); do
    t0=$(date +%s.%N)
    echo "=== run $i: magpie gpu calibrate -o calib_$i.json" >>"$log"
    "$M" gpu calibrate -o "$OUT/calib_$i.json" >>"$log" 2>&1
    echo "=== rc=$? wall=$(wall "$t0") s" >>"$log"
done
for mode in quick thorough; do
    t0=$(date +%s.%N)
    echo "=== magpie gpu calibrate --$mode" >>"$log"
    "$M" gpu calibrate --$mode --no-cache -o "$OUT/$mode.json" >>"$log" 2>&1
    echo "=== rc=$? wall=$(wall "$t0") s" >>"$log"
done
echo "=== repeatability over the $RUNS default runs (value median, CoV of the run medians)" >>"$log"
python3 - "$OUT" "$RUNS" >>"$log" 2>&1 <<'PY'
import json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
docs = []
for i in range(1, runs + 1):
    try:
        docs.append(json.load(open(f"{out}/calib_{i}.json")))
    except OSError:
        pass
th = json.load(open(f"{out}/thorough.json"))
thv = {f["key"]: f.get("value") for f in th["magpie"]["figures"] if f["status"] == "ok"}
keys = [f["key"] for f in docs[0]["magpie"]["figures"]] if docs else []
print(f"{'figure':22s} {'median':>10s} {'CoV %':>7s} {'thorough':>10s} {'default/thorough':>16s}")
for k in keys:
    vals = [f["value"] for d in docs for f in d["magpie"]["figures"]
            if f["key"] == k and f["status"] == "ok"]
    if not vals:
        continue
    med = statistics.median(vals)
    cov = statistics.stdev(vals) / statistics.mean(vals) * 100 if len(vals) > 1 else 0
    t = thv.get(k)
    print(f"{k:22s} {med:10.2f} {cov:7.2f} {t if t else float('nan'):10.2f} "
          f"{(med / t) if t else float('nan'):16.3f}")
print("seconds per default run:", [d["magpie"]["seconds"] for d in docs])
PY
echo "=== torch at the same shapes and at six square-ish ones (same timer)" >>"$log"
t0=$(date +%s.%N)
python3 bench/calibrate_torch.py "$OUT/calib_1.json" --json "$OUT/torch.json" >>"$log" 2>&1
echo "=== rc=$? wall=$(wall "$t0") s" >>"$log"
cat "$log"
