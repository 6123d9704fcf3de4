# bash completion for relock(1): subcommands, their flags, the values of --kind, --pubsub
# --replica-sync and --sort, and files for the --tls-* flags that take one. Installed to share/bash-completion/completions/relock; needs nothing but
# bash (not the bash-completion package's helpers).

_relock() {
  local cur prev
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=""
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}

  local global_flags="--url --watchdog-timeout --pubsub --replica-sync --sentinel-user
    --sentinel-password --tls-ca --tls-cert --tls-key --tls-server-name
    --tls-insecure-skip-verify --json --help --version"
  local subcommands="run status queue semaphore unlock doctor top demo"

  # The value of a flag that takes one.
  case $prev in
    --kind)
      COMPREPLY=($(compgen -W "lock fair fenced spin read write" -- "$cur"))
      return 0
      ;;
    --pubsub)
      COMPREPLY=($(compgen -W "auto sharded classic both" -- "$cur"))
      return 0
      ;;
    --replica-sync)
      COMPREPLY=($(compgen -W "auto on off" -- "$cur"))
      return 0
      ;;
    --sort)
      COMPREPLY=($(compgen -W "name kind holders waiters lease" -- "$cur"))
      return 0
      ;;
    --tls-ca | --tls-cert | --tls-key | --report)
      COMPREPLY=($(compgen -f -- "$cur"))
      return 0
      ;;
    --url | --watchdog-timeout | --sentinel-user | --sentinel-password | -w | --wait | \
      -E | --conflict-exit-code | --lease | --all | --redlock | --semaphore | --delay | \
      --workers | --iterations | --tls-server-name | --interval | --limit)
      COMPREPLY=()
      return 0
      ;;
  esac

  # The subcommand (and a queue's or semaphore's action), skipping global flags and their values.
  local i word sub="" action="" separator=0
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    case $word in
      --url | --watchdog-timeout | --pubsub | --replica-sync | --sentinel-user | \
        --sentinel-password | --tls-ca | --tls-cert | --tls-key | --tls-server-name)
        [[ -z $sub ]] && ((i++))
        continue
        ;;
      --) [[ $sub == run ]] && separator=1 ;;
    esac
    if [[ -z $sub ]]; then
      [[ $word != -* ]] && sub=$word
    elif [[ -z $action && ($sub == queue || $sub == semaphore) && $word != -* ]]; then
      action=$word
    fi
  done

  # After `run ... --` the words are the command's: complete commands and files.
  if ((separator)); then
    COMPREPLY=($(compgen -c -- "$cur") $(compgen -f -- "$cur"))
    return 0
  fi

  local flags=""
  case $sub in
    "")
      if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$global_flags" -- "$cur"))
      else
        COMPREPLY=($(compgen -W "$subcommands" -- "$cur"))
      fi
      return 0
      ;;
    run)
      flags="-w --wait -n --nonblock -E --conflict-exit-code --lease --kind -s --shared
        -x --exclusive --all --redlock --semaphore --report"
      ;;
    status) flags="" ;;
    unlock) flags="--force" ;;
    doctor) flags="--lease" ;;
    top) flags="--once --sort --interval --limit" ;;
    demo) flags="--workers --iterations --cluster --tls" ;;
    queue)
      case $action in
        "") COMPREPLY=($(compgen -W "offer take size" -- "$cur")); return 0 ;;
        offer) flags="--delay" ;;
        take) flags="-w --wait --raw" ;;
        *) flags="" ;;
      esac
      ;;
    semaphore)
      case $action in
        "") COMPREPLY=($(compgen -W "release set add" -- "$cur")); return 0 ;;
        *) flags="" ;;
      esac
      ;;
    *) return 0 ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$flags $global_flags" -- "$cur"))
  fi
  return 0
}

complete -F _relock relock
