/* Shell-style word splitting and quoting with Python shlex's rules.
 *
 * Magpie (Python) splits command strings from YAML with shlex.split and
 * prints commands with shlex.join; doing exactly the same here keeps
 * existing configs meaning the same thing. Note that shlex differs from a
 * POSIX shell inside double quotes: only \" and \\ are escapes there, so
 * "a\$b" stays a\$b. */
#include <stdlib.h>
#include <string.h>

#include <magpie/proc.h>

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

void mp_proc_argv_free(char **argv)
{
    if (!argv)
        return;
    for (char **a = argv; *a; a++)
        free(*a);
    free(argv);
}

/* Line and column (1-based) of byte offset off in s. */
static void position(const char *s, size_t off, long *line, long *col)
{
    *line = 1;
    size_t start = 0;
    for (size_t i = 0; i < off; i++) {
        if (s[i] == '\n') {
            (*line)++;
            start = i + 1;
        }
    }
    *col = (long)(off - start) + 1;
}

/* Reports an unterminated quote (opened at s[at]) or a trailing backslash. */
static int split_error(const char *s, size_t at, struct mp_diag *d)
{
    long line, col;
    position(s, at, &line, &col);
    mp_diag_set_pos(d, (long long)at, line, col);
    if (s[at] == '\\')
        return mp_diag_set(d, MP_EPARSE, "no character after the backslash at line %ld, column %ld",
                           line, col);
    return mp_diag_set(d, MP_EPARSE,
                       "no closing quotation for the %s opened at line %ld, column %ld",
                       s[at] == '\'' ? "' (single quote)" : "\" (double quote)", line, col);
}

// NOLINTNEXTLINE(readability-non-const-parameter): MP_GROW writes *cap
static int push_word(char ***argv, size_t *n, size_t *cap, struct mp_buf *w)
{
    if (MP_GROW(*argv, *cap, *n + 2, 8))
        return MP_ENOMEM;
    char *s = mp_strndup(w->data ? w->data : "", w->len);
    if (!s)
        return MP_ENOMEM;
    (*argv)[(*n)++] = s;
    (*argv)[*n] = NULL;
    mp_buf_reset(w);
    return 0;
}

int mp_proc_split(const char *s, char ***argv_out, int *argc_out, struct mp_diag *d)
{
    enum { OUT, WORD, SQ, DQ } st = OUT;

    int rc = 0;
    char **argv = NULL;
    size_t n = 0, cap = 0, quote_at = 0;
    struct mp_buf w;
    mp_buf_init(&w, 0);

    if (argv_out)
        *argv_out = NULL;
    if (argc_out)
        *argc_out = 0;
    if (!s || !argv_out)
        return MP_EINVAL;
    /* Always return an array, even for an empty string. */
    argv = mp_calloc(1, sizeof(char *));
    if (!argv)
        return MP_ENOMEM;
    cap = 1;

    for (size_t i = 0;; i++) {
        char c = s[i];
        if (st == SQ) {
            if (c == '\0') {
                rc = split_error(s, quote_at, d);
                goto out;
            }
            if (c == '\'')
                st = WORD;
            else if ((rc = mp_buf_putc(&w, c)) != 0)
                goto out;
            continue;
        }
        if (st == DQ) {
            if (c == '\0') {
                rc = split_error(s, quote_at, d);
                goto out;
            }
            if (c == '"') {
                st = WORD;
                continue;
            }
            if (c == '\\') {
                char nx = s[i + 1];
                if (nx == '\0') {
                    quote_at = i;
                    rc = split_error(s, quote_at, d);
                    goto out;
                }
                if (nx == '"' || nx == '\\') {
                    c = nx;
                    i++;
                }
            }
            if ((rc = mp_buf_putc(&w, c)) != 0)
                goto out;
            continue;
        }
        /* OUT or WORD */
        if (c == '\0' || is_space(c)) {
            if (st == WORD && (rc = push_word(&argv, &n, &cap, &w)) != 0)
                goto out;
            st = OUT;
            if (c == '\0')
                break;
            continue;
        }
        if (c == '\'' || c == '"') {
            quote_at = i;
            st = c == '\'' ? SQ : DQ;
            continue;
        }
        if (c == '\\') {
            if (s[i + 1] == '\0') {
                quote_at = i;
                rc = split_error(s, quote_at, d);
                goto out;
            }
            c = s[++i];
        }
        st = WORD;
        if ((rc = mp_buf_putc(&w, c)) != 0)
            goto out;
    }
    *argv_out = argv;
    if (argc_out)
        *argc_out = (int)n;
    argv = NULL;

out:
    mp_buf_fini(&w);
    mp_proc_argv_free(argv);
    return rc;
}

static bool is_safe(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           strchr("@%+=:,./_-", c) != NULL;
}

int mp_proc_join(const char *const *argv, struct mp_buf *out)
{
    int rc = 0;
    for (size_t i = 0; argv && argv[i]; i++) {
        const char *a = argv[i];
        if (i > 0 && (rc = mp_buf_putc(out, ' ')) != 0)
            return rc;
        bool safe = *a != '\0';
        for (const char *p = a; *p && safe; p++)
            safe = is_safe(*p);
        if (safe) {
            if ((rc = mp_buf_puts(out, a)) != 0)
                return rc;
            continue;
        }
        if ((rc = mp_buf_putc(out, '\'')) != 0)
            return rc;
        for (const char *p = a; *p; p++) {
            rc = *p == '\'' ? mp_buf_puts(out, "'\"'\"'") : mp_buf_putc(out, *p);
            if (rc)
                return rc;
        }
        if ((rc = mp_buf_putc(out, '\'')) != 0)
            return rc;
    }
    return rc;
}
