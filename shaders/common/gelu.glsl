// GELU in two forms. Exact (PyTorch's nn.GELU(), approximate='none'): x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), and its derivative
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
vec4 gelu_exact(vec4 x) { return 0.5 * x * (1.0 + erf_approx(x * 0.70710678118654752)); }
vec4 gelu_exact_grad(vec4 x) {
    return 0.5 * (1.0 + erf_approx(x * 0.70710678118654752)) + x * 0.39894228040143268 * exp(-0.5 * x * x);
}
float gelu_exact(float x) { return 0.5 * x * (1.0 + erf_approx(x * 0.70710678118654752)); }
float gelu_exact_grad(float x) {
    return 0.5 * (1.0 + erf_approx(x * 0.70710678118654752)) + x * 0.39894228040143268 * exp(-0.5 * x * x);
}

// GELU's tanh form (PyTorch's nn.GELU(approximate='tanh'), GPT-2's gelu_new):
//   gelu(x)  = 0.5 x (1 + tanh(u)),  u = sqrt(2/pi) (x + 0.044715 x^3)
//   gelu'(x) = 0.5 (1 + tanh(u)) + 0.5 x (1 - tanh(u)^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2)
// written with the logistic function, 0.5 (1 + tanh(u)) = sig(2u) and 0.5 (1 - tanh(u)^2) = 2 sig(2u) sig(-2u): no
// difference of nearly equal numbers in either tail, and exact at both ends (exp overflowing to +inf gives 0)
vec4 sig(vec4 z) { return 1.0 / (1.0 + exp(-z)); }
float sig(float z) { return 1.0 / (1.0 + exp(-z)); }
vec4 gelu_tanh(vec4 x) { return x * sig(1.5957691216057307 * (x + 0.044715 * x * x * x)); }
vec4 gelu_tanh_grad(vec4 x) {
    vec4 z = 1.5957691216057307 * (x + 0.044715 * x * x * x);  // 2u
    vec4 p = sig(z);
    return p + 2.0 * x * p * sig(-z) * 0.79788456080286536 * (1.0 + 0.134145 * x * x);
}
float gelu_tanh(float x) { return x * sig(1.5957691216057307 * (x + 0.044715 * x * x * x)); }
float gelu_tanh_grad(float x) {
    float z = 1.5957691216057307 * (x + 0.044715 * x * x * x);
    float p = sig(z);
    return p + 2.0 * x * p * sig(-z) * 0.79788456080286536 * (1.0 + 0.134145 * x * x);
}

// The form a pipeline computes (specialisation constant 0, ops/gelu.h): 1 exact, 2 tanh
layout(constant_id = 0) const uint GELU_FORM = 1u;
vec4 gelu(vec4 x) { return GELU_FORM == 2u ? gelu_tanh(x) : gelu_exact(x); }
vec4 gelu_grad(vec4 x) { return GELU_FORM == 2u ? gelu_tanh_grad(x) : gelu_exact_grad(x); }
float gelu(float x) { return GELU_FORM == 2u ? gelu_tanh(x) : gelu_exact(x); }
float gelu_grad(float x) { return GELU_FORM == 2u ? gelu_tanh_grad(x) : gelu_exact_grad(x); }
