/* Gap analysis outputs: Magpie's CSV files, its `gap_analysis` JSON object
 * and its stdout summary table, byte for byte where Magpie defines them. */
#include <stdio.h>
#include <string.h>

#include <magpie/analysis.h>
#include <magpie/fmt.h>

static double pct_of(double v, double total)
{
    return total > 0 ? v / total * 100.0 : 0.0;
}

int mp_gap_csv(const struct mp_gap_result *r, const struct mp_gap_config *cfg, int rank_index,
               struct mp_buf *out)
{
    struct mp_csv c;
    mp_csv_init(&c, out, "\r\n");
    const struct mp_gap_kernel *ks = rank_index < 0 ? r->merged : r->ranks[rank_index].kernels;
    size_t n = rank_index < 0 ? r->n_merged : r->ranks[rank_index].n_kernels;
    double total = rank_index < 0 ? r->total_us : r->ranks[rank_index].total_us;
    int rc = 0;
    static const char *const cols[] = {"Name",          "Calls",   "Self CUDA total (us)",
                                       "Avg time (us)", "% Total", "Input Shapes"};
    for (size_t i = 0; i < 6 && !rc; i++)
        rc = mp_csv_str(&c, cols[i]);
    if (cfg->group_normalized && !rc) {
        rc = mp_csv_str(&c, "Variants");
        if (!rc)
            rc = mp_csv_str(&c, "Kernel Names");
    }
    if (!rc)
        rc = mp_csv_end_row(&c);
    for (size_t i = 0; i < n && !rc; i++) {
        const struct mp_gap_kernel *k = &ks[i];
        double avg = k->calls ? k->total_us / (double)k->calls : 0.0;
        rc = mp_csv_str(&c, k->name);
        if (!rc)
            rc = mp_csv_fmt(&c, "%llu", (unsigned long long)k->calls);
        if (!rc)
            rc = mp_csv_fmt(&c, "%.2f", k->total_us);
        if (!rc)
            rc = mp_csv_fmt(&c, "%.2f", avg);
        if (!rc)
            rc = mp_csv_fmt(&c, "%.2f", pct_of(k->total_us, total));
        if (!rc)
            rc = mp_csv_str(&c, k->shapes);
        if (cfg->group_normalized && !rc) {
            rc = mp_csv_fmt(&c, "%u", k->n_variants);
            if (!rc)
                rc = mp_csv_str(&c, k->variants);
        }
        if (!rc)
            rc = mp_csv_end_row(&c);
    }
    return rc;
}

int mp_gap_write_csv(const struct mp_gap_result *r, const struct mp_gap_config *cfg,
                     const char *dir, bool rank_csv, struct mp_diag *d)
{
    int rc = mp_fs_mkdirs(dir, d);
    if (rc)
        return rc;
    struct mp_buf b;
    mp_buf_init(&b, 0);
    char path[4200];
    /* Per-rank files first: if anything fails, the main CSV from an earlier
     * run is left as it was rather than paired with half-written ranks. */
    size_t ok_ranks = 0;
    for (size_t i = 0; i < r->n_ranks; i++)
        ok_ranks += r->ranks[i].error == NULL;
    if (rank_csv && ok_ranks > 1) {
        for (size_t i = 0; i < r->n_ranks && !rc; i++) {
            if (r->ranks[i].error)
                continue;
            mp_buf_reset(&b);
            rc = mp_gap_csv(r, cfg, (int)i, &b);
            if (rc) {
                rc = mp_diag_set(d, rc, "out of memory formatting CSV");
                break;
            }
            snprintf(path, sizeof(path), "%s/gap_analysis_rank%d.csv", dir, r->ranks[i].rank);
            rc = mp_fs_write_atomic(path, b.data ? b.data : "", b.len, d);
        }
    }
    if (!rc) {
        mp_buf_reset(&b);
        rc = mp_gap_csv(r, cfg, -1, &b);
        if (rc)
            rc = mp_diag_set(d, rc, "out of memory formatting CSV");
    }
    if (!rc) {
        snprintf(path, sizeof(path), "%s/gap_analysis.csv", dir);
        rc = mp_fs_write_atomic(path, b.data ? b.data : "", b.len, d);
    }
    mp_buf_fini(&b);
    return rc;
}

static int json_str_or_null(struct mp_buf *b, const char *s)
{
    return s ? mp_json_str(b, s, strlen(s)) : mp_buf_puts(b, "null");
}

static int json_list(struct mp_buf *b, const char *const *v, int n, bool null_when_empty)
{
    if (n == 0 && null_when_empty)
        return mp_buf_puts(b, "null");
    int rc = mp_buf_putc(b, '[');
    for (int i = 0; i < n && !rc; i++) {
        if (i)
            rc = mp_buf_puts(b, ", ");
        if (!rc)
            rc = mp_json_str(b, v[i], strlen(v[i]));
    }
    return rc ? rc : mp_buf_putc(b, ']');
}

