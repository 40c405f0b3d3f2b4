"""Every list answer of the evals API in JSON Lines, as the schema advertises it
(`?format=jsonl` or `Accept: application/x-ndjson`): one line per entry of the
JSON answer, timestamps, decimals and all."""

import json

import pytest

from tests.support.evals import number_items

LISTS = ["/api/v1/datasets", "/api/v1/datasets/ds/versions", "/api/v1/runs"]


@pytest.fixture
def history(dataset, run):
    dataset("ds", number_items(3))
    run("ds", {"q-1": 10, "q-2": 21}, metadata={"model": "m1", "cost": 0.25})


@pytest.mark.parametrize("path", LISTS)
@pytest.mark.parametrize("ask", ["query", "accept"])
def test_list_answers_in_json_lines_equal_the_json_ones(api, history, path, ask):
    as_json = api.get(path)
    assert as_json.status_code == 200 and as_json.json()
    if ask == "query":
        lines = api.get(path, {"format": "jsonl"})
    else:
        lines = api.get(path, HTTP_ACCEPT="application/x-ndjson")
    assert lines.status_code == 200, lines.content[:300]
    assert lines["Content-Type"].startswith("application/x-ndjson")
    assert [json.loads(line) for line in lines.content.decode().splitlines()] == as_json.json()
