"""Whether a step the SDK is handed must be awaited: the ladder and the
redundant runs both drive sync and async steps, and must agree on which is which."""

import inspect


def is_async(step) -> bool:
    """An `async def`, a partial or bound method of one, or an object whose `__call__` is one."""
    if step is None:
        return False
    if inspect.iscoroutinefunction(step):
        return True
    return not inspect.isroutine(step) and inspect.iscoroutinefunction(type(step).__call__)
