"""A small diff to review and a reviewer's answer that rejects it, shared by review tests."""

from __future__ import annotations

from typing import Any

# Adds `half`, which divides by zero on its line 5: the bug every rejection below points at.
DIFF = """\
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,5 @@
 def add(a, b):
-    return a - b
+    return a + b
+
+def half(x):
+    return x / 0
"""

DIVISION_BY_ZERO: dict[str, Any] = {
    "path": "calc.py",
    "line": 5,
    "severity": "error",
    "message": "Division by zero.",
    "suggestion": "    return x / 2",
}

REJECT: dict[str, Any] = {
    "approved": False,
    "comments": [DIVISION_BY_ZERO],
    "metrics": {"risk": "high"},
}
