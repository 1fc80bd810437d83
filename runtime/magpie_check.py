"""Output checks of magpie's Python runner: tolerances, the high-precision
reference rule, and strict JSON (imported by magpie_runner.py).

The rule (docs/correctness.md gives the tables, the factors and the
measurements behind them), per output tensor:

1. Its dtype: the least precise of the dtype the YAML declares (if any) and
   the reference output's own dtype. TOL gives that dtype's (atol, rtol)
   for an allclose against the reference; YAML atol/rtol replace them and
   then decide alone.
2. High-precision reference: the reference model also runs with its
   floating parameters, buffers and inputs upcast to float64 (float32 when
   float64 fails), giving ref_hi. The reference's own error
   e_ref = |ref - ref_hi| is summarised as atol_ref (largest e_ref where
   |ref_hi| < s, the RMS of ref_hi) and rtol_ref (largest e_ref/|ref_hi|
   elsewhere), floored at one rounding to the dtype (u*s and u, u its unit
   roundoff). Per element: |cand - ref_hi| <= HP_FACTOR * (atol_ref +
   rtol_ref * |ref_hi|); over the output: RMS(cand - ref_hi) <= RMS_FACTOR *
   max(RMS(e_ref), RMS_ROUNDING * u * s).
3. float16, bfloat16, float8 outputs: rule 2 decides (the table is
   reported). float32/float64: the table decides, an element within rule
   2's bound also passes (the runner makes ref_hi only for problems with
   something below float32). NaN/Inf where the reference is finite always
   fails.
"""
import copy
import json
import math

# dtype -> (atol, rtol). float16 and bfloat16 are torch.testing.assert_close's
# defaults; float32/float64 are the runner's earlier, KernelBench-like values
# (looser than torch.testing's, which reject kernels that only sum in
# another order); the float8 values are one ulp at the bottom of a binade
# (rtol) and the smallest subnormal (atol).
TOL = {
    "float64": (1e-8, 1e-7),
    "float32": (1e-4, 1e-4),
    "float16": (1e-5, 1e-3),
    "bfloat16": (1e-5, 1.6e-2),
    "float8_e4m3fn": (2.0 ** -9, 2.0 ** -3),
    "float8_e4m3fnuz": (2.0 ** -10, 2.0 ** -3),
    "float8_e5m2": (2.0 ** -16, 2.0 ** -2),
    "float8_e5m2fnuz": (2.0 ** -17, 2.0 ** -2),
}

# unit roundoff (half an ulp, relative) of each floating dtype
UNIT = {
    "float64": 2.0 ** -53,
    "float32": 2.0 ** -24,
    "float16": 2.0 ** -11,
    "bfloat16": 2.0 ** -8,
    "float8_e4m3fn": 2.0 ** -4,
    "float8_e4m3fnuz": 2.0 ** -4,
    "float8_e5m2": 2.0 ** -3,
    "float8_e5m2fnuz": 2.0 ** -3,
}

ALIASES = {"fp64": "float64", "double": "float64", "fp32": "float32", "float": "float32",
           "fp16": "float16", "half": "float16", "bf16": "bfloat16", "fp8": "float8_e4m3fn",
           "fp8_e4m3": "float8_e4m3fn", "float8_e4m3": "float8_e4m3fn",
           "fp8_e5m2": "float8_e5m2"}

# The multiples of the reference's own error a candidate may have, per
# element (HP_FACTOR) and in RMS over the output (RMS_FACTOR). Measured by
# bench/lowprec_calibrate.py (docs/correctness.md): correct variants (fused,
# other reduction orders, online softmax, unfused low-precision chains)
# reach 2.1 per element and 1.3 in RMS; wrong ones (a dropped term, a
# skipped tail, one element off, low-precision running sums, a statistic
# over half the row) 5 and more per element or 2.4 and more in RMS.
HP_FACTOR = 4.0
RMS_FACTOR = 2.0
# RMS error of one rounding to nearest, in units of u * RMS(value): about
# 0.42 measured on normal and softmax data; 0.5 leaves a margin
RMS_ROUNDING = 0.5
# outputs whose dtype has at least this unit roundoff (float16, bfloat16,
# float8) are judged by the high-precision rule alone; float32/float64 by the
# table, the rule only widening it (fast-math and TF32-free reorderings of
# fp32 code stay accepted as before)
LOW_PRECISION_UNIT = 2.0 ** -11


