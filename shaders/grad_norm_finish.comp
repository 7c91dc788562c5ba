#version 450
// Second pass of the gradient's norm: one workgroup adds grad_norm's T partial sums (each invocation a strided share,
// then a tree over the workgroup) and writes
//   clip = (scale, norm, 0, 0),  scale = min(1, grad_clip / (norm + 1e-6))  (1 when grad_clip is 0)
// as torch.nn.utils.clip_grad_norm_; adamw multiplies the gradient by scale.
layout(local_size_x = 64) in;  // not index.glsl's resizable size: the tree below needs all 64 invocations
layout(std430, binding = 0) readonly buffer Parts { float parts[]; };  // (T,)
layout(std430, binding = 1) writeonly buffer Clip { vec4 clip; };      // (4,)
layout(std140, binding = 2) uniform Hyper { vec4 h0, h1; } hyper;      // lr, beta1, beta2, eps | wd, bc1, bc2, grad_clip
layout(push_constant) uniform P { uint n, replicas, decay_end, parts; vec4 w0, w1; } p;
shared float s[64];
void main() {
    uint lid = gl_LocalInvocationID.x;
    float acc = 0.0;
    for (uint k = lid; k < p.parts; k += 64u) acc += parts[k];
    s[lid] = acc;
    barrier();
    for (uint k = 32u; k > 0u; k >>= 1) {
        if (lid < k) s[lid] += s[lid + k];
        barrier();
    }
    if (lid != 0u) return;
    float norm = sqrt(s[0]);
    float max_norm = hyper.h1.w;
    float scale = max_norm > 0.0 ? min(1.0, max_norm / (norm + 1e-6)) : 1.0;
    clip = vec4(scale, norm, 0.0, 0.0);
}
