#!/usr/bin/env bash
# mf-replay --export otlp-json (docs/formats/trace.md, "OpenTelemetry export"): the spans of a task
# run, a plan run and a failed run checked against the OTLP/JSON mapping (ids, times, kinds, the
# one-of attribute values) and the GenAI conventions (one chat span per model call, one
# execute_tool span per tool call, token usage); the same trace exports the same bytes; a corrupt
# trace exports nothing.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

fx=$MF_SOURCE_DIR/fixtures
replay="$MF_BIN/mf-replay"
run 0 "$MF_BIN/mf-run" --task "$fx/forge/task-valid.json" --model "scripted:$fx/forge/responses-repair.json" \
  --trace "$tmp/task.jsonl"
run 0 "$MF_BIN/mf-compile" "$fx/harness/golden.yaml" --catalog "$fx/harness/catalog.json" \
  --profiles "$fx/harness/profiles.json" -o -
cp "$tmp/out" "$tmp/golden.plan.json"
mkdir -p "$tmp/art"
run 0 "$MF_BIN/mf-run" --plan "$tmp/golden.plan.json" --model "scripted:$fx/harness/runs/golden-recover.json" \
  --workspace "$fx/repository" --artifacts "$tmp/art" --trace "$tmp/plan.jsonl"
run 1 "$MF_BIN/mf-run" --task "$fx/forge/task-valid.json" --model "scripted:$fx/forge/responses-provider-failure.json" \
  --trace "$tmp/failed.jsonl"

check() {  # check TRACE EXPORT
  python3 - "$1" "$2" <<'EOF'
import json, re, sys
events = [json.loads(l) for l in open(sys.argv[1])]
doc = json.load(open(sys.argv[2]))
(rs,) = doc["resourceSpans"]
assert {"key": "service.name", "value": {"stringValue": "millforge"}} in rs["resource"]["attributes"]
(ss,) = rs["scopeSpans"]
spans = ss["spans"]
ids = [s["spanId"] for s in spans]
assert len(set(ids)) == len(ids), "span ids repeat"
trace_ids = {s["traceId"] for s in spans}
assert len(trace_ids) == 1 and re.fullmatch(r"[0-9a-f]{32}", trace_ids.pop())
ONE_OF = {"stringValue", "intValue", "boolValue", "doubleValue", "arrayValue"}
def check_value(v):
    (k,) = v.keys()
    assert k in ONE_OF, k
    if k == "intValue":
        assert isinstance(v[k], str) and re.fullmatch(r"-?\d+", v[k])
    if k == "arrayValue":
        for x in v[k]["values"]:
            check_value(x)
for s in spans:
    assert re.fullmatch(r"[0-9a-f]{16}", s["spanId"])
    assert s["kind"] in (1, 3)
    for t in ("startTimeUnixNano", "endTimeUnixNano"):
        assert isinstance(s[t], str) and s[t].isdigit()
    assert int(s["startTimeUnixNano"]) <= int(s["endTimeUnixNano"])
    assert s["status"]["code"] in (1, 2)
    for a in s["attributes"]:
        assert set(a) == {"key", "value"}
        check_value(a["value"])
    for e in s.get("events", []):
        assert e["timeUnixNano"].isdigit() and e["name"]
        for a in e["attributes"]:
            check_value(a["value"])
root = [s for s in spans if "parentSpanId" not in s]
assert len(root) == 1 and root[0]["name"].startswith("invoke_agent ")
assert all(s["parentSpanId"] == root[0]["spanId"] for s in spans if s is not root[0])
chats = [s for s in spans if s["name"].startswith("chat ")]
tools = [s for s in spans if s["name"].startswith("execute_tool ")]
assert len(chats) == sum(e["event"] == "model_requested" for e in events)
assert [s["name"][len("execute_tool "):] for s in tools] == [e["tool"] for e in events if e["event"] == "tool_called"]
usage = [e["usage"] for e in events if e["event"] == "model_responded" and "usage" in e]
got = [{a["key"]: a["value"] for a in s["attributes"]} for s in chats]
assert sum(int(g["gen_ai.usage.input_tokens"]["intValue"]) for g in got if "gen_ai.usage.input_tokens" in g) == sum(u.get("input_tokens", 0) for u in usage)
assert all(g["gen_ai.operation.name"] == {"stringValue": "chat"} for g in got)
terminal = events[-1]
assert root[0]["status"]["code"] == (1 if terminal["event"] == "run_completed" else 2)
guardrails = [e for e in events if e["event"] == "guardrail_violation"]
assert len([e for e in root[0].get("events", []) if e["name"] == "guardrail_violation"]) == len(guardrails)
EOF
}
for t in task plan failed; do
  run 0 "$replay" --export otlp-json --start-unix-ms 1700000000000 "$tmp/$t.jsonl"
  cp "$tmp/out" "$tmp/$t.otlp.json"
  check "$tmp/$t.jsonl" "$tmp/$t.otlp.json" || fail "$t: the export does not check"
  run 0 "$replay" --export otlp-json --start-unix-ms 1700000000000 "$tmp/$t.jsonl"
  cmp -s "$tmp/out" "$tmp/$t.otlp.json" || fail "$t: two exports differ"
done
[[ $(jq -r '.resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano' "$tmp/task.otlp.json") == 1700000000000000000 ]] ||
  fail "--start-unix-ms was not the run's start"
jq -e '[.resourceSpans[0].scopeSpans[0].spans[] | select(.name | startswith("execute_tool"))] | length > 0' \
  "$tmp/plan.otlp.json" >/dev/null || fail "the plan run has no tool spans"
# Without --start-unix-ms: the file's modification time less the run's length, so within the
# minute this test ran, and stdin too.
now_ns=$(date +%s%N)
run 0 "$replay" --export otlp-json "$tmp/plan.jsonl"
start=$(jq -r '.resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano' "$tmp/out")
(( now_ns - start < 60000000000 && start <= now_ns )) || fail "default start $start is not now"
stdin=$tmp/plan.jsonl run 0 "$replay" --export otlp-json -
# A corrupt trace exports nothing; options that do not go together are refused.
sed '3s/"call":1/"call":2/' "$tmp/task.jsonl" >"$tmp/bad.jsonl"
run 1 "$replay" --export otlp-json "$tmp/bad.jsonl"
[[ ! -s $tmp/out ]] || fail "a corrupt trace was exported"
run 2 "$replay" --export zipkin "$tmp/task.jsonl"
run 2 "$replay" --export otlp-json --strict --plan "$tmp/golden.plan.json" "$tmp/plan.jsonl"

echo "otlp_export: ok"