def dtype_name(dt):
    """'bfloat16' for torch.bfloat16 (and for the alias strings in ALIASES)."""
    s = str(dt)
    s = s[6:] if s.startswith("torch.") else s
    return ALIASES.get(s.lower(), s)


def least_precise(*names):
    """The floating dtype with the largest unit roundoff among names (None
    and non-floating names are skipped); None when there is none."""
    best = None
    for n in names:
        if n in UNIT and (best is None or UNIT[n] > UNIT[best]):
            best = n
    return best


def tolerance(declared, out_dtype, atol=None, rtol=None):
    """(dtype used, atol, rtol, explicit) for one output."""
    d = least_precise(dtype_name(declared) if declared else None, dtype_name(out_dtype))
    if d is None:  # integers, bools: exact
        a, r = 0.0, 0.0
    else:
        a, r = TOL[d]
    explicit = atol is not None or rtol is not None
    if atol is not None:
        a = float(atol)
    if rtol is not None:
        r = float(rtol)
    return d, a, r, explicit


def to_list(x):
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


def upcast_args(torch, xs, dt):
    return [x.to(dt) if isinstance(x, torch.Tensor) and x.is_floating_point() else x
            for x in xs]


def high_precision_model(torch, model):
    """A float64 copy of a reference model (floating parameters and buffers
    upcast), or None when it cannot be made."""
    try:
        m = copy.deepcopy(model)
        if hasattr(m, "double"):
            m = m.double()
        return m
    except Exception:
        return None


def run_high_precision(torch, model, inputs, seed_fn):
    """Runs the reference in float64 (then float32 when float64 fails) on
    upcast copies of inputs. Returns (outputs, dtype name, note); outputs
    is None when neither ran (note says why)."""
    notes = []
    for dt in (torch.float64, torch.float32):
        m = high_precision_model(torch, model)
        if m is None:
            return None, None, "the reference model could not be copied"
        if dt == torch.float32 and hasattr(m, "float"):
            m = m.float()
        try:
            seed_fn()
            with torch.no_grad():
                out = m(*upcast_args(torch, inputs, dt))
            return out, dtype_name(dt), "; ".join(notes)
        except Exception as e:  # an op without a float64 kernel, a dtype check
            first = str(e).splitlines()[0][:160] if str(e) else ""
            notes.append("%s failed (%s: %s)" % (dtype_name(dt), type(e).__name__, first))
        finally:
            del m
    return None, None, "; ".join(notes)


def _max(torch, t):
    return float(t.max()) if t.numel() else 0.0


def _hp_bound(torch, r, h, u):
    """(atol_b, rtol_b, s, fin) of the high-precision rule for reference r
    and high-precision reference h (both float64)."""
    fin = torch.isfinite(h) & torch.isfinite(r)
    d = h.abs()
    e_ref = (r - h).abs()
    hv = h[fin]
    s = float(hv.pow(2).mean().sqrt()) if hv.numel() else 0.0
    big = fin & (d >= s) & (d > 0)
    small = fin & (d < s)
    rtol_ref = _max(torch, e_ref[big] / d[big])
    atol_ref = _max(torch, e_ref[small])
    return max(atol_ref, u * s), max(rtol_ref, u), s, fin, rtol_ref, atol_ref


