"""A tiny corpus in the BACT text format."""


TRAIN = """\
+1 (ROOT(a(b))(c))
+1 (ROOT(a(b))(a(b)))
-1 (ROOT(a)(b))
-1 (ROOT(c(a)))
+1 (ROOT(x(a(b))))
-1 (ROOT(b(a)))
"""
