"""The demo, as a new user meets it after `make run`, in Chromium at 1440×900:
Calibration finds the confidence informative (ROC AUC >= 0.75) and names the
badly calibrated agent, Health lists the planted faults, the webhook inbox
shows a demo alert delivered with its signature verified, and no page of the
product says "Placeholder". Walking the pages writes the README's screenshots.

The demo is loaded once for the module (about 20 s), committed so the served
instance sees it, and flushed afterwards; the tests only read it, through the
served instance.
"""

import io
import re

import pytest
from django.core.management import call_command
from django.test import override_settings

from demo import planted_faults
from tests.support.browser import screenshot, sign_in

# `django_db` so the test database is set up; each test only reads the committed demo.
pytestmark = [pytest.mark.browser, pytest.mark.django_db]

METRICS_READY = "#metrics-root[data-state=ready]"
# (screenshot or None, path, what shows the page is drawn). Server-rendered pages are
# drawn at `load`, which goto waits for; the rest say when their script is done.
PAGES = [
    ("metrics-overview.png", "/metrics/demo/", METRICS_READY),
    ("metrics-fuses.png", "/metrics/demo/fuses/", METRICS_READY),
    ("metrics-uncertainty.png", "/metrics/demo/uncertainty/", METRICS_READY),
    ("metrics-calibration.png", "/metrics/demo/calibration/", METRICS_READY),
    ("metrics-drift.png", "/metrics/demo/drift/", METRICS_READY),
    (None, "/metrics/demo/cost/", METRICS_READY),  # Cost & latency (b9c3b58) has no screenshot yet
    ("trace-list.png", "/p/demo/traces/", None),
    ("bad-answers.png", "/p/demo/bad-answers/", None),
    ("trace-bad-answer.png", "/p/demo/traces/demo-bad-answer/", "#dag[data-drawn]"),
    ("eval-datasets.png", "/p/demo/datasets/", None),
    ("eval-dataset.png", "/p/demo/datasets/ticket-triage/", None),
    ("eval-runs.png", "/p/demo/datasets/ticket-triage/runs/", "#runs-chart .main-svg"),
    ("alert-rules.png", "/alerts/demo/", None),
    ("alert-rule-new.png", "/alerts/demo/new/", None),
    ("alert-history.png", "/alerts/demo/history/", None),
    ("webhook-inbox.png", "/alerts/demo/inbox/", None),
    (None, "/p/demo/why/", None),  # why-answers-go-wrong.png: test_why_answers_go_wrong_compares_the_policy_story...
    (None, "/p/demo/health/", "#health-trend .main-svg"),  # health.png: test_health_lists_only_the_planted...
    ("policy.png", "/policy/demo/", None),
    ("escalations.png", "/policy/demo/inbox/", None),
    (None, "/p/demo/settings/", None),  # settings.png: test_project_settings, with a retention preview
    ("api-docs.png", "/api/v1/docs", ".swagger-ui .opblock"),
]
# Pages reached from a link on another page, whose ids the demo decides: (screenshot, page, link pattern).
LINKED = [
    ("alert-rule.png", "/alerts/demo/", r"/alerts/demo/\d+/"),
    ("eval-run.png", "/p/demo/datasets/ticket-triage/runs/", r"/p/demo/runs/\d+/"),
    ("eval-run-compare.png", "/p/demo/datasets/ticket-triage/runs/", r"/p/demo/runs/\d+/compare/"),
]
VERIFIED = "article.inbox-message[data-verified=yes]"


@pytest.fixture(scope="module")
def demo(asgi_live_server, django_db_blocker, tmp_path_factory):
    # The developer's own demo credentials (var/) stay out of it.
    with django_db_blocker.unblock(), override_settings(VAR_DIR=tmp_path_factory.mktemp("var")):
        try:
            call_command("load_demo", stdout=io.StringIO())
            yield asgi_live_server
        finally:
            call_command("flush", interactive=False, verbosity=0)


@pytest.fixture
def demo_page(demo, watched_page):
    sign_in(watched_page, demo, "demo", "demo")
    return watched_page


def visible_text(page) -> str:
    return page.locator("body").inner_text()


