"""What a step cost: the project's price table and the contract's formula.

`prices` maps a model name to USD per million input and output tokens:
`{"gpt-4o-mini": {"input_per_mtok": 0.15, "output_per_mtok": 0.6}}`. A node's
cost is computed once, when it is stored, so a price added or changed later
does not rewrite what earlier steps cost.
"""

from core.field_checks import FieldErrors, number_problem

PRICE_KEYS = ("input_per_mtok", "output_per_mtok")
MAX_PRICE_PER_MTOK = 1e6
MAX_MODEL_LENGTH = 255
MAX_MODELS = 1000
PER_MTOK = 1e6


class PriceTable:
    """A project's prices, read for one batch."""

    __slots__ = ("_prices",)

    def __init__(self, prices: dict | None):
        self._prices = {
            model: (float(entry.get("input_per_mtok", 0)), float(entry.get("output_per_mtok", 0)))
            for model, entry in (prices or {}).items()
            if isinstance(entry, dict)
        }

    def cost(self, model: str, input_tokens: int | None, output_tokens: int | None) -> float | None:
        """USD, or None (unpriced) when the model has no price or the node no usage."""
        if input_tokens is None or not model:
            return None
        price = self._prices.get(model)
        if price is None:
            return None
        return input_tokens * price[0] / PER_MTOK + output_tokens * price[1] / PER_MTOK


def validate_prices(prices, field: str = "prices") -> tuple[dict, dict[str, str]]:
    """(the price table to store, errors by field such as
    `prices.gpt-4o.input_per_mtok`). Both prices of an entry are required."""
    if not isinstance(prices, dict):
        return {}, {field: 'must be an object {"MODEL": {"input_per_mtok": number, "output_per_mtok": number}}'}
    errors = FieldErrors()
    table: dict[str, dict[str, float]] = {}
    if len(prices) > MAX_MODELS:
        errors[field] = f"at most {MAX_MODELS} models"
    for model, entry in prices.items():
        where = f"{field}.{model[:MAX_MODEL_LENGTH]}"
        known = len(errors)
        if not model or len(model) > MAX_MODEL_LENGTH or "\x00" in model:
            errors[where] = f"a model name is 1 to {MAX_MODEL_LENGTH} characters"
            continue
        if not isinstance(entry, dict):
            errors[where] = 'must be an object {"input_per_mtok": number, "output_per_mtok": number}'
            continue
        errors.unknown_keys(entry, PRICE_KEYS, "unknown field (expected input_per_mtok, output_per_mtok)",
                            lambda key, where=where: f"{where}.{str(key)[:40]}")
        for key in PRICE_KEYS:
            if key not in entry:
                errors[f"{where}.{key}"] = "is required"
            else:
                errors.check(f"{where}.{key}", number_problem(
                    entry[key], 0, MAX_PRICE_PER_MTOK, below=f"must be from 0 to {MAX_PRICE_PER_MTOK:g} USD per million tokens"))
        if len(errors) == known:
            table[model] = {key: float(entry[key]) for key in PRICE_KEYS}
    return table, dict(errors)


def format_usd(value: float | None) -> str:
    """Dollars as a person reads them: cents for sums, significant digits for
    the fractions of a cent a single step costs."""
    if value is None:
        return "—"
    if value == 0:
        return "$0"
    if value >= 1:
        return f"${value:,.2f}"
    return f"${value:.3g}" if value >= 0.001 else f"${value:.6f}".rstrip("0")


def format_ms(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:,.0f} ms" if value < 1000 else f"{value / 1000:,.2f} s"
