/* The xlsx workbook of a TraceLens-compatible report: one worksheet per CSV
 * sheet (libxlsxwriter), numbers as numbers; a pure function of struct
 * mp_report like the other views (views.c). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <xlsxwriter.h>

#include <magpie/tracelens.h>

#include "tracelens_int.h"
#include "views_int.h"

#define XLSX_STR_MAX 32767 /* Excel's cell text limit */

/* ------------------------------------------------------------------ xlsx */

/* A plain decimal number the way pandas writes one ("12", "-0.5", "1e-06",
 * "1.5E+10"); "nan", "inf", hex and padded text stay text. */
static bool csv_number(const char *s, double *v)
{
    const char *p = s;
    if (*p == '-' || *p == '+')
        p++;
    size_t digits = 0;
    while (*p >= '0' && *p <= '9') {
        p++;
        digits++;
    }
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') {
            p++;
            digits++;
        }
    }
    if (!digits)
        return false;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '-' || *p == '+')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p)
        return false;
    errno = 0;
    *v = strtod(s, NULL);
    return isfinite(*v);
}

/* Excel sheet title of a sheet name: forbidden characters []:*?/\ become
 * '_', at most 31 characters, unique (case-insensitive) among used[]. */
static void xlsx_title(const char *name, char (*used)[128], size_t n_used, char *out, size_t cap)
{
    char base[128];
    size_t bl = 0, chars = 0;
    const unsigned char *p = (const unsigned char *)name;
    while (*p && chars < 31 && bl + 4 < sizeof(base)) {
        size_t k = mp_utf8_len(p, SIZE_MAX);
        if (k == 0 || (k == 1 && (*p < 0x20 || strchr("[]:*?/\\", *p)))) {
            base[bl++] = '_';
            p++;
        } else {
            memcpy(base + bl, p, k);
            bl += k;
            p += k;
        }
        chars++;
    }
    base[bl] = '\0';
    if (bl == 0)
        snprintf(base, sizeof(base), "Sheet");
    if (base[0] == '\'')
        base[0] = '_';
    if (bl && base[bl - 1] == '\'')
        base[bl - 1] = '_';
    snprintf(out, cap, "%s", base);
    for (unsigned k = 2;; k++) {
        bool clash = false;
        for (size_t i = 0; i < n_used && !clash; i++)
            clash = strcasecmp(used[i], out) == 0;
        if (!clash)
            return;
        char suf[16];
        int sl = snprintf(suf, sizeof(suf), "~%u", k);
        /* cut the base to leave room for the suffix within 31 characters */
        size_t keep = 0, c = 0;
        const unsigned char *q = (const unsigned char *)base;
        while (q[keep] && c + (size_t)sl < 31) {
            size_t n = mp_utf8_len(q + keep, SIZE_MAX);
            keep += n ? n : 1;
            c++;
        }
        snprintf(out, cap, "%.*s%s", (int)keep, base, suf);
    }
}

/* Cuts s (in place) to at most XLSX_STR_MAX bytes at a UTF-8 boundary. */
static void xlsx_cut(char *s)
{
    size_t n = strlen(s);
    if (n <= XLSX_STR_MAX)
        return;
    n = XLSX_STR_MAX;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    s[n] = '\0';
}

