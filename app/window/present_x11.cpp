// X11 shared-memory present (see present_x11.h). Every Xlib call here runs on the UI thread, like GLFW's own.
#include "present_x11.h"

#include <algorithm>
#include <cstring>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#ifdef ATTN_HAVE_XSHM
#define GLFW_EXPOSE_NATIVE_X11
#include <GLFW/glfw3native.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/XShm.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#endif

namespace attn {

#ifdef ATTN_HAVE_XSHM

struct X11ShmPresenter::Impl {
    Display* dpy = nullptr;
    Window win = 0;
    Visual* visual = nullptr;
    int depth = 0;
    GC gc = nullptr;
    XImage* img = nullptr;  // (h, w) 32-bit pixels in the shared segment
    XShmSegmentInfo shm{};
    bool attached = false;
    bool in_flight = false;  // a put was sent that the server may still be reading
    int w = 0, h = 0;
};

// Xlib reports a refused XShmAttach asynchronously through the error handler, whose default ends the process.
static bool g_x_error = false;
static int trap_x_error(Display*, XErrorEvent*) {
    g_x_error = true;
    return 0;
}

std::unique_ptr<X11ShmPresenter> X11ShmPresenter::create(GLFWwindow* window, const char** why) {
    const char* unused;
    if (!why) why = &unused;
    Display* dpy = glfwGetX11Display();
    if (!dpy) {
        *why = "the window is not on an X11 display";
        return nullptr;
    }
    if (!XShmQueryExtension(dpy)) {
        *why = "the X server has no MIT-SHM extension (remote display?)";
        return nullptr;
    }
    Window win = glfwGetX11Window(window);
    XWindowAttributes wa;
    // depth 24 only: a 32-bit (ARGB) visual would take ImGui's alpha channel as window transparency
    if (!XGetWindowAttributes(dpy, win, &wa) || wa.depth != 24 || !wa.visual ||
        wa.visual->red_mask != 0xff0000 || wa.visual->green_mask != 0xff00 || wa.visual->blue_mask != 0xff) {
        *why = "the window's visual is not 24-bit true colour";
        return nullptr;
    }
    std::unique_ptr<X11ShmPresenter> p(new X11ShmPresenter);
    p->m = std::make_unique<Impl>();
    p->m->dpy = dpy;
    p->m->win = win;
    p->m->visual = wa.visual;
    p->m->depth = wa.depth;
    p->m->gc = XCreateGC(dpy, win, 0, nullptr);
    return p;
}

X11ShmPresenter::~X11ShmPresenter() {
    if (!m) return;
    release();
    if (m->gc) XFreeGC(m->dpy, m->gc);
}

void X11ShmPresenter::release() {
    if (m->attached) {
        XSync(m->dpy, False);  // the server is done with the last put
        XShmDetach(m->dpy, &m->shm);
        XSync(m->dpy, False);
        m->attached = false;
    }
    if (m->img) {
        m->img->data = nullptr;  // the segment is not Xlib's to free
        XDestroyImage(m->img);
        m->img = nullptr;
    }
    if (m->shm.shmaddr && m->shm.shmaddr != reinterpret_cast<char*>(-1)) shmdt(m->shm.shmaddr);
    m->shm = {};
    m->in_flight = false;
    m->w = m->h = 0;
}

bool X11ShmPresenter::resize(int width, int height) {
    if (m->attached && width == m->w && height == m->h) return true;  // the start-up probe's image, reused
    release();
    m->img = XShmCreateImage(m->dpy, m->visual, unsigned(m->depth), ZPixmap, nullptr, &m->shm, unsigned(width),
                             unsigned(height));
    if (!m->img || m->img->bits_per_pixel != 32 || m->img->byte_order != LSBFirst) {  // B, G, R, X in memory
        release();
        return false;
    }
    m->shm.shmid = shmget(IPC_PRIVATE, size_t(m->img->bytes_per_line) * height, IPC_CREAT | 0600);
    if (m->shm.shmid < 0) {
        release();
        return false;
    }
    m->shm.shmaddr = m->img->data = static_cast<char*>(shmat(m->shm.shmid, nullptr, 0));
    m->shm.readOnly = True;
    bool ok = m->shm.shmaddr != reinterpret_cast<char*>(-1);
    if (ok) {
        XSync(m->dpy, False);
        g_x_error = false;
        auto previous = XSetErrorHandler(trap_x_error);
        XShmAttach(m->dpy, &m->shm);
        XSync(m->dpy, False);
        XSetErrorHandler(previous);
        ok = !g_x_error;
        m->attached = ok;
    }
    shmctl(m->shm.shmid, IPC_RMID, nullptr);  // freed once both sides have detached
    if (!ok) {
        release();
        return false;
    }
    m->w = width;
    m->h = height;
    return true;
}

void X11ShmPresenter::present(const uint8_t* bgra, size_t src_pitch, const std::vector<Rect>* rects) {
    if (!m->attached) return;
    std::vector<Rect> whole{{0, 0, m->w, m->h}};
    std::vector<Rect> put;  // within the image
    for (const Rect& r : rects ? *rects : whole) {
        int x0 = std::max(r.x, 0), y0 = std::max(r.y, 0), x1 = std::min(r.x + r.w, m->w), y1 = std::min(r.y + r.h, m->h);
        if (x1 > x0 && y1 > y0) put.push_back({x0, y0, x1 - x0, y1 - y0});
    }
    if (put.empty()) return;
    if (m->in_flight) XSync(m->dpy, False);  // the previous frame has been copied out of the segment
    for (const Rect& r : put) {
        for (int y = r.y; y < r.y + r.h; y++)
            std::memcpy(m->img->data + size_t(y) * m->img->bytes_per_line + size_t(r.x) * 4,
                        bgra + size_t(y) * src_pitch + size_t(r.x) * 4, size_t(r.w) * 4);
        XShmPutImage(m->dpy, m->win, m->gc, m->img, r.x, r.y, r.x, r.y, unsigned(r.w), unsigned(r.h), False);
    }
    XFlush(m->dpy);
    m->in_flight = true;
}

#else  // built without Xlib's MIT-SHM headers (libx11-dev, libxext-dev): the Vulkan swapchain presents

struct X11ShmPresenter::Impl {};
std::unique_ptr<X11ShmPresenter> X11ShmPresenter::create(GLFWwindow*, const char** why) {
    if (why) *why = "built without libxext-dev";
    return nullptr;
}
X11ShmPresenter::~X11ShmPresenter() = default;
void X11ShmPresenter::release() {}
bool X11ShmPresenter::resize(int, int) { return false; }
void X11ShmPresenter::present(const uint8_t*, size_t, const std::vector<Rect>*) {}

#endif

}  // namespace attn
