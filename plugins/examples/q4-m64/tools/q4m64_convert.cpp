// dense-q4m64-convert: rewrites the matrices of a GGUF into example.q4_m64.
//
//   dense-q4m64-convert IN.gguf OUT.gguf [--include-embeddings] [--only NAME]... [--dequantized-f32]
//
// Converted: every 2-D tensor whose ne[0] is a multiple of 64 and whose type is f32, f16, bf16 or
// q8_0, except token_embd.weight (unless --include-embeddings: then the model needs the pack's
// EMBED_ROW). --only NAME (repeatable) narrows that to the named tensors. Everything else, metadata
// included, is copied byte for byte.
//
// --dequantized-f32 writes the same choice of tensors as F32 holding exactly the values the q4_m64
// blocks decode to: a model the runtime runs without the pack, whose logits the packed model must
// reproduce up to float summation order (the CI test uses it to check the pack's GEMV).
//
// In the output file the format has file type id 1024 and the key dense.type.1024 =
// "example.q4_m64" (dense/sdk/gguf.hpp explains the convention).
#include "../src/q4_m64_format.hpp"

#include <dense/sdk/gguf.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace g = dense::sdk::gguf;
using namespace example_q4m64;

constexpr uint32_t kFileTypeId = g::kFirstPackTypeId;

struct Options {
    std::string in, out;
    bool include_embeddings = false;
    std::vector<std::string> only;
    bool dequantized_f32 = false;
};

[[noreturn]] void usage(const std::string& why) {
    std::fprintf(stderr,
                 "dense-q4m64-convert: %s\n"
                 "usage: dense-q4m64-convert IN.gguf OUT.gguf [--include-embeddings] [--only NAME]... "
                 "[--dequantized-f32]\n",
                 why.c_str());
    std::exit(2);
}

Options parse(int argc, char** argv) {
    Options o;
    std::vector<std::string> files;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--include-embeddings")
            o.include_embeddings = true;
        else if (a == "--only" && i + 1 < argc)
            o.only.emplace_back(argv[++i]);
        else if (a == "--dequantized-f32")
            o.dequantized_f32 = true;
        else if (a.starts_with("-"))
            usage("unknown option " + std::string(a));
        else
            files.emplace_back(a);
    }
    if (files.size() != 2) usage("expected IN.gguf and OUT.gguf");
    o.in = files[0];
    o.out = files[1];
    return o;
}

