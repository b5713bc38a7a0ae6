// A varied, seeded test corpus assembled in code (no data files): code, CJK, emoji with ZWJ sequences
// and skin tones, many scripts, whitespace runs, numbers, contractions, punctuation runs, mixed scripts
// and random code points from many Unicode blocks. Used to compare our tokenizer with llama.cpp's.
#pragma once

#include "text/utf8.hpp"

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dense::text::test {

class CorpusGenerator {
public:
    explicit CorpusGenerator(uint64_t seed) : rng_(seed) {}

    // One line of a randomly chosen kind (may contain \n, \r, \t and other whitespace inside).
    std::string line() {
        switch (pick(12)) {
            case 0: return code_line();
            case 1: return cjk_text();
            case 2: return emoji_text();
            case 3: return script_text();
            case 4: return whitespace_mix();
            case 5: return numbers();
            case 6: return contractions();
            case 7: return punctuation_runs();
            case 8: return random_code_points(1 + pick(40));
            case 9: return mixed();
            case 10: return combining_marks();
            default: return mixed() + whitespace_run() + mixed();
        }
    }

    // Random code points from many blocks (letters, marks, numbers, symbols, private use, unassigned,
    // CJK Extension I, controls); no surrogates (not encodable as valid UTF-8).
    std::string random_code_points(size_t n) {
        static constexpr std::array<std::pair<char32_t, char32_t>, 52> kBlocks = {{
            {0x0000, 0x001F}, {0x0020, 0x007E}, {0x007F, 0x00BF}, {0x00C0, 0x024F}, {0x0250, 0x02FF},
            {0x0300, 0x036F}, {0x0370, 0x03FF}, {0x0400, 0x052F}, {0x0530, 0x058F}, {0x0590, 0x05FF},
            {0x0600, 0x06FF}, {0x0700, 0x08FF}, {0x0900, 0x097F}, {0x0980, 0x0BFF}, {0x0C00, 0x0DFF},
            {0x0E00, 0x0EFF}, {0x0F00, 0x0FFF}, {0x1000, 0x10FF}, {0x1100, 0x11FF}, {0x1200, 0x139F},
            {0x1680, 0x169F}, {0x1780, 0x17FF}, {0x1800, 0x18AF}, {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF},
            {0x1E00, 0x1FFF}, {0x2000, 0x206F}, {0x2070, 0x20CF}, {0x20D0, 0x20FF}, {0x2100, 0x24FF},
            {0x2500, 0x27BF}, {0x2800, 0x2BFF}, {0x2E80, 0x2FFF}, {0x3000, 0x30FF}, {0x3100, 0x33FF},
            {0x3400, 0x4DBF}, {0x4E00, 0x9FFF}, {0xA000, 0xABFF}, {0xAC00, 0xD7FF}, {0xE000, 0xF8FF},
            {0xF900, 0xFFFF}, {0x10000, 0x1034F}, {0x10380, 0x10FFF}, {0x11000, 0x11FFF}, {0x16800, 0x16FFF},
            {0x1D000, 0x1D7FF}, {0x1E800, 0x1EFFF}, {0x1F000, 0x1FAFF}, {0x20000, 0x2A6DF}, {0x2EBE0, 0x2EE6F},
            {0x30000, 0x3134F}, {0xE0000, 0x10FFFF},
        }};
        std::string out;
        for (size_t i = 0; i < n; ++i) {
            const auto& [lo, hi] = kBlocks[pick(kBlocks.size())];
            char32_t cp = lo + static_cast<char32_t>(pick(hi - lo + 1));
            if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;
            append_utf8(out, cp);
        }
        return out;
    }

    std::string whitespace_run() {
        static constexpr std::array<std::string_view, 14> kWs = {
            " ", " ", " ", "\t", "\n", "\r", "\r\n", "\v", "\f", "\xC2\xA0", "\xE3\x80\x80", "\xE2\x80\x89",
            "\xC2\x85", "\xE2\x80\xA8"};
        std::string out;
        const size_t n = 1 + pick(6);
        for (size_t i = 0; i < n; ++i) out += kWs[pick(kWs.size())];
        return out;
    }

    size_t pick(size_t n) { return static_cast<size_t>(rng_() % n); }

private:
    template <size_t N>
    std::string_view any(const std::array<std::string_view, N>& list) { return list[pick(N)]; }

    std::string code_line() {
        static constexpr std::array<std::string_view, 16> kCode = {
            "for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }",
            "def f(x, *args, **kwargs):\n    return x ** 2 if x else None",
            "const auto it = std::find_if(v.begin(), v.end(), [&](auto& e){ return e.id == 42; });",
            "if __name__ == \"__main__\":\n\tmain(sys.argv[1:])",
            "SELECT id, name FROM users WHERE age >= 18 AND name LIKE '%son';",
            "{\"key\": [1, 2.5, -3e10, true, null], \"nested\": {\"a\": \"b\"}}",
            "x := make(map[string]int, 16) // Go\r\nfmt.Println(x)",
            "#include <vector>\n#define MAX(a,b) ((a)>(b)?(a):(b))",
            "let s = `template ${value}`; s.replace(/\\s+/g, '');",
            "git commit -m 'fix: off-by-one' && git push origin HEAD:refs/for/main",
            "<div class=\"row\"><span id='x'>&nbsp;&lt;tag&gt;</span></div>",
            "fn main() -> Result<(), Box<dyn Error>> { println!(\"{:?}\", vec![1u8; 3]); Ok(()) }",
            "    return self.__dict__.get('_cache', {}).setdefault(key, [])",
            "a+=b;c-=d;e*=f;g/=h;i%=j;k<<=1;l>>=2;m&=n;o|=p;q^=r;",
            "echo \"$HOME\" | sed -e 's/\\/home\\///' >> /tmp/log.txt 2>&1",
            "matrix[i][j] = (i == j) ? 1.0f : 0.0f; /* identity */",
        };
        std::string indent;
        const size_t depth = pick(4);
        for (size_t i = 0; i < depth; ++i) indent += pick(2) ? "    " : "\t";
        return indent + std::string(any(kCode));
    }

    std::string cjk_text() {
        static constexpr std::array<std::pair<char32_t, char32_t>, 5> kRanges = {{
            {0x4E00, 0x9FFF}, {0x3040, 0x309F}, {0x30A0, 0x30FF}, {0xAC00, 0xD7A3}, {0x3400, 0x4DBF}}};
        static constexpr std::array<std::string_view, 8> kPunct = {"、", "。", "，", "！", "？", "「", "」", "～"};
        std::string out;
        const size_t n = 2 + pick(30);
        const auto& [lo, hi] = kRanges[pick(kRanges.size())];
        for (size_t i = 0; i < n; ++i) {
            if (pick(8) == 0) out += any(kPunct);
            else if (pick(12) == 0) out += "apple";
            else append_utf8(out, lo + static_cast<char32_t>(pick(hi - lo + 1)));
        }
        return out;
    }

    std::string emoji_text() {
        static constexpr std::array<std::string_view, 14> kEmoji = {
            "🚀", "😁", "🦙", "✅", "❤️", "👍", "🔥", "😶‍🌫️", "👨‍👩‍👧‍👦", "🏳️‍🌈", "👩‍💻", "🇩🇪", "1️⃣", "🧑‍🤝‍🧑"};
        static constexpr std::array<std::string_view, 5> kTones = {"🏻", "🏼", "🏽", "🏾", "🏿"};
        std::string out;
        const size_t n = 1 + pick(8);
        for (size_t i = 0; i < n; ++i) {
            switch (pick(5)) {
                case 0: out += std::string("👋") + std::string(any(kTones)); break;
                case 1: out += std::string("👩") + std::string(any(kTones)) + "\u200D💻"; break;
                case 2: out += " "; break;
                case 3: out += "word"; break;
                default: out += any(kEmoji);
            }
        }
        return out;
    }

    std::string script_text() {
        static constexpr std::array<std::string_view, 12> kPhrases = {
            "កាន់តែពិសេសអាចខលចេញ", "สวัสดีครับ ภาษาไทย", "مرحبا بالعالم العربي", "नमस्ते दुनिया हिन्दी",
            "Привет, мир! Ёжик", "Γειά σου Κόσμε", "שלום עולם", "বাংলা ভাষা", "தமிழ் மொழி", "ქართული ენა",
            "Հայերեն լեզու", "ꦗꦮ ꦱꦼꦂꦠ"};
        std::string out(any(kPhrases));
        if (pick(2)) out += std::string(pick(2) ? " " : "") + std::string(any(kPhrases));
        return out;
    }

    std::string whitespace_mix() {
        std::string out;
        const size_t n = 1 + pick(6);
        for (size_t i = 0; i < n; ++i) {
            out += whitespace_run();
            if (pick(3)) out += pick(2) ? "word" : "42";
        }
        return out;
    }

    std::string numbers() {
        std::string out;
        const size_t n = 1 + pick(5);
        for (size_t i = 0; i < n; ++i) {
            const size_t len = 1 + pick(30);
            for (size_t k = 0; k < len; ++k) out.push_back(static_cast<char>('0' + pick(10)));
            switch (pick(6)) {
                case 0: out += "."; break;
                case 1: out += ","; break;
                case 2: out += " "; break;
                case 3: out += "٣٤٥"; break;  // Arabic-Indic digits
                case 4: out += "１２３½²Ⅻ"; break;  // fullwidth, fraction, superscript, roman numeral
                default: out += "e-";
            }
        }
        return out;
    }

    std::string contractions() {
        static constexpr std::array<std::string_view, 19> kSuffix = {
            "'s", "'S", "'t", "'T", "'re", "'RE", "'Re", "'rE", "'ve", "'VE", "'m", "'M", "'ll", "'LL", "'lL",
            "'d", "'D", "'x", "''s"};
        static constexpr std::array<std::string_view, 6> kWords = {"it", "I", "we", "They", "don", "O"};
        std::string out;
        const size_t n = 1 + pick(6);
        for (size_t i = 0; i < n; ++i) {
            if (i) out += pick(4) ? " " : "";
            out += any(kWords);
            out += any(kSuffix);
            if (pick(4) == 0) out += "'";
        }
        return out;
    }

    std::string punctuation_runs() {
        static constexpr std::string_view kAscii = "!@#$%^&*()_+-=[]{};:'\",.<>/?\\|`~";
        static constexpr std::array<std::string_view, 10> kUnicode = {"“", "”", "‘", "’", "—", "…", "«", "»", "¿", "¡"};
        std::string out;
        const size_t n = 1 + pick(12);
        for (size_t i = 0; i < n; ++i) {
            if (pick(5) == 0) out += any(kUnicode);
            else out.push_back(kAscii[pick(kAscii.size())]);
            if (pick(10) == 0) out += pick(2) ? " " : "\n";
            if (pick(10) == 0) out += "\r\n";
        }
        return out;
    }

    std::string combining_marks() {
        static constexpr std::array<std::string_view, 6> kBases = {"e", "a", "o", " ", "1", "!"};
        std::string out;
        const size_t n = 1 + pick(8);
        for (size_t i = 0; i < n; ++i) {
            out += any(kBases);
            const size_t marks = pick(4);
            for (size_t k = 0; k < marks; ++k) append_utf8(out, 0x0300 + static_cast<char32_t>(pick(0x70)));
        }
        return out;
    }

    std::string mixed() {
        std::string out;
        const size_t n = 2 + pick(4);
        for (size_t i = 0; i < n; ++i) {
            switch (pick(6)) {
                case 0: out += cjk_text(); break;
                case 1: out += emoji_text(); break;
                case 2: out += numbers(); break;
                case 3: out += contractions(); break;
                case 4: out += punctuation_runs(); break;
                default: out += script_text();
            }
        }
        return out;
    }

    std::mt19937_64 rng_;
};

// `n` corpus lines, plus multi-line documents (lines joined by "\n", "\r\n" or "\n\n") so that line
// breaks between kinds of text are covered too.
inline std::vector<std::string> make_corpus(uint64_t seed, size_t n) {
    CorpusGenerator gen(seed);
    std::vector<std::string> out;
    out.reserve(n + n / 10);
    for (size_t i = 0; i < n; ++i) out.push_back(gen.line());
    for (size_t d = 0; d < n / 10; ++d) {
        std::string doc;
        const size_t lines = 2 + gen.pick(10);
        for (size_t k = 0; k < lines; ++k) {
            if (k) doc += gen.pick(3) == 0 ? "\r\n" : (gen.pick(2) ? "\n" : "\n\n");
            doc += gen.line();
        }
        out.push_back(doc);
    }
    return out;
}

}  // namespace dense::text::test
