"""Ingest: events in (the JSON batch, OTLP spans), judged one by one
(`validation`, `json_limits`), stored in a handful of statements (`write`).
OTLP spans become events by the conventions of `span_conventions` (`otlp`,
served by `otlp_views` at /v1/traces)."""
