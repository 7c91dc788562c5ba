#!/usr/bin/env bash
# Bad command-line input: exit code 2 and one line that names the problem. Usage: cli_test.sh ATTNLAB CORPUS
set -u
bin=$1 corpus=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0
expect() {  # expect CODE "substring" args...
    local code=$1 want=$2; shift 2
    local out rc
    out=$(env ${EXTRA_ENV:-} "$bin" --headless --quiet "$@" 2>&1 >/dev/null); rc=$?
    local lines; lines=$(printf '%s\n' "$out" | grep -v '^device:' | grep -c .)
    if [ "$rc" -ne "$code" ] || ! grep -qF -- "$want" <<<"$out" || { [ "$code" -eq 2 ] && [ "$lines" -ne 1 ]; }; then
        echo "FAIL: attnlab $* -> exit $rc, wanted $code and '$want'; stderr:"; echo "$out"; fails=$((fails+1))
    else
        passes=$((passes+1))
    fi
}
printf 'ab\0cd' > "$tmp/binary.txt"
: > "$tmp/empty.txt"
printf 'caf\xe9 au lait\n' > "$tmp/latin1.txt"
printf 'abcdefghij\n' > "$tmp/short.txt"
expect 2 "does not exist" --data "$tmp/missing.txt"
expect 2 "is a directory" --data "$tmp"
expect 2 "is empty" --data "$tmp/empty.txt"
expect 2 "looks binary" --data "$tmp/binary.txt"
expect 2 "not valid UTF-8" --data "$tmp/latin1.txt"
expect 2 "too short for block size 8" --data "$tmp/short.txt"
expect 2 "--lr" --data "$corpus" --lr nan
expect 2 "--batch-size: '99999999999' is not a number, or too large for one" --data "$corpus" --batch-size 99999999999
expect 2 "--eval-iters: '2x' is not a number" --data "$corpus" --eval-iters 2x
expect 2 "--block-size: '1.5' is not a whole number" --data "$corpus" --block-size 1.5
# --help shows each flag's value as it is typed: no CLI11 validator text such as "INT:INT in [0 - 64]"
if "$bin" --help | grep -qE "^  --device INT +Vulkan device index, 0 to 64" && ! "$bin" --help | grep -qE "INT:|\[[0-9]+ - [0-9]+\]"; then
    passes=$((passes+1))
else
    echo "FAIL: --help should show '--device INT' with its range in words, no 'INT:INT in [0 - 64]':"; "$bin" --help | grep -E "INT"
    fails=$((fails+1))
fi
# --help fits 100 columns, names what files and values a flag takes, and gives the preset's defaults
help=$("$bin" --help)
if ! awk 'length($0) > 100 { exit 1 }' <<<"$help"; then
    echo "FAIL: --help has lines over 100 columns:"; awk 'length($0) > 100' <<<"$help"; fails=$((fails+1))
elif ! grep -qE "^  --data FILE " <<<"$help" || ! grep -qE "^  --lr FLOAT .*\(default 0.001\)" <<<"$help" ||
     ! grep -qE "^  --batch-size INT .*\(default 32\)" <<<"$help"; then
    echo "FAIL: --help should show --data FILE and the defaults of --lr (0.001) and --batch-size (32):"; echo "$help"
    fails=$((fails+1))
elif ! "$bin" --preset gpt --help | grep -qE "^  --lr FLOAT .*\(default 0.0003\)"; then
    echo "FAIL: --preset gpt --help should show gpt's learning rate, 0.0003"; fails=$((fails+1))
else
    passes=$((passes+1))
fi
# an option that does not exist: said, with the likely one
expect 2 "unknown option --learning-rate; did you mean --lr?" --learning-rate 1e-3
expect 2 "unknown option --bach-size; did you mean --batch-size?" --bach-size 3
expect 2 "a value goes after its option" --data "$corpus" stray
expect 2 "must be relu, gelu or gelu-tanh (got 'swish')" --data "$corpus" --activation swish
expect 2 "--activation has no effect on the bigram model" --data "$corpus" --preset bigram --activation gelu
# GELU in the feed-forward trains headless (nanoGPT's MLP activation)
out=$("$bin" --headless --quiet --data "$corpus" --preset feed-forward --activation gelu --max-iters 3 --eval-interval 3 \
      --eval-iters 1 --sample-chars 0 2>&1); rc=$?
if [ $rc -eq 0 ] && grep -q "ffn (GELU)" <<<"$out"; then passes=$((passes+1)); else
    echo "FAIL: --activation gelu: exit $rc"; echo "$out"; fails=$((fails+1)); fi
