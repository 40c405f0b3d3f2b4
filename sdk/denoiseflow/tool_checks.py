"""Checks on what a tool returned, before anyone builds on it.

A tool call that "worked" can still hand back nothing, an error wrapped in a
200, a number no real answer could have, or a payload too large or deep to be
what was asked for. `check_tool_result` applies the rules and rates the
result's reliability high, medium or low with a confidence; the worst rule
that fired is the reason, and the recorded node keeps it in metadata.

Rules and what they rate (`ToolRules`, or a dict of its fields):

- `empty`: None, blank text, an empty collection, or a mapping of only empty values → low (0.2)
- `error`: an exception, an error field (`error`, `errors`, `error_code`, …) that is set,
  a status field (`status`, `status_code`, `code`, …) of 400 or more or saying "error"/"failed",
  text starting "Error"/"Exception"/"Traceback" → low (0.1)
- `out_of_range`: a number at a dotted path (`"price"`, `"rows.0.total"`, `""` for the value
  itself) outside its `(low, high)`, or missing → low (0.3)
- `too_complex`: deeper than `max_depth`, more than `max_items` values, or more than
  `max_chars` characters of text → medium (0.6)
- `checks`: your own callables `value -> None | (level, rule, detail)`

No rule fired → high (0.95).
"""

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields

from denoiseflow.vocabulary import BLOCK, DOWNWEIGHT

HIGH, MEDIUM, LOW = "high", "medium", "low"
LEVEL_CONFIDENCE = {HIGH: 0.95, MEDIUM: 0.6, LOW: 0.2}
RULE_CONFIDENCE = {"error": 0.1, "empty": 0.2, "out_of_range": 0.3, "too_complex": 0.6}
RULE_LEVEL = {"error": LOW, "empty": LOW, "out_of_range": LOW, "too_complex": MEDIUM}
ERROR_TEXT = re.compile(r"^\s*(error|exception|traceback)\b", re.IGNORECASE)
FAILED_STATUS = {"error", "failed", "failure", "fault", "fail"}


@dataclass(frozen=True)
class ToolRules:
    allow_empty: bool = False
    error_fields: tuple = ("error", "errors", "error_code", "error_message", "exception", "fault")
    status_fields: tuple = ("status", "status_code", "http_status", "code")
    ranges: Mapping[str, tuple] = field(default_factory=dict)
    max_depth: int = 10
    max_items: int = 10_000
    max_chars: int = 200_000
    checks: tuple = ()


@dataclass(frozen=True)
class Finding:
    rule: str
    level: str
    detail: str
    confidence: float


@dataclass(frozen=True)
class ToolCheck:
    reliability: str  # high | medium | low
    confidence: float
    findings: tuple[Finding, ...] = ()

    @property
    def rule(self) -> str:
        """The rule that decided the rating: the worst that fired, or ""."""
        return self.findings[0].rule if self.findings else ""

    @property
    def detail(self) -> str:
        return self.findings[0].detail if self.findings else ""

    @property
    def reliable(self) -> bool:
        return self.reliability == HIGH

    def fuse(self) -> dict | None:
        if not self.findings:
            return None
        return {"decision": BLOCK if self.reliability == LOW else DOWNWEIGHT,
                "reason": self.detail[:500], "threshold": None, "reason_code": f"tool_{self.rule}"}

    def node_fields(self) -> dict:
        """Keyword arguments for `Recorder.record` of the tool result's node."""
        metadata = {"tool_reliability": self.reliability}
        if self.findings:
            metadata.update(tool_rule=self.rule, tool_rule_detail=self.detail,
                            tool_rules_fired=[f.rule for f in self.findings])
        fields = {"confidence": self.confidence, "metrics": {"tool_reliability": self.confidence},
                  "metadata": metadata}
        if (verdict := self.fuse()) is not None:
            fields["fuse"] = verdict
        return fields


def finding(rule: str, detail: str, level: str | None = None) -> Finding:
    level = level or RULE_LEVEL.get(rule, MEDIUM)
    return Finding(rule, level, detail, RULE_CONFIDENCE.get(rule, LEVEL_CONFIDENCE[level]))


def is_blank(value) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, (list, tuple, set, frozenset, dict, bytes)):
        return len(value) == 0
    return False


def empty_finding(value) -> Finding | None:
    if is_blank(value):
        return finding("empty", "the tool returned nothing" if value is None else f"empty {type(value).__name__}")
    if isinstance(value, Mapping) and all(is_blank(v) for v in value.values()):
        return finding("empty", f"every field is empty ({', '.join(map(str, list(value)[:5]))})")
    return None


