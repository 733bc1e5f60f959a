"""Rule tables as flat arrays, checked, numbered and laid out in rule files: the depth and label id (into strings) of
every pattern node, the codes concatenated, with int64 offsets `code_start` (pattern p is nodes code_start[p] ..
code_start[p + 1] - 1); per head four rule columns: pattern id (int64), threshold z (int32), a and b (float64)."""
from typing import Any, Dict, List, Sequence, Tuple

import numpy

from ..threads import ThreadTeam
from ._match import codes_in_order

Columns = Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray, numpy.ndarray]
Tables = Tuple[List[str], numpy.ndarray, numpy.ndarray, numpy.ndarray, List[Columns]]

INT32_MAX = numpy.iinfo(numpy.int32).max
PATTERN_KEYS = ("strings", "depth", "label", "code_start")
RULE_KEYS = ("pattern", "z", "a", "b")
LAYOUT = {"depth": "<i4", "label": "<i4", "code_start": "<i8", "pattern": "<i8", "z": "<i4", "a": "<f8", "b": "<f8"}
DTYPES = {"depth": numpy.int32, "label": numpy.int32, "code_start": numpy.int64, "pattern": numpy.int64,
          "z": numpy.int32, "a": numpy.float64, "b": numpy.float64}


def frozen(array: numpy.ndarray) -> numpy.ndarray:
    """`array`, made read-only (a rule set's tables are shared by its copies and its matcher)."""
    array.flags.writeable = False
    return array


def empty_columns() -> Columns:
    return tuple(frozen(numpy.zeros(0, dtype=DTYPES[k])) for k in RULE_KEYS)  # type: ignore[return-value]


def _array(values: Any, name: str) -> numpy.ndarray:
    """`values` as a 1-d array of `name`'s dtype, after checking that it holds numbers that fit."""
    array = numpy.asarray(values)
    integer = numpy.dtype(DTYPES[name]).kind == "i"
    if array.ndim != 1:
        raise ValueError(f"{name} must be a 1-d array, got shape {array.shape}")
    if array.size == 0:
        return numpy.zeros(0, dtype=DTYPES[name])
    if array.dtype.kind not in ("iu" if integer else "iuf"):
        raise ValueError(f"{name} must hold {'whole numbers' if integer else 'numbers'}, got dtype {array.dtype}")
    if DTYPES[name] == numpy.int32 and (array.min() < -INT32_MAX or array.max() > INT32_MAX):
        raise ValueError(f"{name} holds {int(array.max())}, which is too large for int32")
    return numpy.ascontiguousarray(array, dtype=DTYPES[name])


def check_tables(strings: Sequence[str], depth: Any, label: Any, code_start: Any, rules: Sequence[Sequence[Any]],
                 *, n_heads: int, value: str, distinct: bool = False) -> Tables:
    """The tables as arrays of their dtypes, checked (the patterns' distinctness unless `distinct`); a ValueError
    names what is wrong."""
    if isinstance(strings, (str, bytes)) or not all(isinstance(s, str) for s in strings):
        raise ValueError("strings must be a sequence of label strings")
    strings = list(strings)
    if len(set(strings)) != len(strings):
        raise ValueError("strings lists a label twice; the label strings must be distinct")
    depth, label, code_start = _array(depth, "depth"), _array(label, "label"), _array(code_start, "code_start")
    if len(label) != len(depth):
        raise ValueError(f"depth has {len(depth)} nodes and label {len(label)}; they must be equally long")
    if len(code_start) == 0 or code_start[0] != 0 or code_start[-1] != len(depth):
        raise ValueError(f"code_start must run from 0 to the number of pattern nodes ({len(depth)})")
    lengths = numpy.diff(code_start)
    if len(lengths) and lengths.min() < 1:
        raise ValueError(f"pattern {int(numpy.argmax(lengths < 1))} has an empty code (code_start must increase)")
    bad = numpy.flatnonzero((label < 0) | (label >= len(strings)))
    if len(bad):
        raise ValueError(f"pattern node {int(bad[0])} has label id {int(label[bad[0]])}, outside strings "
                         f"(0 .. {len(strings) - 1})")
    _check_depths(depth, code_start)
    if not distinct:
        _check_distinct(depth, label, code_start, len(strings))
    if len(rules) != n_heads:
        raise ValueError(f"there are {len(rules)} rule lists for {n_heads} heads")
    columns = [_check_columns(h, cols, len(lengths), value) for h, cols in enumerate(rules)]
    return strings, depth, label, code_start, columns


