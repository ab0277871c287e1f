"""One build of the package from the checkout at a time, whichever test worker asks.

`python -m build` (the wheel test) and `pip wheel` (the .vsix, which bundles the wheel) both
write the checkout's `build/` and `server/toolgate.egg-info`; two at once delete each other's
files mid-build.
"""

from __future__ import annotations

import fcntl
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK = Path(tempfile.gettempdir()) / "toolgate-tests-checkout-build.lock"


@contextmanager
def building_from_checkout() -> Iterator[None]:
    """Hold the checkout's build for the duration of the block."""
    with LOCK.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)
