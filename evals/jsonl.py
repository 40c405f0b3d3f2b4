"""JSON Lines for truth sets: one ITEM per line, so a team keeps them in git
and a diff shows one changed item as one changed line."""

import json

from rest_framework.renderers import BaseRenderer
from rest_framework.utils.encoders import JSONEncoder

from evals.validation import Invalid
from provenance.ingest.json_limits import PAST_64_BITS, number_past_64_bits

MEDIA_TYPE = "application/x-ndjson"
MAX_LINES = 10_000


def dump(items: list[dict]) -> bytes:
    # The JSON renderer's own encoder: a line holds what the JSON answer holds
    # (timestamps, decimals, UUIDs), written the same way.
    return "".join(
        json.dumps(item, cls=JSONEncoder, ensure_ascii=False, sort_keys=True) + "\n" for item in items
    ).encode()


def parse(body: bytes, field: str = "items", max_lines: int = MAX_LINES) -> list:
    """The lines' values; blank lines are skipped. A line that is not JSON is
    named by its index among the items and its line number."""
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise Invalid(field, "the file is not UTF-8 text") from None
    values = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if len(values) >= max_lines:
            raise Invalid(field, f"at most {max_lines:,} lines per import")
        try:
            value = json.loads(line)
        except ValueError as error:
            raise Invalid(f"{field}[{len(values)}]", f"line {number} is not JSON: {error.msg}") from None
        if where := number_past_64_bits(value, f"{field}[{len(values)}]"):
            raise Invalid(where, f"line {number} holds {PAST_64_BITS}")
        values.append(value)
    return values


class JSONLinesRenderer(BaseRenderer):
    """`?format=jsonl`: a list as one JSON value per line; anything else (an
    error) as a single line."""

    media_type = MEDIA_TYPE
    format = "jsonl"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        if isinstance(data, list):
            # An empty file is one blank line: DRF drops the Content-Type of an empty body.
            return dump(data) or b"\n"
        return dump([data])
