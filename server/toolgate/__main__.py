"""Allow ``python -m toolgate``."""

from toolgate.cli import main

raise SystemExit(main())