def test_calibration_finds_confidence_informative_and_names_the_miscalibrated_agent(demo, demo_page):
    page = demo_page
    # Over the demo's three days: the pages open on the last 24 h (the range
    # fitted to the data), too few reviews for these figures to hold on every load.
    page.goto(f"{demo.url}/metrics/demo/calibration/")
    page.wait_for_selector(METRICS_READY)
    # The figure a person reads: the ROC curve's legend.
    legend = page.locator("#chart-roc .legendtext", has_text="ROC (AUC").text_content()
    auc = float(re.search(r"AUC ([0-9.]+)", legend).group(1))
    print(f"demo calibration: ROC AUC {auc:.3f}")
    assert auc >= 0.75, legend
    threshold = page.locator(".metric-card", has_text="Suggested threshold").locator(".value").inner_text()
    assert 0.3 < float(threshold) < 0.95
    # The extractor is flagged among the flagged rows at the top. (The escalated
    # retrievals of the policy story, reviewed by support after escalation, may join it some loads.)
    flagged = page.locator("#calibration-by-agent tbody tr.badly-calibrated")
    names = [row.split("\t")[0] for row in flagged.all_inner_texts()]
    # On a miss, the table and the window say why: it failed once (2026-12-07), and 37 loads of the
    # demo as of other moments of that hour (load_demo --now) flagged the extractor every time.
    table = page.locator("#calibration-by-agent tbody tr").all_inner_texts()
    assert "entity_extractor_v2" in names, (names, table, page.url, visible_text(page)[:400])
    assert page.locator("#calibration-by-agent tbody tr").nth(len(names) - 1).get_attribute("class") == \
        "badly-calibrated"
    assert flagged.filter(has_text="entity_extractor_v2").locator("td").last.inner_text() == "badly calibrated"
    # The responder is not always "ok" any more: under the demo's lenient first policy it answers
    # confidently on doubtful fragments (the root-cause story), and on some loads every agent with
    # enough reviews in the last 24 h is flagged.
    assert page.problems == []


def test_the_demo_policy_change_quotes_the_numbers_its_calibration_page_shows(demo, demo_page):
    page = demo_page
    page.goto(f"{demo.url}/policy/demo/")
    row = page.locator("#policy-history tr", has_text="from Calibration ROC")
    note = row.locator(".note-cell").inner_text()
    found = re.search(r"block ([0-9.]+) from Calibration ROC \(AUC ([0-9.]+), Youden's J ([0-9.]+), (\d+) reviews, "
                      r"(\d+) incorrect; (\S+ \S+)–(\S+ \S+) UTC", note)
    assert found, note
    block, auc, j, reviews, _, start, end = found.groups()
    page.goto(f"{demo.url}/metrics/demo/calibration/?start={start.replace(' ', 'T')}&end={end.replace(' ', 'T')}")
    page.wait_for_selector(METRICS_READY)
    legend = page.locator("#chart-roc .legendtext", has_text="ROC (AUC").text_content()
    assert float(re.search(r"AUC ([0-9.]+)", legend).group(1)) == pytest.approx(float(auc), abs=0.0051)
    assert page.locator(".metric-card", has_text="Reviewed answers").locator(".value").inner_text() == reviews
    assert page.locator("#suggested-block").inner_text() == block
    box = page.locator("#apply-threshold").inner_text()
    assert f"(AUC {auc}, Youden's J {j}, {reviews} reviews)" in box
    print(f"demo policy change: block {block}, AUC {auc}, J {j}, {reviews} reviews, {start}–{end} UTC")
    assert page.problems == []


def test_health_lists_only_the_planted_faults_grouped(demo, demo_page):
    page = demo_page
    page.goto(f"{demo.url}/p/demo/health/")
    page.wait_for_selector("#health-trend .main-svg")
    planted = planted_faults.expected_findings(with_large_run=True)
    summary = page.locator(".health-summary strong").inner_text()
    assert summary == f"{len(planted)} findings"
    # Each kind lists its (agent, step) groups, their examples linking to the node.
    shown = set()
    for kind in ("broken_link", "orphan", "cycle", "fused_indirect_use", "round_limit_exceeded"):
        section = page.locator(f"#kind-{kind}")
        counts = [int(c) for c in section.locator("tr.health-group td.num").all_inner_texts()]
        links = section.locator("ul.examples a")
        assert sum(counts) == links.count() == sum(1 for k, *_ in planted if k == kind), kind
        shown |= {(kind, href) for href in (links.nth(i).get_attribute("href") for i in range(links.count()))}
    assert len(shown) == len(planted)
    assert page.locator("#kind-cycle tbody a[href^='/p/demo/traces/']").count() == 2
    screenshot(page, "health.png")
    assert page.problems == []


