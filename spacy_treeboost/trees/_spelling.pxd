# cython: language_level=3
"""The BACT reader's table of spellings (byte strings to int32 ids) and its hashes."""
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.string cimport memcpy
from libcpp.vector cimport vector


cdef extern from *:
    void __builtin_prefetch(const void* address) noexcept nogil


cdef struct Slot:
    uint64_t prefix
    uint32_t tag
    int32_t value


cdef inline uint32_t slot_tag(uint64_t h, Py_ssize_t n) noexcept nogil:
    """16 bits of the hash and the length (up to 65,535); never 0, the tag of an empty slot."""
    return (<uint32_t>h & 0xFFFF0000u) | <uint32_t>(n if n < 0xFFFF else 0xFFFF)


cdef inline uint64_t mix_word(uint64_t h, uint64_t word) noexcept nogil:
    h = (h ^ word) * 1099511628211ULL
    return h ^ (h >> 29)


cdef inline uint64_t hash_bytes(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """A hash of p[:n], eight bytes at a time."""
    cdef uint64_t h = 1469598103934665603ULL ^ <uint64_t>n, word
    cdef Py_ssize_t i = 0
    while n - i >= 8:
        memcpy(&word, p + i, 8)
        h = mix_word(h, word)
        i += 8
    if i < n:
        word = 0
        memcpy(&word, p + i, n - i)
        h = mix_word(h, word)
    return (h ^ (h >> 32)) * 0x9E3779B97F4A7C15ULL


cdef inline uint64_t prefix_of(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    cdef uint64_t x = 0
    memcpy(&x, p, n if n < 8 else 8)
    return x


cdef inline uint64_t hash_label(const unsigned char* p, Py_ssize_t n, const unsigned char* readable_end,
                                uint64_t* prefix) noexcept nogil:
    """`hash_bytes(p, n)`, and `prefix_of(p, n)` in `prefix`; a label of 1 to 8 bytes with 8 readable
    bytes at p is read as one word."""
    cdef uint64_t h, word
    if n > 8 or p + 8 > readable_end:
        prefix[0] = prefix_of(p, n)
        return hash_bytes(p, n)
    memcpy(&word, p, 8)
    if n < 8:
        word &= (1ULL << (8 * n)) - 1
    prefix[0] = word
    h = mix_word(1469598103934665603ULL ^ <uint64_t>n, word)
    return (h ^ (h >> 32)) * 0x9E3779B97F4A7C15ULL


cdef class SpellingTable:
    cdef vector[Slot] slots
    cdef vector[int64_t] starts
    cdef vector[unsigned char] arena
    cdef Py_ssize_t used
    cdef int shift
    cdef Slot* slot_data      # slots.data() and slots.size() - 1, kept for the lookups
    cdef size_t mask

    cdef inline Slot* find(self, const unsigned char* p, Py_ssize_t n, uint64_t h) noexcept nogil:
        """The slot holding p[:n], or the empty slot where it belongs."""
        return self.find_prefixed(p, n, h, prefix_of(p, n))

    cdef inline Slot* find_prefixed(self, const unsigned char* p, Py_ssize_t n, uint64_t h, uint64_t prefix) noexcept nogil:
        """`find`, given `prefix_of(p, n)`."""
        cdef size_t i = h >> self.shift
        cdef uint32_t tag = slot_tag(h, n)
        cdef Slot* s
        while True:
            s = self.slot_data + i
            if s.tag == 0:
                return s
            if s.tag == tag and s.prefix == prefix and (n <= 8 or self._same_tail(i, p, n)):
                return s
            i = (i + 1) & self.mask

    cdef inline void prefetch(self, uint64_t h) noexcept nogil:
        __builtin_prefetch(self.slot_data + (h >> self.shift))

    cdef bint _same_tail(self, size_t i, const unsigned char* p, Py_ssize_t n) noexcept nogil
    cdef void insert(self, const unsigned char* p, Py_ssize_t n, uint64_t h, int32_t value)
