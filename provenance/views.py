from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render

from provenance import reading
from provenance.membership import project_for_user_or_404, projects_for
from provenance.models import Trace


@login_required
def home(request):
    projects = list(projects_for(request.user))
    if len(projects) == 1:
        return redirect(projects[0])
    return render(request, "provenance/home.html", {"projects": projects})


@login_required
def trace_list(request, slug):
    project = project_for_user_or_404(request.user, slug)
    page = reading.with_fused_counts(list(reading.traces(project, reading.TraceFilters())[:50]))
    return render(request, "provenance/trace_list.html", {"project": project, "traces": page})


@login_required
def trace_detail(request, slug, trace_id):
    project = project_for_user_or_404(request.user, slug)
    trace = get_object_or_404(Trace, project=project, trace_id=trace_id)
    return render(request, "provenance/trace_detail.html", {"project": project, "trace": trace,
                                                            "nodes": reading.trace_nodes(trace)})


@login_required
def bad_answers(request, slug):
    project = project_for_user_or_404(request.user, slug)
    return render(request, "provenance/trace_list.html", {"project": project, "traces": []})
