// `attnlab tokenize` (tokenize_cli.h).
#include "tokenize_cli.h"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli.h"
#include "io/files.h"
#include "text/bpe.h"
#include "text/bpe_files.h"
#include "train/checkpoint.h"
#include "train/dataset.h"
#include "vk/check.h"

namespace attn {

namespace {

// A character-level vocabulary (id -> code point) as ids of text; throws naming the characters it lacks.
std::vector<int> char_ids(const std::vector<uint32_t>& vocab, const std::string& text, const std::string& source) {
    std::vector<uint32_t> cps;
    size_t bad = 0;
    if (!decode_utf8(text, cps, &bad))
        throw Error("the text is not UTF-8 (byte " + std::to_string(bad) + "): a character-level vocabulary reads "
                    "UTF-8 only; a BPE tokenizer takes any bytes");
    std::vector<int> ids;
    std::string missing;
    for (uint32_t cp : cps) {
        auto it = std::lower_bound(vocab.begin(), vocab.end(), cp);
        if (it == vocab.end() || *it != cp) {
            std::string c = encode_utf8(cp);
            if (missing.find(c) == std::string::npos) missing += c;
        } else
            ids.push_back(int(it - vocab.begin()));
    }
    if (!missing.empty())
        throw Error("the vocabulary of " + source + " has no '" + missing + "': a character-level model knows only "
                    "its corpus's characters");
    return ids;
}

// Ids written as tokenize prints them (whitespace between); throws naming the first that is not an id below V.
std::vector<int> parse_ids(const std::string& text, int V) {
    std::vector<int> ids;
    size_t at = 0;
    while (true) {
        at = text.find_first_not_of(" \t\r\n", at);
        if (at == std::string::npos) break;
        size_t end = text.find_first_of(" \t\r\n", at);
        std::string word = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
        char* stop = nullptr;
        errno = 0;
        long v = std::strtol(word.c_str(), &stop, 10);
        if (word.empty() || *stop != '\0' || errno != 0 || v < 0 || v >= V)
            throw Error("--decode: '" + word + "' is not a token id of this vocabulary (0 to " + std::to_string(V - 1) + ")");
        ids.push_back(int(v));
        at = end;
    }
    return ids;
}

}  // namespace

int run_tokenize_command(int argc, char** argv) {
    std::string spec, text, file;
    bool show = false, special = false, merges = false, decode = false;
    CLI::App app{"Print the token ids a tokenizer gives a text",
                 "attnlab tokenize"};
    app.add_option("tokenizer", spec,
                   "chars:CORPUS (its characters), a run's checkpoint, GPT-2's files (a folder with encoder.json "
                   "and vocab.bpe, or llm.c's gpt2_tokenizer.bin) or bpe:N:CORPUS (N ids learned on CORPUS)")
        ->required();
    app.add_option("text", text, "the text to tokenize");
    app.add_option("--file", file, "tokenize this file's bytes instead of TEXT");
    app.add_flag("--show", show, "one token a line: its id and its bytes as text (a leading space as ␣)");
    app.add_flag("--merges", merges, "print a BPE tokenizer's merges instead, by rank: \"left right\" ids a line");
    app.add_flag("--decode", decode, "the text is ids (as tokenize prints them): print their bytes, exactly, "
                                     "with no newline added");
    app.add_flag("--special", special, "<|endoftext|> in the text is the end-of-text token, not text");
    try {
        app.parse(argc, argv);
        if (merges && decode) throw CLI::ValidationError("--merges and --decode: one at a time");
        if (!merges && file.empty() == (app.count("text") == 0))
            throw CLI::ValidationError("give the text to tokenize, or --file FILE (one of them)");
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);
        std::fprintf(stderr, "error: %s (attnlab tokenize --help lists the options)\n", e.what());
        return 2;
    }
    return run_command("the tokenizer '" + spec + "'", [&] {
        if (!file.empty()) text = read_file(file, "text", 1u << 30);
        std::vector<int> ids;
        std::vector<std::string> pieces;  // what each id shows, for --show
        std::shared_ptr<const BpeTokenizer> run_bpe;  // a run's checkpoint that reads BPE tokens: its tokenizer
        Checkpoint run;
        const bool is_run = spec.rfind("chars:", 0) != 0 && spec.find(".safetensors") != std::string::npos;
        if (is_run) {
            run = load_checkpoint(spec);
            run_bpe = run.tokenizer;
        }
        if (!run_bpe && (spec.rfind("chars:", 0) == 0 || is_run)) {
            std::vector<uint32_t> vocab;
            std::string source;
            if (spec.rfind("chars:", 0) == 0) {
                source = "'" + spec.substr(6) + "'";
                vocab = Dataset::from_file(spec.substr(6)).vocab();
            } else {
                source = "the run '" + spec + "'";
                vocab = run.vocab;
            }
            if (merges) throw Error("a character-level vocabulary has no merges: --merges is for BPE tokenizers");
            if (decode) {
                for (int id : parse_ids(text, int(vocab.size()))) std::fputs(encode_utf8(vocab[size_t(id)]).c_str(), stdout);
                return 0;
            }
            ids = char_ids(vocab, text, source);
            for (int id : ids) pieces.push_back(show_token(encode_utf8(vocab[size_t(id)])));
        } else {
            BpeTokenizer tok;
            if (run_bpe) {
                tok = *run_bpe;
            } else if (spec.rfind("bpe:", 0) == 0) {
                size_t colon = spec.find(':', 4);
                int n = 0;
                try {
                    n = std::stoi(spec.substr(4, colon - 4));
                } catch (const std::exception&) {
                    n = -1;
                }
                if (colon == std::string::npos || n < 0)
                    throw Error("give bpe:N:CORPUS, N the vocabulary size (e.g. bpe:512:assets/tinyshakespeare.txt)");
                std::string corpus = read_file(spec.substr(colon + 1), "corpus", 1u << 30);
                tok = learn_bpe(corpus, n);
            } else
                tok = load_bpe_tokenizer(spec);
            if (merges) {
                for (const BpeMerge& m : tok.merges()) std::printf("%d %d\n", m.left, m.right);
                return 0;
            }
            if (decode) {
                std::string bytes = tok.decode(parse_ids(text, tok.vocab_size()));
                std::fwrite(bytes.data(), 1, bytes.size(), stdout);
                return 0;
            }
            ids = tok.encode(text, special);
            for (int id : ids) pieces.push_back(show_token(tok.token(id)));
        }
        if (show) {
            for (size_t i = 0; i < ids.size(); ++i) std::printf("%d\t%s\n", ids[i], pieces[i].c_str());
        } else {
            for (size_t i = 0; i < ids.size(); ++i) std::printf(i ? " %d" : "%d", ids[i]);
            std::printf("\n");
        }
        return 0;
    });
}

}  // namespace attn
