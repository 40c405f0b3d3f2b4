"""Driving Debian's Chromium through Playwright: how it is launched, signing a
page in (with a test client's session, or through the login form), screenshots."""

from pathlib import Path

from django.conf import settings as django_settings
from django.test import Client

from tests.support.accounts import MEMBER_PASSWORD, MEMBER_USERNAME

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "screenshots"

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
]


def signed_in(page, live_server, member: Client) -> list[str]:
    """Gives `page` the session of the `member` client; returns the list that
    collects the page's console errors and uncaught exceptions from then on."""
    cookie = django_settings.SESSION_COOKIE_NAME
    page.context.add_cookies([{"name": cookie, "value": member.cookies[cookie].value, "url": live_server.url}])
    problems = []
    page.on("console", lambda message: problems.append(message.text)
            if message.type == "error" and not message.location.get("url", "").endswith("/favicon.ico") else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    return problems


def sign_in(page, server, username: str = MEMBER_USERNAME, password: str = MEMBER_PASSWORD) -> None:
    """Through the login form, as a person would."""
    page.goto(f"{server.url}/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{server.url}/p/**")


# A long page is shown down to three screens: enough to see it, not megabytes of rows.
FULL_PAGE_HEIGHT = 2700


def screenshot(page, name: str, full_page: bool = False) -> Path:
    """The viewport (1440×900), or with `full_page` the page down to FULL_PAGE_HEIGHT."""
    path = SCREENSHOTS / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if full_page:
        width, height = page.evaluate("() => [document.documentElement.clientWidth,"
                                      " document.documentElement.scrollHeight]")
        clip = {"x": 0, "y": 0, "width": width, "height": min(height, FULL_PAGE_HEIGHT)}
        page.screenshot(path=str(path), full_page=True, clip=clip)
    else:
        page.screenshot(path=str(path))
    return path
