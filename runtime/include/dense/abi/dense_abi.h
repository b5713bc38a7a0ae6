/*
 * dense-rt kernel-pack ABI — pure C, versioned, stable across compilers.
 *
 * Rules (see docs/writing-a-pack.md and ../../../../docs/design notes):
 *  - A pack exports exactly three symbols: dense_pack_score, dense_pack_init, dense_pack_release.
 *  - Every struct that crosses the boundary starts with dense_abi_header. A reader never touches a
 *    field at or past header.struct_size (older minors are shorter); a different abi_major is refused.
 *  - Structs are append-only within a major version; offsets are pinned by static_asserts in
 *    runtime/src/packs/abi_layout_check.cpp.
 *  - Only plain data crosses: fixed-width integers, enums stored as uint32_t, pack-owned
 *    `const char*`, tensor views, opaque handles, status codes. No C++ types, no exceptions.
 *  - Whatever the pack creates, the pack destroys. The host never unloads a pack while anything it
 *    registered may still be used (in practice: never before process exit, and not at exit either).
 */
#ifndef DENSE_ABI_H
#define DENSE_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DENSE_ABI_MAJOR 1u
#define DENSE_ABI_MINOR 15u

/* dense_pack_score(NULL) returns the ABI version the pack was built against, encoded like this. It
 * lets the host refuse a pack of another major before it reads any struct the pack fills. */
#define DENSE_ABI_ENCODE_VERSION(major, minor) ((((uint32_t)(major)) << 16) | ((uint32_t)(minor) & 0xFFFFu))
#define DENSE_ABI_VERSION_MAJOR(v) ((uint32_t)(v) >> 16)
#define DENSE_ABI_VERSION_MINOR(v) ((uint32_t)(v) & 0xFFFFu)

#if defined(_WIN32)
#define DENSE_PACK_EXPORT __declspec(dllexport)
#else
#define DENSE_PACK_EXPORT __attribute__((visibility("default")))
#endif

typedef struct dense_abi_header {
    uint16_t abi_major;
    uint16_t abi_minor;
    uint32_t struct_size; /* sizeof the struct as the writer compiled it */
} dense_abi_header;

/* ---- status codes (returned by value; messages go through the host logger) ---------------- */
typedef uint32_t dense_status;
enum {
    DENSE_OK = 0,
    DENSE_E_UNSUPPORTED = 1,      /* this op/shape/type is not implemented by this pack        */
    DENSE_E_INVALID_ARGUMENT = 2, /* malformed call (bad view, params struct too small, ...)     */
    DENSE_E_OUT_OF_MEMORY = 3,
    DENSE_E_DEVICE = 4,           /* driver/runtime error on the device                        */
    DENSE_E_NUMERIC = 5,          /* NaN/Inf detected where the op checks for it                */
    DENSE_E_INTERNAL = 6,         /* a bug or an exception caught inside the pack               */
    DENSE_E_ABI = 7               /* version or struct-size mismatch                             */
};

typedef uint32_t dense_log_level;
enum { DENSE_LOG_DEBUG = 0, DENSE_LOG_INFO = 1, DENSE_LOG_WARN = 2, DENSE_LOG_ERROR = 3 };

typedef uint32_t dense_device_kind;
enum { DENSE_DEVICE_CPU = 0, DENSE_DEVICE_CUDA = 1 };

/* CPU feature bits in dense_hw_desc.cpu_features. */
enum {
    DENSE_CPU_SSE42 = 1u << 0,
    DENSE_CPU_AVX = 1u << 1,
    DENSE_CPU_AVX2 = 1u << 2,
    DENSE_CPU_FMA = 1u << 3,
    DENSE_CPU_F16C = 1u << 4,
    DENSE_CPU_AVX512F = 1u << 5,
    DENSE_CPU_AVX512BW = 1u << 6,
    DENSE_CPU_AVX512VL = 1u << 7,
    DENSE_CPU_AVX512VNNI = 1u << 8,
    DENSE_CPU_AVXVNNI = 1u << 9,
    DENSE_CPU_AVX512BF16 = 1u << 10
};

/* ---- tensor element types --------------------------------------------------------------------
 * Ids below 1024 are ggml's GGUF type ids (the numbers stored in files). Ids >= 1024 are handed out
 * at run time to formats that packs register (dense_host_api.register_type). */
