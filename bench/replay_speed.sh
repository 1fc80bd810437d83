#!/usr/bin/env bash
# `magpie trace replay` against `magpie trace report` on the same trace,
# interleaved, RUNS (default 5) times each: the replay builds the report and
# then walks the trace for what ran before each selected op's calls
# (producer.c, traffic.c). Without a TRACE argument it writes a worst case
# for that walk: 60k small elementwise ops on one stream (20k calls of each
# of the three selected ops, ~12 KB of traffic each).
#
#   bench/replay_speed.sh MAGPIE [TRACE]
# Prints the median and range of each and the ratio of the medians.
set -u
M=${1:?usage: $0 MAGPIE [TRACE]}
W=$(mktemp -d "${TMPDIR:-/tmp}/replay_speed.XXXXXX")
trap 'rm -rf "$W"' EXIT
T=${2:-}
if [ -z "$T" ]; then
    T=$W/ops60k.json.gz
    python3 - "$T" <<'PY'
import gzip, json, sys
ev, ts, gts = [], 1000.0, 1000.0
for i in range(60000):
    name = ("aten::add", "aten::mul", "aten::sigmoid")[i % 3]
    un = name == "aten::sigmoid"
    ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": 8,
               "args": {"External id": i + 1,
                        "Input Dims": [[1024]] if un else [[1024], [1024], []],
                        "Input type": ["float"] if un else ["float", "float", "Scalar"]}})
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
               "ts": ts + 2, "dur": 3, "args": {"correlation": i + 1}})
    ev.append({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": i + 1, "pid": 1, "tid": 1,
               "ts": ts + 2})
    ev.append({"ph": "f", "cat": "ac2g", "name": "ac2g", "id": i + 1, "pid": 0, "tid": 7,
               "ts": gts, "bp": "e"})
    ev.append({"ph": "X", "cat": "kernel", "name": "k" + name[6:], "pid": 0, "tid": 7, "ts": gts,
               "dur": 2.0, "args": {"correlation": i + 1, "device": 0, "stream": 7}})
    ts, gts = ts + 10, gts + 3
with gzip.open(sys.argv[1], "wt") as f:
    json.dump({"traceEvents": ev}, f)
PY
fi
rep=() rpl=()
for i in $(seq "${RUNS:-5}"); do
    s0=$(date +%s.%N)
    "$M" trace report "$T" -q -o "$W/rep" >/dev/null 2>&1 || echo "report failed" >&2
    s1=$(date +%s.%N)
    "$M" trace replay "$T" --top 3 -q -o "$W/rpl" >/dev/null 2>&1 || echo "replay failed" >&2
    s2=$(date +%s.%N)
    rep+=("$(echo "$s1 - $s0" | bc)")
    rpl+=("$(echo "$s2 - $s1" | bc)")
done
python3 - "${rep[*]}" "${rpl[*]}" <<'PY'
import statistics, sys
a = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
print("trace report: median %.3f s (%.3f-%.3f)" % (statistics.median(a), min(a), max(a)))
print("trace replay: median %.3f s (%.3f-%.3f)" % (statistics.median(b), min(b), max(b)))
print("replay / report: %.2fx" % (statistics.median(b) / statistics.median(a)))
PY
