"""The embedded default (SQLite) answers `GET /api/v1/root-causes` as PostgreSQL does."""

import pytest
from django.db import connection

from tests.provenance import root_cause_corpus as corpus

pytestmark = [pytest.mark.sqlite_smoke, pytest.mark.django_db(transaction=True)]


def test_embedded_default_aggregates_root_causes(api, ingest):
    if connection.vendor != "sqlite":
        pytest.skip("runs on the embedded default only (make test-sqlite)")
    from tests.provenance.test_root_causes_api import END, START

    corpus.load(ingest)
    found = api.get("/api/v1/root-causes", {"start": START, "end": END}).json()
    assert found == corpus.EXPECTED_INCORRECT


def test_embedded_default_filters_by_environment_and_model(api, ingest):
    if connection.vendor != "sqlite":
        pytest.skip("runs on the embedded default only (make test-sqlite)")
    from tests.provenance.test_root_causes_api import END, START

    assert ingest(*corpus.environments_and_models())["errors"] == []
    found = api.get("/api/v1/root-causes", {"start": START, "end": END, "environment": "staging",
                                            "model": "model-a"}).json()
    assert (found["answers"], [c["examples"] for c in found["causes"]]) == (1, [["m-stage-a"]])
    assert api.get("/api/v1/root-causes", {"start": START, "end": END, "model": "model-b"}).json()["answers"] == 1
