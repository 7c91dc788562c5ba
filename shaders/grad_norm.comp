#version 450
// First pass of the gradient's global L2 norm (clip_grad_norm_): k_norm_parts workgroups of 64 invocations stride over
// the flat gradient, each workgroup writing its partial sum of squares. The gradient is read as adamw reads it: one
// (n,) vec4 buffer, or the weighted mean of R replicas' slices. Fixed order throughout: the same bits every run.
layout(local_size_x = 64) in;  // not index.glsl's resizable size: the tree sum below needs all 64 lanes
layout(binding = 0) uniform samplerBuffer grads_t;             // (n,) vec4, or (replicas, n) vec4
layout(std430, binding = 1) writeonly buffer Parts { float parts[]; };  // (gl_NumWorkGroups.x,)
layout(push_constant) uniform P {
    uint n;         // number of vec4s (in one gradient)
    uint replicas;  // 1, or R slices' gradients in grads_t
    uint decay_end, pad1;
    vec4 w0, w1;    // weight of slice r: w0[r] for r < 4, w1[r - 4] after (replicas > 1)
} p;
shared float s[64];
void main() {
    uint lid = gl_LocalInvocationID.x;
    uint stride = gl_NumWorkGroups.x * 64u;
    float acc = 0.0;
    for (uint i = gl_WorkGroupID.x * 64u + lid; i < p.n; i += stride) {
        vec4 g;
        if (p.replicas <= 1u) {
            g = texelFetch(grads_t, int(i));
        } else {
            g = vec4(0.0);
            for (uint r = 0u; r < p.replicas; r++) {
                float w = r < 4u ? p.w0[r] : p.w1[r - 4u];
                g += w * texelFetch(grads_t, int(r * p.n + i));
            }
        }
        acc += dot(g, g);
    }
    s[lid] = acc;
    barrier();
    for (uint k = 32u; k > 0u; k >>= 1) {
        if (lid < k) s[lid] += s[lid + k];
        barrier();
    }
    if (lid == 0u) parts[gl_WorkGroupID.x] = s[0];
}
