/* `magpie trace compare`: compares two or more TraceLens-compatible report
 * directories sheet by sheet, with the options and outputs of TraceLens's
 * TraceLens_compare_perf_reports_pytorch (the comparison is in
 * src/tracelens/compare.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/tl_compare.h>

#include "cli.h"

static void compare_usage(FILE *f)
{
    fprintf(f, "usage: magpie trace compare REPORT_A REPORT_B [REPORT ...] [options]\n\n"
               "Compares TraceLens-compatible reports (directories of per-sheet CSV files, as\n"
               "`magpie trace report -o DIR` and TraceLens's --output_csvs_dir write them, or\n"
               ".xlsx workbooks as --xlsx / --output_xlsx_path write them) as\n"
               "TraceLens_compare_perf_reports_pytorch does: the first report is the baseline;\n"
               "rows are joined on each sheet's keys, compared columns get <col>__<tag>_diff\n"
               "(variant - baseline) and <col>__<tag>_pct (100 * diff / baseline) columns, and\n"
               "the per-op sheets are split per variant into <sheet>_intersect_<tag>,\n"
               "<sheet>_only_baseline_<tag> and <sheet>_only_variant_<tag>.\n\n"
               "options (TraceLens's names):\n"
               "  -o, --output FILE.xlsx        workbook to write (default comparison.xlsx)\n"
               "  --no-xlsx                     no workbook (use with --output_csvs_dir)\n"
               "  --output_csvs_dir DIR         also write each sheet as DIR/<sheet>.csv\n"
               "                                (also --output-csvs-dir)\n"
               "  --names TAG [TAG ...]         one tag per report (default: the report's file\n"
               "                                name without its extension)\n"
               "  --sheets GROUP [GROUP ...]    gpu_timeline, ops_summary, kernel_summary,\n"
               "                                ops_all, roofline or all (default all)\n\n"
               "exit status: 0 ok, 2 usage or input error (missing sheet or key column, repeated\n"
               "tags), 1 other errors\n\n"
               "examples:\n"
               "  magpie trace report base.json.gz -o base_csvs\n"
               "  magpie trace report new.json.gz -o new_csvs\n"
               "  magpie trace compare base_csvs new_csvs --names base new \\\n"
               "      --output_csvs_dir cmp -o cmp.xlsx\n");
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
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            compare_usage(stdout);
            free(reports);
            free(names);
            return EXIT_OK;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "magpie: error: %s wants a file name\n", a);
                rc = EXIT_USAGE;
            } else {
                xlsx = argv[++i];
            }
        } else if (!strcmp(a, "--output_csvs_dir") || !strcmp(a, "--output-csvs-dir")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "magpie: error: %s wants a directory\n", a);
                rc = EXIT_USAGE;
            } else {
                csvdir = argv[++i];
            }
        } else if (!strcmp(a, "--no-xlsx")) {
            no_xlsx = true;
        } else if (!strcmp(a, "--names")) {
            have_names = true;
            while (i + 1 < argc && argv[i + 1][0] != '-')
                names[nnames++] = argv[++i];
        } else if (!strcmp(a, "--sheets")) {
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
