"""Checking a request's fields, written once for every app: what can be wrong
with a number or a count, and `FieldErrors`, the collect-all way to gather
the problems of a whole body into the one ApiError (core.errors) naming every
field at fault (policy documents, project settings, price tables).

Raise-first validation (evals.validation.Invalid, the ingest's EventError)
uses the same checks and refuses at the first problem found. Each check
answers the message for its field, None when the value is fine; messages are
the caller's (they are the contract's words), `{value}` standing for the
value given.
"""

from collections.abc import Callable, Iterable

from core.errors import ApiError
from core.numbers import is_finite_number


def number_problem(value, low: float, high: float, *, below: str, above: str | None = None,
                   not_a_number: str = "must be a number") -> str | None:
    """`value` as a finite JSON number (not a bool) within [low, high]."""
    if not is_finite_number(value):
        return not_a_number
    return _outside(value, low, high, below, above)


def count_problem(value, low: int, high: int, *, not_an_integer: str, below: str,
                  above: str | None = None) -> str | None:
    """`value` as a JSON integer (not a bool, not 2.0) within [low, high]."""
    if isinstance(value, bool) or not isinstance(value, int):
        return not_an_integer
    return _outside(value, low, high, below, above)


def _outside(value, low, high, below: str, above: str | None) -> str | None:
    if value < low:
        return below.format(value=value)
    if value > high:
        return (above or below).format(value=value)
    return None


class FieldErrors(dict):
    """Field path -> what is wrong with it, gathered over a whole body so a
    refusal names every field at fault; `refuse` raises the app's ApiError."""

    def check(self, path: str, problem: str | None) -> bool:
        """Records `problem` for `path`; True when there is none."""
        if problem:
            self[path] = problem
            return False
        return True

    def unknown_keys(self, given: Iterable, known: Iterable, message: str,
                     path: Callable[[object], str] = str) -> None:
        """Records `message` for each key of `given` that is not `known`, at `path(key)`."""
        known = set(known)
        for key in given:
            if key not in known:
                self[path(key)] = message

    def refuse(self, error: Callable[[dict[str, str]], ApiError]) -> None:
        """Raises `error(fields)` when anything was recorded."""
        if self:
            raise error(dict(self))
