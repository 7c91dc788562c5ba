// The desktop window: creates the window, the Vulkan context on it, the training thread and the panels; runs frames.
#include "window_app.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>
#include <sys/resource.h>
#include <unistd.h>

#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_vulkan.h>
#include <stb_image_write.h>

#include "fonts.h"
#include "interrupt.h"
#include "panel_lab.h"
#include "panels.h"
#include "renderer.h"
#include "resume_prompt.h"
#include "io/files.h"
#include "window_files.h"

namespace attn {

namespace {

using Clock = std::chrono::steady_clock;

struct GlfwSession {
    ~GlfwSession() { glfwTerminate(); }
};
struct ImGuiSession {
    ImGuiSession() { ImGui::CreateContext(); }
    ~ImGuiSession() { ImGui::DestroyContext(); }
};
// Key presses queued by GLFW's callback: a tap shorter than one frame still counts (ImGui 1.86 only sees held keys).
// Dear ImGui's own widgets (text fields: Enter, Ctrl+A, Esc, Backspace) read io.KeysDown at each frame start, so a
// key pressed and released between two frames is lost to them: such taps are held down for one frame (hold_taps
// before NewFrame) and released after it (release_taps).
struct KeyPresses {
    static constexpr int k_ctrl = 1 << 20;  // or-ed into a key pressed with Ctrl held (a quick Ctrl+S counts too)
    std::vector<int> keys;
    std::vector<int> pressed, tapped;  // since the last frame start: keys pressed; of those, released again
    void on_key(int key, int action) {
        if (key < 0 || key >= int(IM_ARRAYSIZE(ImGuiIO::KeysDown))) return;
        auto erase = [](std::vector<int>& v, int k) { v.erase(std::remove(v.begin(), v.end(), k), v.end()); };
        if (action == GLFW_PRESS) {
            erase(tapped, key);  // down again: held, not a tap
            pressed.push_back(key);
        } else if (action == GLFW_RELEASE && std::find(pressed.begin(), pressed.end(), key) != pressed.end()) {
            tapped.push_back(key);
        }
    }
    static void update_modifiers(ImGuiIO& io) {
        io.KeyCtrl = io.KeysDown[GLFW_KEY_LEFT_CONTROL] || io.KeysDown[GLFW_KEY_RIGHT_CONTROL];
        io.KeyShift = io.KeysDown[GLFW_KEY_LEFT_SHIFT] || io.KeysDown[GLFW_KEY_RIGHT_SHIFT];
        io.KeyAlt = io.KeysDown[GLFW_KEY_LEFT_ALT] || io.KeysDown[GLFW_KEY_RIGHT_ALT];
        io.KeySuper = io.KeysDown[GLFW_KEY_LEFT_SUPER] || io.KeysDown[GLFW_KEY_RIGHT_SUPER];
    }
    std::vector<int> held;  // taps held down through the current frame
    void hold_taps(ImGuiIO& io) {
        for (int k : tapped) io.KeysDown[k] = true;
        if (!tapped.empty()) update_modifiers(io);
        held = tapped;
        tapped.clear();
        pressed.clear();
    }
    void release_taps(ImGuiIO& io) {
        for (int k : held)
            if (std::find(pressed.begin(), pressed.end(), k) == pressed.end()) io.KeysDown[k] = false;
        if (!held.empty()) update_modifiers(io);
        held.clear();
    }
};
struct ImGuiGlfwBackend {
    ImGuiGlfwBackend(GLFWwindow* w, KeyPresses* keys) {
        glfwSetWindowUserPointer(w, keys);
        // Installed first: ImGui's backend chains to it.
        glfwSetKeyCallback(w, [](GLFWwindow* win, int key, int, int action, int mods) {
            auto* presses = static_cast<KeyPresses*>(glfwGetWindowUserPointer(win));
            presses->on_key(key, action);
            // Left / Right repeat while held (the time-lapse's steps); the other keys act once a press
            if (action == GLFW_PRESS || (action == GLFW_REPEAT && (key == GLFW_KEY_LEFT || key == GLFW_KEY_RIGHT)))
                presses->keys.push_back(key | ((mods & GLFW_MOD_CONTROL) ? KeyPresses::k_ctrl : 0));
        });
        ImGui_ImplGlfw_InitForVulkan(w, true);
    }
    ~ImGuiGlfwBackend() { ImGui_ImplGlfw_Shutdown(); }
};
using WindowPtr = std::unique_ptr<GLFWwindow, void (*)(GLFWwindow*)>;

struct Panels {
    ControlsState controls;
    LossState loss;
    AttentionState attention;
    SamplesState samples;
    StatusState status;
    PerfState perf;
    PanelLayout layout;
};

void place(const char* title, ImVec2 pos, ImVec2 size, ImGuiWindowFlags extra = 0) {
    ImGui::SetNextWindowPos(pos, ImGuiCond_Always);
    ImGui::SetNextWindowSize(size, ImGuiCond_Always);
    // NoBringToFrontOnFocus: a clicked panel stays under the floating windows (Lab, Resume?), which it would
    // otherwise cover (the panels draw no background of their own).
    ImGui::Begin(title, nullptr,
                 ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                     ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus | extra);
}

// Lays the panels out over the whole window; returns true when a screenshot was asked for.
bool draw_panels(Panels& p, const Snapshot& snap, TrainingThread& tt) {
    ImGuiViewport* vp = ImGui::GetMainViewport();
    float W = vp->Size.x, H = vp->Size.y;
    float status_h = ImGui::GetFrameHeight() + 10, ctrl_w = std::min(340.0f, W * 0.3f);
    float main_h = H - status_h, top_h = std::floor(main_h * 0.56f), half = std::floor((W - ctrl_w) * 0.5f);
    p.layout = PanelLayout{};
    place("Controls", ImVec2(0, 0), ImVec2(ctrl_w, main_h));
    bool shot = draw_controls(p.controls, snap, tt, p.layout);
    ImGui::End();
    place("Loss", ImVec2(ctrl_w, 0), ImVec2(half, top_h), ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
    // the time-lapse's scrubbed step, shared: a cursor on the loss plot, that step's sample; a click on the plot
    // scrubs to it
    int scrubbed = p.attention.probe && !p.attention.live && snap.att_probe ? snap.probe_step : -1;
    p.loss.cursor_step = scrubbed;
    p.samples.at_step = scrubbed;
    draw_loss(p.loss, snap, p.layout);
    if (p.loss.icl_toggled) tt.set_icl(p.loss.icl);
    if (p.loss.clicked_step >= 0 && snap.cfg.kind != ModelKind::Bigram) {
        p.attention.probe = true;
        p.attention.jump_to = p.loss.clicked_step;
    }
    ImGui::End();
    place("Attention", ImVec2(ctrl_w + half, 0), ImVec2(W - ctrl_w - half, top_h), ImGuiWindowFlags_NoScrollbar);
    draw_attention(p.attention, snap, tt, p.layout);
    ImGui::End();
    // the Performance panel: a summary line beside the samples, wider when its details are unfolded
    float perf_w = std::floor(std::min(p.perf.details ? 380.0f : 250.0f, (W - ctrl_w) * 0.4f));
    place("Samples", ImVec2(ctrl_w, top_h), ImVec2(W - ctrl_w - perf_w, main_h - top_h), ImGuiWindowFlags_NoScrollbar);
    draw_samples(p.samples, snap, tt, p.layout);
    ImGui::End();
    place("Performance", ImVec2(W - perf_w, top_h), ImVec2(perf_w, main_h - top_h), ImGuiWindowFlags_NoScrollbar);
    draw_perf(p.perf, snap, tt);
    ImGui::End();
    place("##status", ImVec2(0, main_h), ImVec2(W, status_h), ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoScrollbar);
    draw_status(p.status, snap, p.controls.fps_cap);
    p.layout.status_bar = ImVec4(0, main_h, W, status_h);
    ImGui::End();
    return shot;
}

// What the window says also goes to stdout, one line each, so a terminal (or a script) sees it too: checkpoint
// outcomes, divergence and Revert, device failures. Every line of the training thread's log (Snapshot::log) once, in
// order: a Ctrl+S save followed by an autosave before the next frame shows only the autosave on the checkpoint line,
// but both are said here.
struct NoticeLog {
    uint64_t printed = 0;  // lines of the log printed so far
    void print(const Snapshot& s) {
        uint64_t first = s.log_count - s.log.size();  // the log's lines before `first` are no longer kept
        for (uint64_t i = std::max(printed, first); i < s.log_count; i++)
            std::printf("attnlab: %s\n", s.log[i - first].c_str());
        if (s.log_count > printed) std::fflush(stdout);
        printed = s.log_count;
    }
};

// Frames drawn while training runs, after its first step (so start-up and shader compiles are left out): reported at
// the end of --exit-after-steps runs, which is how tests see the window stay responsive during a big model's long
// steps (the trainer cuts them into several submits).
struct FrameStats {
    int frames = 0, from_step = -1, to_step = -1;
    double longest_gap_ms = 0;
    Clock::time_point last, first, to_step_seen;
    void note(const Snapshot& snap) {  // after a frame was drawn
        if (!snap.running || snap.done || snap.step < 1) return;
        auto t = Clock::now();
        if (from_step < 0) {
            from_step = snap.step;
            first = t;
        } else {
            frames++;
            longest_gap_ms = std::max(longest_gap_ms, std::chrono::duration<double, std::milli>(t - last).count());
        }
        if (snap.step != to_step) to_step_seen = t;
        to_step = snap.step;
        last = t;
    }
    void report() const {
        if (to_step <= from_step) return;
        int steps = to_step - from_step;
        double step_ms = std::chrono::duration<double, std::milli>(to_step_seen - first).count() / steps;
        std::printf("attnlab: drew %d frames during %d training steps (%.1f per step), longest gap %.0f ms, "
                    "%.2f ms per step\n", frames, steps, double(frames) / steps, longest_gap_ms, step_ms);
    }
};

// Frame pacing: the frame rate cap; nobody touching the window and the numbers still, a few frames a second (while
// it trains only with save-CPU on: off, the frame rate is held); while it trains unwatched (no input), drawing gets
// at most k_draw_share of the time, the CPU going to training. Sets the status bar's "saving CPU".
Clock::duration frame_period(Panels& p, const Snapshot& snap, int fps_cap, bool user_idle, bool snap_changed,
                             bool finishing) {
    auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / fps_cap));
    p.status.saving = false;
    if (user_idle && !snap_changed && !finishing && (p.controls.save_cpu || !snap.running)) {
        period = std::max(period, Clock::duration(std::chrono::milliseconds(250)));
    } else if (user_idle && p.controls.save_cpu && snap.running) {
        const double k_draw_share = 0.15;
        auto budget = std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double, std::milli>((p.perf.build_ms + p.perf.render_ms) / k_draw_share));
        p.status.saving = budget > period;
        period = std::max(period, budget);
    }
    return period;
}

