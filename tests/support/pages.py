"""The product's pages as the URL resolver knows them: every named pattern
outside the API, Django's admin, OTLP and Prometheus, a path for each from its
arguments, and the state each page sets when it is drawn."""

import re

from django.urls import URLPattern, URLResolver, get_resolver

from metrics.views import DATA_OF

# Not pages: the API (scopes, tests/api), OTLP, Prometheus, Django's admin (staff only).
NOT_PAGES = re.compile(r"^(api/|admin/|v1/traces|metrics$|ops/metrics|static/)")

# What shows a page is drawn, by URL name: its charts, its DAG, its script's
# marker. Pages not named here are drawn at `load`.
METRICS_READY = "#metrics-root[data-state=ready]"
DRAWN = {
    **{f"metrics:{name}": METRICS_READY for name in
       ("overview", "fuses", "uncertainty", "drift", "cost", "calibration")},
    "provenance:trace-detail": "#dag[data-settled='1']",
    "provenance:root-causes": "#why-trend[data-drawn='1']",
    "provenance:health": "#health-trend[data-rendered='true'] .main-svg",
    "evals:dataset-runs": "#runs-chart[data-rendered=true] .main-svg",
    "api-docs": ".swagger-ui .opblock",
}


def page_patterns():
    """(name, route, view) of every named URL pattern that is a page."""
    found = []

    def walk(patterns, prefix, namespace):
        for entry in patterns:
            route = prefix + str(entry.pattern)
            if isinstance(entry, URLResolver):
                space = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
                walk(entry.url_patterns, route, space)
            elif isinstance(entry, URLPattern) and not NOT_PAGES.match(route) and entry.name:
                found.append((namespace + entry.name, route, entry.callback))

    walk(get_resolver().url_patterns, "", "")
    return found


PAGES = {name: (route, view) for name, route, view in page_patterns()}


def page_url(name: str, kwargs: dict, shared_destination_id=None) -> str:
    """The path of page `name`, its arguments from `kwargs` (a shared destination's
    pages take `shared_destination_id`, the data view the overview's chart data)."""
    route, _ = PAGES[name]
    kwargs = dict(kwargs)
    if name in ("alerts:destination-delete", "alerts:shared-destination-enable"):
        kwargs["destination_id"] = shared_destination_id
    if name == "metrics:data":
        kwargs["name"] = DATA_OF["overview"]
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: str(kwargs[m.group(1)]), route)