# GELU's tanh form (GPT-2's): trains, is kept by the checkpoint, and a resume asking the exact form is refused
out=$("$bin" --headless --quiet --data "$corpus" --preset feed-forward --activation gelu-tanh --max-iters 3 --eval-interval 3 \
      --eval-iters 1 --sample-chars 0 --save "$tmp/tanh.safetensors" 2>&1); rc=$?
res=$("$bin" --headless --quiet --data "$corpus" --resume "$tmp/tanh.safetensors" --max-iters 4 --eval-interval 4 \
      --eval-iters 1 --sample-chars 0 2>&1); rrc=$?
if [ $rc -eq 0 ] && grep -q "ffn (GELU, tanh)" <<<"$out" && [ $rrc -eq 0 ] && grep -q "ffn (GELU, tanh)" <<<"$res"; then
    passes=$((passes+1)); else
    echo "FAIL: --activation gelu-tanh: exit $rc / resume $rrc"; echo "$out"; echo "$res"; fails=$((fails+1)); fi
expect 2 "gelu_tanh" --data "$corpus" --resume "$tmp/tanh.safetensors" --activation gelu --max-iters 5
out=$("$bin" --version); rc=$?
# the version and the commit it was built from ("unknown" outside git)
if [ $rc -eq 0 ] && grep -qE "^attnlab [0-9]+\.[0-9]+\.[0-9]+, commit ([0-9a-f]{7,}(\+changes)?|unknown) " <<<"$out"; then passes=$((passes+1)); else
    echo "FAIL: --version: exit $rc, '$out'"; fails=$((fails+1)); fi
# a flag given twice: the last counts (as in the lab command)
out=$("$bin" --headless --quiet --data "$corpus" --preset bigram --max-iters 500 --eval-iters 1 --sample-chars 0 \
      --max-iters 2 --eval-interval 2 2>/dev/null); rc=$?
if [ $rc -eq 0 ] && grep -q "^step 2:" <<<"$out" && ! grep -q "^step [1-9][0-9]" <<<"$out"; then passes=$((passes+1)); else
    echo "FAIL: --max-iters given twice should take the last (exit $rc):"; echo "$out"; fails=$((fails+1)); fi
expect 2 "--lr" --data "$corpus" --lr -1
expect 2 "--lr" --data "$corpus" --lr abc
expect 2 "--batch-size" --data "$corpus" --batch-size 0
expect 2 "--block-size" --data "$corpus" --block-size 99999999
expect 2 "--max-iters" --data "$corpus" --max-iters -5
expect 2 "--eval-iters" --data "$corpus" --eval-iters 0
expect 2 "--temperature" --data "$corpus" --temperature 0
expect 2 "unknown --preset" --preset gpt5
expect 2 "--device 7 does not exist" --data "$corpus" --device 7
EXTRA_ENV="VK_ICD_FILENAMES=/nonexistent/icd.json VK_DRIVER_FILES=/nonexistent/icd.json" expect 2 "mesa-vulkan-drivers" --data "$corpus"
printf 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n' | tr -d '\n' > "$tmp/one.txt"
expect 2 "only one distinct character" --data "$tmp/one.txt"
truncate -s 200M "$tmp/huge.txt"
expect 2 "more than the limit of 100 MiB" --data "$tmp/huge.txt"
# output files: named, never a folder; a checkpoint (renamed over its path: as root /dev/null would be replaced) never
# a device or pipe; in a folder that exists; not two outputs in one file
expect 2 "--save needs a file name" --data "$corpus" --save ""
mkfifo "$tmp/fifo"
expect 2 "is not a regular file" --data "$corpus" --save "$tmp/fifo"
expect 2 "is a folder" --data "$corpus" --save "$tmp"
expect 2 "does not exist" --data "$corpus" --save "$tmp/no/such/x.safetensors"
expect 2 "name the same file" --data "$corpus" --save "$tmp/x.st" --metrics "$tmp/x.st"
expect 2 "--metrics needs a file name" --data "$corpus" --metrics ""
expect 2 "--resume needs a file name" --data "$corpus" --resume ""
[ -p "$tmp/fifo" ] && passes=$((passes+1)) || { echo "FAIL: the fifo was replaced by a file"; fails=$((fails+1)); }
expect 0 "" --data "$corpus" --max-iters 1 --eval-iters 1 --sample-chars 0 --metrics /dev/stdout  # written in place
expect 2 "name the same file" --data "$corpus" --save "$tmp/y.st" --metrics "$tmp/./y.st"
# a corpus through a pipe is read to its end (the whole file: many reads)
out=$(cat "$corpus" | "$bin" --headless --quiet --data /dev/stdin --preset bigram --max-iters 1 --eval-iters 1 \
      --sample-chars 0 2>/dev/null); rc=$?