def _check_depths(depth: numpy.ndarray, code_start: numpy.ndarray) -> None:
    """Every code starts at depth 0, and every later depth d satisfies 1 <= d <= previous + 1."""
    first = numpy.zeros(len(depth), dtype=bool)
    first[code_start[:-1]] = True
    ok = numpy.where(first, depth == 0, depth >= 1)
    ok[1:] &= first[1:] | (depth[1:] <= depth[:-1] + 1)  # an int32 overflow only refuses more
    if not ok.all():
        node = int(numpy.argmin(ok))
        p = int(numpy.searchsorted(code_start, node, "right")) - 1
        lo, hi = code_start[p], code_start[p + 1]
        raise ValueError(f"pattern {p} has an invalid code (depths {depth[lo:hi].tolist()}): it must start at depth 0 "
                         "and every later depth d must satisfy 1 <= d <= previous depth + 1")


def _check_distinct(depth: numpy.ndarray, label: numpy.ndarray, code_start: numpy.ndarray, n_strings: int) -> None:
    """No two patterns have the same code (compared among patterns of the same length)."""
    lengths = numpy.diff(code_start)
    base = int(depth.max(initial=0)) + 1
    node = depth.astype(numpy.int64) * max(n_strings, 1) + label
    radix = base * max(n_strings, 1)
    for n in numpy.unique(lengths).tolist():
        ids = numpy.flatnonzero(lengths == n)
        if len(ids) < 2:
            continue
        rows = node[code_start[ids, None] + numpy.arange(n)]
        if n <= 62 and radix ** n < 2 ** 62:
            keys = (rows * (radix ** numpy.arange(n - 1, -1, -1, dtype=numpy.int64))).sum(axis=1)
            ordered = numpy.sort(keys)
            if not (ordered[1:] == ordered[:-1]).any():
                continue
            order = numpy.argsort(keys, kind="stable")
            same = numpy.flatnonzero(keys[order][1:] == keys[order][:-1])
        else:
            order = numpy.lexsort(rows.T[::-1])
            same = numpy.flatnonzero((rows[order][1:] == rows[order][:-1]).all(axis=1))
        if len(same):
            p, q = sorted((int(ids[order[same[0]]]), int(ids[order[same[0] + 1]])))
            raise ValueError(f"patterns {p} and {q} are the same tree; the patterns must be distinct")


def _check_columns(h: int, cols: Sequence[Any], n_patterns: int, value: str) -> Columns:
    if len(cols) != 4:
        raise ValueError(f"head {h}'s rules must be 4 columns (pattern id, z, a, b), got {len(cols)}")
    pid, z, a, b = (_array(c, k) for c, k in zip(cols, RULE_KEYS))
    if not len(pid) == len(z) == len(a) == len(b):
        raise ValueError(f"head {h}'s rule columns have different lengths ({len(pid)}, {len(z)}, {len(a)}, {len(b)})")
    checks = [((pid < 0) | (pid >= n_patterns), pid,
               f"refers to pattern {{}}, which does not exist ({n_patterns} patterns)"),
              (z < 1, z, "has threshold z = {}, below 1"),
              (~(numpy.isfinite(a) & numpy.isfinite(b)), a, "has a weight that is not a finite number")]
    if value == "tfidf":
        checks.append((b <= 0, b, "has an idf b = {} that is not positive"))
    for bad, values, problem in checks:
        if bad.any():
            r = int(numpy.argmax(bad))
            raise ValueError(f"rule {r} of head {h} " + problem.format(values[r].item()))
    return pid, z, a, b


