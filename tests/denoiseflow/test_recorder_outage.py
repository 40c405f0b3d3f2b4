"""When the dashboard is down or answers 503/429, recording goes on: nothing is
lost once it is back, memory stays bounded (drops counted) while it is not, and
the agent is never blocked or handed an exception."""

import time

from tests.denoiseflow.servers import BlackHole, Gateway, closed_port, wait_until


def node_count(api, trace_id: str) -> int:
    response = api.get(f"/api/v1/traces/{trace_id}")
    return response.json()["node_count"] if response.status_code == 200 else 0


def test_nothing_is_lost_when_a_503ing_dashboard_comes_back(live_server, project_and_key, recorders, api):
    with Gateway(503, retry_after="0") as gateway:
        recorder = recorders(gateway.url, project_and_key[1], batch_size=50)
        for i in range(300):
            recorder.record("outage-1", "agent", f"artifact {i}")
        assert wait_until(lambda: len(gateway.seen) >= 3)
        assert node_count(api, "outage-1") == 0
        assert recorder.stats()["retries"] >= 2

        gateway.forward_to = live_server.url
        assert recorder.flush(timeout=20)

    assert node_count(api, "outage-1") == 300
    stats = recorder.stats()
    assert (stats["sent"], stats["dropped"], stats["rejected"], stats["pending"]) == (300, 0, 0, 0)


def test_nothing_is_lost_when_an_unreachable_dashboard_comes_back(live_server, project_and_key, recorders, api):
    port = closed_port()
    recorder = recorders(f"http://127.0.0.1:{port}", project_and_key[1])
    for i in range(120):
        recorder.record("outage-2", "agent", f"artifact {i}")
    assert wait_until(lambda: recorder.stats()["retries"] >= 2)  # connections refused, retried

    with Gateway(port=port) as gateway:
        gateway.forward_to = live_server.url
        assert recorder.flush(timeout=20)
    assert node_count(api, "outage-2") == 120


def test_retry_after_is_honored(live_server, project_and_key, recorders, api):
    with Gateway(429, retry_after="1") as gateway:
        recorder = recorders(gateway.url, project_and_key[1])
        recorder.record("outage-3", "agent", "artifact")
        assert wait_until(lambda: len(gateway.seen) >= 1)
        gateway.forward_to = live_server.url
        assert recorder.flush(timeout=10)
    first, second = gateway.seen[:2]
    assert second - first >= 0.9  # waited as told, not the 0.05 s backoff
    assert node_count(api, "outage-3") == 1


def test_memory_stays_bounded_and_recording_never_waits_while_the_dashboard_hangs(recorders):
    with BlackHole() as dashboard:
        recorder = recorders(dashboard.url, max_buffer=100, batch_size=20, timeout=3)
        started = time.monotonic()
        refs = [recorder.record("outage-4", "agent", "x" * 1000) for _ in range(5000)]
        elapsed = time.monotonic() - started

        assert len(refs) == 5000  # every call returned a ref, none raised
        assert elapsed < 2.0  # while the sender is stuck waiting for an answer
        stats = recorder.stats()
        assert stats["pending"] == 100
        assert stats["dropped"] == 4900
        assert recorder.flush(timeout=0.2) is False


def test_close_gives_up_in_time_and_counts_what_it_drops(recorders):
    recorder = recorders(f"http://127.0.0.1:{closed_port()}")
    for i in range(10):
        recorder.record("outage-5", "agent", f"artifact {i}")
    started = time.monotonic()
    assert recorder.close(timeout=0.3) is False
    assert time.monotonic() - started < 2.0
    stats = recorder.stats()
    assert stats["dropped"] == 10 and stats["pending"] == 0
    assert recorder.record("outage-5", "agent", "after close")  # still harmless
    assert recorder.stats()["dropped"] == 11


def test_a_wrong_api_key_is_not_retried_forever(live_server, recorders):
    recorder = recorders(live_server.url, "dd_wrong")
    recorder.record("outage-6", "agent", "artifact")
    assert recorder.flush(timeout=10)
    assert recorder.stats()["rejected"] == 1


def test_a_500_is_retried_like_a_503_until_the_batch_is_stored(live_server, project_and_key, recorders, api):
    # A database failing mid-request (or a proxy in front) answers 500 for a batch a later attempt stores.
    with Gateway(500) as gateway:
        recorder = recorders(gateway.url, project_and_key[1], max_attempts_on_error=3)
        recorder.record("outage-7", "agent", "artifact")
        assert wait_until(lambda: len(gateway.seen) >= 6)  # past any fixed number of attempts
        gateway.forward_to = live_server.url
        assert recorder.flush(timeout=10)
    assert recorder.stats()["failed"] == 0
    assert node_count(api, "outage-7") == 1


def test_other_server_errors_are_retried_a_few_times_then_counted_as_failed(project_and_key, recorders):
    with Gateway(501) as gateway:  # "not implemented": no later attempt will do better
        recorder = recorders(gateway.url, project_and_key[1], max_attempts_on_error=3)
        recorder.record("outage-7b", "agent", "artifact")
        assert recorder.flush(timeout=10)
    assert len(gateway.seen) == 3
    assert recorder.stats()["failed"] == 1
