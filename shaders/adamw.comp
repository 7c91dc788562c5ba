#version 450
// AdamW as PyTorch's defaults: decoupled weight decay, bias-corrected moments. Four parameters per
// invocation (the flat buffer is padded to a multiple of 64 floats). Everything is read through texel buffers
// (vector gathers on lavapipe; storage-buffer loads there are a loop over the lanes) and written through storage
// buffers: each invocation reads its own four values before it writes them.
// Hyperparameters come from a small uniform buffer the host rewrites each step: no re-recording. The gradient is
// scaled by clip.x (grad_norm's clipping scale, or 1); weight decay applies to vec4s before decay_end only.
// With replicas > 1 (data parallelism, Trainer's replicas) the gradient is first the batch's, from the gradients of
// its slices side by side (each the mean over its own rows): their mean weighted by the slices' rows, summed in slice
// order, so every replica computes the same bits (this all-reduce in the update's pass saves a pass of its own).
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
layout(binding = 0) uniform samplerBuffer params_t;                  // (n,) vec4, the weights before the step
layout(binding = 1) uniform samplerBuffer grads_t;                   // (n,) vec4, or (replicas, n) vec4
layout(binding = 2) uniform samplerBuffer m_t;                       // (n,) vec4, first moments before the step
layout(binding = 3) uniform samplerBuffer v_t;                       // (n,) vec4, second moments before the step
layout(std140, binding = 4) uniform Hyper { vec4 h0, h1; } hyper;   // lr, beta1, beta2, eps | wd, bc1, bc2, clip
layout(std140, binding = 5) uniform Clip { vec4 clip; };            // scale, norm, -, -
layout(std430, binding = 6) writeonly buffer Params { vec4 params[]; };  // the same buffers as 0, 2, 3
layout(std430, binding = 7) writeonly buffer M { vec4 m[]; };
layout(std430, binding = 8) writeonly buffer V { vec4 v[]; };
layout(push_constant) uniform P {
    uint n;         // number of vec4s (in one gradient)
    uint replicas;  // 1, or R slices' gradients in grads_t
    uint decay_end; // vec4s from here on are not weight-decayed
    uint parts;     // grad_norm's, unused here
    vec4 w0, w1;    // weight of slice r: w0[r] for r < 4, w1[r - 4] after (replicas > 1)
} p;
#include "replica_grad.glsl"
void main() {
    vec4 h0 = hyper.h0, h1 = hyper.h1, c = clip;  // constant offsets: one load for all lanes on lavapipe, not a fetch each
    uint i = gid();
    if (i >= p.n) return;
    float lr = h0.x, beta1 = h0.y, beta2 = h0.z, eps = h0.w, bc1 = h1.y, bc2 = h1.z;
    float weight_decay = i < p.decay_end ? h1.x : 0.0;
    vec4 g = replica_grad(i);
    g *= c.x;
    vec4 x = texelFetch(params_t, int(i)) * (1.0 - lr * weight_decay);
    vec4 mi = beta1 * texelFetch(m_t, int(i)) + (1.0 - beta1) * g;
    vec4 vi = beta2 * texelFetch(v_t, int(i)) + (1.0 - beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    vec4 denom = sqrt(vi) / sqrt(bc2) + eps;
    params[i] = x - (lr / bc1) * mi / denom;
}
