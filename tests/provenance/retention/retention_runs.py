"""Running `manage.py apply_retention` the way an operator does."""

import io

from django.core.management import call_command


def apply_retention(*args: str) -> str:
    out = io.StringIO()
    call_command("apply_retention", *args, stdout=out)
    return out.getvalue()
