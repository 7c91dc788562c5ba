// Lab window: the eight self-attention demos (engine/lab), computed by compute shaders on the window's device.
#pragma once
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <imgui.h>

#include "lab/lab_model.h"
#include "lab/lab_trick.h"
#include "training_thread.h"

namespace attn {

// Demo 5's comparison (two training runs, seconds): runs on its own thread, reports progress, can be stopped.
class LabEncoderJob {
public:
    LabEncoderJob() = default;
    ~LabEncoderJob();  // stops and joins
    LabEncoderJob(const LabEncoderJob&) = delete;
    LabEncoderJob& operator=(const LabEncoderJob&) = delete;

    void start(Context& ctx, const std::string& corpus_path, const lab::EncoderDemoInput& in);
    void stop();             // asks the thread to stop; it ends within a training step
    bool busy() const { return m_thread.joinable() && !m_finished.load(); }
    // Joins a finished thread; true when a new result or error arrived.
    bool collect();
    int done() const { return m_done.load(); }
    int total() const { return m_total.load(); }

    bool has_result = false;
    lab::EncoderDemo result;
    std::string error;  // why the last run failed ("" when it did not)

private:
    void join();
    std::thread m_thread;
    std::atomic<bool> m_stop{false}, m_finished{false};
    std::atomic<int> m_done{0}, m_total{0};
    std::mutex m_mutex;  // guards m_result and m_error while the thread writes them
    lab::EncoderDemo m_result;
    std::string m_error;
    bool m_ok = false;
};

// Computes one small demo at a time off the UI thread: a task returns an "apply" step that collect() runs on the UI
// thread, so the results are only ever touched there.
class LabWorker {
public:
    LabWorker() = default;
    ~LabWorker();  // joins (a small demo takes milliseconds, or one training step's wait for the queue)
    LabWorker(const LabWorker&) = delete;
    LabWorker& operator=(const LabWorker&) = delete;

    bool busy() const { return m_thread.joinable(); }  // running, or finished and not yet collected
    // Starts `task` on a new thread; false when busy or no thread could be made.
    bool start(std::function<std::function<void()>()> task);
    // When the task has finished: joins and runs its apply step here.
    void collect();

private:
    std::thread m_thread;
    std::atomic<bool> m_finished{false};
    std::function<void()> m_apply;
};

struct LabState {
    bool open = false;
    int demo = 0;  // index into lab::demos()
    bool initialised = false;
    std::string start_error;  // e.g. ATTNLAB_LAB_DEMO named no demo
    std::unique_ptr<KernelCache> kc;
    ImVec4 content_rect{};  // where the demo drew this frame, framebuffer pixels (for the screenshot test's sidecar)

    // 1 matmul
    lab::MatmulDemoInput matmul_in;
    lab::MatmulDemo matmul;
    std::string matmul_error;
    bool matmul_dirty = true;
    // 2 average
    lab::AverageDemoInput average_in;
    lab::AverageDemo average;
    std::string average_error;
    bool average_dirty = true;
    // 3 softmax
    std::vector<float> softmax_scores{0.1f, -0.2f, 0.3f, -0.2f, 0.5f};
    float softmax_mult = 8.0f;
    lab::SoftmaxDemo softmax;
    std::string softmax_error;
    bool softmax_dirty = true;
    // 4 scaling: recomputed at most every k_scaling_period while the slider moves
    lab::ScalingDemoInput scaling_in;
    lab::ScalingDemo scaling;
    std::string scaling_error;
    bool scaling_dirty = true;
    std::chrono::steady_clock::time_point scaling_last{};
    // 5 encoder
    lab::EncoderDemoInput encoder_in;
    LabEncoderJob encoder_job;
    int live_toggle_step = -1;     // step at which the live mask was last switched here (-1: never)
    double live_toggle_loss = -1;  // the recent mean loss then (-1: not read yet)
    // 6 position: both settings of the position embeddings, one shown large
    lab::PositionDemoInput position_in;
    lab::PositionDemo position_off, position_on;
    bool position_show_on = false;
    std::string position_error;
    bool position_dirty = true;
    // 7 batches
    lab::BatchesDemoInput batches_in;
    lab::BatchesDemo batches;
    std::string batches_error;
    bool batches_dirty = true;
    // 8 graph: the node whose incoming edges are drawn strong (-1: the last; the mouse over a node picks it)
    lab::GraphDemoInput graph_in;
    lab::GraphDemo graph;
    std::string graph_error;
    bool graph_dirty = true;
    int graph_node = -1;
    // last: destroyed (joined) first, while everything its task points into still exists
    LabWorker worker;
};

// Opens the window on ATTNLAB_LAB_DEMO=NAME when set (used by tests and screenshots).
void init_lab(LabState& st);
// The Lab window (when open) and the small "Lab (L)" button at the top right of the main window.
void draw_lab(LabState& st, Context& ctx, const Snapshot& snap, TrainingThread& tt);
// The line "lab X Y W H" (framebuffer pixels of the demo area; zeros when closed) of a screenshot's layout sidecar.
std::string lab_layout_line(const LabState& st);

}  // namespace attn
