from Cython.Build import cythonize
from setuptools import Extension, setup

MOD_NAMES = [
    "spacy_treeboost.trees._preorder",
    "spacy_treeboost.trees._spelling",
    "spacy_treeboost.trees._bact",
    "spacy_treeboost.learning._patterns",
    "spacy_treeboost.learning._extension",
    "spacy_treeboost.learning._mine",
    "spacy_treeboost.learning._columns",
    "spacy_treeboost.learning._vectors",
    "spacy_treeboost.learning._order",
    "spacy_treeboost.learning._merge",
    "spacy_treeboost.models._match",
]

# no fused multiply-add contraction: the compiled sums round as numpy's do, on every platform
extensions = [
    Extension(name, [name.replace(".", "/") + ".pyx"], language="c++",
              extra_compile_args=["-O3", "-std=c++17", "-ffp-contract=off"])
    for name in MOD_NAMES
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={"language_level": 3, "embedsignature": True, "boundscheck": False, "wraparound": False, "cdivision": True, "initializedcheck": False},
    )
)
