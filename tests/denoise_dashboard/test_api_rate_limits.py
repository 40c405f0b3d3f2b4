"""Rate limits per API key (contract: "Serving and limits"): past API_RATE_LIMIT
requests a minute, 429 with an integer Retry-After and nothing stored; each key
its own budget; an address that keeps guessing keys is slowed to 429 as well.
Through the server in-process here; across worker processes in test_limits_across_workers.py."""

import pytest
from rest_framework.test import APIClient

from provenance.models import Node
from tests.provenance.ingest.otlp.test_partial_success import export, span
from tests.support.events import node_event


def client_for(key: str, address: str = "192.0.2.1") -> APIClient:
    client = APIClient(REMOTE_ADDR=address)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def ingest(client: APIClient, product_id: str):
    return client.post("/api/v1/ingest", {"batch": [node_event(product_id, "limited")]}, format="json")


def test_past_the_limit_a_key_gets_429_with_retry_after_and_nothing_is_stored(project_and_key, settings):
    settings.API_RATE_LIMIT = 5
    client = client_for(project_and_key[1])
    assert [ingest(client, f"ok-{i}").status_code for i in range(5)] == [207] * 5

    refused = ingest(client, "refused")
    assert refused.status_code == 429
    assert refused["Retry-After"].isdigit() and 1 <= int(refused["Retry-After"]) <= 60
    assert "rate limit" in refused.json()["error"]
    assert client.get("/api/v1/traces").status_code == 429  # reads count too
    assert not Node.objects.filter(product_id="refused").exists()
    assert Node.objects.filter(trace__trace_id="limited").count() == 5


def test_one_keys_limit_never_slows_another(make_project, settings):
    settings.API_RATE_LIMIT = 3
    busy, quiet = client_for(make_project("busy")[1]), client_for(make_project("quiet")[1])
    for i in range(3):
        ingest(busy, f"b{i}")
    assert ingest(busy, "b-over").status_code == 429
    assert [ingest(quiet, f"q{i}").status_code for i in range(3)] == [207] * 3


def test_a_limit_of_zero_turns_limits_off(project_and_key, settings):
    settings.API_RATE_LIMIT = 0
    client = client_for(project_and_key[1])
    assert {client.get("/api/v1/traces").status_code for _ in range(30)} == {200}


def test_otlp_exports_are_limited_with_an_otlp_status(project_and_key, settings):
    settings.API_RATE_LIMIT = 1
    client = client_for(project_and_key[1])
    first = client.post("/v1/traces", export(span("00000000000000a1")), content_type="application/json")
    second = client.post("/v1/traces", export(span("00000000000000a2")), content_type="application/json")
    assert first.status_code == 200
    assert second.status_code == 429 and second["Retry-After"].isdigit()
    assert second.json()["code"] == 8  # RESOURCE_EXHAUSTED
    assert not Node.objects.filter(product_id="00000000000000a2").exists()


@pytest.mark.django_db
def test_an_address_guessing_keys_is_slowed_to_429(project_and_key, settings):
    settings.API_KEY_FAILURES_PER_ADDRESS = 20
    good = client_for(project_and_key[1], "192.0.2.50")
    assert good.get("/api/v1/traces").status_code == 200  # a key this address has used

    answers = [client_for(f"dd_guess{i}", "192.0.2.50").get("/api/v1/traces").status_code for i in range(40)]
    assert answers[:20] == [401] * 20
    assert set(answers[20:]) == {429}
    refused = client_for("dd_guess-more", "192.0.2.50").get("/api/v1/traces")
    assert int(refused["Retry-After"]) > 0

    assert good.get("/api/v1/traces").status_code == 200  # agents behind the same address go on
    assert client_for("dd_other", "192.0.2.51").get("/api/v1/traces").status_code == 401  # other addresses: 401


@pytest.mark.django_db
def test_requests_without_a_key_always_get_401_and_lock_nobody_out(project_and_key, settings):
    settings.API_KEY_FAILURES_PER_ADDRESS = 5
    anonymous = APIClient(REMOTE_ADDR="192.0.2.60")
    assert {anonymous.get("/api/v1/traces").status_code for _ in range(12)} == {401}
    assert client_for("dd_unknown", "192.0.2.60").get("/api/v1/traces").status_code == 401  # not yet guessing

    for i in range(5):
        client_for(f"dd_guess{i}", "192.0.2.60").get("/api/v1/traces")
    assert client_for("dd_guess-more", "192.0.2.60").get("/api/v1/traces").status_code == 429
    assert anonymous.get("/api/v1/traces").status_code == 401  # the contract's answer to a missing key


@pytest.mark.django_db
def test_a_key_issued_during_a_lockout_works_at_once(make_project, settings):
    settings.API_KEY_FAILURES_PER_ADDRESS = 5
    for i in range(6):
        client_for(f"dd_guess{i}", "192.0.2.70").get("/api/v1/traces")
    assert client_for("dd_guess-more", "192.0.2.70").get("/api/v1/traces").status_code == 429

    _, fresh_key = make_project("fresh")
    assert client_for(fresh_key, "192.0.2.70").get("/api/v1/traces").status_code == 200


@pytest.mark.django_db
def test_a_client_checking_the_401s_of_every_endpoint_keeps_getting_401():
    paths = ["/api/v1/traces", "/api/v1/policy", "/api/v1/datasets", "/api/v1/runs", "/api/v1/project",
             "/api/v1/alert-rules", "/api/v1/alerts", "/api/v1/health/latest", "/api/v1/policy/versions"]
    answers = {client_for("dd_not-a-key", "192.0.2.80").get(path).status_code for path in paths * 4}
    assert answers == {401}
