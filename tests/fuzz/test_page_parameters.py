"""Hostile query strings and form values on every page answer below 500.

Where test_every_endpoint.py mostly fuzzes paths and bodies, this one keeps
each path good (real objects of a seeded project, so the view gets past its
404s) and fuzzes the parameters each view reads: unicode digits that
`str.isdigit` accepts and `int` refuses, numbers past any range, negatives,
NaN and inf, empty and repeated parameters, dates that are not on the
calendar, 10 kB strings and NUL characters. Seeded, so a failure reproduces."""

import random
from urllib.parse import quote

import pytest

from tests.fuzz import test_every_endpoint
from tests.fuzz.test_every_endpoint import PARAMETER, routes

stored = test_every_endpoint.stored  # the seeded project's objects, a fixture

SEED = 20261202
REQUESTS_PER_ROUTE = 16
API_PREFIXES = ("api/", "v1/")

# Every name a page or the API reads from a query string or a form.
NAMES = [
    "action", "agent", "agent_id", "baseline_end", "baseline_start", "budget", "compare", "dataset",
    "dataset_version", "end", "environment", "expand", "focus", "fold", "format", "from", "hops", "id", "kind",
    "metric", "minutes", "model", "name", "node", "note", "page", "page_size", "price-count", "product_id",
    "profile", "q", "range", "resolution", "reveal", "round", "rule_id", "since", "start", "step", "tag", "to",
    "trace_id", "until", "verdict", "version", "view", "window", "cursor", "by", "scope", "objective", "threshold",
    "policy_version", "before", "after", "answers", "baseline", "limit", "offset", "days",
]
HOSTILE = [
    "²", "¹²", "٣", "１２", "௫", "Ⅻ", "⁵", "𝟗", "9" * 40, str(2**63), str(2**31), "-1", "-0", "-9" + "9" * 30, "0",
    "NaN", "nan", "inf", "-inf", "Infinity", "1e309", "1e-400", "0x10", "1_000", " 1", "1 ", "+1", "",
    "2026-02-30", "2026-02-30T00:00:00Z", "2026-13-01", "0000-00-00", "9999-12-31T23:59:59-01:00",
    "0001-01-01T00:00:00+01:00", "2026-11-20T25:61:61Z", "+275760-09-13", "x" * 10_000, "\x00", "1\x00",
    "%", "\ufeff1", "all", "[]", "{}", "true",
]


# Good values of the parameters that decide which others a view reads, so
# that the hostile one gets past them.
CONTEXT = {"kind": ["orphan", "fuse_hotspot"], "compare": ["policy", "previous"], "range": ["24h", "7d"],
           "answers": ["incorrect"], "hops": ["2"], "fold": ["1"], "version": ["1"], "to": ["1"], "from": ["1"],
           "before": ["0"], "after": ["1"], "page": ["1"], "start": ["2026-11-20T00:00:00Z"],
           "end": ["2026-11-21T00:00:00Z"], "since": ["2026-11-20T00:00:00Z"], "metric": ["fuse_rate"]}


def hostile_query(rng: random.Random) -> list[tuple[str, str]]:
    """One hostile value in every parameter but some of the deciding ones
    (which keep a good value), and one deciding parameter hostile too; now
    and then a parameter twice."""
    value = rng.choice(HOSTILE)
    pairs = [(name, rng.choice(values)) for name, values in CONTEXT.items() if rng.random() < 0.6]
    kept = {name for name, _ in pairs} - {rng.choice(list(CONTEXT))}
    pairs = [pair for pair in pairs if pair[0] in kept]
    pairs += [(name, value) for name in NAMES if name not in kept]
    if rng.random() < 0.3:
        pairs.append((rng.choice(NAMES), rng.choice(HOSTILE)))
    return pairs


def encoded(pairs: list[tuple[str, str]]) -> str:
    return "&".join(f"{quote(name)}={quote(value, safe='')}" for name, value in pairs)


def good_path(route: str, rng: random.Random, known: dict[str, list[str]]) -> str:
    return "/" + PARAMETER.sub(lambda match: rng.choice(known.get(match.group(2), ["x"])), route)


@pytest.fixture
def known(stored, project, ingest):
    """`stored`, plus the ids the pages' own routes name."""
    from alerts.models import Destination, Silence
    from provenance.models import Escalation

    ingest({"id": "fz-esc", "type": "escalation", "timestamp": "2026-11-20T09:00:00Z",
            "body": {"trace_id": "t1", "product_id": "p1", "reason": "fused", "by_agent_id": "router"}})
    known = dict(stored)
    known["escalation_id"] = [str(pk) for pk in Escalation.objects.filter(project=project).values_list("pk", flat=True)]
    known["destination_id"] = [str(pk) for pk in Destination.objects.values_list("pk", flat=True)] or ["1"]
    known["silence_id"] = [str(pk) for pk in Silence.objects.values_list("pk", flat=True)] or ["1"]
    known["name"] = ["ds", "overview", "fuses"]
    return known


def test_hostile_parameters_on_every_page_answer_below_500(known, member, api):
    rng = random.Random(SEED)
    member.raise_request_exception = False
    api.raise_request_exception = False
    failures = []
    for route, _ in routes():
        if route.startswith(("login", "logout")):
            continue
        for _ in range(REQUESTS_PER_ROUTE):
            path = good_path(route, rng, known)
            pairs = hostile_query(rng)
            if route.startswith(API_PREFIXES):
                response = api.get(f"{path}?{encoded(pairs)}")
                method = "GET"
            elif rng.random() < 0.3:
                method = "POST"
                response = member.post(path, encoded(pairs), content_type="application/x-www-form-urlencoded")
            else:
                method = "GET"
                response = member.get(f"{path}?{encoded(pairs)}")
            if response.status_code >= 500:
                shown = sorted({f"{name}={value[:20]!r}" for name, value in pairs})
                failures.append(f"{method} {path} {' '.join(shown)} -> {response.status_code}")
    assert failures == [], "\n".join(failures[:80])


@pytest.mark.parametrize("value", ["²", "٣", "9" * 40, "-1", "NaN", "2026-02-30"])
def test_a_bad_number_on_a_page_is_a_400_naming_the_parameter(known, member, project, value):
    member.raise_request_exception = False
    pages = {
        f"/p/{project.slug}/health/?kind=orphan&page=": "page",
        f"/p/{project.slug}/why/?compare=policy&after=1&before=": "before",
        f"/policy/{project.slug}/?to=": "to",
        f"/p/{project.slug}/datasets/ds/?version=": "version",
        f"/p/{project.slug}/runs/{known['run_id'][0]}/compare/?to=": "to",
    }
    for path, name in pages.items():
        response = member.get(path + quote(value, safe=""))
        assert response.status_code == 400, (path, value, response.status_code)
        assert name in response.content.decode(), (path, value)
