/* --gpu-arch NAME|auto and --gpu-arch-json FILE of the trace commands
 * (`trace report`, `trace replay`, `trace stages`): one resolution, one
 * error style (cli/trace_arch.c). */
#ifndef MAGPIE_CLI_TRACE_ARCH_H
#define MAGPIE_CLI_TRACE_ARCH_H

#include <stdbool.h>

#include <magpie/roofline.h>

/* Resolves the two options into *arch: the JSON file when given (it wins
 * over a name), else a built-in arch by name; "auto" and nothing leave
 * *out NULL (the caller's default applies). *is_auto says whether the
 * name was "auto". Returns -1 to go on, else the exit code (2: an unknown
 * name, an unreadable or invalid file, naming the file and the field),
 * the error already printed. */
int cli_trace_arch(const char *name, const char *json, struct mp_roofline_arch *arch,
                   const struct mp_roofline_arch **out, bool *is_auto);

#endif
