// The files the window writes: screenshots (PNG) and their layout sidecar for tests.
#pragma once
#include <string>

#include "panels.h"
#include "renderer.h"

namespace attn {

// Writes the PNG (atomically, through io/files.h: never over the corpus or another file of the run); returns an
// error message or "".
std::string write_png(const Image& img, const std::string& path);
// The sidecar FILE.png.layout's text: where the panels drew and the widgets a test clicks are.
std::string layout_text(const Image& img, const PanelLayout& l);

}  // namespace attn