def error_finding(value, rules: ToolRules) -> Finding | None:
    if isinstance(value, BaseException):
        return finding("error", f"{type(value).__name__}: {value}")
    if isinstance(value, str) and ERROR_TEXT.match(value):
        return finding("error", value.strip().splitlines()[0][:200])
    if not isinstance(value, Mapping):
        return None
    for name in rules.error_fields:
        if not is_blank(value.get(name)) and value.get(name) is not False:
            return finding("error", f"{name}: {str(value[name])[:200]}")
    for name in rules.status_fields:
        status = value.get(name)
        if isinstance(status, int) and not isinstance(status, bool) and status >= 400:
            return finding("error", f"{name}: {status}")
        if isinstance(status, str) and (status.strip().casefold() in FAILED_STATUS or (
                status.strip().isdigit() and int(status.strip()) >= 400)):
            return finding("error", f"{name}: {status}")
    return None


def at_path(value, path: str):
    for part in [p for p in path.split(".") if p]:
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, (list, tuple)) and part.lstrip("-").isdigit() and -len(value) <= int(part) < len(
                value):
            value = value[int(part)]
        else:
            raise KeyError(path)
    return value


def range_findings(value, rules: ToolRules) -> list[Finding]:
    found = []
    for path, (low, high) in rules.ranges.items():
        where = path or "value"
        try:
            number = at_path(value, path)
        except KeyError:
            found.append(finding("out_of_range", f"{where}: missing"))
            continue
        if isinstance(number, bool) or not isinstance(number, (int, float)) or number != number:
            found.append(finding("out_of_range", f"{where}: {str(number)[:80]!r} is not a number"))
        elif (low is not None and number < low) or (high is not None and number > high):
            found.append(finding("out_of_range", f"{where}: {number} outside [{low}, {high}]"))
    return found


def complexity_finding(value, rules: ToolRules) -> Finding | None:
    """Walks the payload once, stopping as soon as a limit is passed."""
    items = chars = 0
    stack, seen = [(value, 1)], set()
    while stack:
        current, depth = stack.pop()
        if depth > rules.max_depth:
            return finding("too_complex", f"nested deeper than {rules.max_depth} levels")
        items += 1
        if items > rules.max_items:
            return finding("too_complex", f"more than {rules.max_items} values")
        if isinstance(current, (str, bytes)):
            chars += len(current)
            if chars > rules.max_chars:
                return finding("too_complex", f"more than {rules.max_chars} characters of text")
        elif isinstance(current, (Mapping, list, tuple, set, frozenset)):
            if id(current) in seen:
                return finding("too_complex", "the payload refers to itself")
            seen.add(id(current))
            children = list(current.values()) if isinstance(current, Mapping) else list(current)
            stack.extend((child, depth + 1) for child in children)
    return None


def custom_findings(value, checks) -> list[Finding]:
    found = []
    for check in checks:
        try:
            said = check(value)
        except Exception as error:
            found.append(finding("check_failed", f"{getattr(check, '__name__', 'check')}: {error}"[:200], MEDIUM))
            continue
        if said:
            level, rule, detail = said
            found.append(finding(rule, detail, level))
    return found


def as_rules(rules) -> ToolRules:
    if rules is None:
        return ToolRules()
    if isinstance(rules, ToolRules):
        return rules
    known = {f.name for f in fields(ToolRules)}
    unknown = set(rules) - known
    if unknown:
        raise ValueError(f"unknown tool rules: {sorted(unknown)} (known: {sorted(known)})")
    return ToolRules(**{k: tuple(v) if k in ("error_fields", "status_fields", "checks") else v
                        for k, v in rules.items()})


def check_tool_result(value, rules: ToolRules | Mapping | None = None, *,
                      checks: tuple[Callable, ...] = ()) -> ToolCheck:
    """Rates a tool's result high/medium/low with a confidence (see the module doc)."""
    rules = as_rules(rules)
    found: list[Finding] = []
    error = error_finding(value, rules)
    if error is not None:
        found.append(error)
    elif not rules.allow_empty and (empty := empty_finding(value)) is not None:
        found.append(empty)
    if error is None:
        found.extend(range_findings(value, rules))
        if (complex_ := complexity_finding(value, rules)) is not None:
            found.append(complex_)
    found.extend(custom_findings(value, (*rules.checks, *checks)))
    if not found:
        return ToolCheck(HIGH, LEVEL_CONFIDENCE[HIGH])
    found.sort(key=lambda f: f.confidence)
    worst = found[0]
    return ToolCheck(worst.level, worst.confidence, tuple(found))
