// nanoGPT's checkpoints in and out (engine/io/nanogpt.h): a step of bench/reference.py's NanoGPT, saved by torch.save
// (tests/fixtures/make_torch_fixtures.py), imported here must give PyTorch's loss and gradients; export and import
// again must give back the same run.
#include <cmath>
#include <filesystem>
#include <unistd.h>

#include "corpus.h"
#include "gpu.h"
#include "io/nanogpt.h"
#include "io/torch_pickle.h"
#include "reference/model_ref.h"
#include "train/trainer.h"

using namespace attn;

using test::fixture;

TEST_CASE("an imported nanoGPT step gives PyTorch's float64 loss and gradients, and its float32 loss on the GPU",
          "[nanogpt]") {
    for (const char* name : {"nanogpt_step.pt", "nanogpt_step_bias.pt"}) {
        INFO(name);
        std::string note;
        Checkpoint ck = import_nanogpt(fixture(name), fixture("meta.pkl"), nullptr, &note);
        REQUIRE(ck.config.nanogpt);
        REQUIRE(ck.config.bias == (std::string(name) == "nanogpt_step_bias.pt"));
        REQUIRE(ck.config.beta2 == 0.99f);  // from the saved config
        REQUIRE(ck.state.step == 1);        // AdamW's step count, from the optimizer state
        REQUIRE(note.find("moments start at zero") == std::string::npos);  // nanoGPT's two groups map onto ours
        torch_io::TorchFile file(fixture(name));
        torch_io::ValuePtr check = file.root()->get("check");
        REQUIRE(check);
        Dataset data = Dataset::from_text(check->get("text")->s, "fixture");
        REQUIRE(data.vocab() == ck.vocab);  // the corpus's sorted characters are meta.pkl's
        std::vector<uint32_t> off;
        for (auto& o : check->get("offsets")->items) off.push_back(uint32_t(o->i));
        const int B = int(off.size());

        Config c = ck.config;
        c.batch_size = B;  // the fixture's batch (train.py's batch_size is not in its saved config)
        Trainer tr(test::ctx(), data, c);
        tr.import_state(ck.state);
        const Model& m = tr.model();
        // the moments as torch saved them: AdamW state 0 is wte's (the first decayed tensor)
        torch_io::ValuePtr st0 = file.root()->get("optimizer")->get("state")->dict.at(0).second;
        auto m0 = file.values(st0->get("exp_avg")->tensor);
        const ParamInfo& wte = m.params_info()[0];
        for (size_t i = 0; i < wte.count; i++) REQUIRE(ck.state.adam_m[wte.offset + i] == float(m0[i]));

        // float64: the CPU twin against PyTorch, 1e-6 relative
        std::vector<double> flat(ck.state.params.begin(), ck.state.params.end()), grads;
        double loss = ref::model_loss(m, flat, data.tokens(), off, B, &grads);
        REQUIRE(loss == Approx(check->get("loss64")->f).epsilon(1e-6));
        torch_io::ValuePtr g64 = check->get("grads64");
        REQUIRE(g64->dict.size() == m.params_info().size());  // every parameter has its gradient (wte once: tied)
        for (const ParamInfo& pi : m.params_info()) {
            INFO(pi.name);
            torch_io::ValuePtr t = g64->get(pi.name);
            REQUIRE(t);
            auto want = file.values(t->tensor);
            REQUIRE(want.size() == pi.count);
            double scale = 0;
            for (double w : want) scale = std::max(scale, std::abs(w));
            for (size_t i = 0; i < pi.count; i++) REQUIRE(std::abs(grads[pi.offset + i] - want[i]) <= 1e-6 * scale);
        }
        // float32 on the GPU: the loss PyTorch computes in float32, to 1e-4
        tr.set_batch(off);
        REQUIRE(tr.forward_backward() == Approx(check->get("loss32")->f).epsilon(1e-4));
    }
}

