"""The audit log page, under the project's settings: who changed what, with
filters and pages, for the project's admins (tenancy.audit_log reads it)."""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import render

from core.errors import flatten_errors
from tenancy import audit_log
from tenancy.membership import changes_need, project_for_user_or_404
from tenancy.models import Role

PAGE_SIZE = 50


@login_required
@changes_need(Role.ADMIN, reading_too=True)
def audit_page(request, slug):
    project = project_for_user_or_404(request.user, slug)
    typed = {name: request.GET.get(name, "").strip() for name in audit_log.FILTERS}
    filters = audit_log.AuditFilters(data={name: value for name, value in typed.items() if value})
    # A bad filter is named beside its input and the log shown unfiltered (a 200: it is a page to read).
    errors = {} if filters.is_valid() else flatten_errors(filters.errors)
    page = Paginator(audit_log.entries(project, filters.validated_data if not errors else {}),
                     PAGE_SIZE).get_page(request.GET.get("page"))
    for entry in page.object_list:
        entry.rows = audit_log.changed_rows(entry)
        entry.others = audit_log.other_details(entry)
        entry.actor_type = audit_log.actor_kind(entry)
    return render(request, "provenance/audit_log.html", {
        "project": project, "page": page, "entries": page.object_list, "typed": typed, "errors": errors,
        "filtered": any(typed.values()), **audit_log.known_values(project),
    })
