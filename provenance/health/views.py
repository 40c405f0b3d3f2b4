from urllib.parse import quote, urlencode

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.urls import reverse

from core.params import whole_number
from provenance import health
from provenance.models import FindingKind
from tenancy.membership import project_for_user_or_404

FINDINGS_PER_PAGE = 50


@login_required
def health_page(request, slug):
    """The latest report grouped by kind and by (agent, step); with `kind`
    (and optionally `agent_id`, `step`) one page of the matching findings."""
    project = project_for_user_or_404(request.user, slug)
    report = health.latest_report(project)
    listing, errors = _listing(request.GET)
    context = {"project": project, "report": report, "errors": errors,
               "kinds": [{"kind": k.value, "label": k.label} for k in FindingKind]}
    if errors:
        return render(request, "provenance/health.html", context, status=400)
    if report is None:
        return render(request, "provenance/health.html", context)

    def node_url(finding):
        return (reverse("provenance:trace-detail", args=[project.slug, finding["trace_id"]])
                + "?node=" + quote(finding["product_id"], safe=""))

    base = reverse("provenance:health", args=[project.slug])
    context["trend"] = health.nightly_trend(project)
    if listing is None:
        kinds = health.finding_groups(report)
        for kind in kinds:
            for group in kind["groups"]:
                group["url"] = base + "?" + urlencode(
                    {"kind": kind["kind"], "agent_id": group["agent_id"], "step": group["step"]})
                for finding in group["examples"]:
                    finding["url"] = node_url(finding)
        context["groups"] = kinds
        return render(request, "provenance/health.html", context)

    page = listing.pop("page")
    rows, total = health.findings_page(report, offset=(page - 1) * FINDINGS_PER_PAGE, limit=FINDINGS_PER_PAGE,
                                       with_source=True, **listing)
    for finding in rows:
        finding["url"] = node_url(finding)
    pages = max(1, -(-total // FINDINGS_PER_PAGE))
    query = {k: v for k, v in listing.items() if v is not None}

    def page_url(number):
        return base + "?" + urlencode({**query, "page": number})

    kind = FindingKind(listing["kind"])
    context["listing"] = {
        "kind": kind.value, "label": kind.label, "description": health.DESCRIPTIONS[kind],
        "agent_id": listing["agent_id"], "step": listing["step"], "findings": rows, "total": total,
        "page": page, "pages": pages, "first": (page - 1) * FINDINGS_PER_PAGE + 1 if rows else 0,
        "last": (page - 1) * FINDINGS_PER_PAGE + len(rows),
        "previous": page_url(page - 1) if page > 1 else None,
        "next": page_url(page + 1) if page < pages else None,
    }
    return render(request, "provenance/health.html", context)


def _listing(query) -> tuple[dict | None, list[str]]:
    """The listing the query asks for (None: the grouped overview), or what is wrong with it."""
    errors = []
    kind = query.get("kind")
    if kind is None:
        extra = [name for name in ("agent_id", "step", "page") if name in query]
        if extra:
            errors.append(f"{extra[0]}: needs kind")
        return None, errors
    if kind not in FindingKind.values:
        errors.append(f"kind: must be one of {', '.join(FindingKind.values)}")
    page = query.get("page", "1")
    try:
        page = whole_number(page, 1, 10**9 - 1)
    except ValueError as error:
        errors.append(f"page: {error}")
    if errors:
        return None, errors
    return {"kind": kind, "agent_id": query.get("agent_id"), "step": query.get("step"), "page": page}, []
