// Specialisation constant 2: which optional parts of a kernel this pipeline keeps (kflag in engine/vk/program.h).
// Unspecialised, every part, as the push constants decide. Each optional part is guarded by its constant and its push
// constant, e.g. `if (F_RELU && p.relu != 0)`: Mesa 22.3's lavapipe runs the body of an `if` on a push constant with
// its lanes masked off when it is false (fetches and all), while a constant false removes it at compile time.
#ifndef FLAGS_GLSL
#define FLAGS_GLSL
layout(constant_id = 2) const uint KFLAGS = 0xFFFFFFFFu;
const bool F_RELU = (KFLAGS & 1u) != 0u;     // a ReLU, or its mask in the backward
const bool F_ADD = (KFLAGS & 2u) != 0u;      // adds to what is there: a residual, or dinp +=
const bool F_BIAS = (KFLAGS & 4u) != 0u;     // a bias, or its gradient
const bool F_DROPOUT = (KFLAGS & 8u) != 0u;  // dropout: attention weights, or a branch's in an epilogue
const bool F_POS = (KFLAGS & 16u) != 0u;     // position embeddings
const bool F_MASK_IN = (KFLAGS & 32u) != 0u; // dinp masked where the forward's input is not > 0 (matmul backward)
#endif
