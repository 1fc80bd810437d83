/* PATH lookup for executables, the way execvp searches, so that what we
 * report as "found" is what a spawn will actually run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <magpie/proc.h>

static bool is_executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static int copy_out(const char *path, char *out, size_t out_len)
{
    size_t n = strlen(path);
    if (n + 1 > out_len)
        return MP_EINVAL;
    memcpy(out, path, n + 1);
    return 0;
}

int mp_proc_which_in(const char *name, const char *path_list, char *out, size_t out_len)
{
    if (!name || !*name || !out || out_len == 0)
        return MP_EINVAL;
    out[0] = '\0';
    if (strchr(name, '/'))
        return is_executable(name) ? copy_out(name, out, out_len) : MP_ENOTFOUND;

    char def[256];
    if (!path_list) {
        /* Same fallback as execvp when PATH is unset. */
        size_t n = confstr(_CS_PATH, def, sizeof(def));
        path_list = (n > 0 && n <= sizeof(def)) ? def : "/bin:/usr/bin";
    }
    size_t nlen = strlen(name);
    const char *p = path_list;
    while (*p) {
        const char *end = strchr(p, ':');
        size_t dlen = end ? (size_t)(end - p) : strlen(p);
        /* An empty entry would mean the current directory; a tool that
         * silently runs ./nvidia-smi from wherever it was started is a trap. */
        if (dlen > 0) {
            char cand[4096];
            if (dlen + 1 + nlen + 1 <= sizeof(cand)) {
                memcpy(cand, p, dlen);
                cand[dlen] = '/';
                memcpy(cand + dlen + 1, name, nlen);
                cand[dlen + 1 + nlen] = '\0';
                if (is_executable(cand))
                    return copy_out(cand, out, out_len);
            }
        }
        if (!end)
            break;
        p = end + 1;
    }
    return MP_ENOTFOUND;
}

int mp_proc_which(const char *name, char *out, size_t out_len)
{
    return mp_proc_which_in(name, getenv("PATH"), out, out_len);
}
