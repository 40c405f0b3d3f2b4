"""Every page the URL resolver knows, in Chromium at 1440×900, signed in as
each role the product has, over the demo (loaded once, at a tenth of its
volume, with a silence, a shared destination and an invitation added so that
no page is empty).

As the editor (the admin for the pages an editor may not read), each page is
checked in full and photographed to `screenshots/pages/<name>.png` for the
README's gallery; as the viewer and the admin, the pages they may read load
without a console error or a CSP violation (they differ from the editor's only
in their forms).

The checks, once the page is drawn (its charts, its DAG settled):

- **No console errors and no CSP violations**: nothing logged as an error, no
  uncaught exception, no `securitypolicyviolation` event (an init script
  records them on every document).
- **No clipped text** in `td`, `th`, `button`, `a.button` and `label`. An
  element with a box of its own (inline boxes have no width to clip) and text
  is clipped when its content is wider than its box (`scrollWidth >
  clientWidth + 1`): with `overflow` hidden/clip or an ellipsis the rest is
  cut off, with `overflow` visible it spills over its neighbour, and a
  button's text must fit its button either way. It is also clipped when its box
  reaches past the edge of an ancestor that hides its overflow (a card that
  cuts a table short). Allowed: a scroll container (`overflow` auto/scroll:
  the rest is a scroll away), and a deliberately truncated element whose
  `title` carries its full text (shown on hover).
- **No overlapping labels**: in every Plotly chart, the DAG included, the
  drawn boxes of tick labels, legend entries and point labels (the DAG's node
  labels) do not intersect, pair by pair (1 px of slack for antialiasing).
"""

import io
import re
from dataclasses import dataclass, field

import pytest
from django.core.management import call_command
from django.test import override_settings
from rest_framework.test import APIClient

from evals.models import Run
from provenance.models import Escalation
from tenancy.models import Project
from tenancy.people import invitations
from tests.support.accounts import client_of, person
from tests.support.alerts import SECRET
from tests.support.browser import screenshot
from tests.support.pages import DRAWN, PAGES, page_url
from tests.tenancy.test_role_matrix import ADMIN, EDITOR, READING_NEEDS, ROLES, VIEWER

pytestmark = [pytest.mark.browser, pytest.mark.django_db]

# The API's own pages a person opens (the resolver's list leaves the API out).
API_PAGES = {"api-root": "/api/v1/", "api-docs": "/api/v1/docs"}

WATCH = """() => {
  window.__cspViolations = [];
  document.addEventListener("securitypolicyviolation", (event) => window.__cspViolations.push(
    `${event.violatedDirective} blocked ${event.blockedURI || "inline"} at ${event.sourceFile}:${event.lineNumber}`));
}"""

CLIPPED = """() => {
  const said = (text) => (text || "").replace(/\\s+/g, " ").trim();
  const hides = (style) => style.overflowX === "hidden" || style.overflowX === "clip";
  const scrolls = (style) => style.overflowX === "auto" || style.overflowX === "scroll";
  const found = [];
  for (const el of document.querySelectorAll("td, th, button, a.button, label")) {
    const text = said(el.textContent);
    if (!text || el.clientWidth === 0 || !el.checkVisibility({ visibilityProperty: true })) continue;
    if (el.title && said(el.title).includes(text)) continue;
    const style = getComputedStyle(el);
    const where = `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}${el.className ? "." + String(el.className).trim().replace(/\\s+/g, ".") : ""}`;
    if (!scrolls(style) && el.scrollWidth > el.clientWidth + 1) {
      found.push(`${where} "${text.slice(0, 60)}": content ${el.scrollWidth} px in ${el.clientWidth} px`);
      continue;
    }
    const box = el.getBoundingClientRect();
    for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
      const upStyle = getComputedStyle(up);
      if (scrolls(upStyle)) break;
      if (!hides(upStyle)) continue;
      const edge = up.getBoundingClientRect();
      if (box.right > edge.right + 1 || box.left < edge.left - 1) {
        found.push(`${where} "${text.slice(0, 60)}": cut by ${up.tagName.toLowerCase()}.${String(up.className).trim()}` +
                   ` at ${Math.round(edge.right)} px, its box ends at ${Math.round(box.right)} px`);
        break;
      }
    }
  }
  return found;
}"""