typedef uint32_t dense_type_id;
enum {
    DENSE_TYPE_F32 = 0,
    DENSE_TYPE_F16 = 1,
    DENSE_TYPE_Q8_0 = 8,
    DENSE_TYPE_Q8_1 = 9, /* activation-only (llama.cpp CUDA) */
    DENSE_TYPE_Q2_K = 10,
    DENSE_TYPE_Q3_K = 11,
    DENSE_TYPE_Q4_K = 12,
    DENSE_TYPE_Q5_K = 13,
    DENSE_TYPE_Q6_K = 14,
    DENSE_TYPE_Q8_K = 15, /* activation-only */
    DENSE_TYPE_IQ2_XS = 17,
    DENSE_TYPE_IQ3_XXS = 18,
    DENSE_TYPE_IQ4_NL = 20,
    DENSE_TYPE_IQ3_S = 21,
    DENSE_TYPE_IQ2_S = 22,
    DENSE_TYPE_IQ4_XS = 23,
    DENSE_TYPE_I32 = 26,  /* positions / token ids / status words passed to ops; never a weight */
    DENSE_TYPE_BF16 = 30,
    DENSE_TYPE_GGML_COUNT = 43,       /* ggml ids are in [0, 43) in the supported llama.cpp release */
    /* dense-rt's own activation format for int8 dot products on GPUs: blocks of 32 values with a
     * float32 scale d = amax/127 (codes q = round-half-away(x/d), d = 0 and q = 0 for an all-zero
     * block) and a float32 s = d * sum(q). Stored struct-of-arrays in one buffer of n elements: n int8
     * codes, then n/32 floats d, then n/32 floats s (40 bytes per 32 elements; n % 32 == 0). Never
     * stored in model files. */
    DENSE_TYPE_Q8_32 = 512,
    DENSE_TYPE_FIRST_RUNTIME = 1024,  /* first id handed to a pack-registered format */
    DENSE_TYPE_NONE = 0xFFFFFFFFu     /* "no weight" / "no activation" in an op key */
};

/* ---- op kinds: the core owns this closed list; packs only implement them ---------------------
 * Conventions for every op: views follow ggml (ne[0] contiguous, nb[] byte strides); "{a, b}" is
 * ne = {a, b, 1, 1}; a view marked "strided" may have nb[1] > ne[0]*elem_size (e.g. the query heads
 * inside the interleaved query+gate projection). F32 unless said otherwise. Scalars that change per
 * token (positions, token ids, lengths) come in I32 {1} tensors, never in params, so a captured
 * device graph stays valid from token to token. dst may alias src0 only where it says so.
 *
 * Fused quantization (ABI 1.2): an RMS_NORM, GATED_RMS_NORM or SWIGLU implementation registered with
 * act_type = an activation type A (instead of DENSE_TYPE_NONE) takes one more destination: dst1, {N}
 * in type A, receives dst0's N = ne[0] * ne[1] values quantized exactly as QUANTIZE_ACT to A would
 * write them (dst0 then contiguous, ne[0] a multiple of A's block, dst1 apart from every other view).
 * The host uses such a key only where a pack registered it, so the GEMV after a norm needs no
 * separate quantize; a pack without it loses nothing but that launch.
 *
 * Token axis (ABI 1.10): CONV1D_CAUSAL, GDN_GATES, L2_NORM, GDN_DECODE, ROPE, KV_STORE and ATTN_DECODE also take
 * T >= 1 tokens of a batched prefill step in one call, on the axis their entries name ("T"; the
 * position inputs then I32 {T}). The call must leave
 * exactly what T calls of one token each, in token order, would leave (outputs and recurrent state,
 * bit for bit), token t's inputs being the views' slices at t: a state carried from token to token
 * (the conv window, the delta-rule state) is read from state_in for token 0 and from the pack's own
 * running state after that. A pack that does not take the axis refuses T > 1 in its shape checks
 * (every pack built against an older minor does: those views were {.., 1, 1}), and the host then
 * issues one call per token. */
