// What every kernel runs on: programs cut into submits, narrow last workgroups, specialised optional parts, the
// largest shapes a CPU driver computes whole, and the kernel policy.
#include "ops_common.h"

TEST_CASE("a program cut into many submits computes the same bits as one submit", "[ops]") {
    // Segmented programs (big models, so the window's frames run between submits) split dispatches into
    // workgroup ranges with vkCmdDispatchBase: along x, and along y for grids taller than one row.
    // Twice: the device's default kernels, then the GPU's shared-memory ones forced (their workgroups take their
    // index from gl_WorkGroupID: M 300 gives three 128-row tiles, attention four heads of one tile each).
    test::PolicyGuard pol;
    for (bool smem : {false, true}) {
    if (smem && !ops::smem_fits(test::ctx())) continue;
    INFO("smem kernels forced: " << smem);
    if (smem) pol->matmul = MatmulChoice::smem, pol->attention = AttentionChoice::smem;
    Rng r(11);
    // B 24: attention_backward4 at 4 rows an invocation (CPU devices) still spans nine workgroups, cut into pieces
    // of 4 (Program::dispatch's least)
    const uint32_t M = 300, N = 68, K = 40, B = 24, T = 24, NH = 2, HS = 8, C = NH * HS;
    auto inp = upload(test::randn(r, M * K)), w = upload(test::randn(r, N * K)), bias = upload(test::randn(r, N));
    auto dout = upload(test::randn(r, M * N));
    auto qkv = upload(test::randn(r, B * T * 3 * C)), adout = upload(test::randn(r, B * T * C));
    // plain matmul over 4.5M outputs: more than 65535 workgroups of 64, so its grid has two rows
    const uint32_t BM = 4096, BN = 1100, BK = 3;
    auto binp = upload(test::randn(r, BM * BK)), bw = upload(test::randn(r, BN * BK));
    // and over 200k outputs: 3125 workgroups in one row, cut along x
    const uint32_t XM = 2000, XN = 100;
    Buffer key(test::ctx(), 8, true);
    const uint32_t k[2] = {9u, 4u};
    key.upload(k, 8);
    auto run = [&](double budget, size_t& submits) {
        auto out = zeros(M * N), dinp = zeros(M * K), dw = zeros(N * K), db = zeros(N);
        auto aout = zeros(B * T * C), att = zeros(B * NH * T * T), dpre = zeros(B * NH * T * T), dqkv = zeros(B * T * 3 * C);
        auto bout = zeros(BM * BN), xout = zeros(XM * XN);
        Program p(test::ctx(), false, budget);
        p.begin();
        ops::matmul_forward(test::kernels(), p, out, inp, w, bias, M, N, K, true, true);
        ops::attention_forward(test::kernels(), p, aout, att, qkv, B, T, NH, HS, true, {0.2f, 3, key});
        ops::matmul_forward(test::kernels(), p, bout, binp, bw, bias, BM, BN, BK, false);
        ops::matmul_forward(test::kernels(), p, xout, binp, bw, bias, XM, XN, BK, false);
        p.barrier("backward reads the forward outputs");
        ops::matmul_backward(test::kernels(), p, {.dinp = dinp, .dw = dw, .dbias = db, .dout = dout, .inp = inp,
            .w = w, .out = out, .M = uint32_t(M), .N = uint32_t(N), .K = uint32_t(K), .has_bias = true, .relu = true});
        ops::attention_backward(test::kernels(), p, dqkv, dpre, adout, qkv, att, aout, B, T, NH, HS, true, {0.2f, 3, key});
        p.end();
        p.run();
        submits = p.submit_count();
        std::vector<std::vector<float>> all;
        for (auto* b : {&out, &dinp, &dw, &db, &aout, &att, &dqkv, &bout, &xout}) all.push_back(b->read<float>(b->bytes() / 4));
        return all;
    };
    size_t one = 0, many = 0;
    auto want = run(0, one);
    auto got = run(2e4, many);
    REQUIRE(one == 1);
    REQUIRE(many >= 10);
    for (size_t i = 0; i < want.size(); i++) {
        INFO("output " << i);
        REQUIRE(got[i] == want[i]);
    }
    }
}

