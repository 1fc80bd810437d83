/* Rank discovery on directory layouts, and the walk of a trace folder. */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include <magpie/base.h>
#include <magpie/io.h>
#include <magpie/trace.h>
#include <magpie/trace_capture.h>
#include <magpie/trace_tree.h>

#include "area.h"
#include "helpers.h"

static void touch(const char *rel)
{
    free(write_tmp(rel, "[]", 2));
}

/* Checks that the ranks found under tmp_root/dir are exactly ranks[i] with
 * paths ending in ends[i]. */
static void expect_ranks(const char *dir, size_t n, const int *ranks, const char *const *ends)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", tmp_root, dir);
    struct mp_trace_rank_list l;
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_trace_find_ranks(path, &l, &d);
    if (rc)
        fail_msg("%s: rc %d (%s)", dir, rc, d.msg);
    bool ok = l.n == n;
    for (size_t i = 0; ok && i < n; i++) {
        size_t pl = strlen(l.files[i].path), el = strlen(ends[i]);
        ok = l.files[i].rank == ranks[i] && pl >= el &&
             strcmp(l.files[i].path + pl - el, ends[i]) == 0;
    }
    if (!ok) {
        char got[2048] = "";
        for (size_t i = 0; i < l.n; i++) {
            size_t k = strlen(got);
            snprintf(got + k, sizeof(got) - k, " (%d, %s)", l.files[i].rank, l.files[i].path);
        }
        fail_msg("%s: found %zu:%s", dir, l.n, got);
    }
    mp_trace_rank_list_fini(&l);
}

