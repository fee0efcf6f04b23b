"""The gold policy, in one place: what a perfect agent sends for a row of our ``prepare`` output, and the
conversation it produces in our environments (used by ``verl-rewards export-sft gold`` and by scripted rollouts).
"""

from .episodes import GoldEpisode, gold_conversation, gold_reward, play_gold, play_gold_async, score_episodes
from .policy import gold_assistant_turns
from .rows import GoldError, row_info

__all__ = [
    "GoldEpisode",
    "GoldError",
    "gold_assistant_turns",
    "gold_conversation",
    "gold_reward",
    "play_gold",
    "play_gold_async",
    "row_info",
    "score_episodes",
]