def test_the_webhook_inbox_shows_a_delivered_verified_demo_alert(demo, demo_page):
    page = demo_page
    inbox = f"{demo.url}/alerts/demo/inbox/"
    # Delivery may run on a worker: wait for the state (a verified message on the page), not for a time.
    page.wait_for_function(
        "(url) => fetch(url).then((r) => r.text()).then((html) => html.includes('data-verified=\"yes\"'))",
        arg=inbox, polling=250)
    page.goto(inbox)
    message = page.locator(VERIFIED).first
    assert "✓ signature verified" in message.inner_text()
    assert message.locator("a[href^='/alerts/demo/']").inner_text() in {
        "Fuse rate over 20% in 15 minutes", "An agent fused 3 times in a row",
        "Extraction degrading: confidence down 25% and entity extraction failing"}
    assert page.locator(".main-nav [aria-current=page]").all_inner_texts() == ["Alerts"]
    headers = message.locator("table.kv").inner_text()
    assert "webhook-signature" in headers and "v1," in headers
    assert '"type": "alert.firing"' in message.locator("pre.inbox-body").inner_text()
    assert page.problems == []


def test_every_page_draws_without_a_placeholder(demo, demo_page):
    """One visit per page of the product, each checked and photographed."""
    page = demo_page

    def visit(name, path, ready):
        response = page.goto(f"{demo.url}{path}")
        assert response.status == 200, path
        if ready:
            page.wait_for_selector(ready)
        assert "placeholder" not in visible_text(page).lower(), path
        if name:
            screenshot(page, name, full_page=True)

    nav = page.locator(".main-nav a").evaluate_all("(links) => links.map((a) => a.getAttribute('href'))")
    metrics = None
    for name, path, ready in PAGES:
        visit(name, path, ready)
        if path == "/metrics/demo/":
            metrics = page.locator(".metrics-nav a").evaluate_all(
                "(links) => links.map((a) => a.getAttribute('href').split('?')[0])")
    # Nothing in the navigation is left out of the walk.
    assert set(nav) | set(metrics) <= {path.split("?")[0] for _, path, _ in PAGES}
    for name, start, pattern in LINKED:
        page.goto(f"{demo.url}{start}")
        links = page.locator("main a").evaluate_all("(links) => links.map((a) => a.getAttribute('href'))")
        visit(name, next(href for href in links if re.fullmatch(pattern, href or "")), None)
    assert page.problems == []

    # A URL that names nothing (its 404 is a console error of its own), then the login page.
    missing = page.goto(f"{demo.url}/p/demo/no-such-page/")
    assert missing.status == 404
    assert page.locator(".main-nav a").count() > 0
    assert "placeholder" not in visible_text(page).lower()
    screenshot(page, "not-found.png", full_page=True)
    page.context.clear_cookies()
    visit("login.png", "/login/", "#id_username")


def test_why_answers_go_wrong_compares_the_policy_story_by_version(demo, demo_page):
    page = demo_page
    # The story's policy: version 1 lenient (retrieval block 0.3), version 2 the block Calibration suggested.
    page.goto(f"{demo.url}/p/demo/why/?range=7d&compare=policy&before=1&after=2")
    compare = page.locator("#why-compare")
    assert "Policy v1" in compare.locator(".card-title").inner_text()
    rows = {(r.get_attribute("data-agent"), r.get_attribute("data-reason")): r.locator("td.num").all_inner_texts()
            for r in compare.locator("tbody tr[data-agent]").all()}
    print(f"demo root causes by policy version: {rows}")
    # The lenient version let doubtful fragments through and they caused many of its wrong answers; the
    # calibrated one blocks them, and the retriever's share falls.
    before, after, _ = rows[("retrieval_agent_v2", "low_confidence")]
    assert float(after.rstrip("%")) < float(before.rstrip("%")) / 2, rows
    screenshot(page, "why-answers-go-wrong.png", full_page=True)
    assert page.problems == []
