# Sourced by the `attnlab inspect` tests (BIN set).
# fail MESSAGE: says it on stderr, exits 1.
fail() { echo "FAIL: $*" >&2; exit 1; }
# bad WANT ARGS...: `attnlab inspect ARGS...` must exit 2 with one line of output that contains WANT.
bad() {
    local want=$1 out rc
    shift
    out=$("$BIN" inspect "$@" 2>&1 >/dev/null); rc=$?
    [ $rc -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && [[ "$out" == *"$want"* ]] ||
        fail "inspect $*: want exit 2 and one line with '$want' (got $rc: $out)"
}
