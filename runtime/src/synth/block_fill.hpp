// Random but valid weight blocks of every storable format, with their scale fields chosen so that the
// dequantized weights have mean ~0 and standard deviation ~sigma (synth uses sigma = 1/sqrt(IN), so a
// matrix-vector product of O(1) inputs stays O(1)).
//
// How each format is filled (codes are uniformly random everywhere; "jitter" = the block's fp16 d is
// the base value times U(0.75, 1.25)):
//   Q8_0, IQ4_NL   random int8 / 4-bit codes; d = +-base (random sign per block cancels the code
//                  tables' slight asymmetry: int8 mean -0.5, kvalues_iq4nl mean -5.875)
//   Q2_K/Q4_K/Q5_K sub-block scale s in the upper half of its range, min = the same s and
//                  dmin = d * (2^bits - 1) / 2, so each element is d*s*(q - mean q): exactly centred
//   Q3_K, Q6_K     signed sub-block scales +-(upper half of the range), d > 0
//   IQ4_XS         sub-block scale ls - 32 = +-(16..31), d > 0
//   IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S   random grid indices and signs (IQ2_XS / IQ3_XXS: 7 sign bits and
//                  parity, as the format defines), 4-bit sub-block scales in 8..15, d > 0
//   F32/F16/BF16   sigma * (approximately standard normal: Irwin-Hall sum of 4 uniforms, |z| < 3.47)
// The base d is sigma / sqrt(E[jitter^2] * E[scale factor^2] * E[code^2]) with the exact second
// moments of these distributions (for the IQ grids: the mean square of all grid bytes, since indices
// are uniform). All fp16 fields are finite (tiny sigmas can make d subnormal, as in real files).
#pragma once

#include "synth/rng.hpp"

#include <dense/abi/dense_abi.h>

#include <cstddef>
#include <cstdint>

namespace dense::synth {

// The formats synth can generate: the 12 quant formats of spec/quant-formats.md plus F32, F16, BF16.
bool can_generate(dense_type_id type) noexcept;

struct BlockRecipe {
    dense_type_id type = DENSE_TYPE_NONE;
    uint32_t block_elements = 0;
    uint32_t block_bytes = 0;
    double sigma = 0.0;   // target standard deviation of the dequantized values
    double base_d = 0.0;  // the block scale d before jitter (quant formats)
};

// Throws dense::Error(Internal) if !can_generate(type).
BlockRecipe make_recipe(dense_type_id type, double sigma);

// Writes n_blocks consecutive blocks to `out` (n_blocks * block_bytes bytes), drawing from `rng`.
void fill_blocks(const BlockRecipe& recipe, Rng& rng, std::byte* out, size_t n_blocks);

// Mean square of the magnitudes a random code of `grid` format decodes to (uniform index over the
// grid table, bytes of each entry): the constants make_recipe relies on. Exposed so tests can check
// them against the tables. 0 for types without a grid.
double grid_mean_square(dense_type_id type) noexcept;

}  // namespace dense::synth
