// `attnlab import` and `attnlab export` (import_cli.h).
#include "import_cli.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <new>
#include <string>

#include "cli.h"
#include "io/files.h"
#include "io/gpt2.h"
#include "io/nanogpt.h"
#include "model/model.h"
#include "train/dataset.h"

namespace attn {

int run_import_command(int argc, char** argv) {
    const bool import = std::strcmp(argv[0], "import") == 0;
    std::string format, in, out, meta, data, tokenizer;
    int block_size = 0;
    ExportOptions eo;
    CLI::App app{import ? "Open a run made elsewhere as an Attention Lab run: nanoGPT's ckpt.pt, Hugging Face's GPT-2 "
                          "(model.safetensors) or llm.c's checkpoint (.bin)"
                        : "Write a run as nanoGPT's ckpt.pt and meta.pkl (for its train.py --init_from=resume), or as "
                          "llm.c's checkpoint .bin (for its train_gpt2)",
                 import ? "attnlab import" : "attnlab export"};
    app.add_option("format", format, import ? "nanogpt, gpt2 or llmc" : "nanogpt or llmc")->required();
    if (import) {
        app.add_option("file", in, "nanogpt: ckpt.pt; gpt2: Hugging Face's GPT-2 folder or its model.safetensors; "
                                   "llmc: llm.c's model .bin (gpt2_124M.bin)")->required();
        app.add_option("--tokenizer", tokenizer,
                       "GPT-2's tokenizer files (a folder, encoder.json, vocab.json or llm.c's gpt2_tokenizer.bin); "
                       "gpt2 and llmc look beside the model when it is not given; nanogpt: for a run of GPT-2's tokens");
        app.add_option("--block-size", block_size, "gpt2, llmc: keep the first N positions (a shorter context; GPT-2's "
                                                   "1024 need buffers over what CPU drivers allow)");
        app.add_option("--meta", meta, "nanogpt: the dataset's meta.pkl (default: meta.pkl beside the checkpoint)");
        app.add_option("--data", data, "nanogpt: a corpus whose characters are the vocabulary when there is no meta.pkl "
                                       "(default: tiny Shakespeare)");
        app.add_option("-o,--output", out, "the run to write (safetensors, opens with --resume or Ctrl+O)")->required();
    } else {
        app.add_option("run", in, "a checkpoint saved by attnlab (a nanogpt preset's run, or an imported one)")->required();
        app.add_option("-o,--output", out, "nanogpt: the folder for ckpt.pt and meta.pkl (nanoGPT's --out_dir); "
                                           "llmc: the .bin to write")->required();
        app.add_flag("--force", eo.force, "replace the files -o names when they exist");
        app.add_flag("--mask-buffers", eo.mask_buffers,
                     "nanogpt: write each block's attn.bias mask: nanoGPT's model.py wants it on PyTorch before 2.0");
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);
        std::fprintf(stderr, "error: %s (attnlab %s --help lists the options)\n", e.what(), argv[0]);
        return 2;
    }
    if (format != "nanogpt" && format != "llmc" && !(import && format == "gpt2")) {
        std::fprintf(stderr, "error: unknown format '%s': attnlab %s knows %s\n", format.c_str(), argv[0],
                     import ? "nanogpt, gpt2 and llmc" : "nanogpt and llmc");
        return 2;
    }
    auto only_for_nanogpt = [&](const std::string& flag, bool given) {
        if (given && format != "nanogpt") throw Error(flag + " is for nanoGPT's checkpoints: leave it out for " + format);
    };
    try {
        only_for_nanogpt("--meta", !meta.empty());
        only_for_nanogpt("--data", !data.empty());
        only_for_nanogpt("--mask-buffers", eo.mask_buffers);
        const bool block_given = import && app.count("--block-size") > 0;
        if (block_given && format == "nanogpt")
            throw Error("--block-size is for GPT-2 and llm.c imports: leave it out for nanogpt");
        if (import && format != "nanogpt") {
            register_file("the model", in);
            ImportedModel m = format == "gpt2" ? read_hf_gpt2(in) : read_llmc(in);
            if (block_given) shrink_block(m, block_size);
            std::string note;
            attach_tokenizer(m, tokenizer_for(in, tokenizer), &note);
            save_checkpoint(out, m.ck, make_layout(m.ck.config, m.model_vocab).info);
            std::printf("%s: %s, %d byte-level BPE tokens -> %s\n", in.c_str(), m.ck.config.describe().c_str(),
                        m.model_vocab, out.c_str());
            if (!note.empty()) std::printf("note: %s\n", note.c_str());
            std::printf("train on with: attnlab --headless --resume %s --data TEXT\n", out.c_str());
            return 0;
        }
        if (!import && format == "llmc") {
            register_file("the run exported", in);
            Checkpoint ck = load_checkpoint(in);
            export_llmc(ck, out, eo.force);
            std::printf("%s (step %d) -> %s: llm.c's train_gpt2 loads it\n", in.c_str(), ck.state.step, out.c_str());
            return 0;
        }
        if (import) {
            // the corpus's characters are the vocabulary when there is no meta.pkl: the default corpus is read only
            // then, a --data always (so that a wrong path is said)
            std::string corpus = data.empty() ? default_corpus_path() : data;
            // what this command reads is never what it writes (io/files.h): -o over the corpus, the default corpus,
            // the checkpoint or its meta.pkl is refused before anything is written
            register_file("the corpus", corpus);
            register_file("the nanoGPT vocabulary (meta.pkl)", meta);
            std::vector<uint32_t> vocab;
            std::error_code ec;
            auto beside = std::filesystem::path(in).parent_path() / "meta.pkl";
            bool meta_beside = std::filesystem::is_regular_file(beside, ec);
            if (meta.empty() && (!data.empty() || (!meta_beside && std::filesystem::is_regular_file(corpus, ec))))
                vocab = Dataset::from_file(corpus).vocab();
            std::string note;
            std::shared_ptr<const BpeTokenizer> tok;
            if (!tokenizer.empty()) tok = tokenizer_for(in, tokenizer);
            Checkpoint ck = import_nanogpt(in, meta, vocab.empty() || tok ? nullptr : &vocab, &note, tok);
            if (!data.empty()) ck.corpus = data;
            save_checkpoint(out, ck, make_layout(ck.config, checkpoint_vocab_size(ck)).info);
            std::printf("%s: %s, vocabulary %d%s, at step %d -> %s\n", in.c_str(), ck.config.describe().c_str(),
                        checkpoint_vocab_size(ck), ck.tokenizer ? " tokens" : "", ck.state.step, out.c_str());
            if (!note.empty()) std::printf("note: %s\n", note.c_str());
        } else {
            register_file("the run exported", in);  // never replaced by its own export
            Checkpoint ck = load_checkpoint(in);
            export_nanogpt(ck, out, eo);
            if (ck.tokenizer)
                std::printf("%s (step %d) -> %s/ckpt.pt, no meta.pkl (nanoGPT then reads GPT-2's tokens): continue it "
                            "with nanoGPT's python train.py --init_from=resume --out_dir=%s on a dataset of the run's "
                            "tokens%s\n",
                            in.c_str(), ck.state.step, out.c_str(), out.c_str(),
                            eo.mask_buffers ? "" : " (on PyTorch before 2.0, export with --mask-buffers)");
            else
                std::printf("%s (step %d) -> %s/ckpt.pt and %s/meta.pkl: continue it with nanoGPT's "
                            "python train.py config/train_shakespeare_char.py --init_from=resume --out_dir=%s%s\n",
                            in.c_str(), ck.state.step, out.c_str(), out.c_str(), out.c_str(),
                            eo.mask_buffers ? "" : " (on PyTorch before 2.0, export with --mask-buffers)");
        }
        return 0;
    } catch (const Error& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 2;
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "error: not enough memory for '%s'\n", in.c_str());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: unexpected failure: %s\n", e.what());
        return 1;
    }
}

}  // namespace attn
