// Philox4x32-10 counter-based RNG: dropout masks are a pure function of (seed, counter), so forward and
// backward regenerate the same mask without storing it, and runs are reproducible.
uvec4 philox4x32(uvec4 ctr, uvec2 key) {
    const uint M0 = 0xD2511F53u, M1 = 0xCD9E8D57u, W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
    for (int r = 0; r < 10; r++) {
        uint hi0, lo0, hi1, lo1;
        umulExtended(M0, ctr.x, hi0, lo0);
        umulExtended(M1, ctr.z, hi1, lo1);
        ctr = uvec4(hi1 ^ ctr.y ^ key.x, lo1, hi0 ^ ctr.w ^ key.y, lo0);
        key += uvec2(W0, W1);
    }
    return ctr;
}
// Dropout's numbers: one Philox block per 4 consecutive elements (counter = index / 4) and its four outputs for
// elements 4k .. 4k+3, as curand's Philox4x32 is used: a kernel that handles 4 elements pays for one block.
// Whether elements 4 * index4 .. 4 * index4 + 3 of dropout site `site` survive (probability 1 - p each).
bvec4 dropout_keep4(uvec2 key, uint site, uint index4, float p) {
    if (p <= 0.0) return bvec4(true);
    uvec4 r = philox4x32(uvec4(index4, site, 0u, 0u), key);
    return greaterThanEqual(vec4(r >> 8u) * (1.0 / 16777216.0), vec4(p));
}
// True when element `index` survives: its component of the block above.
bool dropout_keep(uvec2 key, uint site, uint index, float p) {
    bvec4 k = dropout_keep4(key, site, index >> 2, p);
    uint e = index & 3u;
    return e == 0u ? k.x : e == 1u ? k.y : e == 2u ? k.z : k.w;  // selects, not a component picked by a variable
}
