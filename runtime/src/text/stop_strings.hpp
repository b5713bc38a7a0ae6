// Stop conditions for generation.
//
// StopStringMatcher finds user stop strings in the decoded text stream. Text that might be the start of a
// stop string is held back until it is clear, so a stop string is never printed, even when it arrives
// spread over several tokens:
//   push("Hello <") -> "Hello "   ("<" could start "<end>")
//   push("en")      -> ""        (holds "<en")
//   push("d> more") -> stopped, emits ""   (the text before the match was already emitted)
// After a stop, everything from the stop string on is dropped. flush() releases the held text when the
// stream ends without a stop.
//
// TextStream ties the pieces together for a generation loop: token id -> bytes (Tokenizer) -> complete
// UTF-8 (Utf8StreamDecoder) -> stop strings; it also stops on end-of-generation tokens (EOS, <|im_end|>,
// ... see Tokenizer::eog_ids), which are never printed.
#pragma once

#include "text/tokenizer.hpp"
#include "text/utf8_stream.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dense::text {

class StopStringMatcher {
public:
    // Empty strings are ignored.
    explicit StopStringMatcher(std::vector<std::string> stops);

    struct Result {
        std::string text;      // safe to show now
        bool stopped = false;  // a stop string was completed; `text` ends right before it
        std::string matched;   // which one (when stopped)
    };

    Result push(std::string_view text);
    std::string flush();  // held text at the end of a stream without a stop
    bool stopped() const noexcept { return stopped_; }

private:
    size_t holdback_length() const;  // longest suffix of pending_ that is a proper prefix of a stop

    std::vector<std::string> stops_;
    std::string pending_;
    bool stopped_ = false;
};

enum class StopReason { None, EndOfGeneration, StopString };

class TextStream {
public:
    // stop_ids: extra ids to stop on besides the tokenizer's end-of-generation ids.
    TextStream(const Tokenizer& tokenizer, std::vector<std::string> stop_strings, std::vector<int32_t> stop_ids = {});

    struct Step {
        std::string text;  // to show now
        StopReason stop = StopReason::None;
    };

    // Feed one generated token. After a stop, further calls return nothing and keep the reason.
    Step push(int32_t token);
    // End of stream without a stop: held bytes/text (an unfinished UTF-8 character becomes U+FFFD).
    std::string finish();

private:
    const Tokenizer* tokenizer_;
    std::vector<int32_t> stop_ids_;
    Utf8StreamDecoder utf8_;
    StopStringMatcher matcher_;
    StopReason reason_ = StopReason::None;
};

}  // namespace dense::text
