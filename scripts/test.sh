#!/usr/bin/env bash
# Runs every test: formatting, lints, then the whole workspace's tests
# (unit tests, multi-process runs through oxrun, MPICH-built C programs,
# network-namespace multi-host runs, fuzz corpora).
set -euo pipefail
cd "$(dirname "$0")/.."

cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
# Integration tests in tests/ run the oxrun binary: build every binary first.
cargo build --workspace --bins
cargo test --workspace
