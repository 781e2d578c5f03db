"""`formula solve`: the pinned JSON shape and clear errors."""
import json

import pytest

from cli.main import main


def test_solve_json(capsys: pytest.CaptureFixture[str]) -> None:
    ents = {"sex": "Male", "age": [53, "years"], "weight": [87.0, "kg"], "height": [175, "cm"],
            "creatinine": [1.39, "mg/dL"]}
    assert main(["solve", "--calculator", "2", "--entities", json.dumps(ents), "--format", "json",
                 "--variant", "benchmark"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"value", "unit", "calculator", "version", "variant"} <= set(out)
    assert out["calculator"] == "creatinine-clearance-cockcroft-gault"
    assert out["variant"] == "benchmark"
    # one-shot row 1 of MedCalc-Bench Verified: ground truth 67.00495 mL/min
    assert out["value"] == pytest.approx(67.00495, abs=1e-5)
    assert out["unit"] == "mL/min"


def test_solve_defaults_to_the_published_formula(capsys: pytest.CaptureFixture[str]) -> None:
    """A person computing a patient's value gets the formula as published, and the answer says so."""
    ents = {"sex": "Male", "age": [53, "years"], "weight": [87.0, "kg"], "height": [175, "cm"],
            "creatinine": [1.39, "mg/dL"]}
    assert main(["solve", "--calculator", "2", "--entities", json.dumps(ents), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # Cockcroft & Gault 1976: (140 - age) x weight / (72 x creatinine), actual body weight
    assert out["variant"] == "published" and out["value"] == pytest.approx((140 - 53) * 87.0 / (72 * 1.39), abs=1e-3)
    assert main(["solve", "--calculator", "2", "--entities", json.dumps(ents)]) == 0
    assert "(published)" in capsys.readouterr().out.splitlines()[0]


def test_solve_from_file_and_slug(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "e.json"
    f.write_text(json.dumps({"weight": [70, "kg"], "height": [175, "cm"]}), encoding="utf-8")
    assert main(["solve", "--calculator", "body-mass-index", "--entities", f"@{f}", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == pytest.approx(70 / 1.75**2, abs=1e-5)


@pytest.mark.parametrize("ents, message", [
    ({"weight": [70, "stone"], "height": [175, "cm"]}, "unknown unit 'stone'; accepted: kg, lbs, g"),
    ({"weight": [70, "kg"]}, "'height': required input is missing"),
    ({"weight": [70, "kg"], "height": [175, "cm"], "shoe": 9}, "'shoe': unknown input"),
    ({"weight": ["70", "kg"], "height": [175, "cm"]}, "expected a number"),
    ({"weight": [7000, "kg"], "height": [175, "cm"]}, "outside the plausible range"),
])
def test_solve_bad_input_is_a_clear_error(ents, message, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "--calculator", "6", "--entities", json.dumps(ents)]) == 1
    err = capsys.readouterr().err
    assert "body-mass-index" in err and message in err
    assert "Traceback" not in err


def test_solve_unknown_calculator_and_bad_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "--calculator", "9999", "--entities", "{}"]) == 1
    assert "unknown calculator" in capsys.readouterr().err
    assert main(["solve", "--calculator", "6", "--entities", "{not json"]) == 1
    assert "not valid JSON" in capsys.readouterr().err
    assert main(["solve", "--calculator", "6", "--entities", "@/no/such/file.json"]) == 1
    assert "cannot read /no/such/file.json" in capsys.readouterr().err


def test_solve_looks_each_thing_up_once(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Traced: one `formula solve` looks its calculator up once, reads the input's spellings once (the rename
    check included) and searches for the registry root once (cli.main; every layer reads the root it holds)."""
    import registry.loader as loader
    import solver.library.spelling as spelling
    from registry.model import Registry
    from tests.helpers import count_calls

    lookups = count_calls(monkeypatch, Registry, "get")
    cleanups = count_calls(monkeypatch, spelling, "clean")
    renames = count_calls(monkeypatch, spelling, "_name_renames")
    searches: list[object] = []
    real = loader.find_root

    def find_root(root: object = None) -> object:
        if root is None:  # a search (--root, the environment, upwards); a path given is not looked for
            searches.append(root)
        return real(root)  # type: ignore[arg-type]

    monkeypatch.setattr(loader, "find_root", find_root)
    ents = {"SEX": "f", "age": [53, "yrs"], "weight": [191.8, "lb"], "height": [175, "cm"],
            "creatinine": [122.9, "umol/L"]}
    assert main(["solve", "--calculator", "2", "--entities", json.dumps(ents), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["calculator"] == "creatinine-clearance-cockcroft-gault"
    assert (len(lookups), len(cleanups), len(renames), len(searches)) == (1, 1, 1, 1)