TEST_CASE("a segmented program dispatches whole what fits its budget and cuts the rest into pieces of 4 workgroups",
          "[ops]") {
    // K 3: the plain matmul kernel, one invocation an output: 64 x 10 outputs are 10 workgroups of 64, cost 1920
    const uint32_t M = 64, N = 10, K = 3;
    Rng r(5);
    auto inp = upload(test::randn(r, M * K)), w = upload(test::randn(r, N * K)), bias = upload(test::randn(r, N));
    auto out = zeros(M * N);
    auto record = [&](double budget) {
        auto p = std::make_unique<Program>(test::ctx(), false, budget);
        p->begin();
        ops::matmul_forward(test::kernels(), *p, out, inp, w, bias, M, N, K, true);
        p->end();
        return p;
    };
    auto unbounded = record(1e30);  // once split into one-workgroup pieces: the budget overflowed a 64-bit count
    REQUIRE(unbounded->piece_count() == 1);
    REQUIRE(unbounded->submit_count() == 1);
    // a budget under one workgroup's cost: pieces of 4, 4 and 2 workgroups (lavapipe shares each piece's
    // workgroups between its threads: one-workgroup pieces ran on one core), each its own submit
    auto tiny = record(1);
    REQUIRE(tiny->piece_count() == 3);
    REQUIRE(tiny->submit_count() == 3);
    // 5 workgroups (192 each) fit a budget of 1000: two pieces of 5 in two submits
    auto fives = record(1000);
    REQUIRE(fives->piece_count() == 2);
    REQUIRE(fives->submit_count() == 2);
    fives->run();
    auto got = download(out, M * N);
    auto want_prog = record(0);
    want_prog->run();
    REQUIRE(download(out, M * N) == got);
}

TEST_CASE("on a CPU driver a dispatch's partial last workgroup runs as workgroups of its vector width", "[ops]") {
    // lavapipe runs a workgroup of 64 as 8 passes of 8 lanes, and passes whose lanes have all returned cost most of
    // what busy ones do: Program::dispatch runs the whole workgroups, then the rest as workgroups of the vector width
    // (Kernel::narrow_pipeline, index.glsl's specialisation constant 1). GPUs keep one dispatch.
    uint32_t lanes = test::ctx().cpu_simd_width();
    bool cpu = test::ctx().props().deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    INFO("vector width " << lanes);
    REQUIRE((lanes > 0) == cpu);
    // shaders with a fixed workgroup size (shared memory, barriers) have no narrow twin
    REQUIRE(test::kernels().get("attention_softmax", 2, sizeof(ops::AttnSoftmaxPush)).narrow_pipeline(8) ==
            VK_NULL_HANDLE);
    REQUIRE((test::kernels().get("embedding_forward4", "ssvvs", sizeof(ops::EmbeddingPush)).narrow_pipeline(lanes) !=
             VK_NULL_HANDLE) == cpu);
    Rng r(12);
    const uint32_t K = 8, N = 112;  // 7 column tiles of 16
    // M 160: 70 tiles, one workgroup of 64 and a tail of 6; M 80: 35, all tail; M 144: 63, all tail; M 128 with
    // N 128: 64, one whole workgroup
    // pipelines are made on first use: a kernel whose dispatch is all tail never compiles its wide pipeline
    struct Case { uint32_t M, N; size_t pieces_cpu; };
    for (Case c : {Case{160, N, 2}, Case{80, N, 1}, Case{144, N, 1}, Case{128, 128, 1}}) {
        INFO("M " << c.M << " N " << c.N);
        auto inp = test::randn(r, c.M * K), w = test::randn(r, c.N * K), bias = test::randn(r, c.N);
        auto ginp = upload(inp), gw = upload(w), gb = upload(bias), out = zeros(c.M * c.N);
        KernelCache fresh(test::ctx());
        Program p(test::ctx());
        p.begin();
        ops::matmul_forward(fresh, p, out, ginp, gw, gb, c.M, c.N, K, true);
        p.end();
        REQUIRE(p.dispatch_count() == 1);
        REQUIRE(p.piece_count() == (cpu ? c.pieces_cpu : 1));
        REQUIRE(fresh.pipelines_made() == int(p.piece_count()));
        p.run();
        std::vector<double> ro;
        ref::matmul_forward(ro, inp, w, &bias, c.M, c.N, K);
        test::require_close(download(out, c.M * c.N), ro, 1e-5, 1e-5, "inp @ w^T + bias");
    }
}

