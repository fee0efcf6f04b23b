"""tau-bench (v1) retail and airline on tau-bench's own data: environments, reward, verl training data.

Public API:

* :func:`load_domain` ``("retail" | "airline", data_dir=None)`` → :class:`TauBenchDomain` (data from
  ``data_dir`` or ``TAU_BENCH_DATA_DIR``; cached per name and folder). Task ids are ``"<split>/<index>"``.
* ``domain.make_env(task_id=None)`` → :class:`TauBenchEnvironment`; ``env.step(name, kwargs) -> str`` (tool
  outputs and errors exactly as tau-bench's, ``respond`` and ``transfer_to_human_agents`` included);
  ``env.get_data_hash()`` equals tau-bench's ``Env.get_data_hash()``.
* :func:`tau_bench_reward` ``(domain, task_id, messages)`` → :class:`RewardResult` with tau-bench's ``reward``
  and ``info``.
* :func:`user_system_prompt` — tau-bench's user simulator prompt (for conversations with a simulated user).

It is built, as the tau2 package is, on the engine (:mod:`verl_rewards.engine`): copy-on-write state (with
tau-bench's hash as its codec), toolkit, environment, trajectory format, errors, conversation engine and verl
adapters; it imports nothing of tau2. :mod:`.data` builds verl datasets (``verl-rewards prepare
tau_bench``), :mod:`.verl_tools` holds the verl tool adapters and :mod:`.verl_scorer` the manager's reward.
"""

from .domain import TauBenchDomain, TauBenchTask, load_domain
from .environment import RESPOND_ACTION, STOP_TOKEN, TauBenchEnvironment
from .reward import RewardResult, tau_bench_reward
from .user import GREETING, user_system_prompt

__all__ = [
    "GREETING",
    "RESPOND_ACTION",
    "STOP_TOKEN",
    "RewardResult",
    "TauBenchDomain",
    "TauBenchEnvironment",
    "TauBenchTask",
    "load_domain",
    "tau_bench_reward",
    "user_system_prompt",
]
