"""Examples of learned rules, found automatically in a trained model's rule list.

For a binary head, the rules of one pattern t add up to a score function of its count c:
s_t(0) = sum of b_r (t absent), s_t(c) = sum of (a_r if c >= z_r else -a_r) for c >= 1.
Positive scores vote for the head's class. Two kinds of examples are extracted, in the
spirit of Iwakura (2013, section 5):

- a word learned with several thresholds z (the single-node pattern with the most
  distinct z values, ties broken by the total |a|);
- a phrase whose repetition flips its polarity: a pattern (preferably of two or more
  words) whose score at one occurrence and at some larger count have opposite signs,
  the strongest such flip first.
"""
from typing import Any, Dict, List, Optional, Tuple

from spacy_treeboost.model import RuleSet, pattern_to_sexpr


def _phrase(code) -> str:
    """A chain pattern as words ("not good"); other shapes as S-expressions."""
    depths = [d for d, _ in code]
    if depths == list(range(len(depths))):
        return " ".join(l for _, l in code)
    return pattern_to_sexpr(code)


def score_function(rules: List[Tuple[int, float, float]], max_count: int) -> List[float]:
    """s(c) for c = 0..max_count from the (z, a, b) of one pattern's rules."""
    out = [sum(b for _, _, b in rules)]
    for c in range(1, max_count + 1):
        out.append(sum(a if c >= z else -a for z, a, _ in rules))
    return out


def rule_examples(rules_dict: Dict[str, Any], head: int = 0, n_flips: int = 3) -> Dict[str, Any]:
    """The examples of one head of a trained rule set, as plain data for the results JSON."""
    rs = RuleSet.from_dict(rules_dict)
    grouped: Dict[Any, List[Tuple[int, float, float, int]]] = {}
    for r, (code, z, a, b) in enumerate(rs.rules(head)):
        grouped.setdefault(code, []).append((z, a, b, r + 1))
    out: Dict[str, Any] = {"head": rs.heads[head], "n_rules": rs.n_rules(head), "n_patterns": len(grouped)}

    def entry(code, rules) -> Dict[str, Any]:
        zs = sorted({z for z, _, _, _ in rules})
        top = max(zs) + 1
        s = score_function([(z, a, b) for z, a, b, _ in rules], top)
        return {"pattern": _phrase(code), "size": len(code),
                "rules": [{"round": r, "z": z, "a": a, "b": b} for z, a, b, r in rules],
                "thresholds": zs, "score": {str(c): v for c, v in enumerate(s)}}

    words = [(code, rules) for code, rules in grouped.items() if len(code) == 1]
    word: Optional[Dict[str, Any]] = None
    if words:
        code, rules = max(words, key=lambda cr: (len({z for z, _, _, _ in cr[1]}), sum(abs(a) for _, a, _, _ in cr[1])))
        if len({z for z, _, _, _ in rules}) >= 2:
            word = entry(code, rules)
    out["word_with_thresholds"] = word

    flips = []
    for code, rules in grouped.items():
        zs = sorted({z for z, _, _, _ in rules})
        s = score_function([(z, a, b) for z, a, b, _ in rules], max(zs) + 1)
        one = s[1]
        for c in range(2, len(s)):
            if one * s[c] < 0:
                flips.append((len(code) >= 2, min(abs(one), abs(s[c])), code, rules, c))
                break
    flips.sort(key=lambda f: (f[0], f[1]), reverse=True)
    out["polarity_flips"] = [dict(entry(code, rules), flip_at=c) for _, _, code, rules, c in flips[:n_flips]]
    out["n_flipping_patterns"] = len(flips)
    out["n_patterns_with_thresholds"] = sum(1 for rules in grouped.values() if any(z > 1 for z, _, _, _ in rules))
    return out
