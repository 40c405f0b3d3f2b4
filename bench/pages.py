#!/usr/bin/env python
"""Every page of the product in Chromium: first visit (cold cache) and warm
timings, with the bytes transferred, against `manage.py serve`.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/x .venv/bin/python bench/pages.py [--warm 3] \
        [--database A_DEMO_DATABASE] [--only PATH_TEXT]

1. A scratch database (`denoise_bench_pages_<pid>` on the server of
   DATABASE_URL), migrated, with the demo loaded (`load_demo`, about 20 s).
2. `collectstatic` into STATIC_ROOT, then `manage.py serve` on a free port
   over the database, as `make run` serves.
3. The page list comes from the URL resolver: every pattern outside the admin
   and the API (plus the API's root and its docs), its arguments filled from the
   demo (project, truth set, a trace, an alert rule, an evaluation run); those
   whose GET does not answer an HTML 200 (actions, exports, JSON) are left out.
4. Each page, signed in as the demo user, in a fresh browser context (empty
   cache: a first visit), then `--warm` times again in the same context.
   "Ready" is when the page's charts are drawn (the marker its script sets),
   else the load event; measured by the page's own clock from navigation start.
   Bytes are the transfer sizes of the document and every resource and fetch
   (cached ones count 0), as Resource Timing reports them.

Goal (issue 27): every page ready in under 1 s warm and 1.5 s on a first visit.
"""

import argparse
import io
import os
import statistics
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHROMIUM = "/usr/bin/chromium"
COLD_TARGET_MS, WARM_TARGET_MS = 1500, 1000

# What shows a page is drawn, by URL name; the rest are drawn at `load`.
READY = {
    **{name: "#metrics-root[data-state=ready]" for name in
       ("overview", "fuses", "uncertainty", "drift", "cost", "calibration")},
    "trace-detail": "#dag[data-drawn]",
    "dataset-runs": "#runs-chart .main-svg",
    "health": "#health-trend .main-svg",
    "api-docs": ".swagger-ui .opblock",
}
# Resources, fetches included, and the document: what the page cost on the wire.
BYTES_JS = """() => performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))
    .reduce((sum, entry) => sum + (entry.transferSize || 0), 0)"""


def patterns(resolver=None, prefix: str = ""):
    """(route, name) of every view the resolver reaches."""
    from django.urls import get_resolver
    from django.urls.resolvers import URLResolver

    for pattern in (resolver or get_resolver()).url_patterns:
        if isinstance(pattern, URLResolver):
            yield from patterns(pattern, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern), pattern.name


def demo_arguments() -> dict[str, str]:
    from alerts.models import AlertRule
    from evals.models import Run
    from tenancy.models import Project

    project = Project.objects.get(slug="demo")
    return {
        "slug": "demo", "name": "ticket-triage", "trace_id": "demo-bad-answer",
        "rule_id": str(AlertRule.objects.filter(project=project).order_by("id").values_list("id", flat=True)[0]),
        "run_id": str(Run.objects.filter(project=project).order_by("id").values_list("id", flat=True)[0]),
    }


def page_paths(arguments: dict[str, str]) -> list[tuple[str, str]]:
    """(name, path) of the pages, in resolver order."""
    import re

    found = [("api-root", "/api/v1/"), ("api-docs", "/api/v1/docs")]
    for route, name in patterns():
        if route.startswith(("admin/", "api/")) or route in {"logout/", "login/"}:
            continue
        missing = [key for key in re.findall(r"<(?:\w+:)?(\w+)>", route) if key not in arguments]
        if missing:
            continue
        path = "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: arguments[m.group(1)], route)
        found.append((name or path, path))
    return found


def html_pages(server, candidates):
    """Those that answer a signed-in GET with an HTML 200."""
    from tests.support.serving import signed_in

    client = signed_in(server.url, "demo", "demo")
    try:
        for name, path in candidates:
            answer = client.get(server.url + path, headers={"Accept": "text/html"}, timeout=60)
            if answer.status_code == 200 and answer.headers.get("content-type", "").startswith("text/html"):
                yield name, path
    finally:
        client.close()


