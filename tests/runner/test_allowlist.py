import pytest

from toolgate.runner.allowlist import (
    DEFAULT_ALLOWED,
    CommandRefused,
    check_command,
    is_allowed,
    looks_like_shell,
    parse_allowed,
    split_command,
)


def test_split_uses_posix_quoting():
    assert split_command("pytest -k 'a and b' tests/x.py") == [
        "pytest",
        "-k",
        "a and b",
        "tests/x.py",
    ]


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("pytest 'unbalanced", "quotes"),
        ('pytest "also', "quotes"),
        ("pytest\x00 -q", "NUL"),
    ],
)
def test_split_refuses_bad_commands_with_a_reason(command, reason):
    with pytest.raises(CommandRefused, match=reason):
        split_command(command)


@pytest.mark.parametrize(
    "command",
    [
        "pytest",
        "pytest -q --tb=short",
        "python -m pytest tests/",
        "python3 -m pytest -x",
        "py.test -q",
    ],
)
def test_default_prefixes_allow_pytest_with_any_arguments(command):
    assert is_allowed(split_command(command))
    assert is_allowed(split_command(command), DEFAULT_ALLOWED)


@pytest.mark.parametrize(
    "command",
    [
        "python -c 'import os'",
        "python -m pip install x",
        "python pytest",
        "rm -rf /",
        "pytestx -q",
        "/tmp/evil/pytest",
        "python -m",
        "bash -c pytest",
    ],
)
def test_other_commands_are_not_allowed(command):
    assert not is_allowed(split_command(command))


def test_allowed_entries_may_be_strings_or_token_sequences():
    assert parse_allowed(["make test", ("tox", "-e"), ["npm", "test"]]) == [
        ("make", "test"),
        ("tox", "-e"),
        ("npm", "test"),
    ]
    assert is_allowed(["make", "test", "-j4"], ["make test"])
    assert not is_allowed(["make", "install"], ["make test"])
    assert is_allowed(["tox", "-e", "py311"], [("tox", "-e")])
    assert not is_allowed(["tox"], [("tox", "-e")])


def test_an_empty_allowed_entry_is_an_error_not_allow_everything():
    with pytest.raises(ValueError, match="empty"):
        parse_allowed([""])
    with pytest.raises(ValueError, match="empty"):
        parse_allowed([()])


def test_shell_metacharacters_stay_literal_tokens():
    argv = split_command("pytest -q; rm -rf / && echo $(whoami) | tee out > log")
    # The shell syntax is just text inside argv: the allow-list sees a pytest command whose
    # arguments happen to contain these characters, and nothing interprets them.
    assert argv[:2] == ["pytest", "-q;"]
    assert "&&" in argv and "|" in argv and ">" in argv and "$(whoami)" in argv
    assert is_allowed(argv)
    note = looks_like_shell(argv)
    assert note is not None
    assert "not interpreted" in note
    assert "'&&'" in note


@pytest.mark.parametrize(
    "command",
    ["pytest -q", "pytest -k 'a or b'", "python -m pytest tests/test_x.py::test_y -x"],
)
def test_plain_commands_get_no_shell_note(command):
    assert looks_like_shell(split_command(command)) is None


@pytest.mark.parametrize(
    "command",
    ["pytest ; ls", "pytest -q | head", "pytest > out.txt", "pytest `id`", "pytest $HOME"],
)
def test_shell_notes_name_the_token(command):
    note = looks_like_shell(split_command(command))
    assert note is not None and "without a shell" in note


def test_check_command_returns_argv_or_refuses_clearly():
    assert check_command("python -m pytest -q") == ["python", "-m", "pytest", "-q"]
    with pytest.raises(CommandRefused) as refused:
        check_command("make test | tee log")
    message = str(refused.value)
    assert "`make test '|' tee log` is not on the allow-list" in message
    assert "`pytest …`" in message and "`python -m pytest …`" in message
    assert "shell syntax is not interpreted" in message
    with pytest.raises(CommandRefused, match="empty"):
        check_command([])
    assert check_command(["make", "test"], ["make test"]) == ["make", "test"]