// The keys pressed since the last frame: the prompts' answers, Space / S / R / H / L, Ctrl+S / Ctrl+O / Ctrl+Z;
// returns whether F12 asked for a screenshot.
bool handle_keys(KeyPresses& presses, Panels& p, const Snapshot& snap, ResumePrompt& resume, LabState& lab,
                 TrainingThread& tt) {
    ImGuiIO& io = ImGui::GetIO();
    bool shot = false;
    for (int pressed : presses.keys) {
        bool ctrl = (pressed & KeyPresses::k_ctrl) != 0;
        int key = pressed & ~KeyPresses::k_ctrl;
        if (key == GLFW_KEY_F12) shot = true;
        if (ctrl) {  // Ctrl+S / Ctrl+O: the checkpoint path in Controls, also while typing in a field
            if (key == GLFW_KEY_S) controls_save(p.controls, tt);
            if (key == GLFW_KEY_O) controls_load(p.controls, tt);
            // Ctrl+Z: Revert after divergence (not while typing: there it undoes the typing)
            if (key == GLFW_KEY_Z && !io.WantTextInput && snap.diverged && snap.good_step >= 0) tt.revert_to_good();
            continue;
        }
        if (io.WantTextInput) continue;  // typing in a field
        bool answer = key == GLFW_KEY_ENTER || key == GLFW_KEY_KP_ENTER || key == GLFW_KEY_ESCAPE;
        if (resume.open && answer) {
            resume_answer(resume, tt, key != GLFW_KEY_ESCAPE);
            continue;
        }
        if (!resume.set_aside.empty() && answer) {
            resume.set_aside.clear();
            continue;
        }
        if (p.controls.confirm_reset_step >= 0 && answer) {
            reset_answer(p.controls, tt, key != GLFW_KEY_ESCAPE);
            continue;
        }
        if (key == GLFW_KEY_SPACE) controls_start_pause(p.controls, snap, tt);
        if (key == GLFW_KEY_S) tt.step_once();
        if (key == GLFW_KEY_R) controls_reset(p.controls, snap, tt);
        if (key == GLFW_KEY_H) {  // all heads grid on/off
            p.attention.all_heads = !p.attention.all_heads;
            tt.set_attention_all(p.attention.all_heads);
        }
        if (key == GLFW_KEY_L) lab.open = !lab.open;
        // Left / Right: the time-lapse's previous / next recorded step (the probe view)
        if ((key == GLFW_KEY_LEFT || key == GLFW_KEY_RIGHT) && p.attention.probe)
            p.attention.step_by += key == GLFW_KEY_LEFT ? -1 : 1;
    }
    presses.keys.clear();
    return shot;
}

