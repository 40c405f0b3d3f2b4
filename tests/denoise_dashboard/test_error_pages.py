"""An unknown address or a failing page answers in the product's own frame,
with DEBUG off: the 404 with the navigation of the project the address is under
(when the reader may see it), the 500 without touching the database or the
request; API paths keep their JSON errors."""

import pytest
from django.test import Client, RequestFactory

from denoise_dashboard import outage


def test_an_unknown_page_of_a_project_has_that_projects_navigation(member, settings):
    assert settings.DEBUG is False
    response = member.get("/p/acme/no-such-page/")
    assert response.status_code == 404
    page = response.content.decode()
    assert "Page not found" in page and "<code>/p/acme/no-such-page/</code>" in page
    assert 'class="main-nav"' in page and 'href="/metrics/acme/"' in page
    assert 'href="/p/acme/traces/"' in page
    assert "/static/css/app." in page  # hashed once collected
    assert "Content-Security-Policy" in response.headers


def test_a_project_one_may_not_see_gives_no_navigation(member, make_project):
    make_project("globex")
    page = member.get("/p/globex/traces/").content.decode()
    assert "Page not found" in page
    assert 'class="main-nav"' not in page and "globex" not in page.replace("/p/globex/traces/", "")


def test_a_signed_out_reader_gets_the_styled_page_too(db):
    response = Client().get("/nothing-here/")
    assert response.status_code == 404
    assert "Page not found" in response.content.decode() and 'class="topbar"' in response.content.decode()


def test_the_api_keeps_its_json_404(db):
    response = Client().get("/api/v1/nothing-here")
    assert response.status_code == 404 and response["Content-Type"] == "application/json"


@pytest.mark.urls("tests.denoise_dashboard.failing_urls")
def test_a_failing_page_gets_the_styled_500(member):
    member.raise_request_exception = False
    response = member.get("/broken/")
    assert response.status_code == 500
    page = response.content.decode()
    assert "Something went wrong" in page and 'class="topbar"' in page and "/static/css/app." in page
    assert "Content-Security-Policy" in response.headers
    api = member.get("/api/v1/broken")
    assert api.status_code == 500 and api.json() == {"error": "internal server error"}


def test_the_500_page_needs_neither_the_database_nor_the_request():
    # A bare request (no session, no user, no resolver match), in a test that
    # pytest-django gives no database: any query would fail it.
    response = outage.server_error(RequestFactory().get("/p/acme/traces/"))
    assert response.status_code == 500
    assert "Something went wrong" in response.content.decode()
