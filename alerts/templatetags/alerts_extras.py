import math

from django import template

register = template.Library()


@register.filter
def alert_value(value) -> str:
    """A metric value as a person reads it: ∞ for an infinite change, — for no data."""
    if value is None:
        return "— (no data)"
    if isinstance(value, str):
        return "∞" if value == "Infinity" else value
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.4g}"


@register.filter
def condition_text(condition: dict) -> str:
    """`failure_rate [step=entity_extraction] over 15m > 0.7`, or with `change over 15m` for relative ones."""
    filters = condition.get("filters") or {}
    scope = " [" + ", ".join(f"{k}={v}" for k, v in filters.items()) + "]" if filters else ""
    change = " change" if condition.get("change") == "relative" else ""
    threshold = condition.get("threshold")
    threshold = f"{threshold:.15g}" if isinstance(threshold, (int, float)) else threshold
    window = f" over {condition['window']}" if condition.get("window") else ""
    return f"{condition.get('metric')}{scope}{change}{window} {condition.get('op')} {threshold}"