typedef uint32_t dense_op_kind;
enum {
    /* src0: blocks (any type); dst: F32, same element count. */
    DENSE_OP_DEQUANTIZE = 1,
    /* src0: F32 {n}; dst: {n} in the activation type (Q8_K, Q8_0, F16, BF16, F32). */
    DENSE_OP_QUANTIZE_ACT = 2,
    /* src0: weight {IN, OUT}; src1: activation {IN} in the weight's activation type; dst: F32 {OUT}.
     * params (optional) dense_gemv_params: accumulate != 0 means dst += W*x (fused residual add). */
    DENSE_OP_GEMV_Q = 3,
    /* ABI 1.9. The GEMV of T activations at once (batched prefill: the weight is read once for T
     * tokens instead of T times). src0: weight {IN, OUT} as for GEMV_Q; src1: the T activations as ONE
     * vector {IN * T} in the weight's activation type, quantized as QUANTIZE_ACT quantizes a vector of
     * IN * T elements (IN is a multiple of the type's block, so no block spans two activations, and
     * activation j is elements [j IN, (j + 1) IN) of it); dst: F32 {OUT, T}, column j = OUT floats at
     * byte j * nb[1] (nb[1] >= 4 OUT), disjoint from the sources. params (optional) dense_gemv_params:
     * accumulate != 0 means dst += W x. T = dst.ne[1] >= 1, src1.ne[0] = IN * T. Column j must equal,
     * bit for bit, what this pack's GEMV_Q of src0 on activation j alone writes, so a prompt run T
     * tokens at a time gives the same result as one token at a time. Registered per (weight type,
     * activation type) like GEMV_Q.
     * ABI 1.13: dense_gemv_params.order = DENSE_GEMM_ORDER_FREE relaxes that rule for the call: column
     * j may add the same per-block terms as that GEMV in another order (its distance from the GEMV is
     * then a rounding of the sum's order, not of the terms), so a pack can amortise the weight decode
     * over more columns. The result must not depend on timing (no order decided by races), and the
     * exact answer is always a valid one. A pack may ask for a workspace for it (workspace_bytes). An
     * order value the pack does not know is DENSE_E_INVALID_ARGUMENT.
     * ABI 1.14 widens DENSE_GEMM_ORDER_FREE: each per-block term may also be rounded differently from
     * the GEMV's (fused multiply-adds, the weight's scale products formed once per row and block), as
     * long as it stays within a few roundings of the exact value of the block's integer sums and
     * scales; the column is then within the float-summation bound of its terms. */
    DENSE_OP_GEMM_Q = 4,
    /* src0: weight {D, V}; src1 (optional): I32 {1} row; dst: F32 {D}. Without src1 the row is
     * dense_embed_row_params.row. A row outside [0, V) is DENSE_E_INVALID_ARGUMENT. */
    DENSE_OP_EMBED_ROW = 5,
    /* src0: x {n, rows} strided; src1: weight {n}; dst: {n, rows} strided (may alias src0).
     * y = x / sqrt(mean(x^2) + eps) * w. params: dense_norm_params. */
    DENSE_OP_RMS_NORM = 6,
    /* src0: x {head_dim, heads} strided; src1: I32 {1} position p; dst: same shape (may alias src0).
     * NeoX pairing: for i < n_rot/2, (x[i], x[i + n_rot/2]) rotate by p * base^(-2i/n_rot); dims
     * >= n_rot pass through. params: dense_rope_params. Token axis (1.10): x and dst {head_dim, heads,
     * T} (token t at byte t * nb[2]), src1 I32 {T}: token t rotates by position[t]. */
    DENSE_OP_ROPE = 7,
    /* src0: q {d, Hq} strided; src1: K cache {d, Hkv, n_ctx} (F16 or F32); src2: V cache, same;
     * src3: I32 {1} n_kv = positions 0..n_kv-1 attended; src4 (optional): gate {d, Hq} strided;
     * dst: {d, Hq}. Head h reads KV head h / (Hq / Hkv). o = softmax(scale * q.K) V, then
     * o *= sigmoid(gate) when src4 is given. params: dense_attn_params. Token axis (1.10): q, gate and
     * dst {d, Hq, T} (token t at byte t * nb[2]), src3 I32 {T}: token t attends over n_kv[t]. */
    DENSE_OP_ATTN_DECODE = 8,
    DENSE_OP_ATTN_PREFILL = 9,
    /* src0: q {dk, Hk} strided; src1: k {dk, Hk} strided; src2: v {dv, Hv} strided; src3: beta {Hv};
     * src4: decay {Hv}; src5: state_in {dk*dv, Hv} with S[i][j] at j*dk + i; dst0: o {dv, Hv};
     * dst1: state_out {dk*dv, Hv} (may alias src5). Value head h uses key head h % Hk:
     * S = decay*S; u = S^T k; S += k (beta (v - u))^T; o = scale * S^T q. params: dense_gdn_params.
     * Token axis (1.10): q and k {dk, Hk, T} and v {dv, Hv, T} with token t at byte t * nb[2]; beta
     * and decay {Hv, T} contiguous; o {dv, Hv, T} contiguous. The state runs through the T tokens. */
    DENSE_OP_GDN_DECODE = 10,
    DENSE_OP_GDN_PREFILL = 11,
    /* src0: x {C}; src1: taps {K, C} (tap K-1 multiplies x); src2: state_in {K-1, C} (oldest first);
     * dst0: y {C}; dst1: state_out {K-1, C} (may alias src2). y[c] = sum_i taps[c][i] * window[i]
     * over window = [state_in[c], x[c]], then SiLU if params.apply_silu. params: dense_conv_params.
     * Token axis (1.10): x and y {C, T} strided (token t's channels at byte t * nb[1]). */
    DENSE_OP_CONV1D_CAUSAL = 12,
    /* src0: gate {n}; src1: up {n}; dst: {n} = silu(gate) * up. */
    DENSE_OP_SWIGLU = 13,
    /* src0: x {n, rows} strided; dst: {n, rows} strided (may alias). y = x / sqrt(sum(x^2) + eps).
     * params: dense_norm_params. Token axis (1.10): x and dst {n, rows, T}, token t's rows at byte
     * t * nb[2] (nb[2] >= rows * nb[1]). */
    DENSE_OP_L2_NORM = 14,
    /* src0: x {n, rows}; src1: z {n, rows}; src2: weight {n}; dst: {n, rows}.
     * y = x / sqrt(mean(x^2) + eps) * w * silu(z). params: dense_norm_params. */
    DENSE_OP_GATED_RMS_NORM = 15,
    /* src0: b {H}; src1: a {H}; src2: dt_bias {H}; src3: A {H} (negative); dst0: beta {H} =
     * sigmoid(b); dst1: decay {H} = exp(softplus(a + dt_bias) * A), softplus(x) = x for x > 20.
     * Token axis (1.10): b, a, beta and decay {H, T} contiguous; dt_bias and A stay {H}. */
    DENSE_OP_GDN_GATES = 16,
    /* src0: k {d, Hkv}; src1: v {d, Hkv}; src2: I32 {1} position p; dst0: K cache {d, Hkv, n_ctx};
     * dst1: V cache. Writes slot p of both (converting to the cache type, round to nearest even).
     * Token axis (1.10): k and v {d, Hkv, T} contiguous, src2 I32 {T}: token t into slot position[t]. */
    DENSE_OP_KV_STORE = 17,
    /* src0: x {n}; dst: I32 {1} status word; sets dst to 1 if any element of x is NaN or Inf,
     * leaves it unchanged otherwise (the executor clears it before a step). */
    DENSE_OP_CHECK_FINITE = 18,
    /* ABI 1.8. Several GEMVs that read the same activation, in one call (one launch where the pack
     * can: at batch 1 a small matrix costs a kernel's start and tail, not its bytes).
     * src0 .. src{k-1}: weights {IN, OUT_i}, any formats whose GEMV pairs with src{k}'s type;
     * src{k}: activation {IN}; dst0 .. dst{k-1}: F32 {OUT_i}, pairwise disjoint and disjoint from
     * every source. 2 <= k <= 16, n_src = k + 1, n_dst = k; no params (dst_i = W_i x, never
     * accumulating). Each dst_i must equal what GEMV_Q of (src_i, src{k}) would write in this pack,
     * bit for bit. Registered with weight_type DENSE_TYPE_NONE and the activation type; supports()
     * says which lists of formats the impl takes. */
    DENSE_OP_GEMV_Q_MULTI = 19,
    /* ABI 1.11. A Gated DeltaNet layer's token step after its projections, in one call (one kernel
     * where the pack can: at batch 1 each of the four ops it replaces costs a dependent launch, not
     * bytes). One token, no token axis. Shapes: C = 2 Hk dk + Hv dv channels (q heads, k heads, v heads),
     * K taps; Hk, dk, dv and Hv follow from the views: Hv = src3.ne[0], dv = dst4.ne[0],
     * dk = src7.ne[0] / dv, Hk = (C - Hv dv) / (2 dk).
     * src0: x {C}; src1: taps {K, C}; src2: conv state_in {K-1, C}; src3: b {Hv}; src4: a {Hv};
     * src5: dt_bias {Hv}; src6: A {Hv}; src7: delta state_in {dk dv, Hv}.
     * dst0: y {C}; dst1: conv state_out {K-1, C}; dst2: beta {Hv}; dst3: decay {Hv}; dst4: o {dv, Hv};
     * dst5: delta state_out {dk dv, Hv}. All F32 and contiguous; destinations disjoint from each other
     * and from the sources. params: dense_gdn_step_params.
     * The call must leave exactly what these four calls of the same pack leave, in this order, bit
     * for bit: CONV1D_CAUSAL (x, taps, conv state_in -> y, conv state_out; apply_silu); L2_NORM of the
     * 2 Hk rows of dk at the start of y, in place (eps); GDN_GATES (b, a, dt_bias, A -> beta, decay);
     * GDN_DECODE (q = y's first Hk dk, k = the next Hk dk, v = the last Hv dv, beta, decay, delta
     * state_in -> o, delta state_out; scale). */
    DENSE_OP_GDN_STEP = 20,
    /* ABI 1.11. A full-attention layer's token step between its projections and its attention, in one
     * call (one kernel where the pack can), for the same reason as GDN_STEP. One token, no token axis.
     * src0: q {d, Hq} F32 (strided rows: the query halves of the query+gate slices); src1: k {d, Hkv};
     * src2: v {d, Hkv}; src3: q norm weight {d}; src4: k norm weight {d}; src5: I32 {1} position p.
     * dst0: q_out {d, Hq}; dst1: k_out {d, Hkv}; dst2: K cache {d, Hkv, n_ctx}; dst3: V cache, same.
     * F32 and contiguous but src0; destinations apart from each other and from the sources.
     * params: dense_attn_prep_params. The call must leave exactly what these five calls of the same pack
     * leave, in this order, bit for bit: RMS_NORM (src0, src3 -> q_out; eps); RMS_NORM (src1, src4 ->
     * k_out); ROPE of q_out in place and of k_out in place (position, n_rot, mode, freq_base,
     * freq_scale); KV_STORE (k_out, v, position -> K cache, V cache). */
    DENSE_OP_ATTN_PREP = 21,
    /* ABI 1.12. The greedy choice on the device, so that a greedy token step sends 4 bytes back
     * instead of the whole vocabulary's logits. src0: x F32 {n} contiguous, 1 <= n < 2^31; dst: I32 {1}
     * = what std::max_element over x gives: the lowest index of the largest element, NaN never
     * chosen (it compares false) except that index 0 is the answer when x[0] is NaN. No params.
     * Optional: where the device's packs lack it the executor copies the logits back and chooses on
     * the host, the same way. */
    DENSE_OP_ARGMAX = 22,
    /* ABI 1.15. The k best logits on the device, so that a sampled token step (top-k, then top-p,
     * min-p, temperature and the draw on the host) sends k (id, logit) pairs back instead of the
     * whole vocabulary's logits. src0: x F32 {n} contiguous, 1 <= n < 2^31. dst0: ids I32 {k};
     * dst1: values F32 {k}; 1 <= k <= DENSE_TOP_K_MAX; both contiguous, apart from x and from each
     * other. No params. The candidates are the elements that are neither NaN nor -inf, ordered by
     * value descending, equal values (float ==, so -0.0 ties +0.0) by the lower index first.
     * dst0[i], dst1[i] = the i-th candidate's index and its value exactly as x stores it (bit for
     * bit: a -0.0 stays -0.0) for i < min(k, candidates); the slots past the candidates hold id -1
     * and value -inf. No NaN is ever returned: the token step checks its logits for NaN/Inf
     * (CHECK_FINITE) just before, and a step that finds one fails before anyone samples.
     * Optional: where the device's packs lack it the executor copies the logits back and the host
     * takes the same k best. */
    DENSE_OP_TOP_K = 23,
    DENSE_OP_KIND_COUNT = 24
};

