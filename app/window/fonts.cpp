// See fonts.h. Glyphs are rasterised once, at start-up, for the ranges below and the corpus's own characters.
#include "fonts.h"

#include <imgui.h>

#include <cstdio>
#include <filesystem>

#include "train/dataset.h"

namespace attn {

namespace {

// Latin-1 and Latin Extended A/B, IPA, Greek, Cyrillic; punctuation, currency, letter-like symbols, arrows, maths,
// box drawing and shapes; U+FFFD, which then replaces '?' as the glyph of a character no font has.
const ImWchar k_text_ranges[] = {0x00A0, 0x052F, 0x2000, 0x206F, 0x20A0, 0x20CF, 0x2100, 0x214F,
                                 0x2190, 0x22FF, 0x2500, 0x25FF, 0xFFFD, 0xFFFD, 0};

// First existing file of each kind: a text font (Latin, Greek, Cyrillic, symbols), then one with CJK.
const char* const k_text_fonts[] = {"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                                    "/usr/share/fonts/truetype/freefont/FreeSans.ttf"};
const char* const k_cjk_fonts[] = {"/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
                                   "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
                                   "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"};

// The glyph ranges must outlive the atlas's build: kept here for the process.
ImVector<ImWchar> g_text_ranges, g_corpus_ranges;
// The font files the last add_fonts found (nullptr: none), and whether it looked for a CJK one (the corpus has
// characters past ASCII): what missing_glyphs advises.
const char* g_text_font = nullptr;
const char* g_cjk_font = nullptr;
bool g_cjk_wanted = false;

template <size_t N>
const char* first_existing(const char* const (&paths)[N]) {
    std::error_code ec;
    for (const char* p : paths)
        if (std::filesystem::is_regular_file(p, ec)) return p;
    return nullptr;
}

}  // namespace

void add_fonts(const std::vector<uint32_t>& vocab) {
    ImFontAtlas* atlas = ImGui::GetIO().Fonts;
    atlas->AddFontDefault();  // ProggyClean 13 px: every panel's layout is measured in it
    const float px = atlas->ConfigData.back().SizePixels;  // the font's own size is set only when the atlas is built
    ImFontGlyphRangesBuilder text, corpus;
    text.AddRanges(k_text_ranges);
    for (uint32_t c : vocab)
        if (c >= 0x80 && c <= 0xFFFF) {  // this Dear ImGui's ImWchar is 16 bits: nothing past U+FFFF draws
            text.AddChar(ImWchar(c));
            corpus.AddChar(ImWchar(c));
        }
    g_text_ranges.clear();  // BuildRanges appends: a second call (another corpus) would end at the first's 0
    g_corpus_ranges.clear();
    text.BuildRanges(&g_text_ranges);
    corpus.BuildRanges(&g_corpus_ranges);
    ImFontConfig cfg;
    cfg.MergeMode = true;  // glyphs the fonts before it lack, only
    cfg.OversampleH = 2;
    g_text_font = first_existing(k_text_fonts);
    if (g_text_font) atlas->AddFontFromFileTTF(g_text_font, px, &cfg, g_text_ranges.Data);
    // The CJK font only for characters the corpus has: a CJK text's few thousand, not the font's tens of thousands.
    g_cjk_wanted = g_corpus_ranges.Size > 1;
    g_cjk_font = g_cjk_wanted ? first_existing(k_cjk_fonts) : nullptr;
    if (g_cjk_font) atlas->AddFontFromFileTTF(g_cjk_font, px, &cfg, g_corpus_ranges.Data);
}

MissingGlyphs missing_glyphs(const std::vector<uint32_t>& vocab) {
    ImFont* font = ImGui::GetIO().Fonts->Fonts.empty() ? nullptr : ImGui::GetIO().Fonts->Fonts[0];
    if (!font) return {};
    int missing = 0, beyond = 0;
    std::string examples;
    for (uint32_t c : vocab) {
        if (c < 0x20 || c == 0x7F) continue;  // control characters (newline, tab) are drawn as escapes
        bool has = c <= 0xFFFF && font->FindGlyphNoFallback(ImWchar(c)) != nullptr;
        if (has) continue;
        if (c > 0xFFFF) beyond++;
        if (++missing <= 5) {
            char code[16];
            std::snprintf(code, sizeof code, "U+%04X", unsigned(c));
            examples += (examples.empty() ? "" : ", ") + encode_utf8(c) + " (" + code + ")";
        }
    }
    if (missing == 0) return {};
    std::string why;  // past U+FFFF first: the advice to install fonts, if any, ends the line
    if (beyond > 0) why = "past U+FFFF (emoji and the like), which this Dear ImGui build cannot draw";
    if (missing > beyond) {  // characters a font could have
        why += beyond > 0 ? ", or " : "";
        if (!g_text_font || (g_cjk_wanted && !g_cjk_font))
            why += "in no font installed: install fonts-dejavu-core and fonts-droid-fallback (CJK), or run scripts/setup.sh";
        else
            why += std::string("in none of the fonts used (") + std::filesystem::path(g_text_font).filename().string() +
                   (g_cjk_font ? ", " + std::filesystem::path(g_cjk_font).filename().string() : "") + ")";
    }
    std::string shown = font->FindGlyphNoFallback(ImWchar(0xFFFD)) ? encode_utf8(0xFFFD) : "'?'";
    return {missing, std::to_string(missing) + " of the corpus's " + std::to_string(vocab.size()) +
                         " characters draw as " + shown + " (e.g. " + examples + (missing > 5 ? ", ..." : "") +
                         "): they are " + why + "; training is not affected"};
}

}  // namespace attn
