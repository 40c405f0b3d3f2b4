"""Truth-set items to send, the demo's two runs, and comparing an answer with
the part of it a test names."""

import httpx

from demo import truth_sets
from denoiseflow import Recorder


def number_items(n: int, prefix: str = "q", **fields) -> list[dict]:
    return [{"id": f"{prefix}-{i}", "input": {"question": f"how many {i}?"}, "expected": i * 10, **fields}
            for i in range(1, n + 1)]


def part(data: dict, expected: dict) -> dict:
    """`data` cut down to the keys of `expected`, to compare with it."""
    return {key: data.get(key, "<absent>") for key in expected}


def demo_runs(server, key: str) -> tuple[dict, dict]:
    """The demo's two prompts evaluated through the SDK against `server`:
    (the newer run, the older one) as `GET /api/v1/runs` lists them."""
    recorder = Recorder(server.url, key, flush_interval=0.05)
    assert truth_sets.load(recorder) == 2
    assert recorder.close(timeout=30)
    runs = httpx.get(f"{server.url}/api/v1/runs", params={"dataset": truth_sets.DATASET},
                     headers={"Authorization": f"Bearer {key}"}).json()
    return runs[0], runs[1]
