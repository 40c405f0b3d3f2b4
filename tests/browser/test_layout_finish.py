"""The layout list of issue 27, each as a person sees it in Chromium at 1440×900:
nothing clipped (an element's scroll width within its client width), forms in
the product's style, labels and dates that read right, the API pages inside the
product's frame, a favicon, and form errors in people's words."""

import httpx
import pytest

from tests.evals.conftest import dataset, run  # noqa: F401  (fixtures)
from tests.support.browser import sign_in, signed_in
from tests.support.events import node_event

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def member_role():
    """Some of these pages' forms are used (an import, a policy save): an editor may."""
    return "editor"


@pytest.fixture
def tenant_role():
    return "editor"

CLIPPED = "(el) => el.scrollWidth > el.clientWidth + 1"


@pytest.fixture
def signed(asgi_live_server, tenant, watched_page):
    sign_in(watched_page, asgi_live_server)
    return watched_page, asgi_live_server, tenant


@pytest.fixture
def signed_member(asgi_live_server, member, watched_page):
    """Signed in as the `project` fixture's member (the project the evals fixtures write to)."""
    signed_in(watched_page, asgi_live_server, member)
    return watched_page, asgi_live_server


def assert_nothing_clipped(locator):
    for element in locator.all():
        assert not element.evaluate(CLIPPED), element.inner_text()


def test_truth_sets_show_the_latest_run_whole(signed_member, dataset, run):  # noqa: F811
    page, server = signed_member
    dataset("ticket-stats", [{"id": "q-1", "input": "how many?", "expected": 10}])
    made = run("ticket-stats", {"q-1": 10}, name="prompt-v2")
    page.goto(f"{server.url}/p/acme/datasets/")
    cell = page.locator("#datasets td.latest-run").first
    assert cell.inner_text().startswith(f"prompt-v2 #{made['id']} 20")
    assert_nothing_clipped(page.locator("table.data td, table.data th"))
    assert page.problems == []


def test_the_import_form_and_the_add_to_truth_set_form_are_styled(signed_member, ingest, dataset):  # noqa: F811
    page, server = signed_member
    dataset("ticket-stats")
    page.goto(f"{server.url}/p/acme/datasets/ticket-stats/")
    toggle = page.locator("#import-form label.toggle")
    box, checkbox = toggle.bounding_box(), toggle.locator("input").bounding_box()
    assert box["height"] <= 40 and checkbox["x"] < box["x"] + 20  # the box sits on the pill's line, first
    toggle.click()
    assert toggle.locator("input").is_checked()

    ingest(node_event("q", "t-form", source_type="user_input", content="How many tickets?"),
           node_event("a", "t-form", parents=["q"], source_type="final_answer", content="42", seconds=1))
    page.goto(f"{server.url}/p/acme/traces/t-form/")
    page.locator("#add-to-truth-set summary").click()
    form = page.locator("#truth-form")
    assert form.evaluate("(f) => getComputedStyle(f).display") == "grid"
    for field in form.locator("input:not([type=hidden]), select").all():
        assert field.evaluate("(f) => getComputedStyle(f).borderRadius") == "6px"
    submit = page.locator("#truth-submit")
    assert not submit.evaluate(CLIPPED) and submit.bounding_box()["height"] <= 40
    assert page.problems == []


def test_calibration_labels_read_from_their_start(signed):
    page, server, _ = signed
    page.goto(f"{server.url}/metrics/acme/calibration/")
    page.wait_for_selector("#metrics-root[data-state=ready]")
    labels = page.locator("#calibration-cards .metric-card .name").all_inner_texts()
    assert labels and not any(label.startswith(("…", "...")) for label in labels), labels
    assert page.problems == []


def test_policy_history_stands_apart_and_the_built_in_version_has_no_date(signed):
    page, server, _ = signed
    page.goto(f"{server.url}/policy/acme/")
    page.click("#save-policy")
    page.wait_for_selector(".messages li:has-text('Saved as version')")
    table = page.locator("#policy-history").bounding_box()
    heading = page.locator("h2#diff").bounding_box()
    assert heading["y"] - (table["y"] + table["height"]) >= 16
    built_in = page.locator("#policy-history tr[data-version='0'] td").nth(1)
    assert built_in.inner_text() == "built in"
    assert page.problems == []


def test_the_api_pages_keep_the_frame_and_read_as_text(signed):
    page, server, _ = signed
    page.goto(f"{server.url}/api/v1/")
    description = page.locator(".content-main .pull-left").first.inner_text()
    assert "`" not in description and "Where to start" in description

    page.goto(f"{server.url}/api/v1/docs")
    page.wait_for_selector(".swagger-ui .opblock")
    assert page.locator(".main-nav a").count() >= 5
    switcher = page.locator("#project-switcher")
    assert switcher.evaluate("(s) => s.options[s.selectedIndex].text") != "Choose…"
    icon = page.locator("link[rel=icon]").get_attribute("href")
    answer = httpx.get(server.url + icon)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("image/svg+xml")
    assert page.problems == []


def test_settings_errors_speak_the_forms_words_and_an_invalid_value_previews_nothing(signed):
    page, server, (_, _, user) = signed
    user.is_staff = True
    user.save()
    page.goto(f"{server.url}/p/acme/settings/")
    page.fill("#id_trace_days", "0")
    page.click("#preview-settings")
    error = page.locator(".field-error[data-field='trace_days']")
    assert "null" not in error.inner_text() and "empty" in error.inner_text()
    assert page.locator("#preview-invalid").is_visible()
    assert page.locator("#retention-preview h2").inner_text().startswith("With the saved settings")
    assert page.problems == []
