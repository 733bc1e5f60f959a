# cython: language_level=3
"""Byte scanning for the BACT reader: white space as str.isspace sees it in UTF-8, the bytes that may end a node
label, and the first byte that is not valid UTF-8."""


cdef extern from *:
    """
    #include <stdint.h>
    #if defined(__SSE2__) && defined(__GNUC__)
    #include <emmintrin.h>
    #endif
    /* The first byte in [p, end) that may end a node label ("(", ")", a byte below "!" or a byte of 0x80 or
       more), or end; sixteen bytes per step with SSE2. */
    static inline const unsigned char* label_stop_candidate(const unsigned char* p, const unsigned char* end) {
    #if defined(__SSE2__) && defined(__GNUC__)
        const __m128i open = _mm_set1_epi8('('), close = _mm_set1_epi8(')'), bang = _mm_set1_epi8('!');
        while (end - p >= 16) {
            __m128i x = _mm_loadu_si128((const __m128i*)p);
            /* signed bytes: below "!" are the bytes 0x00-0x20 and 0x80-0xFF */
            __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, open), _mm_cmpeq_epi8(x, close)),
                                       _mm_cmplt_epi8(x, bang));
            int m = _mm_movemask_epi8(hit);
            if (m) return p + __builtin_ctz(m);
            p += 16;
        }
    #endif
        for (; p < end; p++) {
            unsigned char c = *p;
            if (c == '(' || c == ')' || c < '!' || c >= 0x80) return p;
        }
        return end;
    }
    /* The offset of the first byte of 0x80 or more in p[i:n], or n. */
    static inline Py_ssize_t ascii_end(const unsigned char* p, Py_ssize_t i, Py_ssize_t n) {
    #if defined(__SSE2__) && defined(__GNUC__)
        for (; i + 16 <= n; i += 16) {
            int m = _mm_movemask_epi8(_mm_loadu_si128((const __m128i*)(p + i)));
            if (m) return i + __builtin_ctz(m);
        }
    #endif
        for (; i < n; i++) {
            if (p[i] >= 0x80) return i;
        }
        return n;
    }
    """
    const unsigned char* label_stop_candidate(const unsigned char* p, const unsigned char* end) noexcept nogil
    Py_ssize_t ascii_end(const unsigned char* p, Py_ssize_t i, Py_ssize_t n) noexcept nogil


cdef inline int space_len(const unsigned char* p, const unsigned char* end) noexcept nogil:
    """Length in bytes of the white space character at p (as str.isspace), or 0."""
    cdef unsigned char c = p[0]
    if c < 0x80:
        return 1 if (c == 32 or 9 <= c <= 13 or 28 <= c <= 31) else 0
    if c == 0xC2:
        return 2 if p + 1 < end and (p[1] == 0x85 or p[1] == 0xA0) else 0
    if p + 2 >= end:
        return 0
    if c == 0xE1:
        return 3 if p[1] == 0x9A and p[2] == 0x80 else 0
    if c == 0xE2:
        if p[1] == 0x80 and (0x80 <= p[2] <= 0x8A or p[2] == 0xA8 or p[2] == 0xA9 or p[2] == 0xAF):
            return 3
        return 3 if p[1] == 0x81 and p[2] == 0x9F else 0
    if c == 0xE3:
        return 3 if p[1] == 0x80 and p[2] == 0x80 else 0
    return 0


cdef inline int space_len_before(const unsigned char* start, const unsigned char* end) noexcept nogil:
    """Length of a white space character that ends at `end`, or 0."""
    if end - start >= 1 and end[-1] < 0x80:
        return space_len(end - 1, end)
    if end - start >= 2 and space_len(end - 2, end) == 2:
        return 2
    if end - start >= 3 and space_len(end - 3, end) == 3:
        return 3
    return 0


cdef inline Py_ssize_t utf8_error_at(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """Offset of the first byte that is not valid UTF-8 (as Python decodes it), or -1."""
    cdef Py_ssize_t i = 0, k, m
    cdef unsigned char c
    while i < n:
        i = ascii_end(p, i, n)
        if i >= n:
            break
        c = p[i]
        if 0xC2 <= c <= 0xDF:
            m = 1
        elif 0xE0 <= c <= 0xEF:
            m = 2
        elif 0xF0 <= c <= 0xF4:
            m = 3
        else:
            return i
        if i + m >= n:
            return i
        for k in range(1, m + 1):
            if (p[i + k] & 0xC0) != 0x80:
                return i
        if (c == 0xE0 and p[i + 1] < 0xA0) or (c == 0xED and p[i + 1] > 0x9F):
            return i
        if (c == 0xF0 and p[i + 1] < 0x90) or (c == 0xF4 and p[i + 1] > 0x8F):
            return i
        i += m + 1
    return -1