TEST_CASE("kernels specialised without the parts a dispatch leaves unused give the unspecialised kernels' bits",
          "[ops]") {
    // kflag (engine/vk/program.h): each op compiles its pipelines without the optional parts its push constants leave
    // off (lavapipe would run them masked); ATTNLAB_KERNEL_FLAGS=all keeps every part. Every combination the ops pick,
    // both ways, bit for bit. ATTNLAB_NARROW_TAIL=0 also runs each with workgroups of 64 only.
    test::PolicyGuard pol;
    Rng r(13);
    // runs `record` three ways (specialised; every part; every part in workgroups of 64) and requires the same bits of
    // `outs` each way
    auto three_ways = [&](const std::function<void(Program&)>& record, const std::vector<Buffer*>& outs) {
        std::vector<std::vector<std::vector<float>>> got;  // [way][output]
        for (int way = 0; way < 3; way++) {
            pol->all_kernel_flags = way >= 1;
            pol->narrow_tail = way != 2;
            for (Buffer* b : outs) std::memset(b->mapped(), 0, b->bytes());
            test::run(record);
            got.emplace_back();
            for (Buffer* b : outs) got.back().push_back(b->read<float>(b->bytes() / 4));
        }
        pol.reset();
        REQUIRE(got[0] == got[1]);
        REQUIRE(got[1] == got[2]);
    };
    auto host = [&](size_t n, double scale = 1.0) {  // host-visible, so that each way starts from the same zeros
        Buffer b(test::ctx(), n * 4, true);
        auto v = test::randn(r, n, scale);
        std::vector<float> f(v.begin(), v.end());
        std::memcpy(b.mapped(), f.data(), n * 4);
        return b;
    };
    const uint32_t M = 37, N = 24, K = 20;  // tiled kernels (K % 4 == 0), a tail of tiles
    Buffer inp = host(M * K), w = host(N * K), bias = host(N), res = host(M * N), dout = host(M * N);
    Buffer out(test::ctx(), M * N * 4, true), fwd(test::ctx(), M * N * 4, true), dinp = host(M * K);
    Buffer dw(test::ctx(), N * K * 4, true), db(test::ctx(), N * 4, true);
    for (int bits = 0; bits < 8; bits++) {
        bool has_bias = bits & 1, relu = bits & 2, add = bits & 4;
        INFO("bias " << has_bias << " relu " << relu << " residual / accumulate " << add);
        three_ways([&](Program& p) {
            ops::matmul_forward(test::kernels(), p, out, inp, w, bias, M, N, K, has_bias, relu, add ? BufferRange(res) : BufferRange{});
        }, {&out});
        test::run([&](Program& p) { ops::matmul_forward(test::kernels(), p, fwd, inp, w, bias, M, N, K, has_bias, relu); });
        std::vector<float> dinp0 = dinp.read<float>(M * K);
        three_ways([&](Program& p) {
            if (add) dinp.upload(dinp0.data(), M * K * 4);  // += the same values each way
            ops::matmul_backward(test::kernels(), p, {.dinp = dinp, .dw = dw, .dbias = db, .dout = dout, .inp = inp,
                .w = w, .out = fwd, .M = uint32_t(M), .N = uint32_t(N), .K = uint32_t(K), .has_bias = has_bias,
                .relu = relu, .accumulate = add});
        }, {&dw, &db});
        dinp.upload(dinp0.data(), M * K * 4);
    }
    // attention without dropout: the block kernels (T 8) and the row kernels (T 12)
    for (uint32_t T : {8u, 12u}) {
        const uint32_t B = 3, NH = 2, HS = 8, C = NH * HS;
        INFO("attention, T " << T);
        Buffer qkv = host(B * T * 3 * C), adout = host(B * T * C), seed = host(2);
        Buffer att(test::ctx(), B * NH * T * T * 4, true), aout(test::ctx(), B * T * C * 4, true);
        Buffer dqkv(test::ctx(), B * T * 3 * C * 4, true), dpre(test::ctx(), B * NH * T * T * 4, true);
        ops::AttnDropout drop;
        drop.seed = seed;
        three_ways([&](Program& p) {
            ops::attention_forward(test::kernels(), p, aout, att, qkv, B, T, NH, HS, true, drop);
            p.barrier("the backward reads att and out");
            ops::attention_backward(test::kernels(), p, dqkv, dpre, adout, qkv, att, aout, B, T, NH, HS, true, drop);
        }, {&att, &aout, &dqkv});
    }
    // layernorm's backward (dinp = or +=), dropout's forward with and without a residual, embeddings with and without
    // positions
    const uint32_t LN = 29, LC = 16;
    Buffer lx = host(LN * LC), lw = host(LC), lb = host(LC), ldout = host(LN * LC), lout(test::ctx(), LN * LC * 4, true);
    Buffer stats(test::ctx(), LN * 2 * 4, true), ldx = host(LN * LC), ldw(test::ctx(), LC * 4, true), ldb(test::ctx(), LC * 4, true);
    test::run([&](Program& p) { ops::layernorm_forward(test::kernels(), p, lout, stats, lx, lw, lb, LN, LC); });
    std::vector<float> ldx0 = ldx.read<float>(LN * LC);
    for (bool acc : {false, true}) {
        INFO("layernorm backward, accumulate " << acc);
        three_ways([&](Program& p) {
            ldx.upload(ldx0.data(), LN * LC * 4);
            ops::layernorm_backward(test::kernels(), p, ldx, ldw, ldb, ldout, lx, lw, stats, LN, LC, acc);
        }, {&ldx, &ldw, &ldb});
    }
    Buffer dseed(test::ctx(), 8, true);
    const uint32_t key[2] = {3u, 7u};
    dseed.upload(key, 8);
    for (bool with_res : {false, true}) {
        INFO("dropout forward, residual " << with_res);
        three_ways([&](Program& p) {
            ops::dropout_forward(test::kernels(), p, lout, lx, with_res ? BufferRange(ldout) : BufferRange{}, dseed,
                                 LN * LC, 5, 0.25f);
        }, {&lout});
    }
    const uint32_t EB = 3, ET = 5, EC = 16, EV = 11;
    std::vector<uint32_t> toks(64), offs = {0, 9, 30};
    for (size_t i = 0; i < toks.size(); i++) toks[i] = uint32_t(i * 7 % EV);
    auto gtoks = upload(toks), goffs = upload(offs);
    Buffer wte = host(EV * EC), wpe = host(ET * EC), eout(test::ctx(), EB * ET * EC * 4, true);
    for (bool pos : {false, true}) {
        INFO("embedding, positions " << pos);
        three_ways([&](Program& p) {
            ops::embedding_forward(test::kernels(), p, eout, gtoks, goffs, wte, wpe, EB, ET, EC, pos);
        }, {&eout});
    }
}