# A label's box is its text's own box turned as the text is (tick labels are often
# slanted), on the screen; two boxes overlap when no side of either separates
# them by 1 px or more (the separating axis test for convex shapes).
OVERLAPPING = """() => {
  const corners = (text) => {
    const box = text.getBBox(), m = text.getScreenCTM();
    return [[box.x, box.y], [box.x + box.width, box.y], [box.x + box.width, box.y + box.height],
            [box.x, box.y + box.height]].map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
  };
  const apart = (p, q) => [p, q].some((shape) => shape.some((a, i) => {
    const b = shape[(i + 1) % shape.length], length = Math.hypot(b[0] - a[0], b[1] - a[1]) || 1;
    const along = (points) => points.map(([x, y]) => (x * (a[1] - b[1]) + y * (b[0] - a[0])) / length);
    const [sp, sq] = [along(p), along(q)];
    return Math.max(...sp) - 1 <= Math.min(...sq) || Math.max(...sq) - 1 <= Math.min(...sp);
  }));
  return Array.from(document.querySelectorAll(".js-plotly-plot")).flatMap((chart) => {
    const labels = Array.from(chart.querySelectorAll(
        ".xtick text, .ytick text, .x2tick text, .y2tick text, .legendtext, .textpoint text"))
      .filter((t) => t.textContent.trim() && t.getBoundingClientRect().width > 0)
      .map((t) => ({ text: t.textContent, shape: corners(t), box: t.getBoundingClientRect() }));
    const pairs = [];
    labels.forEach((a, i) => labels.slice(i + 1).forEach((b) => {
      if (!apart(a.shape, b.shape)) pairs.push(`#${chart.id}: "${a.text}" over "${b.text}" ${JSON.stringify([a.box, b.box])}`);
    }));
    return pairs;
  });
}"""


@dataclass
class Visitor:
    """One role's browser tab, and what it has heard from the pages."""
    page: object
    errors: list = field(default_factory=list)

    def open(self, server, name: str, path: str) -> list[str]:
        """Opens the page, waits until it is drawn; what went wrong on the way."""
        self.errors.clear()
        answer = self.page.goto(server.url + path)
        assert answer.status == 200, (path, answer.status)
        if name in DRAWN:
            self.page.wait_for_selector(DRAWN[name], state="attached")
        violations = self.page.evaluate("() => window.__cspViolations")
        return [*self.errors, *(f"CSP: {violation}" for violation in violations)]


@dataclass
class Checked:
    """What the full check of one page found."""
    path: str
    problems: list  # console errors, CSP violations, clipped text, overlapping DAG labels
    chart_overlaps: list


@dataclass
class Site:
    server: object
    pages: dict  # role → {name: path} of the pages the role may read
    visitors: dict  # role → Visitor
    checked: dict = field(default_factory=dict)  # name → Checked, each page checked in full once

    def full_checks(self) -> list[Checked]:
        """Each page checked in full, as the editor or, where an editor may not read it, the admin,
        and photographed; once for the module, whichever test asks first."""
        for name in sorted(self.pages[ADMIN]):
            if name in self.checked:
                continue
            role = EDITOR if name in self.pages[EDITOR] else ADMIN
            visitor = self.visitors[role]
            problems = visitor.open(self.server, name, self.pages[role][name])
            problems += visitor.page.evaluate(CLIPPED)
            overlaps = visitor.page.evaluate(OVERLAPPING)
            screenshot(visitor.page, screenshot_name(name), full_page=True)
            self.checked[name] = Checked(
                self.pages[role][name], problems + [o for o in overlaps if o.startswith("#dag")],
                [o for o in overlaps if not o.startswith("#dag")])
        return list(self.checked.values())


def readable_pages(client, kwargs, shared_id) -> dict[str, str]:
    """{name: path} of the resolver's pages that answer a GET with an HTML 200 (to an admin, who reads all)."""
    found = {}
    for name in sorted(PAGES):
        path = page_url(name, kwargs, shared_id)
        answer = client.get(path)
        if answer.status_code == 200 and answer["Content-Type"].startswith("text/html"):
            found[name] = path
    return {**found, **API_PAGES}


