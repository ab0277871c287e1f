from pathlib import Path

from paths import cache_dir, log_level


def test_defaults(monkeypatch):
    monkeypatch.setenv("QUILL_HOME", "/srv/app")
    monkeypatch.delenv("QUILL_SPOOL", raising=False)
    monkeypatch.delenv("QUILL_VERBOSITY", raising=False)
    assert cache_dir() == Path("/srv/app/cache")
    assert log_level() == "info"
