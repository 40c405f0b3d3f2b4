"""Tool-result checks: each rule rates the result and names itself."""

import pytest

import denoiseflow as df


def test_a_plain_good_result_is_highly_reliable():
    check = df.check_tool_result({"order": "A-1043", "status": "refunded", "amount": 40})
    assert (check.reliability, check.confidence, check.rule) == ("high", 0.95, "")
    assert check.node_fields() == {"confidence": 0.95, "metrics": {"tool_reliability": 0.95},
                                   "metadata": {"tool_reliability": "high"}}


@pytest.mark.parametrize("value", [None, "", "   ", [], {}, {"results": [], "next": None}])
def test_empty_results_are_low(value):
    check = df.check_tool_result(value)
    assert (check.reliability, check.rule) == ("low", "empty")


def test_empty_can_be_allowed():
    assert df.check_tool_result([], {"allow_empty": True}).reliable


@pytest.mark.parametrize("value, detail", [
    ({"error": "rate limited"}, "error: rate limited"),
    ({"status_code": 503, "body": "x"}, "status_code: 503"),
    ({"status": "failed", "rows": [1]}, "status: failed"),
    ("Error: connection refused", "Error: connection refused"),
    (TimeoutError("search timed out"), "TimeoutError: search timed out"),
])
def test_error_codes_are_low(value, detail):
    check = df.check_tool_result(value)
    assert (check.reliability, check.rule, check.detail, check.confidence) == ("low", "error", detail, 0.1)


def test_out_of_range_numbers_are_low():
    rules = {"ranges": {"temperature_c": (-90, 60), "rows.0.total": (0, None)}}
    check = df.check_tool_result({"temperature_c": 412, "rows": [{"total": -3}]}, rules)
    assert (check.reliability, check.rule) == ("low", "out_of_range")
    assert [f.detail for f in check.findings] == ["temperature_c: 412 outside [-90, 60]",
                                                  "rows.0.total: -3 outside [0, None]"]
    assert df.check_tool_result({"rows": [], "id": 5}, {"ranges": {"rows.0.total": (0, 10)}}).detail == "rows.0.total: missing"
    assert df.check_tool_result(7, {"ranges": {"": (0, 5)}}).detail == "value: 7 outside [0, 5]"
    assert df.check_tool_result({"temperature_c": 21}, rules={"ranges": {"temperature_c": (-90, 60)}}).reliable


def test_over_complex_payloads_are_medium():
    deep = current = {}
    for _ in range(20):
        current["next"] = current = {}
    current["leaf"] = 1
    assert (df.check_tool_result(deep).reliability, df.check_tool_result(deep).rule) == ("medium", "too_complex")
    assert df.check_tool_result(list(range(50)), {"max_items": 10}).detail == "more than 10 values"
    assert df.check_tool_result("x" * 500, {"max_chars": 100}).rule == "too_complex"
    cyclic = {"a": 1}
    cyclic["self"] = cyclic
    assert df.check_tool_result(cyclic).detail == "the payload refers to itself"


def test_the_worst_rule_decides_and_all_are_listed():
    check = df.check_tool_result({"t": 999, "blob": "x" * 50}, {"ranges": {"t": (0, 100)}, "max_chars": 10})
    assert check.rule == "out_of_range" and check.reliability == "low"
    assert check.node_fields()["metadata"]["tool_rules_fired"] == ["out_of_range", "too_complex"]
    assert check.fuse() == {"decision": "block", "reason": "t: 999 outside [0, 100]",
                            "threshold": None, "reason_code": "tool_out_of_range"}


def test_custom_checks_and_unknown_rules():
    stale = lambda value: ("medium", "stale", "older than a day") if value.get("age_h", 0) > 24 else None  # noqa: E731
    check = df.check_tool_result({"age_h": 30, "v": 1}, checks=(stale,))
    assert (check.reliability, check.rule, check.detail) == ("medium", "stale", "older than a day")
    with pytest.raises(ValueError, match="unknown tool rules"):
        df.check_tool_result(1, {"max_dept": 3})
