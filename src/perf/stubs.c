#include "perf_int.h"

void pm_unary(struct pm_ctx *c)
{
    pm_fail(c, "stub");
}

void pm_replication_pad(struct pm_ctx *c)
{
    pm_fail(c, "stub");
}

void pm_upsample_nearest(struct pm_ctx *c)
{
    pm_fail(c, "stub");
}

void pm_binary(struct pm_ctx *c)
{
    pm_fail(c, "stub");
}

void pm_liger_silu_mul(struct pm_ctx *c)
{
    pm_fail(c, "stub");
}

void pm_reduce(struct pm_ctx *c)
{
    pm_fail(c, "stub");
}

void pm_silu_and_mul(struct pm_ctx *c)
{
    pm_fail(c, "stub");
}

void pm_norm_batch(struct pm_ctx *c)
{
    pm_fail(c, "stub");
}

void pm_norm_batch_bwd(struct pm_ctx *c)
{
    pm_fail(c, "stub");
}

void pm_norm_layer(struct pm_ctx *c)
{
    pm_fail(c, "stub");
}

void pm_norm_layer_bwd(struct pm_ctx *c)
{
    pm_fail(c, "stub");
}

void pm_norm_group(struct pm_ctx *c)
{
    pm_fail(c, "stub");
}

void pm_norm_group_bwd(struct pm_ctx *c)
{
    pm_fail(c, "stub");
}

void pm_norm_instance(struct pm_ctx *c)
{
    pm_fail(c, "stub");
}

void pm_norm_instance_bwd(struct pm_ctx *c)
{
    pm_fail(c, "stub");
}

void pm_norm_rms(struct pm_ctx *c)
{
    pm_fail(c, "stub");
}

void pm_norm_rms_bwd(struct pm_ctx *c)
{
    pm_fail(c, "stub");
}

void pm_conv(struct pm_ctx *c)
{
    pm_fail(c, "stub");
}

void pm_conv_bwd(struct pm_ctx *c)
{
    pm_fail(c, "stub");
}
