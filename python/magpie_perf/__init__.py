"""magpie from Python: the bundled magpie executable and a small API over it.

Every function runs the executable that ships in this package (``binary()``)
and reads what it writes (CSV files, JSON on stdout): there is no second
implementation of anything here. pandas is optional: with it, tables come
back as ``pandas.DataFrame``; without it, as paths of the CSV files.

    import magpie_perf as mp
    sheets = mp.trace_report("trace.json.gz", gpu_arch="H200")
    sheets["ops_summary"].head()

Keyword arguments become command-line flags: ``name=value`` is
``--name value``, ``name=True`` is ``--name``, ``False``/``None`` leave it
out, a list repeats the flag. TraceLens's own keyword names work
(``short_kernel_threshold_us=5``, ``include_overlap_info=True``,
``enable_kernel_summary=False``, ``short_kernel_study=False``): magpie accepts
TraceLens's underscore spellings (``magpie trace report --help``).
"""
import json
import os
import shutil
import subprocess
import tempfile

__all__ = ["binary", "run", "MagpieError", "trace_report", "gap_analysis", "trace_kernels",
           "benchmark_compare", "__version__"]

_PKG = os.path.dirname(os.path.abspath(__file__))


def binary():
    """Path of the magpie executable in this package."""
    return os.path.join(_PKG, "bin", "magpie")


def _version():
    try:
        from importlib.metadata import version
        return version("magpie-perf")
    except Exception:  # not installed as a distribution (e.g. a source checkout)
        return "unknown"


__version__ = _version()


class MagpieError(RuntimeError):
    """magpie exited with a non-zero status; .returncode, .stderr, .args_run."""

    def __init__(self, args_run, returncode, stderr):
        self.args_run, self.returncode, self.stderr = args_run, returncode, stderr
        tail = "\n".join(stderr.strip().splitlines()[-10:])
        super().__init__("magpie %s: exit status %d\n%s" % (" ".join(args_run), returncode, tail))


def run(*args, check=True, cwd=None):
    """Run ``magpie ARGS...``; returns the subprocess.CompletedProcess (text
    stdout/stderr); raises MagpieError on a non-zero exit when check."""
    args = [str(a) for a in args]
    p = subprocess.run([binary()] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, cwd=cwd)
    if check and p.returncode != 0:
        raise MagpieError(args, p.returncode, p.stderr)
    return p


# TraceLens keywords whose default is on: False maps to magpie's negative flag
_NEGATED = {"enable_kernel_summary": "--no-kernel-summary",
            "short_kernel_study": "--no-short-kernel-study"}


def _flags(kw):
    out = []
    for k, v in kw.items():
        if k in _NEGATED:
            if v is False:
                out.append(_NEGATED[k])
            continue
        flag = "--" + k
        if v is None or v is False:
            continue
        if v is True:
            out.append(flag)
        elif isinstance(v, (list, tuple)):
            for x in v:
                out += [flag, str(x)]
        else:
            out += [flag, os.fspath(v) if isinstance(v, os.PathLike) else str(v)]
    return out


def _pandas():
    try:
        import pandas
        return pandas
    except ImportError:
        return None


def _tables(directory, as_frames):
    """{file stem: DataFrame or path} of the CSV files directly in directory."""
    names = sorted(f for f in os.listdir(directory) if f.endswith(".csv"))
    paths = {f[:-4]: os.path.join(directory, f) for f in names}
    pd = _pandas() if as_frames is not False else None
    if as_frames and pd is None:
        raise ImportError("as_frames=True needs pandas (pip install 'magpie-perf[pandas]')")
    if pd is None:
        return paths
    return {k: pd.read_csv(p) for k, p in paths.items()}


def _outdir(output_dir, prefix):
    if output_dir is None:
        return tempfile.mkdtemp(prefix=prefix), True
    os.makedirs(output_dir, exist_ok=True)
    return os.fspath(output_dir), False


def _run_into(out, made, *args):
    """run(*args); a temporary out made for it goes when magpie fails."""
    try:
        run(*args)
    except BaseException:
        if made:
            shutil.rmtree(out, ignore_errors=True)
        raise


def trace_report(path, output_dir=None, as_frames=None, **tracelens_flags):
    """TraceLens-compatible report of one torch-profiler trace
    (``magpie trace report``): {sheet name: DataFrame} (TraceLens's sheet
    names, e.g. gpu_timeline, ops_summary, kernel_summary), or {sheet name:
    CSV path} without pandas or with as_frames=False. The CSVs (and
    report.html) stay in output_dir (a new temporary directory when None)."""
    out, made = _outdir(output_dir, "magpie-report-")
    _run_into(out, made, "trace", "report", os.fspath(path), "-o", out, "-q", "--no-summary",
        *_flags(tracelens_flags))
    return _tables(out, as_frames)


def gap_analysis(trace_dir, output_dir=None, as_frames=None, **kw):
    """Gap analysis of the rank traces in trace_dir (``magpie benchmark
    --trace-dir``): {table name: DataFrame or CSV path} of
    output_dir/gap_analysis/*.csv (gap_analysis, gap_analysis_rank<N>, ...).
    Keywords: top_k=10 is --top-k 10, and so on."""
    out, made = _outdir(output_dir, "magpie-gap-")
    kw = {k.replace("_", "-"): v for k, v in kw.items()}
    _run_into(out, made, "benchmark", "--trace-dir", os.fspath(trace_dir), "-o", out, *_flags(kw))
    return _tables(os.path.join(out, "gap_analysis"), as_frames)


def trace_kernels(path, **kw):
    """Kernel time by name (``magpie trace kernels --json``): the JSON
    document as a dict (kernel_summary, top_bottlenecks, ranks)."""
    kw = {k.replace("_", "-"): v for k, v in kw.items()}
    p = run("trace", "kernels", os.fspath(path), "--json", "-q", *_flags(kw))
    return json.loads(p.stdout)


def benchmark_compare(baseline, *candidates, **kw):
    """Is the candidate really faster (``magpie benchmark compare --json``):
    the JSON document as a dict. Keywords: bootstrap=2000, seed=0,
    allow_different=True, label=["base", "new"], ..."""
    if not candidates:
        raise TypeError("benchmark_compare needs a baseline and at least one candidate")
    kw = {k.replace("_", "-"): v for k, v in kw.items()}
    p = run("benchmark", "compare", os.fspath(baseline), *[os.fspath(c) for c in candidates],
            "--json", *_flags(kw))
    return json.loads(p.stdout)
