"""Shell completion scripts for `git gasp …` and `git-gasp …` (bash, zsh, fish).

Each script asks the installed command itself (click's completion protocol, through
``_GIT_GASP_COMPLETE``) for commands, options and ids from the fold (`cli.ids`), so
it never goes stale. For ``git gasp`` the scripts plug into git's own completion:
bash's calls ``_git_gasp`` for a ``git gasp`` command line, zsh's ``_git`` calls
``_git-gasp`` for a user command, fish's ``git`` completions take a condition.
"""

from __future__ import annotations

COMPLETE_VAR = "_GIT_GASP_COMPLETE"
SHELLS = ("bash", "zsh", "fish")

_BASH = r"""# git-gasp completion for bash: `eval "$(git gasp completion bash)"` in ~/.bashrc
# (after git's own completion). Completes `git gasp …` and `git-gasp …`.
__git_gasp_ask() {  # $1: COMP_CWORD; then the words, starting with git-gasp
    local cword=$1; shift
    local IFS=$'\n' response completion type value
    response=$(env COMP_WORDS="$*" COMP_CWORD="$cword" _GIT_GASP_COMPLETE=bash_complete \
        git-gasp 2>/dev/null)
    COMPREPLY=()
    for completion in $response; do
        IFS=',' read -r type value <<< "$completion"
        case $type in
            dir) compopt -o dirnames 2>/dev/null ;;
            file) compopt -o default 2>/dev/null ;;
            plain) COMPREPLY+=("$value") ;;
        esac
    done
    return 0
}
_git_gasp() {  # called by git's completion for `git gasp …` (words, cword are git's)
    __git_gasp_ask $((cword - 1)) git-gasp "${words[@]:2}"
}
_git_gasp_direct() {
    __git_gasp_ask "$COMP_CWORD" git-gasp "${COMP_WORDS[@]:1}"
}
complete -o nosort -F _git_gasp_direct git-gasp 2>/dev/null ||
    complete -F _git_gasp_direct git-gasp
"""

_ZSH = r"""#compdef git-gasp
# git-gasp completion for zsh: `eval "$(git gasp completion zsh)"` in ~/.zshrc (after
# compinit). Completes `git gasp …` (as a git user command) and `git-gasp …`.
__git_gasp_ask() {  # $1: COMP_CWORD; then the words, starting with git-gasp
    local cword=$1; shift
    local -a response completions
    response=("${(@f)$(env COMP_WORDS="$*" COMP_CWORD=$cword \
        _GIT_GASP_COMPLETE=zsh_complete git-gasp 2>/dev/null)}")
    local type key descr
    for type key descr in ${response}; do
        case $type in
            plain) completions+=("$key") ;;
            dir) _path_files -/ ;;
            file) _path_files -f ;;
        esac
    done
    (( ${#completions} )) && compadd -U -V unsorted -a completions
}
_git-gasp() {  # git's _git calls it with words from `gasp` on
    __git_gasp_ask $((CURRENT - 1)) git-gasp "${(@)words[2,-1]}"
}
_git_gasp_direct() {
    __git_gasp_ask $((CURRENT - 1)) git-gasp "${(@)words[2,-1]}"
}
zstyle ':completion:*:*:git:*' user-commands gasp:'keep an AI agent'"'"'s state in git (GASP)'
compdef _git_gasp_direct git-gasp
"""

_FISH = r"""# git-gasp completion for fish: `git gasp completion fish | source` in
# ~/.config/fish/config.fish. Completes `git gasp …` and `git-gasp …`.
function __git_gasp_ask
    set -l line (commandline -cp | string replace -r '^\s*(git\s+gasp|git-gasp)' 'git-gasp')
    set -l response (env _GIT_GASP_COMPLETE=fish_complete COMP_WORDS="$line" \
        COMP_CWORD=(commandline -t) git-gasp 2>/dev/null)
    for completion in $response
        set -l metadata (string split "," $completion)
        if test $metadata[1] = "dir"
            __fish_complete_directories $metadata[2]
        else if test $metadata[1] = "file"
            __fish_complete_path $metadata[2]
        else if test $metadata[1] = "plain"
            echo $metadata[2]
        end
    end
end
function __git_gasp_using
    set -l tokens (commandline -opc)
    test (count $tokens) -ge 2; and test $tokens[1] = git; and test $tokens[2] = gasp
end
complete --no-files --command git-gasp --arguments "(__git_gasp_ask)"
complete --no-files --command git --condition __git_gasp_using --arguments "(__git_gasp_ask)"
complete --no-files --command git --condition '__fish_git_needs_command' --arguments gasp \
    --description "keep an AI agent's state in git (GASP)"
"""

_SCRIPTS = {"bash": _BASH, "zsh": _ZSH, "fish": _FISH}


def script(shell: str) -> str:
    """The completion script for `shell` (one of SHELLS)."""
    return _SCRIPTS[shell]
