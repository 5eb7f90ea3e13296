# bash completion for entryctl(1), the command-line client of entryd(8).
#
# Completes command names, each command's options, the values of --format,
# --order and --locale, field names for FIELD=VALUE arguments, and picker values
# for country, province and city (as options --country/--province/--city and as
# FIELD=VALUE) by asking the daemon: entryctl --json options FIELD --search PREFIX
# (with --parent PROVINCE for cities when a province is on the line). Without a
# daemon, fixed field names are offered and picker values are not.
#
# Install: /usr/share/bash-completion/completions/entryctl (loaded on demand by
# bash-completion), or `source` it from ~/.bashrc. Needs nothing but bash.

_entryctl_commands="add get update delete restore history edit list export import backup options forms check status watch call sync conflicts resolve bridge help"
_entryctl_globals="--socket --locale --json --timeout --help --version"
_entryctl_fields="name birthday country province city contact_method phone email appointment"

# The options of one command (keep in step with `entryctl COMMAND --help`).
_entryctl_command_options() {
    local filters="--country --province --city --born-from --born-to --search"
    case "$1" in
        add) echo "--id --form -i --interactive" ;;
        edit) echo "-i --interactive" ;;
        update|delete) echo "--if-version --reason" ;;
        restore) echo "--reason" ;;
        list) echo "$filters --form --order --asc --desc --limit --cursor --all --deleted --format" ;;
        export) echo "--format --form $filters --include-deleted --output -o --labels --excel --codes --display" ;;
        import) echo "--format --form --atomic --dry-run --rejects --batch --new-ids --ignore-unknown-columns" ;;
        options) echo "--parent --search --limit --form" ;;
        check) echo "--form" ;;
        watch) echo "--since" ;;
        call) echo "--more" ;;
        conflicts) echo "--entry --all" ;;
        resolve) echo "--use-lost" ;;
    esac
}

# Runs entryctl with the --socket and --locale given on the command line.
_entryctl_query() {
    local i args=()
    for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do
        case "${COMP_WORDS[i]}" in
            --socket|--locale) args+=("${COMP_WORDS[i]}" "${COMP_WORDS[i+1]}") ;;
        esac
    done
    "${COMP_WORDS[0]}" "${args[@]}" "$@" 2>/dev/null
}

# Field names of the default form from the daemon, else the built-in list.
_entryctl_field_names() {
    local names
    names=$(_entryctl_query --json call io.entryd.Forms.GetForm '{}' | grep -o '"name":"[^"]*","type"' | sed 's/^"name":"//; s/",.*$//')
    echo "${names:-$_entryctl_fields}"
}

# The value of option $1 (or FIELD=VALUE for field $1) given earlier on the line.
_entryctl_given() {
    local i w
    for ((i = 1; i < COMP_CWORD; i++)); do
        w="${COMP_WORDS[i]}"
        if [[ "$w" == "--$1" ]]; then echo "${COMP_WORDS[i+1]}"; return; fi
        if [[ "$w" == "$1" && "${COMP_WORDS[i+1]}" == "=" ]]; then echo "${COMP_WORDS[i+2]}"; return; fi
        if [[ "$w" == "$1="* ]]; then echo "${w#*=}"; return; fi
    done
}

# Canonical picker values of field $1 matching $2 (value, name, pinyin or alias:
# the daemon matches, so 广 offers 440000), from the daemon. Not filtered by
# prefix here: bash replaces the word when one value is left.
_entryctl_option_values() {
    local field="$1" prefix="$2" parent=() province
    if [[ "$field" == city ]]; then
        province=$(_entryctl_given province)
        [[ -n "$province" ]] && parent=(--parent "$province")
    fi
    _entryctl_query --json options "$field" --search "$prefix" --limit 50 "${parent[@]}" \
        | grep -o '"value":"[^"]*"' | sed 's/^"value":"//; s/"$//'
}

_entryctl() {
    local cur prev command="" i w
    COMPREPLY=()
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"

    # The command: the first word that is not an option or an option's value.
    for ((i = 1; i < COMP_CWORD; i++)); do
        w="${COMP_WORDS[i]}"
        case "$w" in
            --socket|--locale) ((i++)) ;;
            -*) ;;
            *) command="$w"; break ;;
        esac
    done

    # Values of options.
    case "$prev" in
        --locale) COMPREPLY=($(compgen -W "zh en" -- "$cur")); return 0 ;;
        --socket|--output|-o|--rejects) COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
        --order) COMPREPLY=($(compgen -W "created updated birthday name" -- "$cur")); return 0 ;;
        --format)
            case "$command" in
                list) COMPREPLY=($(compgen -W "table json jsonl csv" -- "$cur")) ;;
                export) COMPREPLY=($(compgen -W "jsonl csv json" -- "$cur")) ;;
                import) COMPREPLY=($(compgen -W "jsonl csv json" -- "$cur")) ;;
            esac
            return 0 ;;
        --country|--province|--city)
            COMPREPLY=($(_entryctl_option_values "${prev#--}" "$cur"))
            return 0 ;;
        --parent)
            COMPREPLY=($(_entryctl_option_values province "$cur"))
            return 0 ;;
        --search) [[ "$command" == options ]] || return 0 ;;
        --id|--if-version|--reason|--limit|--cursor|--since|--entry|--form|--batch|--born-from|--born-to) return 0 ;;
    esac

    # FIELD=VALUE: bash splits at '=' (COMP_WORDBREAKS), so the field is two words back.
    if [[ "$prev" == "=" && COMP_CWORD -ge 2 ]]; then
        case "${COMP_WORDS[COMP_CWORD-2]}" in
            country|province|city)
                COMPREPLY=($(_entryctl_option_values "${COMP_WORDS[COMP_CWORD-2]}" "$cur")) ;;
            contact_method) COMPREPLY=($(compgen -W "phone email" -- "$cur")) ;;
        esac
        return 0
    fi

    if [[ -z "$command" ]]; then
        if [[ "$cur" == -* ]]; then
            COMPREPLY=($(compgen -W "$_entryctl_globals" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$_entryctl_commands" -- "$cur"))
        fi
        return 0
    fi

    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$(_entryctl_command_options "$command") $_entryctl_globals" -- "$cur"))
        return 0
    fi

    case "$command" in
        help) COMPREPLY=($(compgen -W "$_entryctl_commands" -- "$cur")) ;;
        add|update|check)
            COMPREPLY=($(compgen -W "$(_entryctl_field_names)" -S "=" -- "$cur"))
            compopt -o nospace 2>/dev/null ;;
        options) COMPREPLY=($(compgen -W "$(_entryctl_field_names)" -- "$cur")) ;;
        import|backup) COMPREPLY=($(compgen -f -- "$cur")) ;;
    esac
    return 0
}

complete -F _entryctl entryctl
