/* The op-replay hook of a kernel row: the `magpie trace replay` command that
 * rebuilds the op which launched a kernel (docs/replay.md, "From a kernel
 * row to a replay"). Shared by gap analysis (gap_analysis.csv's
 * replay_command), `trace sources` and the MCP find_kernel_sources tool, so
 * the three spell it alike. Which op the kernel belongs to is decided by
 * `trace replay --kernel` when the command runs; the one thing looked up
 * here, once per trace by the caller, is a capture_traces directory beside
 * the trace (--capture-folder). */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/sources.h>

static int sh_quote(struct mp_buf *b, const char *s)
{
    int rc = mp_buf_putc(b, '\'');
    for (; *s && !rc; s++)
        rc = *s == '\'' ? mp_buf_puts(b, "'\\''") : mp_buf_putc(b, *s);
    return rc ? rc : mp_buf_putc(b, '\'');
}

char *mp_src_capture_dir(const char *trace)
{
    const char *sl = strrchr(trace, '/');
    char *dir = sl ? mp_strndup(trace, (size_t)(sl - trace) + 1) : mp_strdup("./");
    char *cap = dir ? mp_fs_join(dir, "capture_traces") : NULL;
    free(dir);
    DIR *dp = cap ? opendir(cap) : NULL;
    bool any = false;
    for (struct dirent *e; dp && !any && (e = readdir(dp));)
        any = e->d_name[0] != '.';
    if (dp)
        closedir(dp);
    if (!any) {
        free(cap);
        return NULL;
    }
    return cap;
}

int mp_src_replay_command(struct mp_buf *b, const char *trace, const char *capture,
                          const char *kernel, size_t row)
{
    int rc = mp_buf_puts(b, "magpie trace replay ");
    rc = rc ? rc : sh_quote(b, trace);
    if (capture) { /* kernels that ran inside a graph get their ops from the captures */
        rc = rc ? rc : mp_buf_puts(b, " --capture-folder ");
        rc = rc ? rc : sh_quote(b, capture);
    }
    rc = rc ? rc : mp_buf_puts(b, " --kernel ");
    rc = rc ? rc : sh_quote(b, kernel);
    return rc ? rc : mp_buf_printf(b, " --top 1 -o replay_%zu", row);
}
