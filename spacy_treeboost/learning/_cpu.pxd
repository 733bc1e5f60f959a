# cython: language_level=3
"""Small C primitives of the miner: memory for arrays read at random, prefetches, values shared between processes,
and the SSE2 forms of its sums, square roots and count runs (each the same doubles as the scalar form)."""
from libc.stdint cimport int32_t, int64_t, uint8_t


cdef extern from *:
    """
    #ifdef __GLIBC__
    #include <malloc.h>
    static inline int release_free_heap(void) { return malloc_trim(0); }
    #else
    static inline int release_free_heap(void) { return 0; }
    #endif
    #include <math.h>
    #include <stdint.h>
    #include <stdlib.h>
    #if defined(__linux__)
    #include <sys/mman.h>
    #endif
    /* Memory for an array read at random: from 2 MiB on, whole 2 MiB blocks marked (on Linux) for transparent huge
       pages, so that scattered reads miss the TLB far less often. Freed with free(); NULL if there is no memory. */
    static inline void* random_access_alloc(size_t bytes) {
        const size_t huge = (size_t)2 << 20;
    #if defined(__unix__) || defined(__APPLE__)
        void* p = NULL;
        if (bytes >= huge) {
            bytes = (bytes + huge - 1) / huge * huge;
            if (posix_memalign(&p, huge, bytes) != 0)
                return NULL;
    #if defined(__linux__) && defined(MADV_HUGEPAGE)
            madvise(p, bytes, MADV_HUGEPAGE);
    #endif
            return p;
        }
    #endif
        return malloc(bytes ? bytes : 1);
    }
    #if defined(__GNUC__)
    static inline void prefetch(const void* p) { __builtin_prefetch(p); }
    /* A value other processes write while this one reads it: loaded and stored whole (never torn). */
    static inline double shared_load(const double* p) { double v; __atomic_load(p, &v, __ATOMIC_RELAXED); return v; }
    static inline void shared_store(double* p, double v) { __atomic_store(p, &v, __ATOMIC_RELAXED); }
    #else
    static inline void prefetch(const void* p) { (void)p; }
    static inline double shared_load(const double* p) { return *(const volatile double*)p; }
    static inline void shared_store(double* p, double v) { *(volatile double*)p = v; }
    #endif
    #if defined(__SSE2__)
    #include <emmintrin.h>
    /* Six square roots, two per instruction: correctly rounded like sqrt(), so the same doubles. */
    static inline void sqrt6(const double* x, double* out) {
        _mm_storeu_pd(out, _mm_sqrt_pd(_mm_loadu_pd(x)));
        _mm_storeu_pd(out + 2, _mm_sqrt_pd(_mm_loadu_pd(x + 2)));
        _mm_storeu_pd(out + 4, _mm_sqrt_pd(_mm_loadu_pd(x + 4)));
    }
    /* sqrt(a) - sqrt(b), both roots in one instruction. */
    static inline double sqrt_diff(double a, double b) {
        double r[2];
        _mm_storeu_pd(r, _mm_sqrt_pd(_mm_set_pd(b, a)));
        return r[0] - r[1];
    }
    #endif
    #if defined(__SSE2__) && defined(__GNUC__)
    /* The first index in [k, end) whose byte differs from v, or end; sixteen bytes per comparison. */
    static inline int64_t run_end(const uint8_t* c, int64_t k, int64_t end, uint8_t v) {
        __m128i vv = _mm_set1_epi8((char)v);
        for (; k + 16 <= end; k += 16) {
            int m = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i*)(c + k)), vv));
            if (m != 0xFFFF) return k + __builtin_ctz(~m & 0xFFFF);
        }
        while (k < end && c[k] == v) k++;
        return k;
    }
    /* g[0] += w[2d], g[1] += w[2d + 1] for d in docs[:n], in order, and *gp += the number of them whose w[2d + 1]
       has its sign bit set (the positive documents): both sums in one instruction, the scalar sums' doubles. */
    static inline void add_pairs(const int32_t* docs, int64_t n, const double* w, double* g, int32_t* gp) {
        __m128d s = _mm_loadu_pd(g);
        int32_t c = *gp;
        for (int64_t k = 0; k < n; k++) {
            if (k + 16 < n) prefetch(w + 2 * (int64_t)docs[k + 16]);
            __m128d pair = _mm_loadu_pd(w + 2 * (int64_t)docs[k]);
            s = _mm_add_pd(s, pair);
            c += _mm_movemask_pd(pair) >> 1;
        }
        _mm_storeu_pd(g, s);
        *gp = c;
    }
    #else
    static inline int64_t run_end(const uint8_t* c, int64_t k, int64_t end, uint8_t v) {
        while (k < end && c[k] == v) k++;
        return k;
    }
    static inline void add_pairs(const int32_t* docs, int64_t n, const double* w, double* g, int32_t* gp) {
        for (int64_t k = 0; k < n; k++) {
            int64_t d = docs[k];
            g[0] += w[2 * d];
            g[1] += w[2 * d + 1];
            *gp += signbit(w[2 * d + 1]) != 0;
        }
    }
    #endif
    /* Whether document d is positive: the sign bit of its negative-class weight (see `wpn`). */
    static inline int positive_at(const double* w, int64_t d) { return signbit(w[2 * d + 1]) != 0; }
    #if !defined(__SSE2__)
    static inline void sqrt6(const double* x, double* out) {
        for (int i = 0; i < 6; i++) out[i] = sqrt(x[i]);
    }
    static inline double sqrt_diff(double a, double b) { return sqrt(a) - sqrt(b); }
    #endif
    """
    int release_free_heap() nogil
    void* random_access_alloc(size_t bytes) noexcept nogil
    void sqrt6(const double* x, double* out) noexcept nogil
    double sqrt_diff(double a, double b) noexcept nogil
    int64_t run_end(const uint8_t* c, int64_t k, int64_t end, uint8_t v) noexcept nogil
    void prefetch(const void* p) noexcept nogil
    double shared_load(const double* p) noexcept nogil
    void shared_store(double* p, double v) noexcept nogil
    void add_pairs(const int32_t* docs, int64_t n, const double* w, double* g, int32_t* gp) noexcept nogil
    bint positive_at(const double* w, int64_t d) noexcept nogil

