#include "text/special_split.hpp"

#include <list>

namespace dense::text {

std::vector<Fragment> split_special_tokens(const Vocab& vocab, std::string_view text, bool parse_special) {
    // A list so that cutting a fragment in three does not move the others.
    std::list<Fragment> parts;
    if (!text.empty()) parts.push_back(Fragment{text, -1});

    for (const int32_t id : vocab.special_tokens_by_length()) {
        if (!parse_special && (vocab.is_control(id) || vocab.type(id) == TokenType::Unknown)) continue;
        const std::string_view needle = vocab.text(id);
        for (auto it = parts.begin(); it != parts.end(); ++it) {
            if (it->token >= 0) continue;
            // Cut every occurrence out of this fragment; `it` ends on the last plain piece (or token).
            std::string_view rest = it->text;
            size_t at = rest.find(needle);
            if (at == std::string_view::npos) continue;
            it = parts.erase(it);
            while (at != std::string_view::npos) {
                if (at > 0) parts.insert(it, Fragment{rest.substr(0, at), -1});
                parts.insert(it, Fragment{rest.substr(at, needle.size()), id});
                rest.remove_prefix(at + needle.size());
                at = rest.find(needle);
            }
            if (!rest.empty()) {
                it = parts.insert(it, Fragment{rest, -1});
            } else {
                --it;  // the last inserted token; the loop's ++it moves past it
            }
        }
    }
    return {parts.begin(), parts.end()};
}

}  // namespace dense::text
