/* MCP tool list_benchmark_images: the docker image table of `magpie
 * benchmark --run-mode docker` (the engine table, src/serve/engines.c) per framework and GPU
 * architecture, with the InferenceX runner type of each architecture. */
#include <string.h>

#include <magpie/serve.h>

#include "../mcp_int.h"

/* The architectures the image table covers. */
static const char *const archs[] = {"gfx942", "gfx950", "sm_80", "sm_90", "sm_90a", "sm_100"};

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    (void)w;
    const char *only = mcp_str(args, "framework");
    json_t *images = json_object(), *details = json_object();
    for (int f = 0; f < MP_SERVE_N_FW; f++) {
        const char *fw = mp_serve_framework_name((enum mp_serve_framework)f);
        if (only && strcmp(only, fw) != 0)
            continue;
        json_t *im = json_object(), *de = json_object();
        for (size_t i = 0; i < sizeof(archs) / sizeof(*archs); i++) {
            const char *img = NULL;
            if (mp_serve_image_for((enum mp_serve_framework)f, archs[i], &img, NULL) != 0 || !img)
                continue;
            json_object_set_new(im, archs[i], json_string(img));
            json_t *x = json_object();
            const char *rt = mp_serve_runner_for(archs[i]);
            json_object_set_new(x, "image", json_string(img));
            json_object_set_new(x, "runner_type", json_string(rt ? rt : "unknown"));
            json_object_set_new(de, archs[i], x);
        }
        json_object_set_new(images, fw, im);
        json_object_set_new(details, fw, de);
    }
    json_t *r = json_object();
    json_object_set_new(r, "images", images);
    json_object_set_new(r, "details", details);
    *result = r;
    return 0;
}

static const struct mcp_param params[] = {
    {"framework", MT_STR, false, NULL, "vllm|sglang|atom|trtllm|lmdeploy", 0, 0,
     "one framework; null = all"},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_list_benchmark_images = {
    .name = "list_benchmark_images",
    .title = "Benchmark docker images",
    .desc = "The default docker image per serving framework and GPU architecture used by "
            "benchmark in docker run mode.",
    .params = params,
    .run = run,
    .flags = MCP_READONLY,
    .result_desc = "`{images{framework{arch: image}}, details{framework{arch{image, "
                   "runner_type}}}}`.",
};
