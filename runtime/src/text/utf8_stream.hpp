// Incremental UTF-8 decoder for streamed token pieces: a token may end in the middle of a multi-byte
// character (byte-level BPE), so printing each piece as it comes would show broken characters.
//
//   Utf8StreamDecoder dec;
//   std::cout << dec.push(tokenizer.token_piece(id));   // only complete, valid UTF-8
//   ...
//   std::cout << dec.flush();                           // at the end: whatever is still held
//
// push() holds back a trailing incomplete-but-still-valid prefix (at most 3 bytes) until the bytes that
// complete it arrive. Bytes that can never become valid UTF-8 are replaced by U+FFFD (one per byte that
// fails, the next byte is retried), so the output is always valid UTF-8. flush() turns a held prefix
// into one U+FFFD (the stream ended inside a character) and resets the decoder.
#pragma once

#include <string>
#include <string_view>

namespace dense::text {

class Utf8StreamDecoder {
public:
    std::string push(std::string_view bytes);
    std::string flush();
    // Bytes currently held back (0..3).
    size_t pending() const noexcept { return held_.size(); }

private:
    std::string held_;
};

}  // namespace dense::text
