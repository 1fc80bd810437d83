#!/bin/bash
# What going through Ray costs and buys, on a two-node local Ray cluster
# (head + one worker node, 1 CPU each, loopback, in a user/net/PID namespace
# of its own as tests/integration/test_ray.sh does):
#  1. seconds added per job: the same small benchmark (stand-in engine,
#     tests/tools/fake_engine.py) run locally (`magpie benchmark -b`,
#     run_mode local) and as a Ray task (run_mode ray, submit + wait + result),
#     N times each, medians and min..max;
#  2. 8 such jobs: locally one after another, as Ray tasks one after another
#     (benchmark_batch sequential) and spread over the two nodes
#     (benchmark_batch parallel), wall time of each, R rounds.
# usage: bench/ray_overhead.sh [N] [R]   (MAGPIE=path/to/magpie, default
# build/h-ray/magpie; MAGPIE_RAY_VENV, default /work/venvs/ray)
set -u
N=${1:-5}
ROUNDS=${2:-3}
SRC=$(cd "$(dirname "$0")/.." && pwd)
MAGPIE=${MAGPIE:-$SRC/build/h-ray/magpie}
VENV=${MAGPIE_RAY_VENV:-/work/venvs/ray}
if [ -z "${MP_RAY_IN_NS:-}" ]; then
    [ -x "$VENV/bin/ray" ] || { echo "no Ray at $VENV (see docs/ray.md)"; exit 2; }
    MP_RAY_IN_NS=1 MAGPIE=$MAGPIE exec unshare -rnpf --mount-proc bash "$0" "$@"
fi
ip link set lo up
export RAY_USAGE_STATS_ENABLED=0
W=$(mktemp -d /tmp/mp_ray_bench.XXXXXX)
S=$W/shared
mkdir -p "$S" "$W/bin"
export MAGPIE_RAY_STATE_DIR=$W/state
trap '"$VENV/bin/ray" stop --force >/dev/null 2>&1; rm -rf "$W"' EXIT
printf '#!/bin/sh\nexec python3 %s "$@"\n' "$SRC/tests/tools/fake_engine.py" >"$W/bin/vllm"
chmod +x "$W/bin/vllm"
export PATH="$W/bin:$PATH" FAKE_ENGINE_ITL_MS=20 FAKE_ENGINE_MAX_S=300
now() { python3 -c "import time; print(time.time())"; }
"$VENV/bin/ray" start --head --num-cpus 1 --node-ip-address 127.0.0.1 --port 6379 \
    --include-dashboard true --dashboard-host 127.0.0.1 --object-store-memory 80000000 \
    --temp-dir "$W/r" --disable-usage-stats >/dev/null 2>&1 || { echo "ray head failed"; exit 1; }
"$VENV/bin/ray" start --address 127.0.0.1:6379 --num-cpus 1 --node-ip-address 127.0.0.1 \
    --object-store-memory 80000000 >/dev/null 2>&1 || { echo "ray worker failed"; exit 1; }
yaml() { # NAME PORT MODE
    cat >"$W/$1.yaml" <<EOF
benchmark:
  framework: vllm
  model: fake-model
  run_mode: $3
  envs: {TP: 1, CONC: 2, ISL: 32, OSL: 16, NUM_PROMPTS: 16, PORT: $2, NUM_WARMUPS: 0}
  profiler: {torch_profiler: {enabled: false}}
  timeout_seconds: 120
  ray_config:
    cluster_address: 127.0.0.1:6379
    shared_storage_path: "$S"
    magpie_install_path: "$MAGPIE"
    entrypoint_num_cpus: 1
EOF
}
stats() { # label values...
    python3 - "$@" <<'PY'
import statistics, sys
v = sorted(float(x) for x in sys.argv[2:])
print(f"{sys.argv[1]:<34} median {statistics.median(v):6.2f} s  min {v[0]:6.2f}  max {v[-1]:6.2f}  (n={len(v)})")
PY
}
yaml loc 22000 local
yaml ray 22000 ray
L=() Y=()
for i in $(seq 1 "$N"); do
    t0=$(now)
    "$MAGPIE" benchmark -b "$W/loc.yaml" -o "$W/out" -q >/dev/null 2>&1 || echo "local run $i failed"
    t1=$(now)
    "$MAGPIE" benchmark -b "$W/ray.yaml" >/dev/null 2>&1 || echo "ray run $i failed"
    t2=$(now)
    L+=("$(python3 -c "print($t1-$t0)")")
    Y+=("$(python3 -c "print($t2-$t1)")")
done
echo "magpie: $MAGPIE"
stats "one job, local" "${L[@]}"
stats "one job, Ray task" "${Y[@]}"
python3 - "${#L[@]}" "${L[@]}" "${Y[@]}" <<'PY'
import statistics, sys
n = int(sys.argv[1]); l = [float(x) for x in sys.argv[2:2 + n]]; y = [float(x) for x in sys.argv[2 + n:]]
d = sorted(b - a for a, b in zip(l, y))
print(f"{'added per job (pairwise)':<34} median {statistics.median(d):6.2f} s  min {d[0]:6.2f}  max {d[-1]:6.2f}")
PY
for k in $(seq 1 8); do yaml "j$k" $((22100 + k)) ray; yaml "l$k" $((22100 + k)) local; done
CFGS=$(for k in $(seq 1 8); do echo "$W/j$k.yaml"; done)
A=() B=() C=()
for r in $(seq 1 "$ROUNDS"); do
    t0=$(now)
    for k in $(seq 1 8); do "$MAGPIE" benchmark -b "$W/l$k.yaml" -o "$W/out" -q >/dev/null 2>&1; done
    t1=$(now)
    # shellcheck disable=SC2086
    "$MAGPIE" ray batch $CFGS >/dev/null 2>&1 || echo "sequential batch $r: a job failed"
    t2=$(now)
    # shellcheck disable=SC2086
    "$MAGPIE" ray batch --parallel $CFGS >"$W/par.json" 2>/dev/null
    for id in $(python3 -c "import json,sys; print(' '.join(j['task_id'] for j in json.load(open(sys.argv[1]))['jobs']))" "$W/par.json"); do
        "$MAGPIE" ray wait "$id" --timeout 600 >/dev/null 2>&1 || echo "parallel batch $r: $id failed"
    done
    t3=$(now)
    A+=("$(python3 -c "print($t1-$t0)")")
    B+=("$(python3 -c "print($t2-$t1)")")
    C+=("$(python3 -c "print($t3-$t2)")")
done
stats "8 jobs, local, in a row" "${A[@]}"
stats "8 jobs, Ray, in a row" "${B[@]}"
stats "8 jobs, Ray, parallel on 2 nodes" "${C[@]}"
