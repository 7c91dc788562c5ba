// Lookup of the SPIR-V that CMake compiled from shaders/*.comp and embedded in the binary.
#pragma once
#include <cstddef>
#include <cstdint>

namespace attn {
struct EmbeddedShader {
    const char* name;       // file name without extension, e.g. "matmul_forward"
    const uint32_t* words;  // SPIR-V
    size_t bytes;
};
const EmbeddedShader* find_shader(const char* name);  // nullptr when unknown
}  // namespace attn