static int json_kernels(struct mp_buf *b, const struct mp_gap_kernel *ks, size_t n, double total,
                        bool grouped)
{
    int rc = mp_buf_putc(b, '[');
    for (size_t i = 0; i < n && !rc; i++) {
        const struct mp_gap_kernel *k = &ks[i];
        rc = mp_buf_puts(b, i ? ", {\"name\": " : "{\"name\": ");
        rc = rc ? rc : mp_json_str(b, k->name, strlen(k->name));
        rc = rc ? rc
                : mp_buf_printf(b, ", \"calls\": %llu, \"self_cuda_total_us\": ",
                                (unsigned long long)k->calls);
        rc = rc ? rc : mp_json_double(b, k->total_us);
        rc = rc ? rc : mp_buf_puts(b, ", \"avg_time_us\": ");
        rc = rc ? rc : mp_json_double(b, k->calls ? k->total_us / (double)k->calls : 0.0);
        rc = rc ? rc : mp_buf_puts(b, ", \"pct_total\": ");
        rc = rc ? rc : mp_json_double(b, pct_of(k->total_us, total));
        rc = rc ? rc : mp_buf_puts(b, ", \"input_shapes\": ");
        rc = rc ? rc : mp_json_str(b, k->shapes, strlen(k->shapes));
        rc = rc ? rc : mp_buf_puts(b, ", \"min_us\": ");
        rc = rc ? rc : mp_json_double(b, k->min_us);
        rc = rc ? rc : mp_buf_puts(b, ", \"max_us\": ");
        rc = rc ? rc : mp_json_double(b, k->max_us);
        if (grouped && !rc) {
            rc = mp_buf_printf(b, ", \"variants\": %u, \"kernel_names\": ", k->n_variants);
            rc = rc ? rc : mp_json_str(b, k->variants, strlen(k->variants));
        }
        rc = rc ? rc : mp_buf_putc(b, '}');
    }
    return rc ? rc : mp_buf_putc(b, ']');
}

int mp_gap_json(const struct mp_gap_result *r, const struct mp_gap_config *cfg,
                const char *csv_path, const char *output_dir, struct mp_buf *b)
{
    int rc = mp_buf_puts(b, "{\"config\": {\"enabled\": true, \"trace_start_pct\": ");
    rc = rc ? rc : mp_json_double(b, cfg->start_pct);
    rc = rc ? rc : mp_buf_puts(b, ", \"trace_end_pct\": ");
    rc = rc ? rc : mp_json_double(b, cfg->end_pct);
    rc = rc ? rc : mp_buf_printf(b, ", \"top_k\": %d, \"min_duration_us\": ", cfg->top_k);
    rc = rc ? rc : mp_json_double(b, cfg->min_duration_us);
    rc = rc ? rc : mp_buf_puts(b, ", \"categories\": ");
    rc = rc ? rc : json_list(b, cfg->categories, cfg->categories_all ? 0 : cfg->n_categories, true);
    rc = rc ? rc : mp_buf_puts(b, ", \"ignore_categories\": ");
    rc = rc ? rc : json_list(b, cfg->ignore, cfg->n_ignore, false);
    rc = rc ? rc
            : mp_buf_puts(b, ", \"find_kernel_sources\": false, \"kernel_source_repos\": null, "
                             "\"auto_clone_repos\": true, \"repos_base_dir\": null");
    rc = rc ? rc
            : mp_buf_printf(b, ", \"group_by\": \"%s\"}",
                            cfg->group_normalized ? "normalized" : "name");
    rc = rc ? rc : mp_buf_puts(b, ", \"total_duration_us\": ");
    rc = rc ? rc : mp_json_double(b, r->total_us);
    rc = rc ? rc : mp_buf_printf(b, ", \"num_ranks\": %zu, \"top_kernels\": ", r->n_ranks);
    rc = rc ? rc : json_kernels(b, r->merged, r->n_merged, r->total_us, cfg->group_normalized);
    rc = rc ? rc : mp_buf_puts(b, ", \"clamped_trace_paths\": [], \"errors\": [");
    bool first = true;
    for (size_t i = 0; i < r->n_ranks && !rc; i++) {
        if (!r->ranks[i].error)
            continue;
        rc = first ? 0 : mp_buf_puts(b, ", ");
        first = false;
        rc = rc ? rc : mp_json_str(b, r->ranks[i].error, strlen(r->ranks[i].error));
    }
    rc = rc ? rc : mp_buf_puts(b, "], \"csv_path\": ");
    rc = rc ? rc : json_str_or_null(b, csv_path);
    rc = rc ? rc : mp_buf_puts(b, ", \"output_dir\": ");
    rc = rc ? rc : json_str_or_null(b, output_dir);
    rc = rc ? rc : mp_buf_puts(b, ", \"trace_dir\": ");
    rc = rc ? rc : json_str_or_null(b, r->trace_dir);
    rc = rc ? rc : mp_buf_puts(b, ", \"ranks\": [");
    for (size_t i = 0; i < r->n_ranks && !rc; i++) {
        const struct mp_gap_rank *rk = &r->ranks[i];
        rc = mp_buf_printf(b, "%s{\"rank\": %d, \"trace_file\": ", i ? ", " : "", rk->rank);
        rc = rc ? rc : mp_json_str(b, rk->trace_file, strlen(rk->trace_file));
        rc = rc ? rc : mp_buf_puts(b, ", \"total_duration_us\": ");
        rc = rc ? rc : mp_json_double(b, rk->total_us);
        rc = rc ? rc
                : mp_buf_printf(b,
                                ", \"num_kernels\": %zu, \"events\": %llu, "
                                "\"bytes\": %llu, \"two_pass\": %s, \"top_kernels\": ",
                                rk->n_kernels_all, (unsigned long long)rk->events,
                                (unsigned long long)rk->bytes, rk->two_pass ? "true" : "false");
        rc = rc ? rc
                : json_kernels(b, rk->kernels, rk->n_kernels, rk->total_us, cfg->group_normalized);
        rc = rc ? rc : mp_buf_puts(b, ", \"error\": ");
        rc = rc ? rc : json_str_or_null(b, rk->error);
        rc = rc ? rc : mp_buf_putc(b, '}');
    }
    double mbps = r->seconds > 0 ? (double)r->bytes / 1e6 / r->seconds : 0.0;
    rc = rc ? rc
            : mp_buf_printf(b,
                            "], \"stats\": {\"bytes\": %llu, \"events\": %llu, "
                            "\"seconds\": %.6f, \"mb_per_s\": %.1f}}",
                            (unsigned long long)r->bytes, (unsigned long long)r->events, r->seconds,
                            mbps);
    return rc;
}

