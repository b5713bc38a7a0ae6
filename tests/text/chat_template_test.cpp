// Expected strings were generated once with Python jinja2 3.1.6 rendering tests/data/Qwen3.5-4B.jinja
// (ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True), as transformers does) with the
// same messages, add_generation_prompt and enable_thinking, and pasted here as literals.
#include "text/chat_template.hpp"

#include "core/error.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace dense::text {
namespace {

ChatMessage S(std::string c) { return {"system", std::move(c), std::nullopt}; }
ChatMessage U(std::string c) { return {"user", std::move(c), std::nullopt}; }
ChatMessage A(std::string c) { return {"assistant", std::move(c), std::nullopt}; }
ChatMessage A(std::string c, std::string reasoning) { return {"assistant", std::move(c), std::move(reasoning)}; }
ChatMessage T(std::string c) { return {"tool", std::move(c), std::nullopt}; }

std::string render(const std::vector<ChatMessage>& m, bool generation_prompt, bool thinking) {
    return render_qwen35_chat(m, ChatTemplateOptions{generation_prompt, thinking});
}

TEST(ChatTemplate, SingleUserTurn) {
    EXPECT_EQ(render({U("Hi")}, true, true), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n");
}

TEST(ChatTemplate, SystemAndUserThinkingOff) {
    EXPECT_EQ(render({S("You are helpful."), U("What is 2+2?")}, true, false),
              "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
              "<|im_start|>assistant\n<think>\n\n</think>\n\n");
}

TEST(ChatTemplate, MultiTurnHistoryDropsReasoning) {
    EXPECT_EQ(render({S("Be brief."), U("Hello"), A("<think>\nThe user greets.\n</think>\n\nHi there!"), U("How are you?")},
                     true, true),
              "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n"
              "Hi there!<|im_end|>\n<|im_start|>user\nHow are you?<|im_end|>\n<|im_start|>assistant\n<think>\n");
}

TEST(ChatTemplate, MultiTurnThinkingOff) {
    EXPECT_EQ(render({U("One"), A("First answer"), U("Two"), A("Second answer"), U("Three")}, true, false),
              "<|im_start|>user\nOne<|im_end|>\n<|im_start|>assistant\nFirst answer<|im_end|>\n<|im_start|>user\n"
              "Two<|im_end|>\n<|im_start|>assistant\nSecond answer<|im_end|>\n<|im_start|>user\nThree<|im_end|>\n"
              "<|im_start|>assistant\n<think>\n\n</think>\n\n");
}

TEST(ChatTemplate, AgentTurnKeepsReasoningNoPrompt) {
    EXPECT_EQ(render({U("Solve x+1=3"), A("<think>\nSubtract 1.\n</think>\n\nx = 2")}, false, true),
              "<|im_start|>user\nSolve x+1=3<|im_end|>\n<|im_start|>assistant\n<think>\nSubtract 1.\n</think>\n\n"
              "x = 2<|im_end|>\n");
}

TEST(ChatTemplate, ReasoningContentField) {
    EXPECT_EQ(render({U("Q"), A("The answer.", "Because reasons.  ")}, false, true),
              "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think>\nBecause reasons.\n</think>\n\n"
              "The answer.<|im_end|>\n");
}

TEST(ChatTemplate, TrimsUnicodeWhitespace) {
    EXPECT_EQ(render({S("  \xE3\x80\x80sys\xC2\xA0 "), U("\n\n  spaced out\t \n"), A("  plain  ")}, true, true),
              "<|im_start|>system\nsys<|im_end|>\n<|im_start|>user\nspaced out<|im_end|>\n<|im_start|>assistant\n"
              "<think>\n\n</think>\n\nplain<|im_end|>\n<|im_start|>assistant\n<think>\n");
}

TEST(ChatTemplate, ToolResponses) {
    EXPECT_EQ(render({U("Weather?"), A("Let me check."), T("sunny"), T("22C"), A("<think>ok</think>It is sunny, 22C.")},
                     true, true),
              "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nLet me check."
              "<|im_end|>\n<|im_start|>user\n<tool_response>\nsunny\n</tool_response>\n<tool_response>\n22C\n"
              "</tool_response><|im_end|>\n<|im_start|>assistant\n<think>\nok\n</think>\n\nIt is sunny, 22C.<|im_end|>\n"
              "<|im_start|>assistant\n<think>\n");
}

TEST(ChatTemplate, WrappedToolResponseIsNotAQuery) {
    EXPECT_EQ(render({U("Start"), A("<think>a</think>\n\nb"), U("<tool_response>\nx\n</tool_response>")}, true, true),
              "<|im_start|>user\nStart<|im_end|>\n<|im_start|>assistant\n<think>\na\n</think>\n\nb<|im_end|>\n"
              "<|im_start|>user\n<tool_response>\nx\n</tool_response><|im_end|>\n<|im_start|>assistant\n<think>\n");
}

TEST(ChatTemplate, EmptyReasoningAfterLastQuery) {
    EXPECT_EQ(render({U("Hi"), A("Hello!")}, true, false),
              "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nHello!<|im_end|>\n"
              "<|im_start|>assistant\n<think>\n\n</think>\n\n");
}

TEST(ChatTemplate, NestedThinkTags) {
    EXPECT_EQ(render({U("q"), A("<think>outer<think>\n\ninner\n\n</think>\n\nmid</think>\n\nfinal")}, false, true),
              "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>\ninner\n</think>\n\nfinal<|im_end|>\n");
}

// The template's raise_exception cases.
TEST(ChatTemplate, Errors) {
    const auto expect_error = [](const std::vector<ChatMessage>& m, const std::string& needle) {
        try {
            (void)render_qwen35_chat(m);
            ADD_FAILURE() << "no error, expected '" << needle << "'";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Usage);
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
    };
    expect_error({}, "no messages");
    expect_error({U("a"), S("late")}, "system message must be the first");
    expect_error({S("only")}, "no user query");
    expect_error({{"narrator", "x", std::nullopt}, U("a")}, "narrator");
}

}  // namespace
}  // namespace dense::text
