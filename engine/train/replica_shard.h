// Internal to engine/train: a replica of data parallelism (Trainer::Shard) and its host thread (ShardWorker), shared
// by trainer.cpp (the one-device step, programs, evaluation) and replicas.cpp (the replicated step).
#pragma once
#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <thread>

#include "model/model.h"
#include "train/trainer.h"
#include "vk/program.h"

namespace attn {

// A replica's host thread: runs one job at a time (a program's submit and wait) while the caller runs its own. A
// CPU driver's step of a small model takes about a millisecond, and waking a sleeping thread on a virtual machine can
// take a good part of that: both sides spin for up to half a millisecond before they sleep (a futex wait).
class ShardWorker {
public:
    ShardWorker() : m_thread([this] { loop(); }) {}
    ~ShardWorker() {
        m_quit = true;
        m_go.fetch_add(1);
        m_go.notify_one();
        m_thread.join();
    }
    ShardWorker(const ShardWorker&) = delete;
    ShardWorker& operator=(const ShardWorker&) = delete;
    void post(std::function<void()> job) {
        m_job = std::move(job);
        m_error = nullptr;
        m_go.fetch_add(1, std::memory_order_release);
        m_go.notify_one();
    }
    // Waits for the posted job; rethrows what it threw.
    void wait() {
        int want = m_go.load(std::memory_order_relaxed);
        spin_until([&] { return m_done.load(std::memory_order_acquire) == want; });
        for (int d; (d = m_done.load(std::memory_order_acquire)) != want;) m_done.wait(d);
        if (m_error) std::rethrow_exception(m_error);
    }

private:
    static constexpr auto k_spin = std::chrono::microseconds(500);
    template <typename F> static void spin_until(F ready) {
        auto t0 = std::chrono::steady_clock::now();
        while (!ready() && std::chrono::steady_clock::now() - t0 < k_spin) {
        }
    }
    void loop() {
        for (int seen = 0;;) {
            spin_until([&] { return m_go.load(std::memory_order_acquire) != seen; });
            for (int g; (g = m_go.load(std::memory_order_acquire)) == seen;) m_go.wait(g);
            seen = m_go.load(std::memory_order_acquire);
            if (m_quit) return;
            try {
                m_job();
            } catch (...) {
                m_error = std::current_exception();
            }
            m_done.store(seen, std::memory_order_release);
            m_done.notify_one();
        }
    }
    std::function<void()> m_job;
    std::exception_ptr m_error;
    std::atomic<int> m_go{0}, m_done{0};
    std::atomic<bool> m_quit{false};
    std::thread m_thread;  // last: starts after the members it reads
};

// One replica of data parallelism (Trainer::replicas_for): a device, its copy of the model, and its slice of
// every training batch. The first shard runs on the trainer's context and model; the others own theirs.
struct Trainer::Shard {
    std::unique_ptr<Context> own_ctx;
    std::unique_ptr<KernelCache> own_kc;
    std::unique_ptr<Model> own_model;
    Buffer own_tokens, own_hyper;
    Context* ctx = nullptr;
    KernelCache* kc = nullptr;
    Model* model = nullptr;
    const Buffer* tokens = nullptr;  // (N,) the corpus
    const Buffer* hyper = nullptr;   // ops::AdamWHyper, host-visible
    Buffer seed;                     // (uvec2,) host-visible: its slice's dropout key
    int slice = 0, row0 = 0, rows = 0;  // batch rows [row0, row0 + rows), slice `slice` of replicas()
    std::unique_ptr<Activations> act;   // (rows, ...)
    Buffer offsets;                     // (rows,) host-visible
    Buffer inbox;                       // (R, flat) host-visible: every slice's gradient, in slice order
    // [profiled][kind]: the first shard's profiled twins exist while profiling is on. The update of a step runs at
    // the start of the next one (one submit a step); Trainer::flush runs it alone when something reads the weights.
    enum Kind { Step, UpdateStep, Update };  // forward + backward | AdamW (of the slices' mean), then Step | AdamW
    std::unique_ptr<Program> prog[2][3];
    std::unique_ptr<ShardWorker> worker;  // the other shards' host thread
};

}  // namespace attn
