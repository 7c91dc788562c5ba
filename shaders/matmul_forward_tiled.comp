#version 450
// out(M,N) = inp(M,K) @ w(N,K)^T + bias(N), optional ReLU, optional residual(M,N) added last.
// Fast path for K % 4 == 0: inputs are read as RGBA32F texel buffers (vector gathers on lavapipe, cached
// loads on GPUs) and each invocation keeps a 16x16 tile of outputs in registers: 32 fetches per 1024 MACs.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
#include "matmul_forward_tiled.glsl"
