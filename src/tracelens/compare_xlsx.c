/* Reading .xlsx reports for `magpie trace compare` (compare.c): the zip
 * container (stored or deflated entries, no zip64), the workbook's sheet
 * list and relationships, the shared strings and one worksheet's cells, as
 * a dense grid from A1 with openpyxl's cell values (numbers whose text has
 * no '.', 'e' or 'E' as integers, other numbers as floats, booleans,
 * strings, errors as missing) and pandas' read_excel trimming (trailing empty
 * cells and rows dropped, rows padded to the widest). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZLIB_CONST
#include <zlib.h>

#include <magpie/fmt.h>
#include <magpie/tracelens.h>

#include "tracelens_int.h"

struct tl_xlsx_ent {
    char *name;
    uint32_t method, csize, usize, off;
};

struct tl_xlsx {
    struct mp_buf file;
    struct tl_xlsx_ent *ent;
    size_t nent;
    char **sheet_name, **sheet_path;
    size_t nsheet;
    char **sst;
    size_t nsst;
};

static uint32_t rd16(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8);
}

static uint32_t rd32(const unsigned char *p)
{
    return rd16(p) | (rd16(p + 2) << 16);
}

static int bad(struct mp_diag *d, const char *path, const char *what)
{
    mp_diag_set_file(d, path);
    return mp_diag_set(d, MP_EPARSE, "not a readable xlsx workbook: %s", what);
}

static int zip_index(struct tl_xlsx *x, const char *path, struct mp_diag *d)
{
    const unsigned char *b = (const unsigned char *)x->file.data;
    size_t n = x->file.len;
    if (n < 22)
        return bad(d, path, "too short");
    size_t eocd = SIZE_MAX;
    for (size_t i = n - 22 + 1; i-- > 0 && n - i <= 65557;)
        if (rd32(b + i) == 0x06054b50u) {
            eocd = i;
            break;
        }
    if (eocd == SIZE_MAX)
        return bad(d, path, "no zip directory");
    uint32_t cnt = rd16(b + eocd + 10), cdoff = rd32(b + eocd + 16);
    x->ent = calloc(cnt ? cnt : 1, sizeof(*x->ent));
    if (!x->ent)
        return MP_ENOMEM;
    size_t p = cdoff;
    for (uint32_t i = 0; i < cnt; i++) {
        if (p + 46 > n || rd32(b + p) != 0x02014b50u)
            return bad(d, path, "broken zip directory");
        uint32_t nl = rd16(b + p + 28), el = rd16(b + p + 30), cl = rd16(b + p + 32);
        if (p + 46 + nl > n)
            return bad(d, path, "broken zip directory");
        struct tl_xlsx_ent *e = &x->ent[x->nent];
        e->method = rd16(b + p + 10);
        e->csize = rd32(b + p + 20);
        e->usize = rd32(b + p + 24);
        e->off = rd32(b + p + 42);
        e->name = mp_strndup((const char *)b + p + 46, nl);
        if (!e->name)
            return MP_ENOMEM;
        x->nent++;
        p += 46 + (size_t)nl + el + cl;
    }
    return 0;
}

/* The entry named name, inflated into out (NUL-terminated). MP_ENOTFOUND
 * when absent. */
