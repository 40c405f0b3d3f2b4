"""The trace list's filter bar: query-string parameters to reading.TraceFilters."""

from datetime import timedelta

from django import forms
from django.utils import timezone

from core import filter_values
from provenance.costs import MAX_MODELS
from provenance.dag.reading import TraceFilters

RANGES = {"15m": timedelta(minutes=15), "1h": timedelta(hours=1), "24h": timedelta(days=1), "7d": timedelta(days=7)}


class TraceFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=255, label="Search",
                        widget=forms.TextInput(attrs={"placeholder": "Trace id or product id", "type": "search"}))
    # Drawn by templates/filter_value.html, the one filter widget; these say what is accepted.
    agent = forms.CharField(required=False, max_length=255, label="Agent")
    step = forms.CharField(required=False, max_length=255, label="Step")
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

    def to_filters(self, known: dict[str, list[str]]) -> TraceFilters:
        """The filters of a valid form; an invalid field is left out, not guessed.
        The agent and step typed are resolved against the `known` values
        ({"agent": [...], "step": [...]}); `resolved` keeps what each became."""
        self.is_valid()
        data = self.cleaned_data  # holds only the fields that validated
        self.resolved = {name: filter_values.resolve(data.get(name, ""), known.get(name, ())) for name in known}
        since, until = data.get("since"), data.get("until")
        if data.get("range") in RANGES:
            since, until = timezone.now() - RANGES[data["range"]], None
        return TraceFilters(
            agent_id=self.resolved["agent"].filter_value,
            step=self.resolved["step"].filter_value,
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


class ProjectSettingsForm(forms.Form):
    """The settings page's fields. Checked here only for shape; the rules are
    `provenance.project_settings`' (the API's), mapped back onto these fields."""

    API_FIELDS = {
        "high_uncertainty_threshold": "high_uncertainty_threshold",
        "retention.trace_days": "trace_days",
        "retention.full_content_days": "full_content_days",
        "retention.keep_full_below": "keep_full_below",
    }

    high_uncertainty_threshold = forms.FloatField(
        label="High-uncertainty threshold", min_value=0, max_value=1, widget=forms.NumberInput(attrs={"step": "0.01"}),
        help_text="A node with a confidence below this is high-uncertainty (charts, alerts, root causes).")
    trace_days = forms.IntegerField(
        label="Delete traces after (days)", required=False, widget=forms.NumberInput(attrs={"placeholder": "never"}),
        help_text="Traces whose last activity is older are deleted with everything that is theirs. Empty: never.")
    full_content_days = forms.IntegerField(
        label="Keep full text for (days)", required=False, widget=forms.NumberInput(attrs={"placeholder": "always"}),
        help_text="After this, only nodes that matter keep their full content and raw input. Empty: always.")
    keep_full_below = forms.FloatField(
        label="Keep full text below confidence", min_value=0, max_value=1,
        widget=forms.NumberInput(attrs={"step": "0.01"}),
        help_text="Past that age, nodes below this confidence keep their full text, as do fused, failed, escalated "
                  "and reviewed nodes and the direct parents of all of these.")

    def __init__(self, project, data=None):
        super().__init__(data, initial={
            "high_uncertainty_threshold": project.high_uncertainty_threshold,
            "trace_days": project.trace_days,
            "full_content_days": project.full_content_days,
            "keep_full_below": project.keep_full_below,
        })

    def changes(self) -> dict:
        data = self.cleaned_data
        return {
            "high_uncertainty_threshold": data["high_uncertainty_threshold"],
            "retention": {key: data[key] for key in ("trace_days", "full_content_days", "keep_full_below")},
        }

    # The API's words for an absent value, and what a person does on this form instead.
    API_WORDS = {", or null to keep forever": "; leave it empty to keep forever"}

    def add_api_errors(self, fields: dict[str, str]) -> None:
        for api_field, message in fields.items():
            for api_words, form_words in self.API_WORDS.items():
                message = message.replace(api_words, form_words)
            self.add_error(self.API_FIELDS.get(api_field), message)


class PriceRows:
    """The settings page's price table: one row per model (model, input and
    output USD per million tokens) and an empty row to add one. A row whose
    model is emptied is removed. The rules are `provenance.costs`' (the API's)."""

    PREFIX = "price"

    def __init__(self, prices: dict, data=None, new_model: str = ""):
        self.errors: dict[int, list[str]] = {}
        if data is None:
            self.rows = [{"model": model, "input": entry["input_per_mtok"], "output": entry["output_per_mtok"]}
                         for model, entry in sorted(prices.items())]
            self.rows.append({"model": new_model if new_model not in prices else "", "input": "", "output": ""})
        else:
            raw = data.get(f"{self.PREFIX}-count", "")
            count = min(int(raw), MAX_MODELS + 1) if raw.isascii() and raw.isdigit() else 0
            self.rows = [{"model": data.get(f"{self.PREFIX}-{i}-model", "").strip(),
                          "input": data.get(f"{self.PREFIX}-{i}-input", "").strip(),
                          "output": data.get(f"{self.PREFIX}-{i}-output", "").strip()} for i in range(count)]

    def table(self) -> dict:
        """The price table the rows ask for, in the API's shape (values the
        API would refuse are passed on as they are, for it to name)."""
        prices = {}
        for row in self.rows:
            if row["model"]:
                prices[row["model"]] = {"input_per_mtok": number_or_text(row["input"]),
                                        "output_per_mtok": number_or_text(row["output"])}
        return prices

    def add_api_errors(self, fields: dict[str, str]) -> None:
        by_model = {row["model"]: i for i, row in enumerate(self.rows)}
        for field, message in fields.items():
            model, _, key = field.removeprefix("prices.").rpartition(".")
            if model not in by_model:
                model, key = field.removeprefix("prices."), ""
            where = by_model.get(model, len(self.rows) - 1)
            self.errors.setdefault(where, []).append(f"{key.replace('_per_mtok', '') or 'price'}: {message}")

    def numbered(self) -> list[dict]:
        return [{**row, "index": i, "errors": self.errors.get(i, [])} for i, row in enumerate(self.rows)]


def number_or_text(value: str):
    try:
        return float(value)
    except ValueError:
        return value
