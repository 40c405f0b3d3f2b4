"""The web tier scales out: two `serve` instances on their own ports share
PostgreSQL and Redis (channel layer namespaced for this run), and a node
ingested through one appears live on a trace page opened on the other."""

import uuid

import pytest
import redis
from django.db import connection

from tests.support.browser import sign_in
from tests.support.events import node_event
from tests.support.serving import Serve, database_url

REDIS_URL = "redis://127.0.0.1:6379/0"


@pytest.fixture
def shared_services():
    if connection.vendor != "postgresql":
        pytest.skip("browser tests run against PostgreSQL")
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping()
    except redis.ConnectionError:
        pytest.skip("Redis is not running on 127.0.0.1:6379")
    return {"DATABASE_URL": database_url(connection.settings_dict), "REDIS_URL": REDIS_URL,
            "REDIS_PREFIX": f"test-{uuid.uuid4().hex}"}


def test_a_node_ingested_through_one_instance_appears_live_on_the_other(tenant, shared_services, tmp_path,
                                                                       watched_page):
    _, key, _ = tenant
    page = watched_page
    with Serve(tmp_path, name="east", **shared_services) as east, \
            Serve(tmp_path, name="west", **shared_services) as west:
        east.ingest(key, node_event("question", "scaled-trace", agent_id="intake", confidence=0.9))

        sign_in(page, west)
        page.goto(f"{west.url}/p/acme/traces/scaled-trace/")
        page.wait_for_selector("#live-status.on")
        assert page.locator("#stat-nodes").text_content() == "1"

        east.ingest(key, node_event("answer", "scaled-trace", parents=["question"], seconds=2,
                                    agent_id="responder", confidence=0.4))
        page.wait_for_function("() => document.getElementById('stat-nodes').textContent === '2'")
        page.locator("#toast", has_text="1 new node arrived").wait_for()
    assert page.problems == []
