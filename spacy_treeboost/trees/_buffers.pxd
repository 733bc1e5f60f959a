# cython: language_level=3
"""`GrowBuf`, an array of plain values grown by realloc an eighth at a time (glibc remaps large blocks, so growing
never holds the old and the new array at once as std::vector's doubling does)."""

cdef extern from *:
    """
    #include <cstdlib>
    #include <new>
    template <typename T> struct GrowBuf {
        T* ptr = nullptr;
        size_t n = 0, cap = 0;
        GrowBuf() = default;
        GrowBuf(const GrowBuf&) = delete;
        GrowBuf& operator=(const GrowBuf&) = delete;
        ~GrowBuf() { std::free(ptr); }
        void reserve(size_t c) {
            if (c <= cap) return;
            T* q = static_cast<T*>(std::realloc(ptr, c * sizeof(T)));
            if (q == nullptr) throw std::bad_alloc();
            ptr = q;
            cap = c;
        }
        size_t grown(size_t m) const { size_t c = cap + cap / 8 + 1024; return m > c ? m : c; }
        void resize(size_t m) {
            if (m > cap) reserve(grown(m));
            n = m;
        }
        void push_back(const T& v) {
            if (n == cap) reserve(grown(n + 1));
            ptr[n++] = v;
        }
        void pop_back() { --n; }
        void release() { std::free(ptr); ptr = nullptr; n = cap = 0; }
        void shrink_to_fit() {
            if (n == 0) { release(); return; }
            T* q = static_cast<T*>(std::realloc(ptr, n * sizeof(T)));
            if (q != nullptr) { ptr = q; cap = n; }
        }
        T* detach() {  // the values, for the caller to free(); the buffer is left empty
            shrink_to_fit();
            T* q = ptr;
            ptr = nullptr;
            n = cap = 0;
            return q;
        }
        size_t size() const { return n; }
        size_t capacity() const { return cap; }
        T* data() { return ptr; }
        T& operator[](size_t i) { return ptr[i]; }
    };
    """
    cdef cppclass GrowBuf[T]:
        void reserve(size_t) except +
        void resize(size_t) except +
        void push_back(const T&) except +
        void pop_back()
        void release()
        void shrink_to_fit()
        T* detach()
        size_t size()
        size_t capacity()
        T* data()
        T& operator[](size_t)
