"""Where limits keep their counts, shared by every worker (store.py)."""
