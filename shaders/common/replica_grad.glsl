// The gradient as AdamW applies it, vec4 i of n: grads_t itself, or with p.replicas > 1 the weighted mean of the
// replicas' slices side by side in grads_t (slice r's weight p.w0[r] for r < 4, p.w1[r - 4] after), summed in slice
// order so every replica computes the same bits. Needs grads_t and the push constants p (n, replicas, w0, w1) declared.
vec4 replica_grad(uint i) {
    if (p.replicas <= 1u) return texelFetch(grads_t, int(i));
    vec4 g = vec4(0.0);
    for (uint r = 0u; r < p.replicas; r++) g += (r < 4u ? p.w0[r] : p.w1[r - 4u]) * texelFetch(grads_t, int(r * p.n + i));
    return g;
}
