#version 450
// matmul_backward_tiled for N % 4 == 0 or dout rows padded to a multiple of 4: dout (and the forward output) read
// as vec4, 3-4x fewer fetches.
#extension GL_GOOGLE_include_directive : require
#define DOUT_VEC4 1
#include "index.glsl"
#include "matmul_backward_tiled.glsl"
