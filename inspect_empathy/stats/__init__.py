"""The statistics of agreement between a judge and people.

- `_agreement`: the plain statistics (correlations, QWK, Krippendorff's alpha, Somers' d);
- `_resample`: bootstrap resamples as draw counts, drawn once and shared;
- `metrics`: the Inspect metrics of the tasks (the headline, agreement, score shapes);
- `humans`: the human ceiling, raters against each other and a judge beside them;
- `calibration`: maps from a judge's scores onto the human 1-5 scale;
- `alttest`, `alt_metric`: the alternative-annotator test, and as a log metric;
- `consistency`: a judge against itself over epochs;
- `conversation`: metrics per conversation of per-turn samples.

Prediction-powered inference (``inspect-empathy human-scale``) reads logs, so it lives in
`compare.ppi`.
"""
