# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""The BACT reader's table of spellings (`_spelling.pxd`)."""


cdef class SpellingTable:
    """Byte strings to int32 values: open addressing over one byte arena (no allocation per lookup).

    A slot (16 bytes) keeps the first 8 bytes, 16 bits of the hash and the length, so a lookup of a
    spelling of up to 8 bytes reads one slot and no arena bytes.
    """

    def __cinit__(self):
        cdef Slot empty
        empty.prefix = 0
        empty.tag = 0
        empty.value = 0
        self.slots.assign(1024, empty)
        self.starts.assign(1024, -1)
        self.shift = 64 - 10
        self.slot_data = self.slots.data()
        self.mask = self.slots.size() - 1

    cdef bint _same_tail(self, size_t i, const unsigned char* p, Py_ssize_t n) noexcept nogil:
        """Whether slot i holds p[:n], given equal tags and first 8 bytes (n > 8)."""
        cdef int64_t at = self.starts[i]
        return self._stored_length(at) == n and memcmp(&self.arena[at + 16], p + 8, n - 8) == 0

    cdef void insert(self, const unsigned char* p, Py_ssize_t n, uint64_t h, int32_t value):
        """Add p[:n] (not in the table) with `value`; the arena holds its length (8 bytes) then its bytes."""
        cdef Slot* s = self.find(p, n, h)
        cdef int64_t length = n
        s.prefix = prefix_of(p, n)
        s.tag = slot_tag(h, n)
        s.value = value
        self.starts[s - self.slots.data()] = self.arena.size()
        self.arena.insert(self.arena.end(), <const unsigned char*>&length, <const unsigned char*>&length + 8)
        self.arena.insert(self.arena.end(), p, p + n)
        self.arena.resize(self.arena.size() + 8)
        self.used += 1
        if 2 * self.used > <Py_ssize_t>self.slots.size():
            self._grow()

    cdef void _grow(self):
        cdef vector[Slot] old = self.slots
        cdef vector[int64_t] old_starts = self.starts
        cdef Slot empty
        empty.prefix = 0
        empty.tag = 0
        empty.value = 0
        self.slots.assign(2 * old.size(), empty)
        self.starts.assign(2 * old.size(), -1)
        self.shift -= 1
        self.slot_data = self.slots.data()
        self.mask = self.slots.size() - 1
        cdef size_t i, k
        for k in range(old.size()):
            if old[k].tag != 0:
                i = hash_bytes(&self.arena[old_starts[k] + 8], self._stored_length(old_starts[k])) >> self.shift
                while self.slots[i].tag != 0:
                    i = (i + 1) & self.mask
                self.slots[i] = old[k]
                self.starts[i] = old_starts[k]