// The frame loop; returns the exit code. ctx: the window's device (drawing, the Lab); train_ctx: training's.
int frame_loop(const RunOptions& o, Context& ctx, Context& train_ctx, GLFWwindow* win, Dataset data, int cpu_threads) {
    ImGuiSession imgui;
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;  // the layout is fixed: nothing to save
    // An automated run must not show hover tooltips wherever the pointer happens to rest.
    if (o.exit_after_steps > 0) io.ConfigFlags |= ImGuiConfigFlags_NoMouse;
    ImGui::StyleColorsDark();
    // The dashboard's panels tile the window: the frame is cleared to their background colour and they draw none of
    // their own (floating windows and popups keep theirs). On a CPU driver that is ~40% less rasterising a frame.
    ImGui::GetStyle().Colors[ImGuiCol_WindowBg].w = 0;
    KeyPresses presses;
    ImGuiGlfwBackend glfw_backend(win, &presses);
    // The fonts have glyphs for the corpus's characters: made before the renderer uploads the atlas, and again when
    // Apply & restart brings a corpus with other characters.
    std::vector<uint32_t> font_vocab = data.characters();
    add_fonts(font_vocab);
    Renderer renderer(ctx, win, choose_x11_shm(ctx, win));
    // on stdout, and in short for the status bar (Panels, below, shows it from its first frame)
    auto say_missing_glyphs = [&]() -> std::string {
        MissingGlyphs m = missing_glyphs(font_vocab);
        if (m.count == 0) return "";
        std::printf("attnlab: %s\n", m.line.c_str());
        std::fflush(stdout);
        return std::to_string(m.count) + " of the corpus's " + std::to_string(font_vocab.size()) +
               " characters have no glyph (the terminal says which)";
    };
    std::string glyph_notice = say_missing_glyphs();
    const char* shot_layout_env = std::getenv("ATTN_SHOT_LAYOUT");
    const bool shot_layout = shot_layout_env && std::strcmp(shot_layout_env, "1") == 0;
    std::shared_ptr<const std::vector<uint32_t>> vocab_seen;  // the training thread's, last looked at
    // the files of the run, which no writer may overwrite as something else (Ctrl+S over the corpus, say)
    register_file("the corpus", o.data_path);
    register_file("the checkpoint", o.checkpoint_path);
    if (!o.metrics_path.empty()) {
        if (std::string why = write_problem(o.metrics_path, "the --metrics file"); !why.empty()) {
            std::fprintf(stderr, "error: %s\n", why.c_str());
            return 2;
        }
    }
    // --exit-after-steps (tests, scripts): no prompt and no autosave littering the working folder
    ResumePrompt resume = o.exit_after_steps > 0 ? ResumePrompt{} : find_autosave(data);
    if (resume.open) {
        std::printf("attnlab: %s holds a run of step %d: resume it? (Enter resumes, Esc starts fresh) [%s on %s]\n",
                    k_autosave_path, resume.step, resume.model.c_str(),
                    resume.corpus.empty() ? "this corpus" : resume.corpus.c_str());
        std::fflush(stdout);
    }
    if (!resume.set_aside.empty()) {
        std::printf("attnlab: %s\n", resume.set_aside.c_str());
        std::fflush(stdout);
    }
    // while the resume prompt is open nothing trains: the fresh model waits for the answer
    TrainingThread tt(train_ctx, std::move(data), o.data_path, o.cfg, o.exit_after_steps, o.fault, o.replicas, !resume.open,
                      o.metrics_path, o.probe, size_t(o.history_mib * 1048576.0));
    NoticeLog log;

    Panels p;
    p.status.notice = glyph_notice;
    p.controls.fps_cap = o.fps;
    p.controls.save_cpu = o.save_cpu;
    p.controls.autosave_min = o.autosave_min;
    p.controls.ckpt_path = o.checkpoint_path;
    p.status.device_name = ctx.device_name();
    p.perf.cpu_one_thread = cpu_threads == 1 && ctx.props().deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    Snapshot snap;
    LabState lab;  // after tt: the Lab's worker thread is joined first
    int fps_cap = o.fps, frames_after_done = 0;
    tt.set_frame_rate(fps_cap);
    double autosave_min = -1;  // what the thread was last told
    auto next = Clock::now(), last = Clock::now();
    auto last_input = Clock::now();
    int fps_frames = 0;
    bool snap_changed = true;
    FrameStats fstats;
    // --metrics is the training thread's run's (Session::write_metrics_to: rewritten after each evaluation, so a
    // crash or a kill keeps what was measured); its errors are said once each, and make the exit code 1.
    std::string metrics_error;
    auto say_metrics_error = [&] {
        if (!snap.metrics_error.empty() && snap.metrics_error != metrics_error)
            std::fprintf(stderr, "error: %s\n", snap.metrics_error.c_str());
        metrics_error = snap.metrics_error;
    };
    // At exit: the training thread stopped (its autosave written), what it said printed; returns the exit code.
    auto finish_metrics = [&]() -> int {
        glfwHideWindow(win);  // closed at once for the user, though a big model's step under way finishes first
        tt.stop();  // the autosave on quit, if on, is written now
        tt.poll(snap);
        log.print(snap);
        if (o.exit_after_steps > 0) fstats.report();
        say_metrics_error();
        return snap.metrics_error.empty() ? 0 : 1;
    };
    // Ctrl+C / kill / a closed terminal: quit as if the window were closed (the autosave on quit included)
    install_interrupt_handlers("quitting as if the window were closed (writing the autosave, when on)");
    // A device failure met while drawing (the training thread reports its own): the training thread stops with its
    // autosave on quit, or the last good state kept in memory when the GPU is gone, then the error is the exit.
    try {
        while (!glfwWindowShouldClose(win)) {
            if (p.controls.fps_cap >= 1 && p.controls.fps_cap <= 240 && p.controls.fps_cap != fps_cap) {
                fps_cap = p.controls.fps_cap;
                tt.set_frame_rate(fps_cap);
            }
            // no autosave while the resume prompt is open: the file holds the run it offers, which must not be
            // overwritten by the fresh one training underneath (not on quit, not by a device failure's rescue) before
            // the user has chosen (-2: "no file" told to the thread)
            // nor in a run of --exit-after-steps (scripts, tests): it never touches the user's autosave, not even
            // with the last good state after a device failure
            double want_autosave = resume.open || resume.keep_off || o.exit_after_steps > 0 ? -2 : p.controls.autosave_min;
            if (want_autosave != autosave_min) {
                autosave_min = want_autosave;
                tt.set_autosave(std::max(0.0, autosave_min), autosave_min == -2 ? "" : k_autosave_path);
            }
            if (interrupt_signal()) break;  // after the autosave setting: the quit's autosave follows it
            if (glfwGetWindowAttrib(win, GLFW_ICONIFIED)) {
                glfwWaitEventsTimeout(0.25);  // minimised: sleep until something happens (or a signal), training goes on
                continue;
            }
            // the time-lapse playing counts as watching: its frames come at its speed
            bool user_idle = Clock::now() - last_input > std::chrono::milliseconds(1500) && !p.attention.playing;
            bool finishing = o.exit_after_steps > 0 && snap.done;
            auto period = frame_period(p, snap, fps_cap, user_idle, snap_changed, finishing);
            std::this_thread::sleep_until(next);
            auto now = Clock::now();
            next = std::max(next + period, now);
            // frames counted over half-second windows: steady at a few frames a second too
            fps_frames++;
            double dt = std::chrono::duration<double>(now - last).count();
            if (dt >= 0.5) {
                p.status.fps = fps_frames / dt;
                fps_frames = 0;
                last = now;
            }
            presses.release_taps(io);  // the taps the last frame held: up, unless pressed again since
            glfwPollEvents();
            snap_changed = tt.poll(snap);
            if (snap_changed) log.print(snap);
            say_metrics_error();
            // --exit-after-steps: a run that cannot reach its step (no model, a failed device, a diverged loss,
            // which pauses training) ends with the reason instead of waiting for ever
            if (o.exit_after_steps > 0 &&
                (snap.fatal || snap.diverged || (!snap.has_model && !snap.message.empty() && snap.busy.empty()))) {
                std::fprintf(stderr, "error: %s\n", snap.message.c_str());
                return 2;
            }

            if (snap.vocab_chars != vocab_seen && (vocab_seen = snap.vocab_chars) && *vocab_seen != font_vocab) {
                font_vocab = *vocab_seen;  // (between frames: the atlas is locked during one)
                io.Fonts->Clear();
                add_fonts(font_vocab);
                renderer.rebuild_fonts();
                p.status.notice = say_missing_glyphs();
            }
            auto t_build = Clock::now();
            ImGui_ImplVulkan_NewFrame();
            ImGui_ImplGlfw_NewFrame();
            presses.hold_taps(io);  // a key tapped between two frames is down for this one
            ImGui::NewFrame();
            bool input = !presses.keys.empty() || io.MouseDelta.x != 0 || io.MouseDelta.y != 0 || io.MouseWheel != 0 ||
                         io.MouseWheelH != 0 || io.InputQueueCharacters.Size > 0 || io.WantTextInput;
            for (bool down : io.MouseDown) input |= down;
            if (input) last_input = now;
            bool shot = handle_keys(presses, p, snap, resume, lab, tt);
            shot |= draw_panels(p, snap, tt);
            draw_lab(lab, ctx, snap, tt);
            draw_resume_prompt(resume, tt);
            draw_set_aside(resume);
            draw_reset_prompt(p.controls, tt);
            ImGui::Render();
            // --exit-after-steps: a few frames after the final step so every panel shows it, then grab and leave.
            bool final_frame = o.exit_after_steps > 0 && snap.done && ++frames_after_done >= 3;
            Image img;
            bool grab = shot || (final_frame && !o.screenshot_path.empty());
            auto t_render = Clock::now();
            bool rendered = renderer.render(ImGui::GetDrawData(), grab ? &img : nullptr);
            p.perf.note_frame(std::chrono::duration<double, std::milli>(t_render - t_build).count(),
                              std::chrono::duration<double, std::milli>(Clock::now() - t_render).count());
            if (!rendered) {
                frames_after_done = std::min(frames_after_done, 2);
                continue;
            }
            fstats.note(snap);
            if (grab) {
                std::string path = !o.screenshot_path.empty() ? o.screenshot_path
                                                              : "attnlab_step" + std::to_string(snap.step) + ".png";
                std::string err = write_png(img, path);
                p.status.notice = err.empty() ? "screenshot: " + path : err;
                // the layout sidecar, for tests: with --screenshot, and with F12 when ATTN_SHOT_LAYOUT=1 (where the
                // widgets a test clicks are)
                if (err.empty() && (final_frame || shot_layout)) {  // complete once it appears, as the PNG
                    try {
                        write_file_atomic(path + ".layout", "the screenshot's layout", layout_text(img, p.layout) + lab_layout_line(lab));
                    } catch (const Error& e) {
                        err = e.what();
                        p.status.notice = err;
                    }
                }
                if (final_frame) {
                    if (!err.empty()) {
                        std::fprintf(stderr, "error: %s\n", err.c_str());
                        return 2;
                    }
                    std::printf("wrote %s (%dx%d) at step %d\n", path.c_str(), img.width, img.height, snap.step);
                }
            }
            if (final_frame) return finish_metrics();
        }
    } catch (const DeviceError& e) {
        std::fprintf(stderr, "error: drawing the window failed: %s\n", e.what());
        finish_metrics();
        return 2;
    }
    if (int sig = interrupt_signal()) {
        std::printf("attnlab: %s: closing the window\n", interrupt_name(sig));
        std::fflush(stdout);
        int rc = finish_metrics();
        return rc != 0 ? rc : 128 + sig;
    }
    return finish_metrics();
}

}  // namespace

