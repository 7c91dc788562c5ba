#version 450
// Lab: row-wise softmax(mult * s), one invocation per row. With causal, rows are those of square (n,n)
// matrices and entries right of the diagonal are first filled with -inf: the lecture's masked_fill + softmax.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
layout(std430, binding = 0) readonly buffer S { float s[]; };     // (rows, n)
layout(std430, binding = 1) writeonly buffer O { float o[]; };    // (rows, n)
layout(push_constant) uniform P { uint rows, n, causal; float mult; } p;
void main() {
    uint r = gid();
    if (r >= p.rows) return;
    uint t = r % p.n, r0 = r * p.n;
    float neg_inf = -1.0 / 0.0;
    float mx = neg_inf;
    for (uint j = 0; j < p.n; j++) {
        float v = (p.causal != 0 && j > t) ? neg_inf : p.mult * s[r0 + j];
        mx = max(mx, v);
    }
    float sum = 0.0;
    for (uint j = 0; j < p.n; j++) {
        bool masked = p.causal != 0 && j > t;
        sum += masked ? 0.0 : exp(p.mult * s[r0 + j] - mx);  // exp(-inf) = 0, written out for drivers that differ
    }
    for (uint j = 0; j < p.n; j++) {
        bool masked = p.causal != 0 && j > t;
        o[r0 + j] = masked ? 0.0 : exp(p.mult * s[r0 + j] - mx) / sum;
    }
}
