"""One API key's budget is shared by every worker of `serve`: through Redis when
REDIS_URL is set, through a file in var/ on the embedded default."""

import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
import redis
from django.db import connection

from tests.support.serving import Serve, database_url

pytestmark = pytest.mark.django_db(transaction=True)
LIMIT = 10  # a minute: one more every 6 s


def redis_url_or_skip() -> str:
    url = "redis://127.0.0.1:6379/0"
    try:
        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
    except redis.ConnectionError:
        pytest.skip("Redis is not running on 127.0.0.1:6379")
    return url


@pytest.fixture(params=["redis", "file"])
def store_env(request):
    if connection.vendor != "postgresql":
        pytest.skip("serve tests run against PostgreSQL")
    env = {"DATABASE_URL": database_url(connection.settings_dict), "API_RATE_LIMIT": str(LIMIT)}
    if request.param == "redis":
        env.update(REDIS_URL=redis_url_or_skip(), REDIS_PREFIX=f"test-{uuid.uuid4().hex}")
    return env


def test_two_workers_share_one_budget_per_key(tmp_path, store_env, make_project):
    _, key = make_project("shared-budget")
    _, other_key = make_project("other-budget")
    with Serve(tmp_path, workers=2, **store_env) as server:
        def get(api_key):
            # A connection per request, so the requests spread over both workers.
            return httpx.get(f"{server.url}/api/v1/traces", headers={"Authorization": f"Bearer {api_key}"},
                             timeout=30).status_code

        started = time.monotonic()
        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(get, [key] * (2 * LIMIT)))
        elapsed = time.monotonic() - started

        accepted = answers.count(200)
        # Per-worker budgets would let up to 2 * LIMIT through; one shared budget
        # lets LIMIT through, plus one for every 6 s the burst took.
        assert LIMIT <= accepted <= LIMIT + int(elapsed // (60 / LIMIT)), (answers, elapsed)
        assert answers.count(429) == 2 * LIMIT - accepted
        assert get(other_key) == 200
