"""The rule file's data: a `RuleSet` as plain lists (format version 1) or, past FLAT_MIN_RULES rules, as flat
little-endian arrays (format version 2, `rule_tables`), and back, every entry checked."""
from typing import TYPE_CHECKING, Any, Dict, List, Tuple, Type

import numpy

from ..files import ModelFormatError
from .rule_tables import check_tables, decode_flat, encode_flat

if TYPE_CHECKING:
    from .rules import RuleSet

FORMAT_NAME = "spacy-treeboost.rules"
FORMAT_VERSION = 1
FLAT_VERSION = 2
FLAT_MIN_RULES = 10_000
SEALED_VERSION = 1
VALUES = ("stump", "log1p", "tfidf")

Code = Tuple[Tuple[int, str], ...]


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
        strings, labels = rules._label_table()
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
    """The rule set (of class `cls`) of a rule file's data, every entry checked (`rule_tables.check_tables`): a
    ModelFormatError names what is wrong."""
    if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
        raise ModelFormatError("This is not a spacy-treeboost rule file (its format marker is missing).")
    if data.get("version") not in (FORMAT_VERSION, FLAT_VERSION):
        raise ModelFormatError(
            f"Rule file format version {data.get('version')!r} is not supported (this version reads "
            f"{FORMAT_VERSION} and {FLAT_VERSION}); retrain the model or upgrade spacy-treeboost.")
    value = data.get("value", "stump")
    if value not in VALUES:
        raise ModelFormatError(f"The rule file has an unknown rule value {value!r} (this version reads "
                               f"{', '.join(VALUES)}); it was written by a newer spacy-treeboost: upgrade "
                               "to read it, or retrain the model.")
    try:
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
        read = decode_flat if data["version"] == FLAT_VERSION else _lists_as_arrays
        out._set_tables(*check_tables(*read(data["patterns"], data["rules"]), n_heads=len(out.heads), value=value))
    except ModelFormatError:
        raise
    except ValueError as err:
        raise ModelFormatError(f"The rule file is damaged: {err}; restore it from a copy or retrain the "
                               "model.") from None
    except (KeyError, TypeError) as err:
        raise ModelFormatError(f"The rule file is corrupt: {err!r}") from None
    return out


def _lists_as_arrays(patterns: Any, rules: Any) -> Tuple[List[str], List[int], List[int], List[int], Any]:
    """The tables of a rule file of format version 1 (patterns as [depths, labels], rules as four lists per head),
    to be checked by `check_tables`."""
    strings: Dict[str, int] = {}
    depth: List[int] = []
    label: List[int] = []
    code_start = [0]
    for ds, ls in patterns:
        if len(ds) != len(ls) or not all(isinstance(l, str) for l in ls):
            raise ValueError("a pattern's depths and labels differ in length or type")
        depth.extend(ds)
        label.extend(strings.setdefault(l, len(strings)) for l in ls)
        code_start.append(len(depth))
    return list(strings), depth, label, code_start, rules
