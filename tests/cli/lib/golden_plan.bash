# Shared by the end-to-end scripts in tests/cli/ that run the golden harness (sourced after
# common.bash, not a test itself).

# golden_plan: $mfc and $mfr name mf-compile and mf-run, $h the harness fixtures; the golden
# harness compiled into $plan ($tmp/plan.json), a workspace $ws holding the repository's
# src/lib.rs, and an empty artifact directory $tmp/art.
golden_plan() {
  mfc="$MF_BIN/mf-compile"
  mfr="$MF_BIN/mf-run"
  h=fixtures/harness
  plan=$tmp/plan.json
  run 0 "$mfc" $h/golden.yaml --catalog $h/catalog.json --profiles $h/profiles.json -o -
  cp "$tmp/out" "$plan"
  ws=$tmp/ws
  mkdir -p "$ws/src" "$tmp/art"
  cp fixtures/repository/src/lib.rs "$ws/src/"
}
