"""Rule sets: per class ("head") a margin, its intercept plus the scores of rules over subtree patterns.

A stump (t, z, a, b) scores a when pattern t occurs at least z times, -a when fewer, b when not at all; with
`value = "tfidf"` (t, 1, a, idf) scores a * (1 + log count) * idf / n, n the L2 norm of the document's
(1 + log count) * idf over the head's rules."""
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy

from ..files import ModelFormatError, check_model_file, seal, unseal, write_bytes_atomic
from ..trees.bact import code_to_sexpr as pattern_to_sexpr
from ..trees.forest import Forest
from .rule_tables import Columns, check_tables, decode_flat, empty_columns, encode_flat, frozen, numbered_by_first_use

FORMAT_NAME = "spacy-treeboost.rules"
FORMAT_VERSION = 1
FLAT_VERSION = 2
FLAT_MIN_RULES = 10_000
SEALED_VERSION = 1
VALUES = ("stump", "tfidf")

PUBLISHED = ("bact", "frequency", "presence")

Rule = Tuple[int, int, float, float]
Code = Tuple[Tuple[int, str], ...]


class RuleSet:
    """Rule lists over shared subtree patterns, one per head (class scored one-vs-rest), in flat arrays (`rule_tables`);
    `add` appends to a buffer moved into the arrays when next read.

    algorithm (str): The learner that produced the rules, for the record.
    include_root_patterns (bool): Whether patterns may contain the document root (else root nodes never match).
    value (str): "stump" or "tfidf": how a rule scores (see the module).
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
        self._set_tables([], numpy.zeros(0, numpy.int32), numpy.zeros(0, numpy.int32), numpy.zeros(1, numpy.int64),
                         [empty_columns() for _ in self.heads], codes=[])

    def _set_tables(self, strings: List[str], depth: numpy.ndarray, label: numpy.ndarray, code_start: numpy.ndarray,
                    columns: List[Columns], codes: Optional[List[Code]] = None) -> None:
        self._strings = strings
        self._string_ids: Optional[Dict[str, int]] = None
        self._depth, self._label, self._code_start = frozen(depth), frozen(label), frozen(code_start)
        self._columns: List[Columns] = [(frozen(pid), frozen(z), frozen(a), frozen(b)) for pid, z, a, b in columns]
        self._codes = codes
        self._pattern_ids: Optional[Dict[Code, int]] = None
        self._new_codes: List[Code] = []
        self._new_rules: List[List[Rule]] = [[] for _ in self.heads]
        self._labels: Optional[Tuple[List[str], numpy.ndarray]] = None
        self._compiled: Optional[Tuple[Any, ...]] = None

    @classmethod
    def from_arrays(cls, heads: Sequence[str], *, algorithm: str, include_root_patterns: bool = False,
                    value: str = "stump", strings: Sequence[str], depth: numpy.ndarray, label: numpy.ndarray,
                    code_start: numpy.ndarray,
                    rules: Sequence[Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray, numpy.ndarray]],
                    intercepts: Optional[Sequence[float]] = None, distinct: bool = False,
                    threads: int = 1) -> "RuleSet":
        """A rule set from the tables of `rule_tables` (per head the columns pattern id, z, a, b), the same as `add`
        builds (unused patterns dropped, the others numbered by first use); a ValueError names what is wrong.

        distinct (bool): The patterns are known to be distinct, which spares that check.
        threads (int): Threads for numbering a large table (the same rule set for any number).
        """
        out = cls(heads, algorithm=algorithm, include_root_patterns=include_root_patterns, value=value)
        if intercepts is not None:
            values = numpy.asarray(intercepts, dtype=numpy.float64)
            if values.shape != (len(out.heads),) or not numpy.isfinite(values).all():
                raise ValueError(f"RuleSet.from_arrays: intercepts must be {len(out.heads)} finite numbers, one per "
                                 "head")
            out.intercepts = values.tolist()
        try:
            tables = check_tables(strings, depth, label, code_start, rules, n_heads=len(out.heads), value=value,
                                  distinct=distinct)
        except ValueError as err:
            raise ValueError(f"RuleSet.from_arrays: {err}") from None
        out._set_tables(*numbered_by_first_use(*tables, threads=threads))
        return out

    def __len__(self) -> int:
        return sum(self.n_rules(h) for h in range(len(self.heads)))

    def n_rules(self, head: int) -> int:
        return len(self._columns[head][0]) + len(self._new_rules[head])

    @property
    def n_patterns(self) -> int:
        """The number of distinct patterns."""
        return len(self._code_start) - 1 + len(self._new_codes)

    def pattern(self, i: int) -> Code:
        """The code of pattern i: (depth, label) pairs in preorder."""
        if not 0 <= i < self.n_patterns:
            raise IndexError(f"pattern {i} does not exist: the rule set has {self.n_patterns} patterns")
        if self._codes is not None:
            return self._codes[i]
        lo, hi = self._code_start[i], self._code_start[i + 1]
        return tuple(zip(self._depth[lo:hi].tolist(), [self._strings[j] for j in self._label[lo:hi].tolist()]))

    @property
    def patterns(self) -> List[Code]:
        """Every pattern's code, in id order (built on first use for a rule set made from arrays)."""
        if self._codes is None:
            nodes = list(zip(self._depth.tolist(), [self._strings[j] for j in self._label.tolist()]))
            bounds = self._code_start.tolist()
            self._codes = [tuple(nodes[lo:hi]) for lo, hi in zip(bounds, bounds[1:])]
        return self._codes

    def add(self, head: int, code: Code, z: int, a: float, b: float) -> None:
        """Append a rule to head's list."""
        code = tuple((int(d), str(l)) for d, l in code)
        if self._pattern_ids is None:
            self._pattern_ids = {c: i for i, c in enumerate(self.patterns)}
        pid = self._pattern_ids.get(code)
        if pid is None:
            pid = self._pattern_ids[code] = self.n_patterns
            self._new_codes.append(code)
            self.patterns.append(code)
        self._new_rules[head].append((pid, int(z), float(a), float(b)))
        self._labels = self._compiled = None

    def _flush(self) -> None:
        """Move the rules and patterns of `add` into the arrays."""
        if self._new_codes:
            if self._string_ids is None:
                self._string_ids = {s: i for i, s in enumerate(self._strings)}
            depth, label, ends = _interned((zip(*code) for code in self._new_codes), self._string_ids)
            self._strings = list(self._string_ids)
            self._depth = frozen(numpy.concatenate([self._depth, numpy.asarray(depth, dtype=numpy.int32)]))
            self._label = frozen(numpy.concatenate([self._label, numpy.asarray(label, dtype=numpy.int32)]))
            ends = numpy.asarray(ends, dtype=numpy.int64) + self._code_start[-1]
            self._code_start = frozen(numpy.concatenate([self._code_start, ends]))
            self._new_codes = []
        for h, new in enumerate(self._new_rules):
            if new:
                pid, z, a, b = (frozen(numpy.concatenate([col, numpy.asarray(values, dtype=col.dtype)]))
                                for col, values in zip(self._columns[h], zip(*new)))
                self._columns[h] = (pid, z, a, b)
                self._new_rules[h] = []

    def rule_arrays(self, head: int) -> Columns:
        """Head's rules as read-only columns (pattern id, z, a, b), in rule order."""
        self._flush()
        return self._columns[head]

    def rules(self, head: int) -> List[Tuple[Code, int, float, float]]:
        """Head's rules as (code, z, a, b), in rule order."""
        codes = self.patterns
        pid, z, a, b = self.rule_arrays(head)
        return [(codes[p], zz, aa, bb) for p, zz, aa, bb in zip(pid.tolist(), z.tolist(), a.tolist(), b.tolist())]

    def truncate(self, n_rules: int) -> "RuleSet":
        """A copy that keeps the first `n_rules` rules of every head."""
        self._flush()
        out = self.empty_copy()
        columns = [(pid[:n_rules], z[:n_rules], a[:n_rules], b[:n_rules]) for pid, z, a, b in self._columns]
        out._set_tables(*numbered_by_first_use(list(self._strings), self._depth, self._label, self._code_start,
                                               columns))
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
        return self._label_table()[0]

    def _label_table(self) -> Tuple[List[str], numpy.ndarray]:
        """The sorted distinct labels of the patterns, and every pattern node's label as an index into them."""
        if self._labels is None:
            self._flush()
            present = numpy.zeros(len(self._strings), dtype=bool)
            present[self._label] = True
            used = numpy.flatnonzero(present)
            names = [self._strings[i] for i in used.tolist()]
            order = sorted(range(len(names)), key=names.__getitem__)
            remap = numpy.full(len(self._strings), -1, dtype=numpy.int32)
            remap[used[order]] = numpy.arange(len(order), dtype=numpy.int32)
            strings = [names[i] for i in order]
            self._labels = (strings, frozen(remap[self._label]))
        return self._labels

    def _compile(self) -> Tuple[Any, ...]:
        if self._compiled is None:
            from ._match import PatternMatcher

            strings, labels = self._label_table()
            matcher = PatternMatcher(self._depth, labels, self._code_start, len(strings), self.include_root_patterns)
            tables = []
            for pid, z, a, b in self._columns:
                order = numpy.argsort(pid, kind="stable")
                starts = numpy.zeros(self.n_patterns + 1, dtype=numpy.int64)
                numpy.cumsum(numpy.bincount(pid, minlength=self.n_patterns), out=starts[1:])
                tables.append((starts, z[order], a[order], b[order], float(b[order].sum())))
            self._compiled = (matcher, tables)
        return self._compiled

    def _forest_labels(self, forest: Forest) -> numpy.ndarray:
        """The forest's node labels in this rule set's ids (-1 for labels no pattern uses)."""
        strings = self._label_table()[0]
        ids = numpy.full(len(forest.vocab) + 1, -1, dtype=numpy.int32)
        for i, s in enumerate(strings):
            j = forest.vocab.get(s)
            if j >= 0:
                ids[j] = i
        return ids[numpy.where(forest.labels >= 0, forest.labels, len(ids) - 1)]

    def match_counts(self, forest: Forest) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        """(doc, pattern, count) of every pattern occurring in every document."""
        return self._compile()[0].count(self._forest_labels(forest), forest.parents, forest.offsets)

    def margins(self, forest: Forest) -> numpy.ndarray:
        """The margin of every document for every head, shape (n_docs, n_heads)."""
        return self.margins_from_arrays(self._forest_labels(forest), forest.parents, forest.offsets)

    def margins_from_arrays(self, labels: numpy.ndarray, parents: numpy.ndarray, offsets: numpy.ndarray) -> numpy.ndarray:
        """Margins for preorder arrays whose labels are already this rule set's ids."""
        n_docs = len(offsets) - 1
        out = numpy.zeros((n_docs, len(self.heads)), dtype=numpy.float64)
        out += numpy.asarray(self.intercepts, dtype=numpy.float64)
        if not self.n_patterns:
            return out
        matcher, tables = self._compile()
        doc, pat, cnt = matcher.count(labels, parents, offsets)
        for h, (starts, z, a, b, bias) in enumerate(tables):
            if self.value == "stump":
                out[:, h] += bias
            rows, rule, c = _expand(starts, doc, pat, cnt)
            if not len(rule):
                continue
            if self.value == "tfidf":
                x = (1.0 + numpy.log(c)) * b[rule]
                norm = numpy.sqrt(numpy.bincount(rows, weights=x * x, minlength=n_docs))
                score = numpy.bincount(rows, weights=a[rule] * x, minlength=n_docs)
                out[:, h] += numpy.divide(score, norm, out=numpy.zeros(n_docs), where=norm > 0)
                continue
            contrib = numpy.where(c >= z[rule], a[rule], -a[rule]) - b[rule]
            out[:, h] += numpy.bincount(rows, weights=contrib, minlength=n_docs)
        return out

    def fired_rules(self, forest: Forest, head: int) -> Tuple[numpy.ndarray, ...]:
        """Every rule of `head` whose pattern occurs in a document of the forest, as arrays: the document, the rule's
        index, its pattern's count, the value it scores (the count; the normalized tf-idf for "tfidf"), its score and
        its contribution (its score minus its score when absent)."""
        n_docs = len(forest.offsets) - 1
        rows, rule, count = numpy.zeros(0, dtype=numpy.int64), numpy.zeros(0, dtype=numpy.int64), numpy.zeros(0)
        if self.n_patterns:
            rows, sorted_rule, count = _expand(self._compile()[1][head][0], *self.match_counts(forest))
            rule = numpy.argsort(self.rule_arrays(head)[0], kind="stable")[sorted_rule].astype(numpy.int64)
            rows = rows.astype(numpy.int64)
        _, z, a, b = (numpy.asarray(column)[rule] for column in self.rule_arrays(head))
        value = count.astype(numpy.float64)
        if self.value == "tfidf":
            value = (1.0 + numpy.log(value)) * b
            norm = numpy.sqrt(numpy.bincount(rows, weights=value * value, minlength=n_docs))
            value = value / numpy.where(norm > 0, norm, 1.0)[rows]
            return rows, rule, count, value, a * value, a * value
        score = numpy.where(value >= z, a, -a)
        return rows, rule, count, value, score, score - b

    def contributions(self, forest: Forest, i: int, head: int) -> List[Dict[str, Any]]:
        """The rules of `head` whose pattern occurs in document i, in rule order, with counts and scores."""
        _, rule, count, _, score, contribution = self.fired_rules(forest.subset([i]), head)
        order = numpy.argsort(rule, kind="stable")
        pid, z = (column[rule[order]].tolist() for column in self.rule_arrays(head)[:2])
        out = []
        for r, p, rz, c, sc, con in zip(rule[order].tolist(), pid, z,
                                         *(column[order].tolist() for column in (count, score, contribution))):
            code = self.pattern(p)
            out.append({"rule": r, "pattern": pattern_to_sexpr(code), "code": code, "count": c, "z": rz,
                        "score": sc, "contribution": con})
        return out

    def describe(self, head: int, rule: int) -> str:
        """One rule of `head` as `listing` writes it."""
        n = self.n_rules(head)
        if not -n <= rule < n:
            raise IndexError(f"rule {rule} does not exist: head {head} has {n} rules")
        pid, z, a, b = (c[rule].item() for c in self.rule_arrays(head))
        return self._describe(self.pattern(pid), z, a, b)

    def _describe(self, code: Code, z: int, a: float, b: float) -> str:
        pattern = pattern_to_sexpr(code)
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
            lines.extend(f"{r + 1:6d}  {self._describe(*rule)}" for r, rule in enumerate(self.rules(h)))
        return "\n".join(lines)

    def to_dict(self) -> Dict[str, Any]:
        """The rules as plain data: as lists (format version 1, "intercepts" and "value" only when not all 0 and
        "stump") or, past FLAT_MIN_RULES rules, as flat little-endian arrays (format version 2, `rule_tables`)."""
        self._flush()
        data: Dict[str, Any] = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "algorithm": self.algorithm,
                                "include_root_patterns": self.include_root_patterns, "heads": self.heads}
        flat = len(self) > FLAT_MIN_RULES
        if flat:
            strings, labels = self._label_table()
            data["version"] = FLAT_VERSION
            data["patterns"], data["rules"] = encode_flat(strings, self._depth, labels, self._code_start,
                                                          self._columns)
        else:
            data["patterns"] = [[[d for d, _ in code], [l for _, l in code]] for code in self.patterns]
            data["rules"] = [[c.tolist() for c in cols] for cols in self._columns]
        if flat or any(self.intercepts):
            data["intercepts"] = list(self.intercepts)
        if flat or self.value != "stump":
            data["value"] = self.value
        return data

    @classmethod
    def from_dict(cls, data: Any) -> "RuleSet":
        """The rule set of a rule file's data, every entry checked; a ModelFormatError names what is wrong."""
        if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
            raise ModelFormatError("This is not a spacy-treeboost rule file (its format marker is missing).")
        if data.get("version") not in (FORMAT_VERSION, FLAT_VERSION):
            raise ModelFormatError(
                f"Rule file format version {data.get('version')!r} is not supported (this version reads "
                f"{FORMAT_VERSION} and {FLAT_VERSION}); retrain the model or upgrade spacy-treeboost.")
        value = data.get("value", "stump")
        if value not in VALUES:
            raise ModelFormatError(f"The rule file has an unknown rule value {value!r} (this version reads "
                                   f"{', '.join(VALUES)}); it was written by another spacy-treeboost: read it with "
                                   "that version (upgrade if newer), or retrain the model.")
        try:
            heads = data["heads"]
            if not (isinstance(heads, list) and heads and all(isinstance(h, str) for h in heads)
                    and len(set(heads)) == len(heads)):
                raise ModelFormatError(f"The rule file's heads must be a non-empty list of distinct strings, found "
                                       f"{heads!r}.")
            out = cls(heads, algorithm=data["algorithm"],
                      include_root_patterns=bool(data.get("include_root_patterns", False)), value=value)
            intercepts = [float(v) for v in data.get("intercepts", out.intercepts)]
            if len(intercepts) != len(out.heads) or not all(numpy.isfinite(intercepts)):
                raise ModelFormatError("The rule file's intercepts do not match its heads or are not finite.")
            out.intercepts = intercepts
            read = decode_flat if data["version"] == FLAT_VERSION else _lists_as_arrays
            tables = check_tables(*read(data["patterns"], data["rules"]), n_heads=len(out.heads), value=value)
            out._set_tables(*tables)
        except ModelFormatError:
            raise
        except ValueError as err:
            raise ModelFormatError(f"The rule file is damaged: {err}; restore it from a copy or retrain the "
                                   "model.") from None
        except (KeyError, TypeError) as err:
            raise ModelFormatError(f"The rule file is corrupt: {err!r}") from None
        return out

    def to_bytes(self) -> bytes:
        """The rule file: `to_dict` sealed with a SHA-256 checksum (format version 1)."""
        return seal(self.to_dict(), FORMAT_NAME, SEALED_VERSION)

    @classmethod
    def from_bytes(cls, data: bytes) -> "RuleSet":
        """Load a rule file after its checksum is verified."""
        return cls.from_dict(unseal(data, FORMAT_NAME, SEALED_VERSION, error=ModelFormatError, what="rule file"))

    def to_disk(self, path: Union[str, Path]) -> None:
        write_bytes_atomic(path, self.to_bytes())

    @classmethod
    def from_disk(cls, path: Union[str, Path]) -> "RuleSet":
        try:
            check_model_file(path, ModelFormatError, "rule file")
            data = Path(path).read_bytes()
        except OSError as err:
            raise ModelFormatError(f"cannot read {path}: {err.strerror}") from None
        try:
            return cls.from_bytes(data)
        except ModelFormatError as err:
            raise ModelFormatError(f"{path}: {err}") from None


