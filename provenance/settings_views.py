"""The project settings page: the high-uncertainty threshold and retention,
with a preview of what the retention job would do today, and its past runs;
the price table, in a form of its own.

A project's admins change them (tenancy/membership.py); every other member reads them.
The same validation as `PATCH /api/v1/project` (`provenance.project_settings`).
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render

from provenance import project_settings
from provenance.forms import PriceRows, ProjectSettingsForm
from provenance.models import RetentionRun
from provenance.retention import job
from tenancy.membership import changes_need, may, project_for_user_or_404
from tenancy.models import Role

RUNS_SHOWN = 20


@login_required
@changes_need(Role.ADMIN)
def settings_page(request, slug):
    project = project_for_user_or_404(request.user, slug)
    may_change = may(request, project, Role.ADMIN)
    posted = request.POST if request.method == "POST" and may_change else None
    prices = PriceRows(project.prices, posted if posted and "save_prices" in posted else None,
                       new_model=request.GET.get("model", "")[:255])
    if posted and "save_prices" in posted:
        try:
            project_settings.change(project, {"prices": prices.table()}, request.user)
        except project_settings.SettingsError as error:
            prices.add_api_errors(error.fields)
        else:
            messages.success(request, "Prices saved. Nodes stored from now on are priced with them; "
                                      "costs already stored stay as they were.")
            return redirect("provenance:settings", project.slug)
        posted = None
    form = ProjectSettingsForm(project, posted)
    preview = None
    if form.is_bound and form.is_valid():
        changes = form.changes()
        try:
            validated = project_settings.validate_changes(changes)
        except project_settings.SettingsError as error:
            form.add_api_errors(error.fields)
        else:
            if "save" in request.POST:
                project_settings.change(project, changes, request.user)
                messages.success(request, "Settings saved. The retention job applies them tonight at 03:30.")
                return redirect("provenance:settings", project.slug)
            merged = {**job.Retention.of(project).as_dict(), **{k: v for k, v in validated.items()
                                                                if k in project_settings.RETENTION_FIELDS}}
            preview = job.preview(project, job.Retention(**merged))
    if preview is None:
        preview = job.preview(project, job.Retention.of(project))
    return render(request, "provenance/settings.html", {
        "project": project,
        "form": form,
        "may_change": may_change,
        "preview": preview,
        # Figures only for values that hold: an invalid field previews nothing ("would cut 0").
        "previewing_unsaved": form.is_bound and not form.errors,
        "unpreviewable": form.is_bound and bool(form.errors),
        "runs": RetentionRun.objects.filter(project=project).order_by("-started_at", "-pk")[:RUNS_SHOWN],
        "full_share": job.share_with_full_text(project),
        "prices": prices,
    })
