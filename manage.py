#!/usr/bin/env python
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "denoise_dashboard.settings")
    from django.core.management import execute_from_command_line

    from core.env import BadEnvironment

    try:
        execute_from_command_line(sys.argv)
    except BadEnvironment as error:
        # A configuration mistake: one line naming the variable, not a traceback.
        sys.exit(f"error: {error}")
