"""Counts over a window read from the rollups that only ever grow, plus the
raw rows beside them (metrics.counts.split):

- histograms.py: values of confidence and of each reported metric on the bin grid;
- fuse_reasons.py: fuse decisions by decision and reason;
- judged_reviews.py: the node each review judges, for calibration;
- policy_versions.py: what each fuse policy version did (decisions, what followed).
"""
