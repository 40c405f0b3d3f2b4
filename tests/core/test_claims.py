"""A claim asks for one background job at a time (the ingest's request that a
worker drain a project's root-cause marks): of callers racing for a name, one
gets it; it is free again once released, or once it lapses. In Redis when
REDIS_URL is set, in the SQLite file of var/ on the embedded default."""

import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from core.limits.store import RedisStore, SqliteStore
from tests.denoise_dashboard.test_limits_across_workers import redis_url_or_skip


@pytest.fixture(params=["redis", "file"])
def store(request, tmp_path, settings):
    settings.LIMITS_KEY_PREFIX = f"test-{uuid.uuid4().hex}"
    if request.param == "redis":
        return RedisStore(redis_url_or_skip())
    return SqliteStore(tmp_path / "limits.sqlite3")


def test_of_callers_racing_for_a_name_exactly_one_claims_it(store):
    with ThreadPoolExecutor(8) as pool:
        claimed = list(pool.map(lambda _: store.claim("job:1", 60), range(40)))
    assert claimed.count(True) == 1
    assert store.claim("job:2", 60), "another name is claimed on its own"


def test_a_released_name_can_be_claimed_again(store):
    assert store.claim("job:1", 60)
    store.release("job:1")
    assert store.claim("job:1", 60)
    assert not store.claim("job:1", 60)


def test_a_claim_lapses_after_its_seconds(store):
    assert store.claim("job:1", 0.001)
    # Waits on the state (the name claimable again), not on a clock: one claim attempt after another.
    assert any(store.claim("job:1", 60) for _ in range(100_000))
    assert not store.claim("job:1", 60)