def _expand(starts: numpy.ndarray, doc: numpy.ndarray, pat: numpy.ndarray,
            cnt: numpy.ndarray) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """Per rule of the (doc, pattern, count) matches: its document, its index among the rules sorted by pattern
    (`starts` are the pattern offsets into them) and its pattern's count."""
    n = starts[pat + 1] - starts[pat]
    rule = numpy.repeat(starts[pat] - numpy.cumsum(n) + n, n) + numpy.arange(n.sum())
    return numpy.repeat(doc, n), rule, numpy.repeat(cnt, n)


def _lists_as_arrays(patterns: Any, rules: Any) -> Tuple[List[str], List[int], List[int], List[int], Any]:
    """The tables of a rule file of format version 1, for `check_tables`."""
    strings: Dict[str, int] = {}
    depth, label, ends = _interned(patterns, strings)
    return list(strings), depth, label, [0] + ends, rules


def _interned(codes: Iterable[Iterable[Any]], ids: Dict[str, int]) -> Tuple[List[int], List[int], List[int]]:
    """The depths, label ids and ends of codes given as (depths, labels), new labels added to `ids`."""
    depth: List[int] = []
    label: List[int] = []
    ends: List[int] = []
    for ds, ls in codes:
        if len(ds) != len(ls) or not all(isinstance(l, str) for l in ls):
            raise ValueError("a pattern's depths and labels differ in length or type")
        depth.extend(ds)
        label.extend(ids.setdefault(l, len(ids)) for l in ls)
        ends.append(len(depth))
    return depth, label, ends
