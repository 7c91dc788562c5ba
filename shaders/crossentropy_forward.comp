#version 450
// losses[b,t] = logsumexp(logits[b,t,:]) - logits[b,t,target], target = tokens[offsets[b] + t + 1].
// One invocation per row: rows of ~65 are faster serial than cooperative (shared/LAVAPIPE.md).
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
layout(std430, binding = 0) readonly buffer Logits { float logits[]; }; // (B, T, V)
layout(std430, binding = 1) readonly buffer Tokens { uint tokens[]; };
layout(std430, binding = 2) readonly buffer Offsets { uint offsets[]; }; // (B,)
layout(std430, binding = 3) writeonly buffer Losses { float losses[]; }; // (B, T)
// rows row0 .. row0+rows-1 of the B*T (logits, losses, dlogits bound from row0: a batch too large for one binding)
layout(push_constant) uniform P { uint B, T, V, ld, lld, row0, rows; } p;  // lld: logits row stride (>= V); ld unused here
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
    losses[r] = log(sum) + mx - logits[o + target];
}
