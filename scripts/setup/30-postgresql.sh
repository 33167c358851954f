# PostgreSQL 15 server binaries: the session-store and replica tests start a throwaway server on loopback.
step "PostgreSQL 15 (Debian package postgresql-15) for the session-store and replica tests"
if [ -x /usr/lib/postgresql/15/bin/initdb ]; then step_done "already installed"; return 0; fi
apt_install postgresql-15 || { step_done "not installed"; return 1; }
step_done "installed"
