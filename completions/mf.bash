# Bash completion for the seven mf-* programs. The program itself computes the candidates from the
# options and subcommands it declares (`PROGRAM --complete WORD... CURRENT`), so completion offers
# exactly what the binary on PATH accepts: subcommands, the options of the subcommand typed, the
# values of options with choices, --model's backends, environment variable names for --*-env, and
# file or directory names where a value or operand is one.
# Installed as share/bash-completion/completions/<program> (one copy per program name).

_mf_complete() {
  local prog=${COMP_WORDS[0]}
  # Bash splits words at ':' and '=' (COMP_WORDBREAKS); the program sees them joined again
  # ("scripted:fi"), and the part before the current piece is cut from the candidates after.
  local -a words=()
  local i w joined=0
  for ((i = 1; i <= COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    if ((${#words[@]} > 0)) && [[ $w == [:=] || $joined == 1 ]]; then
      words[-1]+=$w
    else
      words+=("$w")
    fi
    joined=0
    [[ $w == [:=] ]] && joined=1
  done
  ((${#words[@]} > 0)) || words=("")
  local cur=${words[-1]} piece=${COMP_WORDS[COMP_CWORD]}
  local cut=${cur%"$piece"}
  local out line prefix
  out=$("$prog" --complete "${words[@]}" 2>/dev/null) || return 0
  COMPREPLY=()
  while IFS= read -r line; do
    case $line in
      :files*)
        prefix=${line#:files}
        prefix=${prefix# }
        while IFS= read -r w; do COMPREPLY+=("$prefix$w"); done < <(compgen -f -- "${cur#"$prefix"}")
        ;;
      :dirs)
        while IFS= read -r w; do COMPREPLY+=("$w"); done < <(compgen -d -- "$cur")
        ;;
      ?*) COMPREPLY+=("$line") ;;
    esac
  done <<<"$out"
  # A backend or label ("scripted:", "small=") is completed further, not ended with a space.
  for w in "${COMPREPLY[@]}"; do
    [[ $w == *[:=] ]] && compopt -o nospace 2>/dev/null
  done
  if [[ -n $cut ]]; then
    COMPREPLY=("${COMPREPLY[@]#"$cut"}")
  fi
  return 0
}

complete -o filenames -F _mf_complete mf-compile mf-run mf-replay mf-eval mf-toolread mf-audit mf-store