static int zip_read(struct tl_xlsx *x, const char *name, struct mp_buf *out, const char *path,
                    struct mp_diag *d)
{
    const struct tl_xlsx_ent *e = NULL;
    for (size_t i = 0; i < x->nent && !e; i++)
        if (!strcmp(x->ent[i].name, name))
            e = &x->ent[i];
    if (!e)
        return MP_ENOTFOUND;
    const unsigned char *b = (const unsigned char *)x->file.data;
    size_t n = x->file.len, p = e->off;
    if (p + 30 > n || rd32(b + p) != 0x04034b50u)
        return bad(d, path, "broken zip entry");
    size_t data = p + 30 + rd16(b + p + 26) + rd16(b + p + 28);
    if (data + e->csize > n)
        return bad(d, path, "zip entry past the end");
    mp_buf_reset(out);
    int rc = mp_buf_reserve(out, (size_t)e->usize + 1);
    if (rc)
        return rc;
    if (e->method == 0) {
        rc = mp_buf_append(out, b + data, e->csize);
    } else if (e->method == 8) {
        z_stream zs;
        memset(&zs, 0, sizeof(zs));
        if (inflateInit2(&zs, -15) != Z_OK)
            return MP_ENOMEM;
        zs.next_in = b + data;
        zs.avail_in = e->csize;
        zs.next_out = (Bytef *)out->data;
        zs.avail_out = e->usize;
        int z = inflate(&zs, Z_FINISH);
        size_t got = zs.total_out;
        inflateEnd(&zs);
        if (z != Z_STREAM_END || got != e->usize)
            return bad(d, path, "cannot inflate a zip entry");
        out->len = got;
    } else {
        return bad(d, path, "unsupported zip compression");
    }
    if (!rc)
        rc = mp_buf_putc(out, 0);
    if (!rc)
        out->len--;
    return rc;
}

/* ---- a little XML: tags, attributes, text with the five entities and &#N; ---- */

