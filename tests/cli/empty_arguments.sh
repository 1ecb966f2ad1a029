#!/usr/bin/env bash
# A tool call with empty arguments is a call without arguments ({}), whichever way it arrives: the
# same conversation (forge's tool_selection with a first list_directory call whose arguments are
# empty) as OpenAI and Anthropic replies, streamed and not, through the real libcurl client and the
# loopback wire server, and as the scripted run. Every run makes the same calls with the same
# arguments and draws no correction.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/wire.bash"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY

f=fixtures/harness/forge/tool_selection
script=$f/runs/no-arguments.json
run 0 "$MF_BIN/mf-compile" $f/harness.yaml --catalog $f/catalog.json -o -
cp "$tmp/out" "$tmp/plan.json"

# The captures, written from the script: its first call's arguments are "" there; here the
# non-streamed replies send "" and the streamed ones send "" then whitespace, in two pieces.
captures=$tmp/captures
mkdir "$captures"
jq '{description: "tool_selection/no-arguments as OpenAI chat completions", responses: [.steps
  | to_entries[] | {body_json: {id: "chatcmpl-e\(.key)", object: "chat.completion", created: 1,
    model: "m", choices: [{index: 0, finish_reason: "tool_calls", message: {role: "assistant",
      content: null, tool_calls: [.value.tool_calls[] | {id: "call_\(.name)", type: "function",
        function: {name, arguments: (.arguments | if type == "string" then . else tojson end)}}]}}],
    usage: {prompt_tokens: 90, completion_tokens: 9, total_tokens: 99}}}]}' "$script" \
  >"$captures/empty-openai.json"
jq '{description: "tool_selection/no-arguments as OpenAI chat.completion.chunk streams",
  responses: [.steps | to_entries[] | .key as $k | .value.tool_calls[0] as $c | {sse: [
    {data: {id: "chatcmpl-s\($k)", object: "chat.completion.chunk", created: 1, model: "m",
      choices: [{index: 0, finish_reason: null, delta: {role: "assistant", content: null,
        tool_calls: [{index: 0, id: "call_\($c.name)", type: "function",
          function: {name: $c.name, arguments: ""}}]}}]}},
    {data: {id: "chatcmpl-s\($k)", object: "chat.completion.chunk", created: 1, model: "m",
      choices: [{index: 0, finish_reason: null, delta: {tool_calls: [{index: 0, function: {
        arguments: ($c.arguments | if type == "string" then " \n" else tojson end)}}]}}]}},
    {data: {id: "chatcmpl-s\($k)", object: "chat.completion.chunk", created: 1, model: "m",
      choices: [{index: 0, finish_reason: "tool_calls", delta: {}}]}},
    {data: "[DONE]"}]}]}' "$script" >"$captures/empty-openai-stream.json"
jq '{description: "tool_selection/no-arguments as Anthropic messages", responses: [.steps
  | to_entries[] | {body_json: {id: "msg_e\(.key)", type: "message", role: "assistant",
    model: "claude", stop_reason: "tool_use", stop_sequence: null,
    content: [.value.tool_calls[] | {type: "tool_use", id: "toolu_\(.name)", name, input: .arguments}],
    usage: {input_tokens: 90, output_tokens: 9}}}]}' "$script" >"$captures/empty-anthropic.json"
jq '{description: "tool_selection/no-arguments as Anthropic message streams", responses: [.steps
  | to_entries[] | .key as $k | .value.tool_calls[0] as $c | {sse: [
    {event: "message_start", data: {type: "message_start", message: {id: "msg_s\($k)",
      type: "message", role: "assistant", content: [], model: "claude", stop_reason: null,
      usage: {input_tokens: 90, output_tokens: 1}}}},
    {event: "content_block_start", data: {type: "content_block_start", index: 0,
      content_block: {type: "tool_use", id: "toolu_\($c.name)", name: $c.name, input: {}}}},
    {event: "content_block_delta", data: {type: "content_block_delta", index: 0,
      delta: {type: "input_json_delta", partial_json: ""}}},
    {event: "content_block_delta", data: {type: "content_block_delta", index: 0,
      delta: {type: "input_json_delta",
        partial_json: ($c.arguments | if type == "string" then " " else tojson end)}}},
    {event: "content_block_stop", data: {type: "content_block_stop", index: 0}},
    {event: "message_delta", data: {type: "message_delta",
      delta: {stop_reason: "tool_use", stop_sequence: null}, usage: {output_tokens: 9}}},
    {event: "message_stop", data: {type: "message_stop"}}]}]}' "$script" \
  >"$captures/empty-anthropic-stream.json"
