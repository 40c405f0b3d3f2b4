"""Whole-batch refusals: more than 1,000 events or 5 MiB is 413, a body that is
not a `batch` list is 400, and either way nothing is stored."""

import gzip
import zlib

import orjson
import pytest

from tests.provenance.stored import batch_bytes, post_raw, statuses, stored_rows
from tests.support.events import node_event

MAX_BYTES = 5 * 1024 * 1024


def small_nodes(count: int) -> list[dict]:
    return [node_event(f"p{i}", f"t{i % 7}", seconds=i) for i in range(count)]


def padded(events: list, size: int) -> bytes:
    """A batch body of exactly `size` bytes (JSON allows trailing whitespace)."""
    body = batch_bytes(events)
    assert len(body) <= size
    return body + b" " * (size - len(body))


def assert_refused(response, status: int, project):
    assert response.status_code == status, response.content
    assert "nothing was stored" in response.json()["error"]
    assert set(stored_rows(project).values()) == {0}


def test_more_than_1000_events_is_413_and_nothing_is_stored(api, project):
    assert_refused(api.post("/api/v1/ingest", {"batch": small_nodes(1001)}, format="json"), 413, project)


def test_exactly_1000_events_are_accepted(api, project):
    response = api.post("/api/v1/ingest", {"batch": small_nodes(1000)}, format="json")

    assert response.status_code == 207
    assert len(response.json()["successes"]) == 1000
    assert stored_rows(project)["nodes"] == 1000


def test_body_over_5_mib_is_413_and_nothing_is_stored(api, project):
    assert_refused(post_raw(api, padded(small_nodes(3), MAX_BYTES + 1)), 413, project)


def test_one_huge_event_over_5_mib_is_413(api, project):
    events = [node_event("p1"), node_event("p2", content="x" * MAX_BYTES)]
    assert_refused(api.post("/api/v1/ingest", {"batch": events}, format="json"), 413, project)


def test_body_of_exactly_5_mib_is_accepted(api, project):
    response = post_raw(api, padded(small_nodes(3), MAX_BYTES))

    assert response.status_code == 207
    assert stored_rows(project)["nodes"] == 3


def test_gzip_body_is_accepted(api, project):
    response = post_raw(api, gzip.compress(batch_bytes(small_nodes(5))), HTTP_CONTENT_ENCODING="gzip")

    assert response.status_code == 207, response.content
    assert set(statuses(response.json()).values()) == {201}
    assert stored_rows(project)["nodes"] == 5


def test_deflate_body_is_accepted(api, project):
    response = post_raw(api, zlib.compress(batch_bytes(small_nodes(2))), HTTP_CONTENT_ENCODING="deflate")

    assert response.status_code == 207, response.content
    assert stored_rows(project)["nodes"] == 2


def test_gzip_body_expanding_beyond_5_mib_is_413(api, project):
    bomb = gzip.compress(padded(small_nodes(2), MAX_BYTES + 1024))
    assert len(bomb) < 100_000

    assert_refused(post_raw(api, bomb, HTTP_CONTENT_ENCODING="gzip"), 413, project)


def test_corrupt_gzip_is_400(api, project):
    assert_refused(post_raw(api, b"\x1f\x8bnot really gzip", HTTP_CONTENT_ENCODING="gzip"), 400, project)


def test_unsupported_content_encoding_is_400(api, project):
    assert_refused(post_raw(api, batch_bytes(small_nodes(1)), HTTP_CONTENT_ENCODING="br"), 400, project)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"batch=1", id="form"),
        pytest.param(b'{"batch": [', id="truncated"),
        pytest.param(b"\xff\xfe{}", id="not utf-8"),
        pytest.param(b'{"batch": [{"id": NaN}]}', id="NaN"),
    ],
)
def test_body_that_is_not_json_is_400_and_nothing_is_stored(api, project, body):
    assert_refused(post_raw(api, body), 400, project)


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param([node_event("p1")], id="a bare list"),
        pytest.param({"events": [node_event("p1")]}, id="no batch key"),
        pytest.param({"batch": node_event("p1")}, id="batch an object"),
        pytest.param({"batch": "p1"}, id="batch a string"),
        pytest.param({"batch": None}, id="batch null"),
        pytest.param("batch", id="a string"),
        pytest.param(None, id="null"),
    ],
)
def test_body_without_a_batch_list_is_400_and_nothing_is_stored(api, project, payload):
    response = post_raw(api, orjson.dumps(payload))

    assert_refused(response, 400, project)
    assert "batch" in response.json()["error"]



@pytest.mark.parametrize("cut", [8, 4, 1], ids=["no trailer", "no length", "one byte short"])
def test_gzip_body_missing_its_trailer_is_400(api, project, cut):
    """The trailer holds the CRC and length that prove the body arrived whole."""
    truncated = gzip.compress(batch_bytes(small_nodes(3)))[:-cut]
    response = post_raw(api, truncated, HTTP_CONTENT_ENCODING="gzip")
    assert_refused(response, 400, project)
    assert "gzip" in response.json()["error"]


def test_gzip_body_with_a_wrong_crc_is_400(api, project):
    body = bytearray(gzip.compress(batch_bytes(small_nodes(3))))
    body[-8] ^= 0xFF
    assert_refused(post_raw(api, bytes(body), HTTP_CONTENT_ENCODING="gzip"), 400, project)


def test_deflate_body_cut_short_is_400(api, project):
    truncated = zlib.compress(batch_bytes(small_nodes(3)))[:-4]
    assert_refused(post_raw(api, truncated, HTTP_CONTENT_ENCODING="deflate"), 400, project)


@pytest.mark.parametrize("content_type", [
    "application/xml", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
])
def test_a_body_that_says_it_is_not_json_is_415_like_every_other_endpoint(api, project, content_type):
    response = api.generic("POST", "/api/v1/ingest", batch_bytes(small_nodes(2)), content_type=content_type)
    assert response.status_code == 415, response.content
    assert content_type.split(";")[0] in response.json()["error"]
    assert set(stored_rows(project).values()) == {0}
    assert api.generic("PATCH", "/api/v1/project", b"{}", content_type=content_type).status_code == 415


@pytest.mark.parametrize("content_type", ["application/json", "application/json; charset=utf-8", ""])
def test_json_or_no_content_type_is_read_as_json(api, project, content_type):
    response = api.generic("POST", "/api/v1/ingest", batch_bytes(small_nodes(2)), content_type=content_type)
    assert response.status_code == 207, response.content
