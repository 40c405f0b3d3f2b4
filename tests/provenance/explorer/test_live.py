"""The explorer's websockets, through the real ASGI application (origin check,
session auth, routing): open pages hear about new nodes and traces after
commit, and only members of the project (or staff) may listen."""

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from denoise_dashboard.asgi import application
from tests.support.events import fuse_event, node_event, review_event

pytestmark = pytest.mark.django_db(transaction=True)

ORIGIN = b"http://127.0.0.1:8000"


@pytest.fixture(autouse=True)
def in_process_layer(settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}


def session_cookie(user) -> bytes:
    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}".encode()


def headers_for(user=None, origin: bytes = ORIGIN) -> list[tuple[bytes, bytes]]:
    headers = [(b"origin", origin), (b"host", b"127.0.0.1:8000")]
    if user is not None:
        headers.append((b"cookie", session_cookie(user)))
    return headers


def listen_while(path: str, user, action, count: int = 1) -> list[dict]:
    """Connects, runs `action` (sync, e.g. an ingest), returns what arrived."""

    headers = headers_for(user)

    async def scenario():
        communicator = WebsocketCommunicator(application, path, headers=headers)
        connected, _ = await communicator.connect()
        assert connected
        await database_sync_to_async(action)()
        messages = [await communicator.receive_json_from(timeout=5) for _ in range(count)]
        assert await communicator.receive_nothing(timeout=0.2)
        await communicator.disconnect()
        return messages

    return async_to_sync(scenario)()


def refused(path: str, user=None, origin: bytes = ORIGIN) -> bool:
    headers = headers_for(user, origin)

    async def scenario():
        communicator = WebsocketCommunicator(application, path, headers=headers)
        connected, _ = await communicator.connect()
        await communicator.disconnect()
        return not connected

    return async_to_sync(scenario)()


def test_an_open_trace_hears_its_new_nodes(member_user, ingest):
    ingest(node_event("a", "t1"))
    [message] = listen_while("/ws/p/acme/traces/t1/", member_user,
                             lambda: ingest(node_event("b", "t1", parents=["a"], seconds=1), node_event("c", "t2")))
    assert (message["type"], message["nodes"]) == ("nodes.added", ["b"])


def test_the_message_carries_the_trace_header_figures(member_user, ingest):
    ingest(node_event("a", "t1", confidence=0.9))
    [message] = listen_while("/ws/p/acme/traces/t1/", member_user, lambda: ingest(
        node_event("b", "t1", parents=["a"], seconds=60, confidence=0.2, source_type="final_answer")))
    header = message["trace"]
    assert (header["node_count"], header["min_confidence"], header["final_id"], header["final_confidence"]) == (
        2, 0.2, "b", 0.2)
    assert header["ended_at"] == "2026-11-20T09:01:00Z"


def test_the_trace_list_hears_new_traces_as_rows(member_user, ingest):
    ingest(node_event("a", "t1"))
    [message] = listen_while("/ws/p/acme/traces/", member_user, lambda: ingest(
        node_event("x", "new-trace", confidence=0.3, source_type="final_answer"), review_event("new-trace", "incorrect")))
    assert message["type"] == "traces.changed"
    [row] = message["traces"]
    assert row["trace_id"] == "new-trace"
    assert row["url"] == "/p/acme/traces/new-trace/"
    assert (row["node_count"], row["min_confidence"], row["final_confidence"], row["verdict"]) == (1, 0.3, 0.3, "incorrect")


def test_other_projects_ingest_is_not_heard(member_user, ingest, other_api):
    ingest(node_event("a", "t1"))

    def elsewhere():
        ingest(node_event("g", "t1"), client=other_api)
        ingest(node_event("b", "t1", seconds=1))

    [message] = listen_while("/ws/p/acme/traces/t1/", member_user, elsewhere)
    assert message["nodes"] == ["b"]


def test_anonymous_and_foreign_origin_are_refused(member_user, ingest):
    ingest(node_event("a", "t1"))
    assert refused("/ws/p/acme/traces/t1/")
    assert refused("/ws/p/acme/traces/")
    assert refused("/ws/p/acme/traces/t1/", member_user, origin=b"http://evil.example")
    assert not refused("/ws/p/acme/traces/t1/", member_user)


def test_a_member_of_another_project_is_refused(member_user, make_project, ingest, other_api):
    ingest(node_event("a", "t1"))
    ingest(node_event("g", "g1"), client=other_api)
    assert refused("/ws/p/globex/traces/g1/", member_user)
    assert refused("/ws/p/globex/traces/", member_user)
    # Its trace is not reachable through one's own project either.
    assert refused("/ws/p/acme/traces/g1/", member_user)
    assert refused("/ws/p/acme/traces/no-such-trace/", member_user)


def test_staff_may_listen_to_any_project(ingest, other_api):
    ingest(node_event("g", "g1"), client=other_api)
    staff = get_user_model().objects.create_user("root", is_staff=True)
    assert not refused("/ws/p/globex/traces/g1/", staff)


def test_a_review_of_a_shown_node_updates_the_open_trace_header(member_user, ingest):
    ingest(node_event("a", "t1", confidence=0.4, source_type="final_answer"))
    [message] = listen_while("/ws/p/acme/traces/t1/", member_user,
                             lambda: ingest(review_event("t1", "incorrect", "a")))
    assert message["type"] == "trace.changed"
    assert message["trace"]["verdict"] == "incorrect"


def test_a_fuse_on_a_shown_node_updates_the_open_trace_and_the_list(member_user, ingest):
    ingest(node_event("a", "t1", confidence=0.2), node_event("b", "t1", parents=["a"], seconds=1))
    [message] = listen_while("/ws/p/acme/traces/t1/", member_user, lambda: ingest(fuse_event("a")))
    assert (message["type"], message["trace"]["fused_count"]) == ("trace.changed", 1)
    [listed] = listen_while("/ws/p/acme/traces/", member_user, lambda: ingest(fuse_event("b")))
    assert [row["fused_count"] for row in listed["traces"]] == [2]
