"""What counts as a number in a JSON body: an int or a float that is finite.
Not a bool (JSON's true is no 1), not NaN or ±Infinity (which Python's JSON
reader accepts but no column, chart or threshold can hold)."""

import math


def is_finite_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
