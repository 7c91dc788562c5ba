#version 450
// C[t][j] = scale * sum_t2 P'[t][t2] * Y[b,t2,h,j] (attention's out = att @ v, and dq): see
// shaders/common/attention_pv_smem.glsl.
#extension GL_GOOGLE_include_directive : require
#define A_DIRECT 0
#include "attention_pv_smem.glsl"
