// The resume prompt and the autosave set aside (resume_prompt.h).
#include "resume_prompt.h"

#include <filesystem>

#include <imgui.h>

#include "io/files.h"
#include "panels.h"
#include "train/checkpoint.h"

namespace attn {

const char* const k_autosave_path = "attnlab_autosave.safetensors";

// The autosave, if there is one and it fits the corpus (read and checked here: only its step is kept). One of
// another corpus, or damaged, is set aside under a dated name (the next autosave would overwrite it) and said so.
ResumePrompt find_autosave(const Dataset& data) {
    ResumePrompt r;
    std::error_code ec;
    if (!std::filesystem::exists(k_autosave_path, ec)) return r;
    if (same_file(k_autosave_path, data.name())) {  // a corpus of that name: never read as a run, never renamed
        r.keep_off = true;
        return r;
    }
    std::string why;
    try {
        Checkpoint ck = load_checkpoint(k_autosave_path);
        // (a run of the other kind of tokens reads the corpus again when it loads: its characters are what count)
        if (!ck.tokenizer) check_resumable(ck, data.characters(), nullptr);
        if (auto errs = validate(ck.config); !errs.empty()) throw Error("its config is invalid: " + errs.front().message);
        r.open = true;
        r.step = ck.state.step;
        r.model = ck.config.kind == ModelKind::Bigram ? ck.config.describe()
                                                      : ck.config.preset + " (" + ck.config.describe() + ")";
        r.corpus = std::filesystem::path(ck.corpus).filename().string();
        return r;
    } catch (const Error& e) {
        why = e.what();
    } catch (const std::exception&) {
        why = "it could not be read";
    }
    std::string kept;
    try {
        kept = set_aside(k_autosave_path);
    } catch (const Error& e) {
        r.keep_off = true;
        r.set_aside = std::string(k_autosave_path) + " cannot be resumed here (" + why + ") and " + e.what() +
                      ": nothing is autosaved this run";
        return r;
    }
    r.set_aside = std::string(k_autosave_path) + " cannot be resumed here (" + why + "): kept as " + kept +
                  ", a fresh run starts";
    return r;
}

void resume_answer(ResumePrompt& rp, TrainingThread& tt, bool resume) {
    // taken before any step; a finished run stays paused at its end (the training thread says so); one that fails
    // to load leaves the fresh run training
    if (resume) tt.load_checkpoint_from(k_autosave_path, true, true);
    else tt.set_running(true);
    rp.open = false;
}

// What happened to an autosave this start could not offer, until OK (or Enter / Esc).
void draw_set_aside(ResumePrompt& rp) {
    if (rp.set_aside.empty()) return;
    begin_prompt("Autosave set aside");
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 36);
    ImGui::TextUnformatted(rp.set_aside.c_str());
    ImGui::PopTextWrapPos();
    if (ImGui::Button("OK (Enter)")) rp.set_aside.clear();
    ImGui::End();
}

// A small window in the middle, never modal: training goes on underneath until the user picks.
void draw_resume_prompt(ResumePrompt& rp, TrainingThread& tt) {
    if (!rp.open) return;
    begin_prompt("Resume?");
    ImGui::Text("Resume the last run (step %d)?", rp.step);
    ImGui::TextDisabled("%s on %s", rp.model.c_str(), rp.corpus.empty() ? "this corpus" : rp.corpus.c_str());
    ImGui::TextDisabled("from %s", k_autosave_path);
    if (ImGui::Button("Resume (Enter)")) resume_answer(rp, tt, true);
    ImGui::SameLine();
    if (ImGui::Button("Start fresh (Esc)")) resume_answer(rp, tt, false);
    ImGui::End();
}

}  // namespace attn
