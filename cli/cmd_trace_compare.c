/* `magpie trace compare`: compares two or more TraceLens-compatible report
 * directories sheet by sheet, with the options and outputs of TraceLens's
 * TraceLens_compare_perf_reports_pytorch (the comparison is in
 * src/tracelens/report_compare.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/tracelens_compare.h>

#include "cli.h"
#include "opts.h"

enum { C_OUT = 'o', C_CSVS = 1000, C_NO_XLSX, C_NAMES, C_SHEETS };

static const struct cli_opt compare_opts[] = {
    {"output", 'o', CLI_ARG, C_OUT, "FILE.xlsx", "workbook to write (default comparison.xlsx)", 0},
    {"no-xlsx", 0, CLI_NOARG, C_NO_XLSX, NULL, "no workbook (use with --output_csvs_dir)", 0},
    {"output_csvs_dir", 0, CLI_ARG, C_CSVS, "DIR",
     "also write each sheet as DIR/<sheet>.csv (also --output-csvs-dir)", 0},
    {"names", 0, CLI_ARG, C_NAMES, "TAG [TAG ...]",
     "one tag per report (default: the report's file name without its extension)", 0},
    {"sheets", 0, CLI_ARG, C_SHEETS, "GROUP [GROUP ...]",
     "gpu_timeline, ops_summary, kernel_summary, ops_all, roofline or all (default all)", 0},
    {"help", 'h', CLI_NOARG, 'h', NULL, "this help", 0},
    {0},
};

const struct cli_cmd cli_cmd_trace_compare = {
    .name = "trace compare",
    .args = "REPORT_A REPORT_B [REPORT ...]",
    .summary = "compare TraceLens-compatible reports (CSV directories), TraceLens's "
               "compare_perf_reports_pytorch",
    .intro = "Compares TraceLens-compatible reports (directories of per-sheet CSV files, as\n"
             "`magpie trace report -o DIR` and TraceLens's --output_csvs_dir write them, or\n"
             ".xlsx workbooks as --xlsx / --output_xlsx_path write them) as\n"
             "TraceLens_compare_perf_reports_pytorch does: the first report is the baseline;\n"
             "rows are joined on each sheet's keys, compared columns get <col>__<tag>_diff\n"
             "(variant - baseline) and <col>__<tag>_pct (100 * diff / baseline) columns, and\n"
             "the per-op sheets are split per variant into <sheet>_intersect_<tag>,\n"
             "<sheet>_only_baseline_<tag> and <sheet>_only_variant_<tag>.\n",
    .opts_title = "options (TraceLens's names)",
    .opts = compare_opts,
    .outro = "exit status: 0 ok, 2 usage or input error (missing sheet or key column, repeated\n"
             "tags), 1 other errors\n\n"
             "examples:\n"
             "  magpie trace report base.json.gz -o base_csvs\n"
             "  magpie trace report new.json.gz -o new_csvs\n"
             "  magpie trace compare base_csvs new_csvs --names base new \\\n"
             "      --output_csvs_dir cmp -o cmp.xlsx\n",
};

static void compare_usage(FILE *f)
{
    cli_help(f, &cli_cmd_trace_compare);
}

static void print_note(const char *line, void *user)
{
    (void)user;
    printf("%s\n", line);
}

int cli_trace_compare(int argc, char **argv)
{
    const char **reports = calloc((size_t)argc + 1, sizeof(*reports));
    const char **names = calloc((size_t)argc + 1, sizeof(*names));
    if (!reports || !names) {
        free(reports);
        free(names);
        fprintf(stderr, "magpie: error: out of memory\n");
        return EXIT_FAIL;
    }
    size_t nrep = 0, nnames = 0;
    bool have_names = false, no_xlsx = false;
    const char *xlsx = "comparison.xlsx", *csvdir = NULL;
    unsigned sheets = 0;
    int rc = EXIT_OK;
    for (int i = 1; i < argc && rc == EXIT_OK; i++) {
        const char *a = argv[i];
        const struct cli_opt *opt = cli_find(&cli_cmd_trace_compare, a);
        int id = opt ? opt->id : 0;
        if (id == 'h') {
            compare_usage(stdout);
            free(reports);
            free(names);
            return EXIT_OK;
        } else if (id == C_OUT) {
            if (i + 1 >= argc) {
                fprintf(stderr, "magpie: error: %s wants a file name\n", a);
                rc = EXIT_USAGE;
            } else {
                xlsx = argv[++i];
            }
        } else if (id == C_CSVS) {
            if (i + 1 >= argc) {
                fprintf(stderr, "magpie: error: %s wants a directory\n", a);
                rc = EXIT_USAGE;
            } else {
                csvdir = argv[++i];
            }
        } else if (id == C_NO_XLSX) {
            no_xlsx = true;
        } else if (id == C_NAMES) {
            have_names = true;
            while (i + 1 < argc && argv[i + 1][0] != '-')
                names[nnames++] = argv[++i];
        } else if (id == C_SHEETS) {
            bool any = false;
            while (i + 1 < argc && argv[i + 1][0] != '-') {
                unsigned b = mp_tlcmp_sheet_bits(argv[++i]);
                if (!b) {
                    fprintf(stderr,
                            "magpie: error: --sheets: '%s' is not one of gpu_timeline, "
                            "ops_summary, kernel_summary, ops_all, roofline, all\n",
                            argv[i]);
                    rc = EXIT_USAGE;
                    break;
                }
                sheets |= b;
                any = true;
            }
            if (!any && rc == EXIT_OK) {
                fprintf(stderr, "magpie: error: --sheets wants at least one group\n");
                rc = EXIT_USAGE;
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "magpie: error: unknown option '%s' for trace compare\n", a);
            rc = EXIT_USAGE;
        } else {
            reports[nrep++] = a;
        }
    }
    if (rc == EXIT_OK && nrep < 2) {
        fprintf(stderr, "magpie: error: Need at least two report files\n");
        compare_usage(stderr);
        rc = EXIT_USAGE;
    }
    if (rc == EXIT_OK && have_names && nnames != nrep) {
        fprintf(stderr, "magpie: error: --names count must equal number of reports\n");
        rc = EXIT_USAGE;
    }
    if (rc == EXIT_OK && no_xlsx && !csvdir) {
        fprintf(stderr, "magpie: error: --no-xlsx without --output_csvs_dir writes nothing\n");
        rc = EXIT_USAGE;
    }
    if (rc != EXIT_OK) {
        free(reports);
        free(names);
        return rc;
    }
    struct mp_tlcmp_opts o = {.reports = reports,
                              .n_reports = nrep,
                              .names = have_names ? names : NULL,
                              .sheets = sheets,
                              .on_note = print_note};
    struct mp_tlcmp_result *r = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    int e = mp_tlcmp_build(&o, &r, &d);
    if (!e && csvdir)
        e = mp_tlcmp_write_csvs(r, csvdir, &d);
    if (!e && !no_xlsx)
        e = mp_tlcmp_write_xlsx(r, xlsx, &d);
    if (e) {
        rc = cli_report_error(&d, e);
    } else {
        printf("compared %zu reports: %zu sheets", nrep, r->n);
        if (csvdir)
            printf(", CSVs in %s", csvdir);
        if (!no_xlsx)
            printf(", workbook %s", xlsx);
        printf("\n");
    }
    mp_tlcmp_free(r);
    free(reports);
    free(names);
    return rc;
}
