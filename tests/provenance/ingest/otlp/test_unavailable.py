"""While the database is unreachable, an export answers 503 with Retry-After, a
status OTLP exporters retry; the retried export is then stored once."""

from contextlib import contextmanager

import pytest
from django.db import connection

from tests.denoiseflow.servers import closed_port
from tests.provenance.ingest.otlp.test_partial_success import TRACE, export, span

pytestmark = pytest.mark.usefixtures("transactional_db")


@contextmanager
def database_down():
    """The database server goes away: its port refuses connections. With a
    connection pool configured, the pool is rebuilt against the dead port and
    gives up after a second instead of its usual wait."""
    settings = connection.settings_dict
    original_port, original_options = settings["PORT"], settings["OPTIONS"]
    pooled = isinstance(original_options.get("pool"), dict)
    reset(pooled)
    settings["PORT"] = closed_port()
    if pooled:
        settings["OPTIONS"] = {**original_options, "pool": {**original_options["pool"], "timeout": 1}}
    try:
        yield
    finally:
        settings["PORT"], settings["OPTIONS"] = original_port, original_options
        reset(pooled)


def reset(pooled: bool):
    connection.close()
    if pooled:
        connection.close_pool()


def test_an_export_while_the_database_is_down_is_503_with_retry_after(otlp_post):
    with database_down():
        response = otlp_post(export(span("00000000000000f1")))

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json()["code"] == 14  # UNAVAILABLE
    assert "database is unavailable" in response.json()["message"]


def test_the_retried_export_is_stored_once_the_database_is_back(otlp_post, api):
    body = export(span("00000000000000f1"))
    with database_down():
        assert otlp_post(body).status_code == 503
    assert otlp_post(body).status_code == 200
    assert otlp_post(body).status_code == 200
    assert api.get(f"/api/v1/traces/{TRACE}").json()["node_count"] == 1
