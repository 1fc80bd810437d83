/* Shared declarations of the magpie command-line front end. The CLI parses
 * options, calls one library entry point and formats the result; it holds
 * no analysis logic of its own. */
#ifndef MAGPIE_CLI_H
#define MAGPIE_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include <magpie/base.h>

/* Exit codes (docs/STYLE.md): 0 success, 1 evaluation failed, 2 usage/input error. */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* Global options; they precede the subcommand as in Magpie. */
struct cli_global {
    const char *config_path; /* -c/--config, may be NULL */
    bool verbose;            /* -v */
    const char *environment; /* -e/--environment local|container|ray */
    int workers;             /* -w/--workers, 0 = unset */
    const char *docker_image;
    bool quiet;
};

/* Each subcommand gets argv with argv[0] = subcommand name. */
int cmd_analyze(int argc, char **argv, const struct cli_global *g);
int cmd_compare(int argc, char **argv, const struct cli_global *g);
int cmd_benchmark(int argc, char **argv, const struct cli_global *g);
int cmd_trace(int argc, char **argv, const struct cli_global *g);
int cmd_mcp(int argc, char **argv, const struct cli_global *g);
int cmd_ray(int argc, char **argv, const struct cli_global *g);

/* The Ray paths (cmd_ray.c): a benchmark config with run_mode ray, and
 * analyze / compare with environment ray, submitted as a Ray job running
 * magpie on a worker; both wait and print the result. */
struct mp_serve_config;
struct mp_kernel_config;
int cli_ray_benchmark(const struct mp_serve_config *cfg, const char *yaml, bool json);
int cli_ray_kernel(int argc, char **argv, const struct cli_global *g, bool compare,
                   const struct mp_kernel_config *cfg, const char *kernel_yaml, bool json);
int cmd_discover(int argc, char **argv, const struct cli_global *g);
int cmd_warm_pool(int argc, char **argv, const struct cli_global *g);
int cmd_suggest(int argc, char **argv, const struct cli_global *g);
int cmd_gpu(int argc, char **argv, const struct cli_global *g);
/* MIN,MAX (or N for N,N) in MHz for a clock-lock option (cmd_gpu.c); prints
 * the error and returns EXIT_USAGE when it is not one. */
int cli_parse_mhz_range(const char *opt, const char *s, int out[2]);
/* `gpu calibrate` (cmd_gpu_calibrate.c); argv[0] is "calibrate". */
int cmd_gpu_calibrate(int argc, char **argv);

/* `benchmark --base-url URL ...`: the load generator against a running
 * OpenAI-compatible server (cmd_bench_client.c). */
int cli_bench_client(int argc, char **argv, const struct cli_global *g);

/* `benchmark compare A B [C ...]`: run-to-run comparison (cmd_bench_compare.c);
 * argv[0] = "compare". */
int cli_bench_compare(int argc, char **argv, const struct cli_global *g);

/* `benchmark sweep ...` and `benchmark sweep compare A B` (cmd_bench_sweep.c);
 * argv[0] = "sweep". */
int cli_bench_sweep(int argc, char **argv, const struct cli_global *g);

/* `trace kernels`, `trace report` and `trace collective` (cmd_trace_kernels.c,
 * cmd_trace_report.c, cmd_trace_collective.c); argv[0] is the subcommand. */
int cli_trace_kernels(int argc, char **argv);
int cli_trace_report(int argc, char **argv);
int cli_trace_collective(int argc, char **argv);
/* `trace split` (cmd_trace_split.c) and `trace stages` (cmd_trace_stages.c). */
int cli_trace_split(int argc, char **argv);
int cli_trace_stages(int argc, char **argv);
/* `trace sources` (cmd_trace_sources.c). */
int cli_trace_sources(int argc, char **argv);
/* `trace compare` (cmd_trace_compare.c). */
int cli_trace_compare(int argc, char **argv);
/* `trace replay` (cmd_trace_replay.c). */
int cli_trace_replay(int argc, char **argv);

/* --gpu-info [--json] (cmd_gpuinfo.c). */
int cli_gpu_info(bool json);

/* Prints a diag as "magpie: error: ..." to stderr and returns the exit code
 * for it (2 for input errors, 1 otherwise). */
int cli_report_error(const struct mp_diag *d, int rc);

/* Progress display on stderr when it is a TTY (cli_progress.c). */
struct cli_progress;
struct cli_progress *cli_progress_new(const char *label, bool enabled);
void cli_progress_update(struct cli_progress *p, unsigned long long done, unsigned long long total,
                         const char *unit);
void cli_progress_finish(struct cli_progress *p);
/* An mp_trace_progress_fn whose user pointer is a struct cli_progress. */
void cli_progress_bytes(uint64_t bytes, uint64_t raw_pos, uint64_t raw_size, void *user);

/* Parses a whole string as a number for option opt; prints the error and
 * returns EXIT_USAGE when it is not one. */
int cli_parse_double(const char *opt, const char *s, double *out);

#endif
