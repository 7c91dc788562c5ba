#version 450
// Backward of matmul_forward_tiled (K % 4 == 0), one dispatch with three index ranges:
//   dinp(M,K) (+)= dout(M,N) @ w(N,K)     tiles of 4 rows x 8 k
//   dw(N,K)    = dout^T(N,M) @ inp(M,K)   tiles of 4 n x 8 k
//   dbias(N)   = sum_m dout(M,N)
// When relu is set, dout is masked by the forward output > 0. Inputs read through texel buffers.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
#include "matmul_backward_tiled.glsl"
