/* The op-replay hook of a kernel row: the `magpie trace replay` command that
 * rebuilds the op which launched a kernel (docs/replay.md, "From a kernel
 * row to a replay"). Shared by gap analysis (gap_analysis.csv's
 * replay_command), `trace sources` and the MCP find_kernel_sources tool, so
 * the three spell it alike. It only writes text: which op the kernel belongs
 * to is decided by `trace replay --kernel` when the command runs. */
#include <magpie/sources.h>

static int sh_quote(struct mp_buf *b, const char *s)
{
    int rc = mp_buf_putc(b, '\'');
    for (; *s && !rc; s++)
        rc = *s == '\'' ? mp_buf_puts(b, "'\\''") : mp_buf_putc(b, *s);
    return rc ? rc : mp_buf_putc(b, '\'');
}

int mp_src_replay_command(struct mp_buf *b, const char *trace, const char *kernel, size_t row)
{
    int rc = mp_buf_puts(b, "magpie trace replay ");
    rc = rc ? rc : sh_quote(b, trace);
    rc = rc ? rc : mp_buf_puts(b, " --kernel ");
    rc = rc ? rc : sh_quote(b, kernel);
    return rc ? rc : mp_buf_printf(b, " --top 1 -o replay_%zu", row);
}