if [ $rc -eq 0 ] && grep -q "^corpus: /dev/stdin ($(stat -c %s "$corpus") bytes" <<<"$out"; then passes=$((passes+1)); else
    echo "FAIL: a piped corpus (exit $rc):"; echo "$out"; fails=$((fails+1)); fi
# an output over an input: the corpus (also through a link) or, for the metrics, the checkpoint resumed
head -c 20000 "$corpus" > "$tmp/own.txt"
ln -s own.txt "$tmp/link.txt"
expect 2 "--save '$tmp/own.txt' would overwrite the corpus" --data "$tmp/link.txt" --save "$tmp/own.txt"
expect 2 "--metrics '$tmp/./own.txt' would overwrite the corpus" --data "$tmp/own.txt" --metrics "$tmp/./own.txt"
expect 0 "" --data "$tmp/own.txt" --preset bigram --max-iters 1 --eval-iters 1 --sample-chars 0 --save "$tmp/r.st"
expect 2 "would overwrite the --resume checkpoint" --data "$tmp/own.txt" --resume "$tmp/r.st" --metrics "$tmp/r.st"
expect 0 "" --data "$tmp/own.txt" --max-iters 2 --eval-iters 1 --sample-chars 0 --resume "$tmp/r.st" --save "$tmp/r.st"
[ "$(head -c 20000 "$corpus" | cmp - "$tmp/own.txt" && echo same)" = same ] && passes=$((passes+1)) ||
    { echo "FAIL: the corpus was changed"; fails=$((fails+1)); }
# each mode's flags: the window's refused headless and the headless ones refused by the window (before any display
# is needed), each with what to use instead
expect 2 "--fps and --save-cpu are for the window" --data "$corpus" --fps 10
expect 2 "--n-head has no effect on the bigram model" --data "$corpus" --preset bigram --n-head 4
expect 2 "--encoder has no effect on the bigram model" --data "$corpus" --preset bigram --encoder
expect 2 "--n-head has no effect on the bigram model" --data "$corpus" --preset=bigram --n-head 4
window_expect() {  # window_expect "substring" args...: the window refuses them with exit 2
    local want=$1 out rc; shift
    out=$(DISPLAY= WAYLAND_DISPLAY= "$bin" "$@" 2>&1 >/dev/null); rc=$?
    if [ $rc -eq 2 ] && grep -qF -- "$want" <<<"$out"; then passes=$((passes+1)); else
        echo "FAIL: attnlab $* (window) -> exit $rc, wanted 2 and '$want':"; echo "$out"; fails=$((fails+1)); fi
}
window_expect "Ctrl+O loads" --data "$corpus" --resume "$tmp/x.safetensors"
window_expect "Ctrl+O loads" --data "$corpus" --save "$tmp/x.safetensors"
window_expect "Performance panel" --data "$corpus" --profile
window_expect "--checkpoint needs a file name" --data "$corpus" --checkpoint ""
window_expect "--screenshot '$tmp' is a folder" --data "$corpus" --screenshot "$tmp"
window_expect "--screenshot writes PNG images: name the file .png (got '$tmp/shot.jpg')" --data "$corpus" --screenshot "$tmp/shot.jpg"

# Every numeric flag at zero, negative, NaN, huge and non-numeric: exit 2 with the flag named, or a clean run
# where the value is meaningful (e.g. --top-k 0 means no top-k).
quick_for() {  # the quick run's flags, less the one under test
    quick=(--data "$corpus")
    [ "$1" = --max-iters ] || quick+=(--max-iters 2)
    [ "$1" = --eval-interval ] || quick+=(--eval-interval 1)
    [ "$1" = --eval-iters ] || quick+=(--eval-iters 1)
    [ "$1" = --sample-chars ] || quick+=(--sample-chars 5)
}
ok_run() {  # ok_run FLAG VALUE: must run and exit 0
    local out rc
    quick_for "$1"
    out=$("$bin" --headless --quiet "${quick[@]}" "$1" "$2" 2>&1 >/dev/null); rc=$?
    if [ $rc -ne 0 ]; then echo "FAIL: attnlab $1 $2 should run (exit $rc): $out"; fails=$((fails+1)); else passes=$((passes+1)); fi
}
for flag in --batch-size --block-size --n-embd --head-size --n-head --n-layer --lr --weight-decay --max-iters \
            --eval-interval --eval-iters --seed --temperature --top-k --sample-chars --dropout --device; do
    for v in 0 -3 nan 1e30 99999999999 abc; do
        quick_for "$flag"
        case "$flag:$v" in
            --head-size:0|--weight-decay:0|--max-iters:0|--seed:0|--seed:99999999999|--top-k:0|--sample-chars:0|--dropout:0|--device:0)
                ok_run "$flag" "$v" ;;
            *) expect 2 "$flag" "${quick[@]}" "$flag" "$v" ;;
        esac
    done
