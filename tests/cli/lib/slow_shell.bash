# Shared by the end-to-end scripts in tests/cli/ that need work lasting a moment per case (sourced
# after common.bash, not a test itself): a suite whose every case makes a real shell call.

# slow_shell_suite DIR CASES SECONDS FIRST EXPECT: the read-submit harness with the shell in place
# of the read, compiled into DIR/slow.plan.json; a scripted model whose shell call sleeps SECONDS
# then submits (DIR/run.json); an empty workspace DIR/ws; and DIR/suite.json, CASES cases of them
# named slow-FIRST, slow-FIRST+1, ..., each expecting EXPECT (a JSON object).
slow_shell_suite() {
  local dir=$1 cases=$2 seconds=$3 first=$4 expect=$5
  mkdir -p "$dir/ws"
  sed 's/builtin\.pi_compat\.read@1/builtin.pi_compat.bash@1/; s/read_submit/slow_shell/g' \
    "$MF_SOURCE_DIR/fixtures/harness/read-submit.yaml" >"$dir/slow.yaml"
  run 0 "$MF_BIN/mf-compile" "$dir/slow.yaml" -o -
  cp "$tmp/out" "$dir/slow.plan.json"
  cat >"$dir/run.json" <<EOF
{"steps": [{"tool_calls": [{"name": "bash", "arguments": {"command": "sleep $seconds; echo done"}}]},
           {"tool_calls": [{"name": "submit", "arguments": {"terminal_result": "COMPLETE", "summary": "ok"}}]}]}
EOF
  jq -n --arg ws "$dir/ws" --argjson cases "$cases" --argjson first "$first" \
    --argjson expect "$expect" '{suite_id: "slow", cases: [range(0; $cases) |
    {id: ("slow-\(. + $first)"), plan: "slow.plan.json", model: "scripted:run.json", workspace: $ws,
     expect: $expect}]}' >"$dir/suite.json"
}
