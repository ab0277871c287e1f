"""Keep secrets out of everything written or shown."""

from __future__ import annotations

import re
from typing import Any

_KEY_PATTERN = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,}|Bearer\s+[A-Za-z0-9._\-]{8,})")


class Redactor:
    """Replaces known secrets (and things shaped like API keys) with a placeholder."""

    def __init__(self, *secrets: str | None) -> None:
        self._secrets = [s for s in secrets if s and len(s) >= 4]

    def add(self, secret: str | None) -> None:
        """Also hide this secret from now on."""
        if secret and len(secret) >= 4 and secret not in self._secrets:
            self._secrets.append(secret)

    def extend(self, other: Redactor) -> None:
        """Also hide every secret that `other` hides."""
        for secret in other._secrets:
            self.add(secret)

    def text(self, value: str) -> str:
        """A string with every secret hidden."""
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, "[redacted]")
        # The pattern scan is costly on large texts (diffs, file contents): only when it can hit.
        if "sk-" in value or "Bearer" in value:
            value = _KEY_PATTERN.sub("[redacted]", value)
        return value

    def deep(self, value: Any) -> Any:
        """Any JSON-like value with every secret hidden."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.deep(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.deep(v) for v in value]
        return value
