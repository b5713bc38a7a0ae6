// The callbacks packs call during (and, for `log`, after) dense_pack_init. They are C entry points:
// nothing may be thrown out of them, so each catches everything and answers with a status code.
#include "core/error.hpp"
#include "core/type_table.hpp"
#include "packs/abi_struct_copy.hpp"
#include "packs/op_registry.hpp"
#include "packs/pack_library.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace dense::packs {
namespace {

HostContext* context(void* host) {
    return static_cast<HostContext*>(host);
}

// Records why a registration was refused: the pack gets a status code, the host keeps the text so
// a failing init can be reported with it in its one refusal line.
dense_status reject(HostContext* ctx, dense_status status, const std::string& why) {
    spdlog::debug("[{}] registration rejected: {}", ctx->log_name, why);
    ctx->rejected.push_back(why);
    return status;
}

// A registration after init has returned: the registries are built and may be in use, so it is
// refused. Not recorded in `rejected` (that list belongs to init, and this may come from any thread).
dense_status too_late(HostContext* ctx, const char* what) {
    spdlog::warn("[{}] {} called after dense_pack_init returned: ignored", ctx->log_name, what);
    return DENSE_E_INVALID_ARGUMENT;
}

void host_log(void* host, dense_log_level level, const char* message) noexcept {
    try {
        const HostContext* ctx = context(host);
        const char* name = ctx != nullptr ? ctx->log_name.c_str() : "pack";
        const char* text = message != nullptr ? message : "(null)";
        switch (level) {
            case DENSE_LOG_DEBUG:
                spdlog::debug("[{}] {}", name, text);
                break;
            case DENSE_LOG_INFO:
                spdlog::info("[{}] {}", name, text);
                break;
            case DENSE_LOG_WARN:
                spdlog::warn("[{}] {}", name, text);
                break;
            default:
                spdlog::error("[{}] {}", name, text);
                break;
        }
    } catch (...) {  // a logger failure must not cross the C boundary
    }
}

dense_status host_register_type(void* host, const dense_type_traits* traits, dense_type_id* out_id) noexcept {
    HostContext* ctx = context(host);
    if (ctx == nullptr) return DENSE_E_INVALID_ARGUMENT;
    try {
        PackLibrary* staging = ctx->staging.load();
        if (staging == nullptr) return too_late(ctx, "register_type");
        if (out_id == nullptr) return reject(ctx, DENSE_E_INVALID_ARGUMENT, "register_type: out_id is NULL");
        if (std::string why = check_pack_struct(traits, kAbi10TypeTraitsSize, "dense_type_traits"); !why.empty())
            return reject(ctx, DENSE_E_ABI, "register_type: " + why);
        const dense_type_traits t = copy_pack_struct(*traits);
        if (t.name == nullptr) return reject(ctx, DENSE_E_INVALID_ARGUMENT, "register_type: name is NULL");
        const std::string name = t.name;
        TypeTable& table = global_type_table();
        StagedType staged;
        staged.type = {DENSE_TYPE_NONE, name, t.block_elements, t.block_bytes, t.act_type, t.to_float};
        if (const TypeInfo* existing = table.find(name); existing != nullptr) {
            // Packs built from the same sources (cuda-sm90 / cuda-sm120) register the same format:
            // an identical definition shares the id, a different one is a clash.
            if (existing->builtin || existing->block_elements != t.block_elements ||
                existing->block_bytes != t.block_bytes || existing->act_type != t.act_type)
                return reject(ctx, DENSE_E_INVALID_ARGUMENT,
                              "register_type: '" + name + "' is already registered with a different definition");
            staged.type.id = existing->id;
        } else {
            staged.type.id = table.register_runtime(name, t.block_elements, t.block_bytes, t.act_type);
            staged.created = true;
        }
        staging->types.push_back(staged);
        *out_id = staged.type.id;
        return DENSE_OK;
    } catch (const Error& e) {
        return reject(ctx, DENSE_E_INVALID_ARGUMENT, std::string("register_type: ") + e.what());
    } catch (...) {
        return DENSE_E_INTERNAL;
    }
}

dense_status host_register_op(void* host, const dense_op_impl* impl) noexcept {
    HostContext* ctx = context(host);
    if (ctx == nullptr) return DENSE_E_INVALID_ARGUMENT;
    try {
        PackLibrary* staging = ctx->staging.load();
        if (staging == nullptr) return too_late(ctx, "register_op");
        if (std::string why = OpRegistry::validate(impl); !why.empty())
            return reject(
                ctx, impl != nullptr && impl->hdr.abi_major != DENSE_ABI_MAJOR ? DENSE_E_ABI : DENSE_E_INVALID_ARGUMENT,
                "register_op: " + why);
        auto& ops = staging->ops;
        ops.push_back(copy_pack_struct(*impl));
        auto& staged = ops.back();
        staged.hdr.struct_size =
            std::min<uint32_t>(impl->hdr.struct_size, static_cast<uint32_t>(sizeof(dense_op_impl)));
        return DENSE_OK;
    } catch (...) {
        return DENSE_E_INTERNAL;
    }
}

dense_status host_find_type(void* /*host*/, const char* name, dense_type_id* out_id) noexcept {
    if (name == nullptr || out_id == nullptr) return DENSE_E_INVALID_ARGUMENT;
    try {
        const TypeInfo* t = global_type_table().find(std::string_view(name));
        if (t == nullptr) return DENSE_E_UNSUPPORTED;
        *out_id = t->id;
        return DENSE_OK;
    } catch (...) {
        return DENSE_E_INTERNAL;
    }
}

}  // namespace

HostContext* make_host_context(const std::string& log_name) {
    // Intentionally leaked: see HostContext.
    auto* ctx = new HostContext;
    ctx->log_name = log_name;
    ctx->api.hdr.abi_major = static_cast<uint16_t>(DENSE_ABI_MAJOR);
    ctx->api.hdr.abi_minor = static_cast<uint16_t>(DENSE_ABI_MINOR);
    ctx->api.hdr.struct_size = static_cast<uint32_t>(sizeof(dense_host_api));
    ctx->api.host = ctx;
    ctx->api.log = host_log;
    ctx->api.register_type = host_register_type;
    ctx->api.register_op = host_register_op;
    ctx->api.find_type = host_find_type;
    return ctx;
}

}  // namespace dense::packs