def numbered_by_first_use(strings: List[str], depth: numpy.ndarray, label: numpy.ndarray, code_start: numpy.ndarray,
                          columns: List[Columns], threads: int = 1) -> Tables:
    """The tables without the patterns no rule uses and the strings no pattern uses, the patterns numbered by first
    use as `RuleSet.add` numbers them; the codes copied on up to `threads` threads (the same tables for any number)."""
    n_patterns = len(code_start) - 1
    pids = numpy.concatenate([numpy.zeros(0, dtype=numpy.int64)] + [c[0] for c in columns])
    distinct = bool((numpy.bincount(pids, minlength=n_patterns) <= 1).all())
    if distinct:
        order = pids
    else:
        used, first = numpy.unique(pids, return_index=True)
        order = used[numpy.argsort(first, kind="stable")]
    with ThreadTeam(threads) as team:
        depth, label, start = codes_in_order(depth, label, code_start, numpy.ascontiguousarray(order, numpy.int64),
                                             team.map, threads)
    if distinct:
        # each rule's pattern is new: the rules are numbered in order
        ends = numpy.cumsum([len(c[0]) for c in columns])
        columns = [(numpy.arange(end - len(pid), end, dtype=numpy.int64), z.copy(), a.copy(), b.copy())
                   for end, (pid, z, a, b) in zip(ends.tolist(), columns)]
    else:
        remap = numpy.full(n_patterns, -1, dtype=numpy.int64)
        remap[order] = numpy.arange(len(order))
        columns = [(remap[pid], z.copy(), a.copy(), b.copy()) for pid, z, a, b in columns]
    present = numpy.zeros(len(strings), dtype=bool)
    present[label] = True
    kept = numpy.flatnonzero(present)
    label = (numpy.cumsum(present, dtype=numpy.int32) - 1)[label]
    return [strings[i] for i in kept.tolist()], depth, label, start, columns


def encode_flat(strings: List[str], depth: numpy.ndarray, label: numpy.ndarray, code_start: numpy.ndarray,
                columns: Sequence[Columns]) -> Tuple[Dict[str, Any], List[Dict[str, bytes]]]:
    """The "patterns" and "rules" entries of a flat rule file: little-endian bytes per column."""
    def raw(array: numpy.ndarray, key: str) -> bytes:
        return numpy.ascontiguousarray(array, dtype=LAYOUT[key]).tobytes()

    patterns = {"strings": list(strings), "depth": raw(depth, "depth"), "label": raw(label, "label"),
                "code_start": raw(code_start, "code_start")}
    return patterns, [{k: raw(c, k) for k, c in zip(RULE_KEYS, cols)} for cols in columns]


def decode_flat(patterns: Any, rules: Any) -> Tuple[List[str], numpy.ndarray, numpy.ndarray, numpy.ndarray,
                                                    List[List[numpy.ndarray]]]:
    """The arrays of a flat rule file's "patterns" and "rules" entries, for `check_tables`; a ValueError when an
    entry is missing, of the wrong type, or not whole items."""
    def column(entry: Dict[str, Any], key: str, where: str) -> numpy.ndarray:
        buf = entry[key]
        if not isinstance(buf, bytes):
            raise ValueError(f"{where} {key!r} column is not bytes but {type(buf).__name__}")
        size = numpy.dtype(LAYOUT[key]).itemsize
        if len(buf) % size:
            raise ValueError(f"{where} {key!r} column has {len(buf)} bytes, not a whole number of {size}-byte items")
        return numpy.frombuffer(buf, dtype=LAYOUT[key]).astype(DTYPES[key], copy=False)

    if not isinstance(patterns, dict) or sorted(patterns) != sorted(PATTERN_KEYS):
        raise ValueError(f"the patterns entry must be a map of {', '.join(PATTERN_KEYS)}")
    if not isinstance(patterns["strings"], list):
        raise ValueError("the patterns' strings entry is not a list")
    if not isinstance(rules, list) or not all(isinstance(r, dict) and sorted(r) == sorted(RULE_KEYS) for r in rules):
        raise ValueError(f"the rules entry must be a list of maps of {', '.join(RULE_KEYS)}, one per head")
    arrays = [column(patterns, k, "the patterns'") for k in PATTERN_KEYS[1:]]
    columns = [[column(r, k, f"head {h}'s") for k in RULE_KEYS] for h, r in enumerate(rules)]
    return patterns["strings"], arrays[0], arrays[1], arrays[2], columns
