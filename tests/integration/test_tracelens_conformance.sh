#!/usr/bin/env bash
# TraceLens conformance: `magpie trace report` on every shared trace that has
# TraceLens CSVs beside it, compared sheet by sheet with tests/tools/tl_compare.py
# (same header, same rows in the same order, numbers within 1e-6 relative,
# Python reprs compared semantically). Only the sheets magpie implements so
# far are compared; the list grows with the report.
set -u
MAGPIE=${MAGPIE:?}
SRC=${MP_SRC:?}
D=${MP_SHARED:-}/data/traces
if [ ! -d "$D" ]; then
    echo "shared traces not found at $D: only the repo's own fixtures are compared"
fi
command -v python3 >/dev/null || { echo "SKIPPED: python3 not found"; exit 0; }
SHEETS="Normalization_fwd gpu_timeline unified_perf_summary coll_analysis ops_summary_by_category ops_summary ops_unique_args GEMM UnaryElementwise BinaryElementwise Normalization SDPA_fwd SDPA_bwd CONV_fwd CONV_bwd Reduce_fwd Reduce_bwd kernel_summary short_kernel_histogram short_kernels_summary"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fails=0
n=0
run_case() { # run_case TRACE GOLDEN_DIR [magpie options...]; EXACT=--exact: floats bit for bit
    local trace=$1 golden=$2 name
    shift 2
    name=$(basename "$golden")
    n=$((n + 1))
    if ! "$MAGPIE" trace report "$trace" -o "$t/$n" -q "$@" >"$t/$n.log" 2>&1; then
        echo "FAIL $name: magpie exited non-zero"
        cat "$t/$n.log"
        fails=$((fails + 1))
        return
    fi
    echo "== $name"
    # shellcheck disable=SC2086
    python3 "$SRC/tests/tools/tl_compare.py" ${EXACT:-} "$golden" "$t/$n" $SHEETS || fails=$((fails + 1))
}
for golden in "$D"/tracelens-tests/*/*_perf_report_csvs "$D"/tracelens-tests/*/*/*_perf_report_csvs; do
    [ -d "$golden" ] || continue
    trace=${golden%_perf_report_csvs}.json.gz
    opts=()
    case "$golden" in
    *_recompute_perf_report_csvs) # TraceLens run with --detect_recompute
        trace=${golden%_recompute_perf_report_csvs}.json.gz
        opts=(--detect_recompute)
        ;;
    esac
    [ -f "$trace" ] || { echo "skip $(basename "$golden"): trace missing"; continue; }
    run_case "$trace" "$golden" "${opts[@]}"
done
for golden in "$D"/h200/*_tracelens_csvs; do
    [ -d "$golden" ] && run_case "${golden%_tracelens_csvs}.json.gz" "$golden"
done
# roofline columns: TraceLens run with --gpu_arch_json_path on the same trace
for golden in "$D"/h200/*_tracelens_arch; do
    [ -d "$golden" ] && run_case "${golden%_tracelens_arch}.json.gz" "$golden" \
        --gpu_arch_json_path "$D/h200/H200-arch-datasheet.json"
done
[ -d "$D/h200-tp2/tracelens_rank0" ] &&
    run_case "$D/h200-tp2/torch_trace/tp2-rank-0.1796011317.pt.trace.json.gz" "$D/h200-tp2/tracelens_rank0"
# real H200 training steps (forward, backward, optimizer; one with activation
# checkpointing) made by tests/fixtures/traces/make_train_traces.py, with
# TraceLens's reports beside them (see the README there)
F=$SRC/tests/fixtures/traces/h200_train
run_case "$F/train_plain.json.gz" "$F/train_plain_tracelens_csvs"
run_case "$F/train_ckpt.json.gz" "$F/train_ckpt_tracelens_csvs" --detect_recompute
run_case "$F/train_plain.json.gz" "$F/train_plain_micro5_tracelens_csvs" --micro_idle_thresh_us 5 \
    --disable_coll_analysis
run_case "$F/train_plain.json.gz" "$F/train_plain_bynk_tracelens_csvs" --group_by_num_kernels \
    --include_first_occurrence_time
# TraceLens CLI flags (tests/fixtures/tracelens_flags/README.md): the trace
# given as --profile_json_path, --topk_short_kernels (pandas head(), negative
# drops from the end), --topk_ops / --topk_roofline_ops (ignored by TraceLens
# too: the plain golden still matches)
G=$SRC/tests/fixtures/tracelens_flags
SHEETS=short_kernels_summary run_case "$F/train_plain.json.gz" "$G/train_topk5" --short_kernel_study \
    --topk_short_kernels 5 --topk_ops 3 --topk_roofline_ops 2 --disable_coll_analysis
SHEETS=short_kernels_summary run_case "$F/train_plain.json.gz" "$G/train_topk0" --topk_short_kernels 0
SHEETS=short_kernels_summary run_case "$F/train_plain.json.gz" "$G/train_topk_neg" --topk_short_kernels -3
# (--python_path too: without GEMM_SIMULATOR_PATH TraceLens never uses it)
GEMM_SIMULATOR_PATH='' run_case "--profile_json_path=$F/train_plain.json.gz" \
    "$F/train_plain_tracelens_csvs" --topk_ops 3 --topk_roofline_ops 2 --python_path /usr/bin/python3
# --inductor_cache_dir changes nothing in TraceLens's report (it models a
# Triton op only from the trace's args and then never reads the cache): the
# plain golden still matches
TC=$D/tracelens-tests/torch_compile_triton
[ -f "$TC/trace.json.gz" ] &&
    run_case "$TC/trace.json.gz" "$TC/trace_perf_report_csvs" --inductor_cache_dir "$t"
# --include_overlap_info: the *_kl_overlap sheets, TraceLens's own on the
# shared mi300 ResNet (two streams: NCCL beside compute), also with
# --detect_recompute or roofline and kernel-count columns, the sglang decode
# inference trace with the inference options, and h100 BERT (one stream)
TT=$D/tracelens-tests
KLS="ops_unique_args_kl_overlap unified_perf_summary_kl_overlap GEMM_kl_overlap UnaryElementwise_kl_overlap BinaryElementwise_kl_overlap Normalization_kl_overlap SDPA_fwd_kl_overlap CONV_fwd_kl_overlap CONV_bwd_kl_overlap Reduce_fwd_kl_overlap Reduce_bwd_kl_overlap"
for cc in "resnet_overlap|mi300/resnet_act_checkpoint.json.gz|" \
    "resnet_recompute_overlap|mi300/resnet_act_checkpoint.json.gz|--detect_recompute" \
    "resnet_arch_bynk_overlap|mi300/resnet_act_checkpoint.json.gz|--group_by_num_kernels --include_first_occurrence_time --gpu_arch_json_path $D/h200/H200-arch-datasheet.json" \
    "sglang_overlap_full|inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz|--inference --enable_pseudo_ops --group_by_parent_module --group_by_num_kernels --include_call_stack" \
    "bert_overlap|h100/gaunernst_bert-small-uncased__1016001.json.gz|" \
    "mixtral_overlap|../h200/mixtral_shape_l8_bs16_p256_d12.json.gz|" \
    "mixtral_inference_overlap|../h200/mixtral_shape_l8_bs16_p256_d12.json.gz|--inference --enable_pseudo_ops --group_by_parent_module --group_by_num_kernels --include_call_stack"; do
    IFS='|' read -r fix trace fl <<<"$cc"
    [ -f "$TT/$trace" ] || { echo "skip overlap $fix: $trace missing"; continue; }
    # shellcheck disable=SC2086
    SHEETS=$KLS run_case "$TT/$trace" "$G/$fix" --include_overlap_info $fl
done
# with a graph-capture merge
SG=$TT/inference/sglang_decode
[ -f "$SG/sglang_Qwen3-8B_decode.json.gz" ] &&
    SHEETS="$KLS InferenceAttention_fwd_kl_overlap RMSNorm_fwd_kl_overlap RoPE_fwd_kl_overlap" \
        run_case "$SG/sglang_Qwen3-8B_decode.json.gz" "$G/sglang_capture_overlap" --inference \
        --capture_folder "$SG/capture_traces" --group_by_parent_module --group_by_num_kernels \
        --include_call_stack --include_overlap_info
# the synthetic five-stream trace of tests/fixtures/tracelens_flags/overlap_synth.py
SHEETS="$KLS" run_case "$G/overlap_synth.json.gz" "$G/overlap_synth" --include_overlap_info
SHEETS="$KLS" run_case "$G/overlap_synth.json.gz" "$G/overlap_synth_inf" --include_overlap_info \
    --inference --group_by_num_kernels
# vLLM's custom all-reduce kernels count as communication
# (tests/fixtures/tracelens_custom_allreduce/README.md)
C=$SRC/tests/fixtures/tracelens_custom_allreduce
python3 "$C/make_trace.py" "$(ls "$SRC"/examples/traces/tp2/tp2-rank-0.*.json.gz | head -1)" \
    "$t/cdr.json" &&
    SHEETS="gpu_timeline coll_analysis kernel_summary ops_summary ops_summary_by_category" \
        run_case "$t/cdr.json" "$C/tp2_rank0"
# --fix-nested-ops (magpie only): aten::native_batch_norm runs inside
# aten::batch_norm with the same kernels; TraceLens lists both in
# Normalization, the fix keeps the outer one and the kernel-time total drops
# by exactly the inner rows' time
R=$D/tracelens-tests/mi300/resnet_act_checkpoint.json.gz
if [ -f "$R" ]; then
    n=$((n + 1))
    "$MAGPIE" trace report "$R" -o "$t/nest0" -q --no-summary >/dev/null 2>&1 &&
        "$MAGPIE" trace report "$R" -o "$t/nest1" -q --no-summary --fix-nested-ops >/dev/null 2>&1 &&
        python3 - "$t/nest0/Normalization.csv" "$t/nest1/Normalization.csv" <<'PY'
import csv, sys
a = list(csv.DictReader(open(sys.argv[1], encoding="utf-8")))
b = list(csv.DictReader(open(sys.argv[2], encoding="utf-8")))
col = "Kernel Time (\u00b5s)_sum"
tot = lambda rows: sum(float(r[col]) for r in rows)
inner = [r for r in a if r["name"] == "aten::native_batch_norm"]
assert inner and any(r["name"] == "aten::batch_norm" for r in b), "expected nested batch norms"
assert not any(r["name"] == "aten::native_batch_norm" for r in b), "inner op kept"
want = tot(a) - tot(inner)
assert abs(tot(b) - want) <= 1e-6 * want, (tot(b), want)
print("ok   --fix-nested-ops: Normalization %d -> %d rows, %.1f -> %.1f us" % (len(a), len(b), tot(a), tot(b)))
PY
    [ $? = 0 ] || { echo "FAIL --fix-nested-ops"; fails=$((fails + 1)); }
fi
# inference report (TraceLens_generate_perf_report_pytorch_inference): the
# shared H200 golden and the goldens in tests/fixtures/tracelens_inference
for golden in "$D"/h200/*_tracelens_inference; do
    [ -d "$golden" ] && run_case "${golden%_tracelens_inference}.json.gz" "$golden" --inference \
        --group_by_parent_module --group_by_num_kernels --include_call_stack --enable_pseudo_ops
done
I=$SRC/tests/fixtures/tracelens_inference
while IFS='|' read -r name trace flags; do
    case "$name" in \#* | "") continue ;; esac
    name=$(echo $name)
    trace=$(echo $trace)
    [ -f "$D/$trace" ] || { echo "skip inference $name: $trace missing"; continue; }
    # shellcheck disable=SC2086
    run_case "$D/$trace" "$I/$name" $flags
done <"$I/cases.txt"
# graph-capture merge (--capture_folder): the shared perf_csvs goldens were made
# with --enable_pseudo_ops, compared on every sheet they hold; $I/*_capture hold
# TraceLens's sheets for the same runs without pseudo ops, all compared
C=$D/tracelens-tests/inference
CAPF="--inference --group_by_parent_module --group_by_num_kernels --include_call_stack"
CAPS="gpu_timeline ops_summary_by_category ops_summary ops_unique_args unified_perf_summary GEMM UnaryElementwise Reduce_fwd RMSNorm_fwd RoPE_fwd InferenceAttention_fwd kernel_summary short_kernel_histogram short_kernels_summary"
# magpie's --enable_pseudo_ops does TraceLens's SGLang op-name pass (the sglang
# golden) and its unfused Triton MoE pseudo ops (the vllm golden's
# MoE_unfused_fwd and unified_perf_summary)
for cc in "sglang_decode|sglang_Qwen3-8B_decode|sglang_capture|gpu_timeline ops_summary_by_category ops_summary ops_unique_args unified_perf_summary GEMM UnaryElementwise Reduce_fwd RMSNorm_fwd RoPE_fwd InferenceAttention_fwd" \
    "vllm_decode_full|graph_execution|vllm_capture|gpu_timeline ops_summary_by_category ops_summary ops_unique_args unified_perf_summary GEMM UnaryElementwise RMSNorm_fwd InferenceAttention_fwd MoE_unfused_fwd"; do
    IFS='|' read -r dir trace fix golden_sheets <<<"$cc"
    [ -f "$C/$dir/$trace.json.gz" ] || { echo "skip capture merge $dir: trace missing"; continue; }
    # shellcheck disable=SC2086
    SHEETS=$golden_sheets run_case "$C/$dir/$trace.json.gz" "$C/$dir/perf_csvs" $CAPF --enable_pseudo_ops \
        --capture-folder "$C/$dir/capture_traces"
    # shellcheck disable=SC2086
    SHEETS=$CAPS run_case "$C/$dir/$trace.json.gz" "$I/$fix" $CAPF --capture_folder "$C/$dir/capture_traces"
done
# float sums bit for bit (tests/fixtures/tracelens_sums/sum_ties_synth.py):
# two short-kernel groups whose sums tie only in pandas' order of additions,
# with rows interleaved (Kahan) and grouped (np.add.reduceat); TraceLens
# (pandas 3.1.1) orders the tied rows by first appearance. Every float cell
# must be the same double, BinaryElementwise of the grouped trace included:
# a groupby(sort=True) over several groups whose rows come in key order
S=$SRC/tests/fixtures/tracelens_sums
SUMS="gpu_timeline ops_summary_by_category ops_summary ops_unique_args unified_perf_summary GEMM BinaryElementwise kernel_summary short_kernel_histogram short_kernels_summary"
for c in interleaved sorted; do
    EXACT=--exact SHEETS=$SUMS run_case "$S/$c.json.gz" "$S/$c" --enable_kernel_summary --short_kernel_study
done
# the pseudo-op families on synthetic traces (pseudo_synth.py): each trace
# against TraceLens's sheets made plain (NAME/) and with python frames in the
# tree (NAME_py/: --group_by_parent_module --include_call_stack
# --group_by_num_kernels)
synth_pair() { # synth_pair NAME SHEETS
    SHEETS=$2 run_case "$I/$1.json.gz" "$I/$1" --inference --enable_pseudo_ops
    SHEETS=$2 run_case "$I/$1.json.gz" "$I/$1_py" --inference --enable_pseudo_ops \
        --group_by_parent_module --include_call_stack --group_by_num_kernels
}
SYN="gpu_timeline ops_summary_by_category ops_summary ops_unique_args unified_perf_summary GEMM"
synth_pair moe_unfused_synth "$SYN MoE_unfused_fwd"             # unfused Triton MoE
synth_pair mla_synth "$SYN InferenceAttention_fwd"               # --mla: MLA decode / prefill
synth_pair gptq_synth "$SYN UnaryElementwise MoE_unfused_fwd"   # --gptq: GPTQ/AWQ MoE
synth_pair flydsl_synth "$SYN MoE_unfused_fwd"                  # --flydsl: flydsl MoE
synth_pair aiter_fused_synth "$SYN MoE_fused_fwd"               # --aiter: fused AITER MoE
# with a paged-attention op TraceLens makes no pseudo op (pseudo_synth.py --paged)
SHEETS=$SYN run_case "$I/moe_paged_synth.json.gz" "$I/moe_paged_synth" --inference --enable_pseudo_ops
echo "$n trace(s), $fails with differences"
[ "$fails" = 0 ]
