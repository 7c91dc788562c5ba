// The Attention panel's parts that live in files of their own: the heatmap's colours (panel_attention.cpp) and
// the Heads view (panel_heads.cpp).
#pragma once
#include <imgui.h>

#include "panels.h"

namespace attn {

extern const ImU32 k_masked_colour;  // the causal mask's future cells, and a score with nowhere to look
ImU32 colormap(float t);             // viridis: 0 (dark purple) to 1 (yellow), t clamped

// The Heads view (probe mode): every layer x head coloured by one score at the shown step, knock-out toggles, the
// shown head's score at every recorded step. Drawn instead of the map while "head scores" is on.
void draw_heads_view(AttentionState& st, const Snapshot& snap, TrainingThread& tt, PanelLayout& layout);

}  // namespace attn
