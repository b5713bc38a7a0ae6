// Which activation format a weight format's GEMV consumes on a device: the type table's pairing
// (llama.cpp's vec_dot_type) when a usable pack implements it there, else the first other activation
// format some usable pack pairs the weight with (the CUDA packs use Q8_32 for every quantized format).
#pragma once

#include "packs/pack_manager.hpp"

#include <functional>

namespace dense::packs {

// The chooser for devices()[device]; it keeps a reference to `packs`. `first_choice` (if not NONE)
// wins wherever a usable pack pairs it with the weight: cross-backend comparisons use it to give
// both sides the same activation rounding.
std::function<dense_type_id(dense_type_id weight)> gemv_activation_chooser(const PackManager& packs, size_t device,
                                                                          dense_type_id first_choice = DENSE_TYPE_NONE);

// Whether a usable pack on devices()[device] implements `op` with a quantized copy of its output in
// `act` (the op registered with act_type = act; dense_abi.h, "fused quantization"). Keeps a
// reference to `packs`.
std::function<bool(dense_op_kind op, dense_type_id act)> quantize_fusion_checker(const PackManager& packs,
                                                                                 size_t device);

// Whether a usable pack on devices()[device] registers the untyped `op` (weight type NONE) with
// activation type `act` (NONE for the plain activation ops, e.g. ARGMAX, which is optional).
bool implements_op(const PackManager& packs, size_t device, dense_op_kind op, dense_type_id act = DENSE_TYPE_NONE);

}  // namespace dense::packs