wire_start "$captures"

base=$tmp/base.json
jq '.timeouts_ms = {connect: 2000, first_byte: 5000, idle: 2000, total: 20000}
    | .retry = {max_attempts: 1, initial_backoff_ms: 20, max_backoff_ms: 100}' \
  "$MF_SOURCE_DIR/fixtures/profiles/local.json" >"$base"

# calls TRACE: the calls the run made, in order, with the arguments the tools received.
calls() { jq -c 'select(.event == "tool_called") | [.tool, .arguments]' "$1"; }

# mf_run NAME MODEL: runs the plan with MODEL; checks that it completed without a correction.
mf_run() {
  rm -rf "$tmp/$1.art" && mkdir "$tmp/$1.art"
  run 0 "$MF_BIN/mf-run" --plan "$tmp/plan.json" --model "$2" --workspace $f/workspace \
    --artifacts "$tmp/$1.art" --request $f/request.json --trace-content inline \
    --trace "$tmp/$1.jsonl"
  [[ $(jq -r .terminal "$tmp/out") == completed ]] || fail "$1: $(cat "$tmp/out")"
  [[ $(jq -r '[.model_calls, .tool_calls] | @text' "$tmp/out") == "[4,4]" ]] ||
    fail "$1: $(cat "$tmp/out")"
  ! grep -q '"event":"guardrail_violation"' "$tmp/$1.jsonl" ||
    fail "$1: a correction: $(grep '"event":"guardrail_violation"' "$tmp/$1.jsonl")"
  run 0 "$MF_BIN/mf-replay" "$tmp/$1.jsonl"
  [[ $(jq -r .status "$tmp/out") == ok ]] || fail "$1: the trace does not verify"
}

mf_run scripted "scripted:$script"
[[ $(calls "$tmp/scripted.jsonl" | head -1) == '["list_directory",{}]' ]] ||
  fail "the empty arguments did not reach list_directory as {}: $(calls "$tmp/scripted.jsonl")"
jq -se 'any(.[]; .event == "model_responded" and .call == 1 and .tool_calls[0].arguments == "{}")' \
  "$tmp/scripted.jsonl" >/dev/null || fail "model_responded does not record {}"
for scenario in empty-openai empty-openai-stream empty-anthropic empty-anthropic-stream; do
  p=$tmp/$scenario.profile.json
  wire_profile $scenario "$base" "$p"
  api=openai
  [[ $scenario != *anthropic* ]] || api=anthropic
  jq --arg api $api '.stream = ($ARGS.named.s == "1")
    | if $api == "anthropic" then .options = {temperature: 0, max_tokens: 512} else . end' \
    --arg s "$([[ $scenario == *-stream ]] && echo 1 || echo 0)" "$p" >"$p.tmp" && mv "$p.tmp" "$p"
  mf_run $scenario "$api:$p"
  [[ $(calls "$tmp/$scenario.jsonl") == "$(calls "$tmp/scripted.jsonl")" ]] ||
    fail "$scenario: other calls than the scripted run: $(calls "$tmp/$scenario.jsonl")"
  # The history sent back carries the call as a call without arguments.
  second=$(jq -r '.[1].body' <<<"$(wire_log)")
  if [[ $api == anthropic ]]; then
    jq -e '[.messages[].content | arrays | .[] | select(.type == "tool_use")][0].input == {}' \
      <<<"$second" >/dev/null || fail "$scenario: the call sent back: $second"
  else
    jq -e '[.messages[] | .tool_calls? // [] | .[]][0].function.arguments == "{}"' \
      <<<"$second" >/dev/null || fail "$scenario: the call sent back: $second"
  fi
  wire_reset
done
echo "empty_arguments: ok"
