#include "text/chat_template.hpp"

#include "core/error.hpp"
#include "text/utf8.hpp"

#include <algorithm>
#include <string_view>

namespace dense::text {

namespace {

// Python's str.isspace(), which Jinja's |trim uses (it calls str.strip()).
bool is_python_space(char32_t cp) {
    return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
           cp == 0x3000;
}

// Code point at the start of s (strictly valid UTF-8) and its length; an invalid byte counts as one
// non-space code point of length 1, so such bytes are kept as they are.
char32_t first_code_point(std::string_view s, size_t& length) {
    length = strict_utf8_sequence_length(s);
    if (length == 0) {
        length = 1;
        return kReplacementChar;
    }
    const auto b0 = static_cast<unsigned char>(s[0]);
    if (length == 1) return b0;
    static constexpr unsigned kLeadMask[5] = {0, 0, 0x1F, 0x0F, 0x07};
    char32_t cp = b0 & kLeadMask[length];
    for (size_t k = 1; k < length; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[k]) & 0x3Fu);
    return cp;
}

// Jinja |trim on UTF-8 text: strips leading and trailing whitespace code points; the rest stays
// byte-identical.
std::string trim(std::string_view s) {
    size_t begin = s.size(), end = 0;
    for (size_t i = 0; i < s.size();) {
        size_t len = 0;
        const char32_t cp = first_code_point(s.substr(i), len);
        if (!is_python_space(cp)) {
            begin = std::min(begin, i);
            end = i + len;
        }
        i += len;
    }
    return begin < end ? std::string(s.substr(begin, end - begin)) : std::string();
}

std::string_view strip_leading_newlines(std::string_view s) {
    while (!s.empty() && s.front() == '\n') s.remove_prefix(1);
    return s;
}

std::string_view strip_trailing_newlines(std::string_view s) {
    while (!s.empty() && s.back() == '\n') s.remove_suffix(1);
    return s;
}

bool is_tool_response(std::string_view trimmed) {
    constexpr std::string_view open = "<tool_response>", close = "</tool_response>";
    return trimmed.starts_with(open) && trimmed.ends_with(close);
}

[[noreturn]] void fail(const std::string& what) { throw Error(ErrorKind::Usage, "chat template: " + what); }

// Index of the last user message that is a real query (not a wrapped tool response).
size_t last_query_index(std::span<const ChatMessage> messages) {
    for (size_t i = messages.size(); i-- > 0;) {
        if (messages[i].role == "user" && !is_tool_response(trim(messages[i].content))) return i;
    }
    fail("no user query found in the messages");
}

void render_assistant(const ChatMessage& m, std::string content, bool keep_reasoning, std::string& out) {
    std::string reasoning;
    if (m.reasoning_content) {
        reasoning = *m.reasoning_content;
    } else if (const size_t close = content.find("</think>"); close != std::string::npos) {
        std::string_view before = strip_trailing_newlines(std::string_view(content).substr(0, close));
        if (const size_t open = before.rfind("<think>"); open != std::string_view::npos) {
            before.remove_prefix(open + std::string_view("<think>").size());
        }
        reasoning = std::string(strip_leading_newlines(before));
        const size_t last_close = content.rfind("</think>");
        content = std::string(strip_leading_newlines(std::string_view(content).substr(last_close + 8)));
    }
    reasoning = trim(reasoning);
    out += "<|im_start|>assistant\n";
    if (keep_reasoning) out += "<think>\n" + reasoning + "\n</think>\n\n";
    out += content;
    out += "<|im_end|>\n";
}

}  // namespace

std::string render_qwen35_chat(std::span<const ChatMessage> messages, const ChatTemplateOptions& options) {
    if (messages.empty()) fail("no messages provided");
    std::string out;
    if (messages[0].role == "system") out += "<|im_start|>system\n" + trim(messages[0].content) + "<|im_end|>\n";
    const size_t last_query = last_query_index(messages);

    for (size_t i = 0; i < messages.size(); ++i) {
        const ChatMessage& m = messages[i];
        std::string content = trim(m.content);
        if (m.role == "system") {
            if (i != 0) fail("the system message must be the first message (found at index " + std::to_string(i) + ")");
        } else if (m.role == "user") {
            out += "<|im_start|>user\n" + content + "<|im_end|>\n";
        } else if (m.role == "assistant") {
            render_assistant(m, std::move(content), i > last_query, out);
        } else if (m.role == "tool") {
            if (i > 0 && messages[i - 1].role != "tool") out += "<|im_start|>user";
            out += "\n<tool_response>\n" + content + "\n</tool_response>";
            if (i + 1 == messages.size() || messages[i + 1].role != "tool") out += "<|im_end|>\n";
        } else {
            fail("unexpected message role '" + m.role + "' at index " + std::to_string(i));
        }
    }
    if (options.add_generation_prompt) {
        out += "<|im_start|>assistant\n";
        out += options.enable_thinking ? "<think>\n" : "<think>\n\n</think>\n\n";
    }
    return out;
}

}  // namespace dense::text
