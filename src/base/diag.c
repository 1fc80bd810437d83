/* Error codes, diagnostics and the logging hook.
 *
 * A diag records the first error only: later failures are usually
 * consequences of the first, and the first is what the user must fix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/base.h>

void mp_assert_fail(const char *cond, const char *file, int line, const char *func)
{
    fprintf(stderr, "%s:%d: %s: invariant '%s' broken (a bug in magpie)\n", file, line, func, cond);
    abort();
}

const char *mp_strerror(int code)
{
    switch (code) {
    case MP_OK:
        return "success";
    case MP_EINVAL:
        return "invalid argument";
    case MP_ENOMEM:
        return "out of memory or size limit reached";
    case MP_EIO:
        return "input/output error";
    case MP_EPARSE:
        return "parse error";
    case MP_ETRUNC:
        return "truncated input";
    case MP_ENOTFOUND:
        return "not found";
    case MP_EUNSUP:
        return "not supported";
    case MP_ETIMEOUT:
        return "timed out";
    case MP_ECHILD:
        return "child process failed";
    case MP_ECANCEL:
        return "cancelled";
    default:
        return "unknown error";
    }
}

void mp_diag_clear(struct mp_diag *d)
{
    if (!d)
        return;
    memset(d, 0, sizeof(*d));
    d->offset = -1;
}

int mp_diag_set(struct mp_diag *d, int code, const char *fmt, ...)
{
    if (!d || d->code != 0)
        return code;
    d->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
    va_end(ap);
    return code;
}

void mp_diag_set_file(struct mp_diag *d, const char *file)
{
    if (!d || !file || d->file[0])
        return;
    snprintf(d->file, sizeof(d->file), "%s", file);
}

void mp_diag_set_pos(struct mp_diag *d, long long offset, long line, long col)
{
    if (!d)
        return;
    d->offset = offset;
    d->line = line;
    d->col = col;
}

void mp_diag_set_field(struct mp_diag *d, const char *field)
{
    if (!d || !field || d->field[0])
        return;
    snprintf(d->field, sizeof(d->field), "%s", field);
}

void mp_diag_format(const struct mp_diag *d, char *buf, size_t len)
{
    if (!buf || len == 0)
        return;
    buf[0] = '\0';
    if (!d)
        return;
    size_t n = 0;
#define APPEND(...)                                                                                \
    do {                                                                                           \
        if (n < len) {                                                                             \
            int w_ = snprintf(buf + n, len - n, __VA_ARGS__);                                      \
            if (w_ > 0)                                                                            \
                n += (size_t)w_;                                                                   \
        }                                                                                          \
    } while (0)
    if (d->file[0]) {
        APPEND("%s", d->file);
        if (d->line > 0)
            APPEND(":%ld:%ld", d->line, d->col);
        APPEND(": ");
    }
    if (d->offset >= 0)
        APPEND("byte offset %lld: ", d->offset);
    if (d->field[0])
        APPEND("field '%s': ", d->field);
    APPEND("%s", d->msg[0] ? d->msg : mp_strerror(d->code));
#undef APPEND
}

static mp_log_fn log_fn;
static void *log_user;
static enum mp_log_level log_max = MP_LOG_WARN;

void mp_log_set(mp_log_fn fn, void *user, enum mp_log_level max_level)
{
    log_fn = fn;
    log_user = user;
    log_max = max_level;
}

void mp_log(enum mp_log_level lvl, const char *fmt, ...)
{
    if (!log_fn || lvl > log_max)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    log_fn(lvl, msg, log_user);
}

void mp_log_stderr(enum mp_log_level lvl, const char *msg, void *user)
{
    (void)user;
    static const char *const names[] = {"error", "warning", "info", "debug"};
    char line[1200];
    int n = snprintf(line, sizeof(line), "magpie: %s: %s\n", names[lvl], msg);
    if (n > 0)
        fwrite(line, 1, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1, stderr);
}
