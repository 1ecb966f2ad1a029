#!/usr/bin/env bash
# mf-replay --export otlp-json (docs/formats/trace.md, "OpenTelemetry export"): the spans of a task
# run, a plan run, a failed run and live runs against the loopback wire server (OpenAI, Anthropic
# streamed, a refused request) checked against the OTLP/JSON mapping (ids, times, kinds, the
# one-of attribute values) and the GenAI semantic conventions v1.37.0: one chat span per model
# call named for the model, one execute_tool span per tool call, token usage, the model requested
# and the one that answered, the server, the request settings, and every gen_ai.*, server.* and
# error.* attribute named and typed as lib/genai_semconv.tsv says; the same trace exports the same
# bytes; a trace recorded before run_started named the model still exports; a corrupt trace
# exports nothing.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/wire.bash"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY MF_STORE

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
# Live runs: the profile's request settings, the server's address, and the reply's own model and
# id as the provider returned them (a JSON body, an Anthropic stream), or the HTTP status it
# refused the request with.
wire_start
jq '.retry = {max_attempts: 1} | .options.stop = ["END"]' "$fx/profiles/local.json" >"$tmp/local.json"
wire_profile task-valid "$tmp/local.json" "$tmp/openai.json"
run 0 "$MF_BIN/mf-run" --task "$fx/forge/task-valid.json" --model "openai:$tmp/openai.json" \
  --trace "$tmp/openai.jsonl"
jq '.auth = {scheme: "none"} | .retry = {max_attempts: 1} | .options = {temperature: 0.5, max_tokens: 256}' \
  "$fx/profiles/anthropic.json" >"$tmp/anthropic-base.json"
wire_profile anthropic-stream "$tmp/anthropic-base.json" "$tmp/anthropic.json"
run 1 "$MF_BIN/mf-run" --task "$fx/forge/task-valid.json" --model "anthropic:$tmp/anthropic.json" \
  --trace "$tmp/anthropic.jsonl"
wire_profile openai-400 "$tmp/local.json" "$tmp/refused.json"
run 1 "$MF_BIN/mf-run" --task "$fx/forge/task-valid.json" --model "openai:$tmp/refused.json" \
  --trace "$tmp/refused.jsonl"
# run_started names the model: the live profile's id, digest, endpoint and options; a script's
# file name and digest.
jq -se --arg d "$(sha256sum "$tmp/openai.json" | cut -c1-64)" --arg url "$WIRE_URL/task-valid/v1/chat/completions" \
  '.[0] | .model == "openai" and .model_id == "local" and
   .model_sha256 == $d and .endpoint == $url and
   .model_options == {max_tokens: 1024, seed: 7, stop: ["END"], temperature: 0}' "$tmp/openai.jsonl" >/dev/null ||
  fail "openai run_started: $(head -1 "$tmp/openai.jsonl")"
jq -se '.[] | select(.event == "model_responded") | .response_model == "gpt-4o-2024-08-06" and
   .response_id == "chatcmpl-BvTKa0Ls4RxWn8Qd2ZmE6pYt3VcJf"' "$tmp/openai.jsonl" >/dev/null ||
  fail "openai model_responded: $(grep model_responded "$tmp/openai.jsonl")"
jq -se '.[] | select(.event == "model_responded") | .response_model == "claude-sonnet-4-20250514" and
   .response_id == "msg_01Kt2Ab4Nr7Pv3VzZ6wRh2CgJ"' "$tmp/anthropic.jsonl" >/dev/null ||
  fail "anthropic model_responded: $(grep model_responded "$tmp/anthropic.jsonl")"
jq -se --arg d "$(sha256sum "$fx/forge/responses-repair.json" | cut -c1-64)" \
  '.[0] | .model_id == "responses-repair.json" and .model_sha256 == $d and
   (has("endpoint") or has("model_options") | not)' "$tmp/task.jsonl" >/dev/null ||
  fail "scripted run_started: $(head -1 "$tmp/task.jsonl")"
for t in openai anthropic refused; do run 0 "$replay" "$tmp/$t.jsonl"; done

