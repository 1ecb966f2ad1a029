#!/usr/bin/env python3
"""Deterministic generator of a valid v2 trace of about N MB for bench/replay_bench.sh.

Usage: replay_gen.py OUT MB

Writes run_started, then rounds of model_requested / model_responded (inline content with escapes
and non-ASCII) / verification_failed / tool_called / tool_completed / guardrail_violation, then
run_completed. Lines are canonical (sorted keys, compact, integers only, raw UTF-8) and linked into
the hash chain (each names the SHA-256 of the line before it), as mf-run writes them, so mf-replay
must report status ok.
"""
import hashlib
import json
import random
import sys


def main():
    out_path, mb = sys.argv[1], float(sys.argv[2])
    target = int(mb * 1_000_000)
    rng = random.Random(20240611)
    run_id = "bench-run-0001"
    violations = [{"path": "/evidence", "code": "required_field",
                   "message": "required field \"evidence\" is missing"}]
    words = ["panic", "unwrap()", "caf\u00e9", "\u65e5\u672c", "tab\there", "quote\"d",
             "back\\slash", "line\nbreak", "emoji \U0001f600", "ctl\u001f"]

    prev = None

    def dump(seq, event, payload):
        nonlocal prev
        payload.update(v=2, run_id=run_id, seq=seq, event=event, t_ms=seq // 3)
        if prev is not None:
            payload["prev"] = prev
        line = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        prev = hashlib.sha256(line.encode("utf-8")).hexdigest()
        return line + "\n"

    written = 0
    seq = 0
    call = 0
    with open(out_path, "w", encoding="utf-8", newline="\n") as out:
        def emit(event, payload):
            nonlocal seq, written
            line = dump(seq, event, payload)
            out.write(line)
            written += len(line.encode("utf-8"))
            seq += 1

        emit("run_started", {"mode": "plan", "plan_sha256": "0" * 64,
                             "model": "scripted:bench.json",
                             "budget": {"max_model_calls": 10**9, "max_repairs": 10**9,
                                        "max_output_bytes": 4096},
                             "durability": "batch", "trace_content": "inline"})
        while written < target:
            call += 1
            content = " ".join(rng.choice(words) for _ in range(rng.randint(20, 120)))
            request = {"call": call, "kind": "initial" if call == 1 else "repair"}
            if call > 1:
                request["violations"] = violations
            emit("model_requested", request)
            emit("model_responded", {
                "call": call, "content": content,
                "content_bytes": len(content.encode("utf-8")),
                "content_sha256": hashlib.sha256(content.encode("utf-8")).hexdigest(),
                "usage": {"prompt_tokens": rng.randint(100, 9000),
                          "completion_tokens": rng.randint(10, 900)}})
            emit("verification_failed", {
                "call": call, "repairs_remaining": 10**9 - call,
                "violations": violations})
            call_id = f"call-{call}"
            emit("tool_called", {"call_id": call_id, "tool": "read_file",
                                 "arguments": {"path": f"src/mod{call % 97}.rs",
                                               "start": rng.randint(1, 500), "lines": 40}})
            emit("tool_completed", {"call_id": call_id, "ok": True,
                                    "result_bytes": rng.randint(100, 4000),
                                    "result_sha256": hashlib.sha256(call_id.encode()).hexdigest()})
            if call % 7 == 0:
                emit("guardrail_violation", {"kind": "retry_nudge", "message": "nudged",
                                             "budget": {"model_calls": call}})
        emit("run_completed", {"terminal": "completed", "output": {"risk": "x", "evidence": "y"},
                               "model_calls": call, "repairs": call - 1, "tool_calls": call})


if __name__ == "__main__":
    main()
