#version 450
// crossentropy_fused for rows padded to a multiple of 4 (lm_head's logits and dlogits, ld % 4 == 0 and lld % 4 == 0):
// logits read as vec4 texels and dlogits stored as vec4, 4x fewer fetches and stores (a store to a storage buffer is
// a loop over the lanes on lavapipe). The columns past V are masked out of the max and the sum (never read as
// numbers: whatever the padding holds), and each vec4's components are taken in order, so the arithmetic is that of
// crossentropy_fused, value by value: the same bits.
//   losses[b,t]    = logsumexp(logits[b,t,:]) - logits[b,t,target]
//   dlogits[b,t,:] = (softmax(logits[b,t,:]) - onehot(target)) / (B*T), 0 past V
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
layout(binding = 0) uniform samplerBuffer logits4;                        // (B, T, lld/4) vec4
layout(std430, binding = 1) readonly buffer Tokens { uint tokens[]; };
layout(std430, binding = 2) readonly buffer Offsets { uint offsets[]; };  // (B,)
layout(std430, binding = 3) writeonly buffer Losses { float losses[]; };  // (B, T)
layout(std430, binding = 4) writeonly buffer Dlogits { vec4 dlogits4[]; };// (B, T, ld/4)
// rows row0 .. row0+rows-1 of the B*T (logits, losses, dlogits bound from row0: a batch too large for one binding)
layout(push_constant) uniform P { uint B, T, V, ld, lld, row0, rows; } p;
void main() {
    uint r = gid();
    if (r >= p.rows) return;
    uint b = (p.row0 + r) / p.T, t = (p.row0 + r) % p.T;  // r: a row of the bound range
    uint target = tokens[offsets[b] + t + 1];
    uint V4 = (p.V + 3) / 4, full = p.V / 4;  // vec4s holding logits; those holding four
    int o = int(r * (p.lld / 4));
    const float ninf = -1.0 / 0.0;
    float mx = ninf;
    for (uint v4 = 0; v4 < full; v4++) {
        vec4 x = texelFetch(logits4, o + int(v4));
        mx = max(mx, x.x); mx = max(mx, x.y); mx = max(mx, x.z); mx = max(mx, x.w);
    }
    if (full < V4) {  // the last, partial vec4: its padding never counts
        vec4 x = texelFetch(logits4, o + int(full));
        uint n = p.V - 4 * full;
        mx = max(mx, x.x);
        if (n > 1) mx = max(mx, x.y);
        if (n > 2) mx = max(mx, x.z);
    }
    float sum = 0.0;
    for (uint v4 = 0; v4 < full; v4++) {
        vec4 e = exp(texelFetch(logits4, o + int(v4)) - mx);
        sum += e.x; sum += e.y; sum += e.z; sum += e.w;
    }
    if (full < V4) {
        vec4 e = exp(texelFetch(logits4, o + int(full)) - mx);
        uint n = p.V - 4 * full;
        sum += e.x;
        if (n > 1) sum += e.y;
        if (n > 2) sum += e.z;
    }
    vec4 xt = texelFetch(logits4, o + int(target / 4));
    float lt = target % 4 == 0 ? xt.x : target % 4 == 1 ? xt.y : target % 4 == 2 ? xt.z : xt.w;
    losses[r] = log(sum) + mx - lt;
    float inv = 1.0 / sum, scale = 1.0 / float(p.B * p.T);
    uint d = r * (p.ld / 4);
    for (uint v4 = 0; v4 < V4; v4++) {
        uvec4 v = uvec4(4 * v4) + uvec4(0, 1, 2, 3);
        vec4 prob = exp(texelFetch(logits4, o + int(v4)) - mx) * inv;
        vec4 g = (prob - vec4(equal(v, uvec4(target)))) * scale;
        dlogits4[d + v4] = mix(vec4(0.0), g, lessThan(v, uvec4(p.V)));  // padding: no gradient
    }
    for (uint v4 = V4; v4 < p.ld / 4; v4++) dlogits4[d + v4] = vec4(0.0);
}
