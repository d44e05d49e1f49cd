"""The prediction chain: a network and its data -> quotient charts -> shocks -> predicted steps -> scores.

- :mod:`~shockflow.prediction.extraction` — charts, initial data ``L̄``, metric and viscosity from a network;
- :mod:`~shockflow.prediction.shock_report` — the shocks of a solved field (time, place, strength);
- :mod:`~shockflow.prediction.mapping` — from a chart's shock to a training step (the model choice);
- :mod:`~shockflow.prediction.predict` — :func:`predict_case`: extract, solve, map, never seeing the loss;
- :mod:`~shockflow.prediction.transitions` — the transition detector for loss curves;
- :mod:`~shockflow.prediction.truth` — the true transitions of a run from its parameter snapshots;
- :mod:`~shockflow.prediction.comparison` — predicted against true: matching, recall, precision, the all-in median.
"""

from shockflow.prediction.comparison import Comparison, ComparisonError, Match, compare_log, match_transitions
from shockflow.prediction.extraction import ChartData, Extraction, ExtractionError, extract
from shockflow.prediction.mapping import ChartShock, Optimiser, PredictedTransition, PredictionError, predict_transitions
from shockflow.prediction.predict import PredictionStage, predict_case
from shockflow.prediction.shock_report import ShockRecord, ShockReport, report_hessian, report_line
from shockflow.prediction.transitions import Transition, TransitionSettings, find_transitions, transitions_table

__all__ = ["ChartData", "ChartShock", "Comparison", "ComparisonError", "Extraction", "ExtractionError", "Match",
           "Optimiser", "PredictedTransition", "PredictionError", "PredictionStage", "ShockRecord", "ShockReport",
           "Transition", "TransitionSettings", "compare_log", "extract", "find_transitions", "match_transitions",
           "predict_case", "predict_transitions", "report_hessian", "report_line", "transitions_table"]
