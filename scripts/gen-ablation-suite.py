#!/usr/bin/env python3
"""Generates fixtures/harness/ablation/suite.json, the offline guardrail ablation (docs/ablation.md).

The case matrix is fixed here: each plan x each preset x each seed, once with every fault kind
drawn (the "mixed" cases) and once per single fault kind. The sim model is deterministic, so each
case's ending is a fact about the current loop: the script runs the matrix once through mf-eval
with provisional expectations, then writes the suite with every case pinned to what its run
showed (terminal, disposition, model and tool calls, guardrail violations by kind). A later change
in behaviour is then a failing case, to be understood before the suite is regenerated.

Usage: scripts/gen-ablation-suite.py --mf-eval build/bin/mf-eval [--output FILE]
The output defaults to fixtures/harness/ablation/suite.json; the paths in the suite are relative
to that directory, so a copy elsewhere is for comparison only.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ABLATION = os.path.join(ROOT, "fixtures", "harness", "ablation")

SUITE_ID = "harness-ablation"
FAULTS = "0.3"
MIXED_SEEDS = range(1, 21)
KIND_SEEDS = range(1, 11)
PRESETS = ["full", "no_rescue", "no_nudge", "no_steps", "no_recovery", "bare"]
KINDS = [
    "text_instead_of_call",
    "wrong_argument_names",
    "malformed_json",
    "unknown_tool",
    "premature_terminal",
    "skipped_prerequisite",
    "repeated_call",
]
# Plan name -> the compiled plan, its correct trajectory, the workspace, and the request.
PLANS = {
    "golden": {
        "plan": "golden.plan.json",
        "trajectory": "../runs/golden-ok.json",
        "workspace": "../../repository",
    },
    "read-submit": {
        "plan": "read-submit.plan.json",
        "trajectory": "../runs/read-submit.json",
        "workspace": "../../repository",
        "request": {"instruction": "Read src/lib.rs, then submit what it says."},
    },
}


def case_id(plan, preset, kinds, seed):
    return f"{plan}.{preset}.{kinds}.s{seed:02d}"


def matrix():
    """Every case without its expectation, in suite order."""
    cases = []
    for plan, p in PLANS.items():
        for preset in PRESETS:
            runs = [("mixed", None, MIXED_SEEDS)] + [(k, k, KIND_SEEDS) for k in KINDS]
            for label, kind, seeds in runs:
                for seed in seeds:
                    model = f"sim:{p['trajectory']}?seed={seed}&faults={FAULTS}"
                    if kind:
                        model += f"&kinds={kind}"
                    case = {
                        "id": case_id(plan, preset, label, seed),
                        "plan": p["plan"],
                        "model": model,
                        "workspace": p["workspace"],
                        "guardrails": preset,
                    }
                    if "request" in p:
                        case["request"] = p["request"]
                    cases.append(case)
    return cases


def absolute(case):
    """The case with its paths resolved against the ablation directory."""
    out = dict(case)
    for key in ("plan", "workspace"):
        out[key] = os.path.normpath(os.path.join(ABLATION, case[key]))
    backend, _, rest = case["model"].partition(":")
    file, sep, query = rest.partition("?")
    out["model"] = f"{backend}:{os.path.normpath(os.path.join(ABLATION, file))}{sep}{query}"
    return out


def pins(result):
    """The expectation that holds exactly for a case's reported run."""
    expect = {"terminal": result["terminal"]}
    if "disposition" in result:
        expect["disposition"] = result["disposition"]
    expect["model_calls"] = result["model_calls"]
    expect["tool_calls"] = result["tool_calls"]
    if result["violations"]:
        expect["violations"] = result["violations"]
    return expect


def dump(suite):
    # One case per line: a regenerated suite diffs case by case.
    lines = [json.dumps(c, sort_keys=False, separators=(", ", ": ")) for c in suite["cases"]]
    return (
        "{\n"
        f'  "suite_id": {json.dumps(suite["suite_id"])},\n'
        '  "cases": [\n    ' + ",\n    ".join(lines) + "\n  ]\n}\n"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mf-eval", required=True, help="the mf-eval binary")
    ap.add_argument("--output", default=os.path.join(ABLATION, "suite.json"))
    ap.add_argument("-j", "--jobs", default="2")
    args = ap.parse_args()

    cases = matrix()
    # The provisional run reads the same files through absolute paths, so it needs no file beside
    # the fixtures; nothing a case shows depends on how its paths are spelled.
    provisional = {
        "suite_id": SUITE_ID,
        "cases": [dict(absolute(c), expect={"terminal": "completed"}) for c in cases],
    }
    with tempfile.TemporaryDirectory(prefix="mf-ablation-") as tmp:
        path = os.path.join(tmp, "suite.json")
        with open(path, "w") as f:
            f.write(dump(provisional))
        run = subprocess.run(
            [args.mf_eval, "run", "--suite", path, "--output", "-", "--fixed-clock",
             "-j", args.jobs, "--quiet"],
            capture_output=True, text=True)
    if run.returncode not in (0, 1):
        sys.exit(f"mf-eval failed ({run.returncode}):\n{run.stderr}")
    results = {c["id"]: c for c in json.loads(run.stdout)["cases"]}

    suite = {"suite_id": SUITE_ID,
             "cases": [dict(c, expect=pins(results[c["id"]])) for c in cases]}
    with open(args.output, "w") as f:
        f.write(dump(suite))


if __name__ == "__main__":
    main()
