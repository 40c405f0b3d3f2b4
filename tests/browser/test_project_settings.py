"""The settings page in Chromium: an admin previews a retention setting, saves
it, and after the job the trace page marks the summarized node."""

import pytest
from django.core.management import call_command

from tenancy.models import Membership
from tests.support.browser import screenshot, sign_in
from tests.support.events import node_event

pytestmark = pytest.mark.browser

LONG = "A retrieved passage that nobody needs in full once it is a week old. " * 6


def test_an_admin_previews_saves_and_sees_the_summary_mark(asgi_live_server, tenant, watched_page):
    page, live_server = watched_page, asgi_live_server
    _, key, user = tenant
    Membership.objects.filter(user=user).update(role="admin")
    live_server.ingest(key, node_event("frag", "t-tier", confidence=0.95, content=LONG),
           node_event("weak", "t-tier", confidence=0.3, content=LONG, seconds=1),
           node_event("answer", "t-tier", confidence=0.9, parents=["frag"], content=LONG, seconds=2,
                      source_type="final_answer"))
    sign_in(page, live_server)
    page.goto(f"{live_server.url}/p/acme/settings/")
    assert page.locator("#retention-runs").count() == 0  # no run yet: the empty state says how to run one
    page.fill("#id_full_content_days", "7")
    page.click("#preview-settings")
    page.wait_for_selector("#retention-preview h2:has-text('With these settings')")
    assert page.locator("#preview-summarized").text_content() == "2"  # frag and answer; weak is low-confidence
    assert page.locator("#preview-deleted").text_content() == "0"
    screenshot(page, "settings.png")

    page.fill("#id_keep_full_below", "1.5")
    page.click("#save-settings")
    page.wait_for_selector(".field-error[data-field='keep_full_below']")
    page.fill("#id_keep_full_below", "0.8")
    page.click("#save-settings")
    page.wait_for_selector(".messages li:has-text('Settings saved')")
    assert page.locator("#id_full_content_days").input_value() == "7"

    call_command("apply_retention", stdout=open("/dev/null", "w"))
    page.reload()
    page.wait_for_selector("#retention-runs tbody tr")
    assert "finished" in page.locator("#retention-runs tbody tr").first.inner_text()

    page.goto(f"{live_server.url}/p/acme/traces/t-tier/?node=frag")
    page.wait_for_selector("#np-badges .badge.summary")
    assert page.locator("#np-tier").is_visible()
    assert page.locator("#np-content").text_content() == LONG[:280]
    page.goto(f"{live_server.url}/p/acme/traces/t-tier/?node=weak")
    page.wait_for_function("() => document.getElementById('np-id').textContent === 'weak'")
    page.wait_for_selector("#np-content:has-text('A retrieved passage')")
    assert page.locator("#np-badges .badge.summary").count() == 0
    assert not page.locator("#np-tier").is_visible()
    screenshot(page, "trace-summary-mark.png")
    assert page.problems == []


def test_a_member_who_is_not_an_admin_sees_but_cannot_change(asgi_live_server, tenant, watched_page):
    page = watched_page
    sign_in(page, asgi_live_server)
    page.goto(f"{asgi_live_server.url}/p/acme/settings/")
    assert page.locator("#id_full_content_days").is_disabled()
    assert page.locator("#save-settings").count() == 0
    assert "You are a viewer in acme; ask an admin to make you an admin." in page.locator(
        "#settings-form .read-only-note").text_content()
    assert page.problems == []
