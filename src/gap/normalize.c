/* Kernel-name families for --group-by normalized.
 *
 * One logical kernel often appears under many exact names: every template
 * instantiation, every tile configuration and every JIT hash is a separate
 * string in a trace. The family key keeps the qualified function name and
 * drops what varies between instantiations, so their time adds up in one
 * row. The exact names stay available next to it. */
#include <ctype.h>
#include <string.h>

#include <magpie/gap.h>

/* Parses <number><identifier> at *p (Itanium source-name). */
static bool source_name(const char **p, const char *e, const char **id, size_t *idn)
{
    const char *s = *p;
    size_t n = 0;
    if (s >= e || !isdigit((unsigned char)*s))
        return false;
    while (s < e && isdigit((unsigned char)*s)) {
        n = n * 10 + (size_t)(*s - '0');
        if (n > 4096)
            return false;
        s++;
    }
    if ((size_t)(e - s) < n)
        return false;
    *id = s;
    *idn = n;
    *p = s + n;
    return true;
}

/* Skips a template-argument list starting at 'I' up to its matching 'E'. */
static bool skip_template_args(const char **p, const char *e)
{
    int depth = 0;
    const char *s = *p;
    while (s < e) {
        char ch = *s;
        if (isdigit((unsigned char)ch)) {
            const char *id;
            size_t n;
            if (!source_name(&s, e, &id, &n))
                return false;
            continue;
        }
        if (ch == 'I' || ch == 'N' || ch == 'L' || ch == 'X' || ch == 'J')
            depth++;
        else if (ch == 'E' && --depth == 0) {
            *p = s + 1;
            return true;
        }
        s++;
    }
    return false;
}

/* Reduces an Itanium-mangled name to "a::b::c". */
static bool demangle_name(const char *name, size_t n, struct mp_buf *out)
{
    const char *p = name + 2, *e = name + n;
    if (p < e && *p == 'L')
        p++;
    bool nested = p < e && *p == 'N';
    if (nested) {
        p++;
        while (p < e && (*p == 'r' || *p == 'V' || *p == 'K'))
            p++;
    }
    bool any = false;
    while (p < e) {
        if (*p == 'S' && p + 1 < e && p[1] == 't') {
            mp_buf_puts(out, any ? "::std" : "std");
            any = true;
            p += 2;
            continue;
        }
        if (*p == 'S') { /* substitution S_ / S<seq>_ : skip */
            const char *u = memchr(p, '_', (size_t)(e - p));
            if (!u)
                return false;
            p = u + 1;
            continue;
        }
        if (*p == 'I') {
            if (!skip_template_args(&p, e))
                return false;
            continue;
        }
        const char *id;
        size_t idn;
        if (!source_name(&p, e, &id, &idn))
            break;
        if (any)
            mp_buf_puts(out, "::");
        mp_buf_append(out, id, idn);
        any = true;
        if (!nested)
            break;
        if (p < e && *p == 'E')
            break;
    }
    return any;
}

static bool is_launch_token(const char *t, size_t n)
{
    /* a token holding <digits>x<digits>: 128x128, tilesize128x128x64, 32x6 */
    for (size_t i = 1; i + 1 < n; i++) {
        if (t[i] == 'x' && isdigit((unsigned char)t[i - 1]) && isdigit((unsigned char)t[i + 1]))
            return true;
    }
    return false;
}

static bool is_hash_token(const char *t, size_t n)
{
    if (n >= 3 && t[0] == '0' && t[1] == 'x')
        return true;
    if (n < 8)
        return false;
    bool digit = false, alpha = false;
    for (size_t i = 0; i < n; i++) {
        if (!isxdigit((unsigned char)t[i]))
            return false;
        if (isdigit((unsigned char)t[i]))
            digit = true;
        else
            alpha = true;
    }
    return digit && (alpha || n >= 12);
}

int mp_kernel_family(const char *name, size_t n, struct mp_buf *out)
{
    struct mp_buf a;
    mp_buf_init(&a, 0);
    int rc = 0;
    mp_buf_reset(out);
    if (n > 2 && name[0] == '_' && name[1] == 'Z' && demangle_name(name, n, &a)) {
        /* done: a holds the qualified name */
    } else {
        mp_buf_reset(&a);
        const char *p = name, *e = name + n;
        if (e - p > 5 && memcmp(p, "void ", 5) == 0)
            p += 5;
        int depth = 0;
        for (; p < e; p++) {
            char ch = *p;
            if (ch == '<') {
                depth++;
                continue;
            }
            if (ch == '>' && depth > 0) {
                depth--;
                continue;
            }
            if (depth > 0)
                continue;
            if (ch == '(') {
                static const char anon[] = "(anonymous namespace)";
                if ((size_t)(e - p) >= sizeof(anon) - 1 && memcmp(p, anon, sizeof(anon) - 1) == 0) {
                    mp_buf_append(&a, p, sizeof(anon) - 1);
                    p += sizeof(anon) - 2;
                    continue;
                }
                break; /* parameter list */
            }
            mp_buf_putc(&a, ch);
        }
        while (a.len > 0 && a.data[a.len - 1] == ' ')
            a.data[--a.len] = '\0';
    }
    /* drop launch-configuration and hash tokens between underscores */
    const char *s = mp_buf_cstr(&a);
    size_t len = a.len, i = 0;
    bool wrote = false, dropped = false;
    while (i <= len && !rc) {
        size_t j = i;
        while (j < len && s[j] != '_')
            j++;
        size_t tn = j - i;
        bool drop = tn > 0 && (is_launch_token(s + i, tn) || is_hash_token(s + i, tn));
        dropped |= drop;
        if (!drop) {
            if (wrote || tn == 0)
                rc = (i > 0) ? mp_buf_putc(out, '_') : 0;
            if (!rc)
                rc = mp_buf_append(out, s + i, tn);
            wrote = true;
        }
        i = j + 1;
    }
    /* collapse repeated and trailing underscores left by removed tokens */
    if (!rc && dropped && out->len > 0) {
        size_t w = 0;
        for (size_t r = 0; r < out->len; r++) {
            if (out->data[r] == '_' && w > 0 && out->data[w - 1] == '_')
                continue;
            out->data[w++] = out->data[r];
        }
        while (w > 1 && out->data[w - 1] == '_')
            w--;
        out->len = w;
        out->data[w] = '\0';
    }
    if (!rc && out->len == 0)
        rc = mp_buf_append(out, name, n);
    if (!rc && !out->data)
        rc = mp_buf_reserve(out, 0);
    mp_buf_fini(&a);
    return rc;
}