// A CPU driver (lavapipe) stops every loop of a shader invocation once 65535 iterations have run in all:
// Trainer::check_cpu_loops refuses shapes past the limits below, and these are the largest shapes of each kind,
// checked exactly (sums of ones) or against the reference. (Past them the driver's sums come out short: 70000
// rows of dw summed to 65532.)
TEST_CASE("the largest shapes Trainer allows on a CPU driver compute whole sums", "[ops][loops]") {
    const uint32_t M = Trainer::k_cpu_max_rows;
    auto ones = [](size_t n) { return upload(std::vector<float>(n, 1.0f)); };
    SECTION("sums over the rows: matmul's dw and dbias (in one row range), LayerNorm's dbias, the mean") {
        // N 8, K 64: 8 x 16 dw tiles; N 64, K 256: 8 x 32 (matmul_dw_tkw 8), the most work a row
        auto [N, K] = GENERATE(std::pair{8u, 64u}, std::pair{64u, 256u});
        INFO("N " << N << " K " << K);
        auto dout = ones(size_t(M) * N), inp = ones(size_t(M) * K), w = ones(size_t(N) * K);
        auto dinp = zeros(size_t(M) * K), dw = zeros(size_t(N) * K), db = zeros(N);
        uint32_t splits = 1;  // one range over all M rows: the longest loop (CPU devices split at 2048 rows)
        auto scratch = zeros(1);
        auto lstats = upload(std::vector<float>(2 * size_t(M), 1.0f)), ldinp = zeros(size_t(M) * K), ldw = zeros(K),
             ldb = zeros(K);
        uint32_t lsplits = ops::layernorm_backward_splits(test::ctx(), M, K);
        auto lscratch = zeros(std::max<size_t>(1, ops::layernorm_backward_scratch(K, lsplits)));
        Buffer result(test::ctx(), 16, true);
        test::run([&](Program& p) {
            ops::matmul_backward(test::kernels(), p, {.dinp = dinp, .dw = dw, .dbias = db, .dout = dout, .inp = inp,
                .w = w, .out = dout, .M = uint32_t(M), .N = uint32_t(N), .K = uint32_t(K), .has_bias = true,
                .scratch = scratch, .splits = splits});
            ops::layernorm_backward(test::kernels(), p, ldinp, ldw, ldb, inp, inp, w, lstats, M, K, false, lscratch,
                                    lsplits);
            ops::mean_forward(test::kernels(), p, result, dout, M, 0);
        });
        for (float v : download(dw, size_t(N) * K)) REQUIRE(v == float(M));
        for (float v : download(db, N)) REQUIRE(v == float(M));
        for (float v : download(ldb, K)) REQUIRE(v == float(M));
        REQUIRE(result.read<float>(1)[0] == 1.0f);
    }
    SECTION("the token embedding's gradient: every row of the batch, every character of the vocabulary") {
        const uint32_t V = Trainer::k_cpu_max_vocab, C = 4, T = 8, B = M / T;
        std::vector<uint32_t> tokens(T + 1, V - 1), off(B, 0);
        auto gtok = upload(tokens), goff = upload(off), dout = ones(size_t(M) * C);
        auto dwte = upload(std::vector<float>(size_t(V) * C, 5.0f)), dwpe = zeros(size_t(T) * C);
        test::run([&](Program& p) { ops::embedding_backward(test::kernels(), p, dwte, dwpe, dout, gtok, goff, B, T, C, V, true); });
        auto g = download(dwte, size_t(V) * C);
        for (uint32_t c = 0; c < C; c++) REQUIRE(g[size_t(V - 1) * C + c] == float(M));
        REQUIRE(g[0] == 0.0f);  // the first row zeroed too
        for (float v : download(dwpe, size_t(T) * C)) REQUIRE(v == float(B));
    }
    SECTION("cross-entropy over the largest vocabulary: the evaluation's kernel and the training step's") {
        Rng r(9);
        const uint32_t V = Trainer::k_cpu_max_vocab, B = 2, T = 8, NT = 30;
        std::vector<uint32_t> tokens(NT), off(B);
        for (auto& t : tokens) t = uint32_t(r.below(V));
        for (auto& o : off) o = uint32_t(r.below(NT - T - 1));
        auto logits = test::randn(r, size_t(B) * T * V, 0.02);
        auto gl = upload(logits), gtok = upload(tokens), goff = upload(off);
        auto losses = zeros(B * T), losses2 = zeros(B * T), dlogits = zeros(size_t(B) * T * V),
             dlogits2 = zeros(size_t(B) * T * V);
        test::run([&](Program& p) {
            ops::crossentropy_forward(test::kernels(), p, losses, gl, gtok, goff, B, T, V);
            ops::crossentropy_backward(test::kernels(), p, dlogits2, gl, gtok, goff, B, T, V);
            ops::crossentropy_fused(test::kernels(), p, losses2, dlogits, gl, gtok, goff, B, T, V);
        });
        std::vector<double> rl, rd;
        ref::crossentropy_forward(rl, logits, tokens, off, B, T, V);
        ref::crossentropy_backward(rd, logits, tokens, off, B, T, V);
        test::require_close(download(losses, B * T), rl, 1e-4, 1e-5, "losses");
        test::require_close(download(losses2, B * T), rl, 1e-4, 1e-5, "fused losses");
        test::require_close(download(dlogits, size_t(B) * T * V), rd, 1e-9, 1e-4, "fused dlogits");
        test::require_close(download(dlogits2, size_t(B) * T * V), rd, 1e-9, 1e-4, "dlogits");
    }
    SECTION("attention: the largest block with the vec4 kernels' largest head; the scalar kernels at their limit") {
        Rng r(3);
        Buffer key(test::ctx(), 8, true);
        const uint32_t k[2] = {12345u, 7u};
        key.upload(k, 8);
        // the encoder (no mask: every row runs over all T keys) with and without dropout
        for (auto [T, HS] : {std::pair{1024, 128}, std::pair{64, 256}, std::pair{546, 30}}) {
            INFO("T " << T << " HS " << HS);
            if (!ops::attention_vec4(HS)) REQUIRE(uint64_t(T) * HS <= Trainer::k_cpu_max_block_x_head);
            for (float drop : {0.0f, 0.2f}) check_attention(r, key, k, 1, T, 1, HS, false, drop, false);
        }
    }
}