/* DENSE_OP_TOP_K: the largest k a call may ask for (ABI 1.15). */
#define DENSE_TOP_K_MAX 64

/* ---- what the host tells a pack about one device (filled by the host's probe) --------------- */
typedef struct dense_hw_desc {
    dense_abi_header hdr;
    uint32_t device_kind;  /* dense_device_kind */
    uint32_t device_index; /* CUDA ordinal; 0 for the CPU */
    char name[128];        /* NUL-terminated */
    uint64_t cpu_features; /* DENSE_CPU_* bits (CPU devices) */
    uint32_t cpu_logical_cores;
    uint32_t cuda_cc_major; /* compute capability, e.g. 9.0 for H200, 12.0 for RTX 50 */
    uint32_t cuda_cc_minor;
    uint32_t cuda_driver_version; /* cuDriverGetVersion(): 13000 for CUDA 13.0; 0 without a driver */
    uint32_t cuda_sm_count;
    uint32_t reserved0;
    uint64_t total_memory_bytes;
    uint64_t free_memory_bytes;
} dense_hw_desc;

/* ---- a view of one tensor (ggml convention: ne[0] contiguous, nb[] strides in bytes) -------- */
typedef struct dense_tensor_view {
    void* data;
    uint32_t type;         /* dense_type_id */
    uint32_t device_kind;  /* where data lives */
    uint32_t device_index;
    uint32_t reserved0;
    int64_t ne[4];
    int64_t nb[4];
} dense_tensor_view;

