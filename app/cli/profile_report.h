// --profile's report, the Performance panel's figures as text: time per training step (wall, GPU, host), the shares
// of the run's wall time taken by training, evaluation and sampling, GPU memory, then GPU time per step by kernel.
#pragma once
#include <cstddef>
#include <map>
#include <string>

#include "train/trainer.h"

namespace attn {

class ProfileReport {
public:
    // A training step that took `seconds` of wall time; its kernel times when it ran with timestamps.
    void add_step(const Trainer& tr, const StepResult& r, double seconds);
    void add_eval(double seconds) { m_eval_s += seconds; }
    void add_sample(double seconds) { m_sample_s += seconds; }
    bool any() const { return m_profiled > 0; }
    // Called after profiled steps (any()); wall_s: the run's wall time so far.
    // timelapse: the run's, whose host memory is reported beside the GPU's; record_s: the time spent recording it
    void print(double wall_s, size_t gpu_bytes, const TimeLapse& timelapse, double record_s) const;

private:
    std::map<std::string, std::pair<double, int>> m_per_kernel;  // name -> (ms summed, calls)
    int m_profiled = 0;                                          // steps run with per-kernel timestamps
    int m_steps = 0;                                             // training steps timed
    double m_train_s = 0, m_eval_s = 0, m_sample_s = 0;          // wall time in each
    double m_gpu_ms = 0;                                         // summed over the profiled steps
};

}  // namespace attn
