#version 450
// Second pass of a reduction split over row ranges (matmul backward's dw/dbias, LayerNorm backward's dw/db):
//   out1[i] = sum_s part[s*stride + i]        for i < L1
//   out2[j] = sum_s part[s*stride + L1 + j]   for j < L2
// summed in a fixed order (s = 0, 1, ...), so results are deterministic.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
layout(std430, binding = 0) readonly buffer Part { float part[]; };  // (splits, stride)
layout(std430, binding = 1) writeonly buffer Out1 { float out1[]; };  // (L1,)
layout(std430, binding = 2) writeonly buffer Out2 { float out2[]; };  // (L2,)
layout(push_constant) uniform P { uint L1, L2, splits, stride; } p;
void main() {
    uint i = gid();
    if (i >= p.L1 + p.L2) return;
    float s = 0.0;
    for (uint k = 0; k < p.splits; k++) s += part[k * p.stride + i];
    if (i < p.L1) out1[i] = s;
    else out2[i - p.L1] = s;
}
