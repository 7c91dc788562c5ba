// The self-attention lab's demos: names, one-line titles and the two- or three-sentence explanations.
#pragma once
#include <string>
#include <vector>

namespace attn::lab {

struct DemoInfo {
    std::string name;         // command-line name: `attnlab lab NAME`
    std::string title;        // one line
    std::string explanation;  // two or three sentences in the lecture's spirit
};

// The eight demos: the lecture's trick and scaling in its order, then its notes on attention.
const std::vector<DemoInfo>& demos();
// nullptr when `name` is not a demo.
const DemoInfo* find_demo(const std::string& name);
// "matmul, average, ..." for error messages.
std::string demo_names();

}  // namespace attn::lab
