"""Every example of the language reference compiles, and every construct has one.

spec/language-examples.yaml holds one short study fragment per construct; docs/language.md
shows each under its class. Here each fragment is placed into a small factorial study (the
`prereg init` starter with a few more fields: tests/fixtures/language-examples/base.yaml) at
the construct's place, and `prereg compile` must accept the result. The fragments and the
base study are read with PyYAML, independently of prereg's loader.
"""

from __future__ import annotations

import contextlib
import copy
import io
import re
import shutil
from pathlib import Path

import pytest
import yaml

from prereg.cli import main
from prereg.compiler import langdoc
from prereg.errors import UserError
from tests.conftest import FIXTURES, ROOT

EXAMPLES = ROOT / "spec" / "language-examples.yaml"
LANGUAGE = ROOT / "spec" / "prereg.linkml.yaml"
BASE = FIXTURES / "language-examples" / "base.yaml"
DOCS = ROOT / "docs" / "language.md"

#: Classes a study spec needs no example of, each with the reason.
EXEMPT = {
    "Any": "the range of a free value, not something a study writes",
}


def _examples() -> list[dict]:
    return yaml.safe_load(EXAMPLES.read_text(encoding="utf-8"))["examples"]


def _classes() -> dict:
    return yaml.safe_load(LANGUAGE.read_text(encoding="utf-8"))["classes"]


def place(base: dict, example: dict) -> dict:
    """The base study with the example's fragment in it: the top-level keys named in
    ``replace`` are dropped first; then a list is appended to the study's list and anything
    else replaces the study's value."""
    study = copy.deepcopy(base)
    for key in example.get("replace") or []:
        study.pop(key, None)
    fragment = yaml.safe_load(example["yaml"])
    for key, value in fragment.items():
        if isinstance(value, list) and isinstance(study.get(key), list):
            study[key] = study[key] + value
        else:
            study[key] = value
    return study


def _compile(tmp_path: Path, study: dict) -> tuple[int, str]:
    project = tmp_path / "project"
    studies = project / "spec" / "studies"
    studies.mkdir(parents=True)
    # the Statistic example names the custom-statistic example's own file
    shutil.copytree(ROOT / "examples" / "custom-statistic" / "statistics", project / "statistics")
    (studies / f"{study['id']}.yaml").write_text(
        yaml.safe_dump(study, sort_keys=False, allow_unicode=True), encoding="utf-8"
    )
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["--project", str(project), "compile"])
    return code, err.getvalue()


def _label(example: dict) -> str:
    return f"{'+'.join(example['for'])}: {example['about'][:40]}"


def test_the_base_study_compiles_alone(tmp_path):
    code, err = _compile(tmp_path, yaml.safe_load(BASE.read_text(encoding="utf-8")))
    assert code == 0, err


@pytest.mark.parametrize("example", _examples(), ids=_label)
def test_each_example_compiles_in_the_base_study(example, tmp_path):
    base = yaml.safe_load(BASE.read_text(encoding="utf-8"))
    study = place(base, example)
    # The fragment is really in the study that is compiled.
    for key, value in yaml.safe_load(example["yaml"]).items():
        if isinstance(value, list):
            assert all(item in study[key] for item in value), key
        else:
            assert study[key] == value, key
    code, err = _compile(tmp_path, study)
    assert code == 0, f"{_label(example)}\n{example['yaml']}\n{err}"


def test_every_class_a_study_writes_has_an_example():
    shown = {name for example in _examples() for name in example["for"]}
    missing = sorted(set(_classes()) - shown - set(EXEMPT))
    assert missing == []
    assert shown <= set(_classes()), sorted(shown - set(_classes()))


def _used(classes: dict, enums: dict, cls: str, value, slots: set, words: set) -> None:
    """Collect the (class, slot) pairs and the (enum, value) pairs a fragment writes, walking
    it from ``cls`` along the schema's ranges."""
    if isinstance(value, list):
        for item in value:
            _used(classes, enums, cls, item, slots, words)
        return
    if not isinstance(value, dict) or not (classes.get(cls) or {}).get("attributes"):
        return  # a value of a standard type or an enum, or a free value (Any)
    for key, item in value.items():
        spec = (classes[cls].get("attributes") or {}).get(key)
        assert spec is not None, f"{cls} has no slot {key!r}"
        slots.add((cls, key))
        rng = (spec or {}).get("range") or "string"
        if rng in enums:
            words.update((rng, str(v)) for v in (item if isinstance(item, list) else [item]))
        _used(classes, enums, rng, item, slots, words)


