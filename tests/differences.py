"""Comparison of a fit with its committed reference: exact where the algorithm is exact, within a
relative tolerance for floats.

`first_difference` walks two nested values (dicts, lists, tuples, numpy arrays, scalars) side by side
and names the first path at which they differ. Everything is compared exactly (the same type and the
same value: strings, integers, booleans, the keys of a dict, the length of a list) except floats: a
list (or nested lists, or a numpy array) whose entries are all floats is one float array, and an
entry of it differs when |got - ref| > rtol * max |ref| over that array. Scaling by the array's
largest magnitude, not by each entry, is what rounding does: the error of a computed value follows
the magnitude of the sums it came from, so an entry near 0 (a log of a ratio near 1, a weight that
nearly cancels) carries the absolute error of its larger neighbours. Non-finite floats must match
exactly. A float outside such an array is compared with rtol * |ref|.
"""
import math
from typing import Any, Optional

import numpy


def first_difference(got: Any, ref: Any, rtol: float, path: str = "") -> Optional[str]:
    """The first difference between `got` and the reference `ref`, as "path: what differs", or None.

    got (Any): The value computed now.
    ref (Any): The committed reference.
    rtol (float): The relative tolerance of float arrays, relative to the array's largest magnitude.
    path (str): The path of these values inside the whole (for the message).
    RETURNS (Optional[str]): None when they agree.
    """
    where = path or "(top)"
    ref_floats, got_floats = _float_array(ref), _float_array(got)
    if ref_floats is not None and got_floats is not None and ref_floats.shape == got_floats.shape:
        return _float_difference(got_floats, ref_floats, rtol, path)
    if isinstance(ref, numpy.ndarray):
        ref = ref.tolist()
    if isinstance(got, numpy.ndarray):
        got = got.tolist()
    if isinstance(ref, dict):
        if not isinstance(got, dict):
            return f"{where}: a {type(got).__name__}, the reference has a dict"
        if list(got) != list(ref):
            missing = [k for k in ref if k not in got]
            extra = [k for k in got if k not in ref]
            return f"{where}: keys {list(got)}, the reference has {list(ref)} (missing {missing}, extra {extra})"
        for key in ref:
            found = first_difference(got[key], ref[key], rtol, f"{path}/{key}")
            if found is not None:
                return found
        return None
    if isinstance(ref, (list, tuple)):
        if not isinstance(got, (list, tuple)):
            return f"{where}: a {type(got).__name__}, the reference has a list"
        if len(got) != len(ref):
            return f"{where}: {len(got)} entries, the reference has {len(ref)}"
        for i, (g, r) in enumerate(zip(got, ref)):
            found = first_difference(g, r, rtol, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    if type(got) is not type(ref):
        return f"{where}: {got!r} ({type(got).__name__}), the reference has {ref!r} ({type(ref).__name__})"
    if isinstance(ref, float) and math.isfinite(ref):
        if abs(got - ref) <= rtol * abs(ref):
            return None
        return f"{where}: {got!r}, the reference has {ref!r} (off by {abs(got - ref):.3g}, more than {rtol:g} relative)"
    if got != ref and not (isinstance(ref, float) and math.isnan(ref) and math.isnan(got)):
        return f"{where}: {got!r}, the reference has {ref!r}"
    return None


def _float_array(value: Any) -> Optional[numpy.ndarray]:
    """The value as a float64 array when it is a non-empty array of floats (a numpy float array, or rectangular
    nested lists whose leaves are all Python floats), else None."""
    if isinstance(value, numpy.ndarray):
        return value.astype(numpy.float64) if value.dtype.kind == "f" and value.size else None
    if not isinstance(value, (list, tuple)) or not value:
        return None
    leaves, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif type(item) is float:
            leaves.append(item)
        else:
            return None
    try:
        array = numpy.array(value, dtype=numpy.float64)
    except ValueError:
        return None
    return array if array.size == len(leaves) else None


def _float_difference(got: numpy.ndarray, ref: numpy.ndarray, rtol: float, path: str) -> Optional[str]:
    finite = numpy.isfinite(ref)
    scale = float(numpy.abs(ref[finite]).max()) if finite.any() else 0.0
    tol = rtol * scale
    with numpy.errstate(invalid="ignore"):
        off = numpy.where(finite, ~(numpy.abs(got - ref) <= tol), ~((got == ref) | (numpy.isnan(got) & numpy.isnan(ref))))
    if not off.any():
        return None
    at = tuple(int(i) for i in numpy.argwhere(off)[0])
    g, r = float(got[at]), float(ref[at])
    index = "".join(f"[{i}]" for i in at)
    return (f"{path}{index}: {g!r}, the reference has {r!r} (off by {abs(g - r):.3g}, more than {rtol:g} x the "
            f"largest magnitude {scale:.6g} = {tol:.3g})")
