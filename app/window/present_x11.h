// Software present for CPU Vulkan drivers (lavapipe) on X11: the rendered frame is put into the window from shared
// memory (MIT-SHM) by the UI thread, without the Vulkan queue.
//
// Why: Mesa's software swapchain on an X server without DRI3 (Xvfb, remote X) sends every frame through the X socket
// inside vkQueuePresentKHR: ~16 ms for a 1280x800 frame, holding the queue that training shares, and about half a
// core in the X server at 30 fps. With a shared-memory image the server copies the frame in ~1 ms.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

struct GLFWwindow;

namespace attn {

class X11ShmPresenter {
public:
    // nullptr when the window is not on X11, the server has no MIT-SHM (remote display), or its visual is not
    // 24-bit true colour; `why` then says which.
    static std::unique_ptr<X11ShmPresenter> create(GLFWwindow* window, const char** why);
    ~X11ShmPresenter();
    X11ShmPresenter(const X11ShmPresenter&) = delete;
    X11ShmPresenter& operator=(const X11ShmPresenter&) = delete;

    // (Re)allocates the shared image for a width x height frame; false if the server refuses it.
    bool resize(int width, int height);
    // Copies a (height, width) BGRA frame with rows of `src_pitch` bytes into the window (nothing after a failed
    // resize): all of it, or with `rects` only those rectangles (the rest of the window keeps what it shows).
    struct Rect {
        int x, y, w, h;
    };
    void present(const uint8_t* bgra, size_t src_pitch, const std::vector<Rect>* rects = nullptr);

private:
    X11ShmPresenter() = default;
    void release();
    struct Impl;
    std::unique_ptr<Impl> m;
};

}  // namespace attn
