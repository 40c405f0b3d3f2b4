"""Truth-set items to send, and comparing an answer with the part of it a test names."""


def number_items(n: int, prefix: str = "q", **fields) -> list[dict]:
    return [{"id": f"{prefix}-{i}", "input": {"question": f"how many {i}?"}, "expected": i * 10, **fields}
            for i in range(1, n + 1)]


def part(data: dict, expected: dict) -> dict:
    """`data` cut down to the keys of `expected`, to compare with it."""
    return {key: data.get(key, "<absent>") for key in expected}