/* ---- one op invocation ---------------------------------------------------------------------- */
typedef struct dense_op_call {
    dense_abi_header hdr;
    uint32_t op_kind;
    uint32_t n_src;
    const dense_tensor_view* src;
    uint32_t n_dst;
    uint32_t reserved0;
    const dense_tensor_view* dst;
    const void* params;   /* op-specific struct starting with dense_abi_header, or NULL */
    void* stream;         /* opaque device stream (NULL on the CPU) */
    void* workspace;      /* scratch the host allocated per workspace_bytes(), or NULL */
    uint64_t workspace_bytes;
    uint32_t n_threads;   /* CPU ops: threads the host allows; 0 = pack decides */
    uint32_t reserved1;
} dense_op_call;

/* Per-op parameter structs. */
typedef struct dense_embed_row_params {
    dense_abi_header hdr;
    int64_t row;
} dense_embed_row_params;

/* dense_gemv_params.order (ABI 1.13; before it the field was reserved and 0). */
enum { DENSE_GEMM_ORDER_EXACT = 0, DENSE_GEMM_ORDER_FREE = 1 };

typedef struct dense_gemv_params {
    dense_abi_header hdr;
    uint32_t accumulate; /* non-zero: dst += W*x */
    uint32_t order;      /* GEMM_Q: DENSE_GEMM_ORDER_*; GEMV_Q ignores it */
} dense_gemv_params;

