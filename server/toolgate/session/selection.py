"""A change asked on a selection: the one-turn task an editor's *Edit Selection* starts.

The model gets the file, the lines and the text as the person sees them (an unsaved buffer
included), and is asked to change those lines only; the change comes back as the usual
reviewed proposal.
"""

from __future__ import annotations

# Selected text beyond this is cut: a selection that long is a file, and the model can read it.
MAX_SELECTION_CHARS = 16_000


def selected_lines(
    text: str, start_line: int, end_line: int, end_character: int
) -> tuple[str, int]:
    """The lines a selection covers, and the 0-based number of the last one.

    Whole lines: a model edits lines, not characters. An end at character 0 of a line leaves
    that line out, as editors select whole lines.
    """
    lines = text.splitlines(keepends=True)
    last = end_line - 1 if end_character == 0 and end_line > start_line else end_line
    last = min(last, len(lines) - 1)
    return "".join(lines[start_line : last + 1]), last


def selection_task(path: str, start_line: int, end_line: int, text: str, instruction: str) -> str:
    """The task for `instruction` on lines `start_line`–`end_line` (1-based) of `path`."""
    shown = text if len(text) <= MAX_SELECTION_CHARS else text[:MAX_SELECTION_CHARS] + "\n[…cut]"
    where = f"line {start_line}" if start_line == end_line else f"lines {start_line}-{end_line}"
    return (
        f"{instruction.strip()}\n\n"
        f"This is about {path}, {where}, which the person selected. As the editor shows them:\n"
        f"```\n{shown.rstrip(chr(10))}\n```\n"
        f"Change those lines as asked with edit_file on {path} and leave the rest of the file as "
        "it is; read more of the file first only if the change needs it. Then say in one "
        "sentence what you changed."
    )
