#!/usr/bin/env bash
# Op-replay fidelity on a GPU (docs/replay.md, "Fidelity"): replays the top
# 20 ops of each trace given with `magpie trace replay --run` and prints,
# per op, the trace's kernel time per call against the replay's (kernel
# records of the profiler, in the L2 state the op's figure uses), the
# ratio, the four states' figures (flushed, warm, idle, cold: docs/replay.md),
# where the values of offsets/indices came from, whether the same kernels
# ran, and the totals: ops within 10 % and
# ops with the same kernels (issue 28's targets: all within 10 %, >= 90 %
# same kernels).
#
#   bench/replay_fidelity.sh --stage [SHARED]   on the build machine: copies
#       the H200 traces from SHARED (default ../shared) into .gpudata/ (ignored)
#   MAGPIE=$PWD/.klibs/magpie OUT=$OUT bench/replay_fidelity.sh TRACE...
#       on the GPU machine (torch importable by python3 or $MAGPIE_PYTHON)
#
# Writes under $OUT (flat, 2 + 2 per trace + 1 files): fidelity.txt (the
# table), fidelity.log (magpie's output), env.txt (GPU, driver, torch),
# <name>_summary.json (replay_summary.json) and <name>_run.json (the helper's
# raw result with every sample) per trace. Budget: about 2 min per trace of
# 20 ops (1 s of graph sampling per op plus three profiler runs); each trace
# is stopped after $PER_TRACE_S (default 120) seconds, keeping the ops timed by then.
set -u
if [ "${1:-}" = "--stage" ]; then
    S=${2:-../shared}
    mkdir -p .gpudata
    grep -qx '/.gpudata/' .git/info/exclude 2>/dev/null || echo '/.gpudata/' >>.git/info/exclude
    cp "$S/data/traces/h200/mixtral_shape_l8_bs16_p256_d12.json.gz" .gpudata/
    cp "$S/data/traces/h200-tp2/torch_trace/tp2-rank-0.1796011317.pt.trace.json.gz" .gpudata/
    # the script that made the H200 traces (bench/replay_fidelity_h200.sh captures a Llama one)
    cp "$S/data/traces/h200/make_traces.py" .gpudata/
    ls -la .gpudata
    exit 0
fi
: "${MAGPIE:?MAGPIE must point to the magpie binary (e.g. \$PWD/.klibs/magpie)}"
[ $# -ge 1 ] || {
    echo "usage: MAGPIE=... OUT=... $0 TRACE..." >&2
    exit 2
}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/fidelity.XXXXXX")}
mkdir -p "$OUT"
PY=${MAGPIE_PYTHON:-python3}
export MAGPIE_RUNTIME_DIR=${MAGPIE_RUNTIME_DIR:-$PWD/runtime}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fidelity_w.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
{
    date -u
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu --format=csv 2>&1
    "$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available() and torch.cuda.get_device_name())' 2>&1
    "$MAGPIE" --version 2>&1
} >"$OUT/env.txt"
names=()
for t in "$@"; do
    b=$(basename "$t")
    name=${b%%.*}
    name=${name%%_shape*}
    names+=("$name")
    echo "== $name: $t" >>"$OUT/fidelity.log"
    s0=$(date +%s)
    # the helper is stopped at PER_TRACE_S (the ops timed by then are kept);
    # magpie itself 20 s later at the latest
    timeout $((${PER_TRACE_S:-120} + 20)) "$MAGPIE" trace replay "$t" --top 20 --run --max-time 1 \
        --run-timeout "${PER_TRACE_S:-120}" -o "$WORK/$name" >>"$OUT/fidelity.log" 2>&1
    echo "== $name: exit $? after $(($(date +%s) - s0)) s" >>"$OUT/fidelity.log"
    cp "$WORK/$name/replay_summary.json" "$OUT/${name}_summary.json" 2>/dev/null
    cp "$WORK/$name/replay_run.json" "$OUT/${name}_run.json" 2>/dev/null
done
python3 - "$OUT" "${names[@]}" <<'PY' | tee "$OUT/fidelity.txt"
import json, os, sys
out, names = sys.argv[1], sys.argv[2:]
tot = within = same = known = either = graph_in = 0
print("%-8s %-3s %-20s %-44s %9s %9s %6s %-7s %9s %9s %9s %9s %6s %-5s %-7s" % (
    "trace", "n", "op", "shape", "trace_us", "replay_us", "ratio", "state", "flushed", "warm",
    "idle", "cold", "graph", "same", "values"))
