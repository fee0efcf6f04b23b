"""tau-bench's Python task and tool lists become the JSON our loaders read by parsing alone: the literal structure
is read, nothing is imported or run, and anything that is not a literal is refused."""

from __future__ import annotations

import json
import re

import pytest

from verl_rewards.benchmark_data.convert import ConvertError, convert, convert_tasks, tool_modules
from verl_rewards.engine.data_dir import TAU_BENCH_DATA

from data_support import require_root


def _as_python(tasks: list[dict], variable: str) -> str:
    """A task list written the way tau-bench writes its files (``Task(...)`` calls with an ``annotator``)."""
    lines = ["from tau_bench.types import Action, Task", "", f"{variable} = ["]
    for i, task in enumerate(tasks):
        actions = ", ".join(f"Action(name={a['name']!r}, kwargs={a['kwargs']!r})" for a in task["actions"])
        lines.append(
            f"    Task(annotator={str(i % 3)!r}, user_id={task['user_id']!r}, instruction={task['instruction']!r}, "
            f"actions=[{actions}], outputs={task['outputs']!r}),"
        )
    return "\n".join([*lines, "]", ""])


@pytest.mark.parametrize(
    ("domain", "split", "variable"),
    [("retail", "test", "TASKS_TEST"), ("retail", "dev", "TASKS_DEV"), ("airline", "test", "TASKS")],
)
def test_real_task_lists_written_as_python_convert_back_byte_for_byte(domain, split, variable):
    path = require_root(TAU_BENCH_DATA, domain) / domain / f"tasks_{split}.json"
    text = path.read_text(encoding="utf-8")
    assert convert_tasks(_as_python(json.loads(text), variable), variable) == text


def test_task_lists_keep_tau_benchs_field_order_and_drop_the_annotator():
    source = 'TASKS = [Task(outputs=["1"], instruction="hi", annotator="2", actions=[], user_id="u")]\n'
    assert json.loads(convert("tasks:TASKS", {"t.py": source})) == [
        {"user_id": "u", "actions": [], "instruction": "hi", "outputs": ["1"]}
    ]
    assert convert_tasks(source, "TASKS").startswith('[\n  {\n    "user_id": "u",')


def test_the_last_assignment_wins_as_running_the_module_would():
    source = 'TASKS = []\nTASKS = [Task(user_id="u", actions=[], instruction="i", outputs=[])]\n'
    assert len(json.loads(convert_tasks(source, "TASKS"))) == 1


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ('TASKS = [Task(user_id=__import__("os").getcwd(), actions=[], instruction="i", outputs=[])]', "not a literal"),
        ('TASKS = [Task(user_id="u", actions=[], instruction="i" * 3, outputs=[])]', "not a literal"),
        ('TASKS = [Task(user_id="u", actions=make(), instruction="i", outputs=[])]', "Task.actions is not a list"),
        ('TASKS = [Task(user_id="u", actions=[], instruction="i")]', "without outputs"),
        ('TASKS = [Task(user_id="u", actions=[], instruction="i", outputs=[], extra=1)]', "unexpected argument"),
        ('TASKS = [Task("u", actions=[], instruction="i", outputs=[])]', "positional arguments"),
        ('TASKS = [Task(user_id=1, actions=[], instruction="i", outputs=[])]', "Task.user_id is int"),
        ('TASKS = [Task(user_id="u", actions=[Action(name="a", kwargs=[])], instruction="i", outputs=[])]', "kwargs"),
        ("TASKS = [dict(user_id='u')]", "expected a Task(...) call"),
        ("TASKS = build()", "TASKS is not a list"),
        ("OTHER = []", "no top-level assignment to TASKS"),
        ("TASKS = [", "not Python"),
    ],
)
def test_anything_but_literals_is_refused_naming_the_file_and_line(source, message):
    with pytest.raises(ConvertError, match=re.escape(message)) as info:
        convert_tasks(source, "TASKS", "envs/x/tasks_test.py")
    assert str(info.value).startswith("envs/x/tasks_test.py")


def test_parsing_never_runs_the_file(tmp_path):
    marker = tmp_path / "ran"
    source = f'open({str(marker)!r}, "w").write("x")\nTASKS = []\n'
    assert convert_tasks(source, "TASKS") == "[]\n"
    assert not marker.exists()


def test_tool_lists_follow_all_tools_order_from_each_classs_get_info():
    init = "from .b import B\nfrom .a import A, Unused\n\nALL_TOOLS = [B, A]\n"
    a = (
        "class A:\n    @staticmethod\n    def get_info():\n        'doc'\n"
        "        return {'type': 'function', 'function': {'name': 'a'}}\n"
    )
    b = "class B:\n    def get_info():\n        return {'type': 'function', 'function': {'name': 'b', 'x': (1, 2)}}\n"
    sources = {"t/tools/__init__.py": init, "t/tools/a.py": a, "t/tools/b.py": b}
    assert tool_modules(init, "t/tools/__init__.py") == ["t/tools/b.py", "t/tools/a.py"]
    out = convert("tools_info", sources)
    assert json.loads(out) == [
        {"type": "function", "function": {"name": "b", "x": [1, 2]}},
        {"type": "function", "function": {"name": "a"}},
    ]
    assert out.endswith("}\n]\n")
    computed = {**sources, "t/tools/a.py": "class A:\n    def get_info():\n        return dict(name='a')\n"}
    with pytest.raises(ConvertError, match=re.escape("t/tools/a.py:3: not a literal")):
        convert("tools_info", computed)
    with pytest.raises(ConvertError, match="which was not given"):
        convert("tools_info", {"t/tools/__init__.py": init, "t/tools/b.py": b})
    with pytest.raises(ConvertError, match="unknown conversion"):
        convert("eval", sources)
