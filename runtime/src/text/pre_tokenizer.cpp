#include "text/pre_tokenizer.hpp"

#include "text/unicode_class.hpp"

namespace dense::text {

namespace {

// The scanner looks at most a few code points ahead; positions past the fragment have no class at all,
// which is different from every real class (the rules below rely on that).
class Fragment {
public:
    explicit Fragment(std::span<const char32_t> cps) : cps_(cps) {
        classes_.reserve(cps.size());
        for (char32_t cp : cps) classes_.push_back(classify(cp));
    }
    size_t size() const noexcept { return cps_.size(); }
    bool inside(size_t pos) const noexcept { return pos < cps_.size(); }
    char32_t cp(size_t pos) const noexcept { return cps_[pos]; }
    bool is(size_t pos, CharClass c) const noexcept { return inside(pos) && classes_[pos] == c; }
    bool letter_or_mark(size_t pos) const noexcept { return is(pos, CharClass::Letter) || is(pos, CharClass::Mark); }
    bool is_cr_or_lf(size_t pos) const noexcept { return inside(pos) && (cps_[pos] == '\r' || cps_[pos] == '\n'); }

private:
    std::span<const char32_t> cps_;
    std::vector<CharClass> classes_;
};

// Each rule returns the end of the word it matches at `pos`, or 0 if it does not apply (a word is never
// empty, so 0 is never a valid end: pos < end).
size_t match_contraction(const Fragment& f, size_t pos) {
    if (f.cp(pos) != '\'' || !f.inside(pos + 1)) return 0;
    const char32_t a = simple_lower(f.cp(pos + 1));
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return pos + 2;
    if (!f.inside(pos + 2)) return 0;
    const char32_t b = simple_lower(f.cp(pos + 2));
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return pos + 3;
    return 0;
}

// One optional non-letter prefix (anything but CR, LF or a number) followed by a letter/mark run.
size_t match_letters(const Fragment& f, size_t pos) {
    if (f.is_cr_or_lf(pos) || f.is(pos, CharClass::Number)) return 0;
    if (!f.letter_or_mark(pos) && !f.letter_or_mark(pos + 1)) return 0;
    size_t end = pos + 1;
    while (f.letter_or_mark(end)) ++end;
    return end;
}

size_t match_number(const Fragment& f, size_t pos) { return f.is(pos, CharClass::Number) ? pos + 1 : 0; }

// An optional space, a run of "Other" code points, then any CR/LF that follow.
size_t match_punctuation(const Fragment& f, size_t pos) {
    const size_t first = f.cp(pos) == ' ' ? pos + 1 : pos;
    if (!f.is(first, CharClass::Other)) return 0;
    size_t end = first;
    while (f.is(end, CharClass::Other)) ++end;
    while (f.is_cr_or_lf(end)) ++end;
    return end;
}

size_t match_whitespace(const Fragment& f, size_t pos) {
    size_t end = pos;
    size_t after_last_break = 0;
    while (f.is(end, CharClass::Whitespace)) {
        if (f.is_cr_or_lf(end)) after_last_break = end + 1;
        ++end;
    }
    const size_t n = end - pos;
    if (after_last_break != 0) return after_last_break;      // \s*[\r\n]+
    if (n > 1 && f.inside(end)) return end - 1;               // \s+(?!\S): leave one to prefix the next word
    if (n >= 1) return end;                                   // \s+
    return 0;
}

}  // namespace

void split_words_qwen35(std::span<const char32_t> cps, std::vector<size_t>& word_lengths) {
    const Fragment f(cps);
    size_t pos = 0;
    while (pos < f.size()) {
        size_t end = match_contraction(f, pos);
        if (end == 0) end = match_letters(f, pos);
        if (end == 0) end = match_number(f, pos);
        if (end == 0) end = match_punctuation(f, pos);
        if (end == 0) end = match_whitespace(f, pos);
        if (end == 0) end = pos + 1;  // unreachable with the classes above; keeps the scan total
        word_lengths.push_back(end - pos);
        pos = end;
    }
}

}  // namespace dense::text
