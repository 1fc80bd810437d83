/* GPU architecture names: NVIDIA compute capability -> "sm_XY" and family,
 * product name -> compute capability (for drivers whose nvidia-smi cannot
 * report compute_cap, before r510), AMD gfx target -> family. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <magpie/gpu.h>

void mp_gpu_nvidia_arch(int major, int minor, char *out, size_t len)
{
    if (major < 0 || minor < 0) {
        snprintf(out, len, "%s", "");
        return;
    }
    snprintf(out, len, "sm_%d%d", major, minor);
}

const char *mp_gpu_nvidia_family(int major, int minor)
{
    switch (major) {
    case 2:
        return "Fermi";
    case 3:
        return "Kepler";
    case 5:
        return "Maxwell";
    case 6:
        return "Pascal";
    case 7:
        return minor == 5 ? "Turing" : "Volta";
    case 8:
        return minor == 9 ? "Ada Lovelace" : "Ampere";
    case 9:
        return "Hopper";
    case 10:
    case 11: /* Thor: sm_101 was renamed sm_110 in CUDA 13 */
    case 12:
        return "Blackwell";
    default:
        return "";
    }
}

/* A pattern matches where it starts a word; it must also end one unless it
 * ends in '*' (a model-number prefix: "RTX 40*" takes "RTX 4090"). Order
 * matters: earlier, more specific entries shadow later ones ("Quadro RTX"
 * before "RTX 40*", "Ada Generation" before "RTX 50*"). */
struct name_cc {
    const char *pattern;
    int major, minor;
};

static const struct name_cc name_table[] = {
    {"GB300", 10, 3},
    {"B300", 10, 3},
    {"GB200", 10, 0},
    {"B200", 10, 0},
    {"B100", 10, 0},
    {"GB10", 12, 1},
    {"Blackwell", 12, 0}, /* RTX PRO 6000 Blackwell ... */
    {"Ada Generation", 8, 9},
    {"Quadro RTX*", 7, 5},
    {"TITAN RTX", 7, 5},
    {"RTX 50*", 12, 0},
    {"GH200", 9, 0},
    {"H200", 9, 0},
    {"H100", 9, 0},
    {"H800", 9, 0},
    {"H20", 9, 0},
    {"L40S", 8, 9},
    {"L40", 8, 9},
    {"L20", 8, 9},
    {"L4", 8, 9},
    {"RTX 40*", 8, 9},
    {"RTX A*", 8, 6},
    {"A100", 8, 0},
    {"A800", 8, 0},
    {"A30", 8, 0},
    {"A40", 8, 6},
    {"A10G", 8, 6},
    {"A10", 8, 6},
    {"A16", 8, 6},
    {"A2", 8, 6},
    {"RTX 30*", 8, 6},
    {"Orin", 8, 7},
    {"T4", 7, 5},
    {"RTX 20*", 7, 5},
    {"GTX 16*", 7, 5},
    {"V100", 7, 0},
    {"TITAN V", 7, 0},
    {"Xavier", 7, 2},
    {"P100", 6, 0},
    {"P40", 6, 1},
    {"P4", 6, 1},
    {"GTX 10*", 6, 1},
    {"TITAN Xp", 6, 1},
    {"M60", 5, 2},
    {"M40", 5, 2},
    {"K80", 3, 7},
};

static bool match_at(const char *s, const char *pat)
{
    size_t n = strlen(pat);
    bool prefix = n > 0 && pat[n - 1] == '*';
    if (prefix)
        n--;
    if (strncasecmp(s, pat, n) != 0)
        return false;
    return prefix || !isalnum((unsigned char)s[n]);
}

bool mp_gpu_nvidia_cc_from_name(const char *name, int *major, int *minor)
{
    if (!name)
        return false;
    for (size_t i = 0; i < sizeof(name_table) / sizeof(name_table[0]); i++) {
        for (const char *s = name; *s; s++) {
            if (s != name && isalnum((unsigned char)s[-1]))
                continue;
            if (match_at(s, name_table[i].pattern)) {
                *major = name_table[i].major;
                *minor = name_table[i].minor;
                return true;
            }
        }
    }
    return false;
}

const char *mp_gpu_amd_family(const char *gfx)
{
    if (!gfx || strncmp(gfx, "gfx", 3) != 0)
        return "";
    /* Only the target itself: "gfx90a:sramecc+:xnack-" -> "90a". */
    char t[16];
    size_t n = 0;
    for (const char *p = gfx + 3; isalnum((unsigned char)*p) && n + 1 < sizeof(t); p++)
        t[n++] = (char)tolower((unsigned char)*p);
    t[n] = '\0';

    static const struct {
        const char *target;
        const char *family;
    } table[] = {
        {"900", "GCN 5"},     {"902", "GCN 5"},     {"904", "GCN 5"},     {"906", "GCN 5"},
        {"908", "CDNA"},      {"90a", "CDNA 2"},    {"940", "CDNA 3"},    {"941", "CDNA 3"},
        {"942", "CDNA 3"},    {"950", "CDNA 4"},    {"1010", "RDNA"},     {"1011", "RDNA"},
        {"1012", "RDNA"},     {"1030", "RDNA 2"},   {"1031", "RDNA 2"},   {"1032", "RDNA 2"},
        {"1033", "RDNA 2"},   {"1034", "RDNA 2"},   {"1035", "RDNA 2"},   {"1036", "RDNA 2"},
        {"1100", "RDNA 3"},   {"1101", "RDNA 3"},   {"1102", "RDNA 3"},   {"1103", "RDNA 3"},
        {"1150", "RDNA 3.5"}, {"1151", "RDNA 3.5"}, {"1152", "RDNA 3.5"}, {"1153", "RDNA 3.5"},
        {"1200", "RDNA 4"},   {"1201", "RDNA 4"},
    };

    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        if (strcmp(t, table[i].target) == 0)
            return table[i].family;
    return "";
}
