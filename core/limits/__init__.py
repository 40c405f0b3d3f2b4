"""Where limits keep their counts (store.py), shared by every worker."""
