// Helpers every panel shares (declared at the end of panels.h): laying out a row of controls, visible characters.
#include <imgui.h>

#include "text/bpe.h"

#include "panels.h"

namespace attn {

void same_line_if_fits(float w) {
    if (ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + w <=
        ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x)
        ImGui::SameLine();
}
float labelled_width(float frame_w, const char* label) {
    return frame_w + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label).x;
}

std::string named_char(const std::string& c) {
    std::string q(1, '\'');
    q.append(visible_char(c));
    q.push_back('\'');
    if (c == " ") q.append(" (space)");
    else if (c == "\n") q.append(" (newline)");
    else if (c == "\t") q.append(" (tab)");
    return q;
}

std::string visible_char(const std::string& c) {
    if (c == "\n") return "\\n";
    if (c == " ") return "\xC2\xB7";  // middle dot
    if (c == "\t") return "\\t";
    if (c.size() <= 1) return c;
    // a token of several characters (byte-level BPE): each blank visible, a cut UTF-8 character as its bytes
    std::string out;
    for (char ch : bytes_as_text(c)) {
        if (ch == ' ') out += "\xC2\xB7";
        else if (ch == '\n') out += "\\n";
        else if (ch == '\t') out += "\\t";
        else out += ch;
    }
    return out;
}

std::string fit_text(const std::string& text, float width) {
    if (ImGui::CalcTextSize(text.c_str()).x <= width) return text;
    const char* begin = text.c_str();
    const char* cut = begin;
    float room = width - ImGui::CalcTextSize("...").x;
    // one pass: the font stops where the room ends, at a character's start
    if (room > 0) ImGui::GetFont()->CalcTextSizeA(ImGui::GetFontSize(), room, 0.0f, begin, begin + text.size(), &cut);
    return std::string(begin, cut) + "...";
}

}  // namespace attn