TEST_CASE("the kernel policy reads its ATTNLAB_ overrides, the ops follow it, bad values are refused", "[ops]") {
    const VkPhysicalDeviceProperties& props = test::ctx().props();
    test::EnvGuard at("ATTNLAB_ATTENTION"), rows("ATTNLAB_ATTENTION_ROWS"), a4("ATTNLAB_ATTENTION_ATT4"),
        mm("ATTNLAB_MATMUL"), ln("ATTNLAB_LAYERNORM_ROWS"), rs("ATTNLAB_ROW_SPLITS"), fl("ATTNLAB_KERNEL_FLAGS"),
        nt("ATTNLAB_NARROW_TAIL");
    for (test::EnvGuard* g : {&at, &rows, &a4, &mm, &ln, &rs, &fl, &nt}) g->clear();
    KernelPolicy d = KernelPolicy::for_device(props);  // the device's own choices
    CHECK(d.cpu_device == (props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU));
    CHECK(d.attention == AttentionChoice::automatic);
    CHECK(d.matmul == MatmulChoice::automatic);
    CHECK(d.attention_rows == 0);
    CHECK(d.row_splits == 0);
    CHECK(d.attention_att4);
    CHECK(d.layernorm_rows_in_registers);
    CHECK_FALSE(d.all_kernel_flags);
    CHECK(d.narrow_tail);

    at.set("block"), rows.set("2"), a4.set("0"), mm.set("tiled"), ln.set("memory"), rs.set("3"), fl.set("all"),
        nt.set("0");
    KernelPolicy p = KernelPolicy::for_device(props);
    CHECK(p.attention == AttentionChoice::block);
    CHECK(p.attention_rows == 2);
    CHECK_FALSE(p.attention_att4);
    CHECK(p.matmul == MatmulChoice::tiled);
    CHECK_FALSE(p.layernorm_rows_in_registers);
    CHECK(p.row_splits == 3);
    CHECK(p.all_kernel_flags);
    CHECK_FALSE(p.narrow_tail);
    {
        test::PolicyGuard pol;
        test::ctx().edit_policy() = p;  // what the ops then record
        CHECK(ops::attention_block(test::ctx(), 8, 32));
        CHECK(ops::attention_backward_rows(test::ctx()) == 2);
        CHECK(ops::matmul_kernel(test::ctx(), 64) == ops::MatmulKernel::tiled);
        CHECK(ops::layernorm_c4r(test::ctx(), 64) == 1);
        CHECK(ops::row_splits(test::ctx(), 100, 10) == 3);
        CHECK(ops::row_splits(test::ctx(), 2, 10) == 2);  // never more ranges than rows
        pol->attention = AttentionChoice::rows;
        CHECK_FALSE(ops::attention_block(test::ctx(), 8, 32));
    }
    CHECK(test::ctx().policy().attention == d.attention);  // the guard put the device's choices back

    for (test::EnvGuard* g : {&at, &rows, &a4, &mm, &ln, &rs, &fl, &nt}) g->clear();
    auto refused = [&](test::EnvGuard& g, const char* value) {
        g.set(value);
        std::string e = test::error_of([&] { KernelPolicy::for_device(props); });
        g.clear();
        return e;
    };
    using Catch::Matchers::Contains;
    CHECK_THAT(refused(at, "bogus"), Contains("ATTNLAB_ATTENTION='bogus' is not an attention kernel: use rows, block or smem"));
    CHECK_THAT(refused(rows, "9"), Contains("ATTNLAB_ATTENTION_ROWS='9' is not 1 to 8"));
    CHECK_THAT(refused(rows, "4x"), Contains("is not 1 to 8"));
    CHECK_THAT(refused(mm, "fast"), Contains("use tiled or smem"));
    CHECK_THAT(refused(ln, "disk"), Contains("memory or registers"));
    CHECK_THAT(refused(rs, "0"), Contains("ATTNLAB_ROW_SPLITS='0'"));
    CHECK_THAT(refused(fl, "some"), Contains("all or needed"));
    CHECK_THAT(refused(nt, "yes"), Contains("0 or 1"));
    if (!d.smem_fits) {  // lavapipe: the shared-memory kernels cannot be forced, and the message says why
        CHECK_THAT(refused(mm, "smem"), Contains("ATTNLAB_MATMUL=smem: this device allows"));
        CHECK_THAT(refused(at, "smem"), Contains("unset ATTNLAB_ATTENTION"));
    }
}

