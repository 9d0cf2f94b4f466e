# Sourced by scripts/validate and scripts/test: make sure an isolated environment with
# fedtheory and its test tools exists, (re)installing only when pyproject.toml changed.
#   FEDTHEORY_VENV   where the environment lives (default: .venv in the repository)
#   FEDTHEORY_TORCH  the torch requirement installed first (default: torch==2.13.0, which
#                    resolves to a CPU build on machines that ship it; set e.g. "torch" to
#                    let pip choose a GPU build)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${FEDTHEORY_VENV:-$repo/.venv}"
stamp="$venv/.fedtheory-installed"
want="$(sha256sum "$repo/pyproject.toml" | cut -d' ' -f1)"
if [ ! -x "$venv/bin/python" ]; then
  echo "fedtheory: creating the environment in $venv" >&2
  python3 -m venv "$venv"
fi
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  echo "fedtheory: installing dependencies into $venv (first run only)" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${FEDTHEORY_TORCH:-torch==2.13.0}"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$repo[test,notebooks]"
  echo "$want" > "$stamp"
fi
export PATH="$venv/bin:$PATH"
cd "$repo"
