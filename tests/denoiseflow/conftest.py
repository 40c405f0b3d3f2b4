"""SDK fixtures: recorders pointed at a live dashboard or at stand-in servers."""

import pytest

from denoiseflow import Recorder


@pytest.fixture
def recorders():
    """Makes recorders and closes them all after the test."""
    made = []

    def make(url: str, api_key: str = "dd_test", **options) -> Recorder:
        options.setdefault("flush_interval", 0.05)
        options.setdefault("backoff_base", 0.05)
        options.setdefault("max_backoff", 0.2)
        recorder = Recorder(url, api_key, **options)
        made.append(recorder)
        return recorder

    yield make
    for recorder in made:
        recorder.close(timeout=0.5)


@pytest.fixture
def live_recorder(live_server, project_and_key, recorders):
    return recorders(live_server.url, project_and_key[1])
