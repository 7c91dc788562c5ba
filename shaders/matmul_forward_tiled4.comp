#version 450
// matmul_forward_tiled for N % 4 == 0: outputs stored (and residuals read) four at a time.
#extension GL_GOOGLE_include_directive : require
#define OUT_VEC4 1
#include "index.glsl"
#include "matmul_forward_tiled.glsl"
