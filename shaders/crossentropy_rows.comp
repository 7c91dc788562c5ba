#version 450
// Softmax cross-entropy over a wide vocabulary: one workgroup of 64 invocations a row (b, t), each taking a strided
// share of the V columns, the row's max and sum reduced over the workgroup in shared memory:
//   losses[b,t]    = logsumexp(logits[b,t,:]) - logits[b,t,target]
//   dlogits[b,t,:] = (softmax(logits[b,t,:]) - onehot(target)) / (B*T)
// The one-row-an-invocation kernels (crossentropy_forward/backward/fused) loop V times a row; a CPU driver stops
// every loop of an invocation after 65535 iterations in all, and here an invocation loops about 3 V / 64 times.
// The same values summed in another order. MODE (specialisation constant 0): 1 losses, 2 dlogits, 3 both.
layout(local_size_x = 64) in;  // not index.glsl's resizable size: the reductions need all 64 invocations
layout(constant_id = 0) const uint MODE = 3u;
layout(std430, binding = 0) readonly buffer Logits { float logits[]; };   // (B, T, lld)
layout(std430, binding = 1) readonly buffer Tokens { uint tokens[]; };
layout(std430, binding = 2) readonly buffer Offsets { uint offsets[]; };  // (B,)
layout(std430, binding = 3) writeonly buffer Losses { float losses[]; };  // (B, T)
layout(std430, binding = 4) writeonly buffer Dlogits { float dlogits[]; };// (B, T, ld)
// rows row0 .. row0+rows-1 of the B*T (logits, losses, dlogits bound from row0: a batch too large for one binding)
layout(push_constant) uniform P { uint B, T, V, ld, lld, row0, rows; } p;  // row strides (>= V): ld dlogits, lld logits
shared float s[64];
void main() {
    // one row a workgroup (over y too when x would pass the device's limit); the test is uniform in the workgroup
    uint r = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (r >= p.rows) return;
    uint lid = gl_LocalInvocationID.x;
    uint b = (p.row0 + r) / p.T, t = (p.row0 + r) % p.T;  // r: a row of the bound range
    uint target = tokens[offsets[b] + t + 1];
    uint o = r * p.lld;
    float mx = -1.0 / 0.0;
    for (uint v = lid; v < p.V; v += 64u) mx = max(mx, logits[o + v]);
    s[lid] = mx;
    barrier();
    for (uint k = 32u; k > 0u; k >>= 1) {
        if (lid < k) s[lid] = max(s[lid], s[lid + k]);
        barrier();
    }
    mx = s[0];
    barrier();  // every invocation has read s[0] before it is overwritten
    float sum = 0.0;
    for (uint v = lid; v < p.V; v += 64u) sum += exp(logits[o + v] - mx);
    s[lid] = sum;
    barrier();
    for (uint k = 32u; k > 0u; k >>= 1) {
        if (lid < k) s[lid] += s[lid + k];
        barrier();
    }
    sum = s[0];
    if ((MODE & 1u) != 0u && lid == 0u) losses[r] = log(sum) + mx - logits[o + target];
    if ((MODE & 2u) != 0u) {
        float inv = 1.0 / sum, scale = 1.0 / float(p.B * p.T);
        for (uint v = lid; v < p.V; v += 64u) {
            float prob = exp(logits[o + v] - mx) * inv;
            dlogits[r * p.ld + v] = (prob - (v == target ? 1.0 : 0.0)) * scale;
        }
        for (uint v = p.V + lid; v < p.ld; v += 64u) dlogits[r * p.ld + v] = 0.0;  // padding: no gradient
    }
}
