"""A webhook receiver on loopback that checks Standard Webhooks signatures with
its own implementation (written from the scheme, not from alerts/signing.py),
and stands in for Slack's and PagerDuty's endpoints, checking each request
against their documented payloads (written from their docs, not from our
transports), and an SMTP server (aiosmtpd) that keeps every message."""

import base64
import hashlib
import hmac
import json
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORTS = range(8141, 8158)  # this helper's loopback ports; 8158-8159 are left for live servers


def standard_webhooks_verify(secret: str, headers: dict[str, str], body: bytes, tolerance: int = 300) -> bool:
    """Per standardwebhooks.com: key = base64-decoded secret after `whsec_`, signed
    content = `{msg_id}.{timestamp}.{payload}`, header = space-separated `v1,<b64>`."""
    msg_id, timestamp, signatures = headers.get("webhook-id"), headers.get("webhook-timestamp"), headers.get("webhook-signature")
    if not (msg_id and timestamp and signatures):
        return False
    if abs(time.time() - int(timestamp)) > tolerance:
        return False
    key = base64.b64decode(secret.removeprefix("whsec_")) if secret.startswith("whsec_") else secret.encode("utf-8")
    to_sign = msg_id.encode() + b"." + timestamp.encode() + b"." + body
    expected = base64.b64encode(hmac.new(key, to_sign, hashlib.sha256).digest())
    for candidate in signatures.split(" "):
        version, _, value = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(value.encode(), expected):
            return True
    return False


SLACK_BLOCK_TYPES = {"actions", "context", "divider", "file", "header", "image", "input", "rich_text", "section",
                     "video", "markdown"}


def slack_problems(body: bytes) -> list[str]:
    """Slack incoming webhooks (docs.slack.dev, Block Kit reference): a JSON object
    with a `text` fallback and at most 50 blocks; a header's plain_text at most 150
    characters; a section has text (at most 3,000) or at most 10 fields (2,000 each);
    a button has plain_text (at most 75) and a url (at most 3,000)."""
    try:
        message = json.loads(body)
    except ValueError:
        return ["not JSON"]
    problems = []
    if not isinstance(message.get("text"), str) or not message["text"]:
        problems.append("no text fallback")
    found = message.get("blocks")
    if not isinstance(found, list) or not 0 < len(found) <= 50:
        return problems + ["blocks must be a list of 1-50"]
    for index, block in enumerate(found):
        kind = block.get("type")
        if kind not in SLACK_BLOCK_TYPES:
            problems.append(f"blocks[{index}]: unknown type {kind!r}")
        if kind == "header" and (block["text"]["type"] != "plain_text" or len(block["text"]["text"]) > 150):
            problems.append(f"blocks[{index}]: header needs plain_text of at most 150")
        if kind == "section":
            if "text" not in block and "fields" not in block:
                problems.append(f"blocks[{index}]: section without text or fields")
            if len(block.get("text", {}).get("text", "")) > 3000:
                problems.append(f"blocks[{index}]: text over 3000")
            if len(block.get("fields", [])) > 10 or any(len(f["text"]) > 2000 for f in block.get("fields", [])):
                problems.append(f"blocks[{index}]: more than 10 fields or a field over 2000")
        if kind == "actions":
            for element in block.get("elements", []):
                if element.get("type") == "button" and (element["text"]["type"] != "plain_text"
                                                        or len(element["text"]["text"]) > 75
                                                        or len(element.get("url", "")) > 3000):
                    problems.append(f"blocks[{index}]: bad button")
    return problems


