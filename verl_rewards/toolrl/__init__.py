"""The ToolRL reward family: format, tool-call correctness and think-length rewards for tool-using agents.

Reimplemented from a written specification of ToolRL's ``rlla.py`` reward (qiancheng0/ToolRL, Apache-2.0):
same scores, including its documented quirks, with bounded work on untrusted model output.

Modules: :mod:`.options` (variants, config/env), :mod:`.ranges` (schedules, score bounds),
:mod:`.extraction` (assistant turn, chat templates), :mod:`.format_reward`, :mod:`.correctness`,
:mod:`.length`, :mod:`.scoring` (``compute_score``) and :mod:`.data` (dataset conversion to verl parquet).
"""

from .extraction import MAX_PREDICTION_CHARS, detect_chat_template, extract_prediction
from .options import ENV_VARS, ToolRLOptions, UnknownOptionError
from .ranges import correctness_range, format_range, length_target, score_bounds
from .scoring import compute_score, score_prediction, score_with_options

__all__ = [
    "ENV_VARS",
    "MAX_PREDICTION_CHARS",
    "ToolRLOptions",
    "UnknownOptionError",
    "compute_score",
    "correctness_range",
    "detect_chat_template",
    "extract_prediction",
    "format_range",
    "length_target",
    "score_bounds",
    "score_prediction",
    "score_with_options",
]