void test_find_ranks(void **state)
{
    (void)state;
    /* vLLM names: rank from "-rank-N.", sorted numerically */
    touch("fr/flat/x-rank-1.123.pt.trace.json.gz");
    touch("fr/flat/x-rank-10.123.pt.trace.json.gz");
    touch("fr/flat/x-rank-0.123.pt.trace.json.gz");
    touch("fr/flat/x-rank-2.123.pt.trace.json.gz");
    touch("fr/flat/notes.txt");
    touch("fr/flat/benchmark_report.json");
    {
        const int r[] = {0, 1, 2, 10};
        const char *e[] = {"/x-rank-0.123.pt.trace.json.gz", "/x-rank-1.123.pt.trace.json.gz",
                           "/x-rank-2.123.pt.trace.json.gz", "/x-rank-10.123.pt.trace.json.gz"};
        expect_ranks("fr/flat", 4, r, e);
    }
    /* plain .pt.trace.json with ranks */
    touch("fr/plain/y-rank-1.9.pt.trace.json");
    touch("fr/plain/y-rank-0.9.pt.trace.json");
    {
        const int r[] = {0, 1};
        const char *e[] = {"/y-rank-0.9.pt.trace.json", "/y-rank-1.9.pt.trace.json"};
        expect_ranks("fr/plain", 2, r, e);
    }
    /* .json.gz rank files win over .json ones */
    touch("fr/pref/x-rank-0.1.pt.trace.json.gz");
    touch("fr/pref/z-rank-5.1.pt.trace.json");
    {
        const int r[] = {0};
        const char *e[] = {"/x-rank-0.1.pt.trace.json.gz"};
        expect_ranks("fr/pref", 1, r, e);
    }
    /* per-rank directories */
    touch("fr/dirs/rank_1/b.json.gz");
    touch("fr/dirs/rank_0/a.json.gz");
    {
        const int r[] = {0, 1};
        const char *e[] = {"/rank_0/a.json.gz", "/rank_1/b.json.gz"};
        expect_ranks("fr/dirs", 2, r, e);
    }
    touch("fr/dirs2/rank-1/t.json.gz");
    touch("fr/dirs2/rank2/t.json.gz");
    touch("fr/dirs2/rank_0/t.json.gz");
    {
        const int r[] = {0, 1, 2};
        const char *e[] = {"/rank_0/t.json.gz", "/rank-1/t.json.gz", "/rank2/t.json.gz"};
        expect_ranks("fr/dirs2", 3, r, e);
    }
    /* Magpie's own test: rank 0 by name, rank 1 by directory */
    touch("fr/mixed/trace-rank-0.pt.trace.json.gz");
    touch("fr/mixed/rank_1/trace.pt.trace.json.gz");
    {
        const int r[] = {0, 1};
        const char *e[] = {"/trace-rank-0.pt.trace.json.gz", "/rank_1/trace.pt.trace.json.gz"};
        expect_ranks("fr/mixed", 2, r, e);
    }
    /* TP rank in a directory name */
    touch("fr/tp/pp0_dp0_tp1/t.json.gz");
    touch("fr/tp/pp0_dp0_tp0/t.json.gz");
    {
        const int r[] = {0, 1};
        const char *e[] = {"/pp0_dp0_tp0/t.json.gz", "/pp0_dp0_tp1/t.json.gz"};
        expect_ranks("fr/tp", 2, r, e);
    }
    /* a workspace holding torch_trace/ is descended into */
    touch("fr/ws/torch_trace/m-rank-1.1.pt.trace.json.gz");
    touch("fr/ws/torch_trace/m-rank-0.1.pt.trace.json.gz");
    touch("fr/ws/benchmark_report.json");
    touch("fr/ws/other.json.gz");
    {
        const int r[] = {0, 1};
        const char *e[] = {"/torch_trace/m-rank-0.1.pt.trace.json.gz",
                           "/torch_trace/m-rank-1.1.pt.trace.json.gz"};
        expect_ranks("fr/ws", 2, r, e);
        char path[4200];
        snprintf(path, sizeof(path), "%s/fr/ws/", tmp_root);
        struct mp_trace_rank_list l;
        struct mp_diag d;
        mp_diag_clear(&d);
        assert_int_equal(mp_trace_find_ranks(path, &l, &d), 0);
        assert_non_null(l.dir);
        size_t dl = strlen(l.dir);
        assert_true(dl >= 12 && strcmp(l.dir + dl - 12, "/torch_trace") == 0);
        mp_trace_rank_list_fini(&l);
    }
    /* capture_traces/ is ignored while anything else exists */
    touch("fr/cap/sglang_decode.json.gz");
    touch("fr/cap/capture_traces/bs_32_rank0.json.gz");
    touch("fr/cap/capture_traces/graph_capture_rank_0.1.pt.trace.json.gz");
    {
        const int r[] = {0};
        const char *e[] = {"/cap/sglang_decode.json.gz"};
        expect_ranks("fr/cap", 1, r, e);
    }
    touch("fr/caponly/capture_traces/graph-rank-0.1.pt.trace.json.gz");
    {
        const int r[] = {0};
        const char *e[] = {"/capture_traces/graph-rank-0.1.pt.trace.json.gz"};
        expect_ranks("fr/caponly", 1, r, e);
    }
    /* fallback: every *.json.gz, then every *.json, enumerated */
    touch("fr/fb/b.json.gz");
    touch("fr/fb/a.json.gz");
    touch("fr/fb/c.json");
    touch("fr/fb/readme.md");
    {
        const int r[] = {0, 1, 2};
        const char *e[] = {"/fb/a.json.gz", "/fb/b.json.gz", "/fb/c.json"};
        expect_ranks("fr/fb", 3, r, e);
    }
    /* a rank-like name ABOVE the searched directory says nothing about
     * the files in it: they are pseudo-ranks 0 and 1, not both rank 4 */
    touch("fr/job_tp4/traces/a.json.gz");
    touch("fr/job_tp4/traces/b.json.gz");
    touch("fr/rank_3/traces/a.json.gz");
    touch("fr/rank_3/traces/b.json.gz");
    {
        const int r[] = {0, 1};
        const char *e[] = {"/traces/a.json.gz", "/traces/b.json.gz"};
        expect_ranks("fr/job_tp4/traces", 2, r, e);
        expect_ranks("fr/rank_3/traces", 2, r, e);
    }

    /* errors */
    struct mp_trace_rank_list l;
    struct mp_diag d;
    char path[4200];
    snprintf(path, sizeof(path), "%s/fr/empty", tmp_root);
    assert_int_equal(mkdir(path, 0755), 0);
    mp_diag_clear(&d);
    int rc = mp_trace_find_ranks(path, &l, &d);
    assert_true(rc != 0);
    assert_int_equal(l.n, 0);
    snprintf(path, sizeof(path), "%s/fr/nonexistent", tmp_root);
    mp_diag_clear(&d);
    assert_int_equal(mp_trace_find_ranks(path, &l, &d), MP_ENOTFOUND);
    assert_int_equal(l.n, 0);
    mp_trace_rank_list_fini(&l);

    /* the real two-rank workspace */
    char pb[4096];
    if (shared_trace(pb, sizeof(pb), "h200-tp2")) {
        mp_diag_clear(&d);
        assert_int_equal(mp_trace_find_ranks(pb, &l, &d), 0);
        assert_int_equal(l.n, 2);
        assert_int_equal(l.files[0].rank, 0);
        assert_int_equal(l.files[1].rank, 1);
        assert_non_null(strstr(l.files[0].path, "torch_trace/tp2-rank-0."));
        assert_non_null(strstr(l.files[1].path, "torch_trace/tp2-rank-1."));
        mp_trace_rank_list_fini(&l);
    }
}

