# Bash completion for the seven mf-* programs. Options and commands are read from the program's
# own --help at completion time, so completion offers exactly what the binary on PATH has.
# Installed as share/bash-completion/completions/<program> (one copy per program name).

_mf_complete() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  local prog=${COMP_WORDS[0]}
  local help
  help=$("$prog" --help 2>/dev/null) || return 0
  COMPREPLY=()
  if [[ $cur == -* ]]; then
    local opts
    opts=$(sed -nE 's/^ +(-[a-zA-Z] \[ )?(--[a-z][a-z0-9-]*).*/\2/p' <<<"$help")
    mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
    return 0
  fi
  # The command word: first after the program, or after a leading "--store DIR" (mf-store).
  local first=1
  [[ ${COMP_WORDS[1]} == --store ]] && first=3
  if ((COMP_CWORD == first)); then
    local name=${prog##*/} cmds
    cmds=$(sed -nE -e '/^Options:/q' \
      -e "s/^(Usage:)? +${name} ([a-z][a-z-]*)( .*)?\$/\\2/p" \
      -e 's/^  ([a-z][a-z-]*) .*/\1/p' <<<"$help" | sort -u)
    if [[ -n $cmds ]]; then
      mapfile -t COMPREPLY < <(compgen -W "$cmds" -- "$cur")
    fi
  fi
  local files
  mapfile -t files < <(compgen -f -- "$cur")
  COMPREPLY+=("${files[@]}")
}

complete -o filenames -F _mf_complete mf-compile mf-run mf-replay mf-eval mf-toolread mf-audit mf-store
