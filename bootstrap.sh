#!/usr/bin/env bash
# Set up (or update) the project's own virtual environment in .venv, so the README's commands work on a machine
# whose system Python refuses global installs (Debian, Ubuntu) and that has no `python` command.
#   bash bootstrap.sh        the app (with s3://): then .venv/bin/rbln-studio --demo
#   bash bootstrap.sh test   the app and tests:  then QT_QPA_PLATFORM=offscreen .venv/bin/python -m pytest
# PYTHON picks the interpreter (default: python3 on PATH, 3.10 or newer); VENV the folder (default: .venv).
set -euo pipefail
cd "$(dirname "$0")"
python=${PYTHON:-python3}
env_dir=${VENV:-.venv}
extra="[s3]"  # buckets work out of the box where the AWS CLI is set up; the core runs without the extra too
case "${1:-}" in
  "") ;;
  test) extra="[test]" ;;
  *) echo "usage: bash bootstrap.sh [test]" >&2; exit 2 ;;
esac

if ! command -v "$python" >/dev/null 2>&1; then
  echo "error: $python not found. Install Python 3.10 or newer (Debian/Ubuntu: apt-get install python3)." >&2
  exit 1
fi
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
  echo "error: $("$python" --version 2>&1) is too old: Python 3.10 or newer is needed (PYTHON=python3.x picks one)." >&2
  exit 1
fi

if [ ! -x "$env_dir/bin/python" ]; then
  # Debian's python3 keeps ensurepip (what gives a new environment its pip) in the python3.X-venv package: install
  # it where this may (root, with apt-get), else say the one command that does.
  if ! "$python" -c 'import ensurepip' >/dev/null 2>&1; then
    venv_package="python$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')-venv"
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "$python has no ensurepip: installing $venv_package" >&2
      apt-get update -q
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$venv_package"
    fi
    if ! "$python" -c 'import ensurepip' >/dev/null 2>&1; then
      echo "error: $python has no ensurepip, so it cannot give the environment pip. Install it, then run this again:" >&2
      echo "  sudo apt-get install $venv_package" >&2
      exit 1
    fi
  fi
  "$python" -m venv "$env_dir"
fi

"$env_dir/bin/python" -m pip install -q --disable-pip-version-check -e ".$extra"
# The tests' oracle for vllm-rbln's cache key: its published wheel, without its dependencies (tests/vllm_cache/oracle.py)
[ "${1:-}" = test ] && "$env_dir/bin/python" -m pip install -q --disable-pip-version-check --no-deps vllm-rbln==0.12.0

# Qt needs system libraries that a minimal Debian/Ubuntu lacks: its own (libEGL, fontconfig, GLib, ...) and, on an
# X11 desktop, those of its xcb platform plugin; gui/app/platform_libraries.py names their packages, as the app does
# at start. Installed where this may (root, with apt-get), else the one command that does it is printed.
need=$("$env_dir/bin/python" -m rbln_artifact_studio.gui.app.platform_libraries)
if [ -n "$need" ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing the system libraries Qt needs: $need" >&2
    apt-get update -q
    # shellcheck disable=SC2086  # one word per package
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $need
  else
    echo "warning: Qt needs system libraries this system lacks; install them with:" >&2
    echo "  sudo apt-get install -y $need" >&2
  fi
fi
