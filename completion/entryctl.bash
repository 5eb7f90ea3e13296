# bash completion for entryctl(1), the command-line client of entryd(8).
#
# Completes command names, each command's options, the values of --format,
# --order and --locale, field names for FIELD=VALUE arguments, picker values of
# every picker field (as --country/--province/--city and as FIELD=VALUE), the
# fields `options` takes, and peer names for `sync`, by asking the daemon:
# entryctl --json options FIELD --search PREFIX (with the cities of the province
# on the line, however it was typed). Picker values are offered as names in the
# --locale language (codes when a code is being typed). Without a daemon, fixed
# field names are offered and picker values are not.
#
# Install: /usr/share/bash-completion/completions/entryctl (loaded on demand by
# bash-completion), or `source` it from ~/.bashrc. Needs nothing but bash.

_entryctl_commands="add get update delete restore history erase erasures edit list export import backup options forms check status metrics compact watch call peers sync conflicts resolve bridge web-user help"
_entryctl_globals="--socket --locale --json --timeout --help --version"
_entryctl_fields="name birthday country province city contact_method phone email appointment"

# The options of one command (keep in step with `entryctl COMMAND --help`).
_entryctl_command_options() {
    local filters="--country --province --city --born-from --born-to --search --name-contains"
    case "$1" in
        add) echo "--id --form -i --interactive" ;;
        edit) echo "-i --interactive" ;;
        update|delete) echo "--if-version --reason" ;;
        restore) echo "--reason" ;;
        erase) echo "--reason --yes --phone --email --name --birthday --country --verify --value --no-wait" ;;
        list) echo "$filters --appointment --form --order --asc --desc --limit --cursor --all --deleted --format" ;;
        export) echo "--format --form $filters --include-deleted --output -o --labels --excel --codes --display" ;;
        import) echo "--format --form --atomic --dry-run --rejects --batch --new-ids --ignore-unknown-columns --map" ;;
        options) echo "--parent --search --limit --form" ;;
        check) echo "--form" ;;
        watch) echo "--since" ;;
        call) echo "--more" ;;
        conflicts) echo "--entry --all" ;;
        resolve) echo "--use-lost" ;;
        web-user) echo "--role --replace --users --format" ;;
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

# A province as the daemon's code: $1 as it is when it is digits, else the one
# province the daemon finds for it (gd, 广东, Guangdong → 440000); nothing when
# none or several match.
_entryctl_province_code() {
    [[ -z "$1" || "$1" =~ ^[0-9]+$ ]] && { echo "$1"; return; }
    local codes
    codes=$(_entryctl_query --json options province --search "$1" --limit 2 | grep -o '"value":"[^"]*"' | sed 's/^"value":"//; s/"$//')
    [[ $(wc -w <<<"$codes") -eq 1 ]] && echo "$codes"
}

# Picker rows of field $1 matching $2 (by value, name, pinyin or alias: the
# daemon matches, so 深 and sz both find 深圳市), one per line. What is offered
# is what people read — the names in the --locale language, spaces escaped —
# unless $2 is the start of a code (440, CN), then the codes. Names are accepted
# wherever codes are, so bash may replace the typed word with the one name left.
_entryctl_option_values() {
    local field="$1" prefix="$2" parent=() province rows
    if [[ "$field" == city ]]; then
        province=$(_entryctl_province_code "$(_entryctl_given province)")
        [[ -n "$province" ]] && parent=(--parent "$province")
    fi
    rows=$(_entryctl_query --json options "$field" --search "$prefix" --limit 50 "${parent[@]}" \
        | grep -o '"value":"[^"]*","label":"[^"]*"' | sed 's/^"value":"//; s/","label":"/\t/; s/"$//')
    [[ -z "$rows" ]] && return
    local value codes=()
    while IFS=$'\t' read -r value _; do
        [[ -n "$prefix" && "$value" == "$prefix"* ]] && codes+=("$value")
    done <<<"$rows"
    if ((${#codes[@]})); then
        printf '%s\n' "${codes[@]}"
    else
        cut -f2 <<<"$rows" | sed 's/ /\\ /g'
    fi
}

# Fields of the form that have a picker list (what `options` takes).
_entryctl_picker_fields() {
    local names
    names=$(_entryctl_query --json call io.entryd.Forms.GetForm '{}' \
        | grep -o '"name":"[^"]*","type":"\(country\|province\|city\|choice\)"' | sed 's/^"name":"//; s/",.*$//')
    echo "${names:-country province city contact_method}"
}

# Peer names the daemon knows (configured first); ad-hoc unix: addresses are left out.
_entryctl_peer_names() {
    _entryctl_query --json peers | grep -o '"name":"[^"]*"' | sed 's/^"name":"//; s/"$//' | grep -v :
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
            --socket|--locale|--timeout) ((i++)) ;;
            -*) ;;
            *) command="$w"; break ;;
        esac
    done

    # Values of options.
    case "$prev" in
        --locale) COMPREPLY=($(compgen -W "zh en" -- "$cur")); return 0 ;;
        --role) COMPREPLY=($(compgen -W "submit read write admin" -- "$cur")); return 0 ;;
        --socket|--output|-o|--rejects|--users) COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
        --order) COMPREPLY=($(compgen -W "created updated birthday name appointment" -- "$cur")); return 0 ;;
        --appointment) COMPREPLY=($(compgen -W "today tomorrow" -- "$cur")); return 0 ;;
        --format)
            case "$command" in
                list) COMPREPLY=($(compgen -W "table json jsonl csv" -- "$cur")) ;;
                export) COMPREPLY=($(compgen -W "jsonl csv json" -- "$cur")) ;;
                import) COMPREPLY=($(compgen -W "jsonl csv json" -- "$cur")) ;;
                web-user) COMPREPLY=($(compgen -W "table json" -- "$cur")) ;;
            esac
            return 0 ;;
        --country|--province|--city)
            mapfile -t COMPREPLY < <(_entryctl_option_values "${prev#--}" "$cur")
            return 0 ;;
        --parent)
            mapfile -t COMPREPLY < <(_entryctl_option_values province "$cur")
            return 0 ;;
        --search) [[ "$command" == options ]] || return 0 ;;
        --id|--if-version|--reason|--limit|--cursor|--since|--entry|--form|--batch|--born-from|--born-to) return 0 ;;
    esac

    # FIELD=VALUE: bash splits at '=' (COMP_WORDBREAKS), so the field is two words back.
    # Any field with a picker list (the daemon answers nothing for the others).
    if [[ "$prev" == "=" && COMP_CWORD -ge 2 ]]; then
        mapfile -t COMPREPLY < <(_entryctl_option_values "${COMP_WORDS[COMP_CWORD-2]}" "$cur")
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
        options) COMPREPLY=($(compgen -W "$(_entryctl_picker_fields)" -- "$cur")) ;;
        sync) COMPREPLY=($(compgen -W "$(_entryctl_peer_names)" -- "$cur")) ;;
        import|backup) COMPREPLY=($(compgen -f -- "$cur")) ;;
        web-user) [[ "$prev" == web-user ]] && COMPREPLY=($(compgen -W "add remove list" -- "$cur")) ;;
    esac
    return 0
}

complete -F _entryctl entryctl