static void xml_unescape(struct mp_buf *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '&') {
            mp_buf_putc(o, s[i]);
            continue;
        }
        const char *semi = memchr(s + i, ';', n - i);
        if (!semi) {
            mp_buf_putc(o, s[i]);
            continue;
        }
        size_t l = (size_t)(semi - (s + i));
        const char *ent = s + i + 1;
        unsigned long cp = 0;
        bool ok = true;
        if (l == 3 && !strncmp(ent, "lt", 2))
            cp = '<';
        else if (l == 3 && !strncmp(ent, "gt", 2))
            cp = '>';
        else if (l == 4 && !strncmp(ent, "amp", 3))
            cp = '&';
        else if (l == 5 && !strncmp(ent, "quot", 4))
            cp = '"';
        else if (l == 5 && !strncmp(ent, "apos", 4))
            cp = '\'';
        else if (l > 2 && ent[0] == '#')
            cp = ent[1] == 'x' ? strtoul(ent + 2, NULL, 16) : strtoul(ent + 1, NULL, 10);
        else
            ok = false;
        if (!ok) {
            mp_buf_putc(o, s[i]);
            continue;
        }
        char u[4];
        size_t un = 0;
        if (cp < 0x80) {
            u[un++] = (char)cp;
        } else if (cp < 0x800) {
            u[un++] = (char)(0xC0 | (cp >> 6));
            u[un++] = (char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            u[un++] = (char)(0xE0 | (cp >> 12));
            u[un++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            u[un++] = (char)(0x80 | (cp & 0x3F));
        } else {
            u[un++] = (char)(0xF0 | (cp >> 18));
            u[un++] = (char)(0x80 | ((cp >> 12) & 0x3F));
            u[un++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            u[un++] = (char)(0x80 | (cp & 0x3F));
        }
        mp_buf_append(o, u, un);
        i += l;
    }
}

/* Value of attribute name (or any "prefix:name" when name starts with ':')
 * in the tag [t, te), unescaped into o; false when absent. */
static bool xml_attr(const char *t, const char *te, const char *name, struct mp_buf *o)
{
    size_t nl = strlen(name);
    for (const char *p = t; p < te; p++) {
        if (*p != '=')
            continue;
        const char *ne = p;
        while (ne > t && ne[-1] == ' ')
            ne--;
        const char *ns = ne;
        while (ns > t && ns[-1] != ' ' && ns[-1] != '\t' && ns[-1] != '\n' && ns[-1] != '<')
            ns--;
        size_t l = (size_t)(ne - ns);
        bool match = name[0] == ':' ? (l >= nl && !strncmp(ne - nl, name, nl))
                                    : (l == nl && !strncmp(ns, name, nl));
        const char *q = p + 1;
        while (q < te && *q == ' ')
            q++;
        if (q >= te || (*q != '"' && *q != '\''))
            continue;
        const char *ve = memchr(q + 1, *q, (size_t)(te - q - 1));
        if (!ve)
            return false;
        if (match) {
            mp_buf_reset(o);
            xml_unescape(o, q + 1, (size_t)(ve - q - 1));
            mp_buf_putc(o, 0);
            o->len--;
            return true;
        }
        p = ve;
    }
    return false;
}

/* Next start tag named tag (e.g. "<sheet") from *pp; [*ts, *te) the tag
 * up to '>'; false at the end. Matches "<sheet " / "<sheet>" / "<sheet/",
 * not "<sheets". */
static bool xml_next(const char **pp, const char *end, const char *tag, const char **ts,
                     const char **te)
{
    size_t tl = strlen(tag);
    const char *p = *pp;
    while (p < end) {
        const char *s = memmem(p, (size_t)(end - p), tag, tl);
        if (!s)
            return false;
        char c = s + tl < end ? s[tl] : 0;
        if (c == ' ' || c == '>' || c == '/' || c == '\t' || c == '\n' || c == '\r') {
            const char *e = memchr(s, '>', (size_t)(end - s));
            if (!e)
                return false;
            *ts = s;
            *te = e;
            *pp = e + 1;
            return true;
        }
        p = s + tl;
    }
    return false;
}

/* Concatenated text of every <t>..</t> in [p, e) (rich text runs), into o. */
static void xml_texts(const char *p, const char *e, struct mp_buf *o)
{
    mp_buf_reset(o);
    const char *ts, *te;
    while (xml_next(&p, e, "<t", &ts, &te)) {
        if (te[-1] == '/')
            continue;
        const char *close = memmem(te + 1, (size_t)(e - te - 1), "</t>", 4);
        if (!close)
            break;
        xml_unescape(o, te + 1, (size_t)(close - te - 1));
        p = close + 4;
    }
    mp_buf_putc(o, 0);
    o->len--;
}

void tl_xlsx_close(struct tl_xlsx *x)
{
    if (!x)
        return;
    for (size_t i = 0; i < x->nent; i++)
        free(x->ent[i].name);
    free(x->ent);
    for (size_t i = 0; i < x->nsheet; i++) {
        free(x->sheet_name[i]);
        free(x->sheet_path[i]);
    }
    free(x->sheet_name);
    free(x->sheet_path);
    for (size_t i = 0; i < x->nsst; i++)
        free(x->sst[i]);
    free(x->sst);
    mp_buf_fini(&x->file);
    free(x);
}

static int read_whole(const char *path, struct mp_buf *b, struct mp_diag *d)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        mp_diag_set_file(d, path);
        return mp_diag_set(d, MP_EIO, "cannot open");
    }
    char tmp[65536];
    size_t got;
    int rc = 0;
    while (!rc && (got = fread(tmp, 1, sizeof(tmp), fp)) > 0)
        rc = mp_buf_append(b, tmp, got);
    fclose(fp);
    return rc;
}

