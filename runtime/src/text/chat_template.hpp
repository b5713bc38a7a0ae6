// The Qwen3.5 chat template (tests/data/Qwen3.5-4B.jinja, shipped as tokenizer.chat_template) rendered
// directly in C++ for text-only chats: no Jinja engine, no tools, no images. What it reproduces:
//
//  * Every message's content is trimmed (Python str.strip(): Unicode whitespace) before use.
//  * A first message with role "system" becomes "<|im_start|>system\n{content}<|im_end|>\n"; a system
//    message anywhere else is an error. No default system prompt is added.
//  * user:  "<|im_start|>user\n{content}<|im_end|>\n"
//  * assistant: the reasoning is `reasoning_content` if set, else (if the content contains "</think>")
//    the text before the first "</think>" (trailing newlines removed) after its last "<think>" (leading
//    newlines removed), and the content becomes the text after the last "</think>" (leading newlines
//    removed); the reasoning is then trimmed. Assistant turns after the last real user message (the
//    current agent turn) keep it: "<|im_start|>assistant\n<think>\n{reasoning}\n</think>\n\n{content}";
//    earlier ones drop it: "<|im_start|>assistant\n{content}". Each ends with "<|im_end|>\n".
//  * tool: consecutive tool messages form one user turn:
//    "<|im_start|>user" + per message "\n<tool_response>\n{content}\n</tool_response>" + "<|im_end|>\n".
//    A user message whose trimmed content is wrapped in <tool_response>...</tool_response> does not
//    count as the "last user message".
//  * add_generation_prompt appends "<|im_start|>assistant\n<think>\n", or with thinking disabled
//    "<|im_start|>assistant\n<think>\n\n</think>\n\n" (an empty, closed think block).
//
// Errors (dense::Error, ErrorKind::Usage): no messages, a system message not first, an unknown role,
// no real user message.
#pragma once

#include <optional>
#include <span>
#include <string>

namespace dense::text {

struct ChatMessage {
    std::string role;                              // "system", "user", "assistant" or "tool"
    std::string content;
    std::optional<std::string> reasoning_content;  // assistant only; wins over <think> in content
};

struct ChatTemplateOptions {
    bool add_generation_prompt = true;
    bool enable_thinking = true;
};

std::string render_qwen35_chat(std::span<const ChatMessage> messages, const ChatTemplateOptions& options = {});

}  // namespace dense::text
