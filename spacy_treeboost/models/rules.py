"""Boosted rule tables: classification by trie-guided matching, serialization, listing.

A rule is a stump over one subtree pattern t with threshold z and confidences
a, b: it scores a when t occurs at least z times, -a when it occurs fewer
times, and b when it does not occur. BACT's stumps are the case z = 1,
a = alpha * y, b = -alpha * y. A `RuleSet` holds one rule list per class
("head"); the margin of a document for a head is its intercept (0 for the
boosting learners) plus the sum of its rules.

The linear learners may instead score every pattern by a weight times
log(1 + count) (`value = "log1p"`): rules (t, 1, a, 0) then add a * log(1 + c).
With `value = "tfidf"` a rule (t, 1, a, idf) adds a * x_t, x_t = (1 + log c) * idf / n,
where n is the Euclidean norm of the document's (1 + log c) * idf over all rules of
the head (sublinear tf-idf, each document's row L2-normalized).
"""
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy

from ..files import ModelFormatError
from ..trees.bact import code_to_sexpr as pattern_to_sexpr
from ..trees.forest import Forest

FORMAT_NAME = "spacy-treeboost.rules"
FORMAT_VERSION = 1
SEALED_VERSION = 2
VALUES = ("stump", "log1p", "tfidf")
PUBLISHED = ("bact", "frequency", "presence")

Code = Tuple[Tuple[int, str], ...]


def _check_code(code: Code) -> None:
    depths = [d for d, _ in code]
    if not depths or depths[0] != 0 or any(not 1 <= d <= p + 1 for p, d in zip(depths, depths[1:])):
        raise ModelFormatError(f"The rule file holds an invalid pattern code {code!r}.")


