from pathlib import Path

from paths import cache_dir, log_level


def test_defaults(monkeypatch):
    monkeypatch.setenv("APP_HOME", "/srv/app")
    monkeypatch.delenv("APP_CACHE_DIR", raising=False)
    monkeypatch.delenv("APP_LOG_LEVEL", raising=False)
    assert cache_dir() == Path("/srv/app/cache")
    assert log_level() == "info"
