#version 450
// layernorm_backward for C % 4 == 0 (same maths), one dispatch, two index ranges; everything it reads, the statistics
// and (+=) dinp's old values too, comes through texel buffers (on lavapipe a storage-buffer load is a loop over the
// lanes; each invocation reads its own elements of dinp before it writes them):
//   [0, N)        dinp[r,:] (+)= rstd * (dnorm - mean(dnorm) - norm * mean(dnorm * norm)),  dnorm = dout * w
//   [N, N + splits*C/4)  dw[c..c+3] = sum_r dout[r,c] * norm[r,c],  db[c..c+3] = sum_r dout[r,c]
// splits > 1: the sums over rows are cut into `splits` row ranges, range s writing its partial sums at
// s * stride (vec4s) in Dw and Db (both bound to one scratch buffer, db at db_off); reduce_splits.comp adds
// them up. splits == 1: stride 0, db_off 0.
// F_DROPOUT (prob > 0): ddrop = the new dinp through dropout's backward at `site` (dropout_backward4's bits), what the
// residual branch before this LayerNorm reads as its output gradient.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
#include "flags.glsl"
#include "philox.glsl"
layout(binding = 0) uniform samplerBuffer dout4;                      // (N, C/4)
layout(binding = 1) uniform samplerBuffer inp4;                       // (N, C/4)
layout(binding = 2) uniform samplerBuffer w4;                         // (C/4,)
layout(binding = 3) uniform samplerBuffer stats_t;                   // (N, 2): mean, rstd (R32F texels)
layout(std430, binding = 4) writeonly buffer Dinp { vec4 dinp[]; };   // (N, C/4)
layout(std430, binding = 5) writeonly buffer Dw { vec4 dw[]; };       // (C/4,)
layout(std430, binding = 6) writeonly buffer Db { vec4 db[]; };       // (C/4,)
layout(binding = 7) uniform samplerBuffer dinp_in4;                   // the same buffer as binding 4: what += adds to
layout(std430, binding = 8) writeonly buffer Ddrop { vec4 ddrop[]; };  // (N, C/4), F_DROPOUT
layout(std430, binding = 9) readonly buffer Seed { uvec2 key; };        // dropout's key for this step, F_DROPOUT
layout(push_constant) uniform P { uint N, C, accumulate, splits, stride, db_off, site; float prob; } p;
void main() {
    uvec2 key2 = F_DROPOUT ? key : uvec2(0u);  // loaded once (a storage-buffer load is a loop over the lanes on lavapipe)
    uint i = gid();
    uint C4 = p.C / 4;
    if (i < p.N) {
        int o = int(i * C4);
        vec2 s = vec2(texelFetch(stats_t, int(2 * i)).x, texelFetch(stats_t, int(2 * i + 1)).x);
        vec4 md = vec4(0.0), mdn = vec4(0.0);
        for (uint c = 0; c < C4; c++) {
            vec4 dn = texelFetch(dout4, o + int(c)) * texelFetch(w4, int(c));
            md += dn;
            mdn += dn * (texelFetch(inp4, o + int(c)) - s.x) * s.y;
        }
        float mean_d = (md.x + md.y + md.z + md.w) / float(p.C);
        float mean_dn = (mdn.x + mdn.y + mdn.z + mdn.w) / float(p.C);
        for (uint c = 0; c < C4; c++) {
            vec4 norm = (texelFetch(inp4, o + int(c)) - s.x) * s.y;
            vec4 g = s.y * (texelFetch(dout4, o + int(c)) * texelFetch(w4, int(c)) - mean_d - norm * mean_dn);
            if (F_ADD && p.accumulate != 0) g = texelFetch(dinp_in4, o + int(c)) + g;
            dinp[o + int(c)] = g;
            if (F_DROPOUT && p.prob > 0.0)
                ddrop[o + int(c)] = mix(vec4(0.0), g / (1.0 - p.prob), dropout_keep4(key2, p.site, uint(o) + c, p.prob));
        }
        return;
    }
    i -= p.N;
    if (i >= C4 * p.splits) return;
    uint split = i / C4, rows = (p.N + p.splits - 1) / p.splits;
    i %= C4;
    vec4 sw = vec4(0.0), sb = vec4(0.0);
    for (uint r = split * rows; r < min(p.N, split * rows + rows); r++) {
        vec2 s = vec2(texelFetch(stats_t, int(2 * r)).x, texelFetch(stats_t, int(2 * r + 1)).x);
        vec4 d = texelFetch(dout4, int(r * C4 + i));
        sw += d * (texelFetch(inp4, int(r * C4 + i)) - s.x) * s.y;
        sb += d;
    }
    dw[split * p.stride + i] = sw;
    db[split * p.stride + p.db_off + i] = sb;
}