class RuleSet:
    """Rule lists over shared subtree patterns, one list per head.

    heads (Sequence[str]): The names of the heads (classes scored one-vs-rest).
    algorithm (str): The learner that produced the rules, for the record.
    include_root_patterns (bool): Whether patterns may contain the document root;
        if not, root nodes never match, as in training.
    value (str): "stump" (a rule scores a / -a / b by count) or "log1p" (a rule
        scores a * log(1 + count)) or "tfidf" (a rule (t, 1, a, idf) scores a times
        t's normalized sublinear tf-idf).
    """

    def __init__(self, heads: Sequence[str], *, algorithm: str = "frequency", include_root_patterns: bool = False,
                 value: str = "stump") -> None:
        if value not in VALUES:
            raise ValueError(f"value={value!r} is invalid: choose one of {', '.join(VALUES)}")
        self.heads = list(heads)
        self.algorithm = algorithm
        self.include_root_patterns = include_root_patterns
        self.value = value
        self.intercepts: List[float] = [0.0] * len(self.heads)
        self.patterns: List[Code] = []
        self._pattern_ids: Dict[Code, int] = {}
        self._rules: List[List[Tuple[int, int, float, float]]] = [[] for _ in self.heads]
        self._compiled: Optional[Tuple[Any, ...]] = None

    def __len__(self) -> int:
        return sum(len(r) for r in self._rules)

    def n_rules(self, head: int) -> int:
        return len(self._rules[head])

    def add(self, head: int, code: Code, z: int, a: float, b: float) -> None:
        """Append a rule to head's list."""
        code = tuple((int(d), str(l)) for d, l in code)
        pid = self._pattern_ids.get(code)
        if pid is None:
            pid = self._pattern_ids[code] = len(self.patterns)
            self.patterns.append(code)
        self._rules[head].append((pid, int(z), float(a), float(b)))
        self._compiled = None

    def rules(self, head: int) -> List[Tuple[Code, int, float, float]]:
        return [(self.patterns[p], z, a, b) for p, z, a, b in self._rules[head]]

    def truncate(self, n_rules: int) -> "RuleSet":
        """A copy that keeps the first `n_rules` rules of every head."""
        out = self.empty_copy()
        for h in range(len(self.heads)):
            for code, z, a, b in self.rules(h)[:n_rules]:
                out.add(h, code, z, a, b)
        return out

    def empty_copy(self) -> "RuleSet":
        """A rule set with the same heads, settings and intercepts and no rules."""
        out = RuleSet(self.heads, algorithm=self.algorithm, include_root_patterns=self.include_root_patterns,
                      value=self.value)
        out.intercepts = list(self.intercepts)
        return out

    @property
    def label_strings(self) -> List[str]:
        """The node labels used by the patterns, in id order for matching."""
        return self._compile()[0]

    def _compile(self) -> Tuple[Any, ...]:
        if self._compiled is None:
            from ._match import PatternMatcher

            strings = sorted({l for code in self.patterns for _, l in code})
            ids = {s: i for i, s in enumerate(strings)}
            matcher = PatternMatcher([[(d, ids[l]) for d, l in code] for code in self.patterns], len(strings),
                              self.include_root_patterns)
            tables = []
            for rules in self._rules:
                arr = numpy.array(rules, dtype=numpy.float64).reshape(-1, 4)
                order = numpy.argsort(arr[:, 0], kind="stable")
                arr = arr[order]
                starts = numpy.searchsorted(arr[:, 0], numpy.arange(len(self.patterns) + 1))
                tables.append((starts, arr[:, 1], arr[:, 2], arr[:, 3], float(arr[:, 3].sum())))
            self._compiled = (strings, ids, matcher, tables)
        return self._compiled

    def label_ids(self, strings: Iterable[str]) -> numpy.ndarray:
        """Map node-label strings to the ids `margins_from_arrays` expects (-1 if unused)."""
        ids = self._compile()[1]
        return numpy.fromiter((ids.get(s, -1) for s in strings), dtype=numpy.int32)

    def _forest_labels(self, forest: Forest) -> numpy.ndarray:
        """The forest's node labels in this rule set's ids (-1 for labels no pattern uses)."""
        strings = self._compile()[0]
        ids = numpy.full(len(forest.vocab) + 1, -1, dtype=numpy.int32)
        for i, s in enumerate(strings):
            j = forest.vocab.get(s)
            if j >= 0:
                ids[j] = i
        return ids[numpy.where(forest.labels >= 0, forest.labels, len(ids) - 1)]

    def match_counts(self, forest: Forest) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        """(doc, pattern, count) of every pattern occurring in every document."""
        return self._compile()[2].count(self._forest_labels(forest), forest.parents, forest.offsets)

    def margins(self, forest: Forest) -> numpy.ndarray:
        """The margin of every document for every head, shape (n_docs, n_heads)."""
        return self.margins_from_arrays(self._forest_labels(forest), forest.parents, forest.offsets)

    def margins_from_arrays(self, labels: numpy.ndarray, parents: numpy.ndarray, offsets: numpy.ndarray) -> numpy.ndarray:
        """Margins for preorder arrays whose labels are already this rule set's ids."""
        n_docs = len(offsets) - 1
        out = numpy.zeros((n_docs, len(self.heads)), dtype=numpy.float64)
        out += numpy.asarray(self.intercepts, dtype=numpy.float64)
        if not self.patterns:
            return out
        _, _, matcher, tables = self._compile()
        doc, pat, cnt = matcher.count(labels, parents, offsets)
        for h, (starts, z, a, b, bias) in enumerate(tables):
            if self.value == "stump":
                out[:, h] += bias
            lo, hi = starts[pat], starts[pat + 1]
            n = hi - lo
            if not n.sum():
                continue
            rule = numpy.repeat(lo - numpy.cumsum(n) + n, n) + numpy.arange(n.sum())
            c = numpy.repeat(cnt, n)
            rows = numpy.repeat(doc, n)
            if self.value == "tfidf":
                x = (1.0 + numpy.log(c)) * b[rule]
                norm = numpy.sqrt(numpy.bincount(rows, weights=x * x, minlength=n_docs))
                score = numpy.bincount(rows, weights=a[rule] * x, minlength=n_docs)
                out[:, h] += numpy.divide(score, norm, out=numpy.zeros(n_docs), where=norm > 0)
                continue
            if self.value == "log1p":
                contrib = a[rule] * numpy.log1p(c)
            else:
                contrib = numpy.where(c >= z[rule], a[rule], -a[rule]) - b[rule]
            out[:, h] += numpy.bincount(rows, weights=contrib, minlength=n_docs)
        return out

    def contributions(self, forest: Forest, i: int, head: int) -> List[Dict[str, Any]]:
        """The rules of `head` whose pattern occurs in document i, with counts and scores."""
        doc, pat, cnt = self.match_counts(forest.subset([i]))
        counts = dict(zip(pat.tolist(), cnt.tolist()))
        out = []
        norm = 1.0
        if self.value == "tfidf":
            norm = float(numpy.sqrt(sum(((1.0 + numpy.log(counts[pid])) * b) ** 2
                                        for pid, _, _, b in self._rules[head] if pid in counts))) or 1.0
        for r, (pid, z, a, b) in enumerate(self._rules[head]):
            c = counts.get(pid, 0)
            if c:
                if self.value == "tfidf":
                    score, b = a * float((1.0 + numpy.log(c)) * b) / norm, 0.0
                elif self.value == "log1p":
                    score, b = a * float(numpy.log1p(c)), 0.0
                else:
                    score = a if c >= z else -a
                out.append({"rule": r, "pattern": pattern_to_sexpr(self.patterns[pid]), "code": self.patterns[pid],
                            "count": c, "z": z, "score": score, "contribution": score - b})
        return out

    def describe(self, head: int, rule: int) -> str:
        pid, z, a, b = self._rules[head][rule]
        pattern = pattern_to_sexpr(self.patterns[pid])
        if self.value == "log1p":
            return f"{pattern} → {a:+.4f} × log(1 + count)"
        if self.value == "tfidf":
            return f"{pattern} → {a:+.4f} × tf-idf (idf {b:.4f})"
        if z <= 1 and b == 0.0 and self.algorithm not in PUBLISHED:
            return f"{pattern} present → {a:+.4f}"
        if z <= 1:
            return f"{pattern} present → {a:+.4f} | absent → {b:+.4f}"
        return f"{pattern} ≥ {z} → {a:+.4f} | < {z} → {-a:+.4f} | absent → {b:+.4f}"

    def listing(self, head: Optional[int] = None) -> str:
        """A readable listing of the rules, one per line, per head."""
        lines = []
        for h in range(len(self.heads)) if head is None else [head]:
            lines.append(f"# {self.heads[h]}: {self.n_rules(h)} rules")
            if self.intercepts[h]:
                lines.append(f"{'bias':>6}  {self.intercepts[h]:+.4f}")
            lines.extend(f"{r + 1:6d}  {self.describe(h, r)}" for r in range(self.n_rules(h)))
        return "\n".join(lines)

    def to_dict(self) -> Dict[str, Any]:
        """The rules as plain data; "intercepts" and "value" are written only when they differ from the
        boosting learners' (all 0, "stump"), so those files keep their published form."""
        data = {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "algorithm": self.algorithm,
            "include_root_patterns": self.include_root_patterns,
            "heads": self.heads,
            "patterns": [[[d for d, _ in code], [l for _, l in code]] for code in self.patterns],
            "rules": [[list(col) for col in zip(*rules)] if rules else [[], [], [], []] for rules in self._rules],
        }
        if any(self.intercepts):
            data["intercepts"] = list(self.intercepts)
        if self.value != "stump":
            data["value"] = self.value
        return data

    @classmethod
    def from_dict(cls, data: Any) -> "RuleSet":
        if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
            raise ModelFormatError("This is not a spacy-treeboost rule file (its format marker is missing).")
        if data.get("version") != FORMAT_VERSION:
            raise ModelFormatError(
                f"Rule file format version {data.get('version')!r} is not supported (this version reads "
                f"{FORMAT_VERSION}); retrain the model or upgrade spacy-treeboost.")
        try:
            value = data.get("value", "stump")
            if value not in VALUES:
                raise ModelFormatError(f"The rule file has an unknown rule value {value!r} (this version reads "
                                       f"{', '.join(VALUES)}); it was written by a newer spacy-treeboost: upgrade "
                                       "to read it, or retrain the model.")
            heads = data["heads"]
            if not isinstance(heads, list) or not heads or not all(isinstance(h, str) for h in heads) \
                    or len(set(heads)) != len(heads):
                raise ModelFormatError(f"The rule file's heads must be a non-empty list of distinct strings, found "
                                       f"{heads!r}.")
            out = cls(heads, algorithm=data["algorithm"],
                      include_root_patterns=bool(data.get("include_root_patterns", False)), value=value)
            intercepts = [float(v) for v in data.get("intercepts", out.intercepts)]
            if len(intercepts) != len(out.heads) or not all(numpy.isfinite(intercepts)):
                raise ModelFormatError("The rule file's intercepts do not match its heads or are not finite.")
            out.intercepts = intercepts
            for ds, ls in data["patterns"]:
                if len(ds) != len(ls) or not all(isinstance(d, int) for d in ds) or not all(isinstance(l, str) for l in ls):
                    raise ModelFormatError("A pattern's depths and labels differ in length or type; the file is "
                                           "damaged.")
            out.patterns = [tuple(zip(map(int, ds), map(str, ls))) for ds, ls in data["patterns"]]
            out._pattern_ids = {code: i for i, code in enumerate(out.patterns)}
            for code in out.patterns:
                _check_code(code)
            if len(out._pattern_ids) != len(out.patterns):
                raise ModelFormatError("The rule file lists a pattern twice.")
            if len(data["rules"]) != len(out.heads):
                raise ModelFormatError(f"The rule file has {len(data['rules'])} rule lists for {len(out.heads)} heads.")
            for h, (pids, zs, as_, bs) in enumerate(data["rules"]):
                if not len(pids) == len(zs) == len(as_) == len(bs):
                    raise ModelFormatError(f"The rule file's rule columns of head {h} have different lengths "
                                           f"({len(pids)}, {len(zs)}, {len(as_)}, {len(bs)}); the file is damaged.")
                if not all(isinstance(v, int) and not isinstance(v, bool) for v in (*pids, *zs)):
                    raise ModelFormatError("A rule's pattern id or threshold is not a whole number; the file is "
                                           "damaged.")
                if any(not 0 <= p < len(out.patterns) for p in pids):
                    raise ModelFormatError("A rule refers to a pattern the file does not contain.")
                out._rules[h] = [(int(p), int(z), float(a), float(b)) for p, z, a, b in zip(pids, zs, as_, bs)]
                if not all(numpy.isfinite(a) and numpy.isfinite(b) and z >= 1 for _, z, a, b in out._rules[h]):
                    raise ModelFormatError("The rule file holds a weight that is not a finite number or a threshold "
                                           "below 1; the file is damaged, retrain the model.")
                if value == "tfidf" and not all(b > 0 for _, _, _, b in out._rules[h]):
                    raise ModelFormatError("The rule file holds an idf that is not positive; the file is damaged, "
                                           "retrain the model.")
        except (KeyError, TypeError, ValueError) as err:
            if isinstance(err, ModelFormatError):
                raise
            raise ModelFormatError(f"The rule file is corrupt: {err!r}") from None
        return out

    def to_bytes(self) -> bytes:
        """The rule file: `to_dict` sealed with a SHA-256 checksum (format version 2)."""
        from ..files import seal

        return seal(self.to_dict(), FORMAT_NAME, SEALED_VERSION)

    @classmethod
    def from_bytes(cls, data: bytes) -> "RuleSet":
        """Load a rule file: sealed (version 2) after its checksum is verified, or unsealed (version 1)."""
        from ..files import unseal

        payload, _ = unseal(data, FORMAT_NAME, SEALED_VERSION, FORMAT_VERSION, error=ModelFormatError,
                            what="rule file")
        return cls.from_dict(payload)

    def to_disk(self, path: Union[str, Path]) -> None:
        from ..files import write_bytes_atomic

        write_bytes_atomic(path, self.to_bytes())

    @classmethod
    def from_disk(cls, path: Union[str, Path]) -> "RuleSet":
        from ..files import check_model_file

        try:
            check_model_file(path, ModelFormatError, "rule file")
        except OSError as err:
            raise ModelFormatError(f"cannot read {path}: {err.strerror}") from None
        try:
            return cls.from_bytes(Path(path).read_bytes())
        except ModelFormatError as err:
            raise ModelFormatError(f"{path}: {err}") from None
        except OSError as err:
            raise ModelFormatError(f"cannot read {path}: {err.strerror}") from None