int run_window(const RunOptions& o) {
    const char* x11 = std::getenv("DISPLAY");
    const char* wl = std::getenv("WAYLAND_DISPLAY");
    bool has_display = (x11 && *x11) || (wl && *wl);
    glfwSetErrorCallback([](int, const char*) {});  // failures are reported below, in one line
    if (!has_display || !glfwInit()) {
        const char* why = nullptr;
        if (has_display) glfwGetError(&why);
        std::fprintf(stderr, "attnlab: no display to open a window on (%s): run with --headless to train in the terminal, "
                     "or use xvfb-run\n", has_display && why ? why : "DISPLAY is not set");
        return 2;
    }
    GlfwSession session;
    if (!glfwVulkanSupported()) {
        std::fprintf(stderr, "attnlab: GLFW found no Vulkan loader for the window: install libvulkan1 and a driver "
                             "(mesa-vulkan-drivers), or run with --headless\n");
        return 2;
    }
    Dataset data = Dataset::from_file(o.data_path, o.tokenizer);
    glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API);
    int w = 1280, h = 800;
    if (GLFWmonitor* mon = glfwGetPrimaryMonitor())
        if (const GLFWvidmode* mode = glfwGetVideoMode(mon)) w = std::min(w, mode->width), h = std::min(h, mode->height);
    WindowPtr win(glfwCreateWindow(w, h, "Attention Lab", nullptr, nullptr), glfwDestroyWindow);
    if (!win) {
        const char* why = nullptr;
        glfwGetError(&why);
        std::fprintf(stderr, "attnlab: cannot open a window (%s): run with --headless to train in the terminal\n",
                     why ? why : "unknown reason");
        return 2;
    }
    ContextOptions co;
    co.device_index = o.device;
    co.validation = o.validation;
    // chosen for the starting model: the driver keeps it when Apply & restart builds another (the Performance
    // panel says so)
    co.cpu_threads = cpu_threads_option(o, o.cfg, data.vocab_size());
    uint32_t n = 0;
    const char** exts = glfwGetRequiredInstanceExtensions(&n);
    co.instance_extensions.assign(exts, exts + n);
    co.device_extensions = {VK_KHR_SWAPCHAIN_EXTENSION_NAME};
    GLFWwindow* wp = win.get();
    co.make_surface = [wp](VkInstance inst) {
        VkSurfaceKHR s = VK_NULL_HANDLE;
        VK_CHECK(glfwCreateWindowSurface(inst, wp, nullptr, &s));
        return s;
    };
    // Two devices on the same GPU: one draws the window (and runs the Lab's demos), the other trains. On a CPU driver
    // (lavapipe) each device's work runs on a thread of its own, so a frame being drawn never queues in front of a
    // training step. That thread is made here, in a thread that first lowers its own priority (nice k_draw_nice, which
    // the driver's thread inherits; Linux's setpriority with who = 0 applies to the calling thread alone): on a
    // CPU driver drawing then takes the cores training leaves, instead of slowing one of the training replicas that
    // the others wait for every step (it still holds 30 fps; bench/window_throughput.sh). On a GPU the drawing
    // device's CPU threads do little, and the niceness changes nothing.
    constexpr int k_draw_nice = 5;
    std::unique_ptr<Context> ctx_ptr;
    std::exception_ptr failed;
    std::thread([&] {
        setpriority(PRIO_PROCESS, 0, k_draw_nice);  // a failure only leaves the priority as it was
        try {
            ctx_ptr = std::make_unique<Context>(co);
        } catch (...) {
            failed = std::current_exception();
        }
    }).join();
    if (failed) std::rethrow_exception(failed);
    Context& ctx = *ctx_ptr;
    ContextOptions train_co = ctx.peer_options();  // quiet (the device line is printed), its validation counted in ctx
    train_co.cpu_threads = co.cpu_threads;
    Context train_ctx(train_co);
    int rc = frame_loop(o, ctx, train_ctx, wp, std::move(data), co.cpu_threads);
    if (ctx.validation_enabled() && ctx.validation_messages() > 0) {
        std::fprintf(stderr, "validation: %llu message(s)\n", (unsigned long long)ctx.validation_messages());
        return rc ? rc : 3;
    }
    return rc;
}

}  // namespace attn
