"""When the recorder retries: Retry-After in both forms, bounded backoff, and a
batch the server finds too large split until it fits."""

import gzip
import json
from datetime import UTC, datetime

from denoiseflow import Recorder, Reply
from denoiseflow.retry import backoff, retry_after


def test_retry_after_in_seconds_or_as_an_http_date():
    now = datetime(2026, 11, 20, 9, 0, 0, tzinfo=UTC)
    assert retry_after("7", now) == 7
    assert retry_after("Fri, 20 Nov 2026 09:00:30 GMT", now) == 30
    assert retry_after("Fri, 20 Nov 2026 08:59:00 GMT", now) == 0  # already past
    assert retry_after("86400", now) == 300  # an absurd wait is capped
    assert retry_after("soon", now) is None and retry_after(None, now) is None


def test_backoff_grows_with_jitter_up_to_its_cap():
    assert all(0.25 <= backoff(0, 0.5, 30) <= 0.5 for _ in range(50))
    assert all(2.0 <= backoff(3, 0.5, 30) <= 4.0 for _ in range(50))
    assert all(backoff(20, 0.5, 30) <= 30 for _ in range(50))


class SmallBatchesOnly:
    """A dashboard behind a proxy that refuses requests of more than 3 events."""

    def __init__(self):
        self.accepted: list[str] = []

    def post(self, url, body, headers):
        if headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        batch = json.loads(body)["batch"]
        if len(batch) > 3:
            return Reply(413, {}, b'{"error": "too large"}')
        self.accepted += [event["id"] for event in batch]
        return Reply(207, {}, json.dumps({"successes": [{"id": e["id"], "status": 201} for e in batch],
                                          "errors": []}).encode())


def test_a_batch_refused_as_too_large_is_split_until_it_fits():
    server = SmallBatchesOnly()
    recorder = Recorder("http://dashboard", "key", transport=server, flush_interval=0.01)
    for i in range(20):
        recorder.record("t", "agent", f"artifact {i}")
    assert recorder.flush(timeout=5)
    assert len(set(server.accepted)) == 20 and recorder.stats()["sent"] == 20
    recorder.close()
