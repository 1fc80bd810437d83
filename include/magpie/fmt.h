/* magpie fmt: output formats written into an mp_buf: CSV (Python csv module
 * conventions), JSON text (strings, numbers) and small helpers for numbers
 * printed the way Python prints them. */
#ifndef MAGPIE_FMT_H
#define MAGPIE_FMT_H

#include <stdbool.h>
#include <stddef.h>

#include <magpie/base.h>

/* ---- CSV ---- */
struct mp_csv {
    struct mp_buf *out; /* borrowed */
    const char *eol;    /* "\r\n" (Python csv.writer default) or "\n" */
    bool row_open;
};

void mp_csv_init(struct mp_csv *c, struct mp_buf *out, const char *eol);
/* Appends one field, quoted only when it contains ',', '"', '\r' or '\n' (or
 * is the only, empty field of a row, as Python writes ""). */
int mp_csv_field(struct mp_csv *c, const char *s, size_t n);
int mp_csv_str(struct mp_csv *c, const char *s);
int mp_csv_fmt(struct mp_csv *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int mp_csv_end_row(struct mp_csv *c);

/* One CSV record: NUL-terminated fields in text at off[]. */
struct mp_csv_rec {
    struct mp_buf text;
    size_t *off;
    size_t n, cap;
};

/* Reads the record at *pp (RFC 4180 as mp_csv writes it: ',' separators,
 * '"' quoting with doubled quotes, "\n" or "\r\n" line ends; quoted fields
 * may hold newlines). Returns 1 with rec filled, 0 at the end of the input,
 * MP_EUNSUP past max_fields fields, or another negative MP_E* code. */
int mp_csv_next(const char **pp, const char *end, struct mp_csv_rec *rec, size_t max_fields);
void mp_csv_rec_fini(struct mp_csv_rec *rec);

static inline const char *mp_csv_rec_field(const struct mp_csv_rec *rec, size_t i)
{
    return rec->text.data + rec->off[i];
}

/* ---- JSON text ---- */
/* Appends s[0..n) as a JSON string literal with quotes. */
int mp_json_str(struct mp_buf *b, const char *s, size_t n);
/* The same in Python json.dumps's default (ensure_ascii) form: every
 * character from U+007F up as \uXXXX (surrogate pairs above U+FFFF). */
int mp_json_str_ascii(struct mp_buf *b, const char *s, size_t n);
/* Appends a double as the shortest text that reads back to the same value
 * (Python repr style: "0.1", "1e-06", "84.4844258626302"); non-finite values
 * become null. */
int mp_json_double(struct mp_buf *b, double v);
/* Python repr() of a float into buf (len >= 32): "1.0", "1e-06", "nan", "inf". */
void mp_fmt_pyfloat(double v, char *buf, size_t len);

#endif
