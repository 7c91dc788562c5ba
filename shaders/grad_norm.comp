#version 450
// First pass of the gradient's global L2 norm (clip_grad_norm_): invocation j of T sums the squares of the 8 vec4s
// j, j + T, ..., j + 7T (T = ceil(n / 8): adjacent invocations read adjacent vec4s) into parts[j]; grad_norm_finish
// adds the T partial sums. The gradient is read as adamw reads it: one (n,) vec4 buffer, or the weighted mean of R
// replicas' slices. No loop over a dynamic count and no barrier: straight-line code, what a CPU driver runs fastest.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
layout(binding = 0) uniform samplerBuffer grads_t;                      // (n,) vec4, or (replicas, n) vec4
layout(std430, binding = 1) writeonly buffer Parts { float parts[]; };  // (T,)
layout(push_constant) uniform P {
    uint n;         // number of vec4s (in one gradient)
    uint replicas;  // 1, or R slices' gradients in grads_t
    uint decay_end;
    uint parts;     // T = ceil(n / 8)
    vec4 w0, w1;    // weight of slice r: w0[r] for r < 4, w1[r - 4] after (replicas > 1)
} p;
#include "replica_grad.glsl"
vec4 grad(uint i) { return i < p.n ? replica_grad(i) : vec4(0.0); }
void main() {
    uint j = gid();
    if (j >= p.parts) return;
    float acc = 0.0;
    for (uint k = 0u; k < 8u; k++) {  // a constant count: unrolled
        vec4 g = grad(j + k * p.parts);
        acc += dot(g, g);
    }
    parts[j] = acc;
}
