//! The library's tests against brute force and the contract, in one binary
//! so that the shared harness (`tests/support/`) is compiled and linked once.
//! Each module is one subject; run one with, e.g.,
//! `cargo test -p quadrat --test suite structured::`.

#[path = "../support/mod.rs"]
mod support;
#[path = "../support/world.rs"]
mod world_model;

mod edge;
mod features;
mod geometry;
mod model;
mod narrow;
mod pair_stats;
mod pairs_with;
mod regressions;
mod resting;
mod snapshot;
mod structured;
mod world;
mod world_batch;
