// Helpers every panel shares (declared at the end of panels.h): laying out a row of controls, visible characters.
#include <imgui.h>

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
    return c;
}

}  // namespace attn