TEST_CASE("export to nanoGPT and import again gives back the run", "[nanogpt]") {
    Checkpoint ck = import_nanogpt(fixture("nanogpt_step.pt"), fixture("meta.pkl"), nullptr);
    for (const ParamInfo& pi : make_layout(ck.config, int(ck.vocab.size())).info)  // moments of its own
        for (size_t i = 0; i < pi.count; i += 7) ck.state.adam_v[pi.offset + i] += 0.5f;
    ck.state.step = 42;
    auto dir = std::filesystem::temp_directory_path() / ("attn_export_" + std::to_string(::getpid()));
    export_nanogpt(ck, dir.string());
    REQUIRE(std::filesystem::is_regular_file(dir / "ckpt.pt"));
    REQUIRE(std::filesystem::is_regular_file(dir / "meta.pkl"));
    std::string note;
    Checkpoint back = import_nanogpt((dir / "ckpt.pt").string(), "", nullptr, &note);  // meta.pkl beside it
    REQUIRE(note.find("meta.pkl") != std::string::npos);
    REQUIRE(back.vocab == ck.vocab);
    REQUIRE(back.state.step == 42);
    REQUIRE(back.state.params == ck.state.params);
    REQUIRE(back.state.adam_m == ck.state.adam_m);
    REQUIRE(back.state.adam_v == ck.state.adam_v);
    REQUIRE(back.config.differences_from(ck.config).empty());
    // torch's layout: lm_head.weight shares wte's storage; two param groups, the 2-D tensors decayed
    torch_io::TorchFile f((dir / "ckpt.pt").string());
    auto model = f.root()->get("model");
    REQUIRE(model->get("lm_head.weight")->tensor.storage == model->get("transformer.wte.weight")->tensor.storage);
    auto groups = f.root()->get("optimizer")->get("param_groups");
    REQUIRE(groups->items.size() == 2);
    REQUIRE(groups->items[0]->get("weight_decay")->f == Approx(ck.config.weight_decay));
    REQUIRE(groups->items[1]->get("weight_decay")->f == 0.0);
    size_t n2d = 0;
    for (const ParamInfo& pi : make_layout(ck.config, int(ck.vocab.size())).info) n2d += pi.shape.size() == 2;
    REQUIRE(groups->items[0]->get("params")->items.size() == n2d);
    std::filesystem::remove_all(dir);
}

TEST_CASE("a lecture run is not exported, and a broken nanoGPT checkpoint is refused with its reason", "[nanogpt]") {
    Checkpoint ck;
    ck.config.apply_preset("layernorm");
    ck.vocab = {'a', 'b'};
    REQUIRE_THROWS_WITH(export_nanogpt(ck, "/tmp/never"), Catch::Contains("only nanoGPT's GPT"));
    // a checkpoint alone in its folder (no meta.pkl) with a corpus of another size: the vocabulary is unknown
    auto dir = std::filesystem::temp_directory_path() / ("attn_alone_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::filesystem::copy_file(fixture("nanogpt_bias.pt"), dir / "ckpt.pt");
    std::vector<uint32_t> three = {'a', 'b', 'c'};
    REQUIRE_THROWS_WITH(import_nanogpt((dir / "ckpt.pt").string(), "", &three),
                        Catch::Contains("cannot be shown as characters") && Catch::Contains("--meta"));
    // with a corpus of its vocabulary's size, that corpus's characters are taken, and said so
    std::vector<uint32_t> five = {'\n', ' ', 'a', 'b', 0xe9};
    std::string note;
    Checkpoint ok = import_nanogpt((dir / "ckpt.pt").string(), "", &five, &note);
    REQUIRE(ok.vocab == five);
    REQUIRE(note.find("sorted") != std::string::npos);
    std::filesystem::remove_all(dir);
    // a pickle calling os.system: refused by the unpickler, nothing run
    REQUIRE_THROWS_WITH(import_nanogpt(fixture("evil.pt"), fixture("meta.pkl"), nullptr), Catch::Contains("system"));
    // views.pt is a torch.save file but no checkpoint
    REQUIRE_THROWS_WITH(import_nanogpt(fixture("views.pt"), fixture("meta.pkl"), nullptr),
                        Catch::Contains("not a nanoGPT checkpoint"));
}
