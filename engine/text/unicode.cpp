// Code point classes by binary search over generated ranges; strict UTF-8 decoding.
#include "text/unicode.h"

#include <algorithm>
#include <iterator>

namespace attn {

namespace {
struct ClassRange {
    uint32_t first, last;
    uint8_t cls;
};
const ClassRange k_ranges[] = {
#include "text/unicode_classes.inc"
};
}  // namespace

CharClass char_class(uint32_t cp) {
    if (cp < 0x80) {  // the common case without a search
        if (cp >= 'a' && cp <= 'z') return CharClass::letter;
        if (cp >= 'A' && cp <= 'Z') return CharClass::letter;
        if (cp >= '0' && cp <= '9') return CharClass::number;
        if (cp == ' ' || (cp >= 0x09 && cp <= 0x0D)) return CharClass::space;
        return CharClass::other;
    }
    const ClassRange* end = k_ranges + std::size(k_ranges);
    const ClassRange* it = std::upper_bound(k_ranges, end, cp, [](uint32_t c, const ClassRange& r) { return c < r.first; });
    if (it == k_ranges) return CharClass::other;
    --it;
    return cp <= it->last ? CharClass(it->cls) : CharClass::other;
}

size_t utf8_next(const unsigned char* p, size_t n, uint32_t* cp) {
    unsigned char b0 = p[0];
    if (b0 < 0x80) {
        *cp = b0;
        return 1;
    }
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range (narrower after E0, ED, F0, F4)
    if (b0 >= 0xC2 && b0 <= 0xDF) len = 2;
    else if (b0 >= 0xE0 && b0 <= 0xEF) {
        len = 3;
        if (b0 == 0xE0) lo = 0xA0;
        if (b0 == 0xED) hi = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        len = 4;
        if (b0 == 0xF0) lo = 0x90;
        if (b0 == 0xF4) hi = 0x8F;
    } else
        return 0;
    if (n < len || p[1] < lo || p[1] > hi) return 0;
    for (size_t i = 2; i < len; ++i)
        if (p[i] < 0x80 || p[i] > 0xBF) return 0;
    uint32_t c = b0 & (0xFF >> (len + 1));
    for (size_t i = 1; i < len; ++i) c = (c << 6) | (p[i] & 0x3F);
    *cp = c;
    return len;
}

}  // namespace attn
