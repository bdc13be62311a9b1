"""Every public libshield function is documented: a Doxygen comment that
states its calling context, and for `_isr` functions, its cost.

The headers are read as text, so this runs without a compiler."""

import re
from pathlib import Path

import pytest

INCLUDE = Path(__file__).resolve().parents[1] / "libshield" / "include" / "rtshield"

# A declaration at the start of a line: return type, name, parameters, ';'.
DECL = re.compile(
    r"(?m)^(?:const\s+)?[a-z_][a-z0-9_]*(?:\s*\*)?\s+\**\s*(rts_[a-z0-9_]+)\s*\([^;{)]*\)\s*;"
)


def declarations():
    for header in sorted(INCLUDE.glob("*.h")):
        text = header.read_text()
        for m in DECL.finditer(text):
            before = text[: m.start()].rstrip()
            doc = before[before.rfind("/*") :] if before.endswith("*/") else ""
            yield header.name, m.group(1), doc


DECLS = list(declarations())


def test_headers_declare_functions():
    names = {name for _, name, _ in DECLS}
    assert "rts_classifier_classify_isr" in names and "rts_port_apply" in names
    assert len(names) > 100


@pytest.mark.parametrize("header,name,doc", DECLS, ids=[d[1] for d in DECLS])
def test_function_has_doxygen_context(header, name, doc):
    assert doc.startswith("/**"), f"{header}: {name} has no Doxygen comment"
    assert "Context" in doc, f"{header}: {name} does not state its calling context"


#: Declared outside its component's header: the port's assert hook sits beside
#: RTS_ASSERT in rts_opts.h (docs/decisions/naming.md).
OUTSIDE_ITS_HEADER = {("rts_opts.h", "rts_port_assert_failed")}
NAMED = [d for d in DECLS if (d[0], d[1]) not in OUTSIDE_ITS_HEADER]


@pytest.mark.parametrize("header,name,doc", NAMED, ids=[d[1] for d in NAMED])
def test_function_named_after_its_header(header, name, doc):
    """A call names its header: every function of rts_X.h is rts_X or rts_X_*."""
    module = header[: -len(".h")]
    assert name == module or name.startswith(module + "_"), (
        f"{header}: {name} does not start with {module}_ (docs/decisions/naming.md)"
    )


def test_names_outside_their_header_are_declared():
    assert OUTSIDE_ITS_HEADER <= {(h, n) for h, n, _ in DECLS}


ISR_DECLS = [d for d in DECLS if d[1].endswith("_isr")]


@pytest.mark.parametrize("header,name,doc", ISR_DECLS, ids=[d[1] for d in ISR_DECLS])
def test_isr_function_states_cost(header, name, doc):
    msg = f"{header}: {name} (interrupt context) does not state its cost"
    assert re.search(r"Cost|O\(1\)", doc), msg


DOC = Path(__file__).resolve().parents[1] / "docs" / "components" / "index.md"


def isr_cost_section():
    text = DOC.read_text()
    start = text.find("## Worst-case cost of the interrupt-context calls")
    assert start >= 0, "docs/components/index.md has no worst-case cost section"
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


@pytest.mark.parametrize("header,name,doc", ISR_DECLS, ids=[d[1] for d in ISR_DECLS])
def test_isr_function_in_cost_table(header, name, doc):
    rows = [line for line in isr_cost_section().splitlines() if line.startswith("|")]
    assert any(f"`{name}()`" in row for row in rows), f"{name} missing from the cost table"


def test_reference_links_code_sizes():
    assert "(../codesize.md)" in DOC.read_text()


def may_run_in_isr(doc):
    ctx = doc[doc.find("Context") :]
    return re.search(r"\bISR\b|\bany\b", ctx.split(".")[0]) is not None


ANY_CTX = [d for d in DECLS if not d[1].endswith("_isr") and may_run_in_isr(d[2])]


@pytest.mark.parametrize("header,name,doc", ANY_CTX, ids=[d[1] for d in ANY_CTX])
def test_isr_callable_function_states_cost(header, name, doc):
    """A function without the suffix that an ISR may still call (context "any"
    or "ISR or task") must state its cost like an `_isr` function."""
    msg = f"{header}: {name} may run in an ISR but does not state its cost"
    assert re.search(r"Cost|O\(1\)|O\(m\)|no loop", doc), msg
