// Exact GELU (PyTorch's nn.GELU(), approximate='none'): x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), and its derivative
// Phi(x) + x phi(x). GLSL has no erf: erf_approx is Abramowitz & Stegun 7.1.26 (absolute error under 1.5e-7, below
// float32's resolution of Phi near 1).
float erf_approx(float x) {
    float a = abs(x);
    float t = 1.0 / (1.0 + 0.3275911 * a);
    float y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t *
                        exp(-a * a);
    return x < 0.0 ? -y : y;
}
// The same for four values at once (the vec4 shaders: identical arithmetic per lane, so the same bits).
vec4 erf_approx(vec4 x) {
    vec4 a = abs(x);
    vec4 t = 1.0 / (1.0 + 0.3275911 * a);
    vec4 y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t *
                       exp(-a * a);
    return mix(y, -y, lessThan(x, vec4(0.0)));
}
vec4 gelu(vec4 x) { return 0.5 * x * (1.0 + erf_approx(x * 0.70710678118654752)); }
vec4 gelu_grad(vec4 x) {
    return 0.5 * (1.0 + erf_approx(x * 0.70710678118654752)) + x * 0.39894228040143268 * exp(-0.5 * x * x);
}
float gelu(float x) { return 0.5 * x * (1.0 + erf_approx(x * 0.70710678118654752)); }
float gelu_grad(float x) {
    return 0.5 * (1.0 + erf_approx(x * 0.70710678118654752)) + x * 0.39894228040143268 * exp(-0.5 * x * x);
}