done

# --save writes a checkpoint; --resume continues it and --max-iters counts from step 0
"$bin" --headless --quiet --data "$corpus" --preset bigram --max-iters 20 --eval-interval 10 --eval-iters 2 \
    --sample-chars 0 --save "$tmp/run.safetensors" --metrics "$tmp/run.csv" >"$tmp/a.txt" 2>/dev/null
cp "$tmp/run.csv" "$tmp/first.csv"
"$bin" --headless --quiet --data "$corpus" --preset bigram --max-iters 40 --eval-interval 10 --eval-iters 2 \
    --sample-chars 0 --resume "$tmp/run.safetensors" --metrics "$tmp/run.csv" --seed 7 >"$tmp/b.txt" 2>"$tmp/b.err"; rc=$?
"$bin" --headless --quiet --data "$corpus" --preset bigram --max-iters 40 --eval-interval 10 --eval-iters 2 \
    --sample-chars 0 >"$tmp/c.txt" 2>/dev/null
if [ $rc -eq 0 ] && grep -q "resumed .* at step 20" "$tmp/b.txt" && ! grep -q "^step 10:" "$tmp/b.txt" &&
   [ "$(grep '^step 40:' "$tmp/b.txt" | cut -d'|' -f1)" = "$(grep '^step 40:' "$tmp/c.txt" | cut -d'|' -f1)" ]; then
    passes=$((passes+1))
else
    echo "FAIL: --resume should continue at step 20 and reach the uninterrupted run's step-40 losses"; cat "$tmp/b.txt" "$tmp/c.txt"; fails=$((fails+1))
fi
# the resumed run's --metrics holds the whole run (steps 0..40, each once; the first run's rows as it wrote them,
# tokens/s included, kept in the checkpoint), and --seed is said to be ignored
if [ "$(cut -d, -f1 "$tmp/run.csv" | tr '\n' ' ')" = "step 0 10 20 30 40 " ] && grep -q "seed is ignored with --resume" "$tmp/b.err" &&
   [ "$(head -4 "$tmp/run.csv")" = "$(cat "$tmp/first.csv")" ]; then
    passes=$((passes+1))
else
    echo "FAIL: the resumed run's --metrics should list steps 0 10 20 30 40, the first 3 as the first run wrote them, and"
    echo "--seed be noted as ignored:"; cat "$tmp/first.csv" "$tmp/run.csv" "$tmp/b.err"; fails=$((fails+1))
fi
# --profile: the Performance panel's figures at the end (time per step, shares of the run's time, GPU memory, the
# kernels' GPU time), the shares adding up to at most 100% (and over half: 200 steps, ~0.25 s, so that a stall of the
# host outside the timed parts cannot take half of the run)
out=$("$bin" --headless --quiet --data "$corpus" --preset single-head --max-iters 200 --eval-interval 100 --eval-iters 2 \
    --sample-chars 20 --profile 2>/dev/null); rc=$?
shares=$(awk '/^(training|evaluation|sampling) +[0-9.]+%$/ {sub("%", "", $2); s += $2; n++} END {print n, s}' <<<"$out")
if [ $rc -eq 0 ] && grep -qE "^wall [0-9.]+ ms \| GPU [0-9.]+ ms \| host [0-9.]+ ms" <<<"$out" &&
   grep -qE "^GPU memory in use: [0-9.]+ MiB" <<<"$out" && grep -qE "^matmul_forward[a-z0-9_]* +[0-9.]+ +2 " <<<"$out" &&
   grep -qE "^adamw +[0-9.]+ +1 " <<<"$out" &&
   awk -v n="${shares% *}" -v s="${shares#* }" 'BEGIN {exit !(n == 3 && s > 50 && s <= 100.05)}'; then
    passes=$((passes+1))
else
    echo "FAIL: --profile should end with the time per step, three shares adding up to at most 100%, GPU memory and"
    echo "the kernels (single-head: two matmul_forward calls a step, one adamw from the second step on); exit $rc:"; echo "$out"; fails=$((fails+1))
