/* Writing config YAML: a string as a double-quoted scalar that any YAML reader
 * (libyaml here, PyYAML in Magpie) reads back as exactly the same string.
 * A JSON string is not enough: it leaves DEL, the C1 controls and U+FEFF
 * raw (libyaml refuses them) and the line separators NEL, U+2028 and
 * U+2029 raw (a YAML reader folds them into spaces). Everything outside
 * YAML's printable set, every line break and tab, '"' and '\' are escaped,
 * so the scalar is always on one line. */
#include <stdint.h>

#include <magpie/config.h>

/* The code point at s[0..n) (*len its byte length), or -1 for a byte that
 * does not start a well-formed UTF-8 sequence (mp_utf8_len decides). */
static int32_t utf8_next(const unsigned char *s, size_t n, size_t *len)
{
    size_t k = mp_utf8_len(s, n);
    if (k == 0)
        return -1;
    static const unsigned char lead_mask[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
    int32_t cp = s[0] & lead_mask[k];
    for (size_t i = 1; i < k; i++)
        cp = (cp << 6) | (s[i] & 0x3F);
    *len = k;
    return cp;
}

/* Printable in YAML 1.1 and not a line break: may stand raw in the scalar */
static bool raw_ok(int32_t cp)
{
    return (cp >= 0x20 && cp <= 0x7E && cp != '"' && cp != '\\') ||
           (cp >= 0xA0 && cp <= 0xD7FF && cp != 0x2028 && cp != 0x2029) ||
           (cp >= 0xE000 && cp <= 0xFFFD && cp != 0xFEFF) || cp >= 0x10000;
}

int mp_config_yaml_str(struct mp_buf *b, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t len = 0;
    /* checked whole first, so that nothing is appended for a bad string */
    for (size_t i = 0; i < n; i += len)
        if (utf8_next(u + i, n - i, &len) < 0)
            return MP_EINVAL;
    int rc = mp_buf_putc(b, '"');
    for (size_t i = 0; i < n && !rc; i += len) {
        int32_t cp = utf8_next(u + i, n - i, &len);
        if (raw_ok(cp)) {
            rc = mp_buf_append(b, u + i, len);
            continue;
        }
        switch (cp) {
        case '"':
            rc = mp_buf_puts(b, "\\\"");
            break;
        case '\\':
            rc = mp_buf_puts(b, "\\\\");
            break;
        case '\n':
            rc = mp_buf_puts(b, "\\n");
            break;
        case '\t':
            rc = mp_buf_puts(b, "\\t");
            break;
        case '\r':
            rc = mp_buf_puts(b, "\\r");
            break;
        default:
            rc = cp <= 0xFF ? mp_buf_printf(b, "\\x%02X", (unsigned)cp)
                            : mp_buf_printf(b, "\\u%04X", (unsigned)cp);
            break;
        }
    }
    return rc ? rc : mp_buf_putc(b, '"');
}
