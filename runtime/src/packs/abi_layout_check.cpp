// Pins the memory layout of every struct of the pack C ABI (dense/abi/dense_abi.h).
//
// WHY: packs are built separately (third parties, older releases) and read these structs by offset.
// Within one ABI major the structs are append-only: a field may be added at the end (bump
// DENSE_ABI_MINOR and add its assert here), never moved, resized or removed. If one of these
// asserts fires, the change broke every pack already built - bump DENSE_ABI_MAJOR instead.
// The numbers are for LP64 targets (x86-64 and aarch64 Linux), the only ones we build for.
#include <dense/abi/dense_abi.h>

#include <climits>
#include <cstddef>

static_assert(sizeof(void*) == 8 && CHAR_BIT == 8, "the pinned layout below is for LP64 targets");
static_assert(DENSE_ABI_MAJOR == 1u, "a new major starts a new layout: rewrite this file for it");

// clang-format off
static_assert(offsetof(dense_abi_header, abi_major) == 0);
static_assert(offsetof(dense_abi_header, abi_minor) == 2);
static_assert(offsetof(dense_abi_header, struct_size) == 4);
static_assert(sizeof(dense_abi_header) == 8);

static_assert(offsetof(dense_hw_desc, hdr) == 0);
static_assert(offsetof(dense_hw_desc, device_kind) == 8);
static_assert(offsetof(dense_hw_desc, device_index) == 12);
static_assert(offsetof(dense_hw_desc, name) == 16);
static_assert(offsetof(dense_hw_desc, cpu_features) == 144);
static_assert(offsetof(dense_hw_desc, cpu_logical_cores) == 152);
static_assert(offsetof(dense_hw_desc, cuda_cc_major) == 156);
static_assert(offsetof(dense_hw_desc, cuda_cc_minor) == 160);
static_assert(offsetof(dense_hw_desc, cuda_driver_version) == 164);
static_assert(offsetof(dense_hw_desc, cuda_sm_count) == 168);
static_assert(offsetof(dense_hw_desc, reserved0) == 172);
static_assert(offsetof(dense_hw_desc, total_memory_bytes) == 176);
static_assert(offsetof(dense_hw_desc, free_memory_bytes) == 184);
static_assert(sizeof(dense_hw_desc) == 192);

static_assert(offsetof(dense_tensor_view, data) == 0);
static_assert(offsetof(dense_tensor_view, type) == 8);
static_assert(offsetof(dense_tensor_view, device_kind) == 12);
static_assert(offsetof(dense_tensor_view, device_index) == 16);
static_assert(offsetof(dense_tensor_view, reserved0) == 20);
static_assert(offsetof(dense_tensor_view, ne) == 24);
static_assert(offsetof(dense_tensor_view, nb) == 56);
static_assert(sizeof(dense_tensor_view) == 88);

static_assert(offsetof(dense_op_call, hdr) == 0);
static_assert(offsetof(dense_op_call, op_kind) == 8);
static_assert(offsetof(dense_op_call, n_src) == 12);
static_assert(offsetof(dense_op_call, src) == 16);
static_assert(offsetof(dense_op_call, n_dst) == 24);
static_assert(offsetof(dense_op_call, reserved0) == 28);
static_assert(offsetof(dense_op_call, dst) == 32);
static_assert(offsetof(dense_op_call, params) == 40);
static_assert(offsetof(dense_op_call, stream) == 48);
static_assert(offsetof(dense_op_call, workspace) == 56);
static_assert(offsetof(dense_op_call, workspace_bytes) == 64);
static_assert(offsetof(dense_op_call, n_threads) == 72);
static_assert(offsetof(dense_op_call, reserved1) == 76);
static_assert(sizeof(dense_op_call) == 80);

static_assert(offsetof(dense_embed_row_params, hdr) == 0);
static_assert(offsetof(dense_embed_row_params, row) == 8);
static_assert(sizeof(dense_embed_row_params) == 16);

// Per-op parameter structs (ABI 1.0).
static_assert(offsetof(dense_gemv_params, accumulate) == 8 && offsetof(dense_gemv_params, order) == 12 &&
              sizeof(dense_gemv_params) == 16);