static int xlsx_sheet(lxw_workbook *wb, lxw_format *bold, const struct mp_report_sheet *sh,
                      const char *title, struct mp_diag *d)
{
    lxw_worksheet *ws = workbook_add_worksheet(wb, title);
    if (!ws)
        return mp_diag_set(d, MP_EINVAL, "cannot add worksheet '%s'", title);
    const char *p = sh->csv.data ? sh->csv.data : "", *end = p + sh->csv.len;
    struct mp_csv_rec rec;
    memset(&rec, 0, sizeof(rec));
    mp_buf_init(&rec.text, 0);
    int rc = 0;
    lxw_error err = LXW_NO_ERROR;
    lxw_row_t row = 0;
    for (;;) {
        int k = mp_csv_next(&p, end, &rec, LXW_COL_MAX);
        if (k <= 0) {
            rc = k;
            break;
        }
        if (row >= LXW_ROW_MAX) {
            rc = mp_diag_set(d, MP_EUNSUP, "sheet '%s' has more than %d rows, Excel's limit",
                             sh->name, LXW_ROW_MAX);
            break;
        }
        for (size_t c = 0; c < rec.n && !err; c++) {
            char *cell = rec.text.data + rec.off[c];
            double v;
            if (!cell[0] && row > 0) {
                continue; /* missing value: an empty cell, as pandas writes NaN */
            } else if (row == 0) {
                double wdt = (double)tl_view_text_width(cell) + 2;
                err = worksheet_set_column(ws, (lxw_col_t)c, (lxw_col_t)c,
                                           wdt < 10   ? 10
                                           : wdt > 60 ? 60
                                                      : wdt,
                                           NULL);
                xlsx_cut(cell);
                if (cell[0] && !err)
                    err = worksheet_write_string(ws, row, (lxw_col_t)c, cell, bold);
            } else if (csv_number(cell, &v)) {
                err = worksheet_write_number(ws, row, (lxw_col_t)c, v, NULL);
            } else if (strcmp(cell, "True") == 0 || strcmp(cell, "False") == 0) {
                err = worksheet_write_boolean(ws, row, (lxw_col_t)c, cell[0] == 'T', NULL);
            } else {
                xlsx_cut(cell);
                err = worksheet_write_string(ws, row, (lxw_col_t)c, cell, NULL);
            }
        }
        if (err)
            break;
        row++;
    }
    if (rc == MP_EUNSUP && !d->code)
        rc = mp_diag_set(d, rc, "sheet '%s' has more than %d columns, Excel's limit", sh->name,
                         LXW_COL_MAX);
    else if (rc && rc != MP_EUNSUP)
        rc = mp_diag_set(d, rc, "cannot read sheet '%s' back (%s)", sh->name, mp_strerror(rc));
    if (!rc && err)
        rc = mp_diag_set(d, MP_EIO, "cannot write sheet '%s' to the workbook: %s", sh->name,
                         lxw_strerror(err));
    if (!rc && row > 1)
        worksheet_freeze_panes(ws, 1, 0);
    mp_buf_fini(&rec.text);
    free(rec.off);
    return rc;
}

int mp_report_write_xlsx(const struct mp_report *r, const char *path, struct mp_diag *d)
{
    struct mp_diag dummy;
    if (!d) {
        mp_diag_clear(&dummy);
        d = &dummy;
    }
    if (!r || !path || !path[0])
        return mp_diag_set(d, MP_EINVAL, "no report or no path for the xlsx workbook");
    size_t pl = strlen(path);
    char *tmp = malloc(pl + 32);
    char(*used)[128] = calloc(r->n ? r->n : 1, sizeof(*used));
    if (!tmp || !used) {
        free(tmp);
        free(used);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    /* the temp file is in the target's directory so that rename is atomic */
    snprintf(tmp, pl + 32, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        free(used);
        mp_diag_set_file(d, path);
        return mp_diag_set(d, MP_EIO, "cannot create a temporary file in its directory: %s",
                           strerror(e));
    }
    close(fd);
    int rc = 0;
    lxw_workbook_options wo = {.constant_memory = LXW_TRUE, .tmpdir = NULL, .use_zip64 = LXW_FALSE};
    lxw_workbook *wb = workbook_new_opt(tmp, &wo);
    lxw_format *bold = wb ? workbook_add_format(wb) : NULL;
    if (!wb || !bold)
        rc = mp_diag_set(d, MP_ENOMEM, "cannot start the workbook");
    else
        format_set_bold(bold);
    for (size_t i = 0; i < r->n && !rc; i++) {
        xlsx_title(r->sheets[i].name, used, i, used[i], sizeof(used[i]));
        rc = xlsx_sheet(wb, bold, &r->sheets[i], used[i], d);
    }
    if (wb) {
        lxw_error err = workbook_close(wb); /* frees wb even on error */
        if (err && !rc)
            rc = mp_diag_set(d, MP_EIO, "cannot write the workbook: %s", lxw_strerror(err));
    }
    if (!rc) {
        fd = open(tmp, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || (fsync(fd) != 0 && errno != EINVAL) || rename(tmp, path) != 0) {
            int e = errno;
            mp_diag_set_file(d, path);
            rc = mp_diag_set(d, MP_EIO, "cannot write the workbook: %s", strerror(e));
        }
        if (fd >= 0)
            close(fd);
    }
    if (rc) {
        if (!d->file[0])
            mp_diag_set_file(d, path);
        unlink(tmp);
    }
    free(tmp);
    free(used);
    return rc;
}
