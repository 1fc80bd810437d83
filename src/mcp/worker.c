/* The worker side of a tool call (`magpie mcp --worker TOOL ARGS_FILE`):
 * reads the decoded arguments, runs the tool's body and prints its JSON on
 * stdout. Progress goes to the file named by MAGPIE_MCP_PROGRESS as lines
 * "<done> <total> <message>". The worker is a child subreaper, so whatever
 * its tool starts stays in its tree until the server has swept it. */
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <magpie/kernel.h>

#include "mcp_int.h"

struct mcp_wctx {
    FILE *progress;
    double last_pct;
    uint64_t last_ns;
};

void mcp_progress(struct mcp_wctx *w, double done, double total, const char *msg)
{
    if (!w || !w->progress)
        return;
    fprintf(w->progress, "%.17g %.17g %s\n", done, total > 0 ? total : 0, msg ? msg : "");
    fflush(w->progress);
}

void mcp_trace_progress(uint64_t bytes, uint64_t raw_pos, uint64_t raw_size, void *user)
{
    struct mcp_wctx *w = user;
    (void)bytes;
    uint64_t now = mp_time_ns();
    if (!w || (now - w->last_ns < 250000000ull && raw_pos < raw_size))
        return;
    w->last_ns = now;
    char msg[96];
    snprintf(msg, sizeof(msg), "reading traces: %.1f of %.1f MB", (double)raw_pos / 1e6,
             (double)raw_size / 1e6);
    mcp_progress(w, (double)raw_pos, (double)raw_size, msg);
}

void mcp_line_progress(const char *line, void *user)
{
    struct mcp_wctx *w = user;
    if (!w)
        return;
    w->last_pct += 1;
    mcp_progress(w, w->last_pct, 0, line);
}

int mcp_fail(json_t **result, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof(msg))
        mcp_utf8_trim(msg); /* cut on a character boundary */
    json_t *e = json_object();
    json_object_set_new(e, "error", mcp_jstr(msg));
    *result = e;
    return 1;
}

int mcp_fail_diag(json_t **result, const char *what, const struct mp_diag *d)
{
    char msg[1600];
    mp_diag_format(d, msg, sizeof(msg));
    mcp_utf8_trim(msg);
    return mcp_fail(result, "%s: %s", what, msg);
}

const char *mcp_str(json_t *args, const char *key)
{
    json_t *v = json_object_get(args, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

long long mcp_int(json_t *args, const char *key)
{
    json_t *v = json_object_get(args, key);
    return json_is_integer(v) ? (long long)json_integer_value(v)
                              : (json_is_number(v) ? (long long)json_number_value(v) : 0);
}

double mcp_num(json_t *args, const char *key)
{
    json_t *v = json_object_get(args, key);
    return json_is_number(v) ? json_number_value(v) : 0;
}

bool mcp_bool(json_t *args, const char *key)
{
    return json_is_true(json_object_get(args, key));
}

int mcp_strs(json_t *a, const char **dst, int max)
{
    int n = 0;
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v)
    {
        if (n < max)
            dst[n++] = json_string_value(v);
    }
    return n;
}

json_t *mcp_parse_buf(const struct mp_buf *b)
{
    if (!b || !b->len)
        return NULL;
    return json_loadb(b->data, b->len, JSON_DECODE_ANY, NULL);
}

static char self_exe[PATH_MAX];

const char *mcp_self_exe(void)
{
    if (!self_exe[0] && !realpath("/proc/self/exe", self_exe))
        snprintf(self_exe, sizeof(self_exe), "magpie");
    return self_exe;
}

int mp_mcp_worker_main(const char *tool, const char *args_path)
{
    /* the server's warm runner pool (call.c pool_start): its control pipe
     * on fd 3, its listening socket on fd 4; args_path is the socket's path */
    if (strcmp(tool, "@warm-pool") == 0)
        return mp_kernel_warm_pool_main(3, 4);
    const struct mcp_tool *t = mcp_tool_find(tool);
    if (!t) {
        fprintf(stderr, "magpie: error: unknown MCP tool '%s'\n", tool);
        return 2;
    }
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    /* stop with the server: a worker never outlives it */
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    json_error_t je;
    json_t *raw = json_load_file(args_path, 0, &je);
    if (!raw) {
        fprintf(stderr, "magpie: error: %s: %s\n", args_path, je.text);
        return 2;
    }
    char err[1400];
    json_t *args = mcp_args_decode(t, raw, err, sizeof(err));
    json_decref(raw);
    json_t *result = NULL;
    int rc;
    struct mcp_wctx w = {0};
    const char *pp = getenv("MAGPIE_MCP_PROGRESS");
    if (pp && *pp)
        w.progress = fopen(pp, "a");
    if (!args) {
        rc = mcp_fail(&result, "%s", err);
    } else {
        rc = t->run(&w, args, &result);
        if (!result)
            rc = mcp_fail(&result, "%s produced no result", t->name);
    }
    if (w.progress)
        fclose(w.progress);
    char *text = json_dumps(result, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
    if (text) {
        fputs(text, stdout);
        fputc('\n', stdout);
        free(text);
    }
    fflush(stdout);
    json_decref(result);
    json_decref(args);
    /* orphans the tool's children left (we are their subreaper) */
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    return rc ? 1 : 0;
}