static_assert(offsetof(dense_norm_params, eps) == 8 && sizeof(dense_norm_params) == 16);
static_assert(offsetof(dense_rope_params, n_rot) == 8 && offsetof(dense_rope_params, mode) == 12);
static_assert(offsetof(dense_rope_params, freq_base) == 16 && offsetof(dense_rope_params, freq_scale) == 20);
static_assert(sizeof(dense_rope_params) == 24);
static_assert(offsetof(dense_attn_params, scale) == 8 && sizeof(dense_attn_params) == 16);
static_assert(offsetof(dense_conv_params, apply_silu) == 8 && sizeof(dense_conv_params) == 16);
static_assert(offsetof(dense_gdn_params, scale) == 8 && sizeof(dense_gdn_params) == 16);
static_assert(offsetof(dense_gdn_step_params, scale) == 8 && offsetof(dense_gdn_step_params, l2_eps) == 12 &&
              offsetof(dense_gdn_step_params, apply_silu) == 16 && sizeof(dense_gdn_step_params) == 24);  // 1.11
static_assert(offsetof(dense_attn_prep_params, eps) == 8 && offsetof(dense_attn_prep_params, n_rot) == 12 &&
              offsetof(dense_attn_prep_params, mode) == 16 && offsetof(dense_attn_prep_params, freq_base) == 20 &&
              offsetof(dense_attn_prep_params, freq_scale) == 24 && sizeof(dense_attn_prep_params) == 32);  // 1.11

static_assert(offsetof(dense_op_impl, hdr) == 0);
static_assert(offsetof(dense_op_impl, op_kind) == 8);
static_assert(offsetof(dense_op_impl, weight_type) == 12);
static_assert(offsetof(dense_op_impl, act_type) == 16);
static_assert(offsetof(dense_op_impl, device_kind) == 20);
static_assert(offsetof(dense_op_impl, priority) == 24);
static_assert(offsetof(dense_op_impl, reserved0) == 28);
static_assert(offsetof(dense_op_impl, name) == 32);
static_assert(offsetof(dense_op_impl, user) == 40);
static_assert(offsetof(dense_op_impl, supports) == 48);
static_assert(offsetof(dense_op_impl, run) == 56);
static_assert(offsetof(dense_op_impl, workspace_bytes) == 64);
static_assert(sizeof(dense_op_impl) == 72);

static_assert(offsetof(dense_type_traits, hdr) == 0);
static_assert(offsetof(dense_type_traits, name) == 8);
static_assert(offsetof(dense_type_traits, block_elements) == 16);
static_assert(offsetof(dense_type_traits, block_bytes) == 20);
static_assert(offsetof(dense_type_traits, act_type) == 24);
static_assert(offsetof(dense_type_traits, reserved0) == 28);
static_assert(offsetof(dense_type_traits, to_float) == 32);
static_assert(sizeof(dense_type_traits) == 40);

static_assert(offsetof(dense_host_api, hdr) == 0);
static_assert(offsetof(dense_host_api, host) == 8);
static_assert(offsetof(dense_host_api, log) == 16);
static_assert(offsetof(dense_host_api, register_type) == 24);
static_assert(offsetof(dense_host_api, register_op) == 32);
static_assert(offsetof(dense_host_api, find_type) == 40);
static_assert(sizeof(dense_host_api) == 48);

static_assert(offsetof(dense_device_api, hdr) == 0);
static_assert(offsetof(dense_device_api, alloc) == 8);
static_assert(offsetof(dense_device_api, free) == 16);
static_assert(offsetof(dense_device_api, copy_to_device) == 24);
static_assert(offsetof(dense_device_api, copy_to_host) == 32);
static_assert(offsetof(dense_device_api, stream_create) == 40);
static_assert(offsetof(dense_device_api, stream_destroy) == 48);
static_assert(offsetof(dense_device_api, stream_sync) == 56);
static_assert(offsetof(dense_device_api, mem_info) == 64);
static_assert(offsetof(dense_device_api, copy_on_device) == 72);  // ABI 1.1 from here on
static_assert(offsetof(dense_device_api, memset_async) == 80);
static_assert(offsetof(dense_device_api, capture_begin) == 88);
static_assert(offsetof(dense_device_api, capture_end) == 96);
static_assert(offsetof(dense_device_api, graph_launch) == 104);
static_assert(offsetof(dense_device_api, graph_destroy) == 112);
static_assert(offsetof(dense_device_api, host_alloc) == 120);  // ABI 1.3 from here on
static_assert(offsetof(dense_device_api, host_free) == 128);
static_assert(offsetof(dense_device_api, marks_create) == 136);
static_assert(offsetof(dense_device_api, mark_record) == 144);
static_assert(offsetof(dense_device_api, marks_elapsed_ms) == 152);
static_assert(offsetof(dense_device_api, marks_destroy) == 160);
static_assert(offsetof(dense_device_api, launch_host_fn) == 168);  // ABI 1.4
static_assert(offsetof(dense_device_api, host_alloc_mapped) == 176);  // ABI 1.5
static_assert(offsetof(dense_device_api, event_create) == 184);  // ABI 1.6
static_assert(offsetof(dense_device_api, event_destroy) == 192);
static_assert(offsetof(dense_device_api, event_record) == 200);
static_assert(offsetof(dense_device_api, stream_wait_event) == 208);
static_assert(offsetof(dense_device_api, stream_write_u32) == 216);
static_assert(offsetof(dense_device_api, stream_wait_u32) == 224);
static_assert(sizeof(dense_device_api) == 232);

