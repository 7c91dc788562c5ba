// Status bar: run state, step, speed (wall clock and GPU timestamps), frame rate, model, corpus, device.
#include <imgui.h>

#include <cstdio>
#include <string>

#include "panels.h"

namespace attn {

static std::string base_name(const std::string& path) {
    size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

static std::string human_bytes(size_t n) {
    char buf[32];
    if (n >= 1000000) std::snprintf(buf, sizeof buf, "%.2f MB", n / 1e6);
    else if (n >= 1000) std::snprintf(buf, sizeof buf, "%.1f kB", n / 1e3);
    else std::snprintf(buf, sizeof buf, "%zu bytes", n);
    return buf;
}

void draw_status(StatusState& st, const Snapshot& snap, int fps_cap) {
    const char* state = snap.fatal ? "STOPPED" : !snap.busy.empty() ? "BUSY" : snap.running ? "RUNNING" : "PAUSED";
    ImGui::TextColored(snap.running ? ImVec4(0.4f, 0.9f, 0.4f, 1) : ImVec4(1, 0.8f, 0.3f, 1), "%s", state);
    ImGui::SameLine();
    if (!snap.has_model && snap.busy.empty() && !snap.message.empty()) {  // nothing could be built: say why here,
        // where it is seen at once (Controls, which says it too, may be scrolled)
        ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1.0f), "no model: %s", snap.message.c_str());
        return;
    }
    StatusState::Shown& s = st.shown;
    if (st.readout.due(readout_state(snap, s.step)))
        s = {snap.step, snap.it_per_s, snap.tokens_per_s, snap.ms_per_step, snap.gpu_ms, st.fps};
    // it/s is measured over whole seconds: "--" until the first second of training is over, not a false 0.0
    char its[24];
    if (s.it_per_s > 0 || !snap.running) std::snprintf(its, sizeof its, "%.1f", s.it_per_s);
    else std::snprintf(its, sizeof its, "--");
    ImGui::Text("step %d | %s it/s | %.0f tokens/s | %.2f ms/step (GPU %.2f ms) | %.0f/%d fps | %s, %zu params, "
                "vocab %d | %s (%s) | %s",
                s.step, its, s.tokens_per_s, s.ms_per_step, s.gpu_ms, s.fps, fps_cap,
                snap.cfg.preset.c_str(), snap.params, snap.vocab, base_name(snap.corpus_name).c_str(),
                human_bytes(snap.corpus_bytes).c_str(), st.device_name.c_str());
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("it/s: training steps a second of wall time, evaluation and sampling included\n"
                          "tokens/s and ms/step: the training steps alone (GPU: the step's own GPU time)\n"
                          "fps: frames drawn a second / the cap");
    if (st.saving) {
        ImGui::SameLine();
        ImGui::TextDisabled("| fewer frames while unwatched: move the mouse for %d fps", fps_cap);
    }
    if (!st.notice.empty()) {
        ImGui::SameLine();
        ImGui::TextDisabled("| %s", st.notice.c_str());
    }
}

}  // namespace attn
