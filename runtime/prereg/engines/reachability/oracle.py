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


def _fact_lines_re(edge_rx: str, state_rx: str) -> re.Pattern | None:
    """One multiline pattern for the fact lines joined by newlines: at each line's start the
    edge form (groups 1 and 2), else the state form (group 3), each up to the line's end.

    Neither form can match a newline (entities are ``\\S+``, and the literal text is checked
    to hold none), so a match starts at a line's start and ends at its end, the edge form
    is tried first, and ``findall`` gives each line's match in order: the per-line matches of
    ``edge_rx`` and else ``state_rx``.  None when a literal holds a newline."""
    for rx in (edge_rx, state_rx):
        if not (rx.startswith("^") and rx.endswith("$")) or "\n" in rx:
            return None
    return re.compile(f"(?m)^(?:{edge_rx[1:-1]})$|^(?:{state_rx[1:-1]})$")


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
            edge_rx = template_regex(link_t, ("a", "b"), w)
            state_rx = template_regex(relay_t, ("a",), w)
            edge = re.compile(edge_rx)
            state = re.compile(state_rx)
            rules = {r.template.format(**w): r.semantics for r in ec.rules.values()}
            self.pools.append((p.framing, edge, state, rules, _fact_lines_re(edge_rx, state_rx)))
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
        _, edge_re, state_re, rules, facts_re = pool
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
        if facts_re is not None:
            for a, b, c in facts_re.findall("\n".join(facts[:-1])):
                if a:  # an edge line (its entities are never empty)
                    edges.setdefault(a, []).append(b)
                else:
                    enabled.add(c)
        else:
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
