"""The tau2 ``mock`` domain: a tiny task tracker with an agent DB (tasks, users) and a user DB (notifications).

Behaviour follows tau2-bench's ``src/tau2/domains/mock/tools.py`` and ``data_model.py``, quirks included (they
shape the hashes the gold replay produces):

* ``create_task`` names the new task ``task_<number of tasks + 1>``; with sparse ids this can overwrite an
  existing task, and the id is appended to the user's list again.
* ``update_task_status`` stores whatever status it is given (not validated).
* ``transfer_to_human_agents`` is generic (non-mutating) and is the domain's terminate tool.
* After a task's ``initialization_data`` patch the user toolkit works on the *agent* DB (tau2 aliasing); the
  user tools then fail with the error tau2 gives (the agent DB has no ``notifications``).
"""

from __future__ import annotations

from typing import Any

from ..domain_spec import DomainSpec
from ..state import DBState
from ..toolkit import GENERIC, READ, WRITE, Record, ToolError, Toolkit, tool
from . import validation

TASK_STATUSES = ("pending", "completed")
NOTIFICATION_STATUSES = ("unread", "read")


ValidationError = validation.ValidationError
"""A record does not fit the mock data model (what pydantic rejects in tau2); a ``ValueError``."""

TASK = validation.Model(
    "Task",
    (
        ("task_id", validation.string, validation.REQUIRED),
        ("title", validation.string, validation.REQUIRED),
        ("description", validation.optional(validation.string), None),
        ("status", validation.literal(*TASK_STATUSES), validation.REQUIRED),
    ),
)
USER = validation.Model(
    "User",
    (
        ("user_id", validation.string, validation.REQUIRED),
        ("name", validation.string, validation.REQUIRED),
        ("tasks", validation.list_of(validation.string), validation.REQUIRED),
    ),
)
NOTIFICATION = validation.no_extra(
    "Notification",
    (
        ("notification_id", validation.string, validation.REQUIRED),
        ("message", validation.string, validation.REQUIRED),
        ("status", validation.literal(*NOTIFICATION_STATUSES), "unread"),
        ("task_id", validation.optional(validation.string), None),
    ),
)


def _collection(raw: Any, key: str, model: validation.Model) -> dict[str, Any]:
    coll = raw.get(key)
    if not isinstance(coll, dict):
        raise ValidationError(f"1 validation error for {model.name}DB\n{key}\n  Field required (an object)")
    return {k: validation.validate(model, v) for k, v in coll.items()}


def normalize_db(raw: Any) -> dict[str, Any]:
    """The agent DB as tau2's ``MockDB.model_dump()``: every field present, defaults filled."""
    if not isinstance(raw, dict):
        raise ValidationError("MockDB must be an object")
    return {
        "tasks": _collection(raw, "tasks", TASK),
        "users": _collection(raw, "users", USER),
    }


def normalize_user_db(raw: Any) -> dict[str, Any]:
    """The user DB as tau2's ``MockUserDB.model_dump()``."""
    if not isinstance(raw, dict):
        raise ValidationError("MockUserDB must be an object")
    return {"notifications": _collection(raw, "notifications", NOTIFICATION)}