/* Number of characters (UTF-8 code points) in s. */
static size_t u8len(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Byte length of the first `chars` code points of s. */
static size_t u8prefix(const char *s, size_t chars)
{
    size_t i = 0, n = 0;
    for (; s[i]; i++) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (n == chars)
                break;
            n++;
        }
    }
    return i;
}

int mp_gap_summary(const struct mp_gap_result *r, const struct mp_gap_config *cfg,
                   const char *output_dir, struct mp_buf *b)
{
    char s[64], e[64];
    mp_fmt_pyfloat(cfg->start_pct, s, sizeof(s));
    mp_fmt_pyfloat(cfg->end_pct, e, sizeof(e));
    int rc = mp_buf_printf(b, "\nGap Analysis (%s%%-%s%% window, category-filtered)\n", s, e);
    rc = rc ? rc
            : mp_buf_printf(b, "%s\n",
                            "============================================================");
    rc = rc ? rc : mp_buf_printf(b, "Ranks analyzed: %zu\n", r->n_ranks);
    if (!cfg->categories_all && cfg->n_categories > 0) {
        rc = rc ? rc : mp_buf_puts(b, "Categories: ");
        for (int i = 0; i < cfg->n_categories && !rc; i++)
            rc = mp_buf_printf(b, "%s%s", i ? ", " : "", cfg->categories[i]);
        rc = rc ? rc : mp_buf_putc(b, '\n');
    }
    if (cfg->n_ignore > 0) {
        rc = rc ? rc : mp_buf_puts(b, "Ignore: ");
        for (int i = 0; i < cfg->n_ignore && !rc; i++)
            rc = mp_buf_printf(b, "%s%s", i ? ", " : "", cfg->ignore[i]);
        rc = rc ? rc : mp_buf_putc(b, '\n');
    }
    rc = rc ? rc : mp_buf_printf(b, "Total duration: %.2f us\n", r->total_us);
    rc = rc ? rc
            : mp_buf_printf(b, "\n%-50s %6s %15s %12s %8s\n", "Name", "Calls", "Self CUDA (us)",
                            "Avg (us)", "% Total");
    for (int i = 0; i < 95 && !rc; i++)
        rc = mp_buf_putc(b, '-');
    rc = rc ? rc : mp_buf_putc(b, '\n');
    for (size_t i = 0; i < r->n_merged && !rc; i++) {
        const struct mp_gap_kernel *k = &r->merged[i];
        size_t chars = u8len(k->name);
        rc = mp_buf_puts(b, "  ");
        if (chars <= 50) {
            rc = rc ? rc : mp_buf_puts(b, k->name);
            for (size_t p = chars; p < 50 && !rc; p++)
                rc = mp_buf_putc(b, ' ');
        } else {
            rc = rc ? rc : mp_buf_append(b, k->name, u8prefix(k->name, 47));
            rc = rc ? rc : mp_buf_puts(b, "...");
        }
        double avg = k->calls ? k->total_us / (double)k->calls : 0.0;
        rc = rc ? rc
                : mp_buf_printf(b, " %6llu %15.2f %12.2f %7.2f%%\n", (unsigned long long)k->calls,
                                k->total_us, avg, pct_of(k->total_us, r->total_us));
    }
    rc = rc ? rc : mp_buf_printf(b, "\nOutput: %s\n", output_dir);
    return rc;
}
