#!/usr/bin/env python3
"""Renders the outcome tables of docs/ablation.md from an mf-eval report of the ablation suite.

A run counts as completed when it ended `completed` with disposition `success`. Each case's plan,
preset and fault kinds are read from the suite (its `plan`, `guardrails` and `model` members), so
the tables follow the suite rather than a naming convention.

Usage: scripts/ablation-table.py --suite fixtures/harness/ablation/suite.json --report r.json
Prints Markdown on stdout; tests/cli/ablation.sh compares it with the block in docs/ablation.md.
"""

import argparse
import json
import os
from urllib.parse import parse_qs

PRESETS = ["full", "no_rescue", "no_nudge", "no_steps", "no_recovery", "bare"]
VIOLATIONS = ["rescue", "text_response", "unknown_tool", "malformed_arguments",
              "premature_terminal", "prerequisite", "tool_error", "terminal_rejected"]


def describe(case):
    plan = os.path.basename(case["plan"]).removesuffix(".plan.json")
    preset = case.get("guardrails", "full")
    _, _, query = case["model"].partition("?")
    params = parse_qs(query)
    kinds = params.get("kinds", ["mixed"])[0]
    return plan, preset, kinds, params.get("faults", ["0"])[0]


def rate(runs):
    ok = sum(1 for r in runs if r["terminal"] == "completed" and r.get("disposition") == "success")
    return f"{ok}/{len(runs)} ({100 * ok / len(runs):.0f}%)" if runs else "-"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", required=True)
    ap.add_argument("--report", required=True)
    args = ap.parse_args()
    with open(args.suite) as f:
        suite = json.load(f)
    with open(args.report) as f:
        report = {c["id"]: c for c in json.load(f)["cases"]}

    runs = []  # (plan, preset, kinds, faults, result)
    for case in suite["cases"]:
        runs.append((*describe(case), report[case["id"]]))
    plans = sorted({r[0] for r in runs})
    kinds = [k for k in dict.fromkeys(r[2] for r in runs) if k != "mixed"]
    faults = sorted({r[3] for r in runs})

    def select(plan=None, preset=None, kind=None):
        return [r[4] for r in runs
                if (plan is None or r[0] == plan) and (preset is None or r[1] == preset)
                and (kind is None or r[2] == kind)]

    parts = []
    mixed = select(kind="mixed")
    parts.append(
        f"Completion by preset, every fault kind drawn (faults={','.join(faults)}, "
        f"{len(mixed) // max(len(PRESETS), 1)} runs per preset):\n")
    parts.append(table(
        ["preset"] + plans + ["all"],
        [[f"`{p}`"] + [rate(select(plan=x, preset=p, kind="mixed")) for x in plans]
         + [rate(select(preset=p, kind="mixed"))] for p in PRESETS]))
    per_kind = len(select(preset=PRESETS[0], kind=kinds[0])) if kinds else 0
    parts.append(
        f"\n\nCompletion by fault kind, one kind drawn at a time (both plans, {per_kind} runs per "
        "cell):\n")
    parts.append(table(
        ["fault kind"] + [f"`{p}`" for p in PRESETS],
        [[f"`{k}`"] + [rate(select(preset=p, kind=k)) for p in PRESETS] for k in kinds]))
    parts.append("\n\nGuardrail violations recorded over the mixed runs (sum over runs, by kind):\n")
    rows = []
    for p in PRESETS:
        totals = {v: 0 for v in VIOLATIONS}
        for r in select(preset=p, kind="mixed"):
            for k, n in r["violations"].items():
                totals[k] = totals.get(k, 0) + n
        rows.append([f"`{p}`"] + [str(totals[v]) for v in VIOLATIONS])
    parts.append(table(["preset"] + [f"`{v}`" for v in VIOLATIONS], rows))
    print("".join(parts))


if __name__ == "__main__":
    main()