int tl_xlsx_open(const char *path, struct tl_xlsx **out, struct mp_diag *d)
{
    *out = NULL;
    struct tl_xlsx *x = calloc(1, sizeof(*x));
    if (!x)
        return MP_ENOMEM;
    mp_buf_init(&x->file, 0);
    struct mp_buf xml, rels, a, b;
    mp_buf_init(&xml, 0);
    mp_buf_init(&rels, 0);
    mp_buf_init(&a, 0);
    mp_buf_init(&b, 0);
    int rc = read_whole(path, &x->file, d);
    rc = rc ? rc : zip_index(x, path, d);
    if (!rc) {
        rc = zip_read(x, "xl/workbook.xml", &xml, path, d);
        if (rc == MP_ENOTFOUND)
            rc = bad(d, path, "no xl/workbook.xml");
    }
    if (!rc) {
        rc = zip_read(x, "xl/_rels/workbook.xml.rels", &rels, path, d);
        if (rc == MP_ENOTFOUND)
            rc = bad(d, path, "no xl/_rels/workbook.xml.rels");
    }
    /* sheets in workbook order, each rId -> its part */
    const char *p = xml.data, *e = xml.data + xml.len, *ts, *te;
    size_t cap = 0;
    while (!rc && xml_next(&p, e, "<sheet", &ts, &te)) {
        if (!xml_attr(ts, te, "name", &a) || !xml_attr(ts, te, ":id", &b)) {
            rc = bad(d, path, "a sheet without name or id");
            break;
        }
        char *target = NULL;
        const char *rp = rels.data, *re = rels.data + rels.len, *rs, *rte;
        struct mp_buf id;
        mp_buf_init(&id, 0);
        while (!target && xml_next(&rp, re, "<Relationship", &rs, &rte))
            if (xml_attr(rs, rte, "Id", &id) && !strcmp(id.data, b.data) &&
                xml_attr(rs, rte, "Target", &id)) {
                const char *t = id.data;
                size_t l = strlen(t) + 4;
                target = malloc(l);
                if (target) {
                    if (t[0] == '/')
                        snprintf(target, l, "%s", t + 1);
                    else
                        snprintf(target, l, "xl/%s", t);
                }
            }
        mp_buf_fini(&id);
        if (!target) {
            rc = bad(d, path, "a sheet without its part");
            break;
        }
        if (MP_GROW2(x->sheet_name, x->sheet_path, cap, x->nsheet + 1, 16)) {
            free(target);
            rc = MP_ENOMEM;
            break;
        }
        x->sheet_name[x->nsheet] = mp_strdup(a.data);
        x->sheet_path[x->nsheet++] = target;
    }
    /* shared strings (optional part) */
    if (!rc) {
        int r = zip_read(x, "xl/sharedStrings.xml", &xml, path, d);
        if (r && r != MP_ENOTFOUND)
            rc = r;
        if (!r) {
            p = xml.data;
            e = xml.data + xml.len;
            cap = 0;
            while (!rc && xml_next(&p, e, "<si", &ts, &te)) {
                const char *close = te[-1] == '/' ? te : memmem(te, (size_t)(e - te), "</si>", 5);
                if (!close) {
                    rc = bad(d, path, "broken shared strings");
                    break;
                }
                xml_texts(te, close, &a);
                if (MP_GROW(x->sst, cap, x->nsst + 1, 256)) {
                    rc = MP_ENOMEM;
                    break;
                }
                x->sst[x->nsst] = mp_strdup(a.data ? a.data : "");
                rc = x->sst[x->nsst++] ? 0 : MP_ENOMEM;
                p = close;
            }
        }
    }
    mp_buf_fini(&xml);
    mp_buf_fini(&rels);
    mp_buf_fini(&a);
    mp_buf_fini(&b);
    if (rc) {
        tl_xlsx_close(x);
        return rc;
    }
    *out = x;
    return 0;
}

size_t tl_xlsx_nsheets(const struct tl_xlsx *x)
{
    return x->nsheet;
}

const char *tl_xlsx_sheet_name(const struct tl_xlsx *x, size_t i)
{
    return x->sheet_name[i];
}

static long col_index(const char *ref)
{
    long c = 0;
    for (; *ref >= 'A' && *ref <= 'Z'; ref++)
        c = c * 26 + (*ref - 'A' + 1);
    return c - 1;
}

void tl_xlsx_grid_free(struct tl_xlsx_cell *g, size_t nrows, size_t ncols)
{
    if (!g)
        return;
    for (size_t i = 0; i < nrows * ncols; i++)
        free(g[i].s);
    free(g);
}

/* A cell read from a sheet, before it is placed in the grid. */
struct rc_cell {
    long r, c;
    struct tl_xlsx_cell v;
};

struct rc_cells {
    struct rc_cell *v;
    size_t n, cap;
    long maxr, maxc;
};

/* The cell type of the t attribute: s shared string, S string, i inline
 * string, b bool, e error, n number (no attribute). */