class AgentTools(Toolkit):
    """The agent's tools and assertion helpers."""

    db: DBState

    @tool(WRITE)
    def create_task(self, user_id: str, title: str, description: str | None = None) -> Record:
        """Create a new task for a user.

        Args:
            user_id: The ID of the user creating the task.
            title: The title of the task.
            description: Optional description of the task.

        Returns:
            The created task.
        """
        if not self.db.contains("users", user_id):
            raise ToolError(f"User {user_id} not found")
        task_id = f"task_{self.db.size('tasks') + 1}"
        task = validation.validate(
            TASK, {"task_id": task_id, "title": title, "description": description, "status": "pending"}
        )
        self.db.insert("tasks", task_id, task)
        self.db.write("users", user_id)["tasks"].append(task_id)
        return Record(task)

    @tool(READ)
    def get_users(self) -> list[Record]:
        """Get all users in the database.

        Returns:
            A list of all users.
        """
        return [Record(u) for u in self.db.values("users")]

    @tool(WRITE)
    def update_task_status(self, task_id: str, status: str) -> Record:
        """Update the status of a task.

        Args:
            task_id: The ID of the task to update.
            status: The new status of the task ("pending" or "completed").

        Returns:
            The updated task.
        """
        if not self.db.contains("tasks", task_id):
            raise ToolError(f"Task {task_id} not found")
        task = self.db.write("tasks", task_id)
        task["status"] = status  # tau2 quirk: not validated
        return Record(task)

    @tool(GENERIC)
    def transfer_to_human_agents(self, summary: str) -> str:
        """Transfer the user to a human agent, with a summary of the user's issue.

        Use only if the request cannot be handled with the available tools and policy.

        Args:
            summary: A summary of the user's issue.

        Returns:
            A message indicating the user has been transferred.
        """
        return "Transfer successful"

    # ------------------------------------------------------------- helpers (not tools)
    def assert_number_of_tasks(self, user_id: str, expected_number: int) -> bool:
        """Env assertion: the user has exactly ``expected_number`` tasks."""
        if not self.db.contains("users", user_id):
            raise ToolError(f"User {user_id} not found")
        return len(self.db.get("users", user_id)["tasks"]) == expected_number

    def assert_task_status(self, task_id: str, expected_status: str) -> bool:
        """Env assertion: the task has status ``expected_status``."""
        if not self.db.contains("tasks", task_id):
            raise ToolError(f"Task {task_id} not found")
        return self.db.get("tasks", task_id)["status"] == expected_status


class UserTools(Toolkit):
    """The user's tools (their notification inbox) and helpers."""

    db: DBState

    def _notifications(self) -> str:
        if "notifications" not in self.db.collection_names():
            # tau2 aliasing quirk: the user toolkit is looking at the agent DB
            raise ToolError("'MockDB' object has no attribute 'notifications'")
        return "notifications"

    @tool(READ)
    def check_notifications(self) -> list[Record]:
        """Check the user's notifications.

        Returns:
            The list of notifications.
        """
        return [Record(n) for n in self.db.values(self._notifications())]

    @tool(WRITE)
    def dismiss_notification(self, notification_id: str) -> str:
        """Dismiss (mark as read) a notification.

        Args:
            notification_id: The ID of the notification to dismiss.

        Returns:
            A confirmation message.
        """
        coll = self._notifications()
        if not self.db.contains(coll, notification_id):
            raise ToolError(f"Notification {notification_id} not found")
        self.db.write(coll, notification_id)["status"] = "read"
        return f"Notification {notification_id} dismissed"

    # ------------------------------------------------------------- helpers (not tools)
    def add_notification(self, notification_id: str, message: str, task_id: str | None = None) -> Record:
        """Initialisation helper: insert (or overwrite) an unread notification."""
        coll = self._notifications()
        record = validation.validate(
            NOTIFICATION,
            {"notification_id": notification_id, "message": message, "status": "unread", "task_id": task_id},
        )
        self.db.insert(coll, notification_id, record)
        return Record(record)

    def assert_notification_status(self, notification_id: str, expected_status: str) -> bool:
        """Env assertion: the notification has status ``expected_status``."""
        coll = self._notifications()
        if not self.db.contains(coll, notification_id):
            raise ToolError(f"Notification {notification_id} not found")
        return self.db.get(coll, notification_id)["status"] == expected_status


SPEC = DomainSpec(
    name="mock",
    files={
        "db": "db.json",
        "user_db": "user_db.json",
        "policy": "policy.md",
        "tasks": "tasks.json",
        "split": "split_tasks.json",
    },
    terminate_tools=("transfer_to_human_agents",),
    normalize_db=normalize_db,
    agent_toolkit=AgentTools,
    user_toolkit=UserTools,
    normalize_user_db=normalize_user_db,
    tool_schemas="mock.json",  # tau2-bench's own schemas (tool_schemas/PROVENANCE.md)
)
