"""The registry of the built-in syntaxes whose end depends on their content.

Each lists its openings (`toolgate.calls.openings`); every parser reads them, in this order,
which is the order of precedence where two could open at the same place (`<tool>` is the tag's
before it is a tool named `tool`; Aider's fence before a ```` ```json ```` one). Syntaxes of
this kind from outside come after them, in the order `registered()` gives.
"""

from __future__ import annotations

from toolgate.calls.syntaxes.aider import Aider
from toolgate.calls.syntaxes.arrow import ArrowBlock
from toolgate.calls.syntaxes.base import Syntax
from toolgate.calls.syntaxes.deepseek_dsml import DeepSeekDsml
from toolgate.calls.syntaxes.fenced_json import FencedJson
from toolgate.calls.syntaxes.hermes import Hermes
from toolgate.calls.syntaxes.llama_json import LlamaJson
from toolgate.calls.syntaxes.mistral import Mistral
from toolgate.calls.syntaxes.phi4_mini import Phi4Mini
from toolgate.calls.syntaxes.pythonic import Pythonic
from toolgate.calls.syntaxes.qwen_xml import QwenXml
from toolgate.calls.syntaxes.short_tag import ShortTag
from toolgate.calls.syntaxes.tag import Tag
from toolgate.calls.syntaxes.xml_element import XmlElement

CONTENT_ENDED: tuple[type[Syntax], ...] = (
    Tag,
    ShortTag,
    Hermes,
    QwenXml,
    DeepSeekDsml,
    LlamaJson,
    XmlElement,
    Mistral,
    ArrowBlock,
    Phi4Mini,
    Pythonic,
    Aider,
    FencedJson,
)

# Each name a call of these syntaxes is recorded under, with its shape.
SYNTAXES: dict[str, str] = dict(form for cls in CONTENT_ENDED for form in cls.forms)
