/* Benchmark workspace readers (bench_ws.c). */
#ifndef MP_MCP_BENCH_WS_INT_H
#define MP_MCP_BENCH_WS_INT_H

#include "mcp_int.h"

/* Magpie's per-run keys of a workspace; the whole report under "_report"
 * (callers take what they need and delete it). NULL with err when the
 * workspace has no readable benchmark_report.json. */
json_t *mcp_ws_summary(const char *ws, bool brief, char *err, size_t errlen);
/* Paths of the files in dir ending with suffix, sorted by name. */
json_t *mcp_ws_files(const char *dir, const char *suffix);

#endif
