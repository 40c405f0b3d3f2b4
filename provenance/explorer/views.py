"""The trace explorer's pages: thin wrappers over `explorer` and `reading`, each
scoped to a project the user may see. The trace page's scripts read the API
(`/api/v1/traces/{id}/graph`, a node, its root cause and impact with
`?view=explorer`) with the session, as the browsable API does."""


from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache

from provenance.dag import reading
from provenance.explorer import pages, reads
from provenance.forms import TraceFilterForm
from tenancy.membership import project_for_user_or_404, projects_for

PAGE_SIZE = 50


def visible_trace_or_404(request, slug: str, trace_id: str) -> tuple:
    trace = reads.visible_trace(request.user, slug, trace_id)
    if trace is None:
        raise Http404("No such trace in a project you may see.")
    return trace.project, trace


@login_required
def home(request):
    projects = list(projects_for(request.user))
    if len(projects) == 1:
        return redirect(projects[0])
    return render(request, "provenance/home.html", {"projects": projects})


@never_cache  # live pages: going back must not show a stale copy
@login_required
def trace_list(request, slug):
    project = project_for_user_or_404(request.user, slug)
    form = TraceFilterForm(request.GET)
    agents, steps = reads.recent_agents_and_steps(project)
    filters = form.to_filters({"agent": agents, "step": steps})
    page = Paginator(reading.traces(project, filters), PAGE_SIZE).get_page(request.GET.get("page"))
    traces = pages.list_page(list(page.object_list))
    return render(
        request,
        "provenance/trace_list.html",
        {"project": project, "form": form, "page": page, "traces": traces, "agents": agents, "steps": steps,
         "live": page.number == 1 and not form.is_filtered},
    )


@never_cache  # live pages: going back must not show a stale copy
@login_required
def bad_answers(request, slug):
    project = project_for_user_or_404(request.user, slug)
    page = Paginator(reads.bad_answers(project), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "provenance/bad_answers.html", {"project": project, "page": page, "answers": page})


@never_cache  # live pages: going back must not show a stale copy
@login_required
def trace_detail(request, slug, trace_id):
    project, trace = visible_trace_or_404(request, slug, trace_id)
    final = reading.final_answer(trace)
    context = {
        "project": project,
        "trace": trace,
        "final": final,
        "verdict": reading.latest_verdict(trace),
        "fused_count": reading.fused_counts([trace]).get(trace.pk, 0),
        "totals": reading.trace_totals(trace),
        # `?analyze=PRODUCT_ID` opens the page with that node's root cause shown.
        "analyze": request.GET.get("analyze", ""),
        "selected": request.GET.get("analyze") or request.GET.get("node") or (final.product_id if final else ""),
    }
    return render(request, "provenance/trace_detail.html", context)
