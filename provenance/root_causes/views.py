"""The "Why answers go wrong" page: a thin wrapper over provenance.root_causes.page."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from provenance.root_causes import aggregate, page
from tenancy.membership import project_for_user_or_404


@login_required
def why_answers_go_wrong(request, slug):
    project = project_for_user_or_404(request.user, slug)
    chosen = page.choices(request.GET)
    context = {"project": project, "chosen": chosen, "ranges": list(page.RANGES), "kinds": aggregate.ANSWER_KINDS,
               "params": request.GET}
    if chosen.errors:
        return render(request, "provenance/root_causes.html", context, status=400)
    chosen = context["chosen"] = page.resolved(project, chosen)
    context.update(page.build(project, chosen))
    return render(request, "provenance/root_causes.html", context)
