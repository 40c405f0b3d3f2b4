"""Request limits shared by every worker: per-API-key rate limits, and throttles
on repeated failed sign-ins and unknown API keys."""
