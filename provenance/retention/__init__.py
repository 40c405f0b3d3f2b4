"""Storage tiers and data lifecycle, per project (contract: "Project settings
and retention").

- `full_text.py`: which nodes keep their full text past `full_content_days`;
- `summarize.py`: cutting the others to a summary, in bounded batches;
- `deletion.py`: deleting traces older than `trace_days` with all that is theirs;
- `job.py`: the nightly job (`apply_retention`), its run records and the preview.
"""