static char cell_kind(const char *ts, const char *te, struct mp_buf *a)
{
    if (!xml_attr(ts, te, "t", a))
        return 'n';
    return !strcmp(a->data, "s")           ? 's'
           : !strcmp(a->data, "str")       ? 'S'
           : !strcmp(a->data, "inlineStr") ? 'i'
           : !strcmp(a->data, "b")         ? 'b'
           : !strcmp(a->data, "e")         ? 'e'
                                           : 'S';
}

/* A number cell: openpyxl gives an int, or a float; pandas an int when
 * integral. */
static struct tl_xlsx_cell number_cell(const char *text)
{
    struct tl_xlsx_cell cv = {.type = TL_XC_EMPTY};
    bool fl = strpbrk(text, ".eE") != NULL;
    cv.v = strtod(text, NULL);
    cv.type = !fl || (cv.v == (double)(long long)cv.v && cv.v < 9.2e18 && cv.v > -9.2e18)
                  ? TL_XC_INT
                  : TL_XC_FLOAT;
    if (cv.type == TL_XC_INT)
        cv.i = fl ? (long long)cv.v : strtoll(text, NULL, 10);
    return cv;
}

/* The value of a cell of type t whose content runs from te to close; a
 * string cell with s NULL means out of memory. */
static struct tl_xlsx_cell cell_value(const struct tl_xlsx *x, const char *te, const char *close,
                                      char t, struct mp_buf *v)
{
    struct tl_xlsx_cell cv = {.type = TL_XC_EMPTY};
    if (t == 'i') {
        xml_texts(te, close, v);
        cv.type = TL_XC_STR;
        cv.s = mp_strdup(v->data ? v->data : "");
        return cv;
    }
    const char *vs = memmem(te, (size_t)(close - te), "<v>", 3);
    const char *ve = vs ? memmem(vs, (size_t)(close - vs), "</v>", 4) : NULL;
    if (!vs || !ve)
        return cv;
    mp_buf_reset(v);
    xml_unescape(v, vs + 3, (size_t)(ve - vs - 3));
    mp_buf_putc(v, 0);
    v->len--;
    if (t == 's') {
        unsigned long k = strtoul(v->data, NULL, 10);
        cv.type = TL_XC_STR;
        cv.s = mp_strdup(k < x->nsst ? x->sst[k] : "");
    } else if (t == 'S') {
        cv.type = TL_XC_STR;
        cv.s = mp_strdup(v->data);
    } else if (t == 'b') {
        cv.type = TL_XC_BOOL;
        cv.b = strtol(v->data, NULL, 10) != 0;
    } else if (t == 'e') {
        cv.type = TL_XC_NA;
    } else {
        cv = number_cell(v->data);
    }
    return cv;
}

static int cells_push(struct rc_cells *cs, long r, long col, struct tl_xlsx_cell cv)
{
    if (MP_GROW(cs->v, cs->cap, cs->n + 1, 1024)) {
        free(cv.s);
        return MP_ENOMEM;
    }
    cs->v[cs->n++] = (struct rc_cell){r, col, cv};
    if (r > cs->maxr)
        cs->maxr = r;
    if (col > cs->maxc)
        cs->maxc = col;
    return 0;
}

/* The next "<c" tag from p (not "<col" and the like), or NULL. */
static const char *next_ctag(const char *p, const char *e)
{
    const char *ctag = memmem(p, (size_t)(e - p), "<c", 2);
    while (ctag && ctag + 2 < e && ctag[2] != ' ' && ctag[2] != '>' && ctag[2] != '/')
        ctag = memmem(ctag + 2, (size_t)(e - ctag - 2), "<c", 2);
    return ctag;
}

