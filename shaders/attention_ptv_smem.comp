#version 450
// C[t2][j] = scale * sum_t P'[t][t2] * Y[b,t,h,j] (attention's dk and dv): see shaders/common/attention_pv_smem.glsl.
#extension GL_GOOGLE_include_directive : require
#define A_DIRECT 1
#include "attention_pv_smem.glsl"