def compare(torch, out, ref, ref_hi=None, declared=None, atol=None, rtol=None,
            factor=HP_FACTOR, rms_factor=RMS_FACTOR):
    """Checks out against ref (and ref_hi when given). Returns a dict:
    ok, message, max_abs_err, max_rel_err (against ref), mismatches,
    and per output its dtype, tolerances and high-precision figures
    (hp_ratio: the candidate's largest error against ref_hi in units of the
    bound at factor 1; ref_ratio: the same figure for ref itself)."""
    res = {"ok": True, "message": "", "max_abs_err": 0.0, "max_rel_err": 0.0,
           "mismatches": 0, "outputs": []}
    outs, refs = to_list(out), to_list(ref)
    his = to_list(ref_hi) if ref_hi is not None else [None] * len(refs)
    if len(his) != len(refs):
        his = [None] * len(refs)

    def fail(msg, n=1):
        res.update(ok=False, message=msg, mismatches=n)
        return res

    if len(outs) != len(refs):
        return fail("returned %d outputs, the reference %d" % (len(outs), len(refs)))
    for k, (o, r, h) in enumerate(zip(outs, refs, his)):
        if not isinstance(r, torch.Tensor):
            if o != r:
                return fail("output %d differs: %r != %r" % (k, o, r))
            continue
        if not isinstance(o, torch.Tensor):
            return fail("output %d is not a tensor" % k)
        if tuple(o.shape) != tuple(r.shape):
            return fail("output %d shape %s, reference %s" % (k, tuple(o.shape), tuple(r.shape)))
        dt, a_tol, r_tol, explicit = tolerance(declared, r.dtype, atol, rtol)
        info = {"dtype": dt or dtype_name(r.dtype), "atol": a_tol, "rtol": r_tol,
                "explicit_tolerance": explicit}
        res["outputs"].append(info)
        o64, r64 = o.detach().double(), r.detach().double()
        fin_r = torch.isfinite(r64)
        nonfin = (~torch.isfinite(o64)) & fin_r
        if nonfin.any():
            n = int(nonfin.sum())
            res["max_abs_err"] = res["max_rel_err"] = math.inf
            return fail("output %d: %d NaN/Inf values where the reference is finite" % (k, n), n)
        diff = torch.where(fin_r, (o64 - r64).abs(), torch.zeros_like(r64))
        if diff.numel():
            res["max_abs_err"] = max(res["max_abs_err"], float(diff.max()))
            rel = diff / r64.abs().clamp_min(1e-30)
            res["max_rel_err"] = max(res["max_rel_err"], float(rel.max()))
        ok_el = (diff <= a_tol + r_tol * r64.abs()) | ~fin_r
        info["table_mismatches"] = int((~ok_el).sum())
        hp_used = False
        info["rule"] = "table"
        if (isinstance(h, torch.Tensor) and tuple(h.shape) == tuple(r.shape)
                and h.is_floating_point() and dt is not None):
            h64 = h.detach().double()
            atol_b, rtol_b, s, fin_h, rtol_ref, atol_ref = _hp_bound(torch, r64, h64, UNIT[dt])
            unit_bound = atol_b + rtol_b * h64.abs()
            e_cand = (o64 - h64).abs()
            ratio = torch.where(unit_bound > 0, e_cand / unit_bound,
                                torch.where(e_cand > 0, torch.full_like(e_cand, math.inf),
                                            torch.zeros_like(e_cand)))
            ratio = torch.where(fin_h, ratio, torch.zeros_like(ratio))
            e_ref = torch.where(fin_h, (r64 - h64).abs() / unit_bound.clamp_min(1e-300),
                                torch.zeros_like(r64))
            fin_n = int(fin_h.sum())
            rms_h = s
            rms_ref = float((r64 - h64)[fin_h].pow(2).mean().sqrt()) if fin_n else 0.0
            rms_cand = float((o64 - h64)[fin_h].pow(2).mean().sqrt()) if fin_n else 0.0
            rms_floor = RMS_ROUNDING * UNIT[dt] * rms_h
            rms_ratio = rms_cand / max(rms_ref, rms_floor) if max(rms_ref, rms_floor) > 0 \
                else (math.inf if rms_cand > 0 else 0.0)
            info.update(hp_dtype=dtype_name(h.dtype), hp_factor=factor, hp_scale=s,
                        hp_atol_ref=atol_ref, hp_rtol_ref=rtol_ref, hp_atol=atol_b * factor,
                        hp_rtol=rtol_b * factor, hp_ratio=_max(torch, ratio),
                        ref_ratio=_max(torch, e_ref), rms_err=rms_cand, rms_err_ref=rms_ref,
                        rms_floor=rms_floor, rms_ratio=rms_ratio, rms_factor=rms_factor,
                        hp_max_abs_err=_max(torch, torch.where(fin_h, e_cand,
                                                               torch.zeros_like(e_cand))))
            if not explicit:
                hp_used = True
                hp_ok = fin_h & (ratio <= factor)
                if UNIT[dt] >= LOW_PRECISION_UNIT:  # the rule decides alone
                    info["rule"] = "high_precision"
                    ok_el = (~fin_h & ok_el) | hp_ok
                else:  # float32/float64: the table, or the rule where it is looser
                    info["rule"] = "table_or_high_precision"
                    ok_el = ok_el | hp_ok
        bad = ~ok_el
        if bad.any():
            n = int(bad.sum())
            first = int(bad.flatten().nonzero()[0])
            msg = ("output %d: %d of %d elements differ from the reference (first at flat "
                   "index %d; max abs err %.3g, max rel err %.3g; %s atol %.3g rtol %.3g") % (
                k, n, bad.numel(), first, res["max_abs_err"], res["max_rel_err"],
                info["dtype"], a_tol, r_tol)
            if hp_used:
                msg += ("; against the %s reference the largest error is %.3g times the "
                        "reference's own error bound, %g allowed") % (
                    info["hp_dtype"], info["hp_ratio"], factor)
            return fail(msg + ")", n)
        if info["rule"] == "high_precision" and info["rms_ratio"] > rms_factor:
            return fail(("output %d: its RMS error against the %s reference is %.3g times the "
                         "reference's own (%.3g vs %.3g), %g allowed: a systematic error, not "
                         "rounding") % (k, info["hp_dtype"], info["rms_ratio"], info["rms_err"],
                                        max(info["rms_err_ref"], info["rms_floor"]),
                                        rms_factor), 0)
    return res


