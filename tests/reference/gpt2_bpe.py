#!/usr/bin/python3
"""The reference for engine/text/bpe: OpenAI's GPT-2 byte-level BPE (encoder.py's algorithm), written out here,
with Debian's python3-regex for the pre-tokenizer's Unicode classes, and the merge learner behind `--tokenizer bpe:N`.

  gpt2_bpe.py encode DIR FILE         ids of FILE's bytes with GPT-2's encoder.json + vocab.bpe in DIR, one line
  gpt2_bpe.py learn N FILE            the N - 256 merges learned on FILE, one "left right" pair of ids a line
  gpt2_bpe.py learn-encode N FILE TEXT  the ids of TEXT's bytes with the merges learned on FILE
  gpt2_bpe.py table                   the pre-tokenizer's classes as C++ ranges (engine/text/unicode_classes.inc)

Text is bytes: invalid UTF-8 goes through as surrogate escapes (each bad byte one character of no class), so any
byte string has ids and decodes back to itself.
"""
import json
import sys

import regex as re

PATTERN = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")


def bytes_to_unicode():
    """encoder.py's map of the 256 bytes to printable characters (the printable ones to themselves)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def chunks(data: bytes):
    """The pre-tokenizer's pieces of data, as bytes."""
    text = data.decode("utf-8", errors="surrogateescape")
    return [m.encode("utf-8", errors="surrogateescape") for m in PATTERN.findall(text)]


def merge_word(word, first, second, joined):
    """encoder.py's merge of every (first, second) in word, left to right, without overlap."""
    out, i = [], 0
    while i < len(word):
        if i < len(word) - 1 and word[i] == first and word[i + 1] == second:
            out.append(joined)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


class Encoder:
    """encoder.py's Encoder on ids: merges applied by rank, lowest first, to each pre-tokenized piece (for GPT-2's
    files the same as its merging of strings: there a token's string and its id name each other)."""

    def __init__(self, byte_ids, merges):
        self.byte_ids = byte_ids  # byte -> id
        # (left id, right id) -> (rank, merged id); a repeated pair keeps its first rank
        self.ranks = {}
        for r, (a, b, c) in enumerate(merges):
            self.ranks.setdefault((a, b), (r, c))
        self.cache = {}

    def bpe(self, piece: bytes):
        if piece in self.cache:
            return self.cache[piece]
        word = [self.byte_ids[b] for b in piece]
        while len(word) > 1:
            best = min(set(zip(word, word[1:])), key=lambda p: self.ranks.get(p, (float("inf"),))[0])
            if best not in self.ranks:
                break
            word = merge_word(word, best[0], best[1], self.ranks[best][1])
        self.cache[piece] = word
        return word

    def encode(self, data: bytes):
        return [t for c in chunks(data) for t in self.bpe(c)]


def gpt2(folder):
    byte_decoder = {c: b for b, c in bytes_to_unicode().items()}
    to_bytes = lambda s: bytes(byte_decoder[c] for c in s)
    with open(f"{folder}/encoder.json", encoding="utf-8") as f:
        encoder = {to_bytes(k): v for k, v in json.load(f).items() if k != "<|endoftext|>"}
    with open(f"{folder}/vocab.bpe", encoding="utf-8") as f:
        lines = f.read().split("\n")[1:-1]
    merges = []
    for line in lines:
        a, b = (to_bytes(s) for s in line.split())
        merges.append((encoder[a], encoder[b], encoder[a + b]))
    return Encoder({b: encoder[bytes([b])] for b in range(256)}, merges)


def learn(data: bytes, vocab_size: int):
    """Merges learned on data: each the most frequent adjacent pair over the pre-tokenized pieces (counted with
    overlaps, weighted by how often the piece occurs), ties to the smallest (left id, right id); the new token's id
    is 256 + its rank. Stops early when no pair is left. Returns [(left id, right id)]."""
    counts = {}
    for c in chunks(data):
        counts[c] = counts.get(c, 0) + 1
    words = [(list(c), n) for c, n in counts.items()]
    merges = []
    for new_id in range(256, vocab_size):
        stats = {}
        for w, n in words:
            for p in zip(w, w[1:]):
                stats[p] = stats.get(p, 0) + n
        if not stats:
            break
        best = min(stats, key=lambda p: (-stats[p], p))
        merges.append(best)
        words = [(merge_word(w, best[0], best[1], new_id), n) for w, n in words]
    return merges


def learned_encoder(merges):
    return Encoder({b: b for b in range(256)}, [(a, b, 256 + r) for r, (a, b) in enumerate(merges)])


def table():
    """Every code point's class under python3-regex's \\p{L}, \\p{N} and \\s, as ranges."""
    classes = [(re.compile(r"\p{L}"), 1), (re.compile(r"\p{N}"), 2), (re.compile(r"\s"), 3)]
    ranges = []
    for cp in range(0x110000):
        ch = chr(cp)
        k = next((k for r, k in classes if r.match(ch)), 0)
        if k and ranges and ranges[-1][2] == k and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        elif k:
            ranges.append([cp, cp, k])
    print("// Generated by tests/reference/gpt2_bpe.py table (python3-regex's \\p{L}, \\p{N}, \\s): do not edit.")
    print("// {first, last, class}: 1 letter, 2 number, 3 whitespace; every other code point is 0.")
    for i in range(0, len(ranges), 4):
        print(" ".join("{0x%X, 0x%X, %d}," % tuple(r) for r in ranges[i:i + 4]))


def main(argv):
    if argv[1] == "encode":
        print(" ".join(map(str, gpt2(argv[2]).encode(open(argv[3], "rb").read()))))
    elif argv[1] == "learn":
        for a, b in learn(open(argv[3], "rb").read(), int(argv[2])):
            print(a, b)
    elif argv[1] == "learn-encode":
        enc = learned_encoder(learn(open(argv[3], "rb").read(), int(argv[2])))
        print(" ".join(map(str, enc.encode(open(argv[4], "rb").read()))))
    elif argv[1] == "table":
        table()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
