#!/usr/bin/env bash
# Debian/Ubuntu packages some tests need beyond Python's: an X server for the screenshot tests (xvfb), an SSH
# server for the remote-server tests (openssh-server) and Prometheus for the monitoring tests (prometheus; the
# tests start their own on 127.0.0.1, the package's service is not used). Installs what is missing when run as root with apt-get;
# otherwise says what to install (those tests skip, naming the package, when it is absent).
set -euo pipefail
need=()
command -v Xvfb >/dev/null 2>&1 || need+=(xvfb)
# What Qt's xcb platform plugin loads beyond libxcb itself, and a font, for the screenshot tests under Xvfb.
if command -v dpkg-query >/dev/null 2>&1; then
  for pkg in libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxkbcommon-x11-0 libxcb-cursor0 \
             libxcb-shape0 libxcb-xinerama0 fonts-dejavu-core; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || need+=("$pkg")
  done
fi
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v ssh >/dev/null 2>&1 || need+=(openssh-client)
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
else
  echo "note: the screenshot, remote-server and Prometheus tests need: apt-get install ${need[*]} (they skip without it)" >&2
fi
