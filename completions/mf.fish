# Fish completion for the seven mf-* programs. The program itself computes the candidates from the
# options and subcommands it declares (`PROGRAM --complete WORD... CURRENT`; docs/cli.md): one a
# line, ":files PREFIX" for file names after PREFIX, ":dirs" for directory names.
# Installed as share/fish/vendor_completions.d/<program>.fish (one copy per program name).

function __mf_complete
    set -l tokens (commandline -opc)
    set -l cur (commandline -ct)
    for line in ($tokens[1] --complete $tokens[2..-1] "$cur" 2>/dev/null)
        switch $line
            case ':files*'
                set -l prefix (string replace -r '^:files ?' '' -- $line)
                set -l rest (string sub -s (math (string length -- "$prefix") + 1) -- "$cur")
                for f in (__fish_complete_path "$rest")
                    echo "$prefix$f"
                end
            case ':dirs'
                __fish_complete_directories "$cur"
            case '*'
                echo $line
        end
    end
end

for program in mf-compile mf-run mf-replay mf-eval mf-toolread mf-audit mf-store
    complete -c $program -f -a '(__mf_complete)'
end
