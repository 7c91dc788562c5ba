#version 450
// Attention on GPUs, the row step between attention_nt_smem and the products with v (forward) or q, k (backward):
// one workgroup of 64 per row (b, h, t) of the (T, T) matrices, the row's sums reduced in shared memory.
//   phase 0:  att[row] = softmax(att[row]) over t2 <= t (causal) or all t2; 0 above the diagonal
//   phase 1:  dpre[row] = att * (datt - sum(att * datt)), datt being dpre as attention_nt_smem wrote it; 0 above
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Att { float att[]; };    // (B, NH, T, T)
layout(std430, binding = 1) buffer Dpre { float dpre[]; };  // (B, NH, T, T), phase 1
layout(push_constant) uniform P { uint B, T, NH, causal, phase; } p;
shared float red[64];
float reduce_sum(float v) {  // over the workgroup; every invocation gets the total
    uint t = gl_LocalInvocationID.x;
    red[t] = v;
    barrier();
    for (uint s = 32; s > 0; s >>= 1) {
        if (t < s) red[t] += red[t + s];
        barrier();
    }
    float total = red[0];
    barrier();  // red is reused by the next reduction
    return total;
}
float reduce_max(float v) {
    uint t = gl_LocalInvocationID.x;
    red[t] = v;
    barrier();
    for (uint s = 32; s > 0; s >>= 1) {
        if (t < s) red[t] = max(red[t], red[t + s]);
        barrier();
    }
    float total = red[0];
    barrier();
    return total;
}
void main() {
    uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;  // (b, h, t); see gemm_smem.glsl
    if (row >= p.B * p.NH * p.T) return;  // whole workgroups only
    uint t = row % p.T, base = row * p.T, tid = gl_LocalInvocationID.x;
    uint n = p.causal != 0 ? t + 1 : p.T;  // the unmasked t2
    if (p.phase == 0) {
        float mx = -1.0 / 0.0;
        for (uint t2 = tid; t2 < n; t2 += 64) mx = max(mx, att[base + t2]);
        mx = reduce_max(mx);
        float sum = 0.0;
        for (uint t2 = tid; t2 < n; t2 += 64) sum += exp(att[base + t2] - mx);
        float inv = 1.0 / reduce_sum(sum);
        for (uint t2 = tid; t2 < p.T; t2 += 64) att[base + t2] = t2 < n ? exp(att[base + t2] - mx) * inv : 0.0;
        return;
    }
    float d = 0.0;
    for (uint t2 = tid; t2 < n; t2 += 64) d += att[base + t2] * dpre[base + t2];
    d = reduce_sum(d);
    for (uint t2 = tid; t2 < p.T; t2 += 64) dpre[base + t2] = t2 < n ? att[base + t2] * (dpre[base + t2] - d) : 0.0;
}
