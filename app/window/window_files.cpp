// The files the window writes (window_files.h).
#include "window_files.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include <stb_image_write.h>

#include "io/files.h"
#include "vk/check.h"

namespace attn {

std::string write_png(const Image& img, const std::string& path) {
    if (img.rgba.empty()) return "the window could not be read back (its swapchain lacks TRANSFER_SRC)";
    std::string png;  // encoded in memory, then written as any other file (complete once it appears)
    auto append = [](void* ctx, void* data, int size) { static_cast<std::string*>(ctx)->append(static_cast<char*>(data), size_t(size)); };
    if (!stbi_write_png_to_func(append, &png, img.width, img.height, 4, img.rgba.data(), img.width * 4))
        return "cannot encode the screenshot as PNG";
    try {
        write_file_atomic(path, "the screenshot", png);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

// The sidecar FILE.png.layout: where the panels drew, for tests that check pixels.
std::string layout_text(const Image& img, const PanelLayout& l) {
    std::ostringstream f;
    auto rect = [&](const std::string& name, ImVec4 r, int extra = -1) {  // one line: NAME x y w h [extra]
        f << name << ' ' << std::lround(r.x) << ' ' << std::lround(r.y) << ' ' << std::lround(r.z) << ' ' << std::lround(r.w);
        if (extra >= 0) f << ' ' << extra;
        f << '\n';
    };
    auto rgb = [&](const char* name, ImU32 c) {
        f << name << ' ' << (c & 255) << ' ' << ((c >> 8) & 255) << ' ' << ((c >> 16) & 255) << '\n';
    };
    f << "window " << img.width << ' ' << img.height << '\n';
    rect("heatmap", l.heatmap, l.heatmap_T);
    f << "heatmap_labels " << l.heatmap_labels << '\n';
    rgb("masked", l.masked_colour);
    rect("loss", l.loss_plot);
    rgb("train", l.train_colour);
    rgb("val", l.val_colour);
    rgb("plot_bg", l.plot_bg_colour);
    rect("samples", l.samples_text);
    rect("status", l.status_bar);
    rect("corpus_field", l.corpus_field);
    rect("restart_button", l.restart_button);
    rect("batch_field", l.batch_field);
    rect("lr_field", l.lr_field);
    rect("prompt_field", l.prompt_field);
    rect("preset_combo", l.preset_combo);
    rect("probe_button", l.probe_button);
    rect("batch_button", l.batch_button);
    rect("timeline", l.timeline);
    rect("timeline_first", l.timeline_first);
    rect("probe_field", l.probe_field);
    rect("probe_note", l.probe_note);
    rect("play_button", l.play_button);
    rect("legend", l.legend);
    rect("heads_header", l.heads_header);
    rect("heads_grid", l.heads_grid);
    f << "heads_hash " << l.heads_hash << '\n';
    rect("heads_by_combo", l.heads_by_combo);
    rect("heads_importance_item", l.heads_importance_item);
    f << "heads_by " << l.heads_by << '\n';
    f << "importance_step " << l.importance_step << ' ' << l.importance_first << '\n';
    rect("knock_checkbox", l.knock_checkbox);
    f << "knock_val " << l.knock_val_ablated << '\n';
    f << "legend_clipped " << (l.legend_clipped ? 1 : 0) << '\n';
    rect("steps_cap_field", l.steps_cap_field);
    rect("start_button", l.start_button);
    f << "controls_widgets " << l.controls_widgets << ' ' << l.controls_hidden.size() << '\n';
    for (const std::string& name : l.controls_hidden) f << "controls_hidden " << name << '\n';
    f << "controls_scroll " << std::lround(l.controls_scroll_max) << '\n';
    f << "probe_step " << l.probe_step << '\n';
    f << "loss_cursor " << std::lround(l.loss_cursor_x) << '\n';
    rect("icl_checkbox", l.icl_checkbox);
    f << "icl " << l.icl_points << ' ' << l.icl_last << '\n';
    f << "induction_rise " << l.induction_rise << '\n';
    f << "samples_shown " << l.samples_step << ' ' << l.samples_hash << '\n';
    f << "samples_tokens " << l.samples_tokens << '\n';
    f << "loss_y " << l.loss_y_lo << ' ' << l.loss_y_hi << '\n';
    for (const auto& [name, r] : l.preset_items) rect("preset_item_" + name, r);
    for (const std::string& name : l.ghost_names) f << "ghost " << name << '\n';
    return f.str();
}

}  // namespace attn
