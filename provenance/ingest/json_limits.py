"""Limits on JSON from clients: how deep it nests and what its strings hold.

Deep input is what breaks recursive code (Python's recursion limit, orjson's
255 levels when encoding), and PostgreSQL's text and jsonb refuse NUL. Every walk
here is iterative for that reason. Integers past 64 bits are refused where JSON
comes in to be stored: once stored, no encoder of ours could write them again."""

import math

MAX_BODY_DEPTH = 100  # an API body other than ingest's, the body itself being level 1
TOO_DEEP = "… (nested deeper than {limit} levels)"


def _children(container):
    return container.values() if isinstance(container, dict) else container


def deeper_than(value, limit: int) -> bool:
    """Whether objects and lists nest more than `limit` levels (`value` is level 1)."""
    stack = [(value, 1)]
    while stack:
        container, depth = stack.pop()
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in _children(container) if isinstance(child, (dict, list)))
    return False


def body_problem(value, limit: int = MAX_BODY_DEPTH) -> str | None:
    """What makes a decoded request body unfit to handle, or None."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return "text in the body must not contain NUL characters (\\u0000)"
            continue
        if not isinstance(item, (dict, list)):
            continue
        if depth > limit:
            return f"body is nested deeper than {limit} levels"
        if isinstance(item, dict):
            if any("\x00" in key for key in item):
                return "keys in the body must not contain NUL characters (\\u0000)"
        stack.extend((child, depth + 1) for child in _children(item))
    return None


def clip_depth(value, limit: int):
    """A copy of `value` with whatever nests deeper than `limit` levels replaced
    by a note saying so: for values stored before the limits, so reading them
    never fails where encoding would."""
    if not isinstance(value, (dict, list)) or not deeper_than(value, limit):
        return value
    note = TOO_DEEP.format(limit=limit)
    root = type(value)()
    stack = [(value, root, 1)]
    while stack:
        source, copy, depth = stack.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, child in items:
            if isinstance(child, (dict, list)):
                if depth == limit:
                    child_copy = note
                else:
                    child_copy = type(child)()
                    stack.append((child, child_copy, depth + 1))
            else:
                child_copy = child
            if isinstance(copy, dict):
                copy[key] = child_copy
            else:
                copy.append(child_copy)
    return root


# What a 64-bit JSON encoder writes (orjson: signed and unsigned 64-bit integers).
INT_RANGE = (-(2**63), 2**64 - 1)
PAST_64_BITS = f"a whole number outside the 64-bit range ({INT_RANGE[0]} to {INT_RANGE[1]})"


def past_64_bits(value) -> bool:
    """Whether `value` is stored as an integer no 64-bit encoder writes back.

    A float counts when it is whole: jsonb keeps numbers exact and writes 1e20
    back as 100000000000000000000, which reads as a Python int."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return False
    return not INT_RANGE[0] <= value <= INT_RANGE[1]


def plainly_within(value, limit: int) -> bool:
    """A quick yes: `value` nests at most `limit` levels and holds no number
    past 64 bits. False means "look closer" (`deeper_than`,
    `number_past_64_bits` say what is wrong, if anything): ingest asks this of
    every node's metrics and metadata, and one pass that names no paths costs a
    fraction of those two walks."""
    low, high = INT_RANGE
    stack = [(value, 1)]
    while stack:
        container, depth = stack.pop()
        if depth > limit:
            return False
        for child in container.values() if type(container) is dict else container:
            kind = type(child)
            if kind is str or kind is bool or child is None:
                continue
            if kind is int or kind is float:
                # A float in range is fine whether whole or not; out of range, the exact rule decides.
                if not low <= child <= high:
                    return False
            elif kind is dict or kind is list:
                stack.append((child, depth + 1))
            else:
                return False
    return True


def number_past_64_bits(value, path: str = "") -> str | None:
    """The dotted path (`metadata.list[1].n`) of the first such number in
    `value`, under `path`; None when there is none."""
    stack = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, dict):
            stack.extend((child, f"{where}.{key}" if where else str(key)) for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((child, f"{where}[{index}]") for index, child in enumerate(item))
        elif past_64_bits(item):
            return where or "body"
    return None
