"""The Audit log page in Chromium: an admin changes a setting on the settings
page, follows the link to the log, reads the change as a before/after table,
filters by action, and nothing an agent named runs as script (CSP-clean)."""

import httpx
import pytest

from tests.support.browser import screenshot, sign_in

pytestmark = pytest.mark.browser

HOSTILE = "<img src=x onerror=alert(1)>"


def test_an_admin_reads_and_filters_the_log(asgi_live_server, tenant, watched_page):
    page, live_server = watched_page, asgi_live_server
    _, key, user = tenant
    user.is_staff = True
    user.save()
    created = httpx.post(f"{live_server.url}/api/v1/alert-rules", headers={"Authorization": f"Bearer {key}"},
                         json={"name": HOSTILE, "conditions": [
                             {"metric": "fuse_rate", "window": "5m", "op": ">", "threshold": 0.2}]}, timeout=30)
    assert created.status_code == 201, created.text
    sign_in(page, live_server)

    page.goto(f"{live_server.url}/p/acme/settings/")
    page.fill("#id_trace_days", "90")
    page.click("#save-settings")
    page.wait_for_selector(".messages li:has-text('Settings saved')")
    page.click("#audit-log-link")
    page.wait_for_selector("#audit-table tbody tr[data-action='project.update']")

    rows = page.locator("#audit-table > tbody > tr")
    assert rows.count() == 2
    newest = rows.first
    assert "user:mia" in newest.locator(".audit-actor").inner_text()
    change = newest.locator("table.changes tbody tr")
    assert change.count() == 1
    assert [change.locator("td").nth(i).inner_text() for i in range(3)] == ["retention.trace_days", "—", "90"]
    oldest = rows.nth(1)
    assert HOSTILE in oldest.locator(".audit-object").inner_text()  # shown as text, never as an element
    assert page.locator("#audit-table img").count() == 0
    screenshot(page, "audit-log.png")

    page.select_option("#filter-action", "alert_rule.create")
    page.click("#audit-filters button[type=submit]")
    page.wait_for_selector("#audit-table tbody tr[data-action='alert_rule.create']")
    assert page.locator("#audit-table > tbody > tr").count() == 1
    assert "key:" in page.locator("#audit-table .audit-actor").inner_text()

    page.fill("#filter-since", "soon")
    page.click("#audit-filters button[type=submit]")
    page.wait_for_selector(".field-error[data-field='since']")
    assert page.problems == []
