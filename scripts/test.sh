#!/usr/bin/env bash
# Runs the whole default test suite: offline unit tests, then the integration
# tests against a real Chroma server started here on 127.0.0.1 (and stopped at exit).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${VENV:-.venv}/bin

PORT=$("$BIN/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
DATA=$(mktemp -d -t atma-chroma-XXXXXX)
LOG="$DATA/chroma.log"
"$BIN/chroma" run --host 127.0.0.1 --port "$PORT" --path "$DATA/db" >"$LOG" 2>&1 &
CHROMA_PID=$!
cleanup() { kill "$CHROMA_PID" 2>/dev/null || true; wait "$CHROMA_PID" 2>/dev/null || true; rm -rf "$DATA"; }
trap cleanup EXIT

for _ in $(seq 1 120); do
  if "$BIN/python" -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$PORT/api/v2/heartbeat', timeout=1)" 2>/dev/null; then
    break
  fi
  sleep 0.5
done
export ATMA_TEST_CHROMA_URL="http://127.0.0.1:$PORT"
export ATMA_TEST_CHROMA_DATA="$DATA/db"

echo "== lint (ruff check, ruff format --check, mypy)"
"$BIN/ruff" check langchain_atma tests examples graphs training scripts
"$BIN/ruff" format --check langchain_atma tests examples graphs training scripts
"$BIN/mypy"
echo "== unit tests (offline, sockets disabled)"
"$BIN/python" -m pytest -q "$@"
echo "== integration tests (Chroma server at $ATMA_TEST_CHROMA_URL)"
"$BIN/python" -m pytest -q -m integration --force-enable-socket "$@"
