"""The judge's table: every kind at and around its edges, with the one-line
explanation a person reads on the run page."""

import pytest

from evals.judge import judge

CASES = [
    # kind, expected, actual, tolerance, passes, detail
    ("number", 3, 3.5, None, True, "|3 - 3.5| = 0.5 ≤ 0.5"),
    ("number", 3, 3.51, None, False, "|3 - 3.51| = 0.51 > 0.5"),
    ("number", 10000, 10050, None, True, "|10000 - 10050| = 50 ≤ 50"),
    ("number", 10000, 10051, None, False, "|10000 - 10051| = 51 > 50"),
    ("number", 10000, 10060, None, False, "|10000 - 10060| = 60 > 50"),
    ("number", -10000, -9950, None, True, "|-10000 - -9950| = 50 ≤ 50"),
    ("number", 1.1, 1.6, None, True, "|1.1 - 1.6| = 0.5 ≤ 0.5"),  # no binary-float edge error
    ("number", 0, 0.5, None, True, "|0 - 0.5| = 0.5 ≤ 0.5"),
    ("number", 100, 101, {"abs": 1}, True, "|100 - 101| = 1 ≤ 1"),
    ("number", 100, 101, {"abs": 0, "rel": 0}, False, "|100 - 101| = 1 > 0"),
    ("number", 200, 210, {"rel": 0.05}, True, "|200 - 210| = 10 ≤ 10"),
    ("number", 5, "5", None, False, 'actual "5" is not a number'),
    ("number", 5, True, None, False, "actual true is not a number"),
    ("number", 5, None, None, False, "actual null is not a number"),
    ("percentages", {"a": 50, "b": 50}, {"a": 51, "b": 49}, None, True,
     "every share within 2 points; total |100 - 100| = 0"),
    ("percentages", {"a": 50, "b": 50}, {"a": 48.5, "b": 48.5}, None, False, "total: |100 - 97| = 3 > 2"),
    ("percentages", {"a": 60, "b": 40}, {"a": 57, "b": 43}, None, False, "a: |60 - 57| = 3 > 2"),
    ("percentages", {"a": 60, "b": 40}, {"a": 62, "b": 38}, None, True,
     "every share within 2 points; total |100 - 100| = 0"),
    ("percentages", {"a": 60, "b": 40}, {"a": 57, "b": 43}, {"points": 3}, True,
     "every share within 3 points; total |100 - 100| = 0"),
    ("percentages", {"a": 60, "b": 40}, {"a": 60, "c": 40}, None, False, "names differ: missing b; extra c"),
    ("percentages", {"a": 100}, [100], None, False, "actual [100] is not an object of percentages"),
    ("percentages", {"a": 100}, {"a": "100"}, None, False, 'actual {"a": "100"} is not an object of percentages'),
    ("label", "Refund", "  refund\n", None, True, '"Refund" = "  refund\\n" (trimmed, case-folded)'),
    ("label", "STRASSE", "straße", None, True, '"STRASSE" = "straße" (trimmed, case-folded)'),
    ("label", "refund", "return", None, False, '"refund" ≠ "return" (trimmed, case-folded)'),
    ("label", "refund", 1, None, False, "actual 1 is not a string"),
    ("exact", {"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1}, None, True, "equal as JSON"),
    ("exact", {"a": 1}, {"a": 1.0}, None, True, "equal as JSON"),
    ("exact", {"a": True}, {"a": 1}, None, False, "at $.a: expected true, got 1"),
    ("exact", {"a": [1, 2]}, {"a": [1, 3]}, None, False, "at $.a[1]: expected 2, got 3"),
    ("exact", [1, 2], [1, 2, 3], None, False, "at $.length: expected 2, got 3"),
    ("exact", {"a": 1}, {"a": 1, "b": 2}, None, False, "at $.b: expected nothing, got 2"),
    ("exact", "x", "X", None, False, 'at $: expected "x", got "X"'),
    ("exact", None, None, None, True, "equal as JSON"),
]


@pytest.mark.parametrize(("kind", "expected", "actual", "tolerance", "passes", "detail"), CASES)
def test_judge_table(kind, expected, actual, tolerance, passes, detail):
    verdict = judge(kind, expected, actual, tolerance)
    assert (verdict.passed, verdict.detail) == (passes, detail)


def test_a_result_with_an_error_fails_whatever_its_answer():
    verdict = judge("number", 3, 3, None, error="timeout\nafter 30 s")
    assert (verdict.passed, verdict.detail) == (False, "error: timeout after 30 s")


def test_the_same_result_always_gets_the_same_verdict():
    first = [judge(*case[:4]) for case in CASES]
    assert all(judge(*case[:4]) == verdict for case, verdict in zip(CASES, first))