def visit(page, url: str, ready: str | None) -> tuple[float, int]:
    page.goto(url, wait_until="load")
    if ready:
        page.wait_for_selector(ready, state="attached", timeout=60_000)
        drawn = page.evaluate("() => performance.now()")
    else:
        drawn = page.evaluate("() => performance.getEntriesByType('navigation')[0].loadEventEnd")
    return drawn, page.evaluate(BYTES_JS)


def measure(server, pages, warm_runs: int) -> list[dict]:
    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        login = browser.new_context()
        signin = login.new_page()
        signin.goto(f"{server.url}/login/")
        signin.fill("#id_username", "demo")
        signin.fill("#id_password", "demo")
        signin.click("button[type=submit]")
        signin.wait_for_url(f"{server.url}/p/**")
        cookies = login.cookies()
        login.close()
        # The server's first request of each page (imports, connections) is not a visitor's.
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        context.add_cookies(cookies)
        primer = context.new_page()
        for _, path in pages:
            primer.goto(server.url + path)
        context.close()
        for name, path in pages:
            print(f"  {path}", file=sys.stderr, flush=True)
            context = browser.new_context(viewport={"width": 1440, "height": 900})
            context.add_cookies(cookies)
            page = context.new_page()
            page.on("dialog", lambda dialog: dialog.accept())
            cold_ms, cold_bytes = visit(page, server.url + path, READY.get(name))
            warm = [visit(page, server.url + path, READY.get(name)) for _ in range(warm_runs)]
            context.close()
            rows.append({"name": name, "path": path, "cold_ms": cold_ms, "cold_bytes": cold_bytes,
                         "warm_ms": statistics.median(ms for ms, _ in warm),
                         "warm_bytes": statistics.median(size for _, size in warm)})
        browser.close()
    return rows


def report(rows: list[dict]) -> None:
    print(f"{'page':<34} {'first ms':>9} {'first KB':>9} {'warm ms':>8} {'warm KB':>8}")
    for row in rows:
        flag = " *" if row["cold_ms"] > COLD_TARGET_MS or row["warm_ms"] > WARM_TARGET_MS else ""
        print(f"{row['path']:<34} {row['cold_ms']:>9.0f} {row['cold_bytes'] / 1024:>9.0f} "
              f"{row['warm_ms']:>8.0f} {row['warm_bytes'] / 1024:>8.0f}{flag}")
    cold = [row["cold_ms"] for row in rows]
    warm = [row["warm_ms"] for row in rows]
    print(f"{len(rows)} pages; first visit median {statistics.median(cold):.0f} ms, max {max(cold):.0f} ms, "
          f"{sum(row['cold_bytes'] for row in rows) / 1024 / 1024:.1f} MB in all; "
          f"warm median {statistics.median(warm):.0f} ms, max {max(warm):.0f} ms")
    print(f"* over the goal ({COLD_TARGET_MS} ms first visit, {WARM_TARGET_MS} ms warm)")


@contextmanager
def demo_database(name: str | None):
    """A scratch database for the demo, or the one named (left as it is)."""
    from bench.scratch import scratch_database_url, scratch_django

    if not name:
        with scratch_django(f"denoise_bench_pages_{os.getpid()}") as url:
            yield url
        return
    url = os.environ["DATABASE_URL"] = scratch_database_url(name)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "denoise_dashboard.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    yield url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--warm", type=int, default=3, help="warm visits per page (median reported)")
    parser.add_argument("--database", help="a database that already holds the demo (migrated, used as it is, "
                                           "kept): no scratch database, no demo load")
    parser.add_argument("--only", default="", help="only the pages whose path contains this text")
    options = parser.parse_args()

    with demo_database(options.database) as url, tempfile.TemporaryDirectory(prefix="denoise-bench-pages-") as work:
        from django.core.management import call_command
        from django.db import connections
        from django.test import override_settings

        from tests.support.serving import Serve

        if not options.database:
            with override_settings(VAR_DIR=work):
                call_command("load_demo", stdout=io.StringIO())
        # As `make run` serves: hashed, compressed copies in STATIC_ROOT (incremental after the first time).
        call_command("collectstatic", interactive=False, verbosity=0)
        arguments = demo_arguments()
        connections.close_all()
        with Serve(Path(work), DATABASE_URL=url, VAR_DIR=work) as server:
            pages = list(html_pages(server, [(name, path) for name, path in page_paths(arguments)
                                             if options.only in path]))
            report(measure(server, pages, options.warm))


if __name__ == "__main__":
    main()
