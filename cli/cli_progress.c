/* Progress line on stderr for long work, only when stderr is a terminal. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"

struct cli_progress {
    const char *label;
    bool enabled;
    uint64_t t0, last;
    bool drawn;
};

struct cli_progress *cli_progress_new(const char *label, bool enabled)
{
    struct cli_progress *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->label = label;
    p->enabled = enabled && isatty(STDERR_FILENO);
    p->t0 = mp_time_ns();
    return p;
}

void cli_progress_update(struct cli_progress *p, unsigned long long done, unsigned long long total,
                         const char *unit)
{
    if (!p || !p->enabled)
        return;
    uint64_t now = mp_time_ns();
    if (now - p->last < 100000000ULL) /* 10 updates per second at most */
        return;
    p->last = now;
    double secs = (double)(now - p->t0) / 1e9;
    double rate = secs > 0 ? (double)done / secs : 0;
    if (total > 0) {
        double frac = (double)done / (double)total;
        double eta = rate > 0 && done < total ? (double)(total - done) / rate : 0;
        fprintf(stderr, "\r%s: %5.1f%% %.1f/%.1f M%s  %.1f M%s/s  ETA %.0fs   ", p->label,
                frac * 100, (double)done / 1e6, (double)total / 1e6, unit, rate / 1e6, unit, eta);
    } else {
        fprintf(stderr, "\r%s: %.1f M%s  %.1f M%s/s   ", p->label, (double)done / 1e6, unit,
                rate / 1e6, unit);
    }
    p->drawn = true;
}

void cli_progress_finish(struct cli_progress *p)
{
    if (!p)
        return;
    if (p->drawn)
        fprintf(stderr, "\r\033[K");
    free(p);
}

void cli_progress_bytes(uint64_t bytes, uint64_t raw_pos, uint64_t raw_size, void *user)
{
    (void)bytes;
    cli_progress_update(user, raw_pos, raw_size, "B");
}

int cli_parse_double(const char *opt, const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end) {
        fprintf(stderr, "magpie: error: %s expects a number, not '%s'\n", opt, s);
        return EXIT_USAGE;
    }
    *out = v;
    return 0;
}
