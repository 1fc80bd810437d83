"""Helpers of bench/kernel_noise.sh.

  kernel_noise.py job IN OUT [only=ID] KEY=VALUE...  copy of a harness/runner
                                 job with timing keys set, one kernel kept
  kernel_noise.py parse RESULT TAG...       one JSON line per timed kernel of
                                            a harness/runner result
  kernel_noise.py summary RAW               CoV of the per-process medians
  kernel_noise.py clocks RAW SMI_CSV        per process: mean SM clock, power,
                                            temperature and throttle share
                                            during its run (lines with t0/t1),
                                            and the median-vs-clock correlation
"""
import datetime
import json
import statistics
import sys


def job(src, dst, kv):
    j = json.load(open(src))
    for a in kv:
        if a.startswith("only="):  # keep this kernel and its reference
            keep = [e for e in j["kernels"] if a[5:] in e["id"]]
            for i, e in enumerate(keep):
                e["ref"] = next((n for n, x in enumerate(keep) if x["is_reference"]), -1) \
                    if not e["is_reference"] else -1
            j["kernels"] = keep
            continue
        k, v = a.split("=", 1)
        j["timing"][k] = json.loads(v)
    j["timing"]["enabled"] = True
    json.dump(j, open(dst, "w"))


def parse(res, tags):
    try:
        r = json.load(open(res))
    except (OSError, ValueError) as e:
        print(json.dumps({"tags": tags, "error": str(e)}))
        return
    for k in r.get("kernels", []):
        t = k.get("timing") or {}
        s = t.get("samples_ms") or []
        if not s:
            continue
        out = {"tags": tags, "kernel": k["id"], "median_ms": statistics.median(s), "n": len(s),
               "stop": t.get("stop_reason"), "graph": t.get("cuda_graph"),
               "recheck_ok": (k.get("correctness") or {}).get("recheck_ok")}
        g = t.get("power_guard")
        if g:
            out["guard"] = g
        for key in ("clock_before_mhz", "clock_after_mhz", "temp_before_c", "temp_after_c",
                    "gpu_before", "gpu_after"):
            if key in t:
                out[key] = t[key]
        print(json.dumps(out))


def measured(raw):
    """The lines of RAW that carry a median (error lines and junk skipped)."""
    for line in open(raw):
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if "median_ms" in d:
            yield d


def summary(raw):
    groups = {}
    for d in measured(raw):
        key = (" ".join(d.get("tags", [])) or d.get("tool", "?"), d["kernel"])
        groups.setdefault(key, []).append(d["median_ms"])
    print("%-34s %-18s %3s %10s %10s %10s %8s" % ("tool/variant", "kernel", "N", "mean_us",
                                                 "min_us", "max_us", "CoV%"))
    for (tool, kern), v in sorted(groups.items()):
        m = statistics.mean(v)
        cov = 100 * statistics.stdev(v) / m if len(v) > 1 else float("nan")
        print("%-34s %-18s %3d %10.3f %10.3f %10.3f %8.3f" % (tool, kern, len(v), m * 1e3,
                                                             min(v) * 1e3, max(v) * 1e3, cov))
        print("    medians_us: " + " ".join("%.2f" % (x * 1e3) for x in v))


def read_smi(path):
    rows = []
    for line in open(path):
        f = [x.strip() for x in line.split(",")]
        if len(f) < 6:
            continue
        try:
            t = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
            rows.append((t, float(f[1].split()[0]), float(f[3].split()[0]),
                         float(f[4].split()[0]), int(f[5], 16)))
        except ValueError:
            continue
    return rows


def clocks(raw, smi_path):
    smi = read_smi(smi_path)
    groups = {}
    for d in measured(raw):
        if "t0" not in d:
            continue
        win = [s for s in smi if d["t0"] <= s[0] <= d["t1"]]
        if not win:
            continue
        busy = [s for s in win if s[2] > 150] or win  # samples with the GPU drawing power
        rec = (d["median_ms"] * 1e3, statistics.mean(s[1] for s in busy),
               min(s[1] for s in busy), statistics.mean(s[2] for s in busy),
               max(s[3] for s in win), sum(1 for s in busy if s[4] & ~0x1) / len(busy))
        groups.setdefault((" ".join(d.get("tags", [])), d["kernel"]), []).append(rec)
    print("\nper process, over nvidia-smi samples in its run with power > 150 W:")
    print("%-16s %-18s %10s %9s %9s %8s %6s %8s" % ("variant", "kernel", "median_us", "sm_mean",
                                                     "sm_min", "power_W", "temp", "throttle"))
    for (tool, kern), v in sorted(groups.items()):
        for r in v:
            print("%-16s %-18s %10.2f %9.1f %9.0f %8.1f %6.0f %8.2f" % ((tool, kern) + r))
        if len(v) > 2:
            xs, ys = [r[1] for r in v], [r[0] for r in v]
            try:
                c = statistics.correlation(xs, ys)
            except statistics.StatisticsError:
                c = float("nan")
            print("    corr(median, mean SM clock) = %.3f over %d processes" % (c, len(v)))


if __name__ == "__main__":
    if sys.argv[1] == "job":
        job(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif sys.argv[1] == "parse":
        parse(sys.argv[2], sys.argv[3:])
    elif sys.argv[1] == "clocks":
        clocks(sys.argv[2], sys.argv[3])
    else:
        summary(sys.argv[2])
