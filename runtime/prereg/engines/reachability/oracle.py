"""The text oracle: re-derives a row's label from its payload alone.

It never looks at the latent world.  The pool is recognised from the framing sentence at the
start of the first line; the query (subject, destination) from the last line; the fact lines
are those between the facts marker and the question line, the last of them being the rule.
Edges come from lines that are exactly a rendering of the chain's link class (``<x> <link>
<y>.``), enabled entities from lines that are exactly a rendering of the relay class (``<x> is
<enabled>.``).  The rule line must be one of the configured rules rendered with that pool's
words; its semantics decide the label:

- ``enabled-path``: depth-first search from the subject; a node reaches the destination if it
  has an edge to it, or an edge to an enabled, unvisited node that reaches it;
- ``one-enabled-relay`` (D17's rule): yes iff some r has subject→r, r enabled and r→destination.

Anything else (no recognised framing, question, marker or rule) is an :class:`OracleError`.
"""

from __future__ import annotations

import re

from .config import EngineConfig


class OracleError(ValueError):
    """The payload cannot be read by the oracle."""


_ENTITY = r"(\S+)"


def template_regex(template: str, entity_names: tuple[str, ...], words: dict[str, str]) -> str:
    """A regex matching exactly ``template`` with entity placeholders captured as ``\\S+``."""
    out = []
    pos = 0
    for m in re.finditer(r"\{(\w+)\}", template):
        out.append(re.escape(template[pos : m.start()]))
        name = m.group(1)
        if name in entity_names:
            out.append(_ENTITY)
        else:
            out.append(re.escape(words[name]))
        pos = m.end()
    out.append(re.escape(template[pos:]))
    return "^" + "".join(out) + "$"


class TextOracle:
    def __init__(self, ec: EngineConfig):
        self.ec = ec
        self.yes = ec.label_yes
        self.no = ec.label_no
        link_t = ec.cue_by_name[ec.link_class].template
        relay_t = ec.cue_by_name[ec.relay_class].template
        self.pools = []
        for p in ec.pools:
            w = dict(p.words)
            edge = re.compile(template_regex(link_t, ("a", "b"), w))
            state = re.compile(template_regex(relay_t, ("a",), w))
            rules = {r.template.format(**w): r.semantics for r in ec.rules.values()}
            self.pools.append((p.framing, edge, state, rules))
        self.question = re.compile(
            template_regex(ec.question_template, ("subject", "destination"), {})
        )
        self.marker = ec.facts_marker

    def label(self, payload: str) -> str:
        lines = payload.split("\n")
        header = lines[0]
        pool = next((p for p in self.pools if header.startswith(p[0])), None)
        if pool is None:
            raise OracleError("the first line starts with no known framing sentence")
        _, edge_re, state_re, rules = pool
        m = self.question.match(lines[-1])
        if m is None:
            raise OracleError("the last line is not a question")
        subject, destination = m.group(1), m.group(2)
        try:
            start = lines.index(self.marker)
        except ValueError:
            raise OracleError(f"no {self.marker!r} line") from None
        facts = lines[start + 1 : -1]
        if not facts:
            raise OracleError("no rule line")
        semantics = rules.get(facts[-1])
        if semantics is None:
            raise OracleError(f"unknown rule line {facts[-1]!r}")
        edges: dict[str, list[str]] = {}
        enabled: set[str] = set()
        for line in facts[:-1]:
            e = edge_re.match(line)
            if e is not None:
                edges.setdefault(e.group(1), []).append(e.group(2))
                continue
            st = state_re.match(line)
            if st is not None:
                enabled.add(st.group(1))
        if semantics == "one-enabled-relay":
            ok = any(
                r in enabled and destination in edges.get(r, ()) for r in edges.get(subject, ())
            )
        else:
            ok = _reaches(subject, destination, edges, enabled)
        return self.yes if ok else self.no


def _reaches(start: str, dest: str, edges: dict[str, list[str]], enabled: set[str]) -> bool:
    visited = {start}
    stack = [start]
    while stack:  # iterative DFS: same reachability as the recursive definition
        node = stack.pop()
        nxt = edges.get(node, ())
        if dest in nxt:
            return True
        for y in nxt:
            if y in enabled and y not in visited:
                visited.add(y)
                stack.append(y)
    return False