typedef struct dense_norm_params {
    dense_abi_header hdr;
    float eps;
    uint32_t reserved0;
} dense_norm_params;

enum { DENSE_ROPE_NEOX = 2 };
typedef struct dense_rope_params {
    dense_abi_header hdr;
    int32_t n_rot;     /* rotated dims per head (even, <= head_dim) */
    uint32_t mode;     /* DENSE_ROPE_NEOX */
    float freq_base;   /* theta base, e.g. 1e7 */
    float freq_scale;  /* 1 = no scaling */
} dense_rope_params;

typedef struct dense_attn_params {
    dense_abi_header hdr;
    float scale;       /* usually 1/sqrt(head_dim) */
    uint32_t reserved0;
} dense_attn_params;

typedef struct dense_conv_params {
    dense_abi_header hdr;
    uint32_t apply_silu;
    uint32_t reserved0;
} dense_conv_params;

typedef struct dense_gdn_params {
    dense_abi_header hdr;
    float scale;       /* query scale, 1/sqrt(dk) */
    uint32_t reserved0;
} dense_gdn_params;

/* ABI 1.11, DENSE_OP_GDN_STEP: the four calls' params in one struct. */
typedef struct dense_gdn_step_params {
    dense_abi_header hdr;
    float scale;         /* GDN_DECODE's query scale */
    float l2_eps;        /* L2_NORM's eps */
    uint32_t apply_silu; /* CONV1D_CAUSAL's */
    uint32_t reserved0;
} dense_gdn_step_params;

/* ABI 1.11, DENSE_OP_ATTN_PREP: the norms' eps and ROPE's params in one struct. */
typedef struct dense_attn_prep_params {
    dense_abi_header hdr;
    float eps;         /* RMS_NORM's */
    int32_t n_rot;     /* ROPE's, as dense_rope_params */
    uint32_t mode;
    float freq_base;
    float freq_scale;
    uint32_t reserved0;
} dense_attn_prep_params;

/* ---- what a pack registers -------------------------------------------------------------------- */
typedef struct dense_op_impl {
    dense_abi_header hdr;
    uint32_t op_kind;      /* dense_op_kind */
    uint32_t weight_type;  /* dense_type_id, DENSE_TYPE_NONE if the op has no weight */
    uint32_t act_type;     /* activation type it consumes, DENSE_TYPE_NONE if not applicable */
    uint32_t device_kind;  /* dense_device_kind it runs on */
    int32_t priority;      /* higher wins among candidates with the same key */
    uint32_t reserved0;
    const char* name;      /* pack-owned, static */
    void* user;            /* pack-owned context passed back to the callbacks */
    /* May be NULL (= supports everything under its key). Returns non-zero if this impl can run call. */
    uint32_t (*supports)(void* user, const dense_op_call* call);
    dense_status (*run)(void* user, const dense_op_call* call);
    /* May be NULL (= needs no workspace). */
    uint64_t (*workspace_bytes)(void* user, const dense_op_call* call);
} dense_op_impl;

