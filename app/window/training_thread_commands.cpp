// The training thread's loop: waits for work, applies the UI's commands (restart, reset, save, load, revert, live
// settings, the shown map, profiling), trains, autosaves and samples; failures become the snapshot's messages.
#include "training_thread.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>

namespace attn {

void TrainingThread::run() {
    auto fail = [&](const std::exception& e, bool fatal) {
        std::lock_guard lk(m_mutex);
        m_snap.message = e.what();
        m_snap.busy.clear();
        m_snap.fatal = m_snap.fatal || fatal;
        if (fatal || !m_run) {
            m_pending.running = false;
            m_snap.running = false;
            m_snap.has_model = m_run != nullptr;
        }
        publish();
    };
    try {
        build(m_cfg);
    } catch (const DeviceError& e) {
        fail(e, true);
    } catch (const std::exception& e) {
        fail(e, false);
    }
    auto window_start = Clock::now();
    int window_steps = 0;
    double window_train_s = 0;  // time in training steps within the window
    bool step_allowed = true;  // slow motion: this turn may take a running step
    for (;;) {
        Pending p;
        {
            std::unique_lock lk(m_mutex);
            auto wait_from = Clock::now();
            auto until = wait_from + std::chrono::milliseconds(200);
            if (m_pending.running && m_pending.max_steps_per_s > 0) until = std::min(until, std::max(wait_from, m_next_step_at));
            m_cv.wait_until(lk, until, [&] { return has_work(); });
            step_allowed = step_due();
            m_idle += Clock::now() - wait_from;  // paused: not in the Performance panel's wall time
            p = m_pending;
            if (m_pending.quit) {
                lk.unlock();
                autosave(p, true);
                return;
            }
            m_pending.reset = m_pending.restart = m_pending.live = m_pending.sample = m_pending.reslice = false;
            m_pending.causal = -1;
            m_pending.save_path.clear();
            m_pending.probe_text.clear();
            m_pending.load_path.clear();
            m_pending.load_is_autosave = false;
            m_pending.revert = false;
            if (m_pending.step_once > 0) m_pending.step_once--;
            m_pending.profiling_changed = false;
            m_att_all = m_pending.att_all;
            m_heads_view = m_pending.heads_view;
            m_knockout = m_pending.knockout;
            m_importance = m_pending.importance;
            m_icl = m_pending.icl;
            m_att_period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / p.frame_rate));
            m_snap.running = m_pending.running;
        }
        try {
            if (p.restart) {
                // Check everything before dropping the old model, so a bad path or size keeps training going.
                auto errs = validate(p.restart_cfg);
                if (!errs.empty()) throw Error(errs.front().message);
                // a run of BPE tokens reads the new corpus in its own tokens
                auto data = std::make_unique<Dataset>(m_data->bpe() ? Dataset::from_file(p.restart_path, m_data->bpe())
                                                                    : Dataset::from_file(p.restart_path));
                Trainer::check(m_ctx, *data, p.restart_cfg);  // the block size, the GPU's memory
                drop_run();
                m_data = std::move(data);
                m_corpus_path = p.restart_path;
                {
                    std::lock_guard lk(m_mutex);
                    m_snap.restart_error.clear();
                    m_snap.message = "restarted: " + p.restart_cfg.preset + " on " + m_data->name();
                }
                build(p.restart_cfg);
                start_new_run(p);
            } else if (p.reset && !m_snap.fatal) {
                build(m_cfg);
                start_new_run(p);
            }
            // A save or a load: its outcome, or "<what> failed: ...", goes to the checkpoint line; device errors
            // are not the file's fault and go on to the handler below.
            auto checkpoint_op = [&](const char* what, bool clear_busy, const std::function<std::string()>& op) {
                std::string msg;
                bool err = false;
                try {
                    msg = op();
                } catch (const DeviceError&) {
                    throw;
                } catch (const std::exception& e) {
                    msg = std::string(what) + " failed: " + e.what();
                    err = true;
                }
                std::lock_guard lk(m_mutex);
                m_snap.ckpt_message = msg;
                m_snap.ckpt_error = err;
                if (clear_busy) m_snap.busy.clear();
                publish();
            };
            if (!p.save_path.empty())
                checkpoint_op("save", false, [&] {
                    save_to(p.save_path);
                    return "saved step " + std::to_string(m_run->trainer().step_count()) + " to " + p.save_path;
                });
            if (!p.load_path.empty() && !m_snap.fatal)
                checkpoint_op("load", true, [&] {
                    try {
                        load_from(p.load_path);
                    } catch (const DeviceError&) {
                        throw;
                    } catch (const std::exception& e) {
                        throw Error(e.what() + keep_unloadable_autosave(p));
                    }
                    if (m_run->trainer().step_count() >= m_cfg.max_iters) p.running = false;  // paused there: no step now
                    return "loaded " + p.load_path + " at step " + std::to_string(m_run->trainer().step_count());
                });
            if (p.revert && m_run) {
                try {
                    do_revert();
                } catch (const DeviceError&) {
                    throw;
                } catch (const std::exception& e) {
                    std::lock_guard lk(m_mutex);
                    m_snap.message = std::string("revert failed: ") + e.what();
                    publish();
                }
            }
            // A change the trainer takes between steps; what it kept is shown. One it refuses (a batch too large
            // for a CPU driver's loops, Trainer::check_cpu_loops) leaves training as it was, with the reason shown.
            auto apply_live = [&](const Config& c) {
                std::string refused;
                try {
                    m_run->trainer().set_live(c);
                } catch (const DeviceError&) {
                    throw;
                } catch (const std::exception& e) {
                    refused = std::string("not applied: ") + e.what();
                }
                bool mask_changed = m_cfg.causal != m_run->trainer().config().causal;
                m_cfg = m_run->trainer().config();
                {
                    std::lock_guard lk(m_mutex);
                    m_snap.cfg = m_cfg;
                    if (!refused.empty()) m_snap.message = refused;
                    publish();
                }
                if (mask_changed && !p.running) show_attention_now();  // paused: the map under the new mask now
            };
            if (p.causal >= 0 && m_run) {  // set_causal
                Config c = m_run->trainer().config();
                c.causal = p.causal == 1;
                apply_live(c);
            }
            if (p.live && m_run) {
                Config c = with_live_fields(m_cfg, p.live_cfg);  // every live field, the model's shape kept
                int old_max = m_cfg.max_iters;
                apply_live(c);
                // max iters lowered to the step reached or below: paused now, as when a run gets there
                if (m_cfg.max_iters != old_max && m_run->trainer().step_count() >= m_cfg.max_iters) {
                    p.running = false;
                    std::lock_guard lk(m_mutex);
                    if (m_pending.running) {
                        m_pending.running = m_snap.running = false;
                        m_snap.message = "at max iters (" + std::to_string(m_cfg.max_iters) + ") already: paused; Space trains " +
                                         std::to_string(more_steps(m_cfg)) + " steps more";
                        m_snap.message_until_start = true;
                        publish();
                    }
                }
            }
            if (p.profiling_changed && m_run) {
                m_run->trainer().set_profiling(p.profiling);
                m_kernel_hist.clear();
                m_kernel_next = 0;
                std::lock_guard lk(m_mutex);
                m_snap.profiling = p.profiling;
                m_snap.kernel_times.clear();
                m_snap.kernel_steps = 0;
                publish();
            }
            if (p.reslice && m_run) {
                m_att_element = std::clamp(p.att_element, 0, m_cfg.batch_size - 1);
                m_att_layer = p.att_layer;
                m_att_head = p.att_head;
                m_att_probe = p.att_probe;
                m_att_probe_step = p.att_probe_step;
                if (!p.probe_text.empty()) {
                    std::string note;
                    try {
                        note = m_run->set_probe(p.probe_text);
                        m_probe = p.probe_text;  // a rebuilt model keeps it
                        m_run->record_probe();   // something to show at once, also while paused
                    } catch (const DeviceError&) {
                        throw;
                    } catch (const std::exception& e) {
                        note = e.what();
                    }
                    if (!note.empty()) {
                        std::printf("attnlab: %s\n", note.c_str());
                        std::fflush(stdout);
                    }
                    std::lock_guard lk(m_mutex);
                    m_snap.message = note.empty() ? m_snap.message : note;
                    m_snap.probe_note = note;  // shown beside the probe field until the next probe
                    publish();
                }
                if (m_att_element != m_run->trainer().display_batch()) {
                    m_run->trainer().set_display_batch(m_att_element);
                    // paused: the element now, on the next step's batch; training: from the next step
                    if (!p.running) show_attention_now();
                }
                slice_attention();  // layer/head now
            }
            bool finished = m_run && m_exit_after > 0 && m_run->trainer().step_count() >= m_exit_after;
            if (m_run && !m_snap.fatal && !finished && (p.step_once > 0 || (p.running && step_allowed))) {
                if (p.max_steps_per_s > 0) m_next_step_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                              std::chrono::duration<double>(1.0 / p.max_steps_per_s));
                auto t_step = Clock::now();
                double eval_before = m_snap.eval_s;  // written by this thread only (do_eval)
                do_step(!p.running);
                window_steps++;
                // the step's own time: an evaluation it ran (every eval_interval) is not training
                window_train_s += std::max(0.0, std::chrono::duration<double>(Clock::now() - t_step).count() -
                                                    (m_snap.eval_s - eval_before));
                finished = m_exit_after > 0 && m_run->trainer().step_count() >= m_exit_after;
                if (finished) {
                    if (m_snap.evals.empty() || m_snap.evals.back().step != m_run->trainer().step_count()) do_eval();
                    do_sample();
                    std::lock_guard lk(m_mutex);
                    m_snap.done = true;
                    publish();
                }
            }
            autosave(p, false);
            double window_s = std::chrono::duration<double>(Clock::now() - window_start).count();
            if (window_s >= 1.0) {  // it/s of training itself: evaluations, samples and pauses left out
                std::lock_guard lk(m_mutex);
                m_snap.it_per_s = window_train_s > 0 ? window_steps / window_train_s : 0;
                window_steps = 0;
                window_train_s = 0;
                window_start = Clock::now();
                publish();
            }
            // Sampling costs at most a twentieth of the time: sample again once training took 19x the last sample (a
            // lecture model's samples refresh about twice a second; sampling runs on one device, the other replicas
            // idle meanwhile: a tenth cost the window 7-10% of its training throughput, bench/RESULTS.md).
            // Paused, the text is the weights' as they are (the end of a run) where a sample is quick.
            bool auto_sample = m_weights_changed && m_train_s_since_sample * 1e3 >= k_sample_ratio * m_sample_cost_ms;
            bool still = !p.running && m_weights_changed && m_sample_cost_ms > 0 && m_sample_cost_ms <= k_paused_sample_ms;
            if (m_run && !m_snap.fatal && m_cfg.sample_chars > 0 && (p.sample || auto_sample || still)) do_sample();
        } catch (const DeviceError& e) {
            fail(Error(e.what() + rescue(p.autosave_path)), true);
        } catch (const std::exception& e) {
            if (p.restart) {
                std::lock_guard lk(m_mutex);
                m_snap.restart_error = e.what();
                m_snap.busy.clear();
                std::printf("attnlab: Apply & restart not applied: %s\n", e.what());  // as every failure, on stdout
                std::fflush(stdout);
                publish();
                if (m_run) continue;
            }
            fail(e, false);
        }
    }
}

}  // namespace attn
