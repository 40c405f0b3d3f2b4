"""The "Why answers go wrong" page in Chromium: the ranked causes with their
shares, a cause's most common path and who passed its error on, and a click
through to an example trace opened with that path highlighted."""

import pytest

from tests.provenance import root_cause_corpus as corpus
from tests.provenance.test_root_causes_api import END, START
from tests.support.browser import sign_in

pytestmark = pytest.mark.browser


def test_ranked_causes_a_path_and_a_click_through_to_the_highlighted_trace(asgi_live_server, tenant, watched_page):
    page = watched_page
    _, key, _ = tenant
    for batch in (corpus.first_batch(), corpus.second_batch()):
        asgi_live_server.ingest(key, *batch)
    sign_in(page, asgi_live_server)
    page.goto(f"{asgi_live_server.url}/p/acme/why/?start={START}&end={END}")
    assert page.locator("#why-answers").inner_text() == "7"
    assert page.locator("#why-unexplained").inner_text() == "1"
    rows = page.locator("#why-causes tbody tr")
    ranked = [(r.get_attribute("data-agent"), r.get_attribute("data-reason"), r.get_attribute("data-count"),
               r.locator(".share-value").inner_text()) for r in rows.all()]
    assert ranked == [("retriever", "fused", "2", "28.6%"), ("retriever", "low_confidence", "2", "28.6%"),
                      ("tooler", "error", "1", "14.3%"), ("verifier", "low_confidence", "1", "14.3%")]
    page.wait_for_selector("#why-trend[data-drawn='1']")

    fused = page.locator(".why-cause[data-agent='retriever'][data-reason='fused']")
    [path] = fused.locator(".path-row").all()
    assert path.locator(".path").inner_text() == "retriever → reasoner → summarizer"
    assert path.locator(".num").inner_text() == "2"
    passed = {li.get_attribute("data-agent"): li.locator(".count").inner_text()
              for li in fused.locator(".passed-on li").all()}
    assert passed == {"reasoner": "2", "summarizer": "2", "verifier": "1"}

    path.locator("a.example").click()
    page.wait_for_url("**/traces/t-shared/?analyze=s-final")
    page.wait_for_function("() => (document.getElementById('dag').data || []).some((t) => t.name === 'root-causes')")
    assert page.locator("#np-cause-path").text_content() == "path: s-frag → s-a → s-final"
    assert "s-frag" in page.locator("#np-cause-list").inner_text()
    assert page.problems == []


def test_bad_choices_show_only_what_is_wrong(asgi_live_server, tenant, watched_page):
    page = watched_page
    sign_in(page, asgi_live_server)
    response = page.goto(f"{asgi_live_server.url}/p/acme/why/?range=1y&answers=maybe")
    assert response.status == 400
    errors = page.locator("#why-errors").inner_text()
    assert "range" in errors and "answers" in errors
    assert page.locator("#why-causes").count() == 0
    # The browser reports the page's own 400 status; nothing else went wrong.
    assert [p for p in page.problems if "status of 400" not in p] == []


def test_the_form_filters_by_environment_and_the_answers_model(asgi_live_server, tenant, watched_page):
    page = watched_page
    _, key, _ = tenant
    asgi_live_server.ingest(key, *corpus.environments_and_models())
    sign_in(page, asgi_live_server)
    page.goto(f"{asgi_live_server.url}/p/acme/why/?start={START}&end={END}")

    def shown():
        return (page.locator("#why-answers").inner_text(),
                [r.get_attribute("data-agent") for r in page.locator("#why-causes tbody tr").all()])

    assert shown() == ("2", ["reasoner", "retriever"])
    page.fill("#why-filters input[name='environment']", "staging")
    page.click("#why-filters button[type='submit']")
    page.wait_for_url("**environment=staging**")
    assert shown() == ("1", ["retriever"])
    page.fill("#why-filters input[name='environment']", "")
    page.fill("#why-filters input[name='model']", "model-b")
    page.click("#why-filters button[type='submit']")
    page.wait_for_url("**model=model-b**")
    assert shown() == ("1", ["reasoner"])
