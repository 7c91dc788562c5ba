// The corpus tests train on: tiny Shakespeare from $ATTN_CORPUS (set by ctest), or a small generated text.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

#include "train/dataset.h"

namespace test {

inline const attn::Dataset& shakespeare() {
    static const attn::Dataset d = [] {
        const char* p = std::getenv("ATTN_CORPUS");
        return attn::Dataset::from_file(p ? p : "assets/tinyshakespeare.txt");
    }();
    return d;
}

// A path in the temporary folder named after this process too, so that ctest -j can run two suites that write
// the same file names (the [model] tests twice, [checkpoint] cases in two suites) side by side.
inline std::string temp_path(const std::string& name) {
    return (std::filesystem::temp_directory_path() / ("attnlab_" + std::to_string(::getpid()) + "_" + name)).string();
}

// A file of tests/fixtures (ATTN_FIXTURES: set for the test binary by tests/CMakeLists.txt).
inline std::string fixture(const std::string& name) { return std::string(ATTN_FIXTURES) + "/" + name; }

// A short text with a handful of characters, for tiny models.
inline std::string tiny_text() {
    std::string s;
    const char* words[] = {"to be ", "or not ", "to be, ", "that is ", "the question.\n"};
    for (int i = 0; i < 60; i++) s += words[(i * 7 + i / 3) % 5];
    return s;
}

}  // namespace test
