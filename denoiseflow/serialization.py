"""Events to JSON, whatever an agent put in them.

The recorder must never raise, so nothing here does: a value that cannot
become JSON — an object whose `__str__` raises, a cycle, NaN or infinity (JSON
has neither) — is replaced by a marker string and counted, and the rest of the
event goes out. Bytes are decoded as UTF-8 (invalid sequences replaced), sets
become lists, numbers that are not floats (numpy's, Fraction) become floats.
The common case, plain JSON-able data, costs one `json.dumps`.
"""

import json
import math
import numbers

MAX_DEPTH = 64
CYCLE = "<cycle>"
TOO_DEEP = "<too deep>"
NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def marker(value, error: BaseException) -> str:
    return f"<unserializable {type(value).__name__}: {type(error).__name__}>"


class Encoding:
    """One event's encoding; `replaced` counts the values swapped for a marker."""

    def __init__(self):
        self.replaced = 0

    def text(self, value) -> str:
        if isinstance(value, str):
            return value
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value).decode("utf-8", "replace")
        try:
            text = str(value)
        except Exception as error:  # an agent's broken __str__ must not break the agent
            self.replaced += 1
            return marker(value, error)
        if not isinstance(text, str):  # a __str__ that returns something else
            self.replaced += 1
            return marker(value, TypeError())
        return text

    def default(self, value):
        """json.dumps' hook for what it cannot encode itself."""
        if isinstance(value, (set, frozenset)):
            return list(value)
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            try:
                return float(value)
            except Exception as error:
                self.replaced += 1
                return marker(value, error)
        return self.text(value)

    def clean(self, value, path: tuple = ()):
        """A JSON-safe copy: the slow path, taken only when the fast one failed."""
        if isinstance(value, float):
            if math.isfinite(value):
                return value
            self.replaced += 1
            return NON_FINITE[repr(value)]
        if value is None or isinstance(value, (str, int)):
            return value
        if isinstance(value, (dict, list, tuple, set, frozenset)):
            if id(value) in path:
                self.replaced += 1
                return CYCLE
            if len(path) >= MAX_DEPTH:
                self.replaced += 1
                return TOO_DEEP
            inner = (*path, id(value))
            if isinstance(value, dict):
                return {self.text(k): self.clean(v, inner) for k, v in list(value.items())}
            return [self.clean(v, inner) for v in list(value)]
        converted = self.default(value)
        return converted if isinstance(converted, str) else self.clean(converted, path)

    def dumps(self, event: dict) -> bytes:
        before = self.replaced
        try:
            return json.dumps(event, default=self.default, allow_nan=False, separators=(",", ":")).encode()
        except (ValueError, TypeError, RecursionError):
            self.replaced = before  # counted afresh on the full walk
            return json.dumps(self.clean(event), separators=(",", ":")).encode()