static_assert(offsetof(dense_pack, hdr) == 0);
static_assert(offsetof(dense_pack, name) == 8);
static_assert(offsetof(dense_pack, version) == 16);
static_assert(offsetof(dense_pack, device_kind) == 24);
static_assert(offsetof(dense_pack, reserved0) == 28);
static_assert(offsetof(dense_pack, device) == 32);
static_assert(offsetof(dense_pack, user) == 40);
static_assert(sizeof(dense_pack) == 48);

// Numbers that cross the boundary are ABI too: they may be added to, never renumbered.
static_assert(DENSE_OK == 0 && DENSE_E_UNSUPPORTED == 1 && DENSE_E_INVALID_ARGUMENT == 2 &&
              DENSE_E_OUT_OF_MEMORY == 3 && DENSE_E_DEVICE == 4 && DENSE_E_NUMERIC == 5 &&
              DENSE_E_INTERNAL == 6 && DENSE_E_ABI == 7);
static_assert(DENSE_LOG_DEBUG == 0 && DENSE_LOG_INFO == 1 && DENSE_LOG_WARN == 2 && DENSE_LOG_ERROR == 3);
static_assert(DENSE_DEVICE_CPU == 0 && DENSE_DEVICE_CUDA == 1);
static_assert(DENSE_OP_DEQUANTIZE == 1 && DENSE_OP_QUANTIZE_ACT == 2 && DENSE_OP_GEMV_Q == 3 &&
              DENSE_OP_GEMM_Q == 4 && DENSE_OP_EMBED_ROW == 5 && DENSE_OP_RMS_NORM == 6 &&
              DENSE_OP_ROPE == 7 && DENSE_OP_ATTN_DECODE == 8 && DENSE_OP_ATTN_PREFILL == 9 &&
              DENSE_OP_GDN_DECODE == 10 && DENSE_OP_GDN_PREFILL == 11 && DENSE_OP_CONV1D_CAUSAL == 12 &&
              DENSE_OP_SWIGLU == 13 && DENSE_OP_L2_NORM == 14 && DENSE_OP_GATED_RMS_NORM == 15 &&
              DENSE_OP_GDN_GATES == 16 && DENSE_OP_KV_STORE == 17 && DENSE_OP_CHECK_FINITE == 18 &&
              DENSE_OP_GEMV_Q_MULTI == 19 && DENSE_OP_GDN_STEP == 20 &&
              DENSE_OP_ATTN_PREP == 21 && DENSE_OP_ARGMAX == 22 && DENSE_OP_TOP_K == 23);
static_assert(DENSE_CPU_SSE42 == 1u << 0 && DENSE_CPU_AVX == 1u << 1 && DENSE_CPU_AVX2 == 1u << 2 &&
              DENSE_CPU_FMA == 1u << 3 && DENSE_CPU_F16C == 1u << 4 && DENSE_CPU_AVX512F == 1u << 5 &&
              DENSE_CPU_AVX512BW == 1u << 6 && DENSE_CPU_AVX512VL == 1u << 7 &&
              DENSE_CPU_AVX512VNNI == 1u << 8 && DENSE_CPU_AVXVNNI == 1u << 9 && DENSE_CPU_AVX512BF16 == 1u << 10);
static_assert(DENSE_TOP_K_MAX == 64);
static_assert(DENSE_TYPE_FIRST_RUNTIME == 1024u && DENSE_TYPE_NONE == 0xFFFFFFFFu && DENSE_TYPE_I32 == 26 && DENSE_TYPE_Q8_32 == 512);
static_assert(DENSE_ABI_ENCODE_VERSION(1, 2) == 0x00010002u && DENSE_ABI_VERSION_MAJOR(0x00010002u) == 1u &&
              DENSE_ABI_VERSION_MINOR(0x00010002u) == 2u);
// clang-format on
