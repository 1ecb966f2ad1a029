#!/usr/bin/env python3
"""Deterministic generator of a valid harness with N nodes, for bench/compile_bench.sh and
tests/cli/compile.sh.

Usage: gen_harness.py OUT_DIR N [--json]

Writes OUT_DIR/harness-N.yaml (or .json with --json), OUT_DIR/catalog-N.json (one tool per node,
unique model tool names) and OUT_DIR/profiles.json. The graph has W = N - T worker nodes and
T = max(1, min(N // 8, 64)) terminal nodes (512 nodes: 64 terminals). Workers form a layered DAG of
layers 8 wide: every worker after the first layer depends on 1-3 distinct workers of earlier layers
(mostly the previous one), the rest of the first layer on w0000, about one edge in four carries an
argument match {path: path}. Worker w0000 is required, so every node depends on it (terminals are
gated by it, MF-G006), and produces the artifact `base`; terminal j depends on 1-3 workers of the last
layers and requires `base` and its own artifact a_jj, which its first prerequisite produces. The same
N always gives the same bytes (a fixed seed; Python's random.Random is stable across versions).
"""
import json
import os
import random
import sys

LAYER = 8


def build(n):
    if n < 2:
        raise SystemExit("gen_harness.py: N must be at least 2")
    terminals = max(1, min(n // 8, 64))
    workers = n - terminals
    rng = random.Random(1000003 * n + 17)
    wid = [f"w{i:04d}" for i in range(workers)]
    tid = [f"t{j:02d}" for j in range(terminals)]

    prereqs = {}  # node id -> [(prerequisite id, argument match?)]
    for i in range(workers):
        layer = i // LAYER
        if layer == 0:  # the rest of the first layer after the required w0000, which gates all
            prereqs[wid[i]] = [(wid[0], False)] if i > 0 else []
            continue
        prev = list(range((layer - 1) * LAYER, layer * LAYER))
        earlier = list(range(0, layer * LAYER))
        k = 1 + rng.randrange(3)
        picks = []
        while len(picks) < k:
            pool = prev if rng.random() < 0.7 else earlier
            p = rng.choice(pool)
            if p not in picks:
                picks.append(p)
        prereqs[wid[i]] = [(wid[p], rng.random() < 0.25) for p in sorted(picks)]

    produces = {w: [] for w in wid}
    produces[wid[0]].append("base")
    tail = list(range(max(0, workers - 3 * LAYER), workers))
    required_by = {}
    for j in range(terminals):
        k = min(1 + rng.randrange(3), len(tail))
        picks = rng.sample(tail, k)
        prereqs[tid[j]] = [(wid[p], rng.random() < 0.25) for p in picks]
        artifact = f"a_{j:02d}"
        produces[wid[picks[0]]].append(artifact)
        required_by[f"RESULT_{j:02d}"] = ["base", artifact]
    return wid, tid, prereqs, produces, required_by


def harness_doc(n, wid, tid, prereqs, produces, required_by):
    nodes = {}
    for w in wid:
        body = {"tool_ref": f"bench.gen.{w}@1"}
        if w == wid[0]:
            body["required"] = True
        if prereqs[w]:
            body["prerequisites"] = [
                {"node_id": p, **({"argument_matches": {"path": "path"}} if m else {})}
                for p, m in prereqs[w]]
        if produces[w]:
            body["produces"] = produces[w]
        nodes[w] = body
    for j, t in enumerate(tid):
        nodes[t] = {
            "tool_ref": f"bench.gen.{t}@1",
            "terminal_result": f"RESULT_{j:02d}",
            "prerequisites": [
                {"node_id": p, **({"argument_matches": {"path": "path"}} if m else {})}
                for p, m in prereqs[t]],
        }
    declared = ["base"] + [f"a_{j:02d}" for j in range(len(tid))]
    return {
        "schema_version": "1.0",
        "kind": "millforge_harness",
        "harness_id": f"millforge.bench.generated.n{n}",
        "harness_version": 1,
        "stage_scope": {"stage_kind_ids": ["builder"]},
        "model_profile_id": "profile.bench",
        "prompt": {
            "policy_id": "millforge.bench.policy.v1",
            "system_instructions": f"A generated harness with {n} nodes.\n",
            "include_request_context": True,
        },
        "budgets": {
            "max_iterations": 256,
            "max_validation_retries": 2,
            "max_tool_errors": 2,
            "max_prerequisite_violations": 2,
            "max_premature_terminal_attempts": 2,
        },
        "context": {
            "strategy_id": "forge.tiered.v1",
            "budget_tokens": 8192,
            "keep_recent_iterations": 2,
            "phase_thresholds": [0.5, 0.75, 0.95],
        },
        "graph": {"nodes": nodes},
        "artifacts": {"declared_artifact_ids": declared, "required_by_terminal": required_by},
    }


def yaml_scalar(v):
    if v is True:
        return "true"
    if isinstance(v, str) and v and all(c.isalnum() or c in "._@" for c in v) and \
            not v[0].isdigit() and v not in ("true", "false", "null"):
        return v
    return json.dumps(v, ensure_ascii=False)


def to_yaml(v, indent=0):
    """Block-style YAML for the generator's own values (strings, ints, floats, bools, lists,
    dicts); lists of scalars and small mappings of scalars are written in flow style."""
    pad = " " * indent
    lines = []
    if isinstance(v, dict):
        for k, x in v.items():
            if isinstance(x, dict) and x and all(not isinstance(y, (dict, list)) for y in x.values()) \
                    and len(x) <= 2:
                inner = ", ".join(f"{a}: {yaml_scalar(b)}" for a, b in x.items())
                lines.append(f"{pad}{k}: {{{inner}}}")
            elif isinstance(x, (dict, list)) and x and not (
                    isinstance(x, list) and all(not isinstance(y, (dict, list)) for y in x)):
                lines.append(f"{pad}{k}:")
                lines.extend(to_yaml(x, indent + 2))
            elif isinstance(x, list):
                lines.append(f"{pad}{k}: [{', '.join(yaml_scalar(y) for y in x)}]")
            elif isinstance(x, str) and "\n" in x:
                lines.append(f"{pad}{k}: |")
                lines.extend(f"{pad}  {s}" for s in x.rstrip("\n").split("\n"))
            else:
                lines.append(f"{pad}{k}: {yaml_scalar(x)}")
    elif isinstance(v, list):
        for x in v:
            sub = to_yaml(x, indent + 2)
            lines.append(f"{pad}- {sub[0].lstrip()}")
            lines.extend(sub[1:])
    return lines


def catalog_doc(wid, tid):
    tools = []
    for w in wid:
        tools.append({
            "tool_id": f"bench.gen.{w}", "version": 1, "model_tool_name": w,
            "description": f"Generated worker tool {w}.",
            "input_schema": {"type": "object", "properties": {
                "path": {"type": "string", "minLength": 1},
                "note": {"type": "string"}}, "required": ["path"]},
            "output_schema": {"type": "object", "properties": {
                "status": {"enum": ["success", "soft_failure", "hard_failure"]}},
                "required": ["status"]},
            "required_capabilities": ["artifact.write", "workspace.read"],
            "side_effect_class": "artifact_write", "idempotency": "idempotent",
        })
    for t in tid:
        tools.append({
            "tool_id": f"bench.gen.{t}", "version": 1, "model_tool_name": t,
            "description": f"Generated terminal tool {t}.",
            "input_schema": {"type": "object", "properties": {
                "summary": {"type": "string", "minLength": 1},
                "path": {"type": "string", "minLength": 1}}, "required": ["summary", "path"]},
            "required_capabilities": ["terminal.intent"],
            "side_effect_class": "terminal", "idempotency": "idempotent", "timeout_ms": 30000,
        })
    return {"schema_version": "1.0", "kind": "millforge_tool_catalog", "tools": tools}


PROFILES = {"schema_version": "1.0", "kind": "millforge_model_profiles",
            "profiles": [{"profile_id": "profile.bench", "backend": "scripted"}]}


def write(path, text):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


def main():
    args = [a for a in sys.argv[1:] if a != "--json"]
    if len(args) != 2:
        raise SystemExit(__doc__)
    out_dir, n = args[0], int(args[1])
    as_json = "--json" in sys.argv[1:]
    wid, tid, prereqs, produces, required_by = build(n)
    doc = harness_doc(n, wid, tid, prereqs, produces, required_by)
    os.makedirs(out_dir, exist_ok=True)
    if as_json:
        write(os.path.join(out_dir, f"harness-{n}.json"), json.dumps(doc, indent=1) + "\n")
    else:
        write(os.path.join(out_dir, f"harness-{n}.yaml"),
              f"# generated by bench/gen_harness.py {n}\n" + "\n".join(to_yaml(doc)) + "\n")
    write(os.path.join(out_dir, f"catalog-{n}.json"), json.dumps(catalog_doc(wid, tid), indent=1) + "\n")
    write(os.path.join(out_dir, "profiles.json"), json.dumps(PROFILES, indent=1) + "\n")


if __name__ == "__main__":
    main()
