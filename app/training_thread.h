// The training thread: owns the Trainer, takes commands from the UI and publishes Snapshots under a mutex.
#pragma once
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "train/trainer.h"

namespace attn {

struct EvalPoint {
    int step = 0;
    double train = 0, val = 0;
};

struct SampleEntry {
    int step = 0;
    double val_loss = 0;  // the latest estimate when the sample was taken (0: none yet)
    std::string prompt, text;
};

// Everything the UI draws, copied out under the lock.
struct Snapshot {
    uint64_t version = 0;
    int step = 0;
    bool running = false;
    bool has_model = false;
    std::string busy;             // what the thread is doing now, e.g. "building the model" (empty: idle/training)
    std::string message;          // last error or notice for the user
    std::string restart_error;    // why the last Apply & restart was refused
    std::vector<float> step_losses;  // [i] = loss of step i+1
    std::vector<EvalPoint> evals;
    std::vector<SampleEntry> samples;  // oldest first
    // attention of batch element att_element, layer att_layer, head att_head in the last step read:
    // (T,T), row = query, col = key
    std::vector<float> attention;
    std::vector<std::string> att_chars;  // the T input characters
    std::vector<uint32_t> att_tokens;
    int att_T = 0, att_element = 0, att_layer = 0, att_head = 0;
    double ms_per_step = 0, gpu_ms = 0, tokens_per_s = 0, it_per_s = 0;
    double sample_ms = 0;           // cost of the last sample
    int sample_every_steps = 0;     // auto-sample cadence that keeps sampling <= 25% of training time
    Config cfg;                     // the running config
    std::string corpus_name, corpus_path;
    size_t corpus_bytes = 0;
    int vocab = 0;
    size_t params = 0;
    bool done = false;              // --exit-after-steps reached, final eval and sample made
    bool fatal = false;             // the device failed: nothing more will happen
};

class TrainingThread {
public:
    // exit_after_steps > 0: train that many steps, then evaluate, sample and set Snapshot::done.
    TrainingThread(Context& ctx, Dataset data, const std::string& corpus_path, const Config& cfg, int exit_after_steps);
    ~TrainingThread();
    TrainingThread(const TrainingThread&) = delete;
    TrainingThread& operator=(const TrainingThread&) = delete;

    void set_running(bool on);
    void toggle_running();
    void step_once();
    void reset();  // new weights, same config; histories cleared
    void restart(const Config& cfg, const std::string& corpus_path);
    void set_live(const Config& cfg);
    void request_sample();
    void set_prompt(const std::string& prompt);
    // Which map to show: batch element b (from the next step on), layer, head.
    void set_attention_view(int b, int layer, int head);

    // Copies the snapshot into `out` when it changed since out.version; returns whether it did.
    bool poll(Snapshot& out);

private:
    struct Pending {
        bool running = true;
        int step_once = 0;
        bool reset = false, restart = false, live = false, sample = false, reslice = false, quit = false;
        Config restart_cfg, live_cfg;
        std::string restart_path, prompt;
        int att_element = 0, att_layer = 0, att_head = 0;
    };
    // Changes the pending commands under the lock and wakes the thread.
    template <typename F>
    void post(F&& change) {
        {
            std::lock_guard lk(m_mutex);
            change(m_pending);
        }
        m_cv.notify_all();
    }
    void run();
    bool has_work() const;
    void build(const Config& cfg);
    void do_step(bool force_attention);
    void do_eval();
    void do_sample();
    void slice_attention();
    void publish();  // bumps the version; call with m_mutex held

    Context& m_ctx;
    std::unique_ptr<Dataset> m_data;  // outlives m_trainer, which holds a reference
    std::unique_ptr<Trainer> m_trainer;
    std::string m_corpus_path;
    int m_exit_after = 0;
    std::vector<float> m_att_full;  // (n_layer, NH, T, T) of element m_shown_b, read after a step
    int m_shown_b = 0;              // the batch element m_att_full belongs to
    std::chrono::steady_clock::time_point m_last_att_read{};
    double m_train_s_since_sample = 0;
    bool m_weights_changed = true;
    Config m_cfg;  // copy for the thread (live values included)
    std::string m_prompt;
    int m_att_element = 0, m_att_layer = 0, m_att_head = 0;

    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    Pending m_pending;
    Snapshot m_snap;
    std::thread m_thread;
};

}  // namespace attn
