"""The statistics the dashboards compute from counts and judged nodes, free of
database access: bimodality of a distribution, drift from a baseline
(PSI, Kolmogorov–Smirnov), calibration against review verdicts."""
