#version 450
// AdamW as PyTorch's defaults: decoupled weight decay, bias-corrected moments. Four parameters per
// invocation (vec4 loads; the flat buffer is padded to a multiple of 64 floats).
// Hyperparameters come from a small buffer the host rewrites each step: no re-recording.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
layout(std430, binding = 0) buffer Params { vec4 params[]; };
layout(std430, binding = 1) readonly buffer Grads { vec4 grads[]; };
layout(std430, binding = 2) buffer M { vec4 m[]; };
layout(std430, binding = 3) buffer V { vec4 v[]; };
layout(std430, binding = 4) readonly buffer H { float lr, beta1, beta2, eps, weight_decay, bc1, bc2; } h;
layout(push_constant) uniform P { uint n; } p;  // n: number of vec4s
void main() {
    uint i = gid();
    if (i >= p.n) return;
    vec4 g = grads[i];
    vec4 x = params[i] * (1.0 - h.lr * h.weight_decay);
    vec4 mi = h.beta1 * m[i] + (1.0 - h.beta1) * g;
    vec4 vi = h.beta2 * v[i] + (1.0 - h.beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    vec4 denom = sqrt(vi) / sqrt(h.bc2) + h.eps;
    params[i] = x - (h.lr / h.bc1) * mi / denom;
}