def reads(role: str, name: str) -> bool:
    return ROLES.index(role) >= ROLES.index(READING_NEEDS.get(name, VIEWER))


@pytest.fixture(scope="module")
def site(asgi_live_server, browser, django_db_blocker, tmp_path_factory):
    with django_db_blocker.unblock(), override_settings(
            VAR_DIR=tmp_path_factory.mktemp("var"),
            PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        try:
            call_command("load_demo", "--scale", "0.1", stdout=io.StringIO())
            project = Project.objects.get(slug="demo")
            people = {role: person(project, role, f"{role}-of-demo") for role in ROLES}
            api = APIClient()
            api.credentials(HTTP_AUTHORIZATION=f"Bearer {project.issue_api_key('pages')[1]}")
            shared = api.post("/api/v1/destinations", {"name": "on-call", "type": "webhook",
                                                       "url": "https://example.org/on-call", "secret": SECRET},
                              format="json")
            silence = api.post("/api/v1/silences", {"until": "2099-01-01T00:00:00Z", "reason": "maintenance window"},
                               format="json")
            assert shared.status_code == silence.status_code == 201, (shared.content, silence.content)
            made = invitations.create(project, people[ADMIN], VIEWER)
            rule = project.alert_rules.order_by("id").first()
            kwargs = {
                "slug": "demo", "trace_id": "demo-bad-answer", "name": "ticket-triage", "rule_id": rule.pk,
                # The latest run, which has one before it to compare with.
                "run_id": Run.objects.filter(project=project).order_by("id").last().pk, "token": made.token,
                "silence_id": silence.json()["id"],
                "escalation_id": Escalation.objects.filter(project=project).order_by("id").first().pk,
                "user_id": people[VIEWER].pk, "invitation_id": made.invitation.pk,
                "destination_id": rule.destinations.first().pk, "key_id": project.api_keys.first().pk,
            }
            clients = {role: client_of(user) for role, user in people.items()}
            readable = readable_pages(clients[ADMIN], kwargs, shared.json()["id"])
            pages = {role: {name: path for name, path in readable.items() if reads(role, name)} for role in ROLES}
            visitors = {}
            for role, client in clients.items():
                context = browser.new_context(viewport={"width": 1440, "height": 900})
                context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value,
                                      "url": asgi_live_server.url}])
                context.add_init_script(f"({WATCH})()")
                visitor = Visitor(context.new_page())
                visitor.page.on("console", lambda message, errors=visitor.errors: errors.append(
                    f"console: {message.text} ({message.location.get('url')})") if message.type == "error" else None)
                visitor.page.on("pageerror", lambda error, errors=visitor.errors: errors.append(f"page error: {error}"))
                visitors[role] = visitor
            yield Site(asgi_live_server, pages, visitors)
            for visitor in visitors.values():
                visitor.page.context.close()
        finally:
            call_command("flush", interactive=False, verbosity=0)


def said(found: dict) -> str:
    return "".join(f"\n{path}:" + "".join(f"\n    {problem}" for problem in problems)
                   for path, problems in found.items())


def screenshot_name(name: str) -> str:
    return "pages/" + re.sub(r"[^a-z0-9]+", "-", name.lower()) + ".png"


def test_every_page_loads_clean_with_no_clipped_text_nor_overlapping_dag_labels(site):
    checked = site.full_checks()
    print(f"{len(checked)} pages checked in full and photographed")
    assert len(checked) >= 30, [page.path for page in checked]
    found = {page.path: page.problems for page in checked if page.problems}
    assert found == {}, said(found)


def test_no_chart_has_overlapping_labels(site):
    found = {page.path: page.chart_overlaps for page in site.full_checks() if page.chart_overlaps}
    assert found == {}, said(found)


@pytest.mark.parametrize("role", [VIEWER, ADMIN])
def test_each_role_reads_every_page_without_a_console_error(site, role):
    visitor = site.visitors[role]
    found = {path: problems for name, path in site.pages[role].items()
             if (problems := visitor.open(site.server, name, path))}
    assert found == {}, said(found)
