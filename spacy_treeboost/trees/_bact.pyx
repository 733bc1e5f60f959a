# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""The compiled BACT reader: `LABEL (tree)` lines parsed straight into preorder forest arrays."""
from cython cimport view
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport free
from libc.string cimport memchr, memcmp, memcpy
from libcpp.vector cimport vector

from spacy_treeboost.trees._buffers cimport GrowBuf
from spacy_treeboost.trees._spelling cimport Slot, SpellingTable, hash_bytes, hash_label
from spacy_treeboost.trees._text cimport label_stop_candidate, space_len, space_len_before, utf8_error_at

import numpy


cdef enum:
    LINE_OK = 0
    LINE_BLANK = 1
    ERR_NO_TREE_START = 2
    ERR_JUNK = 3
    ERR_UNBALANCED = 4
    ERR_EMPTY_LABEL = 5
    ERR_SECOND_TREE = 6
    ERR_NO_TREE = 7
    ERR_UNCLOSED = 8
    ERR_NOT_UTF8 = 9
    ERR_TOO_MANY_NODES = 10

cdef int32_t INT32_LIMIT = 2147483647


cdef inline bint has_percent(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    return memchr(p, 37, n) != NULL


cdef inline const unsigned char* _tree_start(const unsigned char* p, const unsigned char* end) noexcept nogil:
    """Where the tree of a trimmed line starts (after the space ending the class label); NULL if no "(" follows."""
    cdef const unsigned char* q = p
    cdef const unsigned char* rest
    cdef int s
    while q < end and q[0] != 32:
        q += 1
    if q == end:
        return NULL
    rest = q + 1
    q = rest
    while q < end:
        s = space_len(q, end)
        if s == 0:
            break
        q += s
    if q == end or q[0] != b"(":
        return NULL
    return rest


cdef struct Pending:
    int64_t offset
    int64_t length
    uint64_t hash
    uint64_t prefix


cdef object _taken(GrowBuf[int32_t]& buf):
    """The buffer's values as a numpy array that takes over its memory (no copy); the buffer is left empty."""
    cdef Py_ssize_t n = buf.size()
    if n == 0:
        buf.release()
        return numpy.empty(0, dtype=numpy.int32)
    cdef view.array block = view.array(shape=(n,), itemsize=sizeof(int32_t), format="i", allocate_buffer=False)
    block.data = <char*>buf.detach()
    block.callback_free_data = free
    return numpy.asarray(block)


cdef class BactParser:
    """Parse BACT lines into preorder forest arrays; `take()` returns the documents parsed since the last call. Only
    new spellings reach Python (`decode`, then `vocab.add`, or `vocab.get` without `add_labels`)."""
    cdef SpellingTable label_ids, class_ids
    cdef list class_strings
    cdef object vocab, decode, error
    cdef bint add_labels
    cdef Py_ssize_t vocab_filled
    cdef GrowBuf[int32_t] labels, parents
    cdef vector[int32_t] doc_class, stack
    cdef vector[int64_t] offsets
    cdef vector[Pending] pending
    cdef Py_ssize_t err_pos, err_len
    cdef str where_prefix
    cdef int64_t lineno

    def __init__(self, vocab, bint add_labels, decode, error):
        self.vocab = vocab
        self.add_labels = add_labels
        self.decode = decode
        self.error = error
        self.class_strings = []
        self.label_ids = SpellingTable()
        self.class_ids = SpellingTable()
        self.offsets.push_back(0)
        self.vocab_filled = -1

    cdef int _sync_vocab(self) except -1:
        """Without `add_labels`: (re)start the table from the vocabulary's spellings when it has changed size (a new
        spelling without `%` then maps to -1 unseen by Python)."""
        if self.add_labels or len(self.vocab) == self.vocab_filled:
            return 0
        cdef SpellingTable table = SpellingTable()
        cdef bytes spelling
        cdef const unsigned char* q
        for i, text in enumerate(self.vocab.to_list()):
            if "%" in text or not text:
                continue
            spelling = text.encode("utf8")
            q = <const unsigned char*>spelling
            table.insert(q, len(spelling), hash_bytes(q, len(spelling)), i)
        self.label_ids = table
        self.vocab_filled = len(self.vocab)
        return 0

    @property
    def n_docs(self) -> int:
        return self.doc_class.size()

    cdef int32_t _label_id(self, const unsigned char* p, Py_ssize_t n, bint first, uint64_t h) except -2:
        if first and n == 4 and memcmp(p, b"ROOT", 4) == 0:
            return 0
        if first and has_percent(p, n) and self._decoded(p, n) == "ROOT":
            return 0
        cdef Slot* slot = self.label_ids.find(p, n, h)
        if slot.tag != 0:
            return slot.value
        cdef int32_t i = -1
        if self.add_labels or has_percent(p, n):
            text = self._decoded(p, n)
            i = self.vocab.add(text) if self.add_labels else self.vocab.get(text, -1)
        self.label_ids.insert(p, n, h, i)
        return i

    cdef str _decoded(self, const unsigned char* p, Py_ssize_t n):
        raw = (<const char*>p)[:n].decode("utf8")
        try:
            return self.decode(raw)
        except self.error as err:
            raise self.error(f"{self._where()}{err}") from None

    cdef str _where(self):
        return f"{self.where_prefix}line {self.lineno}: "

    cdef int _line(self, const unsigned char* p, Py_ssize_t n) except -1:
        """Parse one line; on a format error set err_pos/err_len and return the error code."""
        cdef const unsigned char* end = p + n
        cdef const unsigned char* rest
        cdef int64_t base = self.labels.size()
        cdef int32_t local = 0, cls
        cdef Py_ssize_t top = 0
        cdef int s, code
        cdef Py_ssize_t bad = utf8_error_at(p, n)
        if bad >= 0:
            self.err_pos = bad
            return ERR_NOT_UTF8
        while p < end:
            s = space_len(p, end)
            if s == 0:
                break
            p += s
        while end > p:
            s = space_len_before(p, end)
            if s == 0:
                break
            end -= s
        if p == end:
            return LINE_BLANK
        self.err_pos = 0
        self.err_len = end - p
        rest = _tree_start(p, end)
        if rest == NULL:
            return ERR_NO_TREE_START
        cls = self._class_id(p, rest - 1 - p)
        code = self._nodes(p, rest, end, base, &local, &top)
        self._resolve(base, local, p)
        if code != LINE_OK:
            return self._undo(base, code)
        if local == 0:
            return self._undo(base, ERR_NO_TREE)
        if top:
            self.err_len = top
            return self._undo(base, ERR_UNCLOSED)
        self.labels.resize(base + local)
        self.parents.resize(base + local)
        self.offsets.push_back(base + local)
        self.doc_class.push_back(cls)
        return LINE_OK

    cdef int32_t _class_id(self, const unsigned char* p, Py_ssize_t n) except -1:
        """The id of the class spelled p[:n], a new one for a new spelling."""
        cdef uint64_t h = hash_bytes(p, n)
        cdef Slot* slot = self.class_ids.find(p, n, h)
        cdef int32_t cls
        if slot.tag != 0:
            return slot.value
        cls = len(self.class_strings)
        self.class_strings.append(self._decoded(p, n))
        self.class_ids.insert(p, n, h, cls)
        return cls

    cdef int _nodes(self, const unsigned char* p, const unsigned char* rest, const unsigned char* end, int64_t base,
                    int32_t* n_nodes, Py_ssize_t* n_open) except -1:
        """Read the tree rest[:end - rest] into the node arrays from `base` (labels pending for `_resolve`); LINE_OK or
        an error code, the nodes read and still open in n_nodes and n_open."""
        cdef const unsigned char* q
        cdef const unsigned char* lab
        cdef int s, code = LINE_OK
        cdef int32_t local = 0
        cdef uint64_t h, prefix
        cdef Pending* at
        cdef Py_ssize_t cap = (end - rest) // 2 + 1, top = 0
        self.labels.resize(base + cap)
        self.parents.resize(base + cap)
        if <Py_ssize_t>self.pending.size() < cap:
            self.pending.resize(cap)
            self.stack.resize(cap)
        cdef int32_t* out_parent = self.parents.data() + base
        cdef int32_t* stack = self.stack.data()
        cdef Pending* pending = self.pending.data()
        cdef int64_t doc_start = self.offsets.back()
        q = rest
        while q < end:
            if q[0] != b"(" and q[0] != b")":
                s = space_len(q, end)
                if s:
                    q += s
                    continue
            if q[0] == b")":
                if top == 0:
                    self.err_pos = q - rest
                    code = ERR_UNBALANCED
                    break
                top -= 1
                q += 1
                continue
            if q[0] != b"(":
                self.err_pos = q - rest
                self.err_len = 1
                while q + self.err_len < end and (q[self.err_len] & 0xC0) == 0x80:
                    self.err_len += 1
                code = ERR_JUNK
                break
            q += 1
            lab = q
            while True:
                q = label_stop_candidate(q, end)
                if q == end or q[0] == b"(" or q[0] == b")" or space_len(q, end):
                    break
                q += 1
            if q == lab or (local and top == 0) or base + local >= INT32_LIMIT:
                self.err_pos = lab - 1 - rest
                code = (ERR_EMPTY_LABEL if q == lab else ERR_SECOND_TREE if local and top == 0
                        else ERR_TOO_MANY_NODES)
                break
            h = hash_label(lab, q - lab, end, &prefix)
            self.label_ids.prefetch(h)
            at = &pending[local]
            at.offset = lab - p
            at.length = q - lab
            at.hash = h
            at.prefix = prefix
            out_parent[local] = -1 if top == 0 else <int32_t>(doc_start + stack[top - 1])
            stack[top] = local
            top += 1
            local += 1
        n_nodes[0] = local
        n_open[0] = top
        return code

    cdef int _resolve(self, int64_t base, int32_t n_nodes, const unsigned char* p) except -1:
        """Look up the labels of the line's first `n_nodes` nodes in order (their slots were prefetched)."""
        cdef Py_ssize_t k
        cdef Slot* slot
        cdef Pending* at = self.pending.data()
        cdef int32_t* labels = self.labels.data() + base
        cdef SpellingTable table = self.label_ids
        for k in range(n_nodes):
            if k:
                slot = table.find_prefixed(p + at.offset, at.length, at.hash, at.prefix)
                if slot.tag != 0:
                    labels[k] = slot.value
                    at += 1
                    continue
            labels[k] = self._label_id(p + at.offset, at.length, k == 0, at.hash)
            at += 1
        return 0

    cdef int _undo(self, int64_t base, int code):
        self.labels.resize(base)
        self.parents.resize(base)
        return code

    def parse_lines(self, const unsigned char[:] buf, str where_prefix, int64_t first_lineno) -> int64_t:
        """Parse every line of `buf` (lines end with \\n, \\r\\n or \\r); return the number of lines."""
        cdef Py_ssize_t n = buf.shape[0], start = 0, i = 0
        cdef int code
        if n == 0:
            return 0
        cdef const unsigned char* p = &buf[0]
        self._sync_vocab()
        self.where_prefix = where_prefix
        self.lineno = first_lineno
        cdef const unsigned char* brk
        while start < n:
            brk = <const unsigned char*>memchr(p + start, 10, n - start)
            i = n if brk == NULL else brk - p
            brk = <const unsigned char*>memchr(p + start, 13, i - start)
            if brk != NULL:
                i = brk - p
            code = self._line(p + start, i - start)
            if code > LINE_BLANK:
                self._raise(code, bytes(buf[start:i]))
            if i + 1 < n and p[i] == 13 and p[i + 1] == 10:
                i += 1
            start = i + 1
            self.lineno += 1
        return self.lineno - first_lineno

    cdef _raise(self, int code, bytes line):
        where = self._where()
        if code == ERR_NOT_UTF8:
            raise self.error(
                f"{where}byte {self.err_pos + 1} ({line[self.err_pos:self.err_pos + 1]!r}) is not UTF-8; "
                f"save the file as UTF-8 (e.g. iconv -f LATIN1 -t UTF-8)")
        text = line.decode("utf8").strip()
        if code == ERR_NO_TREE_START:
            raise self.error(f"{where}expected 'LABEL (tree)', e.g. '+1 (ROOT(a(b)))', got {text[:60]!r}")
        if code == ERR_UNCLOSED:
            raise self.error(f"{where}{self.err_len} unclosed '(' at end of line")
        if code == ERR_NO_TREE:
            raise self.error(f"{where}no tree; expected '(label(child)...)'")
        if code == ERR_TOO_MANY_NODES:
            raise self.error(f"{where}more than {INT32_LIMIT} nodes in one forest; read the file in parts")
        rest = text.encode("utf8").partition(b" ")[2]
        column = len(rest[:self.err_pos].decode("utf8")) + 1
        if code == ERR_JUNK:
            junk = rest[self.err_pos:self.err_pos + self.err_len].decode("utf8")
            raise self.error(f"{where}unexpected {junk!r} at column {column}; node labels follow '('")
        if code == ERR_UNBALANCED:
            raise self.error(f"{where}unbalanced ')' at column {column}")
        if code == ERR_EMPTY_LABEL:
            raise self.error(f"{where}empty node label at column {column}; write every node as '(label...)'")
        raise self.error(f"{where}a second tree starts at column {column}; one tree per line")

    def take(self, bint more=False):
        """(labels, parents, offsets, classes) of the documents parsed since the last call, taking over the parser's
        memory; `more` reserves room for as many nodes again."""
        cdef Py_ssize_t d = self.doc_class.size(), k
        cdef size_t n_nodes = self.labels.size()
        labels = _taken(self.labels)
        parents = _taken(self.parents)
        if more:
            self.labels.reserve(n_nodes + n_nodes // 8)
            self.parents.reserve(n_nodes + n_nodes // 8)
        offsets = numpy.empty(d + 1, dtype=numpy.int64)
        cdef int64_t[::1] ov = offsets
        memcpy(&ov[0], self.offsets.data(), (d + 1) * sizeof(int64_t))
        strings = self.class_strings
        classes = [strings[self.doc_class[k]] for k in range(d)]
        self.doc_class.clear()
        self.offsets.clear()
        self.offsets.push_back(0)
        return labels, parents, offsets, classes