struct seen {
    char got[1024];
};

static int note_file(const char *path, bool under_capture, void *user)
{
    struct seen *s = user;
    const char *rel = strstr(path, "/fw/") + 4;
    size_t k = strlen(s->got);
    snprintf(s->got + k, sizeof(s->got) - k, "%s%s%s", k ? " " : "", rel,
             under_capture ? "(c)" : "");
    return strcmp(rel, "stop.json") == 0 ? MP_ECANCEL : 0;
}

static int cmp_word(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* the walk's files, sorted (readdir order is the file system's) */
static void expect_walk(bool hidden, const char *want)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/fw", tmp_root);
    struct seen s = {{0}};
    assert_int_equal(mp_trace_files_each(path, hidden, note_file, &s), 0);
    char *w[16];
    size_t n = 0;
    for (char *t = strtok(s.got, " "); t && n < 16; t = strtok(NULL, " "))
        w[n++] = t;
    qsort(w, n, sizeof(*w), cmp_word);
    char got[1024] = "";
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(got);
        snprintf(got + k, sizeof(got) - k, "%s%s", i ? " " : "", w[i]);
    }
    assert_string_equal(got, want);
}

void test_files_each(void **state)
{
    (void)state;
    touch("fw/a.json");
    touch("fw/b.json.gz");
    touch("fw/c.txt");
    touch("fw/.h.json");
    touch("fw/.hd/x.json");
    touch("fw/d/e/f.json");
    touch("fw/d/capture_traces/g.json.gz");
    touch("fw/d/capture_traces/sub/h.json");
    expect_walk(false, "a.json b.json.gz d/capture_traces/g.json.gz(c) "
                       "d/capture_traces/sub/h.json(c) d/e/f.json");
    expect_walk(true, ".h.json .hd/x.json a.json b.json.gz d/capture_traces/g.json.gz(c) "
                      "d/capture_traces/sub/h.json(c) d/e/f.json");
    /* fn's nonzero return stops the walk and is returned */
    touch("fw/stop.json");
    char path[4200];
    snprintf(path, sizeof(path), "%s/fw", tmp_root);
    struct seen s = {{0}};
    assert_int_equal(mp_trace_files_each(path, false, note_file, &s), MP_ECANCEL);
    snprintf(path, sizeof(path), "%s/fw/none", tmp_root);
    assert_int_equal(mp_trace_files_each(path, false, note_file, &s), MP_ENOTFOUND);
}
