// Fonts: Dear ImGui's built-in pixel font draws ASCII; the glyphs it lacks (accents, Greek, Cyrillic, symbols, CJK,
// whatever the corpus uses) are merged in from system fonts when they are installed (scripts/setup.sh installs
// fonts-dejavu-core and fonts-droid-fallback). A character no font has draws as U+FFFD, not as a '?' that the
// corpus may well contain.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

// Adds the fonts to the current ImGui context's atlas; call before the renderer builds the atlas. `vocab`: the
// corpus's characters (code points), whose glyphs are all asked for.
void add_fonts(const std::vector<uint32_t>& vocab);

// After the atlas is built: the corpus's characters that have no glyph.
struct MissingGlyphs {
    int count = 0;     // how many (0: every character draws)
    std::string line;  // which and why, for the user ("" when none)
};
MissingGlyphs missing_glyphs(const std::vector<uint32_t>& vocab);

}  // namespace attn
