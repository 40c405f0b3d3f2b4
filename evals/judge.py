"""The tolerance judge: whether an actual answer passes against the expected one.

The four kinds of the contract ("Evaluation: truth sets and runs"):

- `number`: abs(e − a) ≤ max(abs_tol, abs(e) × rel_tol), defaults abs 0.5, rel 0.005;
- `percentages`: the same names, every share within `points` (default 2) of
  expected, and the shares' total within `points` of the expected total;
- `label`: equal after trimming whitespace and case-folding;
- `exact`: equal as JSON values (object key order does not matter; `true` is not `1`).

Arithmetic is done in decimal on the numbers as written, so 1.6 against 1.1 is
a difference of exactly 0.5 (binary floats would make it 0.5000000000000002 and
fail an edge the reader sees as passing). The same inputs always give the same
verdict and the same one-line explanation.
"""

import json
from dataclasses import dataclass
from decimal import Decimal

from core.numbers import is_finite_number

KINDS = ("number", "percentages", "label", "exact")
DEFAULT_ABS = Decimal("0.5")
DEFAULT_REL = Decimal("0.005")
DEFAULT_POINTS = Decimal("2")
TOLERANCE_KEYS = {"number": ("abs", "rel"), "percentages": ("points",), "label": (), "exact": ()}


@dataclass(frozen=True)
class Judgement:
    passed: bool
    detail: str


def default_kind(expected) -> str:
    return "number" if is_finite_number(expected) else "exact"


def judge(kind: str, expected, actual, tolerance: dict | None = None, error: str = "") -> Judgement:
    """The verdict on one result. A result that reports an error fails."""
    if error:
        return Judgement(False, f"error: {one_line(error)}")
    return _JUDGES[kind](expected, actual, tolerance or {})


def _number(expected, actual, tolerance: dict) -> Judgement:
    if not is_finite_number(actual):
        return Judgement(False, f"actual {show(actual)} is not a number")
    e, a = _dec(expected), _dec(actual)
    abs_tol = _dec(tolerance.get("abs", DEFAULT_ABS))
    rel_tol = _dec(tolerance.get("rel", DEFAULT_REL))
    allowed = max(abs_tol, abs(e) * rel_tol)
    diff = abs(e - a)
    passed = diff <= allowed
    return Judgement(passed, f"|{fmt(e)} - {fmt(a)}| = {fmt(diff)} {'≤' if passed else '>'} {fmt(allowed)}")


def _percentages(expected: dict, actual, tolerance: dict) -> Judgement:
    if not isinstance(actual, dict) or not all(is_finite_number(v) for v in actual.values()):
        return Judgement(False, f"actual {show(actual)} is not an object of percentages")
    points = _dec(tolerance.get("points", DEFAULT_POINTS))
    missing, extra = sorted(set(expected) - set(actual)), sorted(set(actual) - set(expected))
    if missing or extra:
        parts = ([f"missing {', '.join(missing)}"] if missing else []) + ([f"extra {', '.join(extra)}"] if extra else [])
        return Judgement(False, "names differ: " + "; ".join(parts))
    for name in sorted(expected):
        e, a = _dec(expected[name]), _dec(actual[name])
        if abs(e - a) > points:
            return Judgement(False, f"{name}: |{fmt(e)} - {fmt(a)}| = {fmt(abs(e - a))} > {fmt(points)}")
    e_total = sum((_dec(v) for v in expected.values()), Decimal(0))
    a_total = sum((_dec(v) for v in actual.values()), Decimal(0))
    diff = abs(e_total - a_total)
    if diff > points:
        return Judgement(False, f"total: |{fmt(e_total)} - {fmt(a_total)}| = {fmt(diff)} > {fmt(points)}")
    return Judgement(True, f"every share within {fmt(points)} points; total |{fmt(e_total)} - {fmt(a_total)}| = {fmt(diff)}")


def _label(expected: str, actual, tolerance: dict) -> Judgement:
    if not isinstance(actual, str):
        return Judgement(False, f"actual {show(actual)} is not a string")
    passed = expected.strip().casefold() == actual.strip().casefold()
    return Judgement(passed, f"{show(expected)} {'=' if passed else '≠'} {show(actual)} (trimmed, case-folded)")


def _exact(expected, actual, tolerance: dict) -> Judgement:
    where = first_difference(expected, actual, "$")
    if where is None:
        return Judgement(True, "equal as JSON")
    path, e, a = where
    return Judgement(False, f"at {path}: expected {show(e)}, got {show(a)}")


_JUDGES = {"number": _number, "percentages": _percentages, "label": _label, "exact": _exact}


def first_difference(expected, actual, path: str):
    """(path, expected part, actual part) of the first place two JSON values differ, or None."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        same = type(expected) is type(actual) and expected == actual
        return None if same else (path, expected, actual)
    if is_finite_number(expected) and is_finite_number(actual):
        return None if _dec(expected) == _dec(actual) else (path, expected, actual)
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in sorted(set(expected) | set(actual)):
            if key not in actual or key not in expected:
                return (f"{path}.{key}", expected.get(key, _ABSENT), actual.get(key, _ABSENT))
            found = first_difference(expected[key], actual[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        for index, (e, a) in enumerate(zip(expected, actual)):
            found = first_difference(e, a, f"{path}[{index}]")
            if found:
                return found
        if len(expected) != len(actual):
            return (f"{path}.length", len(expected), len(actual))
        return None
    same = type(expected) is type(actual) and expected == actual
    return None if same else (path, expected, actual)


class _Absent:
    def __repr__(self):
        return "nothing"


_ABSENT = _Absent()


def _dec(value) -> Decimal:
    # repr() keeps the digits as written (0.1 stays 0.1, not 0.1000000000000000055…).
    return value if isinstance(value, Decimal) else Decimal(repr(value) if isinstance(value, float) else str(value))


def fmt(value: Decimal) -> str:
    """A number as a person writes it: 50, 0.5, 1e+21."""
    text = f"{value.normalize():f}" if abs(value) < Decimal("1e15") else f"{value:g}"
    return text if "." not in text else text.rstrip("0").rstrip(".") or "0"


MAX_SHOWN = 80


def show(value) -> str:
    if value is _ABSENT:
        return "nothing"
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def one_line(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= 200 else text[:199] + "…"
