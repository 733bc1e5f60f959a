# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""The BACT reader's table of spellings (`SpellingTable`)."""
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.string cimport memcmp, memcpy
from libcpp.vector cimport vector


cdef inline int64_t stored_length(SpellingTable table, int64_t at) noexcept nogil:
    """The length written before the spelling stored at arena offset `at`."""
    cdef int64_t length
    memcpy(&length, &table.arena[at], 8)
    return length


cdef void allocate(SpellingTable table, size_t n, int shift):
    """n = 2^(64 - shift) empty slots."""
    table.slots.assign(n, Slot(0, 0, 0))
    table.starts.assign(n, -1)
    table.shift = shift
    table.slot_data = table.slots.data()
    table.mask = n - 1


cdef void grow(SpellingTable table):
    """Twice the slots, the spellings placed anew."""
    cdef vector[Slot] old = table.slots
    cdef vector[int64_t] old_starts = table.starts
    cdef size_t i, k
    allocate(table, 2 * old.size(), table.shift - 1)
    for k in range(old.size()):
        if old[k].tag != 0:
            i = hash_bytes(&table.arena[old_starts[k] + 8], stored_length(table, old_starts[k])) >> table.shift
            while table.slots[i].tag != 0:
                i = (i + 1) & table.mask
            table.slots[i] = old[k]
            table.starts[i] = old_starts[k]


cdef class SpellingTable:
    """Byte strings to int32 values by open addressing over one byte arena; a slot keeps the first 8 bytes, 16 bits
    of the hash and the length, so a spelling of up to 8 bytes is found without reading the arena."""

    def __cinit__(self):
        allocate(self, 1024, 64 - 10)

    cdef bint _same_tail(self, size_t i, const unsigned char* p, Py_ssize_t n) noexcept nogil:
        """Whether slot i holds p[:n], given equal tags and first 8 bytes (n > 8)."""
        cdef int64_t at = self.starts[i]
        return stored_length(self, at) == n and memcmp(&self.arena[at + 16], p + 8, n - 8) == 0

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
            grow(self)