def strict_json(obj, path="", found=None):
    """A copy of obj in which every non-finite float is None; found (a dict)
    gets path -> 'inf' / '-inf' / 'nan' for each. json.dumps(...,
    allow_nan=False) of the copy cannot fail on NaN/Infinity."""
    if found is None:
        found = {}
    if isinstance(obj, float):
        if math.isfinite(obj):
            return obj
        found[path] = "nan" if obj != obj else ("inf" if obj > 0 else "-inf")
        return None
    if isinstance(obj, dict):
        out = {}
        nf = {}
        for k, v in obj.items():
            sub = {}
            out[k] = strict_json(v, "%s.%s" % (path, k) if path else str(k), sub)
            for p, what in sub.items():
                found[p] = what
                if not isinstance(v, (dict, list, tuple)):
                    nf[k] = what
        if nf:  # beside the nulls: what they were, for readers that care
            out["nonfinite"] = dict(obj.get("nonfinite") or {}, **nf)
        return out
    if isinstance(obj, (list, tuple)):
        return [strict_json(v, "%s[%d]" % (path, i), found) for i, v in enumerate(obj)]
    return obj


def dump_strict(obj, f):
    """Writes obj as strict JSON (non-finite numbers as null, listed under
    'nonfinite' beside them and in the top-level 'nonfinite_fields')."""
    found = {}
    clean = strict_json(obj, "", found)
    if found and isinstance(clean, dict):
        clean["nonfinite_fields"] = ["%s: %s" % kv for kv in sorted(found.items())]
    json.dump(clean, f, allow_nan=False)