for name in names:
    p = os.path.join(out, name + "_summary.json")
    if not os.path.exists(p):
        print("%s: no summary (see fidelity.log)" % name)
        continue
    d = json.load(open(p))
    print("# %s: %s" % (name, d.get("run_note", "")))
    for o in d["ops"]:
        t = o["trace_kernel_us_median"]
        r = o.get("replay_kernel_us_median")
        fl, wm, gr = (o.get("replay_kernel_us_l2_flushed"), o.get("replay_kernel_us_l2_warm"),
                      o.get("replay_graph_us"))
        il, cd = o.get("replay_kernel_us_idle"), o.get("replay_kernel_us_cold")
        km = o.get("kernels_match")
        f = lambda v: "%9.2f" % v if v else "%9s" % "-"
        print("%-8s %-3d %-20.20s %-44.44s %9.2f %s %6s %-7s %s %s %s %s %6s %-5s %-7s" % (
            name, o["n"], o["op"], o["shape_key"], t, f(r),
            "%.3f" % (r / t) if r else "-", o.get("replay_l2") or "-", f(fl), f(wm), f(il), f(cd),
            "%.2f" % (gr / t) if gr else "-", {True: "yes", False: "NO", None: "-"}[km],
            o.get("values_from") or "-"))
        if not r:
            why = o.get("replay_note") or (not o["rebuilt"] and o.get("reason")) or \
                d.get("run_note", "")
            print("         not replayed: %s" % why[:200])
            continue
        tot += 1
        if 0.9 <= r / t <= 1.1:
            within += 1
        elif o.get("replay_note"):
            print("         %s" % o["replay_note"][:240])
        if any(v and 0.9 <= v / t <= 1.1 for v in (fl, wm, il, cd)):
            either += 1
        if gr and 0.9 <= gr / t <= 1.1:
            graph_in += 1
        if km is not None:
            known += 1
            same += bool(km)
        if km is False:
            print("         trace kernels: %s" % o["trace_kernels"][:200])
            print("         replay kernels: %s" % (o.get("replay_kernels") or "")[:200])
print("replayed ops: %d; within 10 %% of the trace: %d (%.0f %%); in any state (flushed, warm, idle, cold): %d; "
      "CUDA-graph figure within 10 %%: %d; same kernels: %d of %d (%.0f %%)" % (
          tot, within, 100.0 * within / max(tot, 1), either, graph_in, same, known,
          100.0 * same / max(known, 1)))
# the helper's probe figures (replay_run.json only) beside the two states
# they vary: L2 left all dirty (flush buffer rewritten) or all clean (read)
print("probes: op ratio to the trace: flushed, flushed_inputs (L2 dirtied as many bytes as the "
      "op's inputs: the rule before the trace's dirty levels), flushed_write (all dirty), "
      "flushed_read (all clean), cold, cold_read (cold all clean), cold_write (cold all dirty), "
      "after (right after its producer in the trace, trace_prev_op), rotate (k copies of the "
      "inputs, ~2 GiB, one per call), tlb (4 GiB strided read before each call; rotate and tlb "
      "with MAGPIE_REPLAY_SPREAD=1); then the trace's dirty-L2 levels before the op")
cnt = {}
for name in names:
    p = os.path.join(out, name + "_run.json")
    s = os.path.join(out, name + "_summary.json")
    if not (os.path.exists(p) and os.path.exists(s)):
        continue
    sm = {o["n"]: o for o in json.load(open(s))["ops"]}
    tr = {n: o["trace_kernel_us_median"] for n, o in sm.items()}
    for o in json.load(open(p)).get("ops", []):
        t = tr.get(o.get("n"))
        if not t or not o.get("ok"):
            continue
        ks = ("l2_flushed_us", "flushed_inputs_us", "flushed_write_us", "flushed_read_us",
              "cold_us", "cold_read_us", "cold_write_us", "after_us", "rotate_us", "tlb_us")
        v = [o.get(k) for k in ks]
        so = sm[o["n"]]
        print("%-8s %-3d " % (name, o["n"]) + " ".join("%6.3f" % (x / t) if x else "%6s" % "-"
                                                        for x in v) +
              "  after %s %s (%.0f %% of calls, gap %s us, wired %s)" % (
                  so.get("trace_prev_op") or "-", (so.get("trace_prev_shape") or "")[:40],
                  100 * (so.get("trace_prev_share") or 0),
                  "%.1f" % so["trace_gap_us"] if so.get("trace_gap_us") is not None else "-",
                  o.get("after_wired", "-") if o.get("after_error") is None else
                  "error: " + o["after_error"][:80]) +
              "  dirty %s" % " ".join("%.1fMiB@%.2f" % (b / 2**20, w)
                                      for b, w in o.get("dirty_levels") or []))
        for k, x in zip(("flushed", "flushed_inputs", "flushed_write", "flushed_read", "cold",
                         "cold_read", "cold_write", "after", "rotate", "tlb"), v):
            if x:
                cnt.setdefault(k, [0, 0])
                cnt[k][1] += 1
                cnt[k][0] += 0.9 <= x / t <= 1.1
print("probes within 10 %: " + ", ".join("%s %d of %d" % (k, a, b) for k, (a, b) in cnt.items()))
PY
