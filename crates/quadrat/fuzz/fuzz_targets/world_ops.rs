//! `CollisionWorld` against the brute-force world of
//! `tests/support/world.rs`: arbitrary sequences of adds (every kind of
//! shape, layers and masks from a few bits), removes, stale keys, moves
//! (teleports anywhere, including non-finite and huge positions, and nudges
//! of a few units in the last place), reshapes, layer and mask changes,
//! steps, clears and bad input. Every step's contacts, began and ended
//! pairs must equal the model's, in the same order; the bodies are checked
//! after every operation and the queries every few. The batch operations
//! are fuzzed by `world_batch`, which keeps this target's input format (and
//! so the meaning of its corpus) as it was.

#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

#[path = "../../tests/support/mod.rs"]
mod support;

#[path = "../../tests/support/world.rs"]
mod world_model;

mod common;
mod world_input;

use common::ConfigIn;
use world_input::{BoundsIn, OpIn, ProbeIn};

#[derive(Arbitrary, Debug)]
struct Input {
    config: ConfigIn,
    bounds: BoundsIn,
    ops: Vec<OpIn>,
    probes: Vec<ProbeIn>,
}

fuzz_target!(|input: Input| {
    world_input::run(
        "world_ops",
        &input.config,
        &input.bounds,
        &input.ops,
        &input.probes,
        OpIn::resolve,
    );
});