def pagerduty_problems(body: bytes) -> list[str]:
    """PagerDuty Events API v2 (developer.pagerduty.com, "Send an Alert Event"):
    routing_key, event_action trigger|acknowledge|resolve, dedup_key at most 255
    characters (required to acknowledge or resolve); a trigger needs
    payload.summary (at most 1,024), payload.source and payload.severity
    (critical, error, warning or info)."""
    try:
        event = json.loads(body)
    except ValueError:
        return ["not JSON"]
    problems = []
    if not isinstance(event.get("routing_key"), str) or not event["routing_key"]:
        problems.append("no routing_key")
    action = event.get("event_action")
    if action not in ("trigger", "acknowledge", "resolve"):
        problems.append(f"bad event_action {action!r}")
    if len(event.get("dedup_key", "")) > 255 or (action != "trigger" and not event.get("dedup_key")):
        problems.append("bad dedup_key")
    if action == "trigger":
        payload = event.get("payload") or {}
        if not payload.get("summary") or len(payload["summary"]) > 1024:
            problems.append("payload.summary missing or over 1024")
        if not payload.get("source"):
            problems.append("payload.source missing")
        if payload.get("severity") not in ("critical", "error", "warning", "info"):
            problems.append("bad payload.severity")
    return problems


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    verified: bool
    problems: list[str] = field(default_factory=list)

    @property
    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class Receiver:
    """`script` answers the n-th request: an int status, ("redirect", url),
    ("hold", seconds) to keep the request open, or ("sleep", seconds, status)."""

    secret: str = ""
    check: object = None  # a payload checker (slack_problems, pagerduty_problems)
    script: list = field(default_factory=list)
    default: object = 200
    received: list[Received] = field(default_factory=list)
    holding: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def next_answer(self):
        index = len(self.received) - 1
        return self.script[index] if index < len(self.script) else self.default

    def wait_for(self, count: int, timeout: float = 10) -> list[Received]:
        deadline = time.monotonic() + timeout
        while len(self.received) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.received


def handler_for(receiver: Receiver):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            headers = {k.lower(): v for k, v in self.headers.items()}
            receiver.received.append(Received(self.path, headers, body,
                                              standard_webhooks_verify(receiver.secret, headers, body),
                                              receiver.check(body) if receiver.check else []))
            answer = receiver.next_answer()
            if isinstance(answer, tuple) and answer[0] == "hold":
                receiver.holding.set()
                receiver.release.wait(answer[1])
                answer = 200
            elif isinstance(answer, tuple) and answer[0] == "sleep":
                time.sleep(answer[1])
                answer = answer[2]
            try:
                if isinstance(answer, tuple) and answer[0] == "redirect":
                    self.send_response(302)
                    self.send_header("Location", answer[1])
                else:
                    self.send_response(answer)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(f"answered {answer}".encode())
            except OSError:
                pass  # the sender went away (a killed worker)

        def do_GET(self):
            receiver.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, b"", False))
            self.send_response(200)
            self.end_headers()

    return Handler


def start(receiver: Receiver) -> ThreadingHTTPServer:
    for port in PORTS:
        try:
            server = ThreadingHTTPServer(("127.0.0.1", port), handler_for(receiver))
        except OSError:
            continue
        server.daemon_threads = True
        receiver.port = port
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server
    raise RuntimeError("no free port in 8141-8157")


@contextmanager
def running(secret: str = "", **options):
    """A receiver listening for the length of the block (a held request is let go at its end)."""
    hook = Receiver(secret=secret, **options)
    server = start(hook)
    try:
        yield hook
    finally:
        hook.release.set()
        server.shutdown()
        server.server_close()


SMTP_PORTS = range(8170, 8186)


@dataclass
class Mailbox:
    """What the SMTP server received; `refuse` addresses get 550 at RCPT, and the
    first `busy` messages get 451 at DATA (a server asking to try later)."""

    messages: list = field(default_factory=list)
    refuse: set = field(default_factory=set)
    busy: int = 0
    port: int = 0

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address in self.refuse:
            return "550 5.1.1 no such mailbox"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        if self.busy > 0:
            self.busy -= 1
            return "451 4.3.0 try again later"
        from email import message_from_bytes, policy

        self.messages.append((envelope.mail_from, list(envelope.rcpt_tos),
                              message_from_bytes(envelope.content, policy=policy.default)))
        return "250 Message accepted for delivery"


@contextmanager
def smtp_server():
    from aiosmtpd.controller import Controller

    box = Mailbox()
    for port in SMTP_PORTS:
        controller = Controller(box, hostname="127.0.0.1", port=port)
        try:
            controller.start()
        except (OSError, RuntimeError):
            continue
        box.port = port
        try:
            yield box
        finally:
            controller.stop()
        return
    raise RuntimeError("no free port in 8170-8185")
