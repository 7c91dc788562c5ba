// `attnlab import nanogpt` and `attnlab export nanogpt` (nanogpt_cli.h).
#include "nanogpt_cli.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <new>
#include <string>

#include "cli.h"
#include "io/files.h"
#include "io/nanogpt.h"
#include "model/model.h"
#include "train/dataset.h"

namespace attn {

int run_nanogpt_command(int argc, char** argv) {
    const bool import = std::strcmp(argv[0], "import") == 0;
    std::string format, in, out, meta, data;
    ExportOptions eo;
    CLI::App app{import ? "Open a nanoGPT checkpoint (ckpt.pt) as an Attention Lab run"
                        : "Write a run as nanoGPT's ckpt.pt and meta.pkl, for its train.py --init_from=resume",
                 import ? "attnlab import" : "attnlab export"};
    app.add_option("format", format, "nanogpt (the only format)")->required();
    if (import) {
        app.add_option("checkpoint", in, "nanoGPT's ckpt.pt (torch.save of model, optimizer, model_args, ...)")->required();
        app.add_option("--meta", meta, "the dataset's meta.pkl (default: meta.pkl beside the checkpoint)");
        app.add_option("--data", data, "a corpus whose characters are the vocabulary when there is no meta.pkl "
                                       "(default: tiny Shakespeare)");
        app.add_option("-o,--output", out, "the run to write (safetensors, opens with --resume or Ctrl+O)")->required();
    } else {
        app.add_option("run", in, "a checkpoint saved by attnlab (a nanogpt preset's run, or an imported one)")->required();
        app.add_option("-o,--output", out, "the folder for ckpt.pt and meta.pkl (nanoGPT's --out_dir)")->required();
        app.add_flag("--force", eo.force, "replace ckpt.pt and meta.pkl when the folder has them");
        app.add_flag("--mask-buffers", eo.mask_buffers,
                     "write each block's attn.bias mask: nanoGPT's model.py wants it on PyTorch before 2.0");
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);
        std::fprintf(stderr, "error: %s (attnlab %s --help lists the options)\n", e.what(), argv[0]);
        return 2;
    }
    if (format != "nanogpt") {
        std::fprintf(stderr, "error: unknown format '%s': attnlab %s knows nanogpt\n", format.c_str(), argv[0]);
        return 2;
    }
    try {
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
            Checkpoint ck = import_nanogpt(in, meta, vocab.empty() ? nullptr : &vocab, &note);
            if (!data.empty()) ck.corpus = data;
            save_checkpoint(out, ck, make_layout(ck.config, int(ck.vocab.size())).info);
            std::printf("%s: %s, vocabulary %zu, at step %d -> %s\n", in.c_str(), ck.config.describe().c_str(),
                        ck.vocab.size(), ck.state.step, out.c_str());
            if (!note.empty()) std::printf("note: %s\n", note.c_str());
        } else {
            register_file("the run exported", in);  // never replaced by its own export
            Checkpoint ck = load_checkpoint(in);
            export_nanogpt(ck, out, eo);
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
