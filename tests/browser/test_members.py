"""Members in Chromium: an admin invites a colleague as an editor and copies
the link; the colleague opens it in a browser of their own, sets a password
and lands in the project as an editor; the admin makes them a viewer and
removes them; the last admin cannot be removed."""

import pytest

from tests.support.accounts import person
from tests.support.browser import screenshot, sign_in

pytestmark = pytest.mark.browser


@pytest.fixture
def tenant_role():
    return "admin"


def member_row(page, username):
    return page.locator(f'#members tr[data-member="{username}"]')


def test_invite_join_change_role_remove_and_keep_the_last_admin(asgi_live_server, tenant, watched_page, browser):
    page, server = watched_page, asgi_live_server
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
    sign_in(page, server)
    page.goto(f"{server.url}/p/acme/settings/")
    page.click("#members-link")
    page.select_option("#id_role", "editor")
    page.click("#create-invite")
    page.click("#copy-invite-link")
    page.wait_for_selector("#copy-status:has-text('Copied')")
    link = page.evaluate("() => navigator.clipboard.readText()")
    assert link == page.input_value("#invite-link") and link.startswith(f"{server.url}/invite/")
    screenshot(page, "members-invitation.png")

    newcomer = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
    try:
        newcomer.goto(link)
        assert newcomer.locator("#invite-role").text_content() == "editor"
        newcomer.fill("#id_username", "nina")
        newcomer.fill("#id_password1", "a-long-pass-phrase")
        newcomer.fill("#id_password2", "a-long-pass-phrase")
        newcomer.click("#accept-invite")
        newcomer.wait_for_url(f"{server.url}/p/acme/traces/")
        assert "you are an editor here" in newcomer.locator(".messages").text_content()
    finally:
        newcomer.context.close()

    page.goto(f"{server.url}/p/acme/settings/members/")
    nina = member_row(page, "nina")
    assert nina.locator("select").input_value() == "editor"
    nina.locator("select").select_option("viewer")
    nina.get_by_role("button", name="Change role").click()
    page.wait_for_selector(".messages li:has-text('nina is now a viewer.')")
    assert member_row(page, "nina").locator("select").input_value() == "viewer"

    member_row(page, "nina").get_by_role("button", name="Remove").click()
    page.wait_for_selector(".messages li:has-text('nina was removed from acme.')")
    assert member_row(page, "nina").count() == 0

    member_row(page, "mia").get_by_role("button", name="Remove").click()
    page.wait_for_selector(".messages li:has-text('mia is the last admin of acme')")
    assert member_row(page, "mia").locator("select").input_value() == "admin"
    screenshot(page, "members-page.png")
    assert page.problems == []


def test_a_viewer_sees_why_the_policy_form_is_read_only(asgi_live_server, tenant, watched_page):
    page, server = watched_page, asgi_live_server
    project, _, _ = tenant
    person(project, "viewer", "vic", "pw-vic-12345")
    sign_in(page, server, "vic", "pw-vic-12345")
    page.goto(f"{server.url}/policy/acme/")
    note = page.locator("#policy-form .read-only-note")
    assert note.text_content() == ("Read-only: changing this needs an editor. "
                                   "You are a viewer in acme; ask an admin to make you an editor.")
    assert note.is_visible() and page.locator("#save-policy").is_disabled()
    screenshot(page, "read-only-policy.png")
    assert page.problems == []