float bf16_to_float(uint16_t h) {
    const uint32_t bits = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

template <class T>
T load(const std::byte* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// The source tensor as floats (f32, f16, bf16: exact; q8_0: d * q per 32, as the runtime decodes it).
std::vector<float> to_floats(const g::Tensor& t, std::span<const std::byte> data) {
    std::vector<float> x(static_cast<size_t>(t.n_elements()));
    const std::byte* p = data.data();
    switch (t.type) {
        case DENSE_TYPE_F32:
            std::memcpy(x.data(), p, x.size() * sizeof(float));
            break;
        case DENSE_TYPE_F16:
            for (size_t i = 0; i < x.size(); ++i) x[i] = half_to_float(load<uint16_t>(p + 2 * i));
            break;
        case DENSE_TYPE_BF16:
            for (size_t i = 0; i < x.size(); ++i) x[i] = bf16_to_float(load<uint16_t>(p + 2 * i));
            break;
        case DENSE_TYPE_Q8_0:
            for (size_t b = 0; b < x.size() / 32; ++b) {
                const std::byte* blk = p + b * 34;
                const float d = half_to_float(load<uint16_t>(blk));
                for (size_t e = 0; e < 32; ++e)
                    x[b * 32 + e] = static_cast<float>(static_cast<int8_t>(blk[2 + e])) * d;
            }
            break;
        default:
            throw g::Error("tensor '" + t.name + "': cannot read type id " + std::to_string(t.type));
    }
    return x;
}

bool convertible(const g::Tensor& t, const Options& o) {
    const bool readable = t.type == DENSE_TYPE_F32 || t.type == DENSE_TYPE_F16 || t.type == DENSE_TYPE_BF16 ||
                          t.type == DENSE_TYPE_Q8_0;
    const bool embeddings = t.name == "token_embd.weight";
    const bool named = o.only.empty() || std::find(o.only.begin(), o.only.end(), t.name) != o.only.end();
    return readable && named && t.ne.size() == 2 && t.ne[0] % kBlockElements == 0 &&
           (!embeddings || o.include_embeddings);
}

int run(const Options& o) {
    const g::PackType q4{kTypeName, {kBlockElements, kBlockBytes}};
    const g::File in = g::File::read(o.in, {q4});
    g::Writer out(in.alignment());
    // Earlier pack-type keys are dropped: the ones this file needs are written again below.
    for (const auto& kv : in.kvs())
        if (!kv.key.starts_with(g::kPackTypeKeyPrefix)) out.add_kv(kv);
    bool uses_q4 = false;
    for (const auto& t : in.tensors()) uses_q4 = uses_q4 || t.type == kFileTypeId || (!o.dequantized_f32 && convertible(t, o));
    if (uses_q4) out.set_pack_type(kFileTypeId, q4);

    for (const auto& name : o.only)
        if (in.find_tensor(name) == nullptr) throw g::Error(o.in + ": --only " + name + ": no such tensor");
    size_t converted = 0;
    uint64_t bytes_before = 0, bytes_after = 0;
    double err_sq = 0.0, ref_sq = 0.0;  // over all converted weights: what 4 bits cost
    for (const auto& t : in.tensors()) {
        const auto data = in.tensor_data(t);
        if (t.type >= g::kFirstPackTypeId) {  // already q4_m64 (the only pack type File::read accepted)
            out.add_tensor(t.name, kFileTypeId, t.ne, data);
            continue;
        }
        if (!convertible(t, o)) {
            out.add_tensor(t.name, t.type, t.ne, data);
            continue;
        }
        const std::vector<float> x = to_floats(t, data);
        const size_t n_blocks = x.size() / kBlockElements;
        std::vector<Block> blocks(n_blocks);
        for (size_t b = 0; b < n_blocks; ++b) blocks[b] = quantize_block(x.data() + b * kBlockElements);
        std::vector<float> decoded(x.size());
        dequantize_blocks(blocks.data(), decoded.data(), static_cast<int64_t>(n_blocks));
        for (size_t i = 0; i < x.size(); ++i) {
            const double err = static_cast<double>(decoded[i]) - static_cast<double>(x[i]);
            err_sq += err * err;
            ref_sq += static_cast<double>(x[i]) * static_cast<double>(x[i]);
        }
        std::vector<std::byte> bytes;
        uint32_t type = kFileTypeId;
        if (o.dequantized_f32) {
            bytes.resize(decoded.size() * sizeof(float));
            std::memcpy(bytes.data(), decoded.data(), bytes.size());
            type = DENSE_TYPE_F32;
        } else {
            bytes.resize(n_blocks * sizeof(Block));
            std::memcpy(bytes.data(), blocks.data(), bytes.size());
        }
        out.add_tensor(t.name, type, t.ne, bytes);
        ++converted;
        bytes_before += data.size();
        bytes_after += bytes.size();
    }
    out.write(o.out);
    std::printf("%s: %zu tensors -> %s (%llu -> %llu bytes), %zu tensors copied\n", o.out.c_str(), converted,
                o.dequantized_f32 ? "f32 (q4_m64 values)" : kTypeName, static_cast<unsigned long long>(bytes_before),
                static_cast<unsigned long long>(bytes_after), in.tensors().size() - converted);
    // ||W_q4 - W|| / ||W|| over the converted weights: the scale of the error 4 bits add to a GEMV's
    // output (for inputs unrelated to where the rounding errors fall).
    std::printf("weight relative rms error: %.6f\n", ref_sq > 0.0 ? std::sqrt(err_sq / ref_sq) : 0.0);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    try {
        return run(o);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "dense-q4m64-convert: %s\n", e.what());
        return 1;
    }
}
