"""How a node passes one filter value, in each form the reads need: Python,
ORM lookups and SQL. A value is one exact value (the API's, an alert's) or a
tuple of two or more, any of which passes (a page's typed prefix, resolved by
core.filter_values)."""


def matches(found, wanted) -> bool:
    return found in wanted if isinstance(wanted, tuple) else found == wanted


def lookups(chosen: dict) -> dict:
    """{column: filter value} as ORM lookups."""
    return {f"{column}__in" if isinstance(value, tuple) else column: value for column, value in chosen.items()}


def value_sql(expression: str, placeholder: str, value) -> str:
    """`expression` passing `value`, which the statement's parameter `placeholder` carries (value_param)."""
    return f"{expression} = ANY({placeholder})" if isinstance(value, tuple) else f"{expression} = {placeholder}"


def value_param(value):
    return list(value) if isinstance(value, tuple) else value
