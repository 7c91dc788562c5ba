#!/usr/bin/env bash
# Runs the libFuzzer harnesses for the corpus loader, the checkpoint reader, the PyTorch pickle reader, the
# nanoGPT checkpoint import, the tokenizer readers (GPT-2's files, llm.c's .bin) with BPE itself, and GPT-2's model
# readers (Hugging Face's safetensors, llm.c's .bin) (CI: 10 s each).
# Usage: scripts/fuzz.sh [SECONDS_EACH]   (default 60). A crash leaves crash-* files here: turn each into a
# regression test (a case in tests/test_dataset.cpp, test_checkpoint.cpp, test_torch_pickle.cpp, test_nanogpt_io.cpp
# test_bpe.cpp or test_gpt2_io.cpp feeding those bytes). Exits non-zero on a crash.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
missing=()
for p in clang libclang-rt-14-dev nlohmann-json3-dev libvulkan-dev libzip-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
out=build-fuzz
mkdir -p "$out"
common=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -Iengine)
# Each source is compiled once (the harnesses share most of them), one compile a core at a time, then each harness
# links its objects. A compile or link that fails leaves $out/NAME.failed.
rm -f "$out"/*.failed
declare -A harness_sources
harness() { local name=$1; shift; harness_sources[$name]="$*"; }
harness fuzz_corpus tests/fuzz/fuzz_corpus.cpp engine/train/dataset.cpp engine/text/bpe.cpp engine/text/bpe_files.cpp engine/text/unicode.cpp engine/train/induction_corpus.cpp engine/io/files.cpp
# (checkpoint.cpp opens nanoGPT's ckpt.pt too: the torch reader comes along)
harness fuzz_checkpoint tests/fuzz/fuzz_checkpoint.cpp engine/train/checkpoint.cpp engine/train/timelapse.cpp engine/io/files.cpp \
    engine/train/dataset.cpp engine/text/bpe.cpp engine/text/bpe_files.cpp engine/text/unicode.cpp engine/train/induction_corpus.cpp engine/model/model_layout.cpp engine/model/config.cpp engine/io/nanogpt.cpp engine/io/gpt2.cpp \
    engine/io/pickle.cpp engine/io/pickler.cpp engine/io/torch_file.cpp engine/io/zip_reader.cpp
harness fuzz_torch_pickle tests/fuzz/fuzz_torch_pickle.cpp engine/io/pickle.cpp engine/io/pickler.cpp engine/io/torch_file.cpp engine/io/zip_reader.cpp engine/io/files.cpp
harness fuzz_nanogpt tests/fuzz/fuzz_nanogpt.cpp engine/io/nanogpt.cpp engine/io/gpt2.cpp engine/train/timelapse.cpp engine/io/pickle.cpp engine/io/pickler.cpp engine/io/torch_file.cpp engine/io/zip_reader.cpp engine/io/files.cpp \
    engine/model/model_layout.cpp engine/model/config.cpp engine/train/dataset.cpp engine/text/bpe.cpp engine/text/bpe_files.cpp engine/text/unicode.cpp engine/train/induction_corpus.cpp
harness fuzz_tokenizer tests/fuzz/fuzz_tokenizer.cpp engine/text/bpe.cpp engine/text/bpe_files.cpp engine/text/unicode.cpp \
    engine/io/files.cpp
harness fuzz_gpt2 tests/fuzz/fuzz_gpt2.cpp engine/io/gpt2.cpp engine/io/files.cpp engine/model/model_layout.cpp \
    engine/model/config.cpp engine/text/bpe.cpp engine/text/bpe_files.cpp engine/text/unicode.cpp engine/train/timelapse.cpp \
    engine/train/dataset.cpp engine/train/induction_corpus.cpp
object() { local src=$1; src=${src//\//__}; echo "$out/obj/${src%.cpp}.o"; }
mkdir -p "$out/obj"
throttle() { while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done; }
for src in $(printf '%s\n' ${harness_sources[@]} | sort -u); do
    throttle
    { clang++ "${common[@]}" -c "$src" -o "$(object "$src")" || touch "$out/$(basename "$src" .cpp).failed"; } &
done
wait
for name in "${!harness_sources[@]}"; do
    objects=()
    for src in ${harness_sources[$name]}; do objects+=("$(object "$src")"); done
    throttle
    { clang++ "${common[@]}" "${objects[@]}" -lzip -o "$out/$name" || touch "$out/$name.failed"; } &
done
wait
failed=("$out"/*.failed)
if [ -e "${failed[0]}" ]; then echo "fuzz: these harnesses did not build: ${failed[*]}" >&2; exit 1; fi

# the hostile checkpoints of tests/hostile_cli_test.sh seed the nanoGPT and pickle harnesses too (those under the
# length limit; their data.pkl for the pickle reader)
hostile="$out/hostile"
rm -rf "$hostile" && mkdir -p "$hostile/nanogpt" "$hostile/torch_pickle"
python3 tests/fixtures/make_hostile.py "$hostile/files" >/dev/null
find "$hostile/files" -name '*.pt' -size -64k -exec cp {} "$hostile/nanogpt/" \;
python3 - "$hostile" <<'PY'
import os, sys, zipfile
d = sys.argv[1]
for f in os.listdir(d + "/files"):
    if f.endswith(".pt"):
        try:
            with zipfile.ZipFile(f"{d}/files/{f}") as z:
                open(f"{d}/torch_pickle/{f}.pkl", "wb").write(z.read("archive/data.pkl"))
        except Exception:
            pass  # a damaged container: the nanoGPT harness has the whole file
PY
for h in corpus checkpoint torch_pickle nanogpt tokenizer gpt2; do
    mkdir -p "$out/corpus_$h"
    echo "fuzzing $h for ${secs}s"
    seeds=("tests/fuzz/seeds/$h")
    [ -d "$hostile/$h" ] && seeds+=("$hostile/$h")
    "$out/fuzz_$h" -max_total_time="$secs" -max_len=65536 "$out/corpus_$h" "${seeds[@]}"
done
