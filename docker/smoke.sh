#!/usr/bin/env bash
# End-to-end check of the compose deployment: Postfix -> sanigate -> Postfix -> Maildir.
#   bash docker/smoke.sh            (docker compose; COMPOSE="podman-compose" for Podman)
# Sends a message and finds it sanitized in the Maildir; stops sanigate, sends another and checks
# that Postfix defers it (never bounces); starts sanigate and checks that it is then delivered.
set -euo pipefail
cd "$(dirname "$0")"
COMPOSE=${COMPOSE:-"docker compose"}
ENGINE=${ENGINE:-docker}
$COMPOSE -f compose.yaml up -d ${BUILD:---build}
trap '$COMPOSE -f compose.yaml down -v >/dev/null 2>&1 || true' EXIT
postfix=$($ENGINE ps --format '{{.Names}}' | grep postfix | head -1)
sanigate=$($ENGINE ps --format '{{.Names}}' | grep sanigate | head -1)
mailbox() { $ENGINE exec "$postfix" sh -c 'cat /var/mail/vhosts/postmaster/new/* 2>/dev/null' || true; }
wait_for() {  # wait_for TEXT: until the Maildir holds TEXT (60 s)
    for _ in $(seq 60); do mailbox | grep -q "$1" && return 0; sleep 1; done
    echo "FAIL: '$1' never arrived"; exit 1
}
for _ in $(seq 60); do $ENGINE logs "$sanigate" 2>&1 | grep -q "listening on" && break; sleep 1; done
swaks --server 127.0.0.1:2525 --to postmaster@example.org --from doctor@clinic.example \
      --header "Subject: smoke one" --body "The HIV test was positive." >/dev/null
wait_for "smoke one"
mailbox | grep -q "HIV" && { echo "FAIL: HIV reached the mailbox"; exit 1; }
echo "ok: sanitized and delivered"
$ENGINE stop "$sanigate" >/dev/null
swaks --server 127.0.0.1:2525 --to postmaster@example.org --from doctor@clinic.example \
      --header "Subject: smoke two" --body "Another HIV result." >/dev/null
for _ in $(seq 90); do $ENGINE logs "$postfix" 2>&1 | grep -q "status=deferred" && break; sleep 1; done
$ENGINE logs "$postfix" 2>&1 | grep -q "status=deferred" || { echo "FAIL: not deferred"; exit 1; }
$ENGINE logs "$postfix" 2>&1 | grep -q "status=bounced" && { echo "FAIL: bounced"; exit 1; }
echo "ok: deferred while sanigate is down"
$ENGINE start "$sanigate" >/dev/null
for _ in $(seq 60); do $ENGINE logs "$sanigate" 2>&1 | grep -c "listening on" | grep -q 2 && break; sleep 1; done
$ENGINE exec "$postfix" postqueue -f
wait_for "smoke two"
echo "ok: delivered after sanigate came back"
