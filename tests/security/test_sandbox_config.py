"""The sandbox settings: a workspace may make them stricter, never weaker without the person."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolgate.config import ConfigError, apply_trust, load_config
from toolgate.runner.sandbox import SandboxSettings, bwrap_argv


def _workspace(root: Path, text: str) -> Path:
    (root / ".toolgate").mkdir(exist_ok=True)
    (root / ".toolgate" / "config.toml").write_text(text)
    return root


def test_default_is_auto_without_network(tmp_path: Path) -> None:
    assert load_config(tmp_path).sandbox == SandboxSettings(mode="auto", network=False)


def test_workspace_may_require_it(tmp_path: Path) -> None:
    config = load_config(_workspace(tmp_path, 'sandbox = "required"\n'))
    assert config.sandbox.mode == "required"
    assert config.pending_trust == []


@pytest.mark.parametrize(
    ("text", "key"),
    [('sandbox = "off"\n', "sandbox.mode"), ("[sandbox]\nnetwork = true\n", "sandbox.network")],
)
def test_workspace_cannot_weaken_it_without_confirmation(
    tmp_path: Path, text: str, key: str
) -> None:
    config = load_config(_workspace(tmp_path, text))
    assert config.sandbox == SandboxSettings()
    (item,) = config.pending_trust
    assert item.key == key
    apply_trust(config, {item.fingerprint})
    assert config.sandbox != SandboxSettings()


def test_the_person_may_turn_it_off(tmp_path: Path) -> None:
    config = load_config(tmp_path, overrides={"sandbox": {"mode": "off", "network": True}})
    assert config.sandbox == SandboxSettings(mode="off", network=True)


def test_unknown_mode_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="sandbox"):
        load_config(_workspace(tmp_path, 'sandbox = "sometimes"\n'))


def test_git_and_toolgate_stay_read_only_and_network_goes(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".toolgate").mkdir()
    argv = bwrap_argv(["pytest"], root=tmp_path, cwd=tmp_path)
    joined = " ".join(argv)
    assert f"--ro-bind {tmp_path}/.git {tmp_path}/.git" in joined
    assert f"--ro-bind {tmp_path}/.toolgate {tmp_path}/.toolgate" in joined
    assert "--unshare-net" in argv and "--cap-drop" in argv and "--die-with-parent" in argv
    assert argv[-2:] == ["--", "pytest"]
    assert "--unshare-net" not in bwrap_argv(["x"], root=tmp_path, cwd=tmp_path, network=True)