TEST_CASE("the kernel policy divides a step's work: threads a dispatch, replicas, submits", "[ops]") {
    const double small = 1e8, big = 5e10;  // a lecture model's step, the gpt preset's (multiply-adds)
    CHECK(KernelPolicy::cpu_threads_for(small) == 1);  // no thread pool: replicas use the other cores
    CHECK(KernelPolicy::cpu_threads_for(big) == 0);    // the driver's pool
    KernelPolicy cpu, gpu;
    cpu.cpu_device = true, cpu.cpu_single_thread = true;
    CHECK(cpu.replicas_for(small, 2) == 2);
    CHECK(cpu.replicas_for(small, 0) == 1);
    CHECK(cpu.replicas_for(big, 2) == 1);
    CHECK(gpu.replicas_for(small, 2) == 1);  // one device is faster on a GPU
    cpu.cpu_single_thread = false;           // a pool of threads: one device already uses every core
    CHECK(cpu.replicas_for(small, 2) == 1);
    CHECK(cpu.submit_budget(small) == 0);  // one submit a step
    CHECK(cpu.submit_budget(big) == KernelPolicy::k_submit_budget);
    CHECK(gpu.submit_budget(big) == 0);
    // what Trainer asks of this device's policy
    const KernelPolicy& here = test::ctx().policy();
    Config c;
    c.apply_preset("single-head");
    CHECK(Trainer::cpu_threads_for(c, 65) == 1);
    CHECK(Trainer::replicas_for(test::ctx(), c, 65) == (here.cpu_single_thread ? std::min(Trainer::cpu_cores(), 8) : 1));
}

