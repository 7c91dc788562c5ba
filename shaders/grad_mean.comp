#version 450
// Data parallelism's all-reduce (Trainer's replicas, ops/allreduce.h): each device computed the gradient of the
// mean loss over its slice of the batch; the batch's gradient is their mean weighted by the slices' rows. The
// host copied every slice's gradient side by side into `all`; each device runs this on the same input, in the same
// order, so all of them hold the same bits before AdamW. Four floats an invocation.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
layout(binding = 0) uniform samplerBuffer all_t;               // (R, n) vec4
layout(std430, binding = 1) writeonly buffer G { vec4 g[]; };  // (n,) vec4
layout(push_constant) uniform P {
    uint n;         // vec4s in one gradient
    uint replicas;  // R
    uint pad0, pad1;
    vec4 w0, w1;    // weight of slice r: w0[r] for r < 4, w1[r - 4] after
} p;
void main() {
    uint i = gid();
    if (i >= p.n) return;
    vec4 s = vec4(0.0);
    for (uint r = 0u; r < p.replicas; r++) {
        float w = r < 4u ? p.w0[r] : p.w1[r - 4u];
        s += w * texelFetch(all_t, int(r * p.n + i));
    }
    g[i] = s;
}
