#version 450
// result[slot] = mean(values[0..n)) and result[slot+1] = 1 when any value is NaN or Inf.
// A single invocation sums in a fixed order, so the loss is bit-reproducible.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
layout(std430, binding = 0) readonly buffer Values { float values[]; }; // (n,)
layout(std430, binding = 1) writeonly buffer Result { float result[]; };
layout(push_constant) uniform P { uint n, slot; } p;
void main() {
    if (gid() != 0) return;
    float s = 0.0;
    bool bad = false;
    for (uint i = 0; i < p.n; i++) {
        float x = values[i];
        if (isnan(x) || isinf(x)) bad = true;
        s += x;
    }
    result[p.slot] = s / float(p.n);
    result[p.slot + 1] = bad ? 1.0 : 0.0;
}
