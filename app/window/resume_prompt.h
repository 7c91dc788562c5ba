// The "resume the last run?" prompt at start, from the autosave file, and what happens to an autosave that cannot
// be resumed here (set aside under a dated name).
#pragma once
#include <string>

#include "training_thread.h"

namespace attn {

extern const char* const k_autosave_path;  // attnlab_autosave.safetensors, in the working folder

struct ResumePrompt {
    bool open = false;
    int step = 0;
    std::string model;   // the run offered: "single-head (1 layer x 1 head x 32)"
    std::string corpus;  // the file it was trained on, as its checkpoint names it
    std::string set_aside;   // an autosave this start cannot offer, renamed so that no autosave overwrites it: why
    bool keep_off = false;   // it could not be renamed: no autosave this run (it would overwrite the file)
};

// The autosave, if there is one and it fits the corpus (read and checked here: only its step is kept). One of
// another corpus, or damaged, is set aside under a dated name (the next autosave would overwrite it) and said so.
ResumePrompt find_autosave(const Dataset& data);
// The user's answer: resume the autosave (training on) or start fresh.
void resume_answer(ResumePrompt& rp, TrainingThread& tt, bool resume);
// What happened to an autosave this start could not offer, until OK (or Enter / Esc).
void draw_set_aside(ResumePrompt& rp);
// A small window in the middle, never modal: training goes on underneath until the user picks.
void draw_resume_prompt(ResumePrompt& rp, TrainingThread& tt);

}  // namespace attn
