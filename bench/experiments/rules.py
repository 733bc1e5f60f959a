"""Examples of learned rules, found automatically in a trained model's rule list.

For one head, the rules of one pattern t add up to a score function of its count c:
s_t(0) = sum of b_r (t absent), s_t(c) = sum of (a_r if c >= z_r else -a_r) for c >= 1.
Positive scores vote for the head's class. Two kinds of examples are extracted, in the
spirit of Iwakura (2013, section 5):

- a word learned with several thresholds z (a single-node pattern made of letters with the
  most distinct z values, then the most training documents);
- a phrase whose repetition flips its polarity: a pattern whose score at one occurrence
  and at some larger count have opposite signs, with at least `min_docs` training
  documents on each side of the flip (a rule with z > 1 always changes sign at z, so
  the training support is what makes an example meaningful); phrases of two or more
  nodes first, then patterns made of words (not punctuation or numbers), then the
  strongest flip.

`pattern_support` counts, for every pattern of a rule set, how many training documents
of the head's class and of the other classes contain it 0, 1, 2, ... times.
"""
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy

from spacy_treeboost.models.rules import RuleSet, pattern_to_sexpr

MAX_COUNT = 30


def _phrase(code) -> str:
    """A chain pattern as words ("not good"); other shapes as S-expressions."""
    depths = [d for d, _ in code]
    if depths == list(range(len(depths))):
        return " ".join(l for _, l in code)
    return pattern_to_sexpr(code)


def _wordy(code) -> bool:
    """Every node label has a letter (words rather than punctuation or numbers)."""
    return all(any(ch.isalpha() for ch in label) for _, label in code)


def score_function(rules: List[Tuple[int, float, float]], max_count: int) -> List[float]:
    """s(c) for c = 0..max_count from the (z, a, b) of one pattern's rules."""
    out = [sum(b for _, _, b in rules)]
    for c in range(1, max_count + 1):
        out.append(sum(a if c >= z else -a for z, a, _ in rules))
    return out


def pattern_support(rules_dict: Dict[str, Any], forest, in_class: Sequence[bool]) -> List[Dict[str, List[int]]]:
    """Per pattern of the rule set: training documents by count (capped at MAX_COUNT), in and out of the class."""
    rs = RuleSet.from_dict(rules_dict)
    doc, pat, cnt = rs.match_counts(forest)
    in_class = numpy.asarray(in_class, dtype=bool)
    n_in, n_out = int(in_class.sum()), int((~in_class).sum())
    capped = numpy.minimum(cnt, MAX_COUNT)
    out = []
    for p in range(rs.n_patterns):
        sel = pat == p
        d, c = doc[sel], capped[sel]
        hin = numpy.bincount(c[in_class[d]], minlength=MAX_COUNT + 1)
        hout = numpy.bincount(c[~in_class[d]], minlength=MAX_COUNT + 1)
        hin[0] = n_in - hin[1:].sum()
        hout[0] = n_out - hout[1:].sum()
        out.append({"in": hin.tolist(), "out": hout.tolist()})
    return out


def rule_examples(rules_dict: Dict[str, Any], head: int = 0, support: Optional[List[Dict[str, List[int]]]] = None,
                  n_flips: int = 2, min_docs: int = 10) -> Dict[str, Any]:
    """The examples of one head of a trained rule set, as plain data for the results JSON."""
    rs = RuleSet.from_dict(rules_dict)
    pid = {code: i for i, code in enumerate(rs.patterns)}
    grouped: Dict[Any, List[Tuple[int, float, float, int]]] = {}
    for r, (code, z, a, b) in enumerate(rs.rules(head)):
        grouped.setdefault(code, []).append((z, a, b, r + 1))
    out: Dict[str, Any] = {"head": rs.heads[head], "n_rules": rs.n_rules(head), "n_patterns": len(grouped),
                           "min_docs": min_docs if support is not None else None}

    def docs_between(code, lo: int, hi: int) -> Tuple[int, int]:
        """Training documents (in class, not in class) with lo <= count < hi."""
        if support is None:
            return (0, 0)
        s = support[pid[code]]
        hi = min(hi, MAX_COUNT + 1)
        return (int(sum(s["in"][lo:hi])), int(sum(s["out"][lo:hi])))

    def entry(code, rules) -> Dict[str, Any]:
        zs = sorted({z for z, _, _, _ in rules})
        top = max(zs) + 1
        s = score_function([(z, a, b) for z, a, b, _ in rules], top)
        e = {"pattern": _phrase(code), "size": len(code),
             "rules": [{"round": r, "z": z, "a": a, "b": b} for z, a, b, r in rules],
             "thresholds": zs, "score": {str(c): v for c, v in enumerate(s)}}
        if support is not None:
            # training documents per count column (the last column is "top or more")
            e["train_docs"] = {str(c): docs_between(code, c, c + 1 if c < top else MAX_COUNT + 1) for c in range(top + 1)}
        return e

    words = [(code, rules) for code, rules in grouped.items() if len(code) == 1
             and len({z for z, _, _, _ in rules}) >= 2]
    word: Optional[Dict[str, Any]] = None
    if words:
        code, rules = max(words, key=lambda cr: (_wordy(cr[0]), len({z for z, _, _, _ in cr[1]}),
                                                 sum(docs_between(cr[0], 1, MAX_COUNT + 1)),
                                                 sum(abs(a) for _, a, _, _ in cr[1])))
        word = entry(code, rules)
    out["word_with_thresholds"] = word

    flips = []
    for code, rules in grouped.items():
        zs = sorted({z for z, _, _, _ in rules})
        s = score_function([(z, a, b) for z, a, b, _ in rules], max(zs) + 1)
        for c in range(2, len(s)):
            if s[1] * s[c] < 0:
                low = sum(docs_between(code, 1, c))
                high = sum(docs_between(code, c, MAX_COUNT + 1))
                if support is None or (low >= min_docs and high >= min_docs):
                    flips.append(((len(code) >= 2, _wordy(code)), min(abs(s[1]), abs(s[c])), code, rules, c))
                break
    flips.sort(key=lambda f: (f[0], f[1]), reverse=True)
    out["polarity_flips"] = [dict(entry(code, rules), flip_at=c) for _, _, code, rules, c in flips[:n_flips]]
    out["n_supported_flips"] = len(flips)
    out["n_patterns_with_thresholds"] = sum(1 for rules in grouped.values() if any(z > 1 for z, _, _, _ in rules))
    return out