fi
# without --data, from any folder: the checkout's tiny Shakespeare (build/attnlab -> assets/)
beside="$(dirname "$(realpath "$bin")")/../assets/tinyshakespeare.txt"
if [ -f "$beside" ]; then
    abs_bin=$(realpath "$bin")
    out=$(cd "$tmp" && "$abs_bin" --headless --quiet --max-iters 1 --eval-iters 1 --sample-chars 0 2>&1); rc=$?
    if [ $rc -eq 0 ] && grep -q "^corpus: .*/assets/tinyshakespeare.txt " <<<"$out"; then passes=$((passes+1)); else
        echo "FAIL: attnlab without --data, run from $tmp, should find $beside (exit $rc):"; echo "$out"; fails=$((fails+1)); fi
fi

# Ctrl+C (SIGINT) mid-run: the step under way finishes, the checkpoint of the step reached is saved, exit 130; --resume
# from there reaches the uninterrupted run's losses
# (a script's background job starts with SIGINT ignored, and attnlab keeps what it inherits: env gives it the default)
env --default-signal=INT "$bin" --headless --quiet --data "$corpus" --preset bigram --max-iters 1000000 --eval-interval 10 \
    --eval-iters 2 --sample-chars 0 --save "$tmp/int.safetensors" >"$tmp/i.txt" 2>/dev/null & ipid=$!
for ((i = 0; i < 600; i++)); do grep -q "^step 20:" "$tmp/i.txt" && break; sleep 0.1; done
kill -INT $ipid; wait $ipid; rc=$?
stopped=$(grep -oE "^attnlab: stopped at step [0-9]+ by SIGINT; saved to $tmp/int.safetensors" "$tmp/i.txt" | cut -d' ' -f5)
if [ $rc -eq 130 ] && [ "${stopped:-0}" -ge 20 ]; then
    target=$(( (stopped / 10 + 2) * 10 ))
    "$bin" --headless --quiet --data "$corpus" --preset bigram --max-iters $target --eval-interval 10 --eval-iters 2 \
        --sample-chars 0 --resume "$tmp/int.safetensors" >"$tmp/d.txt" 2>/dev/null
    "$bin" --headless --quiet --data "$corpus" --preset bigram --max-iters $target --eval-interval 10 --eval-iters 2 \
        --sample-chars 0 >"$tmp/e.txt" 2>/dev/null
    if grep -q "^resumed .* at step $stopped$" "$tmp/d.txt" && grep -q "^step $target:" "$tmp/e.txt" &&
       [ "$(grep "^step $target:" "$tmp/d.txt" | cut -d'|' -f1)" = "$(grep "^step $target:" "$tmp/e.txt" | cut -d'|' -f1)" ]; then
        passes=$((passes+1))
    else
        echo "FAIL: resuming the run stopped by Ctrl+C at step $stopped should reach the uninterrupted run's step-$target losses"
        cat "$tmp/d.txt" "$tmp/e.txt"; fails=$((fails+1))
    fi
else
    echo "FAIL: Ctrl+C should save the step reached and exit 130 (exit $rc):"; cat "$tmp/i.txt"; fails=$((fails+1))
fi
# The same SIGINT twice in a moment (`timeout -s INT` signals the process, then its group) is one Ctrl+C, so the run
# still saves; a second one later quits at once. Both during a training step of a few seconds (a small gpt at batch
# 16), the first signal 0.3 s after the step began, the second 0.1 s or 1 s after it. (If the run is gone before
# the second signal, nothing was shown: said, not counted.)
sigint_twice() {  # sigint_twice GAP_S NAME: the two signals GAP_S apart; sets rc, second (whether it was sent)
    env --default-signal=INT "$bin" --headless --quiet --data "$corpus" --preset gpt --n-layer 2 --batch-size 32 \
        --max-iters 1000 --eval-interval 1000 --eval-iters 1 --sample-chars 0 --save "$tmp/$2.safetensors" \
        >"$tmp/$2.txt" 2>"$tmp/$2.err" & ipid=$!
    # after step 0's save (a signal during it stops the run before any step), the first step has begun
    for ((i = 0; i < 600; i++)); do grep -q "^attnlab: saved step 0 " "$tmp/$2.txt" && break; sleep 0.1; done
    sleep 0.3; kill -INT $ipid; sleep "$1"
    if kill -INT $ipid 2>/dev/null; then second=1; else second=0; fi
    wait $ipid; rc=$?
}
sigint_twice 0.1 twice
if [ $second -eq 0 ]; then
    echo "note: the run had ended 0.1 s after the first SIGINT: the repeated SIGINT was not tested"
elif [ $rc -eq 130 ] && grep -qE "^attnlab: stopped at step [0-9]+ by SIGINT; saved to $tmp/twice.safetensors" "$tmp/twice.txt" &&
   ! grep -q "quitting at once" "$tmp/twice.err"; then
    passes=$((passes+1))
