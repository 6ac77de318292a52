"""The documents stay true to the code.

* Every relative link of README.md, docs/ and benchmarks/README.md (Markdown links and
  images, HTML ``href``/``src``) names a file of the repository.
* Every ```python block of README.md runs, as a file in a fresh directory, and where the
  README shows what it prints (a plain block introduced by "prints"), prints exactly that.
  A block right after ``<!-- skip-test: reason -->`` is only compiled: it needs something
  a test cannot have (a finished sweep).
* No internal issue numbers in anything a user reads, and no words in README.md and docs/
  about how the documents were made (who wrote what, for whom, on which branch) nor
  timings taken on a loaded machine.
* The API reference builds with pdoc and every ``ldp.…`` reference in it resolves
  (:mod:`experiments.apidocs`), and its checks catch a broken reference and annotation.

The Python blocks of docs/privacy.md and docs/cluster.md are run by the tests of what they
show (``tests/test_audit.py``, ``tests/experiments/test_distributed.py``).
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from experiments import apidocs

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
DOCUMENTS = sorted([README, REPO / "benchmarks" / "README.md", *(REPO / "docs").rglob("*.md")])
#: What a user reads about the project (benchmarks/README.md is a measurement report: its
#: machine and load are part of each measurement).
USER_DOCUMENTS = sorted([README, *(REPO / "docs").rglob("*.md")])

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
#: [text](target "title") or ![alt](target): the target (one level of brackets in the text)
MARKDOWN_LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)"
)
HTML_LINK = re.compile(r"""\b(?:href|src)\s*=\s*["']([^"']+)["']""")
EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//|#)", re.I)
ISSUE_NUMBER = re.compile(r"[Ii]ssues? #?[0-9]+")
#: How a document was made, or a timing taken under load: not for a user document.
PROCESS_WORDS = re.compile(
    r"\bthe lead\b|\bhelpers? \"|\bhelper [a-z0-9]+ \(|\b(?:this|on|another|other) branch"
    r"|\bbranch `|\bmerge notes\b|\bnotes for\b|\bthe brief\b|\bsession\b"
    r"|\bunder load\b|\bload average\b|\bloaded (?:[0-9]-core )?machine|\bshared machine"
    r"|\b(?:this|our|the project's) [0-9]-core machine",
    re.I,
)
PYTHON_BLOCK = re.compile(
    r"(?P<before>[^\n]*)\n```python\n(?P<code>.*?)^```[ \t]*\n"
    r"(?:\s*prints\s*\n\s*```\n(?P<prints>.*?)^```)?",
    re.S | re.M,
)
SKIP = re.compile(r"<!--\s*skip-test:\s*(?P<reason>[^>]*?)\s*-->")
#: ``<!-- setup: python -m experiments.run ... -->``: a command the test runs first, in the
#: block's directory (a small version of the sweep the README ran before the block)
SETUP = re.compile(r"<!--\s*setup:\s*(?P<command>[^>]*?)\s*-->")


def _relative(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def links(text: str) -> list[str]:
    """The link targets of a Markdown text, outside code spans and fenced blocks."""
    prose = INLINE_CODE.sub("", FENCE.sub("", text))
    return MARKDOWN_LINK.findall(prose) + HTML_LINK.findall(prose)


def broken_links(document: Path) -> list[str]:
    """``target`` for every relative link of ``document`` that names no file of the repo."""
    broken = []
    for target in links(document.read_text(encoding="utf-8")):
        if EXTERNAL.match(target):
            continue
        path = (document.parent / target.split("#", 1)[0]).resolve()
        if not (path.is_relative_to(REPO) and path.exists()):
            broken.append(target)
    return broken


def python_blocks(text: str) -> list[tuple[str, str | None, str | None, str | None]]:
    """``(code, expected output, skip reason, setup command)`` for every python block (None
    where the block has none)."""
    blocks = []
    for match in PYTHON_BLOCK.finditer("\n" + text):
        skip, setup = SKIP.search(match["before"]), SETUP.search(match["before"])
        blocks.append(
            (
                match["code"],
                match["prints"],
                skip["reason"] if skip else None,
                setup["command"] if setup else None,
            )
        )
    return blocks


# --- the helpers themselves, on texts whose answer is known -----------------------------


def test_links_are_found_in_prose_only() -> None:
    text = textwrap.dedent(
        """\
        See [a](docs/a.md#part), ![b](img/b.png), <img src="c.png"> and [d](https://x.org).
        Not `[e](e.md)`, nor

        ```md
        [f](f.md)
        ```
        """
    )
    assert links(text) == ["docs/a.md#part", "img/b.png", "https://x.org", "c.png"]


def test_python_blocks_carry_their_output_and_skip_marker() -> None:
    text = textwrap.dedent(
        """\
        ```python
        print(1)
        ```

        prints

        ```
        1
        ```

        <!-- skip-test: needs a sweep -->
        ```python
        plot()
        ```

        <!-- setup: python -m experiments.run name=x -->
        ```python
        plot("results/x")
        ```
        """
    )
    assert python_blocks(text) == [
        ("print(1)\n", "1\n", None, None),
        ("plot()\n", None, "needs a sweep", None),
        ('plot("results/x")\n', None, None, "python -m experiments.run name=x"),
    ]


def test_a_missing_file_is_a_broken_link(tmp_path: Path) -> None:
    document = REPO / "docs" / "README.md"
    assert not broken_links(document)
    fake = tmp_path / "x.md"
    fake.write_text("[gone](no/such/file.md) [web](https://example.org) [top](#top)\n")
    assert broken_links(fake) == ["no/such/file.md"]  # outside the repository too


# --- the documents ---------------------------------------------------------------------


@pytest.mark.parametrize("document", DOCUMENTS, ids=_relative)
def test_relative_links_name_existing_files(document: Path) -> None:
    assert broken_links(document) == []


@pytest.mark.parametrize("document", DOCUMENTS, ids=_relative)
def test_no_internal_issue_numbers(document: Path) -> None:
    lines = document.read_text(encoding="utf-8").splitlines()
    assert [line for line in lines if ISSUE_NUMBER.search(line)] == []


def test_process_words_are_found() -> None:
    planted = [
        "Notes for the lead: what this branch adds.",
        'Helper "apple". The two ratios were taken under load.',
        "12 s on this 2-core machine (load average 3).",
        "measured on a shared machine",
    ]
    assert all(PROCESS_WORDS.search(line) for line in planted)
    plain = "A merged value; the loader reads it. Workers share the machine's cores."
    assert PROCESS_WORDS.search(plain) is None


@pytest.mark.parametrize("document", USER_DOCUMENTS, ids=_relative)
def test_no_words_about_how_the_document_was_made(document: Path) -> None:
    lines = document.read_text(encoding="utf-8").splitlines()
    assert [line for line in lines if PROCESS_WORDS.search(line)] == []


def _readme_and_report_counts() -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The claim counts the README states, and those of the committed report's summary:
    (claims, reproduced, partly, differ, not measurable, true by construction)."""
    readme = " ".join(README.read_text(encoding="utf-8").split())
    said = re.search(
        r"\((\d+) claims: (\d+) reproduced, (\d+) partly, (\d+) differs?, (\d+) not "
        r"measurable, and (\d+) true by construction",
        readme,
    )
    report = (REPO / "results" / "REPRODUCTION.md").read_text(encoding="utf-8")
    made = re.search(
        r"\*\*Summary:\*\* (\d+) claims: (\d+) reproduced, (\d+) partly reproduced, "
        r"(\d+) differs, (\d+) not measurable; counted apart, (\d+) true by construction",
        report,
    )
    assert said is not None, "README: the sentence counting the report's claims is gone"
    assert made is not None, "results/REPRODUCTION.md: no summary line"
    return tuple(map(int, said.groups())), tuple(map(int, made.groups()))


def test_the_readme_counts_the_committed_report() -> None:
    said, made = _readme_and_report_counts()
    assert said == made, f"README says {said}, results/REPRODUCTION.md {made}"


def test_the_readme_stays_short() -> None:
    assert len(README.read_text(encoding="utf-8")) <= 10_000


README_BLOCKS = python_blocks(README.read_text(encoding="utf-8"))


def test_the_readme_has_examples_and_few_skips() -> None:
    runnable = [block for block in README_BLOCKS if block[2] is None]  # setup blocks run too
    assert len(runnable) >= 2
    assert len(README_BLOCKS) - len(runnable) <= 1


@pytest.mark.parametrize(
    ("code", "prints", "skip", "setup"),
    README_BLOCKS,
    ids=[f"block{i}" for i in range(len(README_BLOCKS))],
)
def test_the_python_blocks_of_the_readme_run(code, prints, skip, setup, tmp_path: Path) -> None:
    compile(code, "README.md", "exec")
    if skip is not None:
        pytest.skip(f"compiled only: {skip}")
    if setup is not None:  # e.g. a small version of the sweep the block plots
        words = setup.split()
        command = [sys.executable, *words[1:]] if words[0] == "python" else words
        ran = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert ran.returncode == 0, ran.stderr[-3000:]
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    if prints is not None:
        assert done.stdout == prints


# --- the API reference -----------------------------------------------------------------


@pytest.mark.slow
def test_the_api_reference_builds_clean(tmp_path: Path) -> None:
    assert apidocs.build(tmp_path / "api") == []
    assert (tmp_path / "api" / "ldp" / "oracles.html").exists()
    assert (tmp_path / "api" / "ldp" / "oracles" / "local_hashing.html").exists()


def test_the_api_reference_check_catches_broken_references(tmp_path: Path, monkeypatch) -> None:
    package = tmp_path / "docfixture"
    package.mkdir()
    (package / "__init__.py").write_text(
        '"""See `docfixture.real`, :func:`~docfixture.real.f`, `docfixture.gone` and\n'
        ':class:`~docfixture.real.Gone`."""\n'
    )
    (package / "real.py").write_text(
        textwrap.dedent(
            '''\
            """A module."""

            from __future__ import annotations


            def f(x: int) -> Missing:
                """Cites :func:`docfixture.real.f`, which exists."""
            '''
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    problems = apidocs.build(tmp_path / "api", package="docfixture")
    unresolved = {p.rsplit(" ", 1)[1] for p in problems if "unresolved reference" in p}
    assert unresolved == {"docfixture.gone", "docfixture.real.Gone"}, problems
    pdoc_warnings = [p for p in problems if p.startswith("pdoc: ")]
    assert len(pdoc_warnings) == 1 and "Missing" in pdoc_warnings[0], problems
    assert "docfixture.real.f" in pdoc_warnings[0]


def _undocumented(parameters: set[str], glossary: str) -> set[str]:
    """The parameter names the glossary never names in code style."""
    return parameters - set(re.findall(r"`([A-Za-z_][A-Za-z_0-9]*)", glossary))


def test_the_glossary_names_every_public_parameter_of_every_protocol() -> None:
    from ldp import registry

    parameters = {
        spec.name
        for name in registry.protocols()
        for spec in registry.parameters(registry.get(name).cls)
    }
    glossary = (REPO / "docs" / "glossary.md").read_text(encoding="utf-8")
    assert not _undocumented(parameters, glossary), "add them to docs/glossary.md"
    # the check sees a new name: a parameter nobody documented is reported
    assert _undocumented(parameters | {"frobnicate"}, glossary) == {"frobnicate"}
