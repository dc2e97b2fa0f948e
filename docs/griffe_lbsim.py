"""A Griffe extension for the API reference (mkdocs.yml loads it): lbsim's
docstrings are written for ``help()`` and doctest, in reStructuredText's
inline style; this turns them into the Markdown MkDocs renders. Doctest
examples (``>>>`` lines and their output) become Python console blocks,
Sphinx roles (``:class:`Result```) and double backticks become code."""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension, Object

_ROLE = re.compile(r":(?:class|func|meth|attr|mod|data|exc|obj):`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+?)``")


def markdown(text: str) -> str:
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith(">>>"):
            indent = line[: len(line) - len(line.lstrip())]
            block = []
            while i < len(lines) and lines[i].strip() and lines[i].startswith(indent):
                block.append(lines[i][len(indent):].replace("  # doctest: +SKIP", "").replace(" # doctest: +SKIP", ""))
                i += 1
            out += [f"{indent}```pycon", *(indent + b for b in block), f"{indent}```"]
            continue
        out.append(_LITERAL.sub(r"`\1`", _ROLE.sub(r"`\1`", line)))
        i += 1
    return "\n".join(out)


class LbsimDocstrings(Extension):
    def on_object(self, *, obj: Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)

    def on_package(self, *, pkg: Object, **kwargs: Any) -> None:
        # The root package's own docstring (on_object sees only its members).
        self.on_object(obj=pkg)
