// The training thread's attention maps: the shown (layer, head) of the shown batch element, the all-heads grid
// (each map averaged in blocks) and the preview before any step.
#include "training_thread.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>

namespace attn {

// The map before any step (after a build, a load, a revert): the weights' attention on the next step's batch,
// from a forward pass that changes nothing the step depends on (Trainer::preview_attention).
void TrainingThread::show_attention_now() {
    if (!m_run || m_cfg.kind == ModelKind::Bigram) return;
    if (!m_run->trainer().preview_attention()) return;  // quitting
    m_att_full = m_run->trainer().read_attention();
    m_shown_b = m_run->trainer().display_batch();
    slice_attention();
}

void TrainingThread::slice_attention() {
    int T = m_cfg.block_size;
    size_t per = size_t(T) * T;
    int layer = std::clamp(m_att_layer, 0, std::max(0, m_cfg.n_layer - 1));
    int head = std::clamp(m_att_head, 0, std::max(0, m_cfg.n_head - 1));
    size_t at = (size_t(layer) * m_cfg.n_head + head) * per;
    std::vector<float> att;
    if (m_att_full.size() >= at + per) att.assign(m_att_full.begin() + at, m_att_full.begin() + at + per);
    // all heads: every (T,T) map averaged over blocks of f x f, at most 32 x 32 cells each
    std::vector<float> all;
    int L = m_cfg.n_layer, NH = m_cfg.n_head, f = (T + 31) / 32, G = (T + f - 1) / f;
    if (m_att_all && m_att_full.size() >= size_t(L) * NH * per) {
        all.assign(size_t(L) * NH * G * G, 0.0f);
        std::vector<int> cnt(size_t(G) * G, 0);
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++) cnt[size_t(i / f) * G + j / f]++;
        for (int m = 0; m < L * NH; m++) {
            const float* src = m_att_full.data() + size_t(m) * per;
            float* dst = all.data() + size_t(m) * G * G;
            for (int i = 0; i < T; i++) {
                float* row = dst + size_t(i / f) * G;
                for (int j = 0; j < T; j++) row[j / f] += src[size_t(i) * T + j];
            }
            for (size_t k = 0; k < size_t(G) * G; k++) dst[k] /= float(cnt[k]);
        }
    }
    int b = m_shown_b;
    std::vector<uint32_t> toks = m_run->trainer().last_batch_tokens(b);
    std::vector<std::string> chars;
    for (uint32_t t : toks) chars.push_back(m_data->decode(t));
    std::lock_guard lk(m_mutex);
    m_snap.attention = std::move(att);
    m_snap.att_tokens = std::move(toks);
    m_snap.att_chars = std::move(chars);
    m_snap.att_T = T;
    m_snap.att_element = b;
    m_snap.att_layer = layer;
    m_snap.att_head = head;
    m_snap.att_all = std::move(all);
    m_snap.att_grid = m_snap.att_all.empty() ? 0 : G;
    m_snap.att_layers = L;
    m_snap.att_heads = NH;
    publish();
}

}  // namespace attn
