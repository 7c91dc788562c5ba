// The training thread's attention maps: the shown (layer, head) of the shown batch element or of the time-lapse's
// probe, the all-heads grid (each map averaged in blocks) and the preview before any step.
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

// The recorded step at which the strongest induction score (best, one a step) rose most since the step before, when
// it rose by at least 0.1 (-1: nowhere).
static int induction_rise(const std::vector<double>& best, const std::vector<int>& steps) {
    int at = -1;
    double most = 0.1;
    for (size_t k = 1; k < best.size() && k < steps.size(); k++)
        if (best[k] - best[k - 1] >= most) most = best[k] - best[k - 1], at = steps[k];
    return at;
}

void TrainingThread::slice_attention() {
    int T = m_cfg.block_size;
    const std::vector<float>* full = &m_att_full;
    // the probe view: the time-lapse snapshot asked for, as floats (n_layer, NH, P, P)
    const TimeLapse& tl = m_run->timelapse();
    const ProbeSnapshot* shot = nullptr;
    std::vector<float> probe_full;
    if (m_att_probe && !tl.empty() && tl.n_layer() == m_cfg.n_layer) {
        shot = m_att_probe_step < 0 ? &tl.snapshots().back() : tl.nearest(m_att_probe_step);
        T = tl.length();
        probe_full.resize(shot->att.size());
        for (size_t k = 0; k < probe_full.size(); k++) probe_full[k] = half_to_float(shot->att[k]);
        full = &probe_full;
    }
    size_t per = size_t(T) * T;
    int layer = std::clamp(m_att_layer, 0, std::max(0, m_cfg.n_layer - 1));
    int head = std::clamp(m_att_head, 0, std::max(0, m_cfg.n_head - 1));
    size_t at = (size_t(layer) * m_cfg.n_head + head) * per;
    std::vector<float> att;
    if (full->size() >= at + per) att.assign(full->begin() + at, full->begin() + at + per);
    // all heads: every (T,T) map averaged over blocks of f x f, at most 32 x 32 cells each
    std::vector<float> all;
    int L = m_cfg.n_layer, NH = m_cfg.n_head, f = (T + 31) / 32, G = (T + f - 1) / f;
    if (m_att_all && full->size() >= size_t(L) * NH * per) {
        all.assign(size_t(L) * NH * G * G, 0.0f);
        std::vector<int> cnt(size_t(G) * G, 0);
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++) cnt[size_t(i / f) * G + j / f]++;
        for (int m = 0; m < L * NH; m++) {
            const float* src = full->data() + size_t(m) * per;
            float* dst = all.data() + size_t(m) * G * G;
            for (int i = 0; i < T; i++) {
                float* row = dst + size_t(i / f) * G;
                for (int j = 0; j < T; j++) row[j / f] += src[size_t(i) * T + j];
            }
            for (size_t k = 0; k < size_t(G) * G; k++) dst[k] /= float(cnt[k]);
        }
    }
    std::vector<int> steps;
    std::vector<std::pair<std::string, float>> top;
    std::vector<float> entropy, distance;  // the shown head's summary at every recorded step
    if (shot) {
        for (const auto& sn : tl.snapshots()) steps.push_back(sn.step);
        // computed again only when the recorded steps, the head or the probe changed (every map of the history)
        std::string key = std::to_string(layer) + "," + std::to_string(head) + "," + std::to_string(steps.size()) + "," +
                          std::to_string(steps.back()) + "," + std::to_string(steps.front()) + "," + tl.text();
        if (key != m_summary_key) {
            m_summary_key = key;
            m_summary_entropy.clear();
            m_summary_distance.clear();
            for (const auto& sn : tl.snapshots()) {
                HeadSummary hs = summarize_head(snapshot_head(sn, T, m_cfg.n_head, layer, head), T, m_cfg.causal);
                m_summary_entropy.push_back(float(hs.entropy));
                m_summary_distance.push_back(float(hs.mean_distance));
            }
        }
        entropy = m_summary_entropy;
        distance = m_summary_distance;
        for (size_t k = 0; k < shot->top_ids.size(); k++)
            top.emplace_back(shot->top_ids[k] >= 0 ? m_data->decode(uint32_t(shot->top_ids[k])) : "", shot->top_p[k]);
    }
    std::vector<HeadScores> scores;
    if (shot && m_heads_view && tl.has_weights() && L > 0) {
        scores = m_run->head_scores_at(shot->step);
        // the shown head at every recorded step: for models small enough that every step takes a moment
        std::string key = std::to_string(layer) + "," + std::to_string(head) + "," + m_summary_key;
        if (key != m_lines_key && m_run->trainer().num_params() <= k_head_lines_params) {
            m_lines_key = key;
            m_lines.clear();
            std::vector<double> best;  // the strongest induction score at each step
            for (const auto& sn : tl.snapshots()) {
                const std::vector<HeadScores>& at = m_run->head_scores_at(sn.step);
                m_lines.push_back(at[size_t(layer) * NH + head]);
                double b = 0;
                for (const HeadScores& h : at) b = std::max(b, h.induction);
                best.push_back(b);
            }
            m_rise_step = induction_rise(best, steps);
        }
    }
    // heads knocked out: their effect at the shown step, for models whose every fixed batch takes a moment
    Snapshot::Knockout knock;
    knock.heads = m_knockout;
    bool knock_changed = false;
    if (shot && m_heads_view && tl.has_weights() && !m_knockout.empty()) {
        std::string prompt;
        {
            std::lock_guard lk(m_mutex);
            prompt = m_pending.prompt;
        }
        std::string key = std::to_string(shot->step) + "," + tl.text() + "," + head_list_text(m_knockout) + "\n" +
                          prompt + "\n" + std::to_string(m_cfg.sample_chars);
        if (key != m_knockout_key) {
            m_knockout_key = key;
            knock_changed = true;
            if (m_run->trainer().num_params() > k_head_lines_params) {
                knock.note = "this model is too big to knock heads out here: attnlab inspect --ablate does it";
            } else {
                Session::Ablation a = m_run->ablate(shot->step, m_knockout, AblationMode::Zero, tl.tokens(), tl.text());
                knock.step = a.step;
                knock.val_intact = a.val_intact;
                knock.val_ablated = a.val_ablated;
                knock.probe_intact = a.intact.mean_loss();
                knock.probe_ablated = a.ablated.mean_loss();
                knock.loss_intact = a.intact.char_loss;
                knock.loss_ablated = a.ablated.char_loss;
                auto top1 = [&](const ProbeSnapshot& v) {
                    std::vector<std::string> out;
                    for (size_t t = 0; t < v.top_ids.size(); t += k_probe_top)
                        out.push_back(v.top_ids[t] >= 0 ? m_data->decode(uint32_t(v.top_ids[t])) : "");
                    return out;
                };
                knock.top_intact = top1(a.intact);
                knock.top_ablated = top1(a.ablated);
                if (m_cfg.sample_chars > 0) {
                    knock.sample = m_run->sample_ablated(shot->step, m_knockout, AblationMode::Zero, prompt,
                                                         m_cfg.sample_chars, m_cfg.seed).text;
                }
            }
        }
    } else if (!m_knockout_key.empty()) {
        m_knockout_key.clear();
        knock_changed = true;
    }
    // head importance at the shown step: one pass of the fixed validation batches a head, for models where that is quick
    std::vector<double> importance;
    int importance_step = -1;
    std::string importance_note;
    bool importance_changed = false;
    if (shot && m_heads_view && tl.has_weights() && m_importance && L > 0) {
        std::string key = std::to_string(shot->step) + "," + std::to_string(tl.snapshots().size());
        if (key != m_importance_key) {
            m_importance_key = key;
            importance_changed = true;
            if (m_run->trainer().num_params() > k_head_lines_params)
                importance_note = "this model is too big to score importance here: attnlab inspect --heads does it";
            else
                importance = m_run->head_importance(shot->step, AblationMode::Zero, &importance_step);
        }
    } else if (!m_importance_key.empty()) {
        m_importance_key.clear();
        importance_changed = true;
    }
    // in-context learning: the loss by position at every recorded step (cached per step by the Session)
    std::vector<int> icl_steps;
    std::vector<double> icl_scores;
    std::vector<std::vector<float>> icl_curves;
    std::string icl_note;
    bool icl_changed = false;
    if (m_icl) {
        if (!tl.has_weights() || tl.empty())
            icl_note = "no recorded weights: the in-context score needs the time-lapse";
        else if (m_run->trainer().num_params() > k_head_lines_params)
            icl_note = "this model is too big to score in-context learning here: attnlab inspect --icl does it";
        std::string key = icl_note;
        for (const auto& sn : tl.snapshots()) key += "," + std::to_string(sn.step);
        if (key != m_icl_key) {
            m_icl_key = key;
            icl_changed = true;
            if (icl_note.empty())
                for (const auto& sn : tl.snapshots()) {
                    const std::vector<double>& v = m_run->loss_by_position_at(sn.step);
                    icl_steps.push_back(sn.step);
                    icl_scores.push_back(icl_score(v));
                    icl_curves.emplace_back(v.begin(), v.end());
                }
        }
    } else if (!m_icl_key.empty()) {
        m_icl_key.clear();
        icl_changed = true;
    }
    // scrubbed to a recorded step: a sample from that step's weights, with one seed at every step
    SampleEntry scrubbed{-1};
    bool scrubbed_changed = false;
    if (shot && m_att_probe_step >= 0 && tl.has_weights() && m_cfg.sample_chars > 0) {
        std::string prompt;
        {
            std::lock_guard lk(m_mutex);
            prompt = m_pending.prompt;
        }
        std::string key = std::to_string(shot->step) + "\n" + prompt + "\n" + std::to_string(m_cfg.sample_chars);
        if (key != m_scrub_key) {
            m_scrub_key = key;
            scrubbed_changed = true;
            SessionSample smp = m_run->sample_at(shot->step, prompt, m_cfg.sample_chars, m_cfg.seed);
            scrubbed.step = smp.step;
            scrubbed.prompt = prompt;
            scrubbed.text = std::move(smp.text);
            scrubbed.left_out = std::move(smp.left_out);
            scrubbed.tokens = token_pieces(smp.ids);
            for (const auto& e : m_run->history().evals)
                if (e.step == smp.step) scrubbed.val_loss = e.val;
        }
    } else if (!m_scrub_key.empty()) {
        m_scrub_key.clear();
        scrubbed_changed = true;
    }
    int b = m_shown_b;
    std::vector<uint32_t> toks = shot ? tl.tokens() : m_run->trainer().last_batch_tokens(b);
    std::vector<std::string> chars;
    std::vector<uint8_t> unknown(toks.size(), 0);
    if (shot && !m_data->bpe()) {
        chars = probe_chars(toks, tl.text(), m_data->vocab());
        unknown = probe_unknown(toks, tl.text(), m_data->vocab());
    } else {  // each token's bytes (a BPE probe: its tokens, every byte known)
        for (uint32_t t : toks) chars.push_back(m_data->decode(t));
    }
    std::lock_guard lk(m_mutex);
    m_snap.attention = std::move(att);
    m_snap.att_tokens = std::move(toks);
    m_snap.att_chars = std::move(chars);
    m_snap.att_unknown = std::move(unknown);
    m_snap.att_T = T;
    m_snap.att_element = b;
    m_snap.att_layer = layer;
    m_snap.att_head = head;
    m_snap.att_all = std::move(all);
    m_snap.head_scores = std::move(scores);
    if (knock_changed) m_snap.knockout = std::move(knock);
    if (icl_changed) {
        m_snap.icl_steps = std::move(icl_steps);
        m_snap.icl_scores = std::move(icl_scores);
        m_snap.icl_curves = std::move(icl_curves);
        m_snap.icl_note = std::move(icl_note);
    }
    if (importance_changed) {
        m_snap.head_importance = std::move(importance);
        m_snap.importance_step = importance_step;
        m_snap.importance_note = std::move(importance_note);
    }
    m_snap.knockout.heads = m_knockout;
    m_snap.head_lines = shot && m_heads_view ? m_lines : std::vector<HeadScores>{};
    m_snap.induction_rise_step = shot && m_heads_view ? m_rise_step : -1;
    m_snap.att_grid = m_snap.att_all.empty() ? 0 : G;
    m_snap.att_layers = L;
    m_snap.att_heads = NH;
    m_snap.att_probe = shot != nullptr;
    m_snap.probe_step = shot ? shot->step : -1;
    m_snap.probe_text = tl.text();
    m_snap.probe_steps = std::move(steps);
    m_snap.probe_loss = shot ? shot->char_loss : std::vector<float>{};
    m_snap.probe_top = std::move(top);
    m_snap.probe_entropy = std::move(entropy);
    m_snap.probe_distance = std::move(distance);
    if (scrubbed_changed) m_snap.scrubbed_sample = std::move(scrubbed);
    publish();
}

}  // namespace attn
