#include "text/utf8_stream.hpp"

#include "text/utf8.hpp"

namespace dense::text {

namespace {
constexpr std::string_view kReplacementUtf8 = "\xEF\xBF\xBD";
}

std::string Utf8StreamDecoder::push(std::string_view bytes) {
    std::string buf;
    buf.reserve(held_.size() + bytes.size());
    buf.append(held_);
    buf.append(bytes);
    held_.clear();

    std::string out;
    out.reserve(buf.size());
    std::string_view rest(buf);
    while (!rest.empty()) {
        const size_t len = strict_utf8_sequence_length(rest);
        if (len != 0) {
            out.append(rest.substr(0, len));
            rest.remove_prefix(len);
        } else if (is_incomplete_utf8_prefix(rest)) {
            held_.assign(rest);  // only possible at the very end: wait for more bytes
            break;
        } else {
            out.append(kReplacementUtf8);
            rest.remove_prefix(1);
        }
    }
    return out;
}

std::string Utf8StreamDecoder::flush() {
    std::string out;
    if (!held_.empty()) out.assign(kReplacementUtf8);
    held_.clear();
    return out;
}

}  // namespace dense::text