/* A quantization format the core does not know. Registered during init; the host assigns an id. */
typedef struct dense_type_traits {
    dense_abi_header hdr;
    const char* name;          /* namespaced, e.g. "example.q4_m64" ; pack-owned, static */
    uint32_t block_elements;   /* elements per block (ne[0] must be a multiple) */
    uint32_t block_bytes;      /* bytes per block */
    uint32_t act_type;         /* activation type its GEMV pairs with (like ggml's vec_dot_type) */
    uint32_t reserved0;
    /* Optional exact dequantizer for n_elements (a multiple of block_elements). */
    void (*to_float)(const void* blocks, float* out, int64_t n_elements);
} dense_type_traits;

typedef struct dense_host_api {
    dense_abi_header hdr;
    void* host; /* opaque; pass back to every callback */
    void (*log)(void* host, dense_log_level level, const char* message);
    dense_status (*register_type)(void* host, const dense_type_traits* traits, dense_type_id* out_id);
    dense_status (*register_op)(void* host, const dense_op_impl* impl);
    /* Look up a type id by name ("q4_k", or a namespaced runtime format). */
    dense_status (*find_type)(void* host, const char* name, dense_type_id* out_id);
} dense_host_api;

/* Memory and streams on a device; provided by device (GPU) packs, NULL for CPU packs. */
typedef struct dense_device_api {
    dense_abi_header hdr;
    dense_status (*alloc)(void* user, uint32_t device_index, uint64_t bytes, void** out_ptr);
    void (*free)(void* user, uint32_t device_index, void* ptr);
    dense_status (*copy_to_device)(void* user, uint32_t device_index, void* dst, const void* src,
                                   uint64_t bytes, void* stream);
    dense_status (*copy_to_host)(void* user, uint32_t device_index, void* dst, const void* src,
                                 uint64_t bytes, void* stream);
    dense_status (*stream_create)(void* user, uint32_t device_index, void** out_stream);
    void (*stream_destroy)(void* user, uint32_t device_index, void* stream);
    dense_status (*stream_sync)(void* user, uint32_t device_index, void* stream);
    dense_status (*mem_info)(void* user, uint32_t device_index, uint64_t* free_bytes, uint64_t* total_bytes);
    /* ---- ABI 1.1 (absent from 1.0 packs: a host reads them only when struct_size covers them, and
     * treats NULL as "not available"). All are asynchronous on `stream` unless said otherwise. */
    /* dst = src within device memory; also the bench's copy-bandwidth probe. */
    dense_status (*copy_on_device)(void* user, uint32_t device_index, void* dst, const void* src, uint64_t bytes,
                                   void* stream);
    /* bytes at dst = value (a byte). */
    dense_status (*memset_async)(void* user, uint32_t device_index, void* dst, uint32_t value, uint64_t bytes,
                                 void* stream);
    /* Record everything the ops enqueue on `stream` between begin and end into a replayable graph
     * (a CUDA graph): nothing runs while capturing. `*out_graph` is pack-owned until graph_destroy. */
    dense_status (*capture_begin)(void* user, uint32_t device_index, void* stream);
    dense_status (*capture_end)(void* user, uint32_t device_index, void* stream, void** out_graph);
    dense_status (*graph_launch)(void* user, uint32_t device_index, void* graph, void* stream);
    void (*graph_destroy)(void* user, uint32_t device_index, void* graph);
    /* ---- ABI 1.3 (NULL in older packs: the host then uses plain host memory and has no profile).
     * Page-locked host memory: copies from and to it are truly asynchronous and run at the bus's
     * full speed (the step's inputs and logits). Synchronous; freed with host_free. */
    dense_status (*host_alloc)(void* user, uint32_t device_index, uint64_t bytes, void** out_ptr);
    void (*host_free)(void* user, uint32_t device_index, void* ptr);
    /* Timing marks (CUDA events): `count` marks recorded on a stream, the time between two of them
     * read after they completed (marks_elapsed_ms waits for `to`). For the bench's per-op profile. */
    dense_status (*marks_create)(void* user, uint32_t device_index, uint32_t count, void** out_marks);
    dense_status (*mark_record)(void* user, uint32_t device_index, void* marks, uint32_t index, void* stream);
    dense_status (*marks_elapsed_ms)(void* user, uint32_t device_index, void* marks, uint32_t from, uint32_t to,
                                     float* out_ms);
    void (*marks_destroy)(void* user, uint32_t device_index, void* marks);
    /* ---- ABI 1.4 (NULL in older packs: the host then cannot run a row split on this device).
     * Run fn(arg) on a host thread once the work enqueued before it on `stream` is done; the work
     * enqueued after it waits until fn returns (cudaLaunchHostFunc). Capturable into a graph, where
     * it runs at every launch. fn must not call the device API. */
    dense_status (*launch_host_fn)(void* user, uint32_t device_index, void (*fn)(void* arg), void* arg, void* stream);
    /* ---- ABI 1.5 (NULL in older packs: a row split's activations and CPU results then cross by copy,
     * and token_embd stays in VRAM when the weights do not fit).
     * Page-locked host memory that the device's kernels read and write in place over the bus
     * (cudaHostAlloc, mapped): *out_host_ptr is where the host sees it, *out_device_ptr where kernels
     * see the same bytes. Synchronous; freed with host_free. */
    dense_status (*host_alloc_mapped)(void* user, uint32_t device_index, uint64_t bytes, void** out_host_ptr,
                                      const void** out_device_ptr);
    /* ---- ABI 1.6 (NULL in older packs: the host then copies no weight rows beside the step).
     * Events order work on two streams of one device (cudaEvent, timing off): what a stream enqueues
     * after stream_wait_event(stream, e) waits for the work enqueued before the latest
     * event_record(e, other) at the time of the wait. Both are capturable: a stream that waits on an
     * event recorded on a capturing stream joins its capture. How weight rows in page-locked host
     * memory are copied on a second stream while the step runs (the host's "bus staging"). */
    dense_status (*event_create)(void* user, uint32_t device_index, void** out_event);
    void (*event_destroy)(void* user, uint32_t device_index, void* event);
    dense_status (*event_record)(void* user, uint32_t device_index, void* event, void* stream);
    dense_status (*stream_wait_event)(void* user, uint32_t device_index, void* stream, void* event);
    /* ---- ABI 1.7 (NULL in older packs: a row split's CPU parts are then started and joined by
     * launch_host_fn).
     * Stream memory operations on a 32-bit word of mapped host memory (its device pointer from
     * host_alloc_mapped, 4-byte aligned): stream_write_u32 writes `value` there once the work enqueued
     * before it on `stream` is done, after that work's writes (system-wide fence); stream_wait_u32
     * makes the work enqueued after it on `stream` wait until the word equals `value`
     * (cuStreamWriteValue32 / cuStreamWaitValue32). Both capturable (a graph writes and waits at every
     * launch). The host polls and writes the same word: a row split's CPU parts are handed over this
     * way without a host function on the step's path. */
    dense_status (*stream_write_u32)(void* user, uint32_t device_index, void* stream, const void* device_word,
                                     uint32_t value);
    dense_status (*stream_wait_u32)(void* user, uint32_t device_index, void* stream, const void* device_word,
                                    uint32_t value);
} dense_device_api;

typedef struct dense_pack {
    dense_abi_header hdr;
    const char* name;        /* "cuda-sm90", "cpu-ref", "example-q4m64"; pack-owned */
    const char* version;     /* the pack's own version string */
    uint32_t device_kind;    /* dense_device_kind the pack's ops run on */
    uint32_t reserved0;
    const dense_device_api* device; /* NULL for CPU packs */
    void* user;              /* pack-owned state */
} dense_pack;

/* ---- the three exports ------------------------------------------------------------------------
 * dense_pack_score(hw):   0 = cannot run on this device; higher = better. Must not create a CUDA
 *                         context or allocate device memory. score(NULL) returns
 *                         DENSE_ABI_ENCODE_VERSION(major, minor) of the ABI the pack was built with.
 * dense_pack_init(host, out): register types and ops through host, return the pack object.
 * dense_pack_release(pack):   destroy what init created. */
typedef uint32_t (*dense_pack_score_fn)(const dense_hw_desc* hw);
typedef dense_status (*dense_pack_init_fn)(const dense_host_api* host, dense_pack** out_pack);
typedef void (*dense_pack_release_fn)(dense_pack* pack);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DENSE_ABI_H */