else
    echo "FAIL: two SIGINTs 0.1 s apart are one Ctrl+C: the run should still save and exit 130 (exit $rc):"
    cat "$tmp/twice.txt" "$tmp/twice.err"; fails=$((fails+1))
fi
sigint_twice 1 later
if [ $second -eq 0 ]; then
    echo "note: the run had ended 1 s after the first SIGINT: the second Ctrl+C was not tested"
elif [ $rc -eq 130 ] && grep -q "quitting at once (Ctrl+C again)" "$tmp/later.err" && ! grep -q "^attnlab: stopped at" "$tmp/later.txt"; then
    passes=$((passes+1))
else
    echo "FAIL: a second Ctrl+C 1 s after the first should quit at once, exit 130 (exit $rc):"
    cat "$tmp/later.txt" "$tmp/later.err"; fails=$((fails+1))
fi
# Ctrl+C during an evaluation (long: 100000 batches) stops between its batches, saves step 0 as it was before the
# evaluation, and the resumed run matches one never interrupted
env --default-signal=INT "$bin" --headless --quiet --data "$corpus" --preset bigram --max-iters 20 --eval-interval 10 \
    --eval-iters 100000 --sample-chars 0 --save "$tmp/ev.safetensors" >"$tmp/j.txt" 2>/dev/null & ipid=$!
for ((i = 0; i < 300; i++)); do [ -s "$tmp/j.txt" ] && break; sleep 0.1; done  # the corpus line: the run began
sleep 1; kill -INT $ipid; wait $ipid; rc=$?
"$bin" --headless --quiet --data "$corpus" --preset bigram --max-iters 20 --eval-interval 10 --eval-iters 2 \
    --sample-chars 0 --resume "$tmp/ev.safetensors" >"$tmp/k.txt" 2>/dev/null
"$bin" --headless --quiet --data "$corpus" --preset bigram --max-iters 20 --eval-interval 10 --eval-iters 2 \
    --sample-chars 0 >"$tmp/l.txt" 2>/dev/null
if [ $rc -eq 130 ] && grep -q "^attnlab: stopped at step 0 by SIGINT; saved to" "$tmp/j.txt" && ! grep -q "^step 0:" "$tmp/j.txt" &&
   [ "$(grep "^step 20:" "$tmp/k.txt" | cut -d'|' -f1)" = "$(grep "^step 20:" "$tmp/l.txt" | cut -d'|' -f1)" ] &&
   grep -q "^step 20:" "$tmp/l.txt"; then
    passes=$((passes+1))
else
    echo "FAIL: Ctrl+C during the first evaluation should save step 0 and exit 130, and resuming should match (exit $rc):"
    cat "$tmp/j.txt" "$tmp/k.txt" "$tmp/l.txt"; fails=$((fails+1))
fi
# Ctrl+C during a long sample: the characters sampled so far are printed, then how many, exit 130
env --default-signal=INT "$bin" --headless --quiet --data "$corpus" --preset bigram --max-iters 1 --eval-iters 1 \
    --sample-chars 1000000 >"$tmp/s.txt" 2>/dev/null & ipid=$!
for ((i = 0; i < 300; i++)); do grep -q "^--- sample" "$tmp/s.txt" && break; sleep 0.1; done
sleep 1; kill -INT $ipid; wait $ipid; rc=$?
n=$(grep -oE "^attnlab: sample stopped by SIGINT after [0-9]+ characters" "$tmp/s.txt" | grep -oE "[0-9]+")
got=$(sed -n '/^--- sample/,/^attnlab: sample stopped/p' "$tmp/s.txt" | sed '1d;$d' | wc -c)  # the text and its newline
if [ $rc -eq 130 ] && [ "${n:-0}" -gt 0 ] && [ "$got" -eq $((n + 1)) ]; then
    passes=$((passes+1))
else
    echo "FAIL: Ctrl+C during the sample should print what was sampled ($got bytes for ${n:-?} characters), exit 130 (exit $rc):"
    head -c 2000 "$tmp/s.txt"; fails=$((fails+1))
fi
# a signal ignored on entry stays ignored (nohup, a script's background job): SIGINT then does not stop the run
"$bin" --headless --quiet --data "$corpus" --preset bigram --max-iters 3000 --eval-interval 1000 --eval-iters 2 \
    --sample-chars 0 >"$tmp/n.txt" 2>/dev/null & ipid=$!