def test_every_kind_of_metric_condition_and_claim_has_an_example():
    schema = yaml.safe_load(LANGUAGE.read_text(encoding="utf-8"))
    slots: set = set()
    words: set = set()
    for example in _examples():
        fragment = yaml.safe_load(example["yaml"])
        _used(schema["classes"], schema["enums"], "Study", fragment, slots, words)
    kinds = {("MetricKind", str(v)) for v in schema["enums"]["MetricKind"]["permissible_values"]}
    assert sorted(kinds - words) == []
    conditions = {("Condition", s) for s in schema["classes"]["Condition"]["attributes"]}
    assert sorted(conditions - slots) == []
    claims = {
        ("Claim", s)
        for s, spec in schema["classes"]["Claim"]["attributes"].items()
        if spec.get("range", "").endswith("Claim")
    }
    assert len(claims) == 4 and sorted(claims - slots) == []
    # Each sort of analysis input the catalogue's shapes take appears at least once.
    analysis = {("Analysis", s) for s in ("of", "a", "b", "pair_by", "cluster")}
    assert sorted(analysis - slots) == []


def test_each_example_is_short():
    for example in _examples():
        lines = example["yaml"].strip().splitlines()
        assert 3 <= len(lines) <= 14, _label(example)


def test_a_broken_example_is_refused_by_compile(tmp_path):
    # The test can fail: a gate on a metric the study does not define does not compile.
    base = yaml.safe_load(BASE.read_text(encoding="utf-8"))
    bad = {
        "for": ["Gate"],
        "about": "x",
        "yaml": "gates:\n  - {id: g, metric: nope, op: ge, value: 1}\n",
    }
    code, err = _compile(tmp_path, place(base, bad))
    assert code != 0 and "nope" in err


def test_the_reference_shows_each_example_under_its_class():
    text = DOCS.read_text(encoding="utf-8")
    parts = re.split(r"^### (\S+)\n", text, flags=re.M)
    sections = dict(zip(parts[1::2], parts[2::2], strict=True))
    for example in _examples():
        block = "```yaml\n" + example["yaml"].rstrip("\n") + "\n```"
        for name in example["for"]:
            assert block in sections[name], f"{name}: {_label(example)}"


def test_an_example_for_a_class_the_language_lacks_is_refused():
    source = {"classes": {"Gate": {"attributes": {}}}}
    with pytest.raises(UserError, match=r"examples\.yaml: example 1 is for 'Gat'"):
        langdoc.model(
            source,
            "lang.yaml",
            examples=[{"for": ["Gat"], "about": "x", "yaml": "a: 1\n"}],
            examples_source="examples.yaml",
        )


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"for": "Gate", "about": "x", "yaml": "a: 1\n"}, "example 1 needs `for`, a list of"),
        ({"for": ["Gate"], "about": "x"}, "example 1 needs `about` and `yaml`"),
        ({"for": ["Gate"], "about": "x", "yaml": "  \n"}, "example 1 needs `about` and `yaml`"),
        ("gates: []", "example 1 is not a mapping"),
    ],
)
def test_a_malformed_example_is_refused_with_its_number(entry, message):
    source = {"classes": {"Gate": {"attributes": {}}}}
    with pytest.raises(UserError, match="^examples\\.yaml: " + re.escape(message)):
        langdoc.model(source, "lang.yaml", examples=[entry], examples_source="examples.yaml")


def test_the_page_renders_an_example_under_its_class_only():
    source = {"classes": {"Gate": {"description": "A gate."}, "Level": {"description": "L."}}}
    page = langdoc.model(
        source,
        "lang.yaml",
        examples=[{"for": ["Gate"], "about": "A gate on coverage.", "yaml": "gates: []\n"}],
        examples_source="examples.yaml",
    )
    by_name = {c["name"]: c["examples"] for c in page["classes"]}
    assert by_name == {"Gate": [{"about": "A gate on coverage.", "yaml": "gates: []"}], "Level": []}
