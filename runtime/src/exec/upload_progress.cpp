#include "exec/upload_progress.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <ostream>

#include <unistd.h>

namespace dense::exec {

namespace {

std::string gb(uint64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(bytes) / 1e9);
    return buf;
}

}  // namespace

std::string format_duration(double seconds) {
    const long long s = std::llround(std::max(seconds, 0.0));
    char buf[48];
    if (s < 60)
        std::snprintf(buf, sizeof buf, "%lld s", s);
    else if (s < 3600)
        std::snprintf(buf, sizeof buf, "%lld min %02lld s", s / 60, s % 60);
    else
        std::snprintf(buf, sizeof buf, "%lld h %02lld min", s / 3600, s / 60 % 60);
    return buf;
}

UploadProgress::UploadProgress(uint64_t total_bytes, std::ostream& out, Options options, Clock clock)
    : total_(total_bytes), out_(&out), options_(std::move(options)), clock_(std::move(clock)), start_(clock_()) {}

UploadProgress UploadProgress::on_stderr(uint64_t total_bytes, std::string label) {
    Options o;
    o.label = std::move(label);
    o.terminal = ::isatty(STDERR_FILENO) == 1;
    return UploadProgress(total_bytes, std::cerr, std::move(o), [] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    });
}

UploadProgress::~UploadProgress() {
    if (out_ != nullptr && bar_visible_) *out_ << '\n' << std::flush;
}

std::string UploadProgress::render(uint64_t done, double elapsed) const {
    done = std::min(done, total_);
    const double fraction = total_ == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total_);
    const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0;  // bytes/s
    char pct[8];
    std::snprintf(pct, sizeof pct, "%3d%%", static_cast<int>(fraction * 100.0 + 1e-6));
    char speed[32];
    std::snprintf(speed, sizeof speed, "%.2f GB/s", rate / 1e9);
    const std::string left =
        done >= total_ ? "0 s left"
        : rate > 0     ? format_duration(static_cast<double>(total_ - done) / rate) + " left"
                       : "time left unknown";
    if (options_.terminal) {
        const int width = std::max(options_.bar_width, 1);
        const int full = std::min(width, static_cast<int>(fraction * width + 1e-6));
        return options_.label + " [" + std::string(static_cast<size_t>(full), '#') +
               std::string(static_cast<size_t>(width - full), '-') + "] " + pct + "  " + gb(done) + "/" + gb(total_) +
               " GB  " + speed + "  " + left;
    }
    std::string p = pct;
    p.erase(0, p.find_first_not_of(' '));
    return options_.label + ": " + p + " (" + gb(done) + " of " + gb(total_) + " GB) at " + speed + ", " + left;
}

void UploadProgress::update(uint64_t done) {
    if (!shown()) return;
    done = std::min(done, total_);
    const double now = clock_();
    if (options_.terminal) {
        // Redraws are cheap but not free on a slow terminal; the last one (100 %) always shows.
        if (!drawn_ || done == total_ || now - last_draw_ >= options_.redraw_every_s) draw(done, now);
        return;
    }
    if (done == total_) return;
    const double fraction = static_cast<double>(done) / static_cast<double>(total_);
    // The tolerance keeps 3 x 0.1 from missing the 30 % mark by a rounding error.
    if (!drawn_ || fraction >= next_fraction_ - 1e-9 || now - last_draw_ >= options_.line_every_s) draw(done, now);
}

void UploadProgress::draw(uint64_t done, double now) {
    const std::string text = render(done, now - start_);
    if (options_.terminal) {
        // Pad over a longer previous line (the time-left text shrinks).
        const size_t pad = bar_chars_ > text.size() ? bar_chars_ - text.size() : 0;
        *out_ << '\r' << text << std::string(pad, ' ') << std::flush;
        bar_chars_ = text.size();
        bar_visible_ = true;
    } else {
        *out_ << text << '\n' << std::flush;
        const double step = std::max(options_.line_every_fraction, 1e-6);
        const double fraction = static_cast<double>(done) / static_cast<double>(total_);
        next_fraction_ = (std::floor(fraction / step + 1e-9) + 1.0) * step;
    }
    drawn_ = true;
    last_draw_ = now;
}

void UploadProgress::erase() {
    if (!bar_visible_) return;
    *out_ << '\r' << std::string(bar_chars_, ' ') << '\r' << std::flush;
    bar_visible_ = false;
}

void UploadProgress::finish() { erase(); }

}  // namespace dense::exec
