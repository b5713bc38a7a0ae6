// One spin-wait step for a host thread polling a word or a queue: the x86 pause hint (frees the
// core's pipeline for its sibling thread and eases the memory-order exit), a yield elsewhere.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#else
#include <thread>
#endif

namespace dense::exec {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#else
    std::this_thread::yield();
#endif
}

}  // namespace dense::exec
