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
// True when element `index` of dropout site `site` survives (probability 1 - p).
bool dropout_keep(uvec2 key, uint site, uint index, float p) {
    if (p <= 0.0) return true;
    uint r = philox4x32(uvec4(index, site, 0u, 0u), key).x;
    return float(r >> 8) * (1.0 / 16777216.0) >= p;
}