/* The non-empty cells of the sheet's XML p..e, in document order. */
static int read_cells(const struct tl_xlsx *x, const char *p, const char *e, struct rc_cells *cs)
{
    struct mp_buf a, v;
    mp_buf_init(&a, 0);
    mp_buf_init(&v, 0);
    long row = -1;
    int rc = 0;
    const char *ts, *te;
    while (!rc && p && p < e) {
        const char *rowtag = memmem(p, (size_t)(e - p), "<row", 4);
        const char *ctag = next_ctag(p, e);
        if (rowtag && (!ctag || rowtag < ctag)) {
            const char *rte = memchr(rowtag, '>', (size_t)(e - rowtag));
            if (!rte)
                break;
            row = xml_attr(rowtag, rte, "r", &a) ? strtol(a.data, NULL, 10) - 1 : row + 1;
            p = rte + 1;
            continue;
        }
        if (!ctag || !xml_next(&p, e, "<c", &ts, &te))
            break;
        long col = -1, r = row;
        if (xml_attr(ts, te, "r", &a)) {
            col = col_index(a.data);
            const char *dg = a.data;
            while (*dg >= 'A' && *dg <= 'Z')
                dg++;
            if (*dg)
                r = strtol(dg, NULL, 10) - 1;
        }
        if (col < 0)
            col = cs->n && cs->v[cs->n - 1].r == r ? cs->v[cs->n - 1].c + 1 : 0;
        char t = cell_kind(ts, te, &a);
        const char *close = te[-1] == '/' ? NULL : memmem(te, (size_t)(e - te), "</c>", 4);
        struct tl_xlsx_cell cv = {.type = TL_XC_EMPTY};
        if (close) {
            cv = cell_value(x, te, close, t, &v);
            p = close + 4;
        }
        if ((cv.type == TL_XC_STR && !cv.s)) {
            rc = MP_ENOMEM;
            break;
        }
        if (r < 0 || cv.type == TL_XC_EMPTY || (cv.type == TL_XC_STR && !*cv.s)) {
            free(cv.s);
            continue;
        }
        rc = cells_push(cs, r, col, cv);
    }
    mp_buf_fini(&a);
    mp_buf_fini(&v);
    return rc;
}

/* Places the cells in a dense grid (a later cell of the same place wins);
 * the cells' strings move into it. */
static int cells_to_grid(struct rc_cells *cs, struct tl_xlsx_cell **grid, size_t *nrows,
                         size_t *ncols)
{
    size_t R = (size_t)cs->maxr + 1, C = (size_t)cs->maxc + 1;
    struct tl_xlsx_cell *g = calloc(R && C ? R * C : 1, sizeof(*g));
    if (!g)
        return MP_ENOMEM;
    for (size_t i = 0; i < cs->n; i++) {
        if (cs->v[i].r < 0) {
            free(cs->v[i].v.s);
            continue;
        }
        struct tl_xlsx_cell *slot = &g[(size_t)cs->v[i].r * C + (size_t)cs->v[i].c];
        free(slot->s);
        *slot = cs->v[i].v;
    }
    cs->n = 0;
    *grid = g;
    *nrows = R;
    *ncols = C;
    return 0;
}

int tl_xlsx_read_sheet(struct tl_xlsx *x, const char *sheet, const char *path,
                       struct tl_xlsx_cell **grid, size_t *nrows, size_t *ncols, struct mp_diag *d)
{
    *grid = NULL;
    *nrows = *ncols = 0;
    const char *part = NULL;
    for (size_t i = 0; i < x->nsheet && !part; i++)
        if (!strcmp(x->sheet_name[i], sheet))
            part = x->sheet_path[i];
    if (!part)
        return MP_ENOTFOUND;
    struct mp_buf xml;
    mp_buf_init(&xml, 0);
    int rc = zip_read(x, part, &xml, path, d);
    if (rc == MP_ENOTFOUND)
        rc = bad(d, path, "a sheet's part is missing");
    /* cells as (row, col, cell), then placed in a dense grid */
    struct rc_cells cs = {.maxr = -1, .maxc = -1};
    if (!rc)
        rc = read_cells(x, xml.data, xml.data ? xml.data + xml.len : NULL, &cs);
    if (!rc && cs.n)
        rc = cells_to_grid(&cs, grid, nrows, ncols);
    for (size_t i = 0; i < cs.n; i++)
        free(cs.v[i].v.s);
    free(cs.v);
    mp_buf_fini(&xml);
    return rc;
}
