"""The rule file's data: a `RuleSet` as plain lists (format version 1) or, past FLAT_MIN_RULES rules, as flat
little-endian arrays (format version 2, `rule_tables`), and back, every entry checked."""
from typing import TYPE_CHECKING, Any, Dict, Tuple, Type

import numpy

from ..files import ModelFormatError
from .rule_tables import INT32_MAX, check_tables, decode_flat, encode_flat

if TYPE_CHECKING:
    from .rules import RuleSet

FORMAT_NAME = "spacy-treeboost.rules"
FORMAT_VERSION = 1
FLAT_VERSION = 2
FLAT_MIN_RULES = 10_000
SEALED_VERSION = 1
VALUES = ("stump", "log1p", "tfidf")

Code = Tuple[Tuple[int, str], ...]


def check_code(code: Code) -> None:
    """Raise a ModelFormatError unless `code` is a pattern code: depths from 0, each at most one below the last."""
    depths = [d for d, _ in code]
    if not depths or depths[0] != 0 or any(not 1 <= d <= p + 1 for p, d in zip(depths, depths[1:])):
        raise ModelFormatError(f"The rule file holds an invalid pattern code {code!r}.")


def rules_to_dict(rules: "RuleSet") -> Dict[str, Any]:
    """The rules as plain data.

    A rule set of at most FLAT_MIN_RULES rules is written as lists (format version 1): "intercepts" and "value" are
    written only when they differ from the boosting learners' (all 0, "stump"), so those files keep their published
    form. A larger one is written flat (format version 2): the pattern and rule arrays as little-endian bytes
    (`rule_tables`).
    """
    rules._flush()
    data = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "algorithm": rules.algorithm,
        "include_root_patterns": rules.include_root_patterns,
        "heads": rules.heads,
    }
    if len(rules) > FLAT_MIN_RULES:
        strings, _, labels = rules._label_table()
        data["version"] = FLAT_VERSION
        data["patterns"], data["rules"] = encode_flat(strings, rules._depth, labels, rules._code_start,
                                                      rules._columns)
        data["intercepts"] = list(rules.intercepts)
        data["value"] = rules.value
        return data
    data["patterns"] = [[[d for d, _ in code], [l for _, l in code]] for code in rules.patterns]
    data["rules"] = [[c.tolist() for c in cols] for cols in rules._columns]
    if any(rules.intercepts):
        data["intercepts"] = list(rules.intercepts)
    if rules.value != "stump":
        data["value"] = rules.value
    return data


def rules_from_dict(cls: Type["RuleSet"], data: Any) -> "RuleSet":
    """The rule set (of class `cls`) of a rule file's data, every entry checked: a ModelFormatError names what is
    wrong."""
    if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
        raise ModelFormatError("This is not a spacy-treeboost rule file (its format marker is missing).")
    if data.get("version") not in (FORMAT_VERSION, FLAT_VERSION):
        raise ModelFormatError(
            f"Rule file format version {data.get('version')!r} is not supported (this version reads "
            f"{FORMAT_VERSION} and {FLAT_VERSION}); retrain the model or upgrade spacy-treeboost.")
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
        if data["version"] == FLAT_VERSION:
            try:
                tables = check_tables(*decode_flat(data["patterns"], data["rules"]), n_heads=len(out.heads),
                                      value=value)
            except ModelFormatError:
                raise
            except ValueError as err:
                raise ModelFormatError(f"The rule file is damaged: {err}; restore it from a copy or retrain "
                                       "the model.") from None
            out._set_tables(*tables)
            return out
        read_rule_lists(out, data["patterns"], data["rules"], value)
    except (KeyError, TypeError, ValueError) as err:
        if isinstance(err, ModelFormatError):
            raise
        raise ModelFormatError(f"The rule file is corrupt: {err!r}") from None
    return out


def read_rule_lists(rules: "RuleSet", patterns: Any, lists: Any, value: str) -> None:
    """Read the "patterns" and "rules" entries of a rule file of format version 1 into `rules`."""
    for ds, ls in patterns:
        if len(ds) != len(ls) or not all(isinstance(d, int) for d in ds) or not all(isinstance(l, str) for l in ls):
            raise ModelFormatError("A pattern's depths and labels differ in length or type; the file is "
                                   "damaged.")
    codes = [tuple(zip(map(int, ds), map(str, ls))) for ds, ls in patterns]
    for code in codes:
        check_code(code)
    if len(set(codes)) != len(codes):
        raise ModelFormatError("The rule file lists a pattern twice.")
    if len(lists) != len(rules.heads):
        raise ModelFormatError(f"The rule file has {len(lists)} rule lists for {len(rules.heads)} heads.")
    columns = []
    for h, (pids, zs, as_, bs) in enumerate(lists):
        if not len(pids) == len(zs) == len(as_) == len(bs):
            raise ModelFormatError(f"The rule file's rule columns of head {h} have different lengths "
                                   f"({len(pids)}, {len(zs)}, {len(as_)}, {len(bs)}); the file is damaged.")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (*pids, *zs)):
            raise ModelFormatError("A rule's pattern id or threshold is not a whole number; the file is "
                                   "damaged.")
        if any(not 0 <= p < len(codes) for p in pids):
            raise ModelFormatError("A rule refers to a pattern the file does not contain.")
        head = [(int(p), int(z), float(a), float(b)) for p, z, a, b in zip(pids, zs, as_, bs)]
        if not all(numpy.isfinite(a) and numpy.isfinite(b) and 1 <= z <= INT32_MAX for _, z, a, b in head):
            raise ModelFormatError("The rule file holds a weight that is not a finite number or a threshold "
                                   "below 1 (or beyond 2**31 - 1); the file is damaged, retrain the model.")
        if value == "tfidf" and not all(b > 0 for _, _, _, b in head):
            raise ModelFormatError("The rule file holds an idf that is not positive; the file is damaged, "
                                   "retrain the model.")
        columns.append(head)
    rules._codes = codes
    rules._new_codes = list(codes)
    rules._new_rules = columns
    rules._flush()
