#version 450
// dlogits[b,t,:] = (softmax(logits[b,t,:]) - onehot(target)) / (B*T): the gradient of the mean loss.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
layout(std430, binding = 0) readonly buffer Logits { float logits[]; };   // (B, T, V)
layout(std430, binding = 1) readonly buffer Tokens { uint tokens[]; };
layout(std430, binding = 2) readonly buffer Offsets { uint offsets[]; };  // (B,)
layout(std430, binding = 3) writeonly buffer Dlogits { float dlogits[]; };// (B, T, ld)
// rows row0 .. row0+rows-1 of the B*T (logits, losses, dlogits bound from row0: a batch too large for one binding)
layout(push_constant) uniform P { uint B, T, V, ld, lld, row0, rows; } p;  // row strides (>= V): ld dlogits, lld logits
void main() {
    uint r = gid();
    if (r >= p.rows) return;
    uint b = (p.row0 + r) / p.T, t = (p.row0 + r) % p.T;  // r: a row of the bound range
    uint target = tokens[offsets[b] + t + 1];
    uint o = r * p.lld;
    float mx = -1.0 / 0.0;
    for (uint v = 0; v < p.V; v++) mx = max(mx, logits[o + v]);
    float sum = 0.0;
    for (uint v = 0; v < p.V; v++) sum += exp(logits[o + v] - mx);
    float inv = 1.0 / sum, scale = 1.0 / float(p.B * p.T);
    for (uint v = 0; v < p.V; v++) {
        float prob = exp(logits[o + v] - mx) * inv;
        dlogits[r * p.ld + v] = (prob - (v == target ? 1.0 : 0.0)) * scale;
    }
    for (uint v = p.V; v < p.ld; v++) dlogits[r * p.ld + v] = 0.0;  // padding: no gradient
}
