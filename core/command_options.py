"""Options that several management commands share, parsed one way.

`--now` replays a periodic job as of another instant (tests, catch-up runs). It
takes the same ISO 8601 forms as ingest timestamps; a time without an offset is
UTC. A malformed value is refused by argparse with the option's name, before
the command does anything.
"""

import argparse
from datetime import datetime

from core.timestamps import parse_instant


def iso_instant(value: str) -> datetime:
    try:
        return parse_instant(value.strip())
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_now_argument(parser, what: str) -> None:
    """`--now ISO8601`: `what` says what the instant is for (default: now)."""
    parser.add_argument("--now", type=iso_instant, default=None, metavar="ISO8601",
                        help=f"{what} as of this instant, e.g. 2026-11-20T09:15:00Z (default: now)")
