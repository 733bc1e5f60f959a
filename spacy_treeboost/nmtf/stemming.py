"""The Porter (1980) stemmer, which the paper applies to the corpus and the lexicon."""
from typing import Sequence, Tuple


def _is_consonant(word: str, i: int) -> bool:
    c = word[i]
    if c in "aeiou":
        return False
    if c == "y":
        return i == 0 or not _is_consonant(word, i - 1)
    return True


def _form(stem: str) -> str:
    """The stem's letters as "c" (consonant) and "v" (vowel)."""
    return "".join("c" if _is_consonant(stem, i) else "v" for i in range(len(stem)))


def _measure(stem: str) -> int:
    """m in [C](VC)^m[V]: the number of vowel-consonant sequences."""
    return _form(stem).count("vc")


def _has_vowel(stem: str) -> bool:
    return "v" in _form(stem)


def _double_consonant(stem: str) -> bool:
    return len(stem) >= 2 and stem[-1] == stem[-2] and _is_consonant(stem, len(stem) - 1)


def _cvc(stem: str) -> bool:
    """*o: the stem ends consonant-vowel-consonant, the last not w, x or y."""
    return _form(stem).endswith("cvc") and stem[-1] not in "wxy"


def _porter_step1a(w: str) -> str:
    for suffix, repl in (("sses", "ss"), ("ies", "i"), ("ss", "ss"), ("s", "")):
        if w.endswith(suffix):
            return w[: len(w) - len(suffix)] + repl
    return w


def _porter_step1b(w: str) -> str:
    if w.endswith("eed"):
        return w[:-1] if _measure(w[:-3]) > 0 else w
    for suffix in ("ed", "ing"):
        if w.endswith(suffix) and _has_vowel(w[: -len(suffix)]):
            w = w[: -len(suffix)]
            if w.endswith(("at", "bl", "iz")):
                return w + "e"
            if _double_consonant(w) and w[-1] not in "lsz":
                return w[:-1]
            if _measure(w) == 1 and _cvc(w):
                return w + "e"
            return w
    return w


def _porter_step1c(w: str) -> str:
    return w[:-1] + "i" if w.endswith("y") and _has_vowel(w[:-1]) else w


_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"),
    ("abli", "able"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"),
    ("ization", "ize"), ("ation", "ate"), ("ator", "ate"), ("alism", "al"), ("iveness", "ive"),
    ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
)
_STEP3 = (("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""), ("ness", ""))
_STEP4 = tuple((suffix, "") for suffix in (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
    "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
))


def _replace_longest(w: str, rules: Sequence[Tuple[str, str]], min_measure: int = 1) -> str:
    # Only the longest matching suffix counts; if its condition fails, nothing changes.
    matches = [(suffix, repl) for suffix, repl in rules if w.endswith(suffix)]
    if not matches:
        return w
    suffix, repl = max(matches, key=lambda rule: len(rule[0]))
    stem = w[: len(w) - len(suffix)]
    return stem + repl if _measure(stem) >= min_measure else w


def _porter_step2(w: str) -> str:
    return _replace_longest(w, _STEP2)


def _porter_step3(w: str) -> str:
    return _replace_longest(w, _STEP3)


def _porter_step4(w: str) -> str:
    # "ion" (no longer suffix of the list ends in it) is removed only after s or t
    if w.endswith("ion") and not w.endswith(("sion", "tion")):
        return w
    return _replace_longest(w, _STEP4, min_measure=2)


def _porter_step5a(w: str) -> str:
    if w.endswith("e"):
        stem = w[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _cvc(stem)):
            return stem
    return w


def _porter_step5b(w: str) -> str:
    return w[:-1] if _measure(w) > 1 and _double_consonant(w) and w.endswith("l") else w


def porter_stem(word: str) -> str:
    """The Porter stem of a lower-case word, e.g. "generalizations" -> "gener"; words of one or two letters and
    words with a character outside a-z are returned unchanged."""
    if len(word) <= 2 or not word.isascii() or not word.isalpha() or not word.islower():
        return word
    word = _porter_step1c(_porter_step1b(_porter_step1a(word)))
    word = _porter_step3(_porter_step2(word))
    return _porter_step5b(_porter_step5a(_porter_step4(word)))
