"""A workspace's runs as a front end lists and shows them: their logs and their accounts.

Every run leaves a log in `.toolgate/runs/RUN.json` (`agent/runlog.py`). A front end lists
them, reads one, and draws its account (what the run changed, ran and tested) in the words the
engine has for it: `account_lines` for the account, `decision_words` for who decided a call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolgate.agent.account import account_lines as account_lines
from toolgate.agent.account import build_account
from toolgate.agent.account import decision_words as decision_words
from toolgate.agent.runlog import RunLogError as RunLogError
from toolgate.agent.runlog import read_run_log as read_run_log
from toolgate.agent.runlog import run_logs as run_logs
from toolgate.agent.runlog import runs_dir


def account_of(doc: dict[str, Any], root: Path) -> dict[str, Any]:
    """A log's own account; for a log written before runs kept one, built from its events."""
    if isinstance(doc.get("account"), dict):
        return dict(doc["account"])
    path = runs_dir(root) / f"{doc.get('run_id')}.json"
    return build_account(doc["events"], doc["steps"], 0.0, str(path))
