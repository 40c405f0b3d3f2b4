"""The DAG health check.

- `faults.py`: what each finding kind means, and the SQL that finds them;
- `runs.py`: running the check for a project and storing its report;
- `schedule.py`: when the nightly check is due;
- `reports.py`: reading stored reports (the latest, grouped by kind and (agent, step), a page of findings,
  the trend);
- `views.py`: the health page.

The entry points are re-exported here: `from provenance import health`.
"""

from provenance.health.faults import DESCRIPTIONS
from provenance.health.reports import finding_groups, findings_page, latest_finding_count, latest_report, nightly_trend
from provenance.health.runs import check_all, check_due, check_project
from provenance.health.schedule import NIGHTLY_TASK, due_projects, last_scheduled_run

__all__ = [
    "DESCRIPTIONS", "NIGHTLY_TASK", "check_all", "check_due", "check_project", "due_projects", "finding_groups",
    "findings_page",
    "last_scheduled_run", "latest_finding_count", "latest_report", "nightly_trend",
]
