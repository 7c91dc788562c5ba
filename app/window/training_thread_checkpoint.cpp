// The training thread's checkpoints: save, load, autosave, the good state kept for Revert, the rescue after a
// device failure. The run's contents are the Session's; what is here is when, where and what the window says.
#include "training_thread.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>

#include "io/files.h"

namespace attn {

void TrainingThread::drop_run() {
    if (m_run) m_fault = m_run->fault();
    m_run.reset();
}

// Keeps the run's state in memory for Revert, when the model is small enough and the weights are finite.
void TrainingThread::keep_good_state() {
    if (!m_run || !m_run->keep_good_state()) return;
    std::lock_guard lk(m_mutex);
    m_snap.good_step = m_run->good_step();
    publish();
}

// The snapshot's step, step losses and evaluations from the run's history (after a revert or a load).
void TrainingThread::show_history_locked() {
    Snapshot& s = m_snap;
    s.step = m_run->step_count();
    s.step_losses = m_run->history().step_losses;
    s.evals.clear();
    for (auto& e : m_run->history().evals) s.evals.push_back({e.step, e.train, e.val, e.tps});
}

void TrainingThread::do_revert() {
    if (!m_run) throw Error("no good state is kept to revert to");
    m_run->revert_to_good();
    m_weights_changed = true;
    show_attention_now();
    std::lock_guard lk(m_mutex);
    Snapshot& s = m_snap;
    show_history_locked();
    note_metrics_locked();
    s.diverged = false;
    s.message = "reverted to step " + std::to_string(s.step) + ": paused; lower the learning rate, then Start";
    s.message_until_start = true;
    m_pending.running = false;
    s.running = false;
    publish();
}

void TrainingThread::save_to(const std::string& path) {
    if (!m_run) throw Error("no model to save");
    m_run->save(path);
}

// A checkpoint for the current corpus: a new run with its config, its state and its loss history.
void TrainingThread::load_from(const std::string& path) {
    std::string note;
    say_busy("reading " + path);
    Checkpoint ck = load_checkpoint(path, &m_data->characters(), &note);
    if (!note.empty()) std::printf("attnlab: note: %s: %s\n", path.c_str(), note.c_str());
    // the corpus read again in the run's tokens where they are not the ones it is read in now (BPE or characters)
    std::unique_ptr<Dataset> data;
    const auto& now = m_data->bpe();
    if (ck.tokenizer ? !(now && now->same_as(*ck.tokenizer)) : bool(now))
        data = std::make_unique<Dataset>(ck.tokenizer ? Dataset::from_file(m_corpus_path, ck.tokenizer)
                                                      : Dataset::from_file(m_corpus_path));
    const Dataset& d = data ? *data : *m_data;
    check_resumable(ck, d.vocab(), nullptr);
    try {  // before the running model is dropped for it
        Trainer::check(m_ctx, d, ck.config);
    } catch (const Error& e) {
        throw Error("'" + path + "': " + e.what());
    }
    if (data) {
        drop_run();
        m_data = std::move(data);
    }
    build(ck.config, false, false, &ck);  // the preview comes with the loaded weights
    m_weights_changed = true;
    say_busy("computing the attention of the loaded weights");
    show_attention_now();  // the loaded weights' map (build left it to here)
    {
        std::lock_guard lk(m_mutex);
        Snapshot& s = m_snap;
        show_history_locked();
        note_metrics_locked();
        s.busy.clear();
        if (s.step >= m_cfg.max_iters) {  // a finished run stays paused at its end, as when it got there
            m_pending.running = false;
            s.running = false;
            s.message = "the run is at max iters (" + std::to_string(m_cfg.max_iters) + "): paused; Space trains " + std::to_string(more_steps(m_cfg)) + " steps more";
            s.message_until_start = true;
        }
        publish();
    }
    keep_good_state();
}

// A load of the autosave the resume prompt offered that failed (a run over this device's limits, say): the file is
// set aside, as the fresh run's autosave would overwrite it; where it cannot be, nothing is autosaved this run. What to add to the message.
std::string TrainingThread::keep_unloadable_autosave(const Pending& p) {
    if (!p.load_is_autosave) return "";
    try {
        return "; the file is kept as " + set_aside(p.load_path) + " (the next autosave would overwrite it)";
    } catch (const std::exception& e) {
        m_autosave_off = true;
        return std::string("; it could not be set aside (") + e.what() + "), so nothing is autosaved this run";
    }
}

// Saves to the autosave file when it is on, the run moved on since the last one and is not diverged; `now`: at quit.
void TrainingThread::autosave(const Pending& p, bool now) {
    if (p.autosave_min <= 0 || p.autosave_path.empty() || m_autosave_off || !m_run || m_snap.fatal || m_run->diverged()) return;
    if (m_run->trainer().step_count() == 0 || m_run->trainer().step_count() == m_autosaved_step) return;
    auto t = Clock::now();
    if (m_last_autosave == Clock::time_point{}) m_last_autosave = t;
    if (!now && t - m_last_autosave < std::chrono::duration<double, std::ratio<60>>(p.autosave_min)) return;
    m_last_autosave = t;
    std::string msg;
    bool err = false;
    try {
        save_to(p.autosave_path);
        m_autosaved_step = m_run->trainer().step_count();
        msg = "autosaved step " + std::to_string(m_autosaved_step) + " to " + p.autosave_path;
    } catch (const DeviceError& e) {  // the GPU is gone (the window's drawing may have met it first): the last good
        msg = std::string("autosave failed: ") + e.what() + rescue(p.autosave_path);  // state kept in memory, if any
        err = true;
    } catch (const std::exception& e) {
        msg = std::string("autosave failed: ") + e.what();
        err = true;
    }
    std::lock_guard lk(m_mutex);
    m_snap.ckpt_message = msg;
    m_snap.ckpt_error = err;
    publish();
}

// After a device failure nothing on the device can be trusted or even read: the last good state, kept in host memory,
// goes to the autosave file instead (unless an autosave of a later step is there already), for the next start to
// offer. Returns what to add to the failure's message.
std::string TrainingThread::rescue(const std::string& path) {
    std::string note, ckpt;
    bool err = false;
    if (path.empty()) return "";
    bool good = m_run && m_run->has_good_state();
    int good_step = good ? m_run->good_step() : -1;
    if (m_autosaved_step >= 0 && (!good || m_autosaved_step >= good_step)) {
        note = "; the autosave of step " + std::to_string(m_autosaved_step) + " in " + path +
               " is safe: restart attnlab to resume it";
    } else if (!good) {
        note = "; no good state of this model is kept in memory, so nothing could be saved";
    } else {
        try {
            m_run->save_good_state(path);
            m_autosaved_step = good_step;
            ckpt = "saved the last good state (step " + std::to_string(good_step) + ") to " + path;
            note = "; the last good state (step " + std::to_string(good_step) + ") was saved to " + path +
                   ": restart attnlab to resume it";
        } catch (const std::exception& e) {
            ckpt = note = std::string("saving the last good state failed: ") + e.what();
            note = "; " + note;
            err = true;
        }
    }
    if (!ckpt.empty()) {
        std::lock_guard lk(m_mutex);
        m_snap.ckpt_message = ckpt;
        m_snap.ckpt_error = err;
        publish();
    }
    return note;
}

}  // namespace attn
