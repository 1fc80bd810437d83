/* libxlsxwriter, opened at first use (lazy_int.h): the functions of the
 * .xlsx writer (tracelens/views_xlsx.c), each forwarding to libxlsxwriter.so.4's
 * own. When the library cannot be opened, the first call prints why (lazy.c)
 * and workbook_new_opt returns NULL, which the writer reports as an error;
 * the other functions are only reached with a workbook that a loaded library
 * made. None of them is variadic. */
#include <stddef.h>

#include <xlsxwriter.h>

#include "lazy_int.h"

#define XLSX_FNS(X)                                                                                \
    X(workbook_new_opt)                                                                            \
    X(workbook_add_format)                                                                         \
    X(workbook_add_worksheet)                                                                      \
    X(workbook_close)                                                                              \
    X(worksheet_set_column)                                                                        \
    X(worksheet_write_string)                                                                      \
    X(worksheet_write_number)                                                                      \
    X(worksheet_write_boolean)                                                                     \
    X(worksheet_freeze_panes)                                                                      \
    X(format_set_bold)                                                                             \
    X(lxw_strerror)

static struct {
/* f is a function's name, used as the member's name too */
#define XLSX_FIELD(f) __typeof__(&f) f; // NOLINT(bugprone-macro-parentheses)
    XLSX_FNS(XLSX_FIELD)
#undef XLSX_FIELD
} fn;

static void load(void)
{
    lazy_open(&lazy_xlsx);
    if (!lazy_xlsx.handle)
        return;
    bool ok = true;
#define XLSX_SYM(f) ok = lazy_sym(&lazy_xlsx, #f, &fn.f, sizeof(fn.f)) && ok;
    XLSX_FNS(XLSX_SYM)
#undef XLSX_SYM
    lazy_xlsx.ok = ok;
}

/* True once libxlsxwriter is loaded; loads it on the first call. */
static bool ready(void)
{
    pthread_once(&lazy_xlsx.once, load);
    return lazy_xlsx.ok;
}

lxw_workbook *workbook_new_opt(const char *filename, lxw_workbook_options *options)
{
    return ready() ? fn.workbook_new_opt(filename, options) : NULL;
}

lxw_format *workbook_add_format(lxw_workbook *workbook)
{
    return ready() ? fn.workbook_add_format(workbook) : NULL;
}

lxw_worksheet *workbook_add_worksheet(lxw_workbook *workbook, const char *sheetname)
{
    return ready() ? fn.workbook_add_worksheet(workbook, sheetname) : NULL;
}

lxw_error workbook_close(lxw_workbook *workbook)
{
    return ready() ? fn.workbook_close(workbook) : LXW_ERROR_MEMORY_MALLOC_FAILED;
}

lxw_error worksheet_set_column(lxw_worksheet *worksheet, lxw_col_t first_col, lxw_col_t last_col,
                               double width, lxw_format *format)
{
    return ready() ? fn.worksheet_set_column(worksheet, first_col, last_col, width, format)
                   : LXW_ERROR_MEMORY_MALLOC_FAILED;
}

lxw_error worksheet_write_string(lxw_worksheet *worksheet, lxw_row_t row, lxw_col_t col,
                                 const char *string, lxw_format *format)
{
    return ready() ? fn.worksheet_write_string(worksheet, row, col, string, format)
                   : LXW_ERROR_MEMORY_MALLOC_FAILED;
}

lxw_error worksheet_write_number(lxw_worksheet *worksheet, lxw_row_t row, lxw_col_t col,
                                 double number, lxw_format *format)
{
    return ready() ? fn.worksheet_write_number(worksheet, row, col, number, format)
                   : LXW_ERROR_MEMORY_MALLOC_FAILED;
}

lxw_error worksheet_write_boolean(lxw_worksheet *worksheet, lxw_row_t row, lxw_col_t col, int value,
                                  lxw_format *format)
{
    return ready() ? fn.worksheet_write_boolean(worksheet, row, col, value, format)
                   : LXW_ERROR_MEMORY_MALLOC_FAILED;
}

void worksheet_freeze_panes(lxw_worksheet *worksheet, lxw_row_t row, lxw_col_t col)
{
    if (ready())
        fn.worksheet_freeze_panes(worksheet, row, col);
}

void format_set_bold(lxw_format *format)
{
    if (ready())
        fn.format_set_bold(format);
}

char *lxw_strerror(lxw_error error_num)
{
    static char not_loaded[] = "libxlsxwriter could not be loaded";
    return ready() ? fn.lxw_strerror(error_num) : not_loaded;
}
