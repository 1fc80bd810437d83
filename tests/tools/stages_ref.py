#!/usr/bin/env python3
"""Independent reference for magpie's inference-stage post-processing, written
from the specification in docs/magpie-compat.md (Magpie's
behaviour), used by tests/integration/test_trace_stages.sh:

  stages_ref.py simple STAGE_DIR OUT.csv
      the *_kernel_roofline_simple.csv of a stage directory of TraceLens CSVs
  stages_ref.py picks EXECUTION_DETAILS.csv [CONC]
      the phase picks as JSON: {stage: {row_index, batch_size, file}}
"""
import csv
import glob
import json
import os
import re
import sys

csv.field_size_limit(1 << 30)

GENERIC = {"gpu_timeline.csv", "ops_summary.csv", "ops_summary_by_category.csv",
           "ops_unique_args.csv", "unified_perf_summary.csv"}
COLUMNS = ["source_category", "op_name", "param_signature", "operation_count", "num_kernels",
           "kernel_time_ms_sum", "time_pct", "kernel_time_us_mean", "gflops", "data_moved_mb",
           "arithmetic_intensity_flops_per_byte", "achieved_tflops_mean", "achieved_tbps_mean",
           "compute_spec", "roofline_bound", "pct_roofline_mean", "roofline_time_us",
           "has_perf_model", "params_json", "input_dims", "input_type"]
ARCH = {"roofline_bound": "Roofline Bound", "pct_roofline_mean": "Pct Roofline_mean",
        "roofline_time_us": "Roofline Time (\u00b5s)_first"}
COPY = {"source_category": "op category", "op_name": "name", "operation_count": "operation_count",
        "time_pct": "Percentage (%)", "kernel_time_us_mean": "Kernel Time (\u00b5s)_mean",
        "gflops": "GFLOPS", "data_moved_mb": "Data Moved (MB)",
        "arithmetic_intensity_flops_per_byte": "FLOPS/Byte",
        "achieved_tflops_mean": "TFLOPS/s_mean", "achieved_tbps_mean": "TB/s_mean",
        "compute_spec": "Compute Spec", "has_perf_model": "has_perf_model",
        "input_dims": "Input Dims", "input_type": "Input type"}


def norm(cat):
    c = cat.strip().lower()
    if c.endswith("_fwd"):
        c = c[:-4]
    return re.sub(r"[^a-z0-9]+", "", c)


def simple(stage_dir, out):
    by_key, by_name = {}, {}
    for path in sorted(glob.glob(os.path.join(stage_dir, "*.csv"))):
        if os.path.basename(path) in GENERIC:
            continue
        stem = os.path.splitext(os.path.basename(path))[0]
        with open(path, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                if not any(k.startswith("param: ") for k in row):
                    continue
                by_key.setdefault((norm(stem), row.get("name", "")), []).append(row)
                by_name.setdefault(row.get("name", ""), []).append(row)
    with open(os.path.join(stage_dir, "unified_perf_summary.csv"), newline="",
              encoding="utf-8") as f:
        reader = csv.DictReader(f)
        cols = [c for c in COLUMNS if c not in ARCH or ARCH[c] in reader.fieldnames]
        rows = []
        for row in reader:
            key = (norm(row.get("op category", "")), row.get("name", ""))
            match = None
            if by_key.get(key):
                match = by_key[key].pop(0)
            elif len(by_name.get(row.get("name", ""), [])) == 1:
                match = by_name[row["name"]].pop(0)
            params = {}
            for k, v in (match or {}).items():
                if k.startswith("param: ") and v not in (None, ""):
                    params[k[7:]] = v
            out_row = {c: row.get(src, "") for c, src in COPY.items()}
            for c, src in ARCH.items():
                if src in reader.fieldnames:
                    out_row[c] = row.get(src, "")
            out_row["param_signature"] = ",".join(f"{k}={v}" for k, v in params.items())
            out_row["num_kernels"] = match.get("num_kernels", "") if match else ""
            kt = row.get("Kernel Time (\u00b5s)_sum", "")
            try:
                out_row["kernel_time_ms_sum"] = f"{float(kt) / 1000.0:.6g}" if kt else ""
            except ValueError:
                out_row["kernel_time_ms_sum"] = ""
            out_row["params_json"] = (json.dumps(params, sort_keys=True, separators=(",", ":"))
                                      if params else "")
            rows.append(out_row)
    with open(out, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)


def picks(details, conc):
    rows = list(csv.DictReader(open(details, newline="", encoding="utf-8")))
    cands = {}
    for i, r in enumerate(rows):
        base = os.path.basename(r["output_path"])
        if base.startswith(("mixed_steady_state_", "prefilldecode_steady_state_",
                            "decode_only_steady_state_")):
            continue
        if int(float(r.get("num_steps") or 1)) > 1:
            continue
        kind = ("PD" if int(float(r["phase_num_prefilldecode"])) == 1 else
                "DECODE" if int(float(r["phase_num_decode"])) == 1 else
                "PREFILL" if int(float(r["phase_num_prefill"])) == 1 else None)
        if kind is None:
            continue
        if any(float(r[k]) <= 0 for k in ("num_gpu_events", "gpu_duration", "gpu_busy_duration")):
            continue
        cands.setdefault(kind, []).append((i, r))
    out = {}
    for kind, stage in (("PD", "prefilldecode"), ("DECODE", "decode"), ("PREFILL", "prefill")):
        c = cands.get(kind, [])
        if not c:
            continue
        top = max(float(r["phase_avg_bs"]) for _, r in c)
        c = [x for x in c if float(x[1]["phase_avg_bs"]) == top]
        if stage == "decode" and conc is not None:
            best = min(abs(float(r["phase_avg_conc"]) - conc) for _, r in c)
            c = [x for x in c if abs(float(x[1]["phase_avg_conc"]) - conc) == best]
        c.sort(key=lambda x: (float(x[1]["gpu_busy_duration"]), x[0]))
        i, r = c[len(c) // 2]
        out[stage] = {"row_index": i, "batch_size": float(r["phase_avg_bs"]),
                      "file": os.path.basename(r["output_path"])}
    json.dump(out, sys.stdout, sort_keys=True)
    print()


if __name__ == "__main__":
    if sys.argv[1] == "simple":
        simple(sys.argv[2], sys.argv[3])
    else:
        picks(sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else None)
