from urllib.parse import quote

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.urls import reverse

from provenance import health
from provenance.membership import project_for_user_or_404

FINDINGS_SHOWN_PER_KIND = 200


@login_required
def health_page(request, slug):
    project = project_for_user_or_404(request.user, slug)
    report = health.latest_report(project)
    groups = health.findings_by_kind(report, FINDINGS_SHOWN_PER_KIND) if report else []
    for group in groups:
        for finding in group["findings"]:
            finding["url"] = (
                reverse("provenance:trace-detail", args=[project.slug, finding["trace_id"]])
                + "?node=" + quote(finding["product_id"], safe="")
            )
    return render(request, "provenance/health.html", {
        "project": project,
        "report": report,
        "groups": groups,
        "trend": health.nightly_trend(project) if report else [],
    })