check() {  # check TRACE EXPORT
  python3 - "$1" "$2" "$MF_SOURCE_DIR/tests/cli/lib/genai_semconv.tsv" <<'EOF'
import json, re, sys
events = [json.loads(l) for l in open(sys.argv[1])]
doc = json.load(open(sys.argv[2]))
SEMCONV = dict(l.split() for l in open(sys.argv[3]) if l.strip() and not l.startswith("#"))
ONE = {"string": "stringValue", "int": "intValue", "double": "doubleValue"}
def check_semconv(a):
    key, value = a["key"], a["value"]
    if not key.startswith(("gen_ai.", "server.", "error.")):
        return
    assert key in SEMCONV, f"{key} is not a v1.37.0 attribute"
    want = SEMCONV[key]
    if want == "string[]":
        assert list(value) == ["arrayValue"], (key, value)
        assert all(list(x) == ["stringValue"] for x in value["arrayValue"]["values"]), (key, value)
    else:
        assert list(value) == [ONE[want]], f"{key} is {want}, written as {value}"
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
        check_semconv(a)
    for e in s.get("events", []):
        assert e["timeUnixNano"].isdigit() and e["name"]
        for a in e["attributes"]:
            check_value(a["value"])
            check_semconv(a)
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
started = events[0]
model = started.get("model_id", started["model"])
provider = started["model"] if started["model"] in ("openai", "anthropic") else "millforge." + started["model"]
assert all(s["name"] == "chat " + model for s in chats)
for g in got:
    assert g["gen_ai.request.model"] == {"stringValue": model}
    assert g["gen_ai.provider.name"] == {"stringValue": provider}
    assert g["gen_ai.conversation.id"] == {"stringValue": started["run_id"]}
replies = [e for e in events if e["event"] in ("model_responded", "model_failed")]
for g, e in zip(got, replies):
    for member, key in (("response_model", "gen_ai.response.model"), ("response_id", "gen_ai.response.id")):
        assert g.get(key) == ({"stringValue": e[member]} if member in e else None), (key, g)
    assert ("error.type" in g) == (e["event"] == "model_failed")
attrs = {a["key"]: a["value"] for a in root[0]["attributes"]}
assert attrs["gen_ai.provider.name"] == {"stringValue": provider}
assert attrs["gen_ai.conversation.id"] == {"stringValue": started["run_id"]}
terminal = events[-1]
assert root[0]["status"]["code"] == (1 if terminal["event"] == "run_completed" else 2)
assert attrs.get("error.type") == ({"stringValue": terminal["terminal"]} if terminal["event"] == "run_failed" else None)
guardrails = [e for e in events if e["event"] == "guardrail_violation"]
assert len([e for e in root[0].get("events", []) if e["name"] == "guardrail_violation"]) == len(guardrails)
EOF
}
# A trace recorded before run_started named the model (fixtures/traces/valid.jsonl) exports too.
cp "$fx/traces/valid.jsonl" "$tmp/old.jsonl"
for t in task plan failed openai anthropic refused old; do
  run 0 "$replay" --export otlp-json --start-unix-ms 1700000000000 "$tmp/$t.jsonl"
  cp "$tmp/out" "$tmp/$t.otlp.json"
  check "$tmp/$t.jsonl" "$tmp/$t.otlp.json" || fail "$t: the export does not check"
  run 0 "$replay" --export otlp-json --start-unix-ms 1700000000000 "$tmp/$t.jsonl"
  cmp -s "$tmp/out" "$tmp/$t.otlp.json" || fail "$t: two exports differ"
done
# The live call's span: the server from the endpoint, the settings typed as the conventions say.
chat='.resourceSpans[0].scopeSpans[0].spans[] | select(.name | startswith("chat ")) | [.attributes[] | {(.key): .value}] | add'
jq -e --arg port "$WIRE_PORT" "$chat"' | ."server.address" == {stringValue: "127.0.0.1"} and
  ."server.port" == {intValue: $port} and ."gen_ai.request.temperature" == {doubleValue: 0} and
  ."gen_ai.request.seed" == {intValue: "7"} and ."gen_ai.request.max_tokens" == {intValue: "1024"} and
  ."gen_ai.request.stop_sequences" == {arrayValue: {values: [{stringValue: "END"}]}} and
  ."gen_ai.provider.name" == {stringValue: "openai"}' "$tmp/openai.otlp.json" >/dev/null ||
  fail "openai chat span: $(jq -c "$chat" "$tmp/openai.otlp.json")"
jq -e "$chat"' | ."gen_ai.request.temperature" == {doubleValue: 0.5} and
  ."gen_ai.provider.name" == {stringValue: "anthropic"} and ."gen_ai.request.model" == {stringValue: "claude-sonnet-4-5"}' \
  "$tmp/anthropic.otlp.json" >/dev/null || fail "anthropic chat span: $(jq -c "$chat" "$tmp/anthropic.otlp.json")"
jq -e "$chat"' | ."error.type" == {stringValue: "400"}' "$tmp/refused.otlp.json" >/dev/null ||
  fail "refused chat span: $(jq -c "$chat" "$tmp/refused.otlp.json")"
jq -e '.resourceSpans[0].scopeSpans[0].spans[] | select(.name | startswith("chat ")) | .name == "chat scripted"' \
  "$tmp/old.otlp.json" >/dev/null || fail "an old trace's chat span is not named for its model"
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