for ((i = 0; i < 300; i++)); do grep -q "^step 0:" "$tmp/n.txt" && break; sleep 0.1; done
kill -INT $ipid; wait $ipid; rc=$?
if [ $rc -eq 0 ] && grep -q "^step 3000:" "$tmp/n.txt"; then passes=$((passes+1)); else
    echo "FAIL: SIGINT ignored on entry should stay ignored (exit $rc):"; cat "$tmp/n.txt"; fails=$((fails+1)); fi
expect 2 "block_size 8 but 16" --data "$corpus" --resume "$tmp/run.safetensors" --block-size 16 --max-iters 1
printf 'garbage' > "$tmp/bad.safetensors"
expect 2 "truncated" --data "$corpus" --resume "$tmp/bad.safetensors"
# a checkpoint where a flag belongs: what continues it, or looks inside it
expect 2 "'$tmp/run.safetensors' is a checkpoint: continue it with attnlab --headless --resume $tmp/run.safetensors, or see its attention with attnlab inspect $tmp/run.safetensors" "$tmp/run.safetensors"
# --save says each write, as the window does (the bigram run above: evaluations at steps 0, 10 and 20)
if [ "$(grep -c "^attnlab: saved step [0-9]* to $tmp/run.safetensors$" "$tmp/a.txt")" = 3 ] &&
   grep -qx "attnlab: saved step 20 to $tmp/run.safetensors" "$tmp/a.txt"; then passes=$((passes+1)); else
    echo "FAIL: headless --save should print 'attnlab: saved step N to FILE' at each of its 3 writes:"; cat "$tmp/a.txt"
    fails=$((fails+1)); fi
# a read that fails (EIO: reading /proc/self/mem at offset 0 does) is "cannot read", memory that runs out "not enough
# memory": one line and exit 2 each, never an abort or "unexpected failure"
expect 2 "cannot read corpus '/proc/self/mem': Input/output error" --data /proc/self/mem
expect 2 "cannot read checkpoint '/proc/self/mem': Input/output error" --data "$corpus" --resume /proc/self/mem
truncate -s 4G "$tmp/huge.safetensors"
if ! grep -q __asan_init "$bin"; then  # (a sanitizer build reserves terabytes of address space: no ulimit -v there)
    out=$( (ulimit -v 400000; "$bin" --headless --quiet --data "$corpus" --resume "$tmp/huge.safetensors") 2>&1 >/dev/null); rc=$?
    if [ $rc -eq 2 ] && [ "$out" = "error: not enough memory for the run resumed from '$tmp/huge.safetensors'" ]; then
        passes=$((passes+1)); else echo "FAIL: --resume of a 4 GiB file under ulimit -v (exit $rc): $out"; fails=$((fails+1)); fi
fi
rm -f "$tmp/huge.safetensors"
# --history-mib: a finite number, its range in plain numbers
expect 2 "--history-mib: must be a number of MiB from 0 to 4096 (got 'nan')" --data "$corpus" --history-mib nan
expect 2 "--history-mib: must be a number of MiB from 0 to 4096 (got '5000')" --data "$corpus" --history-mib 5000
# --metrics to a FIFO: refused at once while nobody reads it (not a silent wait), written when someone does
timeout 60 "$bin" --headless --quiet --data "$corpus" --max-iters 1 --eval-iters 1 --sample-chars 0 \
    --metrics "$tmp/fifo" 2>"$tmp/fifo.err" >/dev/null; rc=$?
