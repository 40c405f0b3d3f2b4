"""The trace list's filter bar: query-string parameters to reading.TraceFilters."""

from datetime import timedelta

from django import forms
from django.utils import timezone

from provenance.reading import TraceFilters

RANGES = {"15m": timedelta(minutes=15), "1h": timedelta(hours=1), "24h": timedelta(days=1), "7d": timedelta(days=7)}


class TraceFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=255, label="Search",
                        widget=forms.TextInput(attrs={"placeholder": "Trace id or product id", "type": "search"}))
    agent = forms.CharField(required=False, max_length=255, label="Agent",
                            widget=forms.TextInput(attrs={"list": "known-agents", "placeholder": "Any agent"}))
    step = forms.CharField(required=False, max_length=255, label="Step",
                           widget=forms.TextInput(attrs={"list": "known-steps", "placeholder": "Any step"}))
    range = forms.ChoiceField(
        required=False, label="Time range",
        choices=[("", "Any time"), ("15m", "Last 15 minutes"), ("1h", "Last hour"), ("24h", "Last 24 hours"),
                 ("7d", "Last 7 days"), ("custom", "Custom…")],
    )
    since = forms.DateTimeField(required=False, label="From",
                                widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"))
    until = forms.DateTimeField(required=False, label="To",
                                widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"))
    fused = forms.BooleanField(required=False, label="Fused only")
    low = forms.BooleanField(required=False, label="Low confidence only")
    incorrect = forms.BooleanField(required=False, label="Reviewed incorrect")

    def clean(self):
        data = super().clean()
        since, until = data.get("since"), data.get("until")
        if since and until and since >= until:
            self.add_error("until", "must be later than From")
        return data

    def to_filters(self) -> TraceFilters:
        """The filters of a valid form; an invalid field is left out, not guessed."""
        self.is_valid()
        data = self.cleaned_data  # holds only the fields that validated
        since, until = data.get("since"), data.get("until")
        if data.get("range") in RANGES:
            since, until = timezone.now() - RANGES[data["range"]], None
        return TraceFilters(
            agent_id=data.get("agent", ""),
            step=data.get("step", ""),
            since=since,
            until=until,
            has_fused=True if data.get("fused") else None,
            has_low_confidence=True if data.get("low") else None,
            verdict="incorrect" if data.get("incorrect") else "",
            search=data.get("q", "").strip(),
        )

    @property
    def is_filtered(self) -> bool:
        return any(value not in ("", None, False) for value in getattr(self, "cleaned_data", {}).values())
