#!/usr/bin/env bash
# The corpus sweep of docs/results.md (issue 59): every rulesheet of ggp-base's history — the
# last version of each .kif path under games/ and ggp-base/games/, one file per distinct
# content — checked by playforge and played to its end (a terminal state, or the step limit) by
# random players through the reasoner `check` chooses. One TSV row per file:
#   file  check(ok|error|timeout)  check_seconds  reasoner  match(terminal|aborted|error|timeout)  steps  match_seconds
# Usage: benches/ggp/corpus.sh GGP_BASE_GIT_DIR OUT_DIR [PLAYFORGE]
# (GGP_BASE_GIT_DIR: a clone of github.com/ggp-org/ggp-base, or its bare git directory).
set -euo pipefail
repo=$1
out=$2
pf=${3:-target/release/playforge}
mkdir -p "$out/kif" "$out/match"
git -C "$repo" log --all --name-only --format= -- '*.kif' | sort -u | grep -E '^(ggp-base/games|games)/' |
    while read -r p; do
        c=$(git -C "$repo" log --all -1 --format=%H -- "$p")
        b=$(git -C "$repo" rev-parse --verify -q "$c:$p" || git -C "$repo" rev-parse --verify -q "$c^:$p")
        echo "$b $p"
    done | sort -u -k1,1 | while read -r b p; do
        name=$(basename "$p" .kif)
        f="$out/kif/$name.kif"
        [ -e "$f" ] && f="$out/kif/$name-${b:0:7}.kif"
        git -C "$repo" cat-file blob "$b" >"$f"
    done
printf 'file\tcheck\tcheck_s\treasoner\tmatch\tsteps\tmatch_s\n'
for f in "$out"/kif/*.kif; do
    name=$(basename "$f" .kif)
    t0=$(date +%s.%N)
    if timeout 60 "$pf" check "$f" >"$out/match/$name.check" 2>&1; then check=ok; else
        rc=$?
        check=error
        [ $rc = 124 ] && check=timeout
    fi
    t1=$(date +%s.%N)
    reasoner=$(grep -o 'reasoner *[a-z-]*' "$out/match/$name.check" | awk '{print $2}' || true)
    match=- steps=- t2=$t1
    if [ $check = ok ]; then
        # One random player per role (the check's `roles` line lists them).
        players=$(grep -m1 '^  roles' "$out/match/$name.check" | sed 's/^  roles *//; s/[^,][^,]*/random/g; s/ //g')
        if timeout 600 "$pf" gdl-match "$f" --players "$players" --matches 1 --max-steps 300 \
            --out "$out/match/$name" >"$out/match/$name.log" 2>&1; then
            row=$(sed -n 2p "$out/match/$name/matches.csv")
            match=$(echo "$row" | cut -d, -f2)
            steps=$(echo "$row" | cut -d, -f3)
        else
            rc=$?
            match=error
            [ $rc = 124 ] && match=timeout
        fi
        t2=$(date +%s.%N)
    fi
    awk -v n="$name" -v c="$check" -v r="${reasoner:--}" -v m="$match" -v s="$steps" -v t0="$t0" -v t1="$t1" -v t2="$t2" \
        'BEGIN { printf "%s\t%s\t%.2f\t%s\t%s\t%s\t%.2f\n", n, c, t1 - t0, r, m, s, t2 - t1 }'
done
