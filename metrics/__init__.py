"""Windowed metrics, rollups, distributions, drift, calibration and the chart pages.

Start at values.py (the one entry every caller uses), catalog.py (what each
metric means, and where a new one goes); what a node counts as is
provenance/vocabulary.py, shared with every app.
"""
