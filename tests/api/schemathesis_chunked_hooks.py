"""Schemathesis hooks (SCHEMATHESIS_HOOKS) for tests/api/test_schemathesis.py.

With CHUNKED_BODIES_LOG set, every request body goes out as an iterator, which
`requests` sends with Transfer-Encoding: chunked and no Content-Length, and
each request that really went out so is logged there (one line each), so the
test can tell the server was sent chunked bodies."""

import json
import os

import schemathesis
from schemathesis.core import NOT_SET

PIECE = 7  # small pieces: a body of any size crosses several chunk boundaries
bodies: dict[str, bytes] = {}  # case id -> the body being sent chunked


def pieces(body: bytes):
    for start in range(0, len(body), PIECE):
        yield body[start:start + PIECE]


@schemathesis.hook
def before_call(context, case, kwargs):
    if not os.environ.get("CHUNKED_BODIES_LOG") or case.body is NOT_SET:
        return
    sent = case.as_transport_kwargs()
    if "json" in sent:
        body = json.dumps(sent["json"]).encode()
    else:
        body = sent.get("data") or b""
        body = body.encode() if isinstance(body, str) else body
    if not isinstance(body, bytes):  # multipart and the like: left as generated
        return
    bodies[case.id] = body
    kwargs["data"] = pieces(body)


@schemathesis.hook
def after_call(context, case, response):
    log = os.environ.get("CHUNKED_BODIES_LOG")
    request = response.request
    body = bodies.pop(case.id, None)
    if body is None:
        return
    # Schemathesis records the request (and a failure's reproduction) from its
    # body: the bytes that went out, not the spent iterator.
    request.body = body
    if log and request.headers.get("Transfer-Encoding") == "chunked" and "Content-Length" not in request.headers:
        with open(log, "a") as out:
            out.write(f"{request.method} {request.url} {response.status_code}\n")

