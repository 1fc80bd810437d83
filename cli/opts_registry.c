/* The list of every command's option table, in the order of the man page;
 * the generated documents (opts_doc.c) and the command lists of `--help`
 * walk it. A new command adds its struct cli_cmd here and in opts.h. */
#include "opts.h"

const struct cli_cmd *const cli_commands[] = {
    &cli_cmd_root,
    &cli_cmd_analyze,
    &cli_cmd_compare,
    &cli_cmd_benchmark,
    &cli_cmd_benchmark_gap,
    &cli_cmd_benchmark_client,
    &cli_cmd_benchmark_compare,
    &cli_cmd_benchmark_sweep,
    &cli_cmd_benchmark_sweep_compare,
    &cli_cmd_trace,
    &cli_cmd_trace_kernels,
    &cli_cmd_trace_report,
    &cli_cmd_trace_collective,
    &cli_cmd_trace_split,
    &cli_cmd_trace_stages,
    &cli_cmd_trace_sources,
    &cli_cmd_trace_compare,
    &cli_cmd_trace_replay,
    &cli_cmd_mcp,
    &cli_cmd_ray,
    &cli_cmd_discover,
    &cli_cmd_suggest,
    &cli_cmd_gpu,
    &cli_cmd_gpu_calibrate,
    &cli_cmd_warm_pool,
    NULL,
};
