#!/usr/bin/env bash
# A whole self-improvement run driven by the CLI: goal -> run -> patch -> eval ->
# decision -> commit-run. Run inside an agent repo; prints the ids it made.
set -euo pipefail
goal=$(git gasp record goal --title "Make retry reliable" --summary "retries drop state")
second=$(git gasp record goal --title "Keep the docs current")
run=$(git gasp run start --task "fix retry skill" --goal "$goal")
echo "fix" > fix.txt && git add fix.txt && git commit -q -m "persist retry counter"
sha=$(git rev-parse --short HEAD)
patch=$(git gasp record patch --title "persist retry counter" --advances "$goal" \
        --commit "$sha" --skill retry)
tool=$(git gasp record tool-call --tool "cargo test" --input "cargo test retry" \
       --output "ok, 1 passed" --success)
eval=$(git gasp record eval --command "cargo test retry" --status Passed --score 1.0 \
       --validates "$patch" --cause "$(git gasp log --kind tool.finished --json --limit 1 \
       | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["id"])')")
decision=$(git gasp record decision --status Approved --reason "eval passed; promote" \
           --patch "$patch")
git gasp run finish --outcome promoted >/dev/null
git gasp commit-run >/dev/null
echo "goal=$goal second=$second run=$run patch=$patch tool=$tool eval=$eval decision=$decision"
