"""The API keys page in Chromium: an admin creates an ingest-only key (shown
once, copied with the button, working at once within its scope), rotates it
with a grace (the old secret keeps working), then revokes the new one (401 on
its next request)."""

import os
import subprocess
import sys

import httpx
import pytest

from provenance.models import Node
from tenancy.models import ApiKey, Membership, Role
from tests.support.browser import screenshot, sign_in
from tests.support.events import node_event

pytestmark = pytest.mark.browser


def answer(server, raw: str, method: str = "GET", path: str = "/api/v1/policy", **kwargs) -> int:
    return httpx.request(method, f"{server.url}{path}", headers={"Authorization": f"Bearer {raw}"}, timeout=30,
                         **kwargs).status_code


def test_an_admin_creates_copies_rotates_and_revokes_a_key(asgi_live_server, tenant, watched_page):
    page, server = watched_page, asgi_live_server
    project, _, user = tenant
    Membership.objects.filter(project=project, user=user).update(role=Role.ADMIN)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
    sign_in(page, server)

    page.goto(f"{server.url}/p/acme/settings/")
    page.click("#settings-api-keys")
    page.wait_for_selector("#create-key-form")
    page.fill("#key-name", "support-agent")
    assert page.locator("input[name=scopes][value=ingest]").is_checked()
    page.click("#create-key-button")
    page.wait_for_selector("#issued-secret")
    raw = page.locator("#issued-secret").text_content()
    assert raw.startswith("dd_") and f'api_key="{raw}"' in page.locator("#sdk-snippet").text_content()
    screenshot(page, "api-keys.png")

    page.click("#copy-key")
    page.wait_for_selector("#copy-key:has-text('Copied')")
    assert page.evaluate("navigator.clipboard.readText()") == raw
    assert answer(server, raw, "POST", "/api/v1/ingest", json={"batch": [node_event("p1")]}) == 207
    # The snippet, run as an agent would run it, records through the new key.
    snippet = page.locator("#sdk-snippet").text_content()
    ran = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True, timeout=120,
                         env={k: v for k, v in os.environ.items() if not k.startswith("DENOISE_")})
    assert ran.returncode == 0, ran.stderr
    assert Node.objects.filter(project=project, trace__trace_id="ticket-42", agent_id="my_agent").count() == 1
    assert answer(server, raw, path="/api/v1/traces") == 403  # ingest only

    page.goto(f"{server.url}/p/acme/settings/keys/")
    page.wait_for_selector("#key-table")
    assert raw not in page.content()  # shown once
    old = ApiKey.objects.get(project=project, name="support-agent")
    row = page.locator(f"tr[data-key-id='{old.pk}']")
    assert "ingest" in row.locator(".key-scopes").inner_text()
    row.locator(".rotate summary").click()
    row.locator("select[name=grace_seconds]").select_option("3600")
    row.locator(".rotate button[type=submit]").click()
    page.wait_for_selector("#rotated-note:has-text('after 1 hour')")
    new_raw = page.locator("#issued-secret").text_content()
    assert new_raw != raw and answer(server, new_raw) == 200
    assert answer(server, raw) == 200  # within its grace

    new = ApiKey.objects.get(project=project, name="support-agent", expires_at__isnull=True)
    page.goto(f"{server.url}/p/acme/settings/keys/")
    row = page.locator(f"tr[data-key-id='{new.pk}']")
    row.locator(".revoke summary").click()
    row.locator(".revoke button[type=submit]").click()
    page.wait_for_selector(".messages li:has-text('is revoked')")
    assert "revoked" in page.locator(f"tr[data-key-id='{new.pk}'] .key-status").inner_text()
    assert answer(server, new_raw) == 401
    assert page.problems == []


def test_a_viewer_reads_the_list_and_is_told_why_it_cannot_change_it(asgi_live_server, tenant, watched_page):
    page, server = watched_page, asgi_live_server
    sign_in(page, server)
    page.goto(f"{server.url}/p/acme/settings/keys/")
    page.wait_for_selector("#keys-read-only")
    assert "your role here is viewer" in page.locator("#keys-read-only").inner_text()
    assert page.locator("#create-key-form").count() == 0 and page.locator(".revoke").count() == 0
    assert page.problems == []
