"""The SDK's policy client against a live dashboard: fetched, refreshed with
ETag, kept through an outage, and a threshold changed on the server changing
the SDK's decisions within one refresh."""

import threading

import pytest

import denoiseflow as df
from denoiseflow import ConfidenceFuse, PolicyClient
from tests.denoiseflow.servers import BlackHole, StandIn, Switch, closed_port, forward, wait_until

DEFAULT = {"accept": 0.8, "block": 0.5, "by_agent_type": {}, "by_step": {}, "max_rounds": 5, "max_retries": 2,
           "escalate_after": 3}


def put(api, note="", **changes):
    response = api.put("/api/v1/policy", {"profiles": {"default": {**DEFAULT, **changes}}, "note": note},
                       format="json")
    assert response.status_code == 200, response.content
    return response.json()["version"]


@pytest.fixture
def clients():
    made = []

    def make(url, key, **options) -> PolicyClient:
        options.setdefault("refresh_interval", 0.05)
        client = PolicyClient(url, key, **options)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


def test_the_policy_is_fetched_and_refreshed_with_its_etag(live_server, project_and_key, api, clients):
    put(api, "retrieval stricter", by_agent_type={"retrieval": {"accept": 0.9, "block": 0.6}})
    with Switch(live_server.url) as proxy:
        client = clients(proxy.url, project_and_key[1])
        current = client.get()
        assert (current.version, current.source) == (1, "server")
        assert current.thresholds("retrieval_agent_v2") == (0.9, 0.6, "by_agent_type:retrieval")
        assert wait_until(lambda: client.counts["not_modified"] >= 2)
        assert proxy.seen[-1] == ("/api/v1/policy", current.etag)

        put(api, "looser", block=0.4)
        assert wait_until(lambda: client.get().version == 2)
        assert client.get().profile()["block"] == 0.4


def test_a_threshold_changed_on_the_server_changes_decisions_within_a_refresh(live_server, project_and_key, api,
                                                                              clients):
    client = clients(live_server.url, project_and_key[1])
    fuse = ConfidenceFuse.from_policy(client=client)
    verdict = fuse.decide(0.6, agent_type="reasoning")
    assert (verdict.decision, verdict.policy_version) == ("downweight", 0)

    version = put(api, "block 0.7", block=0.7)
    assert wait_until(lambda: fuse.decide(0.6).blocked)
    verdict = fuse.decide(0.6)
    assert (verdict.reason_code, verdict.policy_version, verdict.threshold) == ("below_block", version, 0.7)
    assert verdict.as_fuse()["policy_version"] == version


def test_the_last_good_copy_is_kept_through_an_outage(live_server, project_and_key, api, clients):
    put(api, block=0.65)
    with Switch(live_server.url) as proxy:
        client = clients(proxy.url, project_and_key[1])
        assert client.get().version == 1
        proxy.up = False
        failed = client.counts["failed"]
        assert wait_until(lambda: client.counts["failed"] >= failed + 2)
        assert (client.get().version, client.get().profile()["block"]) == (1, 0.65)
        assert ConfidenceFuse.from_policy(client=client).decide(0.6).blocked

        put(api, block=0.3)
        proxy.up = True
        assert wait_until(lambda: client.get().version == 2)


def test_without_a_dashboard_the_built_in_defaults_decide(clients):
    client = clients(f"http://127.0.0.1:{closed_port()}", "dd_none", timeout=1)
    policy = client.get()
    assert (policy.version, policy.source) == (None, "builtin")
    verdict = ConfidenceFuse.from_policy(client=client).decide(0.45)
    assert (verdict.decision, verdict.policy_version) == ("block", None)
    assert "policy_version" not in verdict.as_fuse()


def test_a_refused_key_keeps_the_defaults(live_server, clients):
    client = clients(live_server.url, "dd_wrong")
    assert client.get().version is None
    assert client.counts["failed"] >= 1


def test_profiles_and_steps_resolve_from_the_policy(live_server, project_and_key, api, clients):
    response = api.put("/api/v1/policy", {"profiles": {
        "default": {**DEFAULT, "by_step": {"refund": {"accept": 0.95, "block": 0.9}}},
        "lenient": {**DEFAULT, "accept": 0.5, "block": 0.2}}}, format="json")
    assert response.status_code == 200
    client = clients(live_server.url, project_and_key[1])
    assert ConfidenceFuse.from_policy(client=client).decide(0.85, step="refund").blocked
    assert ConfidenceFuse.from_policy(client=client).decide(0.85, step="refund").reason == (
        "confidence below the block threshold (step refund)")
    assert ConfidenceFuse.from_policy("lenient", client=client).decide(0.3).decision == "downweight"
    assert ConfidenceFuse.from_policy("missing", client=client).decide(0.3).blocked


def answered_without_waiting(ask) -> dict:
    """Runs `ask` in a thread and returns what it gave; fails if it is still
    waiting long after the first fetch's bound (a second)."""
    got, done = {}, threading.Event()
    threading.Thread(target=lambda: (got.update(ask()), done.set()), daemon=True).start()
    assert done.wait(30), "the agent waited for the dashboard's answer"
    return got


def test_a_dashboard_that_never_answers_does_not_hold_up_the_first_policy(clients):
    with BlackHole() as hole:
        # A fetch that would wait a minute: the agent must not wait with it.
        client = clients(hole.url, "key", timeout=60)
        got = answered_without_waiting(lambda: {"policy": client.get(),
                                                "verdict": ConfidenceFuse.from_policy(client=client).decide(0.6)})
        assert (got["policy"].source, got["policy"].version) == ("builtin", None)
        assert got["verdict"].policy_version is None and got["verdict"].decision == "downweight"

        module_level = answered_without_waiting(lambda: {"policy": df.policy(hole.url, "other-key", timeout=60)})
        assert module_level["policy"].source == "builtin"
        df.policy_client(hole.url, "other-key").close()


class HeldPolicy(StandIn):
    """Passes policy reads to the dashboard once `release` is set."""

    def __init__(self, target: str):
        self.target, self.release = target, threading.Event()
        super().__init__()

    def answer(self, method, path, body, headers):
        self.release.wait(60)
        status, answered, payload = forward(self.target + path, "GET", None, headers, ("Authorization",))
        return status, {"ETag": answered.get("ETag", "")}, payload


def test_the_defaults_decide_until_a_slow_first_answer_arrives(live_server, project_and_key, api, clients):
    put(api, "block 0.7", block=0.7)
    with HeldPolicy(live_server.url) as held:
        client = clients(held.url, project_and_key[1], refresh_interval=60, timeout=60)
        fuse = ConfidenceFuse.from_policy(client=client)
        got = answered_without_waiting(lambda: {"verdict": fuse.decide(0.6)})
        assert (got["verdict"].decision, got["verdict"].policy_version) == ("downweight", None)

        held.release.set()
        assert wait_until(lambda: client.get().version == 1)
        assert fuse.decide(0.6).blocked and fuse.decide(0.6).policy_version == 1
