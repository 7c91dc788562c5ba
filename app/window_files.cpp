// The files the window writes (window_files.h).
#include "window_files.h"

#include <cmath>
#include <cstdio>
#include <fstream>

#include <stb_image_write.h>

namespace attn {

// Writes the PNG; returns an error message or "".
std::string write_png(const Image& img, const std::string& path) {
    if (img.rgba.empty()) return "the window could not be read back (its swapchain lacks TRANSFER_SRC)";
    // written beside it and renamed into place: whoever waits for the file never reads half of it
    std::string part = path + ".part";
    if (!stbi_write_png(part.c_str(), img.width, img.height, 4, img.rgba.data(), img.width * 4) ||
        std::rename(part.c_str(), path.c_str()) != 0) {
        std::remove(part.c_str());
        return "cannot write '" + path + "': check the folder exists and is writable";
    }
    return "";
}

// The sidecar FILE.png.layout: where the panels drew, for tests that check pixels.
void write_layout(const Image& img, const PanelLayout& l, const std::string& path) {
    std::ofstream f(path);
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
    rect("prompt_field", l.prompt_field);
    rect("preset_combo", l.preset_combo);
    rect("probe_button", l.probe_button);
    rect("batch_button", l.batch_button);
    rect("timeline", l.timeline);
    rect("timeline_first", l.timeline_first);
    rect("probe_field", l.probe_field);
    f << "probe_step " << l.probe_step << '\n';
    for (const auto& [name, r] : l.preset_items) rect("preset_item_" + name, r);
}

}  // namespace attn
