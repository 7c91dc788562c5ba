// The files the window writes: screenshots (PNG) and their layout sidecar for tests.
#pragma once
#include <string>

#include "panels.h"
#include "renderer.h"

namespace attn {

// Writes the PNG; returns an error message or "".
std::string write_png(const Image& img, const std::string& path);
// The sidecar FILE.png.layout: where the panels drew and the widgets a test clicks are.
void write_layout(const Image& img, const PanelLayout& l, const std::string& path);

}  // namespace attn
