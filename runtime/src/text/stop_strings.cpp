#include "text/stop_strings.hpp"

#include <algorithm>

namespace dense::text {

StopStringMatcher::StopStringMatcher(std::vector<std::string> stops) {
    for (auto& s : stops) {
        if (!s.empty()) stops_.push_back(std::move(s));
    }
}

size_t StopStringMatcher::holdback_length() const {
    size_t best = 0;
    for (const auto& stop : stops_) {
        const size_t max_len = std::min(pending_.size(), stop.size() - 1);
        for (size_t len = max_len; len > best; --len) {
            if (std::string_view(pending_).substr(pending_.size() - len) == std::string_view(stop).substr(0, len)) {
                best = len;
                break;
            }
        }
    }
    return best;
}

StopStringMatcher::Result StopStringMatcher::push(std::string_view text) {
    Result r;
    if (stopped_) {
        r.stopped = true;
        return r;
    }
    pending_.append(text);
    // Earliest match wins; among matches starting at the same byte, the longest stop string.
    size_t best_at = std::string::npos;
    const std::string* best = nullptr;
    for (const auto& stop : stops_) {
        const size_t at = pending_.find(stop);
        if (at != std::string::npos && (at < best_at || (at == best_at && stop.size() > best->size()))) {
            best_at = at;
            best = &stop;
        }
    }
    if (best != nullptr) {
        r.text = pending_.substr(0, best_at);
        r.stopped = true;
        r.matched = *best;
        pending_.clear();
        stopped_ = true;
        return r;
    }
    const size_t hold = holdback_length();
    r.text = pending_.substr(0, pending_.size() - hold);
    pending_.erase(0, pending_.size() - hold);
    return r;
}

std::string StopStringMatcher::flush() {
    std::string out;
    if (!stopped_) out.swap(pending_);
    pending_.clear();
    return out;
}

TextStream::TextStream(const Tokenizer& tokenizer, std::vector<std::string> stop_strings, std::vector<int32_t> stop_ids)
    : tokenizer_(&tokenizer), stop_ids_(std::move(stop_ids)), matcher_(std::move(stop_strings)) {}

TextStream::Step TextStream::push(int32_t token) {
    Step step;
    if (reason_ != StopReason::None) {
        step.stop = reason_;
        return step;
    }
    if (tokenizer_->is_eog(token) || std::find(stop_ids_.begin(), stop_ids_.end(), token) != stop_ids_.end()) {
        // Whatever is still held can no longer become a stop string: release it.
        step.text = matcher_.push(utf8_.flush()).text;
        step.text += matcher_.flush();
        reason_ = step.stop = StopReason::EndOfGeneration;
        return step;
    }
    const auto r = matcher_.push(utf8_.push(tokenizer_->token_piece(token, /*render_special=*/false)));
    step.text = r.text;
    if (r.stopped) reason_ = step.stop = StopReason::StopString;
    return step;
}

std::string TextStream::finish() {
    if (reason_ != StopReason::None) return {};
    auto r = matcher_.push(utf8_.flush());
    if (r.stopped) {
        reason_ = StopReason::StopString;
        return r.text;
    }
    return r.text + matcher_.flush();
}

}  // namespace dense::text
