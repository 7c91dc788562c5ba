#version 450
// Lab: the weight matrices of the trick, (T,T): mode 0 ones, 1 tril(ones), 2 tril(ones) with each row divided
// by its sum (an average of the past), 3 zeros (the affinities the softmax version starts from).
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
layout(std430, binding = 0) writeonly buffer W { float w[]; };  // (T, T)
layout(push_constant) uniform P { uint T, mode; } p;
void main() {
    uint i = gid();
    if (i >= p.T * p.T) return;
    uint r = i / p.T, c = i % p.T;
    float v = 0.0;
    if (p.mode == 0) v = 1.0;
    else if (p.mode == 1) v = c <= r ? 1.0 : 0.0;
    else if (p.mode == 2) v = c <= r ? 1.0 / float(r + 1) : 0.0;
    w[i] = v;
}