out=$(grep -v '^device:' "$tmp/fifo.err")
if [ $rc -eq 2 ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -q "it is a pipe (FIFO) that nobody reads: start its reader first" <<<"$out"; then
    passes=$((passes+1)); else echo "FAIL: --metrics FIFO without a reader (exit $rc): $out"; fails=$((fails+1)); fi
timeout 60 cat "$tmp/fifo" >"$tmp/fifo.csv" & cpid=$!
"$bin" --headless --quiet --data "$corpus" --max-iters 1 --eval-iters 1 --sample-chars 0 --metrics "$tmp/fifo" >/dev/null 2>&1; rc=$?
wait $cpid
if [ $rc -eq 0 ] && [ "$(cut -d, -f1 "$tmp/fifo.csv" | tr '\n' ' ')" = "step 0 1 " ]; then passes=$((passes+1)); else
    echo "FAIL: --metrics FIFO with a reader (exit $rc):"; cat "$tmp/fifo.csv"; fails=$((fails+1)); fi
# a width off the kernels' 4-wide paths is said at the start, with the nearest that keeps them
expect 0 "note: n_embd 33 is not a multiple of 4: the kernels' 4-wide paths are off and a step can take many times longer; --n-embd 32 is the nearest" \
    --data "$corpus" --n-embd 33 --max-iters 1 --eval-iters 1 --sample-chars 0

# a tiny real run: prints the lecture's lines and a sample, exit 0
out=$("$bin" --headless --quiet --data "$corpus" --preset bigram --max-iters 20 --eval-interval 10 --eval-iters 2 --sample-chars 30 2>/dev/null); rc=$?
if [ $rc -eq 0 ] && grep -qE '^step 20: train loss [0-9]+\.[0-9]{4}, val loss [0-9]+\.[0-9]{4}' <<<"$out" && grep -q -- '--- sample' <<<"$out"; then
    passes=$((passes+1))
else
    echo "FAIL: short bigram run (exit $rc):"; echo "$out"; fails=$((fails+1))
fi
# --cpu-threads: auto (default) runs a small model's dispatches on one thread of a CPU driver and says so on the
# device line; a number, or LP_NUM_THREADS already set, is followed; bigger models keep the driver's thread pool
expect 2 "--cpu-threads" --data "$corpus" --cpu-threads 0
expect 2 "--cpu-threads" --data "$corpus" --cpu-threads two
note="every dispatch on one thread (no thread pool)"
threads_run() {  # threads_run ENV... -- FLAGS...: stderr of a 2-step single-head run
    local envs=(); while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
    env "${envs[@]}" "$bin" --headless --quiet --data "$corpus" --max-iters 2 --eval-interval 2 --eval-iters 1 --sample-chars 0 "$@" 2>&1 >/dev/null
}
check_note() {  # check_note WANT(yes|no) LABEL STDERR
    local has=no; grep -qF "$note" <<<"$3" && has=yes
    if ! grep -q '^device: .*(CPU' <<<"$3"; then passes=$((passes+1)); return; fi  # a GPU: no CPU threads to choose
    if [ "$has" = "$1" ]; then passes=$((passes+1)); else echo "FAIL: $2: wanted the note: $1; stderr:"; echo "$3"; fails=$((fails+1)); fi
}
check_note yes "single-head, auto" "$(threads_run X=1 -- --preset single-head)"
check_note yes "--cpu-threads 1" "$(threads_run X=1 -- --preset layernorm --cpu-threads 1)"
check_note no "--cpu-threads 2" "$(threads_run X=1 -- --preset single-head --cpu-threads 2)"
check_note no "LP_NUM_THREADS set" "$(threads_run LP_NUM_THREADS=2 -- --preset single-head)"
# a model over ~2e9 multiply-adds a step (the gpt preset's shape, made quick): the pool
check_note no "a bigger model" "$(threads_run X=1 -- --preset gpt --n-layer 2 --batch-size 2)"
# --replicas: auto splits a small model's steps over one device per core on such a CPU driver (a line on stdout);
# 1 keeps one device
expect 2 "--replicas must be auto or a number of devices from 1 to 8" --data "$corpus" --replicas 0
expect 2 "--replicas must be auto or a number of devices from 1 to 8" --data "$corpus" --replicas 9
expect 2 "--replicas" --data "$corpus" --replicas two
replicas_run() {  # replicas_run FLAGS...: stdout and stderr of a 2-step single-head run
    "$bin" --headless --quiet --data "$corpus" --max-iters 2 --eval-interval 2 --eval-iters 1 --sample-chars 0 \
        --preset single-head "$@" 2>&1
}
check_replicas() {  # check_replicas WANT(a count, or none) LABEL OUTPUT
    local got=none
    got=$(sed -n 's/^replicas: each step split over \([0-9]*\) devices.*/\1/p' <<<"$3")
    [ -n "$got" ] || got=none
    if ! grep -q '^device: .*(CPU' <<<"$3"; then passes=$((passes+1)); return; fi  # a GPU keeps one device
    if [ "$got" = "$1" ]; then passes=$((passes+1)); else echo "FAIL: $2: wanted replicas $1, got $got:"; echo "$3"; fails=$((fails+1)); fi
}
cores=$(nproc); [ "$cores" -le 8 ] || cores=8
if [ "$cores" -ge 2 ]; then check_replicas "$cores" "--replicas auto" "$(replicas_run)"; else check_replicas none "--replicas auto, one core" "$(replicas_run)"; fi
check_replicas none "--replicas 1" "$(replicas_run --replicas 1)"
check_replicas 3 "--replicas 3" "$(replicas_run --replicas 3)"
if command -v taskset >/dev/null; then  # the cores the process may use, not the machine's
    check_replicas none "auto on one core (taskset)" "$(taskset -c 0 "$bin" --headless --quiet --data "$corpus" \
        --max-iters 2 --eval-interval 2 --eval-iters 1 --sample-chars 0 --preset single-head 2>&1)"
fi
echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
