#version 450
// crossentropy_forward and crossentropy_backward in one pass for a training step (one softmax, one dispatch):
//   losses[b,t]    = logsumexp(logits[b,t,:]) - logits[b,t,target]
//   dlogits[b,t,:] = (softmax(logits[b,t,:]) - onehot(target)) / (B*T)
// the same arithmetic in the same order as the two separate kernels, so the same bits. Logits are read as R32F
// texels (a vector gather on lavapipe instead of a scalar loop per lane).
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
layout(binding = 0) uniform samplerBuffer logits_t;                       // (B, T, V)
layout(std430, binding = 1) readonly buffer Tokens { uint tokens[]; };
layout(std430, binding = 2) readonly buffer Offsets { uint offsets[]; };  // (B,)
layout(std430, binding = 3) writeonly buffer Losses { float losses[]; };  // (B, T)
layout(std430, binding = 4) writeonly buffer Dlogits { float dlogits[]; };// (B, T, ld)
// rows row0 .. row0+rows-1 of the B*T (logits, losses, dlogits bound from row0: a batch too large for one binding)
layout(push_constant) uniform P { uint B, T, V, ld, lld, row0, rows; } p;  // row strides (>= V): ld dlogits, lld logits
void main() {
    uint r = gid();
    if (r >= p.rows) return;
    uint b = (p.row0 + r) / p.T, t = (p.row0 + r) % p.T;  // r: a row of the bound range
    uint target = tokens[offsets[b] + t + 1];
    uint o = r * p.lld;
    float mx = -1.0 / 0.0;
    for (uint v = 0; v < p.V; v++) mx = max(mx, texelFetch(logits_t, int(o + v)).x);
    float sum = 0.0;
    for (uint v = 0; v < p.V; v++) sum += exp(texelFetch(logits_t, int(o + v)).x - mx);
    losses[r] = log(sum) + mx - texelFetch(logits_t, int(o + target)).x;
    float inv = 1.0 / sum, scale = 1.0 / float(p.B * p.T);
    for (uint v = 0; v < p.V; v++) {
        float prob = exp(texelFetch(logits_t, int(o + v)).x - mx) * inv;
        dlogits[r * p.ld + v] = (prob - (v == target ? 1.0 : 0.0)) * scale;
    }
    for (uint v = p.V; v < p.ld; v++) dlogits[r * p.ld + v] = 0.0;  // padding: no gradient
}
