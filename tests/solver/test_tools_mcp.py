"""The MCP server, through a real MCP client session over stdio (`formula serve --mcp` as a subprocess)."""
from __future__ import annotations

import json
import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from registry.loader import PROJECT_ROOT, get_registry
from solver.library import compute
from solver.records import version_hash

CG = {"sex": "Male", "age": [53, "years"], "weight": [87.0, "kg"], "height": [175, "cm"],
      "creatinine": [1.39, "mg/dL"]}
MDRD = {"age": [60, "years"], "sex": "Female", "Race": "Black", "creatinine": [1.2, "mg/dL"]}
HAS_BLED = {"age": [70, "years"], "Number of Alcoholic Drinks Per Week": 9, "Hypertension": True,
            "Labile international normalized ratio": "True"}


async def _session_run() -> dict:
    params = StdioServerParameters(command=sys.executable, args=["-m", "cli", "serve", "--mcp", "--variant", "benchmark"],
                                   cwd=str(PROJECT_ROOT))
    out: dict = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            out["tools"] = (await session.list_tools()).tools
            out["list"] = await session.call_tool("list_calculators", {})
            out["explain"] = await session.call_tool("explain", {"calculator": "mdrd-gfr"})
            out["cg"] = await session.call_tool("creatinine-clearance-cockcroft-gault", CG)
            out["mdrd"] = await session.call_tool("mdrd-gfr", MDRD)
            out["has_bled"] = await session.call_tool("has-bled", HAS_BLED)
            out["bad"] = await session.call_tool("creatinine-clearance-cockcroft-gault",
                                                 dict(CG, sex="mle", creatinine=[1.39, "mg%"]))
            out["bad_unit"] = await session.call_tool("creatinine-clearance-cockcroft-gault",
                                                      dict(CG, creatinine=[1.39, "mg%"]))
            missing = dict(CG)
            missing.pop("age")
            out["missing"] = await session.call_tool("creatinine-clearance-cockcroft-gault", missing)
    return out


def test_mcp_session_over_stdio():
    out = anyio.run(_session_run)
    reg = get_registry()
    names = {t.name for t in out["tools"]}
    assert {"list_calculators", "explain"} <= names
    assert {c.slug for c in reg.calculators.values()} <= names  # one tool per active calculator
    cg_tool = next(t for t in out["tools"] if t.name == "creatinine-clearance-cockcroft-gault")
    assert "creatinine" in cg_tool.input_schema["properties"]
    assert version_hash(reg, reg.get(2)) in cg_tool.description

    listed = out["list"].structured_content["calculators"]
    assert len(listed) == len(reg.calculators)

    ex = out["explain"].structured_content
    assert ex["concern"]["type"] == "replaced_by_guideline" and ex["successors"]
    assert "MDRD" in ex["text"] or "175" in ex["text"]

    # nested: Cockcroft-Gault shows BMI, ideal and adjusted body weight as sub-results
    cg = out["cg"].structured_content
    assert not out["cg"].is_error
    assert cg["value"] == compute(2, CG, variant="benchmark").value == 67.00495
    assert cg["route"] == "library" and cg["content_hash"] == version_hash(reg, reg.get(2))
    assert [s["calculator"] for s in cg["sub_results"]] == ["body-mass-index", "ideal-body-weight",
                                                             "adjusted-body-weight"]
    assert cg["inputs"]["height"]["value"] == 1.75
    assert json.loads(out["cg"].content[0].text)["value"] == cg["value"]

    mdrd = out["mdrd"].structured_content
    assert mdrd["value"] == compute("mdrd-gfr", MDRD, variant="benchmark").value
    assert any(w.startswith("replaced by CKD-EPI") for w in mdrd["warnings"])

    hb = out["has_bled"].structured_content
    assert hb["value"] == compute("has-bled", HAS_BLED, variant="benchmark").value == 4

    # a bad call: the first failing gate is named (enum before unit), and every finding of that gate
    bad = out["bad"]
    assert bad.is_error
    assert "enum check failed" in bad.content[0].text and "'sex'" in bad.content[0].text
    assert bad.structured_content["error"]["gate"] == "enum"
    assert out["bad_unit"].structured_content["error"]["gate"] == "unit"
    assert "mg%" in out["bad_unit"].content[0].text
    assert out["missing"].structured_content["error"]["gate"] == "completeness"
    assert out["missing"].structured_content["error"]["findings"][0]["variable"] == "age"


def test_handle_without_transport():
    """Refusals the gates cannot see come from the library, named as the compute stage."""
    from solver.tools.mcp_server import handle

    reg = get_registry()
    r = handle(reg, "estimated-due-date", {"Last menstrual date": "02/30/2020", "cycle length": 28}, "benchmark")
    assert r.is_error and r.structured_content["error"]["gate"] == "compute"
    assert "MM/DD/YYYY" in r.content[0].text
    assert handle(reg, "no-such-tool", {}, "benchmark").is_error
    assert handle(reg, "explain", {"calculator": "nope"}, "benchmark").is_error
    ok = handle(reg, "explain", {"calculator": 2}, "benchmark")
    assert ok.structured_content["depends_on"] == ["body-mass-index", "ideal-body-weight", "adjusted-body-weight"]
    pub = handle(reg, "creatinine-clearance-cockcroft-gault", CG, "published").structured_content
    assert pub["variant"] == "published" and pub["value"] == compute(2, CG, variant="published").value


def test_mcp_server_defaults_to_the_published_variant() -> None:
    """People computing a patient's value get the formulas as published; the answer names the variant."""
    import inspect

    from cli.main import build_parser
    from solver.tools.mcp_server import build_server, serve_stdio

    assert build_parser().parse_args(["serve", "--mcp"]).variant == "published"
    for fn in (build_server, serve_stdio):
        assert inspect.signature(fn).parameters["variant"].default == "published"
    assert "published variant" in (build_server().instructions or "")
