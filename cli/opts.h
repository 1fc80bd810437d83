/* Option tables of the magpie command line. Every command declares its
 * options once, in a struct cli_opt array with the help text beside each
 * option; the getopt_long arrays, the usage line, `--help`, the man page
 * and the shell completions are all built from these tables (opts.c). */
#ifndef MAGPIE_CLI_OPTS_H
#define MAGPIE_CLI_OPTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

/* Argument kinds: the values getopt_long uses. */
enum { CLI_NOARG = no_argument, CLI_ARG = required_argument, CLI_OPTARG = optional_argument };

/* cli_opt.flags */
enum {
    CLI_HIDDEN = 1u << 0, /* accepted but left out of help, man page and completions */
    CLI_EXACT = 1u << 1,  /* only the spelling given: no automatic '_' <-> '-' twin */
};

/* An option of one mode of a table shared by several commands: it applies
 * to a command whose cli_cmd.mode has that bit (no CLI_MODE bit: to all). */
#define CLI_MODE(n) (1u << (8 + (n)))
#define CLI_MODE_MASK 0xff00u

/* One option. A long name with '-' (or '_') is also accepted with the other
 * separator: --output-dir and --output_dir are one entry. Another name for
 * the same option (a TraceLens or vLLM spelling) is a second entry with the
 * same id, usually CLI_HIDDEN. */
struct cli_opt {
    const char *name;    /* long name without "--", or NULL (short only) */
    char letter;         /* short option letter, or 0 */
    signed char arg;     /* CLI_NOARG, CLI_ARG or CLI_OPTARG */
    int id;              /* what the parser returns: the letter, or a value >= 256 */
    const char *metavar; /* shown after the name: "DIR", "N"; NULL without argument */
    const char *help;    /* one paragraph; wrapped when printed */
    unsigned flags;
};

/* cli_cmd.flags */
enum {
    CLI_STOP_AT_ARG = 1u << 0, /* options end at the first non-option word */
    CLI_NO_SYNOPSIS = 1u << 1, /* usage lines are `usage` only, no generated one */
};

/* A command (or subcommand, or mode of one): its name after "magpie ", the
 * words of its synopsis, text before and after the options, and the table.
 * The table ends with an all-zero entry ({0}); an entry with only help set
 * is a heading that starts a group of options. */
struct cli_cmd {
    const char *name;       /* "trace report"; "" for magpie itself */
    const char *args;       /* positional part of the synopsis: "TRACE", "PATH..." */
    const char *usage;      /* further usage lines (verbatim), or NULL */
    const char *summary;    /* one line, for command lists and the man page */
    const char *intro;      /* paragraphs before the options, hand-wrapped, or NULL */
    const char *opts_title; /* heading of the option list; NULL = "options" */
    const struct cli_opt *opts;
    const char *outro; /* paragraphs after the options (exit status, examples) */
    const char *words; /* further words completed after the name ("vllm sglang"), or NULL */
    unsigned flags;
    unsigned mode; /* a CLI_MODE bit: which options of a shared table apply */
};

/* Whether option o of cmd's table applies to cmd (CLI_MODE bits). */
bool cli_opt_applies(const struct cli_cmd *cmd, const struct cli_opt *o);

/* The options of cmd's table that apply to cmd, in order: the first with
 * prev NULL, NULL after the last.
 *   for (const struct cli_opt *o = cli_opt_next(cmd, NULL); o; o = cli_opt_next(cmd, o)) */
const struct cli_opt *cli_opt_next(const struct cli_cmd *cmd, const struct cli_opt *prev);

/* Every command, in man page order (registry in opts_registry.c). */
extern const struct cli_cmd *const cli_commands[];

/* The tables, each defined beside its command's code. */
extern const struct cli_cmd cli_cmd_root, cli_cmd_analyze, cli_cmd_compare, cli_cmd_benchmark,
    cli_cmd_benchmark_gap, cli_cmd_benchmark_client, cli_cmd_benchmark_compare, cli_cmd_trace,
    cli_cmd_trace_kernels, cli_cmd_trace_report, cli_cmd_trace_collective, cli_cmd_trace_split,
    cli_cmd_trace_stages, cli_cmd_trace_sources, cli_cmd_trace_compare, cli_cmd_mcp, cli_cmd_ray,
    cli_cmd_discover, cli_cmd_suggest, cli_cmd_gpu, cli_cmd_trace_replay, cli_cmd_benchmark_sweep,
    cli_cmd_benchmark_sweep_compare, cli_cmd_gpu_calibrate, cli_cmd_warm_pool;

#define CLI_MAX_OPTS 160 /* entries per table; cli_parser_init ignores any beyond */

/* getopt_long over one table. Usage:
 *   struct cli_parser p;
 *   cli_parser_init(&p, &cmd);
 *   while ((c = cli_next(&p, argc, argv)) != -1) switch (c) ...
 * Unknown options and missing arguments return '?' (opterr is off). */
struct cli_parser {
    struct option longopts[2 * CLI_MAX_OPTS + 1];
    char shortopts[3 * CLI_MAX_OPTS + 2];
    char names[CLI_MAX_OPTS][48]; /* the generated '_'/'-' twins */
    const char *name; /* the long name matched last, in the spelling used ('-' or '_'); NULL
                         for a short option */
};

void cli_parser_init(struct cli_parser *p, const struct cli_cmd *cmd);
int cli_next(struct cli_parser *p, int argc, char **argv);

/* For hand-written parsers: the table entry of a long option word "--x-y"
 * or "--x_y" (without any "=value"), or of "-c"; NULL when unknown. */
const struct cli_opt *cli_find(const struct cli_cmd *cmd, const char *word);

/* Whether cmd is a direct subcommand of parent ("trace report" of "trace";
 * "benchmark --trace-dir" is a mode, not a subcommand). */
bool cli_is_child(const struct cli_cmd *parent, const struct cli_cmd *cmd);

/* The usage lines of a command ("usage: magpie ..."), as --help starts. */
void cli_usage(FILE *f, const struct cli_cmd *cmd);

/* `--help` text of a command: usage lines, intro, option list, outro. */
void cli_help(FILE *f, const struct cli_cmd *cmd);

/* Generated documents: the man page (roff) and the completion scripts. */
void cli_write_man(FILE *f);
void cli_write_bash(FILE *f);
void cli_write_zsh(FILE *f);

#endif
