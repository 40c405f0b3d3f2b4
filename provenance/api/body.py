"""Reading request bodies under the contract's size limit, gzip included."""

import zlib

from django.conf import settings

from core.errors import ApiError

NOTHING_STORED = "nothing was stored"


class BodyTooLarge(ApiError):
    """The one refusal of a body over a size limit, whoever reads it (ingest,
    OTLP, the JSON parser of every other endpoint)."""

    status = 413

    def __init__(self, limit: int):
        super().__init__(f"body is larger than {limit} bytes; {NOTHING_STORED}")


class BadEncoding(ApiError):
    def __init__(self, reason: str):
        super().__init__(f"{reason}; {NOTHING_STORED}")


def read_body(request, limit: int | None = None) -> bytes:
    """The decoded body, refusing more than `limit` bytes before and after
    decompression (a small gzip body must not expand into gigabytes)."""
    limit = limit or settings.INGEST_MAX_BYTES
    length = request.META.get("CONTENT_LENGTH")
    if length and length.isdigit() and int(length) > limit:
        raise BodyTooLarge(limit)
    raw = request.body
    if len(raw) > limit:
        raise BodyTooLarge(limit)
    encoding = request.META.get("HTTP_CONTENT_ENCODING", "").strip().lower()
    if encoding in ("", "identity"):
        return raw
    if encoding not in ("gzip", "deflate"):
        raise BadEncoding(f"unsupported Content-Encoding {encoding!r}; use gzip or none")
    decompressor = zlib.decompressobj(wbits=zlib.MAX_WBITS | 32 if encoding == "gzip" else zlib.MAX_WBITS)
    try:
        body = decompressor.decompress(raw, limit + 1)
    except zlib.error as error:
        raise BadEncoding(f"body is not valid {encoding}: {error}") from None
    if len(body) > limit or decompressor.unconsumed_tail:
        raise BodyTooLarge(limit)
    if not decompressor.eof:
        # zlib checks the CRC and length only once it reaches the trailer: a body
        # cut short decompresses "fine" up to the cut and would be taken as whole.
        raise BadEncoding(f"body is not valid {encoding}: it ends before its trailer (cut short?)")
    return body
