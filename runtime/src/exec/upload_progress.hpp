// Progress of a long transfer (the weight upload) on a text stream, so that loading a 15 GB model
// never looks hung: bytes done of total, GB/s so far and the time left.
//   terminal:     one line redrawn in place with '\r' (at most every 0.1 s), erased by finish()
//   not terminal: plain lines (logs, CI): the first update, then every 10 % or every 2 s, whichever
//                 comes first; none at 100 %, where the caller logs its own summary
// Transfers under `quiet_below` bytes (256 MiB by default) show nothing: they end before anyone
// wonders. The clock and the stream are injected so that tests drive both.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>

namespace dense::exec {

class UploadProgress {
public:
    using Clock = std::function<double()>;  // seconds, monotonic; only differences matter

    struct Options {
        std::string label = "loading weights";
        bool terminal = false;
        uint64_t quiet_below = uint64_t{256} << 20;
        double redraw_every_s = 0.1;
        double line_every_s = 2.0;
        double line_every_fraction = 0.10;
        int bar_width = 30;
    };

    UploadProgress(uint64_t total_bytes, std::ostream& out, Options options, Clock clock);
    // stderr, a bar when stderr is a terminal (isatty), std::chrono::steady_clock. (Not movable: the
    // destructor may still write; the result is a prvalue, constructed in place.)
    static UploadProgress on_stderr(uint64_t total_bytes, std::string label = "loading weights");
    ~UploadProgress();  // a bar still on screen (an exception mid-upload) gets its newline
    UploadProgress(const UploadProgress&) = delete;
    UploadProgress& operator=(const UploadProgress&) = delete;

    void update(uint64_t done_bytes);
    void finish();  // terminal: erases the bar so the next log line starts clean. Idempotent.

    bool shown() const noexcept { return total_ >= options_.quiet_below; }
    double elapsed_s() const { return clock_() - start_; }

    // One report without '\r' or newline, in the terminal or the plain form, e.g.
    //   loading weights [############------------------]  40%  4.00/10.00 GB  2.00 GB/s  3 s left
    //   loading weights: 40% (4.00 of 10.00 GB) at 2.00 GB/s, 3 s left
    std::string render(uint64_t done_bytes, double elapsed_s) const;

private:
    void draw(uint64_t done, double now);
    void erase();

    uint64_t total_;
    std::ostream* out_;
    Options options_;
    Clock clock_;
    double start_;
    double last_draw_ = 0;
    bool drawn_ = false;       // something was written
    bool bar_visible_ = false;  // terminal: a bar is on the current line
    size_t bar_chars_ = 0;
    double next_fraction_ = 0;  // not terminal: the next 10 % mark that prints
};

// "3 s", "4 min 05 s", "1 h 02 min": a duration for people.
std::string format_duration(double seconds);

}  // namespace dense::exec
