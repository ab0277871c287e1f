"""docs_render: Markdown text on stdin (as JSON arguments), one HTML page as JSON on stdout."""

import html
import json
import sys


def render(markdown: str) -> tuple[str, list[str]]:
    """The body's HTML and the headings' texts."""
    out: list[str] = []
    headings: list[str] = []
    paragraph: list[str] = []
    items: list[str] = []

    def flush() -> None:
        if paragraph:
            out.append("<p>" + " ".join(paragraph) + "</p>")
            paragraph.clear()
        if items:
            out.append("<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>")
            items.clear()

    for raw in markdown.splitlines():
        line = raw.strip()
        if not line:
            flush()
        elif line.startswith("#"):
            flush()
            level = min(len(line) - len(line.lstrip("#")), 6)
            text = html.escape(line[level:].strip())
            headings.append(text)
            out.append(f"<h{level}>{text}</h{level}>")
        elif line.startswith(("- ", "* ")):
            if paragraph:
                flush()
            items.append(html.escape(line[2:].strip()))
        else:
            paragraph.append(html.escape(line))
    flush()
    return "\n".join(out), headings


def main() -> None:
    args = json.load(sys.stdin)
    print("docs_render: rendering", len(args["markdown"]), "characters", file=sys.stderr)
    body, headings = render(args["markdown"])
    title = args.get("title") or (headings[0] if headings else "Document")
    page = (
        f"<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
        f"</head>\n<body>\n{body}\n</body></html>\n"
    )
    json.dump({"html": page, "title": title, "headings": len(headings)}, sys.stdout)


if __name__ == "__main__":
    main()