TEST_CASE("buffers upload and download the same bytes, straight or staged in pieces, at any offset", "[ops]") {
    // Where the host maps device memory cached (lavapipe), a device buffer is copied into straight once the queue
    // is idle; elsewhere through a staging buffer, here forced and cut into pieces of 4 KiB + 4 bytes.
    test::PolicyGuard pol;
    Rng r(5);
    const size_t n = 10000;  // 40000 bytes: nine pieces and a remainder
    std::vector<float> a(n), b(n / 2);
    for (float& x : a) x = float(r.normal());
    for (float& x : b) x = float(r.normal());
    for (bool direct : {true, false}) {
        INFO("straight copies allowed: " << direct);
        pol->direct_copies = direct;
        pol->staging_bytes = 4100;
        Buffer buf(test::ctx(), n * 4);
        buf.upload(a);
        CHECK(buf.read<float>(n) == a);
        buf.upload(b.data(), b.size() * 4, 12);  // over floats 3 .. 5002
        std::vector<float> want = a;
        std::copy(b.begin(), b.end(), want.begin() + 3);
        CHECK(buf.read<float>(n) == want);
        CHECK(buf.read<float>(7, 4999) == std::vector<float>(want.begin() + 4999, want.begin() + 5006));
        buf.fill_zero();
        CHECK(buf.read<float>(n) == std::vector<float>(n, 0.0f));
    }
}
