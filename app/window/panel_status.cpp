// Status bar: run state, step, speed (wall clock and GPU timestamps), frame rate, model, corpus, device.
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

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
        std::string line = "no model: " + snap.message;
        std::string shown = fit_text(line, ImGui::GetContentRegionAvail().x);
        ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1.0f), "%s", shown.c_str());
        if (shown != line && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", line.c_str());
        return;
    }
    StatusState::Shown& s = st.shown;
    if (st.readout.due(readout_state(snap, s.step)))
        s = {snap.step, snap.it_per_s, snap.tokens_per_s, snap.ms_per_step, snap.gpu_ms, st.fps, snap.grad_norm};
    // The bar's pieces, in order; a narrow window drops the least needed first (`drop`: higher goes first), and
    // the tooltip then lists them.
    struct Piece {
        std::string text;
        int drop;
        bool dim = false;
    };
    std::vector<Piece> pieces;
    char buf[160];
    // it/s is measured over whole seconds: "--" until the first second of training is over, not a false 0.0
    if (s.it_per_s > 0 || !snap.running) std::snprintf(buf, sizeof buf, "step %d | %.1f it/s", s.step, s.it_per_s);
    else std::snprintf(buf, sizeof buf, "step %d | -- it/s", s.step);
    pieces.push_back({buf, 0});
    // paused: the training speed of the last steps, said to be the last (it/s, wall time, falls to 0)
    const char* last = snap.running ? "" : " (last)";
    std::snprintf(buf, sizeof buf, "%.0f tokens/s%s", s.tokens_per_s, last);
    pieces.push_back({buf, 1});
    std::snprintf(buf, sizeof buf, "%.2f ms/step (GPU %.2f ms)%s", s.ms_per_step, s.gpu_ms, last);
    pieces.push_back({buf, 3});
    if (s.grad_norm >= 0) {  // updates clip (nanoGPT's runs): the norm they clip, above grad_clip scaled down to it
        std::snprintf(buf, sizeof buf, "grad norm %.3f%s", s.grad_norm,
                      s.grad_norm > snap.cfg.grad_clip ? " (clipped)" : "");
        pieces.push_back({buf, 2});
    }
    std::snprintf(buf, sizeof buf, "%.0f/%d fps", s.fps, fps_cap);
    pieces.push_back({buf, 4});
    std::snprintf(buf, sizeof buf, "%s, %zu params, %s %d", snap.cfg.preset.c_str(), snap.params,
                  snap.bpe_tokens ? "BPE vocab" : "vocab", snap.vocab);
    pieces.push_back({buf, 5});
    pieces.push_back({base_name(snap.corpus_name) + " (" + human_bytes(snap.corpus_bytes) + ")", 6});
    pieces.push_back({st.device_name, 8});
    if (st.saving) {
        std::snprintf(buf, sizeof buf, "fewer frames while unwatched: move the mouse for %d fps", fps_cap);
        pieces.push_back({buf, 7, true});
    }
    if (!st.notice.empty()) pieces.push_back({st.notice, 2, true});  // e.g. where a screenshot went: just done

    // Most needed first, each shown if it still fits (in the bar's order); the notice, if it does not, is cut to the
    // room left (at most 40% of the bar) when that is enough to read. What is not shown whole goes to the tooltip.
    const float avail = ImGui::GetContentRegionAvail().x, sep = ImGui::CalcTextSize(" | ").x;
    std::vector<size_t> order(pieces.size());
    for (size_t i = 0; i < order.size(); i++) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return pieces[a].drop < pieces[b].drop; });
    std::vector<bool> show(pieces.size(), false);
    float used = 0;
    std::string dropped;
    for (size_t i : order) {
        float w = ImGui::CalcTextSize(pieces[i].text.c_str()).x + (used > 0 ? sep : 0);
        float room = avail - used - (used > 0 ? sep : 0);
        if (used + w <= avail) {
            show[i] = true;
            used += w;
        } else if (!st.notice.empty() && i + 1 == pieces.size() && std::min(room, 0.4f * avail) > 120) {
            // the notice (the last piece), cut to at most 40% of the bar: the numbers after it keep their room
            dropped += "\n" + pieces[i].text;
            pieces[i].text = fit_text(pieces[i].text, std::min(room, 0.4f * avail));
            show[i] = true;
            used += ImGui::CalcTextSize(pieces[i].text.c_str()).x + (used > 0 ? sep : 0);
        } else {
            dropped += "\n" + pieces[i].text;
        }
    }
    std::vector<Piece> shown;
    for (size_t i = 0; i < pieces.size(); i++)
        if (show[i]) shown.push_back(pieces[i]);
    if (shown.empty()) shown.push_back({fit_text(pieces[0].text, avail), 0});
    ImGui::BeginGroup();
    for (size_t i = 0; i < shown.size(); i++) {
        if (i > 0) ImGui::SameLine(0, 0);
        std::string t = (i > 0 ? " | " : "") + shown[i].text;
        if (shown[i].dim) ImGui::TextDisabled("%s", t.c_str());
        else ImGui::TextUnformatted(t.c_str());
    }
    ImGui::EndGroup();
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("it/s: training steps a second of training time (evaluations, sampling and pauses left out)\n"
                          "tokens/s and ms/step: the training steps alone (GPU: the step's own GPU time)\n"
                          "grad norm (runs that clip, as nanoGPT's): the last update's gradient norm, scaled down "
                          "to the clip when above it\n"
                          "fps: frames drawn a second / the cap%s%s",
                          dropped.empty() ? "" : "\n\nnot shown at this window width:", dropped.c_str());
}

}  // namespace attn
